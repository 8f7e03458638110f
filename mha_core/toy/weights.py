"""Save and load toy models as a plain dict (config + state_dict + recipe) readable with ``weights_only=True``."""

from __future__ import annotations

import io
from dataclasses import asdict
from pathlib import Path

import torch

from mha_core.errors import LabError
from mha_core.files import atomic_write, write_failed
from mha_core.toy.model import ToyConfig, ToyTransformer
from mha_core.toy.train import TrainRecipe

__all__ = ["ASSETS", "DEFAULT_WEIGHTS", "save_model", "load_model", "load_default"]

ASSETS = Path(__file__).resolve().parents[2] / "assets" / "toy"
DEFAULT_WEIGHTS = ASSETS / "default.pt"


def save_model(model: ToyTransformer, path: Path, recipe: TrainRecipe | None = None) -> None:
    """Write ``{"config", "state_dict", "recipe"}``; tensors are cloned so the file holds only the weights. The file
    is replaced whole or not at all (WriteFailed names the reason)."""
    payload = {
        "config": model.config.to_dict(),
        "state_dict": {k: v.detach().clone() for k, v in model.state_dict().items()},
        "recipe": None if recipe is None else {k: v for k, v in asdict(recipe).items() if k != "config"},
    }
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:  # a file where the folder should be, or no permission to create it
        raise write_failed(err, path) from err
    atomic_write(path, buffer.getvalue())  # a toy model is a few hundred kB; a failed write keeps the old file


def load_model(path: Path | str) -> ToyTransformer:
    """Load a file written by ``save_model``; LabError if it is missing or not a toy model."""
    path = Path(path)
    if not path.is_file():
        raise LabError("toy_weights_missing", path=str(path))
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
        model = ToyTransformer(ToyConfig.from_dict(payload["config"]))
        model.load_state_dict(payload["state_dict"])
    except Exception as exc:  # any unreadable, truncated or foreign file means the same thing to a student
        raise LabError("toy_weights_corrupt", path=str(path), reason=type(exc).__name__) from exc
    return model.eval()


def load_default() -> ToyTransformer:
    """The shipped model (``assets/toy/default.pt``), in eval mode."""
    return load_model(DEFAULT_WEIGHTS)

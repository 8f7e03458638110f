"""Misconception two: at a fixed d_model, do more heads mean a better model? Train h = 1 .. 16 and compare.

Every run gets the same budget (steps, batch, lr) and the same seeds; only n_heads (hence
d_head = d_model / h) changes, so the parameter count is identical across runs.
"""

from __future__ import annotations

import platform
import time
from dataclasses import asdict, dataclass, replace

import torch

from mha_core.toy.evaluate import held_out_batch, repeat_metrics, score_model
from mha_core.toy.train import DEFAULT_RECIPE, TrainRecipe, train_recipe

__all__ = ["HEADS", "SEEDS", "COMMAND", "RunResult", "HeadsResult", "heads_vs_accuracy"]

HEADS = (1, 2, 4, 8, 16)
SEEDS = (0, 1, 2)
COMMAND = "python -m mha_core.toy experiment"


@dataclass(frozen=True)
class RunResult:
    """One trained model of the sweep, measured on the held-out set."""

    n_heads: int
    d_head: int
    seed: int
    accuracy: float      # next-token accuracy on the repeated part
    loss: float          # cross-entropy on the repeated part
    best_previous_token: float  # highest layer-0 previous-token score
    best_induction: float       # highest last-layer induction score
    n_params: int
    seconds: float


@dataclass(frozen=True)
class HeadsResult:
    """The whole sweep, as written to ``assets/toy/heads_vs_accuracy.json``."""

    command: str
    d_model: int
    heads: tuple[int, ...]
    seeds: tuple[int, ...]
    steps: int
    batch: int
    lr: float
    runs: tuple[RunResult, ...]
    mean_accuracy: dict[int, float]  # n_heads -> mean accuracy over seeds
    torch_version: str
    machine: str

    def to_json_dict(self) -> dict:
        d = asdict(self)
        d["mean_accuracy"] = {str(k): v for k, v in self.mean_accuracy.items()}
        return d


def heads_vs_accuracy(
    base: TrainRecipe = DEFAULT_RECIPE, heads: tuple[int, ...] = HEADS, seeds: tuple[int, ...] = SEEDS,
    command: str = COMMAND,
) -> HeadsResult:
    """Train ``base`` with each n_heads in ``heads`` and each seed; same budget, same d_model."""
    runs = []
    for h in heads:
        for seed in seeds:
            recipe = replace(base, config=replace(base.config, n_heads=h), seed=seed)
            start = time.perf_counter()
            model, _ = train_recipe(recipe)
            seconds = time.perf_counter() - start
            batch = held_out_batch(model.config)
            metrics, scores = repeat_metrics(model, batch), score_model(model, batch)
            runs.append(RunResult(
                n_heads=h, d_head=model.config.d_head, seed=seed,
                accuracy=metrics.accuracy, loss=metrics.loss,
                best_previous_token=scores.best("previous_token", layer=0).previous_token,
                best_induction=scores.best("induction", layer=model.config.n_layers - 1).induction,
                n_params=sum(p.numel() for p in model.parameters()), seconds=round(seconds, 2),
            ))
    mean = {h: sum(r.accuracy for r in runs if r.n_heads == h) / len(seeds) for h in heads}
    return HeadsResult(
        command=command, d_model=base.config.d_model, heads=tuple(heads), seeds=tuple(seeds),
        steps=base.steps, batch=base.batch, lr=base.lr, runs=tuple(runs), mean_accuracy=mean,
        torch_version=torch.__version__, machine=platform.machine(),
    )

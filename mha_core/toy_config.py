"""The toy model's shape and training recipe as plain values (no torch): the heads page's session defaults and
form limits read them without loading torch, which app.py would otherwise pay on every cold start."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from mha_core.errors import LabError

__all__ = ["DEFAULT_PROMPT", "DEFAULT_RECIPE", "ToyConfig", "TrainRecipe"]


@dataclass(frozen=True)
class ToyConfig:
    """Shape of the toy model and of the data it is trained on (seed fixes the initial weights)."""

    vocab_size: int = 64
    n_ctx: int = 24
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    n_kv_heads: int | None = None  # K/V heads shared by the query heads (GQA; 1 = MQA); None: one per query head
    mlp: bool = False
    seed: int = 0
    min_repeat: int = 4    # shortest repeated segment in the data
    max_repeat: int = 10   # longest repeated segment in the data
    distinct: bool = True  # data: no token occurs twice except through the repeat (needs vocab_size >= n_ctx)

    def __post_init__(self) -> None:
        for name in ("vocab_size", "n_ctx", "d_model", "n_heads", "n_layers", "min_repeat"):
            if getattr(self, name) < 1:
                raise LabError("toy_positive", name=name, value=getattr(self, name))
        if self.d_model % self.n_heads:
            raise LabError("h_divides", d_model=self.d_model, h=self.n_heads)
        if self.kv_heads < 1 or self.n_heads % self.kv_heads:
            raise LabError("kv_divides", h=self.n_heads, g=self.kv_heads)
        if self.distinct and self.vocab_size < self.n_ctx:
            raise LabError("toy_vocab", v=self.vocab_size, n=self.n_ctx)
        if not 2 <= self.min_repeat <= self.max_repeat or 2 * self.max_repeat > self.n_ctx:
            raise LabError("toy_repeat", lo=self.min_repeat, hi=self.max_repeat, n=self.n_ctx)

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    @property
    def kv_heads(self) -> int:
        """How many K/V heads the model has (n_heads for plain multi-head attention)."""
        return self.n_heads if self.n_kv_heads is None else self.n_kv_heads

    def to_dict(self) -> dict[str, int | bool]:
        """Plain dict (saved next to the state_dict so ``torch.load(weights_only=True)`` works)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> ToyConfig:
        """Inverse of ``to_dict``; unknown keys are ignored so old files stay loadable."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})



@dataclass(frozen=True)
class TrainRecipe:
    """Everything that determines a trained model: same recipe -> same weights."""

    config: ToyConfig = field(default_factory=ToyConfig)
    steps: int = 300
    batch: int = 64
    lr: float = 1e-2
    seed: int = 0


DEFAULT_RECIPE = TrainRecipe()  # the recipe of the shipped weights (assets/toy/default.pt)
DEFAULT_PROMPT = "k q m v r x k q"  # generation page: six distinct tokens, then the first two again (a repeat begins)

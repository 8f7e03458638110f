"""The tasks a student can train the toy model on, each with the attention pattern a head needs to solve it.

Every task writes sequences over the toy vocabulary (ids 0-63) and says, per position, whether the model's
prediction there is scored, what it must predict and **where the answer sits** (``source``, the key a head
would have to read it from). A task's expected heads are patterns over attention maps (``Expected``), scored by
``mha_core.toy.scores.pattern_score``, so "expected vs emerged" is measured on the trained model, not asserted.

* repeat:   random distinct tokens, one segment repeated (the shipped task, ``data.make_batch``): a
  previous-token head in layer 0 and an induction head in the last layer [Olsson et al. 2022].
* copy:     L tokens, the separator ``#``, the same L tokens: from each output position a head reads the input
  position of the token to write, a fixed distance back (L is fixed).
* reverse:  L tokens, ``#``, the L tokens backwards: a head reads the mirrored input position.
* sort:     L distinct tokens, ``#``, the same tokens in increasing id: a head reads the smallest input token
  larger than the current one (and, more loosely, only input tokens larger than the current one).
* previous: distinct random tokens; at each position predict the token *before* it: a head looks one step back.

No model code: numpy arrays in and out, so tests feed hand-made attention maps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mha_core.errors import LabError
from mha_core.toy.data import make_batch
from mha_core.toy.scores import INDUCTION_MIN, PREVIOUS_TOKEN_MIN, pattern_score
from mha_core.toy_config import DEFAULT_RECIPE, ToyConfig

SEP = 62            # the separator "#" between input and output
N_SYMBOLS = 62      # input tokens of copy / reverse / sort / previous: ids 0-61 (0-9, a-z, A-Z)
SPAN = 8            # L: input length of copy / reverse / sort (2L + 1 = 17 positions)
PREVIOUS_LEN = 16   # sequence length of the previous-token task


@dataclass(frozen=True)
class TaskBatch:
    """Token ids, what the model must predict where it is scored, and the position holding each answer."""

    tokens: np.ndarray   # (B, n) int64
    targets: np.ndarray  # (B, n) int64: the token to predict at each position (-1 where not scored)
    mask: np.ndarray     # (B, n) bool: scored positions (loss and accuracy)
    source: np.ndarray   # (B, n) int64: the position whose token is the answer (-1 where not scored)


@dataclass(frozen=True)
class Expected:
    """One head a task needs: the key each scored query should read (``keys``), where, and from which score on."""

    key: str             # pattern id: previous_token, induction, offset, mirror, next_larger, larger
    layer: int | None    # 0 = first layer, -1 = last layer, None = any layer
    threshold: float     # a head "matches" at this score or above
    keys: Callable[[TaskBatch], tuple[np.ndarray, np.ndarray]]  # -> (B, n, n) bool keys, (B, n) bool queries

    def layers(self, n_layers: int) -> range:
        """The layers in which this head is expected."""
        if self.layer is None:
            return range(n_layers)
        la = self.layer % n_layers
        return range(la, la + 1)

    def measure(self, attn: np.ndarray, batch: TaskBatch) -> Emerged:
        """Every head's score on ``batch`` from its (layers, heads, B, n, n) attention."""
        keys, queries = self.keys(batch)
        return Emerged(key=self.key, threshold=self.threshold, layers=tuple(self.layers(attn.shape[0])),
                       scores=pattern_score(attn, keys, queries))


@dataclass(frozen=True)
class Emerged:
    """One expected head, measured: every head's score for the pattern, and which heads pass the threshold."""

    key: str
    threshold: float
    layers: tuple[int, ...]  # where the head is expected
    scores: np.ndarray       # (layers, heads)

    def _ranked(self, layers: tuple[int, ...]) -> list[tuple[int, int]]:
        heads = [(la, h) for la in layers for h in range(self.scores.shape[1])]
        return sorted(heads, key=lambda lh: -self.scores[lh])

    @property
    def best(self) -> tuple[int, int]:
        """(layer, head) with the highest score among the expected layers."""
        return self._ranked(self.layers)[0]

    @property
    def best_score(self) -> float:
        return float(self.scores[self.best])

    @property
    def matches(self) -> list[tuple[int, int]]:
        """Heads in the expected layers at or above the threshold, best first."""
        return [lh for lh in self._ranked(self.layers) if self.scores[lh] >= self.threshold]

    @property
    def elsewhere(self) -> list[tuple[int, int]]:
        """Heads outside the expected layers that show the pattern too, best first."""
        other = tuple(la for la in range(self.scores.shape[0]) if la not in self.layers)
        return [lh for lh in self._ranked(other) if self.scores[lh] >= self.threshold]


def previous_keys(batch: TaskBatch) -> tuple[np.ndarray, np.ndarray]:
    """Key i-1 for every query i >= 1 (the previous-token score of ``scores.previous_token_score``)."""
    b, n = batch.tokens.shape
    keys = np.broadcast_to(np.eye(n, k=-1, dtype=bool), (b, n, n))
    queries = np.broadcast_to(np.arange(n) >= 1, (b, n))
    return keys, queries


def source_keys(batch: TaskBatch) -> tuple[np.ndarray, np.ndarray]:
    """The key holding the answer, for every scored query."""
    n = batch.tokens.shape[1]
    keys = batch.source[:, :, None] == np.arange(n)[None, None, :]
    return keys & batch.mask[:, :, None], batch.mask


def larger_keys(batch: TaskBatch) -> tuple[np.ndarray, np.ndarray]:
    """Sort: every input token larger than the current one (the tokens still to be written; at ``#``: all)."""
    tok = batch.tokens
    n = tok.shape[1]
    inputs = np.arange(n)[None, :] < np.argmax(tok == SEP, axis=1)[:, None]         # (B, n): before the "#"
    current = np.where(tok == SEP, -1, tok)                                          # "#" is below every token
    keys = inputs[:, None, :] & (tok[:, None, :] > current[:, :, None])             # (B, n, n)
    return keys & batch.mask[:, :, None], batch.mask


@dataclass(frozen=True)
class Task:
    """A task: its data, the model that learns it within seconds, its target and the heads it needs."""

    key: str
    make: Callable[[np.random.Generator, int], TaskBatch]  # (rng, batch) -> TaskBatch
    expected: tuple[Expected, ...]
    target: float         # held-out accuracy on the scored positions the recipe should reach
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    steps: int = 300
    batch: int = 64
    lr: float = 1e-2
    mlp: bool = False

    def measure(self, attn: np.ndarray, batch: TaskBatch) -> tuple[Emerged, ...]:
        """What emerged: each expected head measured on ``batch``."""
        return tuple(e.measure(attn, batch) for e in self.expected)

    def config(self, d_model: int, n_heads: int, n_layers: int, seed: int) -> ToyConfig:
        """The model shape for this task (vocabulary and context of the shipped model)."""
        base = DEFAULT_RECIPE.config
        return ToyConfig(vocab_size=base.vocab_size, n_ctx=base.n_ctx, d_model=d_model, n_heads=n_heads,
                         n_layers=n_layers, mlp=self.mlp, seed=seed)


def _distinct(rng: np.random.Generator, batch: int, n: int, top: int = N_SYMBOLS) -> np.ndarray:
    """(batch, n) tokens drawn without replacement from 0..top-1, per row."""
    return rng.permuted(np.tile(np.arange(top, dtype=np.int64), (batch, 1)), axis=1)[:, :n]


def _answer_batch(inputs: np.ndarray, order: np.ndarray) -> TaskBatch:
    """inputs (B, L), ``#``, then inputs[order] (B, L): the answer part is scored, each answer read from ``order``."""
    b, span = inputs.shape
    out = np.take_along_axis(inputs, order, axis=1)
    tokens = np.concatenate([inputs, np.full((b, 1), SEP, dtype=np.int64), out], axis=1)  # (B, 2L+1)
    n = tokens.shape[1]
    mask = np.zeros((b, n), dtype=bool)
    mask[:, span:n - 1] = True                        # queries L .. 2L-1 predict the L output tokens
    targets = np.full((b, n), -1, dtype=np.int64)
    targets[:, span:n - 1] = out
    source = np.full((b, n), -1, dtype=np.int64)
    source[:, span:n - 1] = order                     # the k-th answer sits at input position order[k]
    return TaskBatch(tokens=tokens, targets=targets, mask=mask, source=source)


def repeat_batch(rng: np.random.Generator, batch: int) -> TaskBatch:
    """The shipped repeated-segment data (``data.make_batch``): predict the next token in the second copy."""
    cfg = DEFAULT_RECIPE.config
    data = make_batch(rng, batch, cfg.n_ctx, cfg.vocab_size, cfg.min_repeat, cfg.max_repeat, cfg.distinct)
    targets = np.where(data.repeat_mask, np.roll(data.tokens, -1, axis=1), -1)
    pos = np.arange(cfg.n_ctx)[None, :]
    source = np.where(data.repeat_mask, pos - data.offset[:, None] + 1, -1)  # right after the earlier copy
    return TaskBatch(tokens=data.tokens, targets=targets, mask=data.repeat_mask, source=source)


def copy_batch(rng: np.random.Generator, batch: int, span: int = SPAN) -> TaskBatch:
    """x_0 .. x_{L-1} # x_0 .. x_{L-1}."""
    return _answer_batch(_distinct(rng, batch, span), np.tile(np.arange(span), (batch, 1)))


def reverse_batch(rng: np.random.Generator, batch: int, span: int = SPAN) -> TaskBatch:
    """x_0 .. x_{L-1} # x_{L-1} .. x_0."""
    return _answer_batch(_distinct(rng, batch, span), np.tile(np.arange(span)[::-1], (batch, 1)))


def sort_batch(rng: np.random.Generator, batch: int, span: int = SPAN) -> TaskBatch:
    """x_0 .. x_{L-1} # the same distinct tokens in increasing id."""
    inputs = _distinct(rng, batch, span)
    return _answer_batch(inputs, np.argsort(inputs, axis=1, kind="stable"))


def previous_batch(rng: np.random.Generator, batch: int, n: int = PREVIOUS_LEN) -> TaskBatch:
    """Distinct random tokens; at every position i >= 1 predict x_{i-1}."""
    tokens = _distinct(rng, batch, n)
    mask = np.broadcast_to(np.arange(n) >= 1, (batch, n)).copy()
    targets = np.where(mask, np.roll(tokens, 1, axis=1), -1)
    source = np.where(mask, np.arange(n)[None, :] - 1, -1)
    return TaskBatch(tokens=tokens, targets=targets, mask=mask, source=source)


# Recipes (d_model, heads, layers, steps) measured to reach the target within seconds (benchmarks/bench_tasks.py);
# repeat keeps the shipped recipe (DEFAULT_RECIPE). Thresholds: those of the page's head labels (scores.py); each
# is above what a head that compares nothing scores (even weight on the input: (L + 1) / 2L = 0.5625 for "larger").
LARGER_MIN = 0.8
_PREV = Expected("previous_token", 0, PREVIOUS_TOKEN_MIN, previous_keys)
TASKS: dict[str, Task] = {
    # on the repeat, the answer's key (right after the earlier copy) is the induction key
    "repeat": Task("repeat", repeat_batch, (_PREV, Expected("induction", -1, INDUCTION_MIN, source_keys)),
                   target=0.9),
    "copy": Task("copy", copy_batch, (Expected("offset", None, 0.5, source_keys),), target=0.9,
                 n_heads=2, n_layers=1, steps=100),
    "reverse": Task("reverse", reverse_batch, (Expected("mirror", None, 0.5, source_keys),), target=0.9,
                    n_heads=2, n_layers=1, steps=100),
    "sort": Task("sort", sort_batch, (Expected("next_larger", None, 0.5, source_keys),
                                      Expected("larger", None, LARGER_MIN, larger_keys)), target=0.9,
                 n_heads=4, n_layers=1, steps=200),
    "previous": Task("previous", previous_batch, (Expected("previous_token", None, PREVIOUS_TOKEN_MIN, source_keys),),
                     target=0.9, n_heads=2, n_layers=1, steps=100),
}
TASK_KEYS = tuple(TASKS)
DEFAULT_TASK = "repeat"


def get_task(key: str) -> Task:
    """The task called ``key`` (LabError for an unknown one)."""
    if key not in TASKS:
        raise LabError("toy_task", key=key, known=", ".join(TASK_KEYS))
    return TASKS[key]

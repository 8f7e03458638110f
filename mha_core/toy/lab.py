"""What the heads page computes, without Streamlit: typed sequences, one sequence's scores, a training run
with live points and attention snapshots, the pruning answer, and the shipped heads-vs-accuracy file.

Its public names are exported by ``mha_core.toy`` (the lab's one public surface); import them from there.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from mha_core.errors import LabError
from mha_core.toy.ablation import PruningCurve
from mha_core.toy.data import HELD_OUT_STREAM, data_rng, make_batch
from mha_core.toy.evaluate import (
    EVAL_SEED,
    EVAL_SEQS,
    RepeatMetrics,
    SequenceView,
    attention,
    held_out_batch,
    inspect_sequence,
    repeat_metrics,
    score_model,
    task_metrics,
)
from mha_core.toy.experiment import COMMAND, HeadsResult, RunResult
from mha_core.toy.model import ToyTransformer
from mha_core.toy.registers import DEFAULT_TASK, RegisterTask, example_steps
from mha_core.toy.scores import (
    HeadScores,
    ScoreTable,
    entropy_score,
    first_token_score,
    induction_keys,
    label_head,
    previous_token_score,
    score_attention,
    self_score,
)
from mha_core.toy.tasks import DEFAULT_TASK as DEFAULT_TOY_TASK
from mha_core.toy.tasks import Emerged, Task, TaskBatch, get_task
from mha_core.toy.train import TrainHistory, train, train_recipe
from mha_core.toy.weights import ASSETS
from mha_core.toy_config import DEFAULT_RECIPE, ToyConfig, TrainRecipe

SYMBOLS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ#@"  # id i is drawn as SYMBOLS[i]
MAX_SEQ = DEFAULT_RECIPE.config.n_ctx  # 24: the model's context
PAGE_STREAM = 2  # data_rng(seed, PAGE_STREAM) feeds the page's "generate" button (not training, not held-out)
D_MODELS = (16, 32, 64, 128)
HEAD_CHOICES = (1, 2, 4, 8, 16)
LAYER_CHOICES = (1, 2, 3)
MAX_STEPS = 600
STEP_SIZE = 25
MIN_D_HEAD = 4
EVERY = 25               # training: a live point (loss, scores) every EVERY steps
PROBE_SEQS = 64          # held-out sequences behind the live score curves (the final scores use 256)
PRUNE_TOLERANCE = 0.01   # "without hurting": accuracy within 1 point of the full model
HEADS_RESULT = ASSETS / "heads_vs_accuracy.json"
_SPLIT = re.compile(r"[\s,，、;；]+")


def symbol(i: int) -> str:
    """The one-character name of token id ``i`` (0-9, a-z = 10-35, A-Z = 36-61, # = 62, @ = 63)."""
    return SYMBOLS[i] if 0 <= i < len(SYMBOLS) else str(i)


def parse_sequence(text: str, vocab_size: int = 64, max_len: int = MAX_SEQ) -> np.ndarray:
    """Typed text -> ids. Pieces split by spaces or commas; an all-digit piece is one id, else each character is."""
    ids: list[int] = []
    for piece in (p for p in _SPLIT.split(text.strip()) if p):
        if piece.isascii() and piece.isdigit():
            if int(piece) >= vocab_size:
                raise LabError("toy_seq_id", value=int(piece), top=vocab_size - 1)
            ids.append(int(piece))
            continue
        for ch in piece:
            if ch not in SYMBOLS[:vocab_size]:
                raise LabError("toy_seq_symbol", symbol=ch)
            ids.append(SYMBOLS.index(ch))
    if not ids:
        raise LabError("toy_seq_empty")
    if len(ids) < 2:
        raise LabError("toy_seq_short")
    if len(ids) > max_len:
        raise LabError("toy_seq_long", n=len(ids), max=max_len)
    return np.asarray(ids, dtype=np.int64)


def format_sequence(ids: np.ndarray) -> str:
    """Ids -> the text ``parse_sequence`` reads back to the same ids (one symbol per token, spaced)."""
    return " ".join(symbol(int(i)) for i in ids)


def generate_sequence(seed: int, cfg: ToyConfig = DEFAULT_RECIPE.config) -> np.ndarray:
    """A seeded random sequence shaped like the training data: distinct tokens, one segment repeated."""
    return make_batch(data_rng(seed, PAGE_STREAM), 1, cfg.n_ctx, cfg.vocab_size, cfg.min_repeat,
                      cfg.max_repeat, cfg.distinct).tokens[0]


def repeated(ids: np.ndarray) -> np.ndarray:
    """(n,) bool: the token at i already occurred earlier (the repeat, as the student sees it)."""
    ids = np.asarray(ids)
    return np.array([ids[i] in ids[:i] for i in range(len(ids))], dtype=bool)


def copyable(ids: np.ndarray) -> np.ndarray:
    """(n,) bool: copying predicts token i+1 at i (the token after an earlier copy of tok[i] equals tok[i+1])."""
    ids = np.asarray(ids)
    keys = induction_keys(ids[None])[0]                 # keys[i, j]: tok[j-1] == tok[i], j-1 < i
    nxt = np.append(ids[1:], -1)                        # the token to predict at each position
    return np.any(keys & (ids[None, :] == nxt[:, None]), axis=1) & (np.arange(len(ids)) < len(ids) - 1)


def position_labels(ids: np.ndarray, mark_repeats: bool = True) -> list[str]:
    """Axis labels "position symbol", with a * on repeated tokens (unique, so charts keep the order); a task whose
    output repeats its input by design (copy, reverse, sort) passes ``mark_repeats=False``: every output would be
    marked."""
    rep = repeated(ids) if mark_repeats else np.zeros(len(ids), dtype=bool)
    return [f"{i} {symbol(int(t))}{'*' if r else ''}" for i, (t, r) in enumerate(zip(ids, rep, strict=True))]


def sequence_scores(attn: np.ndarray, ids: np.ndarray) -> ScoreTable:
    """Scores of every head on one sequence ((layers, heads, n, n) attention); induction is NaN without a repeat."""
    a, tok = attn[:, :, None], np.asarray(ids)[None]
    if induction_keys(tok).any():
        return score_attention(a, tok)
    prev, first, self_ = previous_token_score(a), first_token_score(a), self_score(a)
    ent, ent_n = entropy_score(a), entropy_score(a, normalized=True)
    heads = tuple(
        HeadScores(layer=la, head=h, previous_token=float(prev[la, h]), induction=float("nan"),
                   first_token=float(first[la, h]), self_token=float(self_[la, h]), entropy=float(ent[la, h]),
                   entropy_norm=float(ent_n[la, h]),
                   label=label_head(prev[la, h], 0.0, first[la, h], self_[la, h], ent_n[la, h]))
        for la in range(a.shape[0]) for h in range(a.shape[1])
    )
    return ScoreTable(heads=heads, n_layers=a.shape[0], n_heads=a.shape[1])


@dataclass(frozen=True)
class SequenceReport:
    """One typed sequence through the model: attention, scores, and how well it copies the repeat."""

    view: SequenceView
    labels: tuple[str, ...]
    copyable: np.ndarray   # (n,) bool
    scores: ScoreTable
    correct: int           # copyable positions whose next token the model predicts right
    total: int             # copyable positions

    @property
    def has_repeat(self) -> bool:
        return bool(repeated(self.view.tokens).any())


def sequence_report(model: ToyTransformer, ids: np.ndarray, head_mask: np.ndarray | None = None) -> SequenceReport:
    """Run ``ids`` through ``model`` (optionally with heads off) and score what every head did."""
    view = inspect_sequence(model, ids, head_mask)
    can = copyable(view.tokens)
    right = (view.predicted[:-1] == view.tokens[1:]) & can[:-1]
    return SequenceReport(view=view, labels=tuple(position_labels(view.tokens)), copyable=can,
                          scores=sequence_scores(view.attn, view.tokens), correct=int(right.sum()),
                          total=int(can.sum()))


def head_choices(d_model: int) -> list[int]:
    """Head counts the training form offers for ``d_model``: they divide it into heads of >= MIN_D_HEAD dims."""
    return [h for h in HEAD_CHOICES if d_model % h == 0 and d_model // h >= MIN_D_HEAD]


@dataclass(frozen=True)
class TrainSettings:
    """What the student chose; everything else is the shipped recipe. Hashable: the cache key of a run."""

    d_model: int = DEFAULT_RECIPE.config.d_model
    n_heads: int = DEFAULT_RECIPE.config.n_heads
    n_layers: int = DEFAULT_RECIPE.config.n_layers
    steps: int = DEFAULT_RECIPE.steps
    seed: int = DEFAULT_RECIPE.seed
    task: str = DEFAULT_TOY_TASK  # a key of mha_core.toy.tasks.TASKS

    def __post_init__(self) -> None:
        get_task(self.task)
        for name, lo, hi in (("d_model", D_MODELS[0], D_MODELS[-1]), ("n_heads", 1, HEAD_CHOICES[-1]),
                             ("n_layers", 1, LAYER_CHOICES[-1]), ("steps", 1, MAX_STEPS), ("seed", 0, 2**31 - 1)):
            value = getattr(self, name)
            if not lo <= value <= hi:
                raise LabError("toy_limit", name=name, lo=lo, hi=hi, value=value)

    @classmethod
    def for_task(cls, key: str, seed: int = DEFAULT_RECIPE.seed) -> TrainSettings:
        """The task's own recipe (what the form shows when a task is chosen)."""
        task = get_task(key)
        return cls(task.d_model, task.n_heads, task.n_layers, task.steps, seed, key)

    def recipe(self) -> TrainRecipe:
        """The full recipe (raises LabError when d_model cannot be cut into n_heads heads)."""
        if self.task == DEFAULT_TOY_TASK:  # the shipped recipe's data and optimiser, unchanged
            cfg = ToyConfig(d_model=self.d_model, n_heads=self.n_heads, n_layers=self.n_layers, seed=self.seed)
            return TrainRecipe(config=cfg, steps=self.steps, batch=DEFAULT_RECIPE.batch, lr=DEFAULT_RECIPE.lr,
                               seed=self.seed)
        task = get_task(self.task)
        return TrainRecipe(config=task.config(self.d_model, self.n_heads, self.n_layers, self.seed),
                           steps=self.steps, batch=task.batch, lr=task.lr, seed=self.seed)


@dataclass(frozen=True)
class ProgressPoint:
    """One live point: the batch loss and the best scores on PROBE_SEQS held-out sequences."""

    step: int
    loss: float
    previous_token: float  # best layer-0 previous-token score
    induction: float       # best last-layer induction score (NaN when the probe has no repeat)
    accuracy: float = float("nan")  # on the task's scored positions of the probe
    expected: tuple[float, ...] = ()  # best score of each of the task's expected heads
    seconds: float = float("nan")     # since step 1's point, live scoring and charts included


@dataclass(frozen=True)
class Snapshot:
    """Every head's attention on one held-out sequence at one step."""

    step: int
    attn: np.ndarray  # (layers, heads, n, n)


@dataclass(frozen=True)
class TrainRun:
    """A finished run: the model, its curves, snapshots, and its scores and metrics on 256 held-out sequences."""

    settings: TrainSettings
    model: ToyTransformer
    history: TrainHistory
    points: tuple[ProgressPoint, ...]
    snapshots: tuple[Snapshot, ...]
    probe: np.ndarray        # (n,) the sequence of the snapshots
    scores: ScoreTable | None  # the page's head labels (repeat task; None for the others)
    metrics: RepeatMetrics   # loss and accuracy on the task's scored positions (repeat: the repeated part)
    emerged: tuple[Emerged, ...] = ()  # the task's expected heads, measured on 256 held-out sequences
    example: TaskBatch | None = None   # the probe sequence as the task sees it (scored positions, answer keys)

    @property
    def task(self) -> Task:
        return get_task(self.settings.task)


def snapshot_steps(steps: int, every: int = EVERY) -> tuple[int, ...]:
    """About four steps (first, a quarter, half, last) among those the callback sees."""
    seen = sorted({1, steps, *range(every, steps + 1, every)})
    want = (1, steps / 4, steps / 2, steps)
    return tuple(sorted({min(seen, key=lambda s, w=w: abs(s - w)) for w in want}))


def task_held_out(task: Task, n_seqs: int = EVAL_SEQS, seed: int = EVAL_SEED) -> TaskBatch:
    """Held-out sequences of ``task`` (the stream training never reads; for repeat: ``held_out_batch``'s)."""
    return task.make(data_rng(seed, HELD_OUT_STREAM), n_seqs)


def _point(step: int, loss: float, attn: np.ndarray, probe: TaskBatch, accuracy: float, task: Task,
           seconds: float) -> ProgressPoint:
    if task.key == DEFAULT_TOY_TASK:
        table = score_attention(attn, probe.tokens, probe.mask)
        prev, ind = (table.best("previous_token", layer=0).previous_token,
                     table.best("induction", layer=table.n_layers - 1).induction)
    else:  # the other tasks' answers are not repeats: only their expected heads are followed
        prev, ind = float(previous_token_score(attn)[0].max()), float("nan")
    return ProgressPoint(step=step, loss=loss, previous_token=prev, induction=ind, accuracy=accuracy,
                         expected=tuple(e.best_score for e in task.measure(attn, probe)), seconds=seconds)


def train_run(settings: TrainSettings, on_point: Callable[[ProgressPoint], None] | None = None) -> TrainRun:
    """Train with ``settings``; ``on_point`` sees a live point every EVERY steps (for a progress bar and chart).

    The repeat task trains exactly as ``train_recipe`` (the shipped weights' path); the others on their own
    batches (``mha_core.toy.tasks``), with the loss on their scored positions.
    """
    recipe, task = settings.recipe(), get_task(settings.task)
    repeat = settings.task == DEFAULT_TOY_TASK
    probe = task_held_out(task, PROBE_SEQS)
    snap_at = set(snapshot_steps(settings.steps))
    points: list[ProgressPoint] = []
    snaps: list[Snapshot] = []
    clock: list[float] = []  # when step 1 ended: a point's seconds count from there

    def callback(step: int, loss: float, model: ToyTransformer) -> None:
        now = time.perf_counter()
        clock.extend([] if clock else [now])
        attn = attention(model, probe.tokens)
        acc = task_metrics(model, probe).accuracy
        points.append(_point(step, loss, attn, probe, acc, task, now - clock[0]))
        if step in snap_at:
            snaps.append(Snapshot(step=step, attn=attn[:, :, 0].astype(np.float32)))
        if on_point is not None:
            on_point(points[-1])

    if repeat:
        model, history = train_recipe(recipe, callback=callback, every=EVERY)
    else:
        model, history = train(recipe.config, recipe.steps, recipe.batch, recipe.lr, recipe.seed, callback, EVERY,
                               task)
    held = task_held_out(task)
    example = TaskBatch(*(np.asarray(a)[:1] for a in (probe.tokens, probe.targets, probe.mask, probe.source)))
    if repeat:
        batch = held_out_batch(recipe.config)
        scores, metrics = score_model(model, batch), repeat_metrics(model, batch)
    else:
        scores, metrics = None, task_metrics(model, held)
    return TrainRun(settings=settings, model=model, history=history, points=tuple(points), snapshots=tuple(snaps),
                    probe=probe.tokens[0], scores=scores, metrics=metrics,
                    emerged=task.measure(attention(model, held.tokens), held), example=example)


def reached(points: tuple[ProgressPoint, ...], target: float) -> ProgressPoint | None:
    """The first live point whose probe accuracy reaches ``target`` (None: not within the run)."""
    return next((p for p in points if p.accuracy >= target), None)


def task_example(key: str, seed: int = 0) -> TaskBatch:
    """One seeded sequence of task ``key`` for the page (its own stream: not training, not held-out)."""
    return get_task(key).make(data_rng(seed, PAGE_STREAM), 1)


def removable(curve: PruningCurve, tolerance: float = PRUNE_TOLERANCE) -> int:
    """How many heads go, least important first, before accuracy falls more than ``tolerance`` below the full model."""
    base, k = curve.accuracy[0], 0
    for n, acc in zip(curve.n_removed[1:], curve.accuracy[1:], strict=True):
        if base - acc > tolerance:
            break
        k = n
    return k


def register_example(seed: int = 0, task: RegisterTask = DEFAULT_TASK) -> list[str]:
    """The "How many heads?" task's example sequence (the page's data stream), each asked ``?`` with its answer."""
    return example_steps(data_rng(seed, PAGE_STREAM), task)


def load_heads_result(path: Path = HEADS_RESULT) -> HeadsResult:
    """The shipped heads-vs-accuracy sweep (written by ``python -m mha_core.toy experiment``)."""
    path = Path(path)
    if not path.is_file():
        raise LabError("toy_result_missing", path=str(path), command=COMMAND)
    d = json.loads(path.read_text(encoding="utf-8"))
    names = {f.name for f in fields(RunResult)}
    runs = tuple(RunResult(**{k: v for k, v in r.items() if k in names}) for r in d["runs"])
    optional = {f.name for f in fields(HeadsResult)} - {"runs", "heads", "seeds", "mean_accuracy"}
    return HeadsResult(
        heads=tuple(d["heads"]), seeds=tuple(d["seeds"]), runs=runs,
        mean_accuracy={int(k): float(v) for k, v in d["mean_accuracy"].items()},
        **{k: v for k, v in d.items() if k in optional},
    )

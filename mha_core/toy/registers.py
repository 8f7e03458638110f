"""A task that needs several relations at once: the latest value of each of R registers, read at a "?" step.

A sequence is a stream of assignments such as ``a=2 b=0 ? c=3 a=1 ?``: each token is either an assignment
(register r gets value v, token id ``r * n_values + v``) or the question token ``?``. At every ``?`` (once
each register has been assigned) the model must answer the current value of **every** register at once,
as one class ``((v_a * n_values) + v_b) * n_values + v_c`` of ``n_values ** n_registers`` answers.

The answer depends on R different positions, each chosen by content (the latest token of register r), whose
distances vary from sequence to sequence. A one-layer model has one softmax row per head at the ``?``: one
head must spread that row over R places and keep older assignments of the same registers out, which is
exactly what a head cannot do sharply for all R at once; R heads can each take one register. That is the
"How many heads?" experiment (``mha_core.toy.experiment``), run at a fixed d_model for h = 1 .. 16.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import torch
from torch.nn import functional as F

from mha_core.errors import LabError
from mha_core.toy.data import HELD_OUT_STREAM, TRAIN_STREAM, data_rng
from mha_core.toy.model import ToyConfig, ToyTransformer
from mha_core.toy.train import TRAIN_THREADS, make_optimizer

__all__ = [
    "RegisterTask", "RegisterBatch", "RegisterMetrics", "RegisterRun", "REGISTER_NAMES", "DEFAULT_TASK",
    "make_register_batch", "label_registers", "held_out_registers", "answer_class", "answer_values", "register_loss",
    "register_metrics", "head_register_weights", "train_registers", "format_registers", "example_steps",
    "chance_accuracy",
]

REGISTER_NAMES = "abcdefgh"  # register r is shown as REGISTER_NAMES[r]
QUESTION = "?"
EVAL_SEQS = 512   # held-out sequences behind the shipped numbers
EVAL_SEED = 1234  # data seed of the held-out set (stream HELD_OUT_STREAM)


@dataclass(frozen=True)
class RegisterTask:
    """Shape of the task: how many registers must be reported, how many values each takes, context length."""

    n_registers: int = 3
    n_values: int = 4
    n_ctx: int = 24

    def __post_init__(self) -> None:
        ok = (1 <= self.n_registers <= len(REGISTER_NAMES) and self.n_values >= 2
              and self.n_ctx > self.n_registers)
        if not ok:
            raise LabError("toy_registers", max=len(REGISTER_NAMES), r=self.n_registers, v=self.n_values, n=self.n_ctx)

    @property
    def question(self) -> int:
        """Token id of ``?`` (after every assignment id)."""
        return self.n_registers * self.n_values

    @property
    def n_answers(self) -> int:
        """Number of possible answers: one class per combination of register values."""
        return self.n_values ** self.n_registers

    @property
    def vocab_size(self) -> int:
        """Ids the model must embed and answer with: max(input ids, answer classes)."""
        return max(self.question + 1, self.n_answers)

    def model_config(self, d_model: int, n_heads: int, seed: int = 0) -> ToyConfig:
        """One attention layer (one softmax row per head at each ``?``), no MLP, as in the copy model."""
        return ToyConfig(vocab_size=self.vocab_size, n_ctx=self.n_ctx, d_model=d_model, n_heads=n_heads,
                         n_layers=1, mlp=False, seed=seed, distinct=False, min_repeat=2,
                         max_repeat=max(2, self.n_ctx // 2))


DEFAULT_TASK = RegisterTask()


@dataclass(frozen=True)
class RegisterBatch:
    """Sequences of assignments and questions, the answer at each question, and where it comes from."""

    tokens: np.ndarray   # (B, n) int64 ids
    answers: np.ndarray  # (B, n) int64 answer class at each asked position, -1 elsewhere
    mask: np.ndarray     # (B, n) bool: a ``?`` at which every register has been assigned (an asked position)
    latest: np.ndarray   # (B, n, R) value of each register after step i (-1: not assigned yet)
    sources: np.ndarray  # (B, n, R) position of that latest assignment (-1: none)


@dataclass(frozen=True)
class RegisterMetrics:
    """Cross-entropy and accuracy (all registers right) over the asked positions."""

    loss: float
    accuracy: float


def answer_class(values: np.ndarray, n_values: int) -> np.ndarray:
    """(..., R) register values -> (...) answer class, first register most significant."""
    values = np.asarray(values, dtype=np.int64)
    out = np.zeros(values.shape[:-1], dtype=np.int64)
    for r in range(values.shape[-1]):
        out = out * n_values + values[..., r]
    return out


def answer_values(cls: np.ndarray, task: RegisterTask) -> np.ndarray:
    """Inverse of ``answer_class``: (...) classes -> (..., R) values."""
    cls = np.asarray(cls, dtype=np.int64)
    digits = [(cls // task.n_values ** (task.n_registers - 1 - r)) % task.n_values for r in range(task.n_registers)]
    return np.stack(digits, axis=-1)


def make_register_batch(rng: np.random.Generator, batch: int, task: RegisterTask = DEFAULT_TASK) -> RegisterBatch:
    """``batch`` sequences; each step is ``?`` or an assignment to a uniformly drawn register (equal odds)."""
    kind = rng.integers(0, task.n_registers + 1, size=(batch, task.n_ctx))   # n_registers means "?"
    value = rng.integers(0, task.n_values, size=(batch, task.n_ctx))
    tokens = np.where(kind == task.n_registers, task.question, kind * task.n_values + value)
    return label_registers(tokens.astype(np.int64), task)


def label_registers(tokens: np.ndarray, task: RegisterTask = DEFAULT_TASK) -> RegisterBatch:
    """The answers of any (B, n) token ids: scan left to right, keeping each register's latest value and place."""
    tokens = np.atleast_2d(np.asarray(tokens, dtype=np.int64))
    batch, n = tokens.shape
    r_count = task.n_registers
    is_assign = (tokens >= 0) & (tokens < task.question)
    kind = np.where(is_assign, tokens // task.n_values, -1)             # register assigned at each step, or -1
    latest = np.full((batch, n, r_count), -1, dtype=np.int64)
    sources = np.full((batch, n, r_count), -1, dtype=np.int64)
    cur_val = np.full((batch, r_count), -1, dtype=np.int64)
    cur_src = np.full((batch, r_count), -1, dtype=np.int64)
    for i in range(n):
        hit = kind[:, i, None] == np.arange(r_count)[None]               # (B, R): register assigned at step i
        cur_val = np.where(hit, (tokens[:, i] % task.n_values)[:, None], cur_val)
        cur_src = np.where(hit, i, cur_src)
        latest[:, i], sources[:, i] = cur_val, cur_src
    mask = (tokens == task.question) & (latest >= 0).all(axis=-1)
    answers = np.where(mask, answer_class(np.maximum(latest, 0), task.n_values), -1)
    return RegisterBatch(tokens=tokens, answers=answers, mask=mask, latest=latest, sources=sources)


def held_out_registers(task: RegisterTask = DEFAULT_TASK, n_seqs: int = EVAL_SEQS,
                       seed: int = EVAL_SEED) -> RegisterBatch:
    """The held-out set (a data stream training never reads)."""
    return make_register_batch(data_rng(seed, HELD_OUT_STREAM), n_seqs, task)


def register_loss(logits: torch.Tensor, batch: RegisterBatch) -> torch.Tensor:
    """Mean cross-entropy of the answer class at every asked position."""
    sel = torch.from_numpy(batch.mask)
    return F.cross_entropy(logits[sel], torch.from_numpy(batch.answers)[sel])


@torch.no_grad()
def register_metrics(model: ToyTransformer, batch: RegisterBatch) -> RegisterMetrics:
    """Loss and accuracy (the whole answer right) over the asked positions of ``batch``."""
    logits = model(torch.from_numpy(batch.tokens)).logits
    sel = torch.from_numpy(batch.mask)
    right = logits[sel].argmax(-1) == torch.from_numpy(batch.answers)[sel]
    return RegisterMetrics(loss=float(register_loss(logits, batch)), accuracy=float(right.float().mean()))


@torch.no_grad()
def head_register_weights(model: ToyTransformer, batch: RegisterBatch) -> np.ndarray:
    """(heads, R): mean attention weight each head puts, at asked positions, on each register's latest assignment.

    A head "takes" register r when this weight is high; one head cannot take R registers at once at weight 1.
    """
    attn = model(torch.from_numpy(batch.tokens), return_attn=True).attn[:, 0].double().numpy()  # (B, h, n, n)
    b_idx, q_idx = np.nonzero(batch.mask)
    src = batch.sources[b_idx, q_idx]                                # (m, R)
    rows = attn[b_idx, :, q_idx]                                     # (m, h, n)
    picked = np.take_along_axis(rows, np.broadcast_to(src[:, None, :], (len(src), rows.shape[1], src.shape[1])),
                                axis=2)                              # (m, h, R)
    return picked.mean(axis=0)


@dataclass(frozen=True)
class RegisterRun:
    """One trained model of the task, measured on the held-out set."""

    model: ToyTransformer
    metrics: RegisterMetrics
    head_weights: np.ndarray  # (heads, R), see head_register_weights
    loss: list[float]         # training loss per step
    seconds: float


def train_registers(task: RegisterTask, d_model: int, n_heads: int, steps: int, batch: int = 64, lr: float = 1e-2,
                    seed: int = 0, held_out: RegisterBatch | None = None) -> RegisterRun:
    """AdamW with the copy model's schedule on the asked positions; same arguments -> same weights."""
    if steps < 1 or batch < 1 or lr <= 0:
        raise LabError("toy_train", steps=steps, batch=batch, every=1, lr=lr)
    threads = torch.get_num_threads()
    torch.set_num_threads(TRAIN_THREADS)
    try:
        model = ToyTransformer(task.model_config(d_model, n_heads, seed))
        opt, sched = make_optimizer(model, lr, steps)
        rng = data_rng(seed, TRAIN_STREAM)
        losses: list[float] = []
        start = time.perf_counter()
        model.train()
        for _ in range(steps):
            data = make_register_batch(rng, batch, task)
            loss = register_loss(model(torch.from_numpy(data.tokens)).logits, data)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            losses.append(float(loss.detach()))
        seconds = time.perf_counter() - start
        model.eval()
        held = held_out_registers(task) if held_out is None else held_out
        return RegisterRun(model=model, metrics=register_metrics(model, held),
                           head_weights=head_register_weights(model, held), loss=losses, seconds=seconds)
    finally:
        torch.set_num_threads(threads)


def format_registers(tokens: np.ndarray, task: RegisterTask = DEFAULT_TASK) -> list[str]:
    """Ids -> readable steps: ``a=2``, ``?`` (for the page's example)."""
    out = []
    for tok in np.asarray(tokens).reshape(-1):
        tok = int(tok)
        if tok == task.question:
            out.append(QUESTION)
        elif 0 <= tok < task.question:
            out.append(f"{REGISTER_NAMES[tok // task.n_values]}={tok % task.n_values}")
        else:
            raise LabError("toy_vocab_range", top=task.question, lo=tok, hi=tok)
    return out


def example_steps(rng: np.random.Generator, task: RegisterTask = DEFAULT_TASK) -> list[str]:
    """One sequence shaped like the training data, as steps; each asked ``?`` shows its answer (``?→a=1,b=3,c=2``)."""
    ex = make_register_batch(rng, 1, task)
    steps = format_registers(ex.tokens[0], task)
    for i in np.flatnonzero(ex.mask[0]):
        steps[i] += "→" + ",".join(f"{REGISTER_NAMES[r]}={v}" for r, v in enumerate(ex.latest[0, i]))
    return steps


def chance_accuracy(task: RegisterTask) -> float:
    """Accuracy of guessing: one answer out of n_values ** n_registers."""
    return 1.0 / math.prod([task.n_values] * task.n_registers)

"""Run a toy model on held-out repeated sequences: attention as numpy, head scores, repeated-part loss."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch.nn import functional as F

from mha_core.toy.data import HELD_OUT_STREAM, RepeatBatch, data_rng, make_batch
from mha_core.toy.model import ToyConfig, ToyTransformer
from mha_core.toy.scores import ScoreTable, score_attention
from mha_core.toy.tasks import TaskBatch

__all__ = ["EVAL_SEQS", "EVAL_SEED", "RepeatMetrics", "SequenceView", "held_out_batch", "attention",
           "inspect_sequence", "score_model", "repeat_loss", "repeat_metrics", "task_loss", "task_metrics"]

EVAL_SEQS = 256  # held-out sequences behind every shipped figure
EVAL_SEED = 1234  # data seed of the held-out set (stream HELD_OUT_STREAM, never used in training)


@dataclass(frozen=True)
class SequenceView:
    """One sequence through the model: what every head attends to and what the model predicts next."""

    tokens: np.ndarray        # (n,) ids
    attn: np.ndarray          # (layers, heads, n, n)
    layer_inputs: np.ndarray  # (layers, n, d_model): the input x_L of each attention layer
    predicted: np.ndarray     # (n,) most likely next token after each position
    confidence: np.ndarray    # (n,) its probability


@dataclass(frozen=True)
class RepeatMetrics:
    """Next-token cross-entropy and accuracy on the repeated part (where copying predicts the token)."""

    loss: float
    accuracy: float


def held_out_batch(cfg: ToyConfig, n_seqs: int = EVAL_SEQS, seed: int = EVAL_SEED) -> RepeatBatch:
    """Sequences from the held-out stream, shaped like the training data of ``cfg``."""
    return make_batch(data_rng(seed, HELD_OUT_STREAM), n_seqs, cfg.n_ctx, cfg.vocab_size,
                      cfg.min_repeat, cfg.max_repeat, cfg.distinct)


@torch.no_grad()
def attention(model: ToyTransformer, tokens: np.ndarray, head_mask: np.ndarray | None = None) -> np.ndarray:
    """(layers, heads, B, n, n) float64 attention weights of ``tokens`` (B, n) or (n,)."""
    idx = torch.as_tensor(np.atleast_2d(tokens), dtype=torch.long)
    out = model(idx, head_mask=head_mask, return_attn=True)
    return out.attn.permute(1, 2, 0, 3, 4).double().numpy()


@torch.no_grad()
def inspect_sequence(model: ToyTransformer, tokens: np.ndarray, head_mask: np.ndarray | None = None) -> SequenceView:
    """Attention, layer inputs and next-token predictions for one sequence of ids (n,)."""
    ids = np.asarray(tokens, dtype=np.int64).reshape(-1)
    out = model(torch.from_numpy(ids)[None], head_mask=head_mask, return_attn=True)
    probs = torch.softmax(out.logits[0], dim=-1)
    conf, pred = probs.max(dim=-1)
    return SequenceView(
        tokens=ids, attn=out.attn[0].double().numpy(),
        layer_inputs=torch.stack(out.layer_inputs, dim=0)[:, 0].double().numpy(),
        predicted=pred.numpy(), confidence=conf.double().numpy(),
    )


def score_model(model: ToyTransformer, batch: RepeatBatch | None = None) -> ScoreTable:
    """Every head's scores on held-out sequences (default: ``held_out_batch(model.config)``)."""
    batch = held_out_batch(model.config) if batch is None else batch
    return score_attention(attention(model, batch.tokens), batch.tokens, batch.repeat_mask)


def repeat_loss(logits: torch.Tensor, tokens: torch.Tensor, repeat_mask: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of predicting token i+1 at every position i where ``repeat_mask`` is True."""
    sel = repeat_mask[:, :-1]
    return F.cross_entropy(logits[:, :-1][sel], tokens[:, 1:][sel])


@torch.no_grad()
def repeat_metrics(model: ToyTransformer, batch: RepeatBatch, head_mask: np.ndarray | None = None) -> RepeatMetrics:
    """Loss and accuracy on the repeated part of ``batch``, optionally with heads switched off."""
    tokens, mask = batch.torch_tokens(), batch.torch_mask()
    logits = model(tokens, head_mask=head_mask).logits
    sel = mask[:, :-1]
    pred = logits[:, :-1].argmax(-1)[sel]
    acc = (pred == tokens[:, 1:][sel]).float().mean()
    return RepeatMetrics(loss=float(repeat_loss(logits, tokens, mask)), accuracy=float(acc))


def task_loss(logits: torch.Tensor, batch: TaskBatch) -> torch.Tensor:
    """Mean cross-entropy of ``batch.targets`` at the task's scored positions."""
    sel = torch.from_numpy(batch.mask)
    return F.cross_entropy(logits[sel], torch.from_numpy(batch.targets)[sel])


@torch.no_grad()
def task_metrics(model: ToyTransformer, batch: TaskBatch, head_mask: np.ndarray | None = None) -> RepeatMetrics:
    """Loss and accuracy (each scored token on its own) of a task's batch."""
    logits = model(torch.from_numpy(batch.tokens), head_mask=head_mask).logits
    sel = torch.from_numpy(batch.mask)
    right = logits[sel].argmax(-1) == torch.from_numpy(batch.targets)[sel]
    return RepeatMetrics(loss=float(task_loss(logits, batch)), accuracy=float(right.float().mean()))


# What "the same model" means when it is retrained on another machine: CPUs with other vector units (AVX2 vs
# AVX-512) round some float sums differently, so the weights differ in the last bits while the model behaves the
# same. These tolerances bound what may differ for it still to count as a rebuild of the shipped one.
SAME_LOSS_TOL = 1e-4      # held-out loss on the repeated part, absolute (nats)
SAME_ACCURACY_TOL = 2e-3  # held-out accuracy: a few predictions at a near-tie may flip
SAME_SCORE_TOL = 1e-3     # every score of every head, absolute (scores lie in [0, 1])


@dataclass(frozen=True)
class Sameness:
    """How far two models of one shape are apart: weights, held-out loss and accuracy, head scores and labels."""

    max_weight_diff: float
    loss_diff: float
    accuracy_diff: float
    max_score_diff: float
    labels_differ: tuple[str, ...]  # "L{layer}H{head}: a -> b" for every head whose label changed

    @property
    def identical(self) -> bool:
        """Bit-identical weights."""
        return self.max_weight_diff == 0.0

    @property
    def same(self) -> bool:
        """The same behaviour within the SAME_* tolerances, and every head with the same label."""
        return (self.loss_diff <= SAME_LOSS_TOL and self.accuracy_diff <= SAME_ACCURACY_TOL
                and self.max_score_diff <= SAME_SCORE_TOL and not self.labels_differ)


def sameness(a: ToyTransformer, b: ToyTransformer, batch: RepeatBatch | None = None) -> Sameness:
    """Compare two models of one config on the held-out set (the one the pages and ``scores`` use)."""
    if a.config != b.config:
        raise ValueError(f"different configs: {a.config} vs {b.config}")
    batch = batch if batch is not None else held_out_batch(a.config)
    wb = b.state_dict()
    weight = max(float((wb[k] - v).abs().max()) for k, v in a.state_dict().items())
    ma, mb = repeat_metrics(a, batch), repeat_metrics(b, batch)
    sa, sb = score_model(a, batch).heads, score_model(b, batch).heads
    fields = ("previous_token", "induction", "first_token", "self_token", "entropy_norm")
    score = max(abs(getattr(x, f) - getattr(y, f)) for x, y in zip(sa, sb, strict=True) for f in fields)
    labels = tuple(f"L{x.layer}H{x.head}: {x.label} -> {y.label}" for x, y in zip(sa, sb, strict=True)
                   if x.label != y.label)
    return Sameness(weight, abs(ma.loss - mb.loss), abs(ma.accuracy - mb.accuracy), score, labels)

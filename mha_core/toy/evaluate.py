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

"""Switch heads off and measure what breaks: single-head importance, group ablation, pruning curve.

A head is "off" when its output is multiplied by 0 before W_O (zero ablation), so the rest of the
model sees exactly what it would see if that head never wrote to the residual stream.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from mha_core.toy.data import RepeatBatch
from mha_core.toy.evaluate import RepeatMetrics, repeat_metrics
from mha_core.toy.model import ToyTransformer, full_head_mask

__all__ = ["Head", "GroupAblation", "Importance", "PruningCurve", "mask_without", "ablate", "importance",
           "pruning_curve"]

Head = tuple[int, int]  # (layer, head)


@dataclass(frozen=True)
class GroupAblation:
    """Repeated-part metrics with every head switched on, and with ``heads`` switched off."""

    heads: tuple[Head, ...]
    base: RepeatMetrics
    ablated: RepeatMetrics

    @property
    def loss_factor(self) -> float:
        """ablated loss / base loss: how many times worse the model copies without these heads."""
        return self.ablated.loss / self.base.loss


@dataclass(frozen=True)
class Importance:
    """Effect of removing each head alone: (layers, heads) arrays."""

    base: RepeatMetrics
    loss_increase: np.ndarray   # ablated loss - base loss
    accuracy_drop: np.ndarray   # base accuracy - ablated accuracy


@dataclass(frozen=True)
class PruningCurve:
    """Accuracy and loss as heads are removed one by one, least important first (entry 0: none removed)."""

    order: tuple[Head, ...]      # the heads in the order they are removed
    n_removed: tuple[int, ...]   # 0 .. layers*heads
    accuracy: tuple[float, ...]
    loss: tuple[float, ...]


def mask_without(model: ToyTransformer, heads: Iterable[Head]) -> np.ndarray:
    """(layers, heads) 0/1 mask with ``heads`` off and every other head on."""
    mask = full_head_mask(model.config)
    for layer, head in heads:
        mask[layer, head] = 0.0
    return mask


def ablate(model: ToyTransformer, batch: RepeatBatch, heads: Iterable[Head]) -> GroupAblation:
    """Switch ``heads`` off together (e.g. every head labelled "induction") and compare with none off."""
    heads = tuple(heads)
    return GroupAblation(heads=heads, base=repeat_metrics(model, batch),
                         ablated=repeat_metrics(model, batch, mask_without(model, heads)))


def importance(model: ToyTransformer, batch: RepeatBatch) -> Importance:
    """Loss increase and accuracy drop on the repeated part when each head alone is switched off."""
    cfg = model.config
    base = repeat_metrics(model, batch)
    loss_inc = np.zeros((cfg.n_layers, cfg.n_heads))
    acc_drop = np.zeros((cfg.n_layers, cfg.n_heads))
    for layer in range(cfg.n_layers):
        for head in range(cfg.n_heads):
            m = repeat_metrics(model, batch, mask_without(model, [(layer, head)]))
            loss_inc[layer, head] = m.loss - base.loss
            acc_drop[layer, head] = base.accuracy - m.accuracy
    return Importance(base=base, loss_increase=loss_inc, accuracy_drop=acc_drop)


def pruning_curve(model: ToyTransformer, batch: RepeatBatch, imp: Importance | None = None) -> PruningCurve:
    """Remove heads cumulatively in increasing order of single-head loss increase (ties: layer, head)."""
    imp = importance(model, batch) if imp is None else imp
    n_heads = model.config.n_heads
    flat = np.argsort(imp.loss_increase.ravel(), kind="stable")
    order = tuple((int(i) // n_heads, int(i) % n_heads) for i in flat)
    acc, loss = [imp.base.accuracy], [imp.base.loss]
    for k in range(1, len(order) + 1):
        m = repeat_metrics(model, batch, mask_without(model, order[:k]))
        acc.append(m.accuracy)
        loss.append(m.loss)
    return PruningCurve(order=order, n_removed=tuple(range(len(order) + 1)), accuracy=tuple(acc), loss=tuple(loss))

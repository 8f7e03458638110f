"""Which heads behave alike on one input: the Jensen–Shannon distance between two heads' attention, averaged over
the queries, a grouping of the heads by it, and each head's entropy (a broad head has a high one).

For any attention tensor (heads, n, m) whose rows are distributions: the real model's 72 heads (layers × heads
flattened), the toy model's, or one walkthrough layer's. Pure numpy; natural logarithms, so a distance lies in
[0, sqrt(ln 2)] and an entropy in [0, ln m].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mha_core.errors import LabError

__all__ = ["JS_MAX", "Grouping", "group_heads", "head_entropy", "js_distances"]

JS_MAX = float(np.sqrt(np.log(2.0)))  # the largest Jensen–Shannon distance (natural logarithm): disjoint rows
QUERY_BLOCK = 16  # queries per pass of js_distances: 72 heads × 16 × 128 keys of float32 is ~0.6 MB


def _check(attn: np.ndarray) -> np.ndarray:
    a = np.asarray(attn, dtype=np.float64)
    if a.ndim != 3 or 0 in a.shape:
        raise LabError("attn_shape", shape=tuple(a.shape))
    if not np.all(np.isfinite(a)) or np.any(a < 0) or not np.allclose(a.sum(-1), 1.0, atol=1e-4):
        raise LabError("attn_rows")
    return a / a.sum(-1, keepdims=True)  # a model's float32 rows sum to 1 only to ~1e-7


def _plogp(p: np.ndarray) -> np.ndarray:
    """p·ln p with 0·ln 0 = 0."""
    return np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)


def head_entropy(attn: np.ndarray) -> np.ndarray:
    """(heads,): the entropy of each head's attention rows, averaged over the queries (nats)."""
    a = _check(attn)
    return -_plogp(a).sum(-1).mean(-1)


def js_distances(attn: np.ndarray, dtype: type = np.float64) -> np.ndarray:
    """(heads, heads): sqrt of the Jensen–Shannon divergence between two heads' rows, averaged over the queries.

    JSD(p, q) = H((p + q)/2) − (H(p) + H(q))/2: each head's row entropies once, the midpoints pair by pair (one
    head against the later ones, QUERY_BLOCK queries at a time, so the temporaries stay in the CPU cache).
    ``dtype=np.float32`` takes the midpoints' logarithms in single precision (faster; sums
    stay float64): within 1e-4 of float64, the error largest for nearly identical heads."""
    a = _check(attn)
    h, n, _ = a.shape
    row_entropy = -_plogp(a).sum(-1)                                    # (H, n)
    x = a.astype(dtype, copy=False)
    tiny = np.finfo(dtype).tiny  # log(0 + tiny) is finite, and 0 · finite = 0
    total = np.zeros((h, h))
    for q0 in range(0, n, QUERY_BLOCK):
        block, ent = x[:, q0:q0 + QUERY_BLOCK], row_entropy[:, q0:q0 + QUERY_BLOCK]  # (H, b, m), (H, b)
        for i in range(h - 1):
            mid = block[i] + block[i + 1:]                              # (H-i-1, b, m), twice the midpoint
            mid *= 0.5
            plogp = np.log(mid + tiny)
            plogp *= mid
            js = -plogp.sum(-1, dtype=np.float64) - (ent[i] + ent[i + 1:]) / 2
            total[i, i + 1:] += np.sqrt(np.clip(js, 0.0, None)).sum(-1)
    d = total / n
    return d + d.T


@dataclass(frozen=True)
class Grouping:
    """Heads grouped by behaviour: an order that puts alike heads side by side, and groups within ``threshold``."""

    order: tuple[int, ...]             # every head once, alike heads adjacent (for the similarity map's axes)
    groups: tuple[tuple[int, ...], ...]  # heads whose average-linkage distance stays within the threshold
    threshold: float


def group_heads(dist: np.ndarray, threshold: float) -> Grouping:
    """Average-linkage agglomerative grouping (Lance–Williams updates; ties go to the lowest head numbers)."""
    d = np.asarray(dist, dtype=np.float64)
    if d.ndim != 2 or d.shape[0] != d.shape[1] or d.shape[0] == 0:
        raise LabError("dist_shape", shape=tuple(d.shape))
    link = d.copy()
    np.fill_diagonal(link, np.inf)
    clusters: dict[int, list[int]] = {i: [i] for i in range(d.shape[0])}  # keyed by the row that stands for it
    groups: list[list[int]] | None = None
    while len(clusters) > 1:
        i, j = divmod(int(np.argmin(link)), link.shape[0])  # the first minimum: i < j, lowest numbers first
        i, j = min(i, j), max(i, j)
        if link[i, j] > threshold and groups is None:  # average linkage never merges closer later: these are final
            groups = [list(c) for c in clusters.values()]
        ni, nj = len(clusters[i]), len(clusters[j])
        merged = (ni * link[i] + nj * link[j]) / (ni + nj)
        link[i], link[:, i] = merged, merged
        link[i, i] = np.inf
        link[j], link[:, j] = np.inf, np.inf
        clusters[i] = clusters[i] + clusters.pop(j)
    order = next(iter(clusters.values()))
    groups = groups if groups is not None else [order]
    position = {head: k for k, head in enumerate(order)}
    return Grouping(order=tuple(order), groups=tuple(sorted((tuple(sorted(g)) for g in groups),
                                                            key=lambda g: min(position[h] for h in g))),
                    threshold=threshold)

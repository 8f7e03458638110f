"""Multi-head attention in numpy, returning every intermediate as a named, frozen Trace.

Row-vector convention throughout (``y = x @ W``), as in PyTorch's ``nn.Linear`` weight
transposed. The split and merge steps are an inverse pair (d2l.ai calls them
``transpose_qkv`` / ``transpose_output``); every tensor a page shows is a field here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mha_core.errors import LabError

__all__ = [
    "Trace",
    "split_heads",
    "merge_heads",
    "repeat_kv",
    "softmax",
    "causal_mask",
    "scaled_dot_product_attention",
    "multi_head_attention",
]


@dataclass(frozen=True)
class Trace:
    """Every intermediate of one multi-head attention forward pass, by name.

    Shapes use n = number of queries, m = number of keys (m = n in self-attention), h = n_heads,
    g = n_kv_heads, d = d_head.
    """

    x: np.ndarray             # (n, d_model)   the rows that ask (queries)
    q: np.ndarray             # (n, h*d)       x @ w_q
    k: np.ndarray             # (m, g*d)       x_kv @ w_k
    v: np.ndarray             # (m, g*d)       x_kv @ w_v
    q_heads: np.ndarray       # (h, n, d)      split_heads(q)
    k_heads: np.ndarray       # (g, m, d)      split_heads(k)
    v_heads: np.ndarray       # (g, m, d)      split_heads(v)
    raw_scores: np.ndarray    # (h, n, m)      q_i k_j^T, before scaling
    scores: np.ndarray        # (h, n, m)      raw_scores / sqrt(d), before mask and softmax
    mask: np.ndarray | None   # (n, n) bool    True where a query may look at a key (causal self-attention)
    weights: np.ndarray       # (h, n, m)      softmax over keys (rows sum to 1)
    head_outputs: np.ndarray  # (h, n, d)      weights @ v per head
    concat: np.ndarray        # (n, h*d)       merge_heads(head_outputs)
    output: np.ndarray        # (n, d_model)   concat @ w_o
    n_heads: int
    n_kv_heads: int
    d_head: int
    causal: bool
    x_kv: np.ndarray | None = None  # (m, d_kv)  the rows that answer (keys, values); None: x itself

    @property
    def d_model(self) -> int:
        return int(self.x.shape[1])

    @property
    def cross(self) -> bool:
        """Cross-attention: keys and values come from other rows than the queries."""
        return self.x_kv is not None

    @property
    def group_size(self) -> int:
        """How many query heads share one K/V head (1 for plain MHA)."""
        return self.n_heads // self.n_kv_heads


def split_heads(t: np.ndarray, n_heads: int) -> np.ndarray:
    """(n, n_heads*d) -> (n_heads, n, d): column block i becomes head i."""
    n, width = t.shape
    return t.reshape(n, n_heads, width // n_heads).transpose(1, 0, 2)


def merge_heads(t: np.ndarray) -> np.ndarray:
    """(n_heads, n, d) -> (n, n_heads*d): the inverse of ``split_heads`` (concatenation)."""
    h, n, d = t.shape
    return t.transpose(1, 0, 2).reshape(n, h * d)


def repeat_kv(t: np.ndarray, group_size: int) -> np.ndarray:
    """(g, n, d) -> (g*group_size, n, d): each K/V head serves ``group_size`` query heads."""
    return t if group_size == 1 else np.repeat(t, group_size, axis=0)


def softmax(scores: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax; entries equal to -inf get weight exactly 0. Keeps the dtype."""
    e = scores - np.max(scores, axis=axis, keepdims=True)
    np.exp(e, out=e)  # in place: the shifted copy is ours
    e /= np.sum(e, axis=axis, keepdims=True)
    return e


def causal_mask(n: int) -> np.ndarray:
    """(n, n) bool: query i may look at keys 0..i only."""
    return np.tril(np.ones((n, n), dtype=bool))


def scaled_dot_product_attention(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Attention(Q, K, V) = softmax(QK^T / sqrt(d)) V, batched over a leading head axis.

    Returns (raw_scores, scaled_scores, weights, outputs).
    """
    d = q.shape[-1]
    raw = q @ np.swapaxes(k, -1, -2)
    scaled = raw * (1.0 / math.sqrt(d))  # a Python float keeps float32 inputs in float32
    masked = scaled if mask is None else np.where(mask, scaled, -np.inf)
    weights = softmax(masked, axis=-1)
    return raw, scaled, weights, weights @ v


def _project(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, name: str) -> np.ndarray:
    """x @ w (+ b): a bias is optional and checked against w's width."""
    y = x @ w
    if b is None:
        return y
    b = np.asarray(b)
    if b.shape != (w.shape[1],):
        raise LabError("bias_shape", name=name, got=tuple(b.shape), want=w.shape[1])
    y += b
    return y


def _check_kv(x_kv: np.ndarray, w_k: np.ndarray, w_v: np.ndarray, causal: bool) -> None:
    """Validate the rows keys and values come from (cross-attention)."""
    if x_kv.ndim != 2:
        raise LabError("x_kv_ndim", ndim=x_kv.ndim)
    if x_kv.shape[0] == 0:
        raise LabError("x_kv_empty")
    if not np.all(np.isfinite(x_kv)):
        raise LabError("not_finite", name="X_kv")
    if causal:
        raise LabError("causal_cross")
    for name, w in (("W_K", w_k), ("W_V", w_v)):
        if w.ndim == 2 and w.shape[0] != x_kv.shape[1]:
            raise LabError("kv_rows", name=name, rows=w.shape[0], d_kv=x_kv.shape[1])


def _check(x, w_q, w_k, w_v, w_o, n_heads, n_kv_heads, cross: bool = False) -> int:
    """Validate shapes in the order a student would check them; return d_head. ``cross``: keys and values come
    from other rows than X, whose width ``_check_kv`` already held W_K and W_V to."""
    if x.ndim != 2:
        raise LabError("x_ndim", ndim=x.ndim)
    n, d_model = x.shape
    if n == 0:
        raise LabError("x_empty")
    if not np.all(np.isfinite(x)):
        raise LabError("not_finite", name="X")
    if n_heads < 1:
        raise LabError("heads_positive", h=n_heads)
    if n_kv_heads < 1 or n_heads % n_kv_heads:
        raise LabError("kv_divides", h=n_heads, g=n_kv_heads)
    for name, w in (("W_Q", w_q), ("W_K", w_k), ("W_V", w_v), ("W_O", w_o)):
        if w.ndim != 2:
            raise LabError("w_ndim", name=name, ndim=w.ndim)
        if not np.all(np.isfinite(w)):
            raise LabError("not_finite", name=name)
    for name, w in (("W_Q", w_q),) if cross else (("W_Q", w_q), ("W_K", w_k), ("W_V", w_v)):
        if w.shape[0] != d_model:
            raise LabError("w_rows", name=name, rows=w.shape[0], d_model=d_model)
    inner = w_q.shape[1]
    if inner % n_heads:
        raise LabError("q_divides", inner=inner, h=n_heads)
    d_head = inner // n_heads
    for name, w in (("W_K", w_k), ("W_V", w_v)):
        if w.shape[1] != n_kv_heads * d_head:
            raise LabError("kv_width", name=name, cols=w.shape[1], g=n_kv_heads, d=d_head, want=n_kv_heads * d_head)
    if w_o.shape[0] != inner:
        raise LabError("o_rows", rows=w_o.shape[0], inner=inner)
    if w_o.shape[1] != d_model:
        raise LabError("o_cols", cols=w_o.shape[1], d_model=d_model)
    return d_head


def multi_head_attention(
    x: np.ndarray,
    w_q: np.ndarray,
    w_k: np.ndarray,
    w_v: np.ndarray,
    w_o: np.ndarray,
    n_heads: int,
    *,
    n_kv_heads: int | None = None,
    causal: bool = False,
    x_kv: np.ndarray | None = None,
    b_q: np.ndarray | None = None,
    b_k: np.ndarray | None = None,
    b_v: np.ndarray | None = None,
    b_o: np.ndarray | None = None,
) -> Trace:
    """MultiHead(X) = Concat(head_1..head_h) W^O, head_i = Attention(X W_Q^i, X W_K^i, X W_V^i).

    ``n_kv_heads`` < ``n_heads`` is grouped-query attention (1 = multi-query). ``x_kv`` is
    cross-attention: queries from ``x``, keys and values from ``x_kv`` (an encoder's rows for a
    decoder); ``None`` is self-attention. Biases are optional (real checkpoints have them). Bad
    shapes raise ``LabError`` (a ValueError).
    """
    x, w_q, w_k, w_v, w_o = (np.asarray(a) for a in (x, w_q, w_k, w_v, w_o))
    g = n_heads if n_kv_heads is None else n_kv_heads
    src = x
    if x_kv is not None:
        src = np.asarray(x_kv)
        _check_kv(src, w_k, w_v, causal)
    d_head = _check(x, w_q, w_k, w_v, w_o, n_heads, g, cross=x_kv is not None)

    q, k, v = _project(x, w_q, b_q, "b_q"), _project(src, w_k, b_k, "b_k"), _project(src, w_v, b_v, "b_v")
    q_heads, k_heads, v_heads = split_heads(q, n_heads), split_heads(k, g), split_heads(v, g)

    mask = causal_mask(x.shape[0]) if causal else None
    raw, scaled, weights, head_outputs = scaled_dot_product_attention(
        q_heads, repeat_kv(k_heads, n_heads // g), repeat_kv(v_heads, n_heads // g), mask
    )
    concat = merge_heads(head_outputs)
    output = _project(concat, w_o, b_o, "b_o")
    return Trace(
        x=x, q=q, k=k, v=v, q_heads=q_heads, k_heads=k_heads, v_heads=v_heads,
        raw_scores=raw, scores=scaled, mask=mask, weights=weights,
        head_outputs=head_outputs, concat=concat, output=output,
        n_heads=n_heads, n_kv_heads=g, d_head=d_head, causal=causal,
        x_kv=None if x_kv is None else src,
    )

"""Parameter counts for an attention layer: one implementation used by every page and the quiz."""

from __future__ import annotations

from mha_core.errors import LabError


def _resolve(d_model: int, n_heads: int, n_kv_heads: int | None, d_head: int | None) -> tuple[int, int]:
    """Check a layer shape and return (n_kv_heads, d_head); raise LabError when it cannot exist."""
    if d_model < 1 or n_heads < 1:
        raise LabError("shape_positive", "d_model and n_heads must be positive (got {d_model}, {h}).",
                       d_model=d_model, h=n_heads)
    g = n_heads if n_kv_heads is None else n_kv_heads
    if g < 1 or n_heads % g:
        raise LabError(
            "kv_divides",
            "n_heads = {h} is not a multiple of n_kv_heads = {g}: every K/V head must serve "
            "the same number of query heads.",
            h=n_heads, g=g,
        )
    if d_head is None:
        if d_model % n_heads:
            raise LabError("h_divides", "d_model = {d_model} cannot be cut into {h} equal heads.",
                           d_model=d_model, h=n_heads)
        d_head = d_model // n_heads
    if d_head < 1:
        raise LabError("d_head_positive", "d_head must be positive (got {d}).", d=d_head)
    return g, d_head


def param_counts(
    d_model: int,
    n_heads: int,
    *,
    n_kv_heads: int | None = None,
    d_head: int | None = None,
    bias: bool = False,
) -> dict[str, int]:
    """Weights (and biases) of W_Q, W_K, W_V, W_O for one attention layer, and their total.

    W_Q: d_model × h·d_head, W_K and W_V: d_model × g·d_head, W_O: h·d_head × d_model.
    """
    g, d = _resolve(d_model, n_heads, n_kv_heads, d_head)
    q_w, kv_w = n_heads * d, g * d
    counts = {
        "q": d_model * q_w + (q_w if bias else 0),
        "k": d_model * kv_w + (kv_w if bias else 0),
        "v": d_model * kv_w + (kv_w if bias else 0),
        "o": q_w * d_model + (d_model if bias else 0),
    }
    counts["total"] = sum(counts.values())
    return counts


def kv_cache_bytes(
    *, n_layers: int, n_kv_heads: int, d_head: int, seq_len: int, batch: int = 1, bytes_per_value: int = 2
) -> int:
    """Bytes that cached K and V take: 2 (K and V) × layers × kv heads × d_head × tokens × batch × bytes."""
    for name, value in (("n_layers", n_layers), ("n_kv_heads", n_kv_heads), ("d_head", d_head),
                        ("seq_len", seq_len), ("batch", batch), ("bytes_per_value", bytes_per_value)):
        if value < 1:
            raise LabError("count_positive", "{name} must be at least 1 (got {value}).", name=name, value=value)
    return 2 * n_layers * n_kv_heads * d_head * seq_len * batch * bytes_per_value

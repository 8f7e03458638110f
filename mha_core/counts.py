"""One attention layer's formulas (parameters, KV cache, FLOPs, divisors, MHA / GQA / MQA), for every page and quiz."""

from __future__ import annotations

from dataclasses import dataclass

from mha_core.errors import LabError


def resolve_layer(d_model: int, n_heads: int, n_kv_heads: int | None, d_head: int | None) -> tuple[int, int]:
    """Check a layer shape and return (n_kv_heads, d_head); raise LabError when it cannot exist."""
    if d_model < 1 or n_heads < 1:
        raise LabError("shape_positive", d_model=d_model, h=n_heads)
    g = n_heads if n_kv_heads is None else n_kv_heads
    _check_kv(n_heads, g)
    if d_head is None:
        if d_model % n_heads:
            raise LabError("h_divides", d_model=d_model, h=n_heads)
        d_head = d_model // n_heads
    if d_head < 1:
        raise LabError("d_head_positive", d=d_head)
    return g, d_head


def _check_kv(n_heads: int, g: int) -> None:
    """Every K/V head must serve the same number of query heads."""
    if g < 1 or n_heads % g:
        raise LabError("kv_divides", h=n_heads, g=g)


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
    g, d = resolve_layer(d_model, n_heads, n_kv_heads, d_head)
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
            raise LabError("count_positive", name=name, value=value)
    return 2 * n_layers * n_kv_heads * d_head * seq_len * batch * bytes_per_value


# ---------------------------------------------------------------------------------------------
# Divisors and the MHA / GQA / MQA family of one layer.


def divisors(n: int) -> list[int]:
    """The positive divisors of n, ascending: the head counts that cut n into equal parts."""
    if n < 1:
        raise LabError("count_positive", name="n", value=n)
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def attention_kind(n_heads: int, n_kv_heads: int) -> str:
    """"MHA" (every query head has its own K/V), "MQA" (one K/V head for all) or "GQA" (in between)."""
    if n_heads < 1:
        raise LabError("heads_positive", h=n_heads)
    _check_kv(n_heads, n_kv_heads)
    if n_kv_heads == n_heads:
        return "MHA"
    return "MQA" if n_kv_heads == 1 else "GQA"


# ---------------------------------------------------------------------------------------------
# FLOPs. Convention: one multiply-add = 2 FLOPs (FLOPS_PER_MAC); only the matrix products are
# counted (softmax, the 1/sqrt(d_head) scaling and bias adds are lower-order and left out), and
# attention is full (non-causal): each of the n queries scores all n keys.

FLOPS_PER_MAC = 2


@dataclass(frozen=True)
class LayerFlops:
    """Matrix-product FLOPs of one attention layer over ``tokens`` tokens (2 FLOPs per multiply-add).

    q, k, v, o: the projections X·W_Q, X·W_K, X·W_V and Concat·W_O (grow like n);
    scores: Q·Kᵀ for every head, mix: weights·V for every head (grow like n² per sequence).
    """

    q: int
    k: int
    v: int
    o: int
    scores: int
    mix: int
    tokens: int

    @property
    def projections(self) -> int:
        """Q, K, V and O projections together."""
        return self.q + self.k + self.v + self.o

    @property
    def attention(self) -> int:
        """QKᵀ and weights·V together: the part that grows with the sequence length."""
        return self.scores + self.mix

    @property
    def total(self) -> int:
        """Everything counted for this layer."""
        return self.projections + self.attention

    def per_token(self) -> LayerFlops:
        """The same counts divided by the number of tokens (exact: every entry is a multiple of it)."""
        n = self.tokens
        return LayerFlops(self.q // n, self.k // n, self.v // n, self.o // n, self.scores // n, self.mix // n, 1)


def attention_flops(
    d_model: int,
    n_heads: int,
    *,
    seq_len: int,
    n_kv_heads: int | None = None,
    d_head: int | None = None,
    batch: int = 1,
) -> LayerFlops:
    """FLOPs of one attention layer run on ``batch`` sequences of ``seq_len`` tokens.

    Per sequence of n tokens: Q and O cost 2·n·d_model·h·d_head each, K and V 2·n·d_model·g·d_head each,
    QKᵀ and weights·V 2·h·n²·d_head each. Sharing K/V heads (GQA/MQA) only shrinks the K and V
    projections: every query head still scores every key.
    """
    g, d = resolve_layer(d_model, n_heads, n_kv_heads, d_head)
    for name, value in (("seq_len", seq_len), ("batch", batch)):
        if value < 1:
            raise LabError("count_positive", name=name, value=value)
    tokens = seq_len * batch
    mac = FLOPS_PER_MAC
    return LayerFlops(
        q=mac * tokens * d_model * n_heads * d,
        k=mac * tokens * d_model * g * d,
        v=mac * tokens * d_model * g * d,
        o=mac * tokens * n_heads * d * d_model,
        scores=mac * batch * n_heads * seq_len * seq_len * d,
        mix=mac * batch * n_heads * seq_len * seq_len * d,
        tokens=tokens,
    )

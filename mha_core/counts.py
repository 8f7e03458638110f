"""Parameter counts for an attention layer: one implementation used by every page and the quiz."""

from __future__ import annotations

from dataclasses import dataclass

from mha_core.errors import LabError


def _resolve(d_model: int, n_heads: int, n_kv_heads: int | None, d_head: int | None) -> tuple[int, int]:
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
    g, d = _resolve(d_model, n_heads, n_kv_heads, d_head)
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


# ---------------------------------------------------------------------------------------------
# A whole model's attention: what the cost lab shows, and the curves it draws.

GQA_TYPICAL_KV_HEADS = 8  # Llama-2-70B, Llama-3-8B and Mistral-7B all share K/V among 8 heads


@dataclass(frozen=True)
class ModelShape:
    """The attention shape of a model: n_layers identical layers (validated on creation)."""

    d_model: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    n_layers: int = 1
    bias: bool = False

    def __post_init__(self) -> None:
        _resolve(self.d_model, self.n_heads, self.n_kv_heads, self.d_head)
        if self.n_layers < 1:
            raise LabError("count_positive", name="n_layers", value=self.n_layers)

    @property
    def kind(self) -> str:
        """MHA, GQA or MQA."""
        return attention_kind(self.n_heads, self.n_kv_heads)

    def with_kv_heads(self, n_kv_heads: int) -> ModelShape:
        """The same model with another number of K/V heads (MHA: n_heads, MQA: 1)."""
        return ModelShape(self.d_model, self.n_heads, n_kv_heads, self.d_head, self.n_layers, self.bias)

    def layer_params(self) -> dict[str, int]:
        """``param_counts`` of one layer."""
        return param_counts(self.d_model, self.n_heads, n_kv_heads=self.n_kv_heads, d_head=self.d_head,
                            bias=self.bias)

    def matrix_shapes(self) -> dict[str, tuple[int, int]]:
        """(rows, columns) of W_Q, W_K, W_V, W_O as they multiply from the right: X @ W."""
        q, kv = self.n_heads * self.d_head, self.n_kv_heads * self.d_head
        return {"q": (self.d_model, q), "k": (self.d_model, kv), "v": (self.d_model, kv), "o": (q, self.d_model)}

    def kv_bytes(self, *, seq_len: int, batch: int = 1, bytes_per_value: int = 2) -> int:
        """``kv_cache_bytes`` for all layers."""
        return kv_cache_bytes(n_layers=self.n_layers, n_kv_heads=self.n_kv_heads, d_head=self.d_head,
                              seq_len=seq_len, batch=batch, bytes_per_value=bytes_per_value)

    def layer_flops(self, *, seq_len: int, batch: int = 1) -> LayerFlops:
        """``attention_flops`` of one layer."""
        return attention_flops(self.d_model, self.n_heads, seq_len=seq_len, n_kv_heads=self.n_kv_heads,
                               d_head=self.d_head, batch=batch)


@dataclass(frozen=True)
class CostReport:
    """Every figure of the cost lab for one model shape and workload; ``mha_*`` is the same model with g = h."""

    shape: ModelShape
    seq_len: int
    batch: int
    bytes_per_value: int
    layer_params: dict[str, int]
    model_params: int
    mha_model_params: int
    kv_per_token: int
    kv_per_sequence: int
    kv_batch: int
    mha_kv_batch: int
    flops: LayerFlops  # one layer, one sequence of seq_len tokens

    @property
    def kv_ratio(self) -> float:
        """KV cache as a fraction of the MHA model's: g / h."""
        return self.kv_batch / self.mha_kv_batch


def cost_report(shape: ModelShape, *, seq_len: int, batch: int = 1, bytes_per_value: int = 2) -> CostReport:
    """All figures for a model shape: parameters, KV cache, FLOPs (LabError for impossible input)."""
    mha = shape.with_kv_heads(shape.n_heads)
    layer = shape.layer_params()
    return CostReport(
        shape=shape, seq_len=seq_len, batch=batch, bytes_per_value=bytes_per_value,
        layer_params=layer,
        model_params=shape.n_layers * layer["total"],
        mha_model_params=shape.n_layers * mha.layer_params()["total"],
        kv_per_token=shape.kv_bytes(seq_len=1, bytes_per_value=bytes_per_value),
        kv_per_sequence=shape.kv_bytes(seq_len=seq_len, bytes_per_value=bytes_per_value),
        kv_batch=shape.kv_bytes(seq_len=seq_len, batch=batch, bytes_per_value=bytes_per_value),
        mha_kv_batch=mha.kv_bytes(seq_len=seq_len, batch=batch, bytes_per_value=bytes_per_value),
        flops=shape.layer_flops(seq_len=seq_len),
    )


@dataclass(frozen=True)
class HeadSplit:
    """One way to cut a fixed d_model into heads, and what it costs per layer."""

    n_heads: int
    d_head: int
    params: int
    flops_per_token: int


def heads_sweep(d_model: int, *, seq_len: int, bias: bool = False) -> list[HeadSplit]:
    """Every h dividing d_model (MHA, d_head = d_model / h): parameters and FLOPs per token stay the same."""
    out = []
    for h in divisors(d_model):
        flops = attention_flops(d_model, h, seq_len=seq_len).per_token().total
        out.append(HeadSplit(h, d_model // h, param_counts(d_model, h, bias=bias)["total"], flops))
    return out


def seq_grid(seq_len: int, points: int = 8) -> list[int]:
    """``points`` evenly spaced sequence lengths ending at seq_len (at least 1 each, no repeats)."""
    return sorted({max(1, round(seq_len * k / points)) for k in range(1, points + 1)})


def kv_family(shape: ModelShape) -> list[int]:
    """K/V head counts to compare for this model: MHA (h), a GQA (the model's own, else the divisor
    of h nearest 8) and MQA (1); GQA is left out when h has no divisor strictly between 1 and h."""
    h = shape.n_heads
    inner = [g for g in divisors(h) if 1 < g < h]
    family = [h]
    if inner:
        family.append(shape.n_kv_heads if shape.n_kv_heads in inner
                      else min(inner, key=lambda g: (abs(g - GQA_TYPICAL_KV_HEADS), g)))
    if h > 1:
        family.append(1)
    return family


@dataclass(frozen=True)
class KvPoint:
    """KV-cache bytes of one member of the MHA/GQA/MQA family at one sequence length."""

    kind: str
    n_kv_heads: int
    seq_len: int
    bytes: int


def kv_curves(shape: ModelShape, seq_lens: list[int], *, batch: int = 1, bytes_per_value: int = 2) -> list[KvPoint]:
    """KV cache against sequence length for MHA, GQA and MQA versions of the same model."""
    return [
        KvPoint(attention_kind(shape.n_heads, g), g, n,
                shape.with_kv_heads(g).kv_bytes(seq_len=n, batch=batch, bytes_per_value=bytes_per_value))
        for g in kv_family(shape) for n in seq_lens
    ]


@dataclass(frozen=True)
class FlopsPoint:
    """FLOPs per token of one layer at one sequence length, split into projections and attention."""

    seq_len: int
    projections: int
    attention: int


def flops_curve(shape: ModelShape, seq_lens: list[int]) -> list[FlopsPoint]:
    """Per-token FLOPs as the sequence grows: projections stay flat, attention grows like n."""
    out = []
    for n in seq_lens:
        f = shape.layer_flops(seq_len=n).per_token()
        out.append(FlopsPoint(n, f.projections, f.attention))
    return out


# ---------------------------------------------------------------------------------------------
# The whole model: attention plus everything around it, to set the KV cache against the weights.


@dataclass(frozen=True)
class Body:
    """What a model has besides its self-attention, from its published config (for the whole-model count).

    Every layer has attention, a feed-forward block and ``norms_per_layer`` normalisations; an encoder–decoder
    adds ``decoder_layers`` layers with a second (cross-)attention and one more norm each.
    """

    vocab: int
    d_ff: int
    gated_ffn: bool = False       # SwiGLU (Llama, Mistral): three d_model × d_ff matrices instead of two
    ffn_bias: bool = False
    norm_bias: bool = True        # LayerNorm: a gain and a bias per feature; RMSNorm (Llama): a gain only
    norms_per_layer: int = 2      # Falcon-7B's parallel attention/FFN block has one
    final_norm: bool = False      # one more norm after the last layer (GPT-2, Llama, ...)
    positions: int = 0            # learned position embeddings (GPT-2, BERT); 0 for sinusoidal or rotary
    tied_output: bool = True      # the output layer reuses the token embedding matrix
    decoder_layers: int = 0       # encoder–decoder: decoder layers (self- and cross-attention)
    extra: int = 0                # parameters outside this scheme, named where the preset is defined

    def ffn_params(self, d_model: int) -> int:
        """One feed-forward block: d_model → d_ff → d_model (SwiGLU: two matrices in, one out)."""
        weights = (3 if self.gated_ffn else 2) * d_model * self.d_ff
        return weights + ((self.d_ff + d_model) if self.ffn_bias else 0)

    def norm_params(self, d_model: int) -> int:
        """One LayerNorm (gain and bias) or RMSNorm (gain)."""
        return d_model * (2 if self.norm_bias else 1)


def model_params(shape: ModelShape, body: Body) -> int:
    """All parameters of a model: attention, FFN and norms of every layer, embeddings, output layer, extras.

    Parameters shared between places (tied embeddings) are counted once, as ``torch``'s ``parameters()`` does.
    """
    attn, ffn, norm = shape.layer_params()["total"], body.ffn_params(shape.d_model), body.norm_params(shape.d_model)
    layers = shape.n_layers * (attn + ffn + body.norms_per_layer * norm)
    decoder = body.decoder_layers * (2 * attn + ffn + (body.norms_per_layer + 1) * norm)
    embeddings = (body.vocab + body.positions) * shape.d_model
    output = 0 if body.tied_output else body.vocab * shape.d_model
    final = norm * (1 + (body.decoder_layers > 0)) if body.final_norm else 0
    return layers + decoder + embeddings + output + final + body.extra


def kv_crossover_tokens(shape: ModelShape, weight_params: int) -> int:
    """Tokens in the cache (batch × sequence length) at which the KV cache first holds as many values as the
    model has weights: the smallest T with cache(T) ≥ weights. Both in the same value type, so bytes cancel."""
    if weight_params < 1:
        raise LabError("count_positive", name="weights", value=weight_params)
    per_token = shape.kv_bytes(seq_len=1, bytes_per_value=1)
    return -(-weight_params // per_token)


@dataclass(frozen=True)
class CacheVsWeights:
    """The KV cache of a workload set against all of a model's weights (both in one value type)."""

    params: int
    weight_bytes: int
    cache_bytes: int
    tokens: int             # batch × sequence length: the tokens in the cache now
    crossover_tokens: int   # tokens at which the cache first reaches the weights

    @property
    def share(self) -> float:
        """Cache ÷ weights now (1.0 at the crossover)."""
        return self.cache_bytes / self.weight_bytes


def cache_vs_weights(shape: ModelShape, body: Body, *, seq_len: int, batch: int = 1,
                     bytes_per_value: int = 2) -> CacheVsWeights:
    """Whether the cache or the weights is the larger memory cost, and at how many tokens that flips."""
    params = model_params(shape, body)
    return CacheVsWeights(
        params=params, weight_bytes=params * bytes_per_value,
        cache_bytes=shape.kv_bytes(seq_len=seq_len, batch=batch, bytes_per_value=bytes_per_value),
        tokens=seq_len * batch, crossover_tokens=kv_crossover_tokens(shape, params),
    )

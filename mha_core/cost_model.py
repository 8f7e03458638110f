"""The cost lab's model: a whole model's attention (ModelShape), its cost report, the curves the lab draws, and
the KV cache set against the weights. Built on the one-layer formulas of mha_core.counts."""

from __future__ import annotations

from dataclasses import dataclass

from mha_core.counts import (
    LayerFlops,
    attention_flops,
    attention_kind,
    divisors,
    kv_cache_bytes,
    param_counts,
    resolve_layer,
)
from mha_core.errors import LabError

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
        resolve_layer(self.d_model, self.n_heads, self.n_kv_heads, self.d_head)
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

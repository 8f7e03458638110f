"""Counts checked against independent sources: torch modules' numel(), real K/V tensors' nbytes,
torch's own FLOP counter, and published figures."""

from __future__ import annotations

from fractions import Fraction

import pytest
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from mha_core.cost_model import (
    Body,
    ModelShape,
    cache_vs_weights,
    cost_report,
    flops_curve,
    heads_sweep,
    kv_crossover_tokens,
    kv_curves,
    kv_family,
    model_params,
    seq_grid,
)
from mha_core.counts import FLOPS_PER_MAC, attention_flops, attention_kind, divisors, kv_cache_bytes, param_counts
from mha_core.errors import LabError
from mha_core.units import format_bytes, format_flops, format_params


class GQA(nn.Module):
    """Grouped-query attention from plain nn.Linear layers and explicit matmuls (torch's view of the shapes)."""

    def __init__(self, d_model: int, n_heads: int, n_kv_heads: int, d_head: int, bias: bool) -> None:
        super().__init__()
        self.h, self.g, self.d = n_heads, n_kv_heads, d_head
        self.q_proj = nn.Linear(d_model, n_heads * d_head, bias=bias)
        self.k_proj = nn.Linear(d_model, n_kv_heads * d_head, bias=bias)
        self.v_proj = nn.Linear(d_model, n_kv_heads * d_head, bias=bias)
        self.o_proj = nn.Linear(n_heads * d_head, d_model, bias=bias)

    def kv(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The K and V a cache would keep: (batch, g, n, d_head) each."""
        b, n, _ = x.shape
        k = self.k_proj(x).view(b, n, self.g, self.d).transpose(1, 2)
        v = self.v_proj(x).view(b, n, self.g, self.d).transpose(1, 2)
        return k, v

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        q = self.q_proj(x).view(b, n, self.h, self.d).transpose(1, 2)
        k, v = self.kv(x)
        k = k.repeat_interleave(self.h // self.g, dim=1)
        v = v.repeat_interleave(self.h // self.g, dim=1)
        w = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / self.d**0.5, dim=-1)
        out = torch.matmul(w, v).transpose(1, 2).reshape(b, n, self.h * self.d)
        return self.o_proj(out)


def numel(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


# ---- parameters ---------------------------------------------------------------------------------

@pytest.mark.parametrize("d_model, n_heads", [(64, 1), (64, 8), (512, 8), (768, 12), (1024, 16), (96, 3)])
@pytest.mark.parametrize("bias", [False, True])
def test_params_match_torch_multihead_attention(d_model: int, n_heads: int, bias: bool) -> None:
    mha = nn.MultiheadAttention(d_model, n_heads, bias=bias)
    c = param_counts(d_model, n_heads, bias=bias)
    assert c["total"] == numel(mha)
    in_proj = mha.in_proj_weight.numel() + (mha.in_proj_bias.numel() if bias else 0)
    assert c["q"] + c["k"] + c["v"] == in_proj
    assert c["o"] == numel(mha.out_proj)


@pytest.mark.parametrize("d_model, n_heads, n_kv_heads, d_head", [
    (64, 8, 8, 8), (64, 8, 2, 8), (64, 8, 1, 8), (96, 6, 3, 16), (40, 4, 2, 12), (128, 32, 8, 4),
])
@pytest.mark.parametrize("bias", [False, True])
def test_params_match_gqa_built_from_linear(d_model: int, n_heads: int, n_kv_heads: int, d_head: int,
                                            bias: bool) -> None:
    m = GQA(d_model, n_heads, n_kv_heads, d_head, bias)
    c = param_counts(d_model, n_heads, n_kv_heads=n_kv_heads, d_head=d_head, bias=bias)
    assert (c["q"], c["k"], c["v"], c["o"]) == tuple(numel(p) for p in (m.q_proj, m.k_proj, m.v_proj, m.o_proj))
    assert c["total"] == numel(m)
    shapes = ModelShape(d_model, n_heads, n_kv_heads, d_head, bias=bias).matrix_shapes()
    # torch keeps W as (out, in) and computes x @ W.T; the lab writes X @ W with W as (in, out)
    assert shapes == {k: tuple(getattr(m, f"{k}_proj").weight.T.shape) for k in "qkvo"}


def test_splitting_into_heads_adds_no_parameters() -> None:
    """切分不增量: every h that divides d_model gives torch the same number of parameters."""
    sizes = {numel(nn.MultiheadAttention(96, h, bias=True)) for h in divisors(96)}
    assert len(sizes) == 1
    assert {s.params for s in heads_sweep(96, seq_len=7, bias=True)} == sizes


def test_heads_sweep_lists_every_split() -> None:
    sweep = heads_sweep(12, seq_len=5)
    assert [(s.n_heads, s.d_head) for s in sweep] == [(1, 12), (2, 6), (3, 4), (4, 3), (6, 2), (12, 1)]
    assert len({s.flops_per_token for s in sweep}) == 1


@pytest.mark.parametrize("call", [
    lambda: param_counts(512, 7),                    # h does not divide d_model
    lambda: param_counts(512, 8, n_kv_heads=3),      # g does not divide h
    lambda: param_counts(512, 8, n_kv_heads=0),
    lambda: param_counts(0, 8),
    lambda: param_counts(512, 0),
    lambda: param_counts(512, 8, d_head=0),
    lambda: attention_flops(512, 8, seq_len=0),
    lambda: attention_flops(512, 8, n_kv_heads=3, seq_len=4),
    lambda: attention_flops(512, 8, seq_len=4, batch=0),
    lambda: kv_cache_bytes(n_layers=0, n_kv_heads=1, d_head=1, seq_len=1),
    lambda: kv_cache_bytes(n_layers=1, n_kv_heads=1, d_head=1, seq_len=-3),
    lambda: ModelShape(512, 8, 3, 64),
    lambda: ModelShape(512, 8, 8, 64, n_layers=0),
    lambda: attention_kind(8, 3),
    lambda: divisors(0),
])
def test_impossible_shapes_raise_value_error(call) -> None:
    with pytest.raises(ValueError):
        call()


def test_lab_errors_carry_a_key_for_translation() -> None:
    with pytest.raises(LabError) as err:
        param_counts(512, 8, n_kv_heads=3)
    assert err.value.key == "kv_divides" and err.value.params == {"h": 8, "g": 3}


# ---- KV cache -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype, nbytes", [(torch.float32, 4), (torch.bfloat16, 2), (torch.float16, 2),
                                           (torch.int8, 1)])
@pytest.mark.parametrize("n_heads, n_kv_heads", [(8, 8), (8, 2), (8, 1)])
def test_kv_cache_matches_real_tensors(dtype: torch.dtype, nbytes: int, n_heads: int, n_kv_heads: int) -> None:
    n_layers, d_model, d_head, seq_len, batch = 3, 32, 4, 11, 2
    layers = [GQA(d_model, n_heads, n_kv_heads, d_head, bias=False) for _ in range(n_layers)]
    x = torch.randn(batch, seq_len, d_model)
    with torch.no_grad():
        cache = [t.to(dtype) for layer in layers for t in layer.kv(x)]
    got = kv_cache_bytes(n_layers=n_layers, n_kv_heads=n_kv_heads, d_head=d_head, seq_len=seq_len, batch=batch,
                         bytes_per_value=nbytes)
    assert got == sum(t.nbytes for t in cache)


def test_kv_cache_of_a_large_model_matches_meta_tensors() -> None:
    """Llama-2-70B-sized cache, as shape-only tensors (no memory allocated)."""
    k = torch.empty(4, 8, 4096, 128, dtype=torch.bfloat16, device="meta")
    assert kv_cache_bytes(n_layers=80, n_kv_heads=8, d_head=128, seq_len=4096, batch=4) == 2 * 80 * k.nbytes


def test_kv_cache_per_token_matches_the_vllm_paper() -> None:
    """Kwon et al. 2023 (vLLM), §3: OPT-13B needs 800 KB of KV cache per token in fp16."""
    assert kv_cache_bytes(n_layers=40, n_kv_heads=40, d_head=128, seq_len=1) == 800 * 1024


def test_kv_curves_compare_mha_gqa_mqa_of_one_model() -> None:
    shape = ModelShape(4096, 32, 8, 128, 32)
    grid = seq_grid(4096)
    assert grid[-1] == 4096 and grid == sorted(set(grid))
    pts = kv_curves(shape, grid)
    assert {(p.kind, p.n_kv_heads) for p in pts} == {("MHA", 32), ("GQA", 8), ("MQA", 1)}
    at_end = {p.kind: p.bytes for p in pts if p.seq_len == 4096}
    assert at_end["MHA"] == 4 * at_end["GQA"] == 32 * at_end["MQA"]


@pytest.mark.parametrize("n_heads, n_kv_heads, family", [
    (32, 32, [32, 8, 1]), (32, 4, [32, 4, 1]), (12, 12, [12, 6, 1]), (71, 1, [71, 1]), (1, 1, [1]), (2, 2, [2, 1]),
])
def test_kv_family(n_heads: int, n_kv_heads: int, family: list[int]) -> None:
    assert kv_family(ModelShape(n_heads * 4, n_heads, n_kv_heads, 4)) == family


# ---- FLOPs --------------------------------------------------------------------------------------

def counted_flops(module: nn.Module, x: torch.Tensor, **kwargs) -> dict[str, int]:
    """Total FLOPs and those of each named submodule, from torch's FlopCounterMode."""
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        module(x, **kwargs)
    per_module = {name: sum(ops.values()) for name, ops in counter.get_flop_counts().items()}
    return {"total": counter.get_total_flops(), **per_module}


@pytest.mark.parametrize("d_model, n_heads, n_kv_heads, d_head, seq_len, batch", [
    (64, 8, 8, 8, 10, 1), (64, 8, 2, 8, 10, 3), (64, 8, 1, 8, 1, 2), (96, 6, 3, 16, 17, 1), (40, 4, 2, 12, 5, 2),
])
@pytest.mark.parametrize("bias", [False, True])
def test_flops_match_torch_flop_counter(d_model: int, n_heads: int, n_kv_heads: int, d_head: int, seq_len: int,
                                        batch: int, bias: bool) -> None:
    m = GQA(d_model, n_heads, n_kv_heads, d_head, bias)
    counted = counted_flops(m, torch.randn(batch, seq_len, d_model))
    f = attention_flops(d_model, n_heads, n_kv_heads=n_kv_heads, d_head=d_head, seq_len=seq_len, batch=batch)
    name = type(m).__name__
    assert f.q == counted[f"{name}.q_proj"]
    assert f.k == counted[f"{name}.k_proj"]
    assert f.v == counted[f"{name}.v_proj"]
    assert f.o == counted[f"{name}.o_proj"]
    assert f.attention == counted["total"] - sum(counted[f"{name}.{p}_proj"] for p in "qkvo")
    assert f.total == counted["total"]


@pytest.mark.parametrize("d_model, n_heads, seq_len", [(64, 4, 9), (48, 12, 16), (32, 1, 3)])
def test_flops_match_torch_multihead_attention(d_model: int, n_heads: int, seq_len: int) -> None:
    mha = nn.MultiheadAttention(d_model, n_heads, bias=True, batch_first=True)
    x = torch.randn(1, seq_len, d_model)
    counted = counted_flops(mha, x, key=x, value=x, need_weights=True)
    assert attention_flops(d_model, n_heads, seq_len=seq_len).total == counted["total"]


def test_flop_convention_one_multiply_add_is_two_flops() -> None:
    """A single 1×1 head on one token: Q, K, V, O, QKᵀ and weights·V are one multiply-add each."""
    f = attention_flops(1, 1, seq_len=1)
    assert FLOPS_PER_MAC == 2
    assert (f.q, f.k, f.v, f.o, f.scores, f.mix) == (2, 2, 2, 2, 2, 2)


def test_attention_grows_like_n_squared_and_projections_like_n() -> None:
    short, long = attention_flops(512, 8, seq_len=100), attention_flops(512, 8, seq_len=300)
    assert long.projections == 3 * short.projections
    assert long.attention == 9 * short.attention
    assert long.per_token().projections == short.per_token().projections
    assert long.per_token().attention == 3 * short.per_token().attention


def test_per_token_times_tokens_is_per_sequence() -> None:
    f = attention_flops(4544, 71, n_kv_heads=1, seq_len=2048, batch=3)
    tok = f.per_token()
    assert tok.tokens == 1 and f.tokens == 2048 * 3
    assert tok.total * f.tokens == f.total
    assert (tok.q, tok.k, tok.v, tok.o) == (2 * 4544 * 4544, 2 * 4544 * 64, 2 * 4544 * 64, 2 * 4544 * 4544)


def test_gqa_shrinks_k_and_v_projections_only() -> None:
    mha = attention_flops(4096, 32, seq_len=512)
    gqa = attention_flops(4096, 32, n_kv_heads=8, seq_len=512)
    assert (gqa.q, gqa.o, gqa.scores, gqa.mix) == (mha.q, mha.o, mha.scores, mha.mix)
    assert gqa.k * 4 == mha.k and gqa.v * 4 == mha.v


def test_flops_curve_splits_projections_and_attention() -> None:
    shape = ModelShape(512, 8, 8, 64)
    pts = flops_curve(shape, [128, 256])
    assert pts[0].projections == pts[1].projections
    assert pts[1].attention == 2 * pts[0].attention


# ---- report, divisors, kinds --------------------------------------------------------------------

def test_cost_report_adds_up() -> None:
    shape = ModelShape(4096, 32, 8, 128, 32)
    r = cost_report(shape, seq_len=1000, batch=3, bytes_per_value=1)
    with torch.device("meta"):  # shapes only, no memory
        layer = GQA(4096, 32, 8, 128, bias=False)
    assert r.model_params == 32 * numel(layer)
    assert r.kv_batch == 3 * r.kv_per_sequence == 3000 * r.kv_per_token
    assert Fraction(r.kv_batch, r.mha_kv_batch) == Fraction(8, 32)
    assert r.kv_ratio == 0.25
    assert r.flops.tokens == 1000


@pytest.mark.parametrize("n", [1, 2, 12, 36, 71, 97, 512, 4544, 5040])
def test_divisors_match_brute_force(n: int) -> None:
    assert divisors(n) == [d for d in range(1, n + 1) if n % d == 0]


@pytest.mark.parametrize("h, g, kind", [(32, 32, "MHA"), (32, 8, "GQA"), (32, 1, "MQA"), (1, 1, "MHA"), (2, 1, "MQA")])
def test_attention_kind(h: int, g: int, kind: str) -> None:
    assert attention_kind(h, g) == kind == ModelShape(h, h, g, 1).kind


# ---- units --------------------------------------------------------------------------------------

@pytest.mark.parametrize("n, text", [
    (0, "0"), (512, "512"), (999, "999"), (1000, "1.00 K"), (2_362_368, "2.36 M"), (28_348_416, "28.3 M"),
    (6_738_415_616, "6.74 B"), (999_700_000, "1.00 B"), (70_000_000_000, "70.0 B"),
])
def test_format_params(n: int, text: str) -> None:
    assert format_params(n) == text


@pytest.mark.parametrize("n, text", [
    (0, "0 B"), (100, "100 B"), (1000, "0.977 KiB"), (1024, "1.00 KiB"), (524_288, "512 KiB"),
    (819_200, "800 KiB"), (1 << 30, "1.00 GiB"), (3 << 40, "3.00 TiB"), (1_610_612_736, "1.50 GiB"),
])
def test_format_bytes(n: int, text: str) -> None:
    assert format_bytes(n) == text


@pytest.mark.parametrize("n, text", [(640, "640 FLOP"), (3_200_000_000, "3.20 GFLOP"), (57_200_000_000_000,
                                                                                        "57.2 TFLOP")])
def test_format_flops(n: int, text: str) -> None:
    assert format_flops(n) == text


# ---- the whole model against its KV cache -------------------------------------------------------

def _cache_bytes_torch(shape: ModelShape, tokens: int, dtype: torch.dtype) -> int:
    """What a cache of ``tokens`` tokens takes: one (K, V) pair of (kv_heads, tokens, d_head) per layer."""
    t = torch.empty((shape.n_layers, 2, shape.n_kv_heads, tokens, shape.d_head), dtype=dtype, device="meta")
    return t.numel() * t.element_size()


@pytest.mark.parametrize("shape, params", [
    (ModelShape(8192, 64, 8, 128, 80), 68_976_648_192),      # Llama-2-70B, total from its model card
    (ModelShape(4096, 32, 32, 128, 32), 6_738_415_616),      # Llama-2-7B
    (ModelShape(768, 12, 12, 64, 12, True), 124_439_808),    # GPT-2 small
    (ModelShape(4544, 71, 1, 64, 32), 6_921_720_704),        # Falcon-7B (MQA)
    (ModelShape(64, 8, 2, 8, 2), 1_000),                     # a tiny model: the cache wins after a few tokens
])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int8])
def test_crossover_is_where_the_cache_reaches_the_weights(shape: ModelShape, params: int, dtype: torch.dtype) -> None:
    """Independent check with torch tensors' sizes: at the crossover the cache is within one token of the weights
    (not below them), one token earlier it is below them, in every value type."""
    tokens = kv_crossover_tokens(shape, params)
    weights = params * torch.empty((), dtype=dtype).element_size()
    at, before = _cache_bytes_torch(shape, tokens, dtype), _cache_bytes_torch(shape, tokens - 1, dtype)
    assert before < weights <= at  # within one token's worth of cache, and not below the weights


def test_crossover_of_llama2_70b_is_far_beyond_its_context() -> None:
    """The issue's numbers: at 4,096 tokens the cache is 1.25 GiB against ~128 GiB (~138 GB) of bf16 weights."""
    shape = ModelShape(8192, 64, 8, 128, 80)
    body = Body(vocab=32000, d_ff=28672, gated_ffn=True, norm_bias=False, final_norm=True, tied_output=False)
    r = cache_vs_weights(shape, body, seq_len=4096, batch=1)
    assert r.cache_bytes == 5 * 2**28 and r.params == 68_976_648_192
    assert r.share < 0.01 and r.tokens == 4096
    assert r.crossover_tokens == 421_001 > 100 * 4096
    assert cache_vs_weights(shape, body, seq_len=4096, batch=128).share > 1  # 128 such sequences: the cache wins


def test_gqa_moves_the_crossover_out_by_h_over_g() -> None:
    mha, gqa = ModelShape(4096, 32, 32, 128, 32), ModelShape(4096, 32, 4, 128, 32)
    params = 10**10
    assert kv_crossover_tokens(gqa, params) == -(-params // (2 * 32 * 4 * 128))
    assert abs(kv_crossover_tokens(gqa, params) - 8 * kv_crossover_tokens(mha, params)) <= 8


def test_model_params_match_a_torch_decoder() -> None:
    """A small pre-norm decoder built from torch modules: embeddings, learned positions, layers, final norm, tied."""
    d, h, ff, vocab, n_pos, layers = 64, 4, 256, 100, 32, 3
    shape = ModelShape(d, h, h, d // h, layers, True)
    body = Body(vocab=vocab, d_ff=ff, ffn_bias=True, positions=n_pos, final_norm=True)
    block = [nn.MultiheadAttention(d, h), nn.Linear(d, ff), nn.Linear(ff, d), nn.LayerNorm(d), nn.LayerNorm(d)]
    total = layers * sum(numel(m) for m in block) + numel(nn.Embedding(vocab, d)) + numel(nn.Embedding(n_pos, d))
    assert model_params(shape, body) == total + numel(nn.LayerNorm(d))
    untied = Body(vocab=vocab, d_ff=ff, ffn_bias=True, positions=n_pos, final_norm=True, tied_output=False)
    assert model_params(shape, untied) == model_params(shape, body) + vocab * d


def test_crossover_needs_weights() -> None:
    with pytest.raises(LabError):
        kv_crossover_tokens(ModelShape(64, 8, 8, 8), 0)


def test_the_layer_formulas_and_the_cost_lab_model_live_apart():
    """counts.py holds one layer's formulas; the cost lab's whole-model figures and curves are mha_core.cost_model
    (failed before: counts.py held both)."""
    from mha_core import cost_model, counts

    assert not {"ModelShape", "cost_report", "kv_curves", "flops_curve", "Body"} & set(vars(counts))
    assert cost_model.ModelShape(512, 8, 8, 64, 6).layer_params() == counts.param_counts(512, 8)

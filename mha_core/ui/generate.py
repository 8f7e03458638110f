"""The generation page's Streamlit layer: its session keys, the three shipped models (MHA, GQA, MQA) cached once
per server, each model's decoding state cached by the tokens it has read (a step computes one new row from the
previous state), and the step / reset callbacks.

The demo itself (prompt and tokens written) is one value in session state: losing it only restarts the demo.
Only the generation page imports it (its ``KEPT`` is registered there, state.keep).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from mha_core import toy
from mha_core.counts import attention_kind, kv_cache_bytes, param_counts
from mha_core.errors import LabError
from mha_core.settings import GEN_SEED, GEN_TEMPERATURE, GEN_TOP_K, GENERATION
from mha_core.toy_config import DEFAULT_PROMPT
from mha_core.ui import numbers
from mha_core.ui.i18n import t
from mha_core.units import head_name

TAB_KEY, DEMO_KEY = "gen_tab", "gen_demo"
PROMPT_KEY = "gen_prompt"
TEMP_KEY, TOPK_KEY, SEED_KEY = GEN_TEMPERATURE.key, GEN_TOP_K.key, GEN_SEED.key  # declared in mha_core.settings
VIEW_KEY = "gen_view"                                          # whose newest query is drawn (variant index)
SHARE_KEY, LAYER_KEY, EXAMPLE_KEY = "gen_share", "gen_layer", "gen_example"  # the sharing tab's model, layer, sequence
TOP_KS = GEN_TOP_K.options  # the last: no cut
NEXT_TOP = 5  # next tokens drawn as bars under each cache
N_VARIANTS = len(toy.generation.VARIANTS)  # MHA, GQA, MQA
MAX_DECODED = 1024  # decoding states kept per server (each a few kB)
GROUP_COLOURS = ("blue", "orange", "green", "violet")  # Streamlit's names nearest to the charts' Okabe–Ito colours

KEPT: dict[str, object] = {  # values that survive a visit to another page (state.keep)
    TAB_KEY: None, DEMO_KEY: None,
    PROMPT_KEY: DEFAULT_PROMPT, **{s.key: s.default for s in GENERATION},
    VIEW_KEY: 1, SHARE_KEY: 1, LAYER_KEY: 0, EXAMPLE_KEY: 0,
}


# --- the shipped models, cached once per server -----------------------------------------------------

@st.cache_resource(show_spinner=False)
def model(variant: int) -> toy.ToyTransformer:
    """Shipped model ``variant`` of toy.generation.VARIANTS (LabError, uncached, if its file is missing)."""
    return toy.load_model(toy.generation.variant_weights(toy.generation.VARIANTS[variant]))


def models() -> list[toy.ToyTransformer]:
    """MHA, GQA, MQA."""
    return [model(i) for i in range(N_VARIANTS)]


def kind(variant: int) -> str:
    """"MHA", "GQA" or "MQA" (mha_core.counts' name for the model's shape)."""
    cfg = model(variant).config
    return attention_kind(cfg.n_heads, cfg.kv_heads)


@st.cache_resource(max_entries=MAX_DECODED, show_spinner=False)
def decoded(variant: int, tokens: tuple[int, ...]) -> toy.generation.Decoded:
    """Model ``variant`` after reading ``tokens``: the state for ``tokens[:-1]`` (cached) extended by one token,
    so a step costs one row, as in a real decoder. Shared by every session (nothing in it is ever modified)."""
    before = decoded(variant, tokens[:-1]) if len(tokens) > 1 else None
    return toy.generation.extend(model(variant), before, tokens[-1])


@st.cache_data(show_spinner=False)
def held_out(variant: int) -> tuple[toy.RepeatMetrics, toy.ScoreTable]:
    """Loss and accuracy on the repeated part, and every head's scores, on the 256 held-out sequences."""
    m = model(variant)
    batch = toy.held_out_batch(m.config)
    return toy.repeat_metrics(m, batch), toy.score_model(m, batch)


def attention_params(variant: int) -> int:
    """All layers' W_Q, W_K, W_V, W_O (mha_core.counts)."""
    cfg = model(variant).config
    return cfg.n_layers * param_counts(cfg.d_model, cfg.n_heads, n_kv_heads=cfg.kv_heads)["total"]


def full_cache_bytes(variant: int) -> int:
    """The cache when the context is full (mha_core.counts)."""
    cfg = model(variant).config
    return kv_cache_bytes(n_layers=cfg.n_layers, n_kv_heads=cfg.kv_heads, d_head=cfg.d_head, seq_len=cfg.n_ctx,
                          bytes_per_value=toy.generation.BYTES_PER_VALUE)


@st.cache_data(show_spinner=False)
def example(seed: int) -> np.ndarray:
    """The sharing tab's sequence: distinct tokens with one segment repeated, like the training data."""
    return toy.generate_sequence(seed)


# --- the demo ---------------------------------------------------------------------------------------

def demo(prompt: tuple[int, ...]) -> toy.generation.Demo:
    """The demo in session state if it belongs to this prompt, else a fresh one (nothing written yet)."""
    d = st.session_state.get(DEMO_KEY)
    if isinstance(d, toy.generation.Demo) and d.prompt == prompt and len(d.written) == N_VARIANTS:
        return d
    return toy.generation.Demo(prompt, ((),) * N_VARIANTS)


def prompt() -> tuple[int, ...]:
    """The typed prompt as ids (LabError with the heads page's messages if it cannot be read)."""
    return toy.generation.prompt_ids(st.session_state.get(PROMPT_KEY, DEFAULT_PROMPT), model(0).config.n_ctx)


def clean_controls() -> list[str]:
    """Top of the page, before its widgets: a forged temperature, top-k or seed clamped as a link's values are;
    returns the catalog keys of the controls' labels that had to change (for a notice)."""
    return [s.label for s in numbers.clean_state(GENERATION)]


def temperature() -> float:
    """The temperature, clamped (0: greedy)."""
    return float(numbers.value(GEN_TEMPERATURE))


def top_k() -> int | None:
    """The top-k setting, snapped to its options (None: every token)."""
    k = int(numbers.value(GEN_TOP_K))
    return None if k >= TOP_KS[-1] else k


def seed() -> int:
    """The seed, clamped to its range."""
    return int(numbers.value(GEN_SEED))


def next_probs(d: toy.generation.Demo, variant: int) -> np.ndarray:
    """The distribution the next step draws variant ``variant``'s token from (temperature and top-k applied)."""
    probs, _ = toy.generation.draw(decoded(variant, d.tokens(variant)).logits, temperature(), top_k(), 0)
    return probs


def step(d: toy.generation.Demo) -> toy.generation.Demo:
    """Every model draws its next token (the same random number for all: step_seed) and reads it."""
    step_seed = toy.generation.step_seed(seed(), d.steps)
    drawn = tuple(toy.generation.draw(decoded(i, d.tokens(i)).logits, temperature(), top_k(), step_seed)[1]
                  for i in range(N_VARIANTS))
    after = d.then(drawn)
    for i in range(N_VARIANTS):
        decoded(i, after.tokens(i))  # read the drawn token now: the page draws the new state
    return after


def full(d: toy.generation.Demo) -> bool:
    """No position left for another token."""
    return len(d.tokens(0)) >= model(0).config.n_ctx


def _advance(steps: int | None) -> None:
    try:
        d = demo(prompt())
    except LabError:
        return  # the page shows why; the buttons do nothing
    while not full(d) and (steps is None or steps > 0):
        d = step(d)
        steps = None if steps is None else steps - 1
    st.session_state[DEMO_KEY] = d


def on_next() -> None:
    """Next step: one token per model."""
    _advance(1)


def on_run_all() -> None:
    """To the end of the context."""
    _advance(None)


def on_reset() -> None:
    """Back to the prompt."""
    st.session_state.pop(DEMO_KEY, None)


def on_example() -> None:
    """Another example sequence for the sharing tab."""
    st.session_state[EXAMPLE_KEY] = int(st.session_state.get(EXAMPLE_KEY, 0)) + 1


# --- labels -----------------------------------------------------------------------------------------

def variant_name(variant: int) -> str:
    """"GQA · g = 2"."""
    return t("generate.variant", kind=kind(variant), g=model(variant).config.kv_heads)


def kv_name(j: int) -> str:
    """One K/V head, the same in every language (the glossary's term is in the captions)."""
    return f"K/V{j}"


def kv_names(m: toy.ToyTransformer) -> tuple[str, ...]:
    """Every K/V head of ``m``."""
    return tuple(kv_name(j) for j in range(m.config.kv_heads))


def cache_row_names(m: toy.ToyTransformer) -> tuple[str, ...]:
    """One row of the cache picture per layer and K/V head: "L0 · K/V1"."""
    return tuple(f"L{la} · {kv_name(j)}" for la in range(m.config.n_layers) for j in range(m.config.kv_heads))


def query_groups(m: toy.ToyTransformer) -> tuple[int, ...]:
    """The K/V head each (layer, query head) row reads, layer by layer."""
    cfg = m.config
    return tuple(toy.generation.kv_group(h, cfg.n_heads, cfg.kv_heads) for _ in range(cfg.n_layers)
                 for h in range(cfg.n_heads))


def query_row_names(m: toy.ToyTransformer) -> tuple[str, ...]:
    """"L0·H3 → K/V1": a query head and the K/V head it reads."""
    cfg, groups = m.config, query_groups(m)
    return tuple(f"{head_name(la, h)} → {kv_name(groups[la * cfg.n_heads + h])}" for la in range(cfg.n_layers)
                 for h in range(cfg.n_heads))


def group_title(m: toy.ToyTransformer, j: int) -> str:
    """A K/V head and the query heads that share it, in the colour of its charts."""
    cfg = m.config
    heads = [f"H{h}" for h in range(cfg.n_heads) if toy.generation.kv_group(h, cfg.n_heads, cfg.kv_heads) == j]
    return t("generate.group_title", colour=GROUP_COLOURS[j % len(GROUP_COLOURS)], kv=kv_name(j),
             heads=t("generate.list_sep").join(heads))


def written_line(d: toy.generation.Demo, variant: int) -> str:
    """The prompt, then what the model wrote, the newest token in bold (symbols in code spans: nothing to escape)."""
    prompt = toy.format_sequence(np.asarray(d.prompt))
    written = d.written[variant]
    if not written:
        return f"`{prompt}`"
    older = f" `{toy.format_sequence(np.asarray(written[:-1]))}`" if len(written) > 1 else ""
    return f"`{prompt}` →{older} **`{toy.symbol(written[-1])}`**"


def vs_mha(m: toy.ToyTransformer, value: int, mha: int) -> str | None:
    """A cache's size against the MHA model's at the same length (None for the MHA model)."""
    cfg = m.config
    if value == mha:
        return None
    return t("generate.vs_mha", pct=f"{100 * (value - mha) / mha:+.0f}", g=cfg.kv_heads, h=cfg.n_heads)


def score_columns(m: toy.ToyTransformer, scores: toy.ScoreTable, layer: int) -> dict[str, list]:
    """One layer's heads: the K/V head each reads, its held-out label and its two telling scores."""
    cfg = m.config
    rows = [s for s in scores.heads if s.layer == layer]
    return {
        t("heads.col_head"): [head_name(s.layer, s.head) for s in rows],
        t("generate.kv_head"): [kv_name(toy.generation.kv_group(s.head, cfg.n_heads, cfg.kv_heads)) for s in rows],
        t("heads.col_label"): [t(f"heads.label_{s.label}") for s in rows],
        t("heads.score_previous_token"): [s.previous_token for s in rows],
        t("heads.score_induction"): [s.induction for s in rows],
    }

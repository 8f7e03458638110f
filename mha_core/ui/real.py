"""Streamlit bridges for the real-model page: the loaded model (cached per process), cached runs and tables."""

from __future__ import annotations

import re

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from mha_core import charts
from mha_core import minimal_pair as M
from mha_core import pretrained as P
from mha_core.errors import LabError
from mha_core.markdown import escape
from mha_core.ui import render
from mha_core.ui.i18n import t

LAYER_KEY, HEAD_KEY = "real_layer", "real_head"
PAIR_KEY, PAIR_LAYER_KEY, PAIR_HEAD_KEY = "real_pair", "real_pair_layer", "real_pair_head"
PAIR_FOR_KEY = "real_pair_for"   # (model, pair) the pair's head selectors were last set for


@st.cache_resource(max_entries=3, show_spinner=False)
def _load(name: str) -> P.Loaded:
    return P.load(name)


def load(name: str) -> P.Loaded | None:
    """The model the student named (cached; spinner on first load), or None after showing why not.

    The name is checked before anything touches the file system, and escaped wherever it lands in markdown.
    """
    try:
        name = P.check_name(name)
        with st.spinner(t("real.loading", name=escape(P.shown_name(name or P.PACKAGED))), show_time=True):
            return _load(name)
    except LabError as err:
        render.show_error(err)
        return None


@st.cache_data(max_entries=64, show_spinner=False)
def _run(_loaded: P.Loaded, name: str, sentence: str) -> P.Run:
    return P.run(_loaded, sentence)


def run(loaded: P.Loaded, sentence: str) -> P.Run:
    """The sentence through the model (cached per model and sentence)."""
    return _run(loaded, loaded.name, sentence)


@st.cache_data(max_entries=64, show_spinner=False)
def _stats(_r: P.Run, name: str, sentence: str) -> P.HeadStats:
    return P.head_stats(_r.attentions, _r.special, _r.punct)


def stats(loaded: P.Loaded, r: P.Run, sentence: str) -> P.HeadStats:
    """Every head's type scores for this sentence (cached)."""
    return _stats(r, loaded.name, sentence)


@st.cache_data(max_entries=32, show_spinner=False)
def _checks(_loaded: P.Loaded, _r: P.Run, name: str, sentence: str) -> list[P.LayerCheck]:
    return P.check_all(_loaded, _r)


def checks(loaded: P.Loaded, r: P.Run, sentence: str) -> list[P.LayerCheck]:
    """The core against every layer of the model (cached)."""
    return _checks(loaded, r, loaded.name, sentence)


@st.cache_data(max_entries=32, show_spinner=False)
def _importance(_loaded: P.Loaded, name: str, sentence: str) -> np.ndarray:
    return P.importance(_loaded, sentence)


def importance(loaded: P.Loaded, sentence: str) -> np.ndarray:
    """Per-head importance (1 − cosine), one batched forward, cached."""
    return _importance(loaded, loaded.name, sentence)


@st.cache_data(max_entries=256, show_spinner=False)
def _ablate(_loaded: P.Loaded, _base: P.Run, name: str, sentence: str, off: tuple[tuple[int, int], ...]) -> float:
    return P.ablate(_loaded, sentence, list(off), _base)


def ablate(loaded: P.Loaded, base: P.Run, sentence: str, off: list[tuple[int, int]]) -> float:
    """Cosine similarity with these heads off (cached)."""
    return _ablate(loaded, base, loaded.name, sentence, tuple(sorted(off)))


@st.cache_data(max_entries=16, show_spinner=False)
def _pair_sides(_loaded: P.Loaded, name: str, index: int) -> tuple[M.PairSide, M.PairSide]:
    pair = M.PAIRS[index]
    runs = [run(_loaded, s) for s in pair.sentences]
    return tuple(M.side(r.attentions, r.tokens, pair, i) for i, r in enumerate(runs))  # type: ignore[return-value]


def pair_sides(loaded: P.Loaded, index: int) -> tuple[M.PairSide, M.PairSide]:
    """Both sentences of minimal pair ``index`` through the model (cached); LabError if its words are missing."""
    return _pair_sides(loaded, loaded.name, index)


@st.cache_data(max_entries=16, show_spinner=False)
def _pair_census(_sides: tuple[M.PairSide, M.PairSide], name: str, index: int) -> M.PairCensus:
    return M.census(_sides)


def pair_census(loaded: P.Loaded, index: int, sides: tuple[M.PairSide, M.PairSide]) -> M.PairCensus:
    """Every head's verdict on the pair, counted (cached)."""
    return _pair_census(sides, loaded.name, index)


@st.cache_data(max_entries=16, show_spinner=False)
def _unknown_tokens(_loaded: P.Loaded, name: str, sentence: str) -> tuple[int, int]:
    return P.unknown_tokens(_loaded, sentence)


def unknown_tokens(loaded: P.Loaded, sentence: str) -> tuple[int, int]:
    """(unknown pieces, pieces) of a sentence for this model's vocabulary (cached)."""
    return _unknown_tokens(loaded, loaded.name, sentence)


def default_pair_head(loaded: P.Loaded, index: int, sides: tuple[M.PairSide, M.PairSide]) -> None:
    """On a new model or pair, open the head that looks most like a coreference head on the first sentence."""
    ss = st.session_state
    if ss.get(PAIR_FOR_KEY) != (loaded.name, index):
        ss[PAIR_LAYER_KEY], ss[PAIR_HEAD_KEY] = M.most_referent_like(sides)
        ss[PAIR_FOR_KEY] = (loaded.name, index)


def code_span(text: str) -> str:
    """``text`` as inline code even when it holds backticks (CommonMark: a longer fence, padded with spaces)."""
    if "`" not in text:
        return f"`{text}`"
    fence = "`" * (max(len(run) for run in re.findall("`+", text)) + 1)
    return f"{fence} {text} {fence}"


def head_name(layer: int, head: int) -> str:
    """"L2·H5" — short enough for a phone."""
    return f"L{layer}·H{head}"


def open_head(layer: int, head: int) -> None:
    """Show this head in the head view."""
    st.session_state[LAYER_KEY] = layer
    st.session_state[HEAD_KEY] = head


def _on_select(table_key: str, ranked: list[P.RankedHead]) -> None:
    rows = st.session_state[table_key].selection.rows
    if rows:
        open_head(ranked[rows[0]].layer, ranked[rows[0]].head)


def ranked_table(ranked: list[P.RankedHead], key: str, score_title: str) -> None:
    """Top heads; selecting a row opens that head in the head view."""
    df = pd.DataFrame({t("real.col_head"): [head_name(r.layer, r.head) for r in ranked],
                       score_title: [round(r.score, 3) for r in ranked]})
    st.dataframe(df, key=key, on_select=lambda: _on_select(key, ranked), selection_mode="single-row",
                 hide_index=True, width="stretch")


def score_map(score: np.ndarray, key: tuple, title: str, value_title: str) -> None:
    """An (L, H) score as a layer × head heatmap."""
    rows = [f"L{i}" for i in range(score.shape[0])]
    cols = [f"H{j}" for j in range(score.shape[1])]
    render.chart(lambda: charts.heatmap(score, rows, cols, title=title, row_title=t("real.layer"),
                                        col_title=t("real.head"), value_title=value_title,
                                        size=26 * len(rows)), *key)


def model_view(attn: np.ndarray, labels: list[str], titles: tuple[str, str, str, str, str]) -> alt.Chart:
    """Every layer × head as a small heatmap, in one chart that fits the container's width (tooltips per cell).

    ``titles``: (layer, head, query, key, weight).
    """
    n_layers, n_heads, n, _ = attn.shape
    step = n + 1  # one empty cell between heads and between layers
    layer, head, i, j = (a.ravel() for a in np.meshgrid(*(np.arange(s) for s in attn.shape), indexing="ij"))
    lab = np.asarray(labels, dtype=object)
    df = pd.DataFrame({"x": head * step + j, "y": layer * step + i, "layer": layer, "head": head,
                       "query": lab[i], "key": lab[j], "weight": np.round(attn.ravel(), 3)})
    df["x2"], df["y2"] = df["x"] + 1, df["y"] + 1
    lt, ht, qt, kt, wt = titles

    def axis(count: int, prefix: str) -> alt.Axis:
        return alt.Axis(values=[k * step + n / 2 for k in range(count)], labelExpr=f"'{prefix}' + floor(datum.value / "
                        f"{step})", grid=False, ticks=False, domain=False, labelFontSize=10)

    return (
        alt.Chart(df).mark_rect()
        .encode(
            x=alt.X("x:Q", axis=axis(n_heads, "H"), title=ht, scale=alt.Scale(domain=[0, n_heads * step - 1])),
            x2="x2:Q",
            y=alt.Y("y:Q", axis=axis(n_layers, "L"), title=lt,
                    scale=alt.Scale(domain=[0, n_layers * step - 1], reverse=True)),
            y2="y2:Q",
            color=alt.Color("weight:Q", scale=alt.Scale(scheme=charts.WEIGHT_SCHEME, domain=[0, 1]), title=wt,
                            legend=alt.Legend(orient="bottom")),
            tooltip=[alt.Tooltip("layer:Q", title=lt), alt.Tooltip("head:Q", title=ht),
                     alt.Tooltip("query:N", title=qt), alt.Tooltip("key:N", title=kt),
                     alt.Tooltip("weight:Q", title=wt, format=".3f")],
        )
        .properties(width="container", height=min(560, 64 * n_layers + 40), autosize=charts.FIT_WIDTH)
    )

"""The cross-attention page's Streamlit layer: its session keys, the example buttons' callback, cached results."""

from __future__ import annotations

import streamlit as st

from mha_core import cross

SRC_KEY, TGT_KEY, H_KEY = "cross_src", "cross_tgt", "cross_h"   # source (Chinese), target (English), heads

KEPT: dict[str, object] = {  # widget values that survive a visit to another page (state.keep)
    SRC_KEY: cross.PAIRS[0].source, TGT_KEY: cross.PAIRS[0].target, H_KEY: 4,
}


def use_pair(i: int) -> None:
    """An example button: both sentences become example pair ``i``."""
    st.session_state[SRC_KEY], st.session_state[TGT_KEY] = cross.PAIRS[i].source, cross.PAIRS[i].target


@st.cache_data(max_entries=256, show_spinner=False)
def lesson(source: str, target: str, n_heads: int) -> cross.CrossLesson:
    """The pair through cross-attention (LabError, uncached, on a bad sentence)."""
    return cross.build_lesson(source, target, n_heads)


@st.cache_data(max_entries=256, show_spinner=False)
def masks(source: str, target: str, n_heads: int) -> tuple[cross.MaskViews, cross.PaddingDemo]:
    """The three attentions of the pair and the padded batch."""
    built = lesson(source, target, n_heads)
    return cross.mask_views(built), cross.padding_demo(built, source)

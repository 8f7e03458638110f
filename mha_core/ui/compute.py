"""Cached bridges from settings to core results, shared by every page."""

from __future__ import annotations

import streamlit as st

from mha_core.counts import param_counts
from mha_core.settings import Settings
from mha_core.walkthrough import Walkthrough, averaging_matrix, build_walkthrough, recovery_error


@st.cache_data(max_entries=512, show_spinner=False)
def walkthrough(s: Settings) -> Walkthrough:
    """The trace for these settings (cached: Settings is frozen, so it is the key; raises LabError for bad input)."""
    return build_walkthrough(s)


def counts(s: Settings) -> tuple[dict[str, int], dict[str, int]]:
    """(this layer's parameter counts, those of one full-width head of the same d_model)."""
    return (param_counts(s.d_model, s.n_heads, d_head=s.d_head),
            param_counts(s.d_model, 1, d_head=s.d_model))


@st.cache_data(max_entries=256, show_spinner=False)
def recovery(s: Settings) -> tuple[float, float]:
    """(error recovering the heads after W^O, after averaging) — a linear solve, so cached."""
    wt = walkthrough(s)
    avg = averaging_matrix(s.n_heads, s.d_head)
    return (recovery_error(wt.trace, wt.trace.output, wt.weights.w_o),
            recovery_error(wt.trace, wt.trace.concat @ avg, avg))

"""Cached bridges from settings to core results, shared by every page."""

from __future__ import annotations

import streamlit as st

from mha_core.counts import param_counts
from mha_core.ui.state import Settings
from mha_core.walkthrough import Walkthrough, averaging_matrix, build_walkthrough, recovery_error


@st.cache_data(max_entries=512, show_spinner=False)
def _walkthrough(sentence: str, d_model: int, n_heads: int, d_head: int,
                 weight_mode: str, seed: int, causal: bool) -> Walkthrough:
    return build_walkthrough(sentence, d_model, n_heads, d_head, weight_mode, seed, causal)


def walkthrough(s: Settings) -> Walkthrough:
    """The trace for these settings (cached; raises LabError for bad input)."""
    return _walkthrough(s.sentence, s.d_model, s.n_heads, s.d_head, s.weight_mode, s.seed, s.causal)


def counts(s: Settings) -> tuple[dict[str, int], dict[str, int]]:
    """(this layer's parameter counts, those of one full-width head of the same d_model)."""
    return (param_counts(s.d_model, s.n_heads, d_head=s.d_head),
            param_counts(s.d_model, 1, d_head=s.d_model))


@st.cache_data(max_entries=256, show_spinner=False)
def _recovery(sentence: str, d_model: int, n_heads: int, d_head: int,
              weight_mode: str, seed: int, causal: bool) -> tuple[float, float]:
    tr = _walkthrough(sentence, d_model, n_heads, d_head, weight_mode, seed, causal)
    avg = averaging_matrix(n_heads, d_head)
    return (recovery_error(tr.trace, tr.trace.output, tr.weights.w_o),
            recovery_error(tr.trace, tr.trace.concat @ avg, avg))


def recovery(s: Settings) -> tuple[float, float]:
    """(error recovering the heads after W^O, after averaging) — a linear solve, so cached."""
    return _recovery(s.sentence, s.d_model, s.n_heads, s.d_head, s.weight_mode, s.seed, s.causal)

"""The core demos (mha_core.demos) cached for the lesson pages (myths, why, prerequisite): each runs once."""

from __future__ import annotations

import json
from pathlib import Path

import streamlit as st

from mha_core import demos

TOY_RESULT = Path(__file__).resolve().parents[2] / "assets" / "toy" / "heads_vs_accuracy.json"


@st.cache_data(max_entries=64, show_spinner=False)
def score_ranks(d_model: int, n: int) -> list[demos.RankPoint]:
    return demos.score_ranks(d_model, n)


@st.cache_data(max_entries=256, show_spinner=False)
def ensemble_check(sentence: str, d_model: int, n_heads: int) -> demos.EnsembleCheck:
    return demos.ensemble_check(sentence, d_model, n_heads)


@st.cache_data(max_entries=256, show_spinner=False)
def two_targets(sentence: str, query: int, targets: tuple[int, int]) -> demos.TwoTargets:
    return demos.two_targets(sentence, query, targets)


@st.cache_resource(show_spinner=False)
def emergence() -> list[demos.Snapshot]:
    """One replay of training per server process (a few seconds), shared by every student."""
    return demos.emergence()


@st.cache_data(show_spinner=False)
def heads_vs_accuracy() -> dict:
    """The shipped result of the toy model's h = 1 … 16 experiment (and the command that made it)."""
    return json.loads(TOY_RESULT.read_text(encoding="utf-8"))


@st.cache_resource(show_spinner=False)
def trained_roles() -> tuple[tuple[int, int, str, float, float], ...]:
    """(layer, head, label, previous-token score, induction score) of the shipped toy model."""
    from mha_core.toy import load_default, score_model  # lazy: loads torch

    table = score_model(load_default())
    return tuple((s.layer, s.head, s.label, s.previous_token, s.induction) for s in table.heads)


@st.cache_data(max_entries=256, show_spinner=False)
def single_head(sentence: str, kind: str) -> demos.SingleHead:
    return demos.single_head(sentence, kind)

"""Sidebar: language switch on every page; h / d_head controls and live counts on pipeline pages."""

from __future__ import annotations

import streamlit as st

from mha_core.i18n import LANGS, translate
from mha_core.inputs import MAX_TOKENS, WEIGHT_MODES
from mha_core.limits import D_HEAD_RANGE, D_HEAD_STEP, D_MODEL_CHOICES, H_RANGE, MAX_SENTENCE, SEED_RANGE
from mha_core.ui import compute
from mha_core.ui.i18n import t
from mha_core.ui.state import carry_shape, current, head_divisors, on_language_change


def language_switch() -> None:
    """中文 / English, remembered for the session."""
    st.sidebar.radio(
        t("common.language"), LANGS, key="lang", horizontal=True,
        format_func=lambda code: translate(code, "common.lang_name"), on_change=on_language_change,
    )
    st.sidebar.toggle(t("common.tables"), key="tables", help=t("common.tables_help"))


def pipeline_controls() -> None:
    """h and d_head sliders (or fixed d_model and its divisors), weights, sentence, live counts."""
    ss = st.session_state
    sb = st.sidebar
    sb.subheader(t("controls.title"))
    sb.toggle(t("controls.fixed"), key="fixed", help=t("controls.fixed_help"), on_change=carry_shape)
    if ss["fixed"]:
        sb.select_slider("d_model", options=D_MODEL_CHOICES, key="d_model")
        divisors = head_divisors(int(ss["d_model"]))
        if ss["h_div"] not in divisors:
            ss["h_div"] = min(divisors, key=lambda h: abs(h - int(ss["h_div"])))
        sb.select_slider(t("controls.h"), options=divisors, key="h_div", help=t("controls.h_help"))
    else:
        sb.slider(t("controls.h"), *H_RANGE, key="h", help=t("controls.h_help"))
        sb.slider(t("controls.d_head"), *D_HEAD_RANGE, step=D_HEAD_STEP, key="d_head", help=t("controls.d_head_help"))
    s = current()
    sb.markdown(t("controls.shape_line", h=s.n_heads, d_head=s.d_head, d_model=s.d_model))
    mode_names = {m: t(f"controls.mode_{m}") for m in WEIGHT_MODES}  # resolved now: format_func runs later too
    sb.radio(t("controls.weights"), WEIGHT_MODES, key="weight_mode", format_func=mode_names.__getitem__,
             help=t("controls.weights_help"))
    if ss["weight_mode"] == "random":
        sb.number_input(t("controls.seed"), min_value=SEED_RANGE[0], max_value=SEED_RANGE[1], step=1, key="seed")
    sb.text_area(t("controls.sentence"), key="sentence", max_chars=MAX_SENTENCE, height=80,
                 help=t("controls.sentence_help", max=MAX_TOKENS))
    param_panel()


def param_panel() -> None:
    """Live W_Q/W_K/W_V/W_O counts beside one full-width head of the same d_model."""
    s = current()
    mine, single = compute.counts(s)
    with st.sidebar.container(border=True):
        st.markdown(f"**{t('controls.params_title')}**")
        rows = "\n".join(
            f"| {name} | {mine[key]:,} | {single[key]:,} |"
            for name, key in (("W_Q", "q"), ("W_K", "k"), ("W_V", "v"), ("W_O", "o"), (t("controls.total"), "total"))
        )
        st.markdown(
            f"| | h = {s.n_heads} | h = 1 |\n|---|---:|---:|\n{rows}"
        )
        if mine["total"] == single["total"]:
            st.success(t("controls.same_budget"), icon=":material/balance:")
        else:
            st.warning(t("controls.other_budget", diff=mine["total"] - single["total"]))

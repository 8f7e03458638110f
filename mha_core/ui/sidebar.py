"""Sidebar: language switch on every page; h / d_head controls and live counts on pipeline pages."""

from __future__ import annotations

import streamlit as st

from mha_core.i18n import translate
from mha_core.inputs import MAX_TOKENS, WEIGHT_MODES
from mha_core.settings import (
    D_HEAD,
    D_MODEL,
    FIXED,
    H_DIV,
    LANG,
    SEED,
    SENTENCE,
    SETTINGS,
    TABLES,
    WEIGHT_MODE,
    H,
    Setting,
    head_divisors,
)
from mha_core.ui import compute, numbers, state
from mha_core.ui.i18n import t
from mha_core.ui.state import carry_shape, current, on_language_change

# The shared settings' widget values survive page switches (state.init_state); lang and sentence are filled at
# run time (the browser's language, its default sentence), so their None default is not written.
KEPT: dict[str, object] = {s.key: s.default for s in SETTINGS}


def _slider(setting: Setting) -> None:
    """An int setting's slider over its declared range."""
    st.sidebar.slider(t(setting.label), *setting.bounds, step=setting.step, key=setting.key,
                      help=t(setting.help) if setting.help else None)


def controls(pipeline: bool) -> None:
    """The sidebar's controls: the language on every page, and h, d_head and the rest on a pipeline page."""
    language_switch()
    if pipeline:
        pipeline_controls()


def language_switch() -> None:
    """中文 / English, remembered for the session."""
    st.sidebar.radio(
        t(LANG.label), LANG.options, key=LANG.key, horizontal=True,
        format_func=lambda code: translate(code, "common.lang_name"), on_change=on_language_change,
    )
    st.sidebar.toggle(t(TABLES.label), key=TABLES.key, help=t(TABLES.help))


def pipeline_controls() -> None:
    """h and d_head sliders (or fixed d_model and its divisors), weights, sentence, live counts."""
    ss = st.session_state
    sb = st.sidebar
    sb.subheader(t("controls.title"))
    sb.toggle(t(FIXED.label), key=FIXED.key, help=t(FIXED.help), on_change=carry_shape)
    if ss[FIXED.key]:
        sb.select_slider("d_model", options=D_MODEL.options, key=D_MODEL.key)
        divisors = head_divisors(int(ss[D_MODEL.key]))
        state.valid_choice(H_DIV.key, divisors, divisors[-1])
        sb.select_slider(t(H_DIV.label), options=divisors, key=H_DIV.key, help=t(H_DIV.help))
    else:
        _slider(H)
        _slider(D_HEAD)
    s = current()
    sb.markdown(t("controls.shape_line", h=s.n_heads, d_head=s.d_head, d_model=s.d_model))
    mode_names = {m: t(f"controls.mode_{m}") for m in WEIGHT_MODES}  # resolved now: format_func runs later too
    sb.radio(t(WEIGHT_MODE.label), WEIGHT_MODE.options, key=WEIGHT_MODE.key, format_func=mode_names.__getitem__,
             help=t(WEIGHT_MODE.help))
    if ss[WEIGHT_MODE.key] == "random":
        numbers.number_input(SEED, t(SEED.label), container=sb)  # a forged NaN cannot break it
    sb.text_area(t(SENTENCE.label), key=SENTENCE.key, max_chars=SENTENCE.max_chars, height=80,
                 help=t(SENTENCE.help, max=MAX_TOKENS))
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

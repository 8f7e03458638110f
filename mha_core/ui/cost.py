"""Cost lab's Streamlit side: the controls' callbacks, their memory across pages, and chart rendering."""

from __future__ import annotations

import streamlit as st

from mha_core import cost_charts
from mha_core.presets import preset
from mha_core.ui import render
from mha_core.ui.i18n import t

CUSTOM = "custom"
BYTES_PER_VALUE = {"fp32": 4, "bf16": 2, "int8": 1}
DEFAULT_PRESET = "transformer_base"
WIDGET_KEYS = ("cost_preset", "cost_fixed", "cost_d_model", "cost_h_div", "cost_h", "cost_d_head", "cost_kv",
               "cost_layers", "cost_bias", "cost_seq", "cost_batch", "cost_dtype")
SAVED = "cost_saved"  # a plain session key (no widget), so it outlives visits to other pages


def fill_from_preset() -> None:
    """on_change of the preset box: the published shape goes into every control."""
    ss = st.session_state
    if ss["cost_preset"] == CUSTOM:
        return
    p = preset(ss["cost_preset"])
    ss.update(cost_fixed=True, cost_d_model=p.d_model, cost_h_div=p.n_heads, cost_h=p.n_heads, cost_d_head=p.d_head,
              cost_kv=p.n_kv_heads, cost_layers=p.n_layers, cost_bias=p.bias)
    if p.context_len:
        ss["cost_seq"] = p.context_len


def to_custom() -> None:
    """on_change of a shape control: the figures no longer describe the published model."""
    ss = st.session_state
    ss["cost_preset"] = CUSTOM


def switch_mode() -> None:
    """Fixed d_model <-> h × d_head: carry the same shape over to the other controls."""
    ss = st.session_state
    if ss["cost_fixed"]:
        ss.update(cost_d_model=ss["cost_h"] * ss["cost_d_head"], cost_h_div=ss["cost_h"])
    else:
        ss.update(cost_h=ss["cost_h_div"], cost_d_head=ss["cost_d_model"] // ss["cost_h_div"])


def show_chart(title: str, builder: str, points: list, **labels: object) -> None:
    """A cost chart at the column's width, its title above it as text (wraps on a phone instead of being cut)."""
    st.markdown(f"**{title}**")
    render.chart(lambda: getattr(cost_charts, builder)(points, **labels), builder, tuple(points),
                 tuple(sorted(labels.items())))


def vs_mha(value: int, mha: int) -> str | None:
    """A metric's delta against the same model with MHA (None when this is MHA)."""
    return None if value == mha else t("cost.vs_mha", pct=f"{100 * (value - mha) / mha:+.0f}")


def percent(share: float) -> str:
    """A share as a percentage with about three significant digits ("0.906%", "14.5%", "1,450%")."""
    pct = 100 * share
    if pct >= 100:
        return f"{pct:,.0f}%"
    return f"{pct:.3g}%" if pct >= 0.001 else "< 0.001%"


def restore_state() -> None:
    """Streamlit drops a widget's value when a run does not draw it (any other page): put back the copy
    kept under SAVED, else start from the default preset; a shape still incomplete is refilled from its preset."""
    ss = st.session_state
    for key, value in ss.get(SAVED, {}).items():
        ss.setdefault(key, value)
    mode_keys = ("cost_d_model", "cost_h_div") if ss.get("cost_fixed", True) else ("cost_h", "cost_d_head")
    if any(k not in ss for k in ("cost_preset", "cost_fixed", "cost_kv", "cost_layers", "cost_bias", *mode_keys)):
        if ss.get("cost_preset", CUSTOM) == CUSTOM:
            ss["cost_preset"] = DEFAULT_PRESET
        fill_from_preset()
    for key, value in (("cost_seq", 1024), ("cost_batch", 1), ("cost_dtype", "bf16")):
        ss.setdefault(key, value)



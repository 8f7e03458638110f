"""Cost lab's Streamlit side: its session keys (and which survive page switches), the callbacks, chart rendering."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from mha_core.counts import divisors
from mha_core.presets import preset
from mha_core.settings import Setting, ShapeControls, carried_shape
from mha_core.ui import render
from mha_core.ui.i18n import t

CUSTOM = "custom"
BYTES_PER_VALUE = {"fp32": 4, "bf16": 2, "int8": 1}
DEFAULT_PRESET = "transformer_base"

PRESET_KEY = "cost_preset"
FIXED_KEY = "cost_fixed"
D_MODEL_KEY = "cost_d_model"
H_DIV_KEY = "cost_h_div"
H_KEY = "cost_h"
D_HEAD_KEY = "cost_d_head"
KV_KEY = "cost_kv"
LAYERS_KEY = "cost_layers"
BIAS_KEY = "cost_bias"
SEQ_KEY = "cost_seq"
BATCH_KEY = "cost_batch"
DTYPE_KEY = "cost_dtype"

# The number inputs, declared as settings so that a forged value (NaN, infinity, 1e30) is clamped by the rule a
# link's values follow (mha_core.ui.numbers); the defaults are the default preset's (KEPT below).
D_MODEL = Setting(D_MODEL_KEY, int, 512, bounds=(1, 65536))
H = Setting(H_KEY, int, 8, bounds=(1, 1024))
D_HEAD = Setting(D_HEAD_KEY, int, 64, bounds=(1, 1024))
LAYERS = Setting(LAYERS_KEY, int, 6, bounds=(1, 256))
SEQ = Setting(SEQ_KEY, int, 1024, bounds=(1, 1 << 20))
BATCH = Setting(BATCH_KEY, int, 1, bounds=(1, 4096))
FIXED = Setting(FIXED_KEY, bool, True)
H_DIV = Setting(H_DIV_KEY, int, 8, bounds=D_MODEL.bounds)  # any divisor of d_model (divisors)
SHAPE = ShapeControls(FIXED, D_MODEL, H_DIV, H, D_HEAD, divisors)  # the page's own shape, the sidebar's rules


def _shape_of(key: str) -> dict[str, object]:
    """The values a published preset puts into the shape controls."""
    p = preset(key)
    shape: dict[str, object] = {FIXED_KEY: True, D_MODEL_KEY: p.d_model, H_DIV_KEY: p.n_heads, H_KEY: p.n_heads,
                                D_HEAD_KEY: p.d_head, KV_KEY: p.n_kv_heads, LAYERS_KEY: p.n_layers, BIAS_KEY: p.bias}
    if p.context_len:
        shape[SEQ_KEY] = p.context_len
    return shape


# The page's widget values, kept across pages by state.keep: the default preset's shape and a load.
KEPT: dict[str, object] = {PRESET_KEY: DEFAULT_PRESET, SEQ_KEY: 1024, BATCH_KEY: 1, DTYPE_KEY: "bf16",
                           **_shape_of(DEFAULT_PRESET)}


def fill_from_preset() -> None:
    """on_change of the preset box: the published shape goes into every control."""
    ss = st.session_state
    if ss[PRESET_KEY] != CUSTOM:
        ss.update(_shape_of(ss[PRESET_KEY]))


def to_custom() -> None:
    """on_change of a shape control: the figures no longer describe the published model."""
    st.session_state[PRESET_KEY] = CUSTOM


def switch_mode() -> None:
    """Fixed d_model <-> h × d_head: carry the same shape over to the other controls (settings.carried_shape)."""
    st.session_state.update(carried_shape(st.session_state, SHAPE))


def show_chart(title: str, builder: Callable[..., object], points: Sequence, **labels: object) -> None:
    """A cost chart (a builder of mha_core.charts.cost) at the column's width, its title above it as text (wraps
    on a phone instead of being cut)."""
    st.markdown(f"**{title}**")
    render.chart(builder, tuple(points), **labels)


def vs_mha(value: int, mha: int) -> str | None:
    """A metric's delta against the same model with MHA (None when this is MHA)."""
    return None if value == mha else t("cost.vs_mha", pct=f"{100 * (value - mha) / mha:+.0f}")


def percent(share: float) -> str:
    """A share as a percentage with about three significant digits ("0.906%", "14.5%", "1,450%")."""
    pct = 100 * share
    if pct >= 100:
        return f"{pct:,.0f}%"
    return f"{pct:.3g}%" if pct >= 0.001 else "< 0.001%"

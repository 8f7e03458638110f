"""Number inputs and widget values that a forged client message cannot break (issue 28 item 9).

A browser can send any number for any widget. Streamlit's int number input converts what arrives with ``int()``
inside Streamlit, before the page runs: NaN or infinity is an exception on the sender's page that the page cannot
catch. Its float number input instead falls back to its default for a non-finite or out-of-range value. So a whole
number is asked for with a float input shown without decimals, and every value read is clamped by the rule a
shared link's values follow (``mha_core.settings.clamp``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from mha_core.settings import Setting, clamp


def number_input(setting: Setting, label: str, *, container: Any = None, increment: float | None = None,
                 **kwargs: Any) -> int | float:
    """A number input for a declared numeric ``setting`` (its key, range, step and kind); returns the value
    clamped to them. ``increment`` is what the +/− buttons add when it is not the step (d_model: 64 at a time, any
    whole number typed)."""
    lo, hi = setting.bounds
    raw = (container or st).number_input(label, float(lo), float(hi), step=float(increment or setting.step),
                                         key=setting.key, format="%.0f" if setting.kind is int else "%g", **kwargs)
    return _clamped(setting, raw)


def _clamped(setting: Setting, value: object) -> int | float:
    return clamp(setting, value)[0]  # type: ignore[return-value]


def clean_state(settings: Sequence[Setting]) -> list[Setting]:
    """Before a page draws its widgets: each setting's stored value made valid (a forged one clamped, an unreadable
    one set to its default); returns the settings that had to change, for a notice."""
    ss = st.session_state
    changed = []
    for setting in settings:
        try:
            value = ss.get(setting.key, setting.default)
        except Exception:  # a value Streamlit itself cannot turn back into a number
            value = None
        clean, moved = clamp(setting, value)
        if moved:
            ss[setting.key] = clean
            changed.append(setting)
    return changed


def value(setting: Setting) -> int | float:
    """The setting's value as stored, clamped (for callbacks, which run before the page can clean the state)."""
    try:
        raw = st.session_state.get(setting.key, setting.default)
    except Exception:  # see clean_state
        raw = None
    return _clamped(setting, raw)

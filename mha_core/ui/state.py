"""Session state: the one mechanism that keeps widget values across pages, and the shared settings' callbacks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from mha_core.i18n import LANGS, translate
from mha_core.settings import LANG, SENTENCE, Settings, carried_shape, resolve, snap
from mha_core.ui.i18n import lang

__all__ = ["Settings", "carry_shape", "current", "init_state", "keep", "on_language_change", "valid_choice"]


KEPT_KEY = "_kept"  # session: {widget key: default} of every table registered so far (keep), re-assigned each run
VALUES_KEY = "_kept_values"  # session: {widget key: value} as the last full run began (a plain key: never dropped)


def keep(*tables: Mapping[str, object]) -> None:
    """An owner's call before it draws its widgets (its page's every run; only the first one adds anything): from
    now on ``init_state`` re-assigns these keys at the top of every run. A missing key gets its default now.

    A default of None is not written (its owner fills that key), but the key is kept once set.
    """
    ss = st.session_state
    registered = ss.get(KEPT_KEY, {})
    if any(key not in registered for table in tables for key in table):
        ss[KEPT_KEY] = {**registered, **{k: v for table in tables for k, v in table.items()}}
    for table in tables:
        for key, default in table.items():
            if key not in ss and default is not None:
                ss[key] = default


def init_state(*frame: Mapping[str, object]) -> None:
    """Top of every run (app.py): re-assign every kept key, the frame's own tables and what pages registered.

    Streamlit forgets a widget's value on any run that does not draw it (any other page); a value assigned through
    session state at the top of the run is kept. The frame passes its ``KEPT`` tables (the sidebar's, drawn on
    every page); each page's owner registers its own with ``keep`` the first time the page runs, before drawing
    them, so a key is kept from the first run its widget exists on.

    A kept value can still vanish between two runs: Streamlit drops the values of widgets its browser did not send
    when it takes a run for a page change (a click on the page the server has just switched away from, after a
    fragment run: ``run_handoff``'s race 3 and its kin). A key with a default then comes back as the last full run
    began (``VALUES_KEY``, a key no widget owns), else as its default; a key its owner fills (default None) is the
    owner's to empty and is not brought back.
    """
    ss = st.session_state
    last = ss.get(VALUES_KEY, {})
    values: dict[str, object] = {}
    for table in (*frame, ss.get(KEPT_KEY, {})):
        for key, default in table.items():
            if key in ss:
                value = ss[key]
            elif default is not None:
                value = last.get(key, default)
            else:
                continue  # its owner fills it, and may empty it (e.g. generate's reset)
            ss[key] = values[key] = value
    ss[VALUES_KEY] = values
    ss.setdefault(SENTENCE.key, translate(lang(), "common.default_sentence"))


def on_language_change() -> None:
    """Swap the default sentence too, unless the student typed their own."""
    ss = st.session_state
    for other in LANGS:
        if other != ss[LANG.key] and ss.get(SENTENCE.key) == translate(other, "common.default_sentence"):
            ss[SENTENCE.key] = translate(ss[LANG.key], "common.default_sentence")


def carry_shape() -> None:
    """on_change of "Keep d_model fixed": the other mode's controls start from the shape on screen."""
    st.session_state.update(carried_shape(st.session_state))


def current() -> Settings:
    """The settings as the sidebar left them, made consistent (d_model = h × d_head or fixed)."""
    return resolve(st.session_state, lang())


def valid_choice(key: str, options: Sequence, default: object) -> None:
    """Before drawing a select box whose options can change with other settings: make its stored value one of
    ``options`` again (``settings.snap``: the nearest one, also when Streamlit handed back an old label)."""
    ss = st.session_state
    value = snap(ss[key], options, default) if key in ss else default  # first draw: the default, not option 0
    if key not in ss or value != ss[key]:
        ss[key] = value


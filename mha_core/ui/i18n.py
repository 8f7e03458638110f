"""``t(key)`` in the language the student chose (kept in session state)."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from mha_core.i18n import DEFAULT_LANG, LANGS, translate

LANG_KEY = "lang"


def lang() -> str:
    """The current language code (one of the catalogs in assets/i18n)."""
    value = st.session_state.get(LANG_KEY, DEFAULT_LANG)
    return value if value in LANGS else DEFAULT_LANG


def t(key: str, **params: object) -> str:
    """Translate ``key`` into the current language."""
    return translate(lang(), key, **params)


def bound_t() -> Callable[..., str]:
    """``t`` bound to this run's language: use it in ``format_func`` lambdas, which Streamlit (and
    AppTest) may call outside the script run, where the session's language cannot be read."""
    code = lang()
    return lambda key, **params: translate(code, key, **params)

"""Keep the walkthrough's settings in the URL, so a teacher can send a link to exactly this view."""

from __future__ import annotations

import streamlit as st

from mha_core.settings import LANG, LINKED
from mha_core.share import parse_query, to_query
from mha_core.ui.i18n import t

_RESTORED = "_url_restored"
_NOTICE = "_url_notice"
PIPELINE_KEYS = tuple(s.key for s in LINKED if s is not LANG)
QUERY_KEYS = frozenset(s.query for s in LINKED)


def restore() -> None:
    """On a session's first run, take the settings a link carries (bad values clamped or ignored)."""
    ss = st.session_state
    if ss.get(_RESTORED):
        return
    ss[_RESTORED] = True
    parsed = parse_query({k: st.query_params[k] for k in st.query_params if k in QUERY_KEYS})
    for key, value in parsed.values.items():
        ss[key] = value
    if parsed.adjusted:
        ss[_NOTICE] = ", ".join(parsed.adjusted)


def notice() -> None:
    """Say once which link values were out of range or unreadable."""
    keys = st.session_state.pop(_NOTICE, None)
    if keys:
        st.toast(t("common.url_adjusted", keys=keys), icon=":material/link:")


def write(pipeline: bool) -> None:
    """Mirror the current settings into the address bar (pipeline settings on pipeline pages only)."""
    ss = st.session_state
    keys = (LANG.key, *PIPELINE_KEYS) if pipeline else (LANG.key,)
    wanted = to_query({k: ss[k] for k in keys if k in ss})
    for qkey, value in wanted.items():
        if st.query_params.get(qkey) != value:
            st.query_params[qkey] = value

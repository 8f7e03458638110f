"""The projector's presentation mode, which app.py asks about on every page: large type, no sidebar, and previous /
next through the pipeline pages in teaching order. Switched on from the teacher's view or by ?present=1.

In a live lesson (mha_core.ui.live) the presenter keeps the sidebar (its settings are what students follow) and
steps through the lesson plan with the live bar instead of previous / next."""

from __future__ import annotations

import streamlit as st

from mha_core.ui.i18n import t
from mha_core.ui.nav import PAGES, spec

PRESENT_KEY = "present"     # session: True while presenting
PRESENT_PARAM = "present"   # URL: ?present=1 opens the page presenting
PREV_KEY, EXIT_KEY, NEXT_KEY = "present_prev", "present_exit", "present_next"  # the three buttons

_NO_SIDEBAR_CSS = """<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"],
[data-testid="stSidebarNav"] {display: none !important;}
[data-testid="stMainBlockContainer"] {padding-top: 4.5rem !important;}
</style>"""  # without a sidebar the header (60 px, opaque) covers the top: start the page below it
_LARGE_CSS = """<style>
[data-testid="stMain"] {font-size: 1.45rem;}
[data-testid="stMain"] p, [data-testid="stMain"] li, [data-testid="stMain"] td {font-size: 1.45rem;}
[data-testid="stMain"] h1 {font-size: 3.4rem;}
[data-testid="stMain"] h2 {font-size: 2.4rem;}
[data-testid="stMainBlockContainer"] {max-width: 100%; padding-top: 1.5rem;}
</style>"""


def pipeline_keys() -> tuple[str, ...]:
    """The pipeline pages that exist, in teaching order (the order of mha_core.ui.nav.PAGES)."""
    return tuple(p.key for p in PAGES if p.pipeline)


def presenting() -> bool:
    """Presentation mode: switched on from the teacher's view, or by ?present=1 in a link."""
    ss = st.session_state
    if st.query_params.get(PRESENT_PARAM) == "1":
        ss[PRESENT_KEY] = True
    return bool(ss.get(PRESENT_KEY))


def on_start() -> None:
    """Callback of the teacher's "present" button: this session presents, and its address says so."""
    st.session_state[PRESENT_KEY] = True
    st.query_params[PRESENT_PARAM] = "1"


def stop() -> None:
    """Leave presentation mode (the exit button, the end of a live lesson)."""
    st.session_state[PRESENT_KEY] = False
    st.query_params.pop(PRESENT_PARAM, None)


def presentation(current: str, live: bool = False) -> bool:
    """For app.py: in presentation mode, large type, no sidebar, and previous / next through the pipeline
    pages in teaching order (plus exit); in a live lesson (``live``) large type only. True when presenting."""
    if not presenting():
        return False
    if live:
        st.html(_LARGE_CSS)  # static style only; no user text
        return True
    st.html(_NO_SIDEBAR_CSS + _LARGE_CSS)  # static style only; no user text
    keys = pipeline_keys()
    i = keys.index(current) if current in keys else -1
    cols = st.columns([1, 1, 1])
    prev_key = keys[i - 1] if i > 0 else None
    next_key = keys[i + 1] if 0 <= i < len(keys) - 1 else (keys[0] if i < 0 else None)
    if cols[0].button(t("classroom.prev_page"), key=PREV_KEY, icon=":material/arrow_back:",
                      disabled=prev_key is None, width="stretch"):
        st.switch_page(spec(prev_key).script)
    cols[1].button(t("classroom.exit_present"), key=EXIT_KEY, icon=":material/close_fullscreen:",
                   on_click=stop, width="stretch")
    if cols[2].button(t("classroom.next_page"), key=NEXT_KEY, icon=":material/arrow_forward:",
                      disabled=next_key is None, width="stretch"):
        st.switch_page(spec(next_key).script)
    return True

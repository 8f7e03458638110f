"""Every page runs inside app.py's frame (language, sidebar, navigation) — even on a cold start.

Streamlit still maps a ``pages/`` folder the old way on the *first* run of a fresh server
process: a link straight to ``/attend`` then runs ``pages/attend.py`` alone, without app.py.
``ensure()``, the first statement of every page, turns that mode off and reruns through app.py.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

IN_FRAME = "_in_frame"


def run(page: st.Page) -> None:
    """For app.py: run the page, marked as inside the frame for exactly this run (race-free per session)."""
    st.session_state[IN_FRAME] = True
    try:
        page.run()
    finally:
        st.session_state.pop(IN_FRAME, None)


def ensure() -> None:
    """Rerun through app.py if Streamlit ran this page file on its own.

    The marker is per session and per run: on a cold server several sessions start at once, and the
    process-wide pages-folder flag may already be cleared by another session when this page runs alone.
    """
    if not st.session_state.get(IN_FRAME):
        PagesManager.uses_pages_directory = False  # what st.navigation itself sets once it has run
        st.rerun()

"""Every page runs inside app.py's frame (language, sidebar, navigation) — even on a cold start.

Streamlit still maps a ``pages/`` folder the old way on the *first* run of a fresh server
process: a link straight to ``/attend`` then runs ``pages/attend.py`` alone, without app.py.
``ensure()``, the first statement of every page, turns that mode off and reruns through app.py.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager


def ensure() -> None:
    """Rerun through app.py if Streamlit ran this page file on its own."""
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False  # what st.navigation itself sets once it has run
        st.rerun()

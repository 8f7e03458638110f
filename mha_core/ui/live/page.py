"""app.py's calls around each run: ``turn`` (following students' full runs take turns) and ``frame`` (the
presenter's bar and publishing, or a member's poll and banner)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from mha_core.ui import present, student
from mha_core.ui.live.follow import banner, follow_idle, follow_live
from mha_core.ui.live.keys import LIVE_QUERY, PAGE_KEY
from mha_core.ui.live.presenter import presenter_bar
from mha_core.ui.live.projector import projector
from mha_core.ui.live.session import follower, following, live_seen, presenting, set_follower

RUNS_AT_ONCE = 1      # a process draws this many following students' full runs at a time (the rest wait)
TURN_WAIT_S = 30.0    # a run waits at most this long for its turn, then runs anyway


@st.cache_resource(show_spinner=False)
def _turns() -> threading.BoundedSemaphore:
    """The process's turns for class members' full runs (holds nothing: a cleared cache only makes a new one)."""
    return threading.BoundedSemaphore(RUNS_AT_ONCE)


@contextmanager
def turn() -> Iterator[None]:
    """For app.py, around a run: following students' full runs take turns. When the teacher moves, every
    follower's session reruns at once; 60 script threads interleaved under the GIL (and on Streamlit's config lock,
    taken for every message) finish all at the end, while in turns the first students see the move at once. Only
    followers of a live lesson wait: a student exploring on their own (e.g. training the toy model for seconds) or
    outside a lesson never holds up the class, nor waits for it."""
    if presenting() or not following() or live_seen() is None:
        yield
        return
    turns = _turns()
    got = turns.acquire(timeout=TURN_WAIT_S)
    try:
        yield
    finally:
        if got:
            turns.release()


def frame(current_key: str) -> None:
    """For app.py, once per run after navigation and before the sidebar: the presenter's bar and publishing; the
    follow poll and banner for a member of a class; nothing otherwise."""
    ss = st.session_state
    ss[PAGE_KEY] = current_key
    if presenting():
        presenter_bar(current_key)
        return
    if present.presenting():
        projector()
    m = student.member()
    if m is None:
        return
    if not present.presenting() and st.query_params.get(student.STUDENT_PARAM) != m.key:
        st.query_params[student.STUDENT_PARAM] = m.key  # a reload or a restart finds the member (and their votes)
    set_follower(follower().run_begins(time.time()))
    try:
        if follower().live(m.class_id) is not None:
            follow_live(m, current_key)
        else:
            follow_idle(m, current_key)
    finally:
        set_follower(follower().run_framed())
    state = live_seen()
    if state is None and LIVE_QUERY in st.query_params:  # the lesson ended: the address no longer follows one
        del st.query_params[LIVE_QUERY]
    if state is not None:  # drawn by the full run only: a poll that changes nothing draws nothing
        set_follower(follower().bannered())
        banner(m, state)

"""app.py's calls around each run: ``turn`` (following students' full runs take turns) and ``frame`` (the
presenter's bar and publishing, or a member's poll and banner)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st
from streamlit.runtime import Runtime

from mha_core.ui import present, shared_body, student
from mha_core.ui.live.follow import banner, follow_idle, follow_live
from mha_core.ui.live.keys import LIVE_QUERY, PAGE_KEY
from mha_core.ui.live.presenter import presenter_bar
from mha_core.ui.live.projector import projector
from mha_core.ui.live.session import class_view, follower, following, live_seen, presenting, set_follower

RUNS_AT_ONCE = 1      # a process draws this many following students' full runs at a time (the rest wait)
TURN_WAIT_S = 30.0    # a run waits at most this long for its turn, then runs anyway
VOTE_FIRST_S = 1.0    # a redraw waits at most this long for the votes being sent (then runs anyway)
CATCH_UP_S = 0.2      # a redraw waits at most this long for the event loop to send the redraws before it
LOOP_HOPS = 3         # event loop rounds that send what was queued: flush, the sender tasks, their writes


def caught_up(timeout: float) -> bool:
    """Wait until the server's event loop has gone LOOP_HOPS rounds from now (what the runs before this one queued
    has been handed to the sockets); False after ``timeout`` or outside a server.

    A recorded page body is replayed in a few milliseconds (``shared_body``), faster than the event loop sends a
    page's fifty messages: without a pause, a class's redraw queued a growing backlog of sending ahead of everything
    else on the loop, a vote's own messages included (bench_live, 60 students: vote p50 0.15 s before the replay,
    0.63-0.79 s with it, 0.15 s with this pause; issue 26)."""
    if not Runtime.exists():
        return False
    try:
        loop = Runtime.instance()._get_async_objs().eventloop  # noqa: SLF001 - as send_wakeup
    except RuntimeError:
        return False
    done = threading.Event()

    def hop(left: int) -> None:
        if left:
            loop.call_soon(hop, left - 1)
        else:
            done.set()

    loop.call_soon_threadsafe(hop, LOOP_HOPS)
    return done.wait(timeout)


class Turns:
    """The process's turns: following students' full runs one at a time, and a student's vote in flight ahead of
    the next of them. Holds nothing that matters: a cleared cache only makes a new one."""

    def __init__(self) -> None:
        self.runs = threading.BoundedSemaphore(RUNS_AT_ONCE)
        self.votes = threading.Condition()
        self.sending = 0  # votes being sent now (their ballot's run, its callback included)

    @contextmanager
    def redraw(self) -> Iterator[None]:
        """A follower's full run: its turn, begun once no vote is being sent (at most VOTE_FIRST_S later) and the
        event loop has sent what the turns before it drew (at most CATCH_UP_S later)."""
        got = self.runs.acquire(timeout=TURN_WAIT_S)
        try:
            with self.votes:
                self.votes.wait_for(lambda: self.sending == 0, timeout=VOTE_FIRST_S)
            caught_up(CATCH_UP_S)
            yield
        finally:
            if got:
                self.runs.release()

    @contextmanager
    def vote(self) -> Iterator[None]:
        """A vote being sent: the next redraw waits for it."""
        with self.votes:
            self.sending += 1
        try:
            yield
        finally:
            with self.votes:
                self.sending -= 1
                if not self.sending:
                    self.votes.notify_all()


@st.cache_resource(show_spinner=False)
def _turns() -> Turns:
    """This process's turns."""
    return Turns()


@contextmanager
def turn() -> Iterator[None]:
    """For app.py, around a run: following students' full runs take turns. When the teacher moves, every
    follower's session reruns at once; 60 script threads interleaved under the GIL (and on Streamlit's config lock,
    taken for every message) finish all at the end, while in turns the first students see the move at once. Only
    followers of a live lesson wait: a student exploring on their own (e.g. training the toy model for seconds) or
    outside a lesson never holds up the class, nor waits for it. A student's vote being sent goes first
    (``voting``)."""
    if presenting() or not following() or live_seen() is None:
        yield
        return
    with _turns().redraw():
        yield


@contextmanager
def voting() -> Iterator[None]:
    """Around the sending of a student's vote (the ballot's own run and its callback): the class's next redraw
    waits for it. A redraw is a whole page; a vote is a few milliseconds of the ballot's run and a write, but each
    of its database calls lets go of the GIL, and a redraw running beside it took it back for up to Python's switch
    interval each time: a vote sent while the class was being redrawn waited for most of the redraw (bench_live's
    vote p50 0.6 s, against 0.15 s before the redraws got faster; issue 26)."""
    with _turns().vote():
        yield


def frame(current_key: str) -> shared_body.View | None:
    """For app.py, once per run after navigation and before the sidebar: the presenter's bar and publishing; the
    follow poll and banner for a member of a class; nothing otherwise. What this run may share with classmates (a
    following member's ``class_view``, None otherwise)."""
    ss = st.session_state
    ss[PAGE_KEY] = current_key
    if presenting():
        presenter_bar(current_key)
        return None
    if present.presenting():
        projector()
    m = student.member(shared=following() and live_seen() is not None)  # redrawn with the class: a shared read
    if m is None:
        return None
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
    if state is None:
        return None
    set_follower(follower().bannered())  # drawn by the full run only: a poll that changes nothing draws nothing
    view = class_view()
    banner(m, state, current_key, view)
    return view

"""A class member's side: the poll of the class's live state (in a fragment), copying the teacher's settings and
page into this session, the proof its browser drew them, the heartbeat and the banner ("following" / "exploring").

How following works: the presenter writes the class's one ``LiveState`` row whenever its step, page, followed
settings or vote change; every member's session polls it (``FOLLOW_POLL_S``) and, when the version grew, copies the
teacher's settings into its session state and switches to the teacher's page (a full run). app.py calls ``frame``
before the sidebar's widgets are drawn, so a copied value is set before its widget exists in that run (Streamlit
refuses to set a widget's value after it is drawn).
"""

from __future__ import annotations

import time

import streamlit as st

from mha_core.classroom import Member
from mha_core.errors import LabError
from mha_core.lesson import LiveState, default_plan
from mha_core.lesson.follow import Follower, Move, poll
from mha_core.lesson.store import load_plan, read_live
from mha_core.ui import render, shared_body
from mha_core.ui.class_services import storage
from mha_core.ui.i18n import t
from mha_core.ui.live.keys import BACK_KEY, BANNER_KEY, EXPLORE_KEY, LIVE_QUERY
from mha_core.ui.live.session import follower, following, go, member, set_follower
from mha_core.ui.live.wake import Watcher, session_id, watcher
from mha_core.ui.shared_reads import shared

# A member's poll of the class's live state while the class is live: the fallback (the process's watcher wakes a
# following session the moment the class moves, mha_core.ui.live.wake) and the heartbeat (lesson.follow.HEARTBEAT_S,
# every poll at this pace). Each poll is a fragment run (a script thread, a few ms of the server's CPU): with 60
# students and a still teacher, polls every 2 s and the watcher took 12-13% of a core, every 6 s 6-8% (benchmarks.
# bench_live, issue 26); what is left is CPU a move's redraws need not share.
FOLLOW_POLL_S = 6.0
IDLE_POLL_S = 3.0     # a member's check whether the class went live
SHARED_READ_S = 0.3   # a process's students share one read of their class's live state for this long


def drawn() -> None:
    """For app.py, after the page ran to its end: this member's page now shows the live version it copied. A full
    run stopped on the way (a page switch, a newer rerun) does not count, so the next poll asks again."""
    f, version = follower().drawn(time.time())
    if version is None:
        return
    set_follower(f)
    _report(member(), f, watcher())
    if st.query_params.get(LIVE_QUERY) != str(version):
        st.query_params[LIVE_QUERY] = str(version)  # last: the browser has all of this run once it has this


def _read_live(class_id: int) -> tuple[int, LiveState | None]:
    """The class's live state, read now."""
    return read_live(storage(), class_id)


def shared_read(class_id: int, w: Watcher | None) -> tuple[int, LiveState | None]:
    """The class's live state, read once per SHARED_READ_S by this process for all its students (60 students
    polling every second would otherwise be 60 reads a second; a cleared cache only costs one more read). The
    version the watcher ``w`` read last is part of the key: the sessions it wakes read the state it saw grow."""
    key = ("live", class_id, None if w is None else w.version(class_id))
    return shared(key, int(time.time() / SHARED_READ_S), lambda: _read_live(class_id))


def _report(m: Member | None, f: Follower, w: Watcher | None) -> None:
    """Tell the process's watcher ``w`` whether to wake this session when the class moves (following a live
    lesson)."""
    sid = session_id()
    if w is None or sid is None:
        return
    if m is not None and f.following and f.live(m.class_id) is not None:
        w.seen(m.class_id, sid, f.applied)
    else:
        w.left(sid)


def _poll(m: Member, current_key: str, live_now: bool) -> None:
    """Read the class's live state and apply the next move ``lesson.follow.poll`` decides. Draws nothing: the
    banner is drawn by the full run that a change triggers."""
    w = watcher()  # once a poll: each lookup reads the cache of resources
    try:
        version, state = shared_read(m.class_id, w)
    except LabError as err:  # said where the banner would be (a lost database must not look like "not following")
        render.show_error(err)
        return  # the next poll tries again
    now = time.time()
    d = poll(follower(), m.class_id, version, state, current_key, st.query_params.get(LIVE_QUERY), now, live_now)
    set_follower(d.follower)
    _report(m, d.follower, w)
    if d.beat:  # tell the teacher this student is here (and whether following), at most every HEARTBEAT_S
        try:
            storage().heartbeat(m, d.follower.following)
            set_follower(follower().beaten(now))
        except LabError:
            pass  # the next poll tries again
    if d.move is Move.COPY:  # before any widget of this full run is drawn
        ss = st.session_state
        for key, value in d.settings:
            if ss.get(key) != value:
                ss[key] = value
    if d.move in (Move.PACE, Move.REDRAW, Move.REASK, Move.REFRESH):
        st.rerun(scope="app")
    if d.page is not None:
        go(d.page)


@st.fragment(run_every=FOLLOW_POLL_S)
def follow_live(m: Member, current_key: str) -> None:
    """The class is live: poll every FOLLOW_POLL_S seconds and show the banner."""
    _poll(m, current_key, live_now=True)


@st.fragment(run_every=IDLE_POLL_S)
def follow_idle(m: Member, current_key: str) -> None:
    """The class is not live: check now and then whether it went live."""
    _poll(m, current_key, live_now=False)


def _steps_in(m: Member, state: LiveState) -> int | None:
    """The number of steps of the lesson being taught (its saved plan), read once per lesson."""
    cached = follower().steps
    if cached and cached[:2] == (m.class_id, state.lesson_started_at):
        return cached[2]
    try:
        n = len((load_plan(storage(), m.class_id) or default_plan()).steps)
    except LabError:
        return None
    set_follower(follower().with_steps(m.class_id, state.lesson_started_at, n))
    return n


def _on_explore() -> None:
    """"Explore on my own" (the teacher is told at the next poll)."""
    set_follower(follower().explore())


def _on_back() -> None:
    """One tap: follow again, and copy the teacher's state at once (the poll that follows the click applies it)."""
    set_follower(follower().back())


def banner(m: Member, state: LiveState, page: str, view: shared_body.View | None) -> None:
    """"Following the teacher · step 3/9" with "Explore on my own", or "Back to the teacher" when exploring: for a
    following member (``view``), drawn once per live state and language and shared with the classmates on the same
    page (``shared_body``; the lesson's length is part of the key)."""
    n = _steps_in(m, state)
    shared_body.draw(lambda: _banner(state, n), page, view, part=f"banner-{n}")


def _banner(state: LiveState, n: int | None) -> None:
    """``banner``'s content, for a lesson of ``n`` steps (None: unknown)."""
    where = (t("live.step_n_of", i=state.step + 1, n=n, page=t(f"nav.{state.page}")) if n
             else t("live.step_n", i=state.step + 1, page=t(f"nav.{state.page}")))
    with st.container(border=True, key=BANNER_KEY):
        left, right = st.columns([3, 1], vertical_alignment="center")
        if following():
            left.markdown(f":material/cast_for_education: {t('live.following_teacher', where=where)}")
            right.button(t("live.explore"), key=EXPLORE_KEY, icon=":material/explore:", on_click=_on_explore,
                         width="stretch")
        else:
            left.markdown(f":material/explore: {t('live.exploring', where=where)}")
            right.button(t("live.back"), key=BACK_KEY, icon=":material/undo:", type="primary", on_click=_on_back,
                         width="stretch")


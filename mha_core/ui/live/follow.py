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
from mha_core.lesson import Drawn, LiveState, browser_shows, default_plan
from mha_core.ui import render
from mha_core.ui.classdb import storage
from mha_core.ui.i18n import t
from mha_core.ui.live.keys import (
    APPLIED_AT_KEY,
    APPLIED_KEY,
    ASKED_KEY,
    BACK_KEY,
    BANNER_KEY,
    BANNER_VERSION_KEY,
    BEAT_KEY,
    DRAWN_KEY,
    EXPLORE_KEY,
    FOLLOW_KEY,
    FULL_RUN_KEY,
    LIVE_QUERY,
    PENDING_KEY,
    REASKED_KEY,
    RUN_START_KEY,
    SEEN_KEY,
    STEPS_KEY,
)
from mha_core.ui.live.session import Seen, following, go

FOLLOW_POLL_S = 1.0   # a member's poll of the class's live state while the class is live
IDLE_POLL_S = 3.0     # a member's check whether the class went live
HEARTBEAT_S = 5.0     # a student's "I am here" at most this often (not every poll)
SHARED_READ_S = 0.3   # a process's students share one read of their class's live state for this long
MAX_ASK = 10          # polls that ask for a full run to draw one version (a page that stops must not loop)
ACK_GRACE_S = 2.0     # after a full run drew a version, how long its browser may take to say so (LIVE_QUERY)
MAX_REASK = 3         # full runs asked again for one version its browser does not confirm


def drawn() -> None:
    """For app.py, after the page ran to its end: this member's page now shows the live version it copied. A full
    run stopped on the way (a page switch, a newer rerun) does not count, so the next poll asks again."""
    ss = st.session_state
    if PENDING_KEY in ss:
        version = ss.pop(PENDING_KEY)
        now = time.time()
        ss[APPLIED_KEY], ss[APPLIED_AT_KEY] = version, (now, now - float(ss.get(RUN_START_KEY, now)))
        if st.query_params.get(LIVE_QUERY) != str(version):
            st.query_params[LIVE_QUERY] = str(version)  # last: the browser has all of this run once it has this


def drawn_by_browser(version: int) -> bool:
    """Whether this member's browser shows ``version`` (lesson.browser_shows over the session and its address)."""
    ss = st.session_state
    applied_at, run_s = ss.get(APPLIED_AT_KEY, (0.0, 0.0))
    reasked = ss.get(REASKED_KEY)
    drawn = Drawn(ss.get(APPLIED_KEY), applied_at, run_s, st.query_params.get(LIVE_QUERY),
                  reasks=reasked[1] if reasked and reasked[0] == version else 0)
    return browser_shows(version, drawn, time.time(), ACK_GRACE_S, MAX_REASK)


@st.cache_data(max_entries=64, show_spinner=False)
def _read_live_in(class_id: int, window: int) -> tuple[int, LiveState | None]:
    """The class's live state as read once in this time window (cached: shared by the process's students)."""
    return storage().read_live(class_id)


def shared_read(class_id: int) -> tuple[int, LiveState | None]:
    """The class's live state, read once per SHARED_READ_S by this process for all its students (60 students
    polling every second would otherwise be 60 reads a second; a cleared cache only costs one more read)."""
    return _read_live_in(class_id, int(time.time() / SHARED_READ_S))


def _poll(m: Member, current_key: str, live_now: bool) -> None:
    """Read the class's live state; follow it (settings, page) when the version grew or the page differs. Draws
    nothing: the banner is drawn by the full run that a change triggers."""
    ss = st.session_state
    try:
        version, state = shared_read(m.class_id)
    except LabError as err:  # said where the banner would be (a lost database must not look like "not following")
        render.show_error(err)
        return  # the next poll tries again
    ss[SEEN_KEY] = Seen(m.class_id, version, state)
    if (state is not None) != live_now:  # the class went live or ended: poll at the other pace, banner or not
        if state is None:
            ss[FOLLOW_KEY] = True  # a new lesson starts followed
        st.rerun(scope="app")
    if state is None:
        return
    _heartbeat(m)
    in_fragment_run = not ss.get(FULL_RUN_KEY)
    if following():
        if in_fragment_run:  # a poll: only ask for a full run when there is something new to draw
            asked = ss.get(ASKED_KEY)
            n = asked[1] + 1 if asked and asked[0] == version else 1
            if not drawn_by_browser(version) and n <= MAX_ASK:  # bounded: a page that stops never loops
                ss[ASKED_KEY] = (version, n)
                if ss.get(APPLIED_KEY) == version:  # drawn, but its browser does not say so: again (bounded)
                    reasked = ss.get(REASKED_KEY)
                    ss[REASKED_KEY] = (version, reasked[1] + 1 if reasked and reasked[0] == version else 1)
                st.rerun(scope="app")  # the page draws the teacher's settings, the vote's new phase
            if state.page != current_key:
                go(state.page)
        else:
            # Every full run copies the teacher's values before any widget is drawn, so the page always draws them:
            # a rerun the browser queued before this one carries its old widget values, which Streamlit applies at
            # the start of the run (copying only once per version left students on the old h for a whole move).
            for key, value in state.settings:
                if ss.get(key) != value:
                    ss[key] = value
            ss[PENDING_KEY] = version  # drawn once the page has run to its end (drawn(), from app.py)
            if state.page != current_key:
                go(state.page)
    if in_fragment_run and following() != ss.get(DRAWN_KEY):
        st.rerun(scope="app")  # exploring: the page's predictions are the student's own again
    if in_fragment_run and ss.get(BANNER_VERSION_KEY) != version:
        st.rerun(scope="app")  # exploring: the banner shows the teacher's new step


def _heartbeat(m: Member) -> None:
    """Tell the teacher this student is here (and whether following), at most every HEARTBEAT_S seconds."""
    ss = st.session_state
    now = time.time()
    if now - float(ss.get(BEAT_KEY, 0.0)) < HEARTBEAT_S:
        return
    try:
        storage().heartbeat(m, following())
    except LabError:
        return
    ss[BEAT_KEY] = now


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
    ss = st.session_state
    cached = ss.get(STEPS_KEY)
    if cached and cached[:2] == (m.class_id, state.lesson_started_at):
        return cached[2]
    try:
        n = len((storage().load_plan(m.class_id) or default_plan()).steps)
    except LabError:
        return None
    ss[STEPS_KEY] = (m.class_id, state.lesson_started_at, n)
    return n


def _on_explore() -> None:
    st.session_state[FOLLOW_KEY] = False
    st.session_state[BEAT_KEY] = 0.0  # tell the teacher at once


def _on_back() -> None:
    """One tap: follow again, and copy the teacher's state at once (the poll that follows the click applies it)."""
    ss = st.session_state
    ss[FOLLOW_KEY] = True
    ss[APPLIED_KEY] = None
    ss[BEAT_KEY] = 0.0


def banner(m: Member, state: LiveState) -> None:
    """"Following the teacher · step 3/9" with "Explore on my own", or "Back to the teacher" when exploring."""
    n = _steps_in(m, state)
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


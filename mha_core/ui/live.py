"""The live lesson's Streamlit side: the teacher's lesson plan and "Teach live", the presenter's bar (step, timer
against the plan, previous / next, who follows, the join code), following students' screens, and the class votes
that replace "predict first" while a class is live (Peer Instruction: vote, discuss, vote again, reveal).

How following works: the presenter writes the class's one ``LiveState`` row (``Storage.publish_live``) whenever
its step, page, followed settings or vote change; every member's session polls it in a fragment
(``FOLLOW_POLL_S``) and, when the version grew, copies the teacher's settings into its session state and switches
to the teacher's page (a full run). app.py calls ``frame`` before the sidebar's widgets are drawn, so a copied
value is set before its widget exists in that run (Streamlit refuses to set a widget's value after it is drawn).
The plan, the state and the votes' figures are pure code in ``mha_core.lesson``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace

import streamlit as st

from mha_core.charts import votes as vote_charts
from mha_core.classroom import Member, pretty
from mha_core.classroom.storage import DatabaseError
from mha_core.errors import LabError
from mha_core.lesson import (
    LESSON_PAGES,
    MAX_MINUTES,
    MAX_STEPS,
    Drawn,
    LiveState,
    Plan,
    Step,
    VoteState,
    ballot,
    browser_shows,
    default_plan,
    dropped,
    moved,
    retimed,
    shift,
    snapshot,
    tally,
    timer,
)
from mha_core.lesson.plan import QUIZ_PAGE
from mha_core.quiz.store import Unsent
from mha_core.ui import present, render, student
from mha_core.ui.classdb import storage
from mha_core.ui.i18n import bound_t, t
from mha_core.ui.join import join_link, qr_png, turnout
from mha_core.ui.nav import PAGES, spec

FOLLOW_POLL_S = 1.0   # a member's poll of the class's live state while the class is live
IDLE_POLL_S = 3.0     # a member's check whether the class went live
HEARTBEAT_S = 5.0     # a student's "I am here" at most this often (not every poll)
COUNT_POLL_S = 1.0    # the presenter's live count of votes and its clock
SHARED_READ_S = 0.3   # a process's students share one read of their class's live state for this long
RUNS_AT_ONCE = 1      # a process draws this many following students' full runs at a time (the rest wait)
TURN_WAIT_S = 30.0    # a run waits at most this long for its turn, then runs anyway
MAX_ASK = 10          # polls that ask for a full run to draw one version (a page that stops must not loop)
ACK_GRACE_S = 2.0     # after a full run drew a version, how long its browser may take to say so (LIVE_QUERY)
MAX_REASK = 3         # full runs asked again for one version its browser does not confirm
ON_TIME_S = 60.0      # within a minute of the plan counts as on time

# --- session keys (values, not widgets) ---
PRESENTER_KEY = "live_presenter"   # session: the Lesson this session presents (absent: not presenting)
PLAN_KEY = "live_plan"             # session: the Plan the presenter teaches
PUBLISHED_KEY = "live_published"   # session: (version, LiveState) the presenter published last
GOTO_KEY = "live_goto"             # session: the page the presenter's next full run switches to
PAGE_KEY = "live_page"             # session: the page of this run (the vote keys of render.predict)
FOLLOW_KEY = "live_follow"         # session: False once the student chose to explore on their own
SEEN_KEY = "live_seen"             # session: Seen, the class's live state as this member read it last
APPLIED_KEY = "live_applied"       # session: the version a full run of this member last drew to its end
APPLIED_AT_KEY = "_live_applied_at"  # session: (time.time() when that full run ended, its duration in s)
RUN_START_KEY = "_live_run_start"  # session: time.time() when this member's current full run began
REASKED_KEY = "_live_reasked"      # session: (version, times a poll asked to draw it again: not confirmed)
PENDING_KEY = "_live_pending"      # session: the version the current full run copied (APPLIED once it ends)
ASKED_KEY = "_live_asked"          # session: (version, times a poll asked for a full run to draw it)
BEAT_KEY = "live_beat"             # session: time.time() of the member's last heartbeat
STEPS_KEY = "live_steps"           # session: (class id, lesson start, number of steps) for the student's banner
VOTED_KEY = "live_voted"           # session: {(vote key, round): choice} of this student's stored votes
VOTES_READ_KEY = "_live_votes_read"  # session: (class id, vote keys whose stored votes of this student were read)
RESENT_KEY = "_live_resent"        # session: the unsent votes this session took back and sent again
EDIT_KEY = "live_edit"             # session: (class id, Plan) in the teacher's plan editor
FULL_RUN_KEY = "_live_full_run"    # session: True while frame's fragment runs inside a full run
DRAWN_KEY = "_live_drawn"          # session: whether the page was last drawn following (its votes or predictions)
BANNER_VERSION_KEY = "_live_banner_version"  # session: the live version the banner was last drawn from
FLASH_KEY = "live_flash"           # session: a LabError a live callback left, to show once
VOTE_FLASH_KEY = "live_vote_flash"  # session: a LabError of the student's last vote, to show under the vote
VOTE_FAILED_KEY = "live_vote_failed"  # session: True when the database failed the last send (offer "send again")
CONFLICT_KEY = "live_conflict"     # session: True once another window presented: this one shows, publishes nothing

# The class page's keys the projector reads or sets (teacher.py and classroom.py import this module, so they are
# named here; test_live_page holds them equal to the owners'):
TEACHER_KEY = "classroom_teacher"        # session: True after the right password (teacher.TEACHER_KEY)
TEACH_CODE_KEY = "classroom_teach_code"  # widget: the class the teacher looks at (teacher.TEACH_CODE_KEY)
ROLE_KEY = "classroom_role"              # widget: the student's or the teacher's view (classroom.ROLE_KEY)

# --- widget keys ---
ADD_PAGE_KEY = "live_add_page"                              # select box: the page a new step shows
ADD_KEY, SAVE_KEY, RESET_KEY = "live_plan_add", "live_plan_save", "live_plan_reset"  # plan buttons
START_KEY, RESUME_KEY = "live_start", "live_resume"          # buttons: teach live, resume the running lesson
PREV_KEY, NEXT_KEY, END_KEY = "live_prev", "live_next", "live_end"  # the presenter's bar
EXPLORE_KEY, BACK_KEY = "live_explore", "live_back"          # the student's banner
OPEN_KEY, CLOSE_KEY, AGAIN_KEY, REVEAL_KEY = "live_vote_open", "live_vote_close", "live_vote_again", "live_vote_reveal"
SEND_KEY = "live_vote_send"                                  # the student's "send my vote"
TAKE_OVER_KEY = "live_take_over"                             # the presenter's "take over" after a conflict
PROJECTOR_RESUME_KEY, PROJECTOR_LOGIN_KEY = "live_projector_resume", "live_projector_login"  # projector buttons
BAR_KEY, BANNER_KEY = "live_bar", "live_banner"              # containers (stable for browser tests)

# The address's parameter that says which live version this browser has drawn: written at the very end of a full
# run, after everything it drew, so a browser whose URL carries it received the whole run. Streamlit drops the rest
# of a full run that has just ended when a fragment's timer tick arrives before the run's messages were sent (the
# tick starts a new ScriptRunner and the old one's queued messages are ignored; app_session.py): the server then
# believes the page drawn while the browser still shows the old one. Every poll reads the browser's address, so
# such a student is asked for another full run instead of staying on the old h or the old page.
LIVE_QUERY = "live"
# The presenter's address names the class it presents (a class code is what the projector shows anyway), so a
# projector window whose session a reload or a restart lost still knows which lesson runs and can offer to resume.
LESSON_QUERY = "lesson"

# Widget values that survive switching pages (state.keep, by the class page that draws the plan editor): the page
# chosen for a new step.
KEPT: dict[str, object] = {ADD_PAGE_KEY: LESSON_PAGES[0]}

NEW_STEP_MINUTES = 5.0

# The process's votes the database did not take, by student id (bounded, thread-safe: mha_core.quiz.store.Unsent),
# so that a reload (a new session; the address keeps the student id) finds the choice and sends it again.
UNSENT = Unsent()


def _unsent_key(m: Member, vote: VoteState) -> str:
    return f"vote:{m.class_id}:{vote.key}:{vote.round}"


@dataclass(frozen=True)
class Lesson:
    """The class a presenter teaches live."""

    class_id: int
    code: str


@dataclass(frozen=True)
class Seen:
    """A member's last read of their class's live state."""

    class_id: int
    version: int
    state: LiveState | None


def minutes_key(i: int) -> str:
    """Widget key of step i's minutes in the plan editor."""
    return f"live_plan_min_{i}"


def step_button_key(action: str, i: int) -> str:
    """Widget key of step i's button in the plan editor: up, down, drop."""
    return f"live_plan_{action}_{i}"


def choice_key(vote: str, round_: int) -> str:
    """Widget key of the student's choice in a vote's round."""
    return f"live_choice_{vote}_{round_}"


def _flash(err: LabError) -> None:
    render.flash(FLASH_KEY, err)


def _clock(seconds: float) -> str:
    """m:ss (minutes may exceed 59)."""
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 60}:{seconds % 60:02d}"


def _minutes(value: float) -> str:
    """Minutes as written in the plan: 5, 2.5."""
    return f"{value:g}"


def _script(page: str) -> str:
    return spec(page).script


def _go(page: str) -> None:
    """Switch to ``page``, keeping the address's parameters (the class, the student, presenting)."""
    st.switch_page(_script(page), query_params=st.query_params.to_dict())


# --- who this session is in a live lesson ---

def presenting() -> bool:
    """This session presents a live lesson (app.py keeps its sidebar: the settings are what students follow)."""
    return isinstance(st.session_state.get(PRESENTER_KEY), Lesson)


def _member() -> Member | None:
    m = st.session_state.get(student.MEMBER_KEY)
    return m if isinstance(m, Member) else None


def following() -> bool:
    """This member follows the teacher (not exploring on their own)."""
    return bool(st.session_state.get(FOLLOW_KEY, True))


def _live_seen() -> LiveState | None:
    """The live state of the member's class as last read, when this session is still in that class."""
    seen, m = st.session_state.get(SEEN_KEY), _member()
    if not isinstance(seen, Seen) or m is None or seen.class_id != m.class_id:
        return None
    return seen.state


def _published() -> LiveState | None:
    pub = st.session_state.get(PUBLISHED_KEY)
    return pub[1] if pub else None


def active_vote_role() -> str | None:
    """"teacher" for the presenter, "student" for a following member of a live class, else None (render.predict
    then asks as usual)."""
    if presenting() and _published() is not None:
        return "teacher"
    if _member() is not None and following() and _live_seen() is not None:
        return "student"
    return None


def current_page() -> str:
    """The page this run shows (set by ``frame``)."""
    return str(st.session_state.get(PAGE_KEY, ""))


def check_questions() -> tuple[str, ...]:
    """On the lesson's check step, the question ids the quiz shows (for the presenter and following students)."""
    if presenting():
        state = _published()
    elif _member() is not None and following():
        state = _live_seen()
    else:
        state = None
    if state is None or state.page != QUIZ_PAGE:
        return ()
    return state.questions


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
    if presenting() or not following() or _live_seen() is None:
        yield
        return
    turns = _turns()
    got = turns.acquire(timeout=TURN_WAIT_S)
    try:
        yield
    finally:
        if got:
            turns.release()


# --- the frame: app.py's one call ---

def frame(current_key: str) -> None:
    """For app.py, once per run after navigation and before the sidebar: the presenter's bar and publishing; the
    follow poll and banner for a member of a class; nothing otherwise."""
    ss = st.session_state
    ss[PAGE_KEY] = current_key
    if presenting():
        _presenter(current_key)
        return
    if present.presenting():
        _projector()
    m = student.member()
    if m is None:
        return
    if not present.presenting() and st.query_params.get(student.STUDENT_PARAM) != m.key:
        st.query_params[student.STUDENT_PARAM] = m.key  # a reload or a restart finds the member (and their votes)
    ss[FULL_RUN_KEY] = True
    ss[RUN_START_KEY] = time.time()
    ss[DRAWN_KEY] = following()
    try:
        if isinstance(ss.get(SEEN_KEY), Seen) and ss[SEEN_KEY].class_id == m.class_id and ss[SEEN_KEY].state:
            _follow_live(m, current_key)
        else:
            _follow_idle(m, current_key)
    finally:
        ss[FULL_RUN_KEY] = False
    state = _live_seen()
    if state is None and LIVE_QUERY in st.query_params:  # the lesson ended: the address no longer follows one
        del st.query_params[LIVE_QUERY]
    if state is not None:  # drawn by the full run only: a poll that changes nothing draws nothing
        ss[BANNER_VERSION_KEY] = ss[SEEN_KEY].version
        _banner(m, state)


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


def _drawn_by_browser(version: int) -> bool:
    """Whether this member's browser shows ``version`` (lesson.browser_shows over the session and its address)."""
    ss = st.session_state
    applied_at, run_s = ss.get(APPLIED_AT_KEY, (0.0, 0.0))
    reasked = ss.get(REASKED_KEY)
    drawn = Drawn(ss.get(APPLIED_KEY), applied_at, run_s, st.query_params.get(LIVE_QUERY),
                  reasks=reasked[1] if reasked and reasked[0] == version else 0)
    return browser_shows(version, drawn, time.time(), ACK_GRACE_S, MAX_REASK)


# --- the presenter ---

def _publish(lesson: Lesson, state: LiveState, fresh: bool = False) -> bool:
    """Write the state for every follower; remember what was written. Compare-and-set on the version this window
    last saw (unless ``fresh``: a new lesson), so a stale window never moves the class back: False when another
    window presented since (this window then shows the class's state and publishes nothing until "take over")."""
    ss = st.session_state
    if ss.get(CONFLICT_KEY) and not fresh:
        return False
    seen = None if fresh or PUBLISHED_KEY not in ss else ss[PUBLISHED_KEY][0]
    version = storage().publish_live(lesson.class_id, state, seen)
    if version is None:
        _conflict(lesson)
        return False
    ss[PUBLISHED_KEY] = (version, state)
    return True


def _conflict(lesson: Lesson) -> None:
    """Another window presents this lesson: show the class's state (its page next) and say so; an ended lesson
    ends here too."""
    ss = st.session_state
    version, state = storage().read_live(lesson.class_id)
    if state is None:
        _stop()
        return
    ss[PUBLISHED_KEY] = (version, state)
    ss[CONFLICT_KEY] = True
    ss[GOTO_KEY] = state.page


def _on_take_over() -> None:
    """"Take over": present from this window again, from where the class is (its step, page and settings)."""
    ss = st.session_state
    lesson = ss.get(PRESENTER_KEY)
    if not isinstance(lesson, Lesson):
        return
    try:
        version, state = storage().read_live(lesson.class_id)
    except LabError as err:
        _flash(err)
        return
    if state is None:
        _stop()
        return
    for key, value in state.settings:  # a callback: before the sidebar's widgets are drawn
        ss[key] = value
    ss[PUBLISHED_KEY] = (version, state)
    ss[GOTO_KEY] = state.page
    ss.pop(CONFLICT_KEY, None)


def _step_state(plan: Plan, step: int, last: LiveState | None, now: float) -> LiveState:
    """The state of step ``step`` just begun (settings and lesson start carried over)."""
    s = plan.steps[step]
    return LiveState(step=step, page=s.page, settings=snapshot(st.session_state), vote=None, questions=s.questions,
                     step_started_at=now, lesson_started_at=last.lesson_started_at if last else now)


def _begin(lesson: Lesson, plan: Plan, state: LiveState) -> None:
    """This session presents ``lesson`` from ``state`` on: presentation mode, and its page next."""
    ss = st.session_state
    ss[PRESENTER_KEY], ss[PLAN_KEY] = lesson, plan
    ss[GOTO_KEY] = state.page
    ss.pop(CONFLICT_KEY, None)
    present.on_start()
    st.query_params[LESSON_QUERY] = lesson.code


def _on_start(lesson: Lesson) -> None:
    """"Teach live": the plan being edited is saved with the class (so every student and replica counts the same
    steps) and step 0 is published."""
    plan = _edited(lesson.class_id)
    try:
        storage().save_plan(lesson.class_id, plan)
        state = _step_state(plan, 0, None, time.time())
        _publish(lesson, state, fresh=True)
    except LabError as err:
        _flash(err)
        return
    _begin(lesson, plan, state)


def _on_resume(lesson: Lesson) -> None:
    """Take over the lesson that is running (e.g. after the teacher's browser reloaded), at its step."""
    try:
        version, state = storage().read_live(lesson.class_id)
        plan = storage().load_plan(lesson.class_id) or default_plan()
    except LabError as err:
        _flash(err)
        return
    if state is None:
        return
    for key, value in state.settings:  # where the class is: a fresh session (a restart) must not reset h, the sentence
        st.session_state[key] = value
    st.session_state[PUBLISHED_KEY] = (version, state)
    _begin(lesson, plan, state)


def _on_step(delta: int) -> None:
    """Previous / next step: publish the step's page (its clock starts now) and go there."""
    ss = st.session_state
    plan, last = ss[PLAN_KEY], _published()
    step = max(0, min(len(plan.steps) - 1, last.step + delta))
    if step == last.step:
        return
    state = _step_state(plan, step, last, time.time())
    try:
        if not _publish(ss[PRESENTER_KEY], state):
            return  # another window presents: this one now shows where the class is
    except LabError as err:
        _flash(err)
        return
    ss[GOTO_KEY] = state.page


def _on_end() -> None:
    """End the lesson: students stop following; this session stops presenting."""
    ss = st.session_state
    lesson = ss.get(PRESENTER_KEY)
    try:
        if isinstance(lesson, Lesson):
            storage().end_live(lesson.class_id)
    except LabError as err:
        _flash(err)
        return
    _stop()


def _stop() -> None:
    """This session stops presenting."""
    for key in (PRESENTER_KEY, PLAN_KEY, PUBLISHED_KEY, GOTO_KEY, CONFLICT_KEY):
        st.session_state.pop(key, None)
    st.query_params.pop(LESSON_QUERY, None)
    present.stop()


def _step_of(plan: Plan, page: str, step: int) -> int:
    """The step that shows ``page``: this one, else the next one that does, else the first; else unchanged."""
    order = [*range(step, len(plan.steps)), *range(0, step)]
    return next((i for i in order if plan.steps[i].page == page), step)


def _sync(current_key: str) -> None:
    """Publish when the page (the teacher navigated) or a followed setting changed; a vote ends with its page."""
    ss = st.session_state
    if ss.get(CONFLICT_KEY):  # another window presents: this one changes nothing until it takes over
        return
    lesson, plan, last = ss[PRESENTER_KEY], ss[PLAN_KEY], _published()
    new = last
    if current_key != last.page and current_key in LESSON_PAGES:
        step = _step_of(plan, current_key, last.step)
        questions = plan.steps[step].questions if plan.steps[step].page == current_key else ()
        new = replace(new, step=step, page=current_key, vote=None, questions=questions,
                      step_started_at=time.time() if step != last.step else last.step_started_at)
    settings = snapshot(ss)
    if settings != new.settings:
        new = replace(new, settings=settings)
    if new != last:
        _publish(lesson, new)


def _presenter(current_key: str) -> None:
    ss = st.session_state
    lesson = ss[PRESENTER_KEY]
    goto = ss.pop(GOTO_KEY, None)
    if goto is not None and goto != current_key:
        _go(goto)
    if _published() is None:  # lost its state (should not happen): read it back
        try:
            version, state = storage().read_live(lesson.class_id)
        except LabError as err:
            render.show_error(err)
            return
        if state is None:  # ended elsewhere
            _on_end()
            return
        ss[PUBLISHED_KEY] = (version, state)
    try:
        _sync(current_key)
    except LabError as err:
        render.show_error(err)
    if not presenting():  # the lesson ended in another window
        st.rerun()
    if ss.get(GOTO_KEY, current_key) != current_key:  # another window moved the class: show its page
        st.rerun()
    render.show_flash(FLASH_KEY)
    plan, state = ss[PLAN_KEY], _published()
    stale = bool(ss.get(CONFLICT_KEY))
    with st.container(border=True, key=BAR_KEY):
        if stale:
            _other_window(plan, state)
        _presenter_clock(lesson, current_key)
        turnout(lesson.class_id)  # joined and voted: a flood of fake students shows on the projector
        cols = st.columns([1, 1, 1, 1])
        cols[0].button(t("live.prev"), key=PREV_KEY, icon=":material/skip_previous:", on_click=_on_step,
                       args=(-1,), disabled=stale or state.step == 0, width="stretch")
        last_step = state.step >= len(plan.steps) - 1
        cols[1].button(t("live.next"), key=NEXT_KEY, icon=":material/skip_next:", type="primary", on_click=_on_step,
                       args=(1,), disabled=stale or last_step, width="stretch")
        with cols[2].popover(t("live.join_button"), icon=":material/qr_code_2:", width="stretch"):
            _join(lesson, qr_width=260)
        cols[3].button(t("live.end"), key=END_KEY, icon=":material/stop_circle:", on_click=_on_end,
                       width="stretch")
    if state.step == 0:  # while students arrive
        with st.container(border=True):
            _join(lesson, qr_width=300)


def _other_window(plan: Plan, state: LiveState) -> None:
    """Another window presents: where the class is, and the explicit "take over"."""
    left, right = st.columns([3, 1], vertical_alignment="center")
    left.warning(t("live.other_window", i=state.step + 1, n=len(plan.steps), page=t(f"nav.{state.page}")),
                 icon=":material/devices:")
    right.button(t("live.take_over"), key=TAKE_OVER_KEY, type="primary", icon=":material/swap_horiz:",
                 on_click=_on_take_over, width="stretch", help=t("live.take_over_help"))


def _projector_class() -> tuple[Lesson, LiveState] | None:
    """The class whose live lesson this projector window presented (its address, else the logged-in teacher's
    class) when that lesson still runs."""
    ss = st.session_state
    code = st.query_params.get(LESSON_QUERY) or (ss.get(TEACH_CODE_KEY) if ss.get(TEACHER_KEY) else None)
    if not code:
        return None
    try:
        info = storage().find_class(str(code))
        state = storage().read_live(info.id)[1]
    except LabError:  # a stale or mistyped address, or no database: nothing to resume here
        return None
    return None if state is None else (Lesson(info.id, info.code), state)


def _projector() -> None:
    """The projector (presentation mode) while its class's live lesson runs but this session does not present it
    (a reload or a restart lost the session): say so, since its Next would move only this screen, and offer to
    resume (the logged-in teacher at once; else log in on the class page, whose plan offers to take over)."""
    found = _projector_class()
    if found is None:
        return
    lesson, state = found
    with st.container(border=True):
        st.warning(t("live.projector_running", code=pretty(lesson.code), i=state.step + 1,
                     page=t(f"nav.{state.page}")), icon=":material/cast:")
        if st.session_state.get(TEACHER_KEY):
            st.button(t("live.projector_resume"), key=PROJECTOR_RESUME_KEY, type="primary",
                      icon=":material/play_arrow:", on_click=_on_resume, args=(lesson,))
        elif st.button(t("live.projector_login"), key=PROJECTOR_LOGIN_KEY, type="primary", icon=":material/key:",
                       help=t("live.projector_login_help")):
            ss = st.session_state
            ss[ROLE_KEY], ss[TEACH_CODE_KEY] = "teacher", lesson.code
            present.stop()
            _go("classroom")
        render.show_flash(FLASH_KEY)


def _join(lesson: Lesson, qr_width: int) -> None:
    """The join code and QR code (teacher's helpers), side by side."""

    link = join_link(lesson.code)
    left, right = st.columns([3, 2], vertical_alignment="center")
    with left:
        st.caption(t("classroom.join_code"))
        st.header(pretty(lesson.code), anchor=False)
        st.code(link, language=None)
    right.image(qr_png(link), width=qr_width)


@st.fragment(run_every=COUNT_POLL_S)
def _presenter_clock(lesson: Lesson, current_key: str) -> None:
    """Step, timer against the plan and who follows; ticks every second (and publishes a late setting change)."""
    ss = st.session_state
    if not presenting():
        return
    stale = bool(ss.get(CONFLICT_KEY))
    try:
        _sync(current_key)
        if presenting() and not ss.get(CONFLICT_KEY) and storage().read_live(lesson.class_id)[0] != \
                ss[PUBLISHED_KEY][0]:  # another window presented since: say so now, not at the next click
            _conflict(lesson)
        following_n, present_n = storage().presence(lesson.class_id)
    except LabError as err:
        render.show_error(err)
        following_n = present_n = None
    if not presenting() or bool(ss.get(CONFLICT_KEY)) != stale:
        st.rerun(scope="app")  # the whole bar and page change: ended, or another window presents
    plan, state = ss[PLAN_KEY], _published()
    step = min(state.step, len(plan.steps) - 1)
    clock = timer(plan, step, state.step_started_at, state.lesson_started_at, time.time())
    cols = st.columns([3, 3, 2], vertical_alignment="center")
    cols[0].markdown(t("live.step_of", i=step + 1, n=len(plan.steps), page=t(f"nav.{plan.steps[step].page}")))
    if state.page != plan.steps[step].page:
        cols[0].caption(t("live.off_plan", page=t(f"nav.{state.page}")))
    step_line = t("live.timer_step", elapsed=_clock(clock.step_elapsed_s), planned=_clock(clock.step_planned_s))
    lesson_line = t("live.timer_lesson", elapsed=_clock(clock.lesson_elapsed_s),
                    planned=_clock(clock.lesson_planned_s))
    cols[1].markdown(f"{step_line}  \n{lesson_line}")
    behind = clock.behind_s
    if behind > ON_TIME_S:
        cols[1].markdown(f":orange[{t('live.behind', minutes=round(behind / 60))}]")
    elif behind < -ON_TIME_S:
        cols[1].markdown(f":blue[{t('live.ahead', minutes=round(-behind / 60))}]")
    else:
        cols[1].markdown(f":green[{t('live.on_time')}]")
    if present_n is not None:
        cols[2].metric(t("live.following_label"), t("live.following", x=following_n, y=present_n))


# --- the student ---

@st.cache_data(max_entries=64, show_spinner=False)
def _read_live_in(class_id: int, window: int) -> tuple[int, LiveState | None]:
    """The class's live state as read once in this time window (cached: shared by the process's students)."""
    return storage().read_live(class_id)


def _read_live(class_id: int) -> tuple[int, LiveState | None]:
    """The class's live state, read once per SHARED_READ_S by this process for all its students (60 students
    polling every second would otherwise be 60 reads a second; a cleared cache only costs one more read)."""
    return _read_live_in(class_id, int(time.time() / SHARED_READ_S))


def _poll(m: Member, current_key: str, live_now: bool) -> None:
    """Read the class's live state; follow it (settings, page) when the version grew or the page differs. Draws
    nothing: the banner is drawn by the full run that a change triggers."""
    ss = st.session_state
    try:
        version, state = _read_live(m.class_id)
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
            if not _drawn_by_browser(version) and n <= MAX_ASK:  # bounded: a page that stops never loops
                ss[ASKED_KEY] = (version, n)
                if ss.get(APPLIED_KEY) == version:  # drawn, but its browser does not say so: again (bounded)
                    reasked = ss.get(REASKED_KEY)
                    ss[REASKED_KEY] = (version, reasked[1] + 1 if reasked and reasked[0] == version else 1)
                st.rerun(scope="app")  # the page draws the teacher's settings, the vote's new phase
            if state.page != current_key:
                _go(state.page)
        else:
            # Every full run copies the teacher's values before any widget is drawn, so the page always draws them:
            # a rerun the browser queued before this one carries its old widget values, which Streamlit applies at
            # the start of the run (copying only once per version left students on the old h for a whole move).
            for key, value in state.settings:
                if ss.get(key) != value:
                    ss[key] = value
            ss[PENDING_KEY] = version  # drawn once the page has run to its end (drawn(), from app.py)
            if state.page != current_key:
                _go(state.page)
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
def _follow_live(m: Member, current_key: str) -> None:
    """The class is live: poll every FOLLOW_POLL_S seconds and show the banner."""
    _poll(m, current_key, live_now=True)


@st.fragment(run_every=IDLE_POLL_S)
def _follow_idle(m: Member, current_key: str) -> None:
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


def _banner(m: Member, state: LiveState) -> None:
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


# --- the class vote (render.predict delegates here while a class is live) ---

def _on_vote(vote: VoteState | None) -> None:
    """The presenter moves the vote: open, close and show the histogram, vote again, reveal."""
    ss = st.session_state
    last = _published()
    if last is None:
        return
    try:
        _publish(ss[PRESENTER_KEY], replace(last, vote=vote))
    except LabError as err:
        _flash(err)


def vote_box(key: str, prompt: str, options: Sequence[str], answer: int, explanation: str) -> None:
    """The class vote on this prediction: the presenter's controls and figures, or the student's ballot."""
    with st.container(border=True, key=f"live_vote_{key.replace('.', '_')}"):
        st.markdown(f"**{t('live.vote_title')}** {prompt}")
        if active_vote_role() == "teacher":
            _teacher_vote(key, tuple(options), answer, explanation)
        else:
            _student_vote(key, tuple(options), answer, explanation)


def _teacher_vote(key: str, options: tuple[str, ...], answer: int, explanation: str) -> None:
    ss = st.session_state
    last = _published()
    vote = last.vote
    if vote is not None and vote.key != key:
        if vote.key.startswith(f"{current_page()}."):  # the settings changed the question: its vote ends
            try:
                _publish(ss[PRESENTER_KEY], replace(last, vote=None))
            except LabError as err:
                render.show_error(err)
        vote = None
    st.markdown("\n".join(f"{i + 1}. {o}" for i, o in enumerate(options)))
    render.show_flash(FLASH_KEY)
    if vote is None:
        st.button(t("live.vote_open"), key=OPEN_KEY, type="primary", icon=":material/how_to_vote:",
                  on_click=_on_vote, args=(VoteState(key, 1, "open", answer, len(options)),))
        return
    if vote.phase == "open":
        _vote_count(ss[PRESENTER_KEY], key, vote.round)
        st.button(t("live.vote_close"), key=CLOSE_KEY, type="primary", icon=":material/bar_chart:",
                  on_click=_on_vote, args=(replace(vote, phase="histogram"),))
        return
    try:
        rows = storage().votes(ss[PRESENTER_KEY].class_id, key)
    except LabError as err:
        render.show_error(err)
        return
    revealed = vote.phase == "revealed"
    counts = tally(rows, key, vote.round, len(options))
    st.caption(t("live.vote_round", round=vote.round, n=sum(counts)))
    if vote.round == 1:
        render.chart(vote_charts.histogram, counts, options, answer=answer if revealed else None,
                     count_title=t("live.votes_axis"))
    else:
        _moved(rows, key, options, answer, revealed)
    cols = st.columns(2)
    if vote.round == 1 and not revealed:
        cols[0].button(t("live.vote_again"), key=AGAIN_KEY, icon=":material/forum:", width="stretch",
                       on_click=_on_vote, args=(replace(vote, round=2, phase="open"),),
                       help=t("live.vote_again_help"))
    if not revealed:
        cols[1].button(t("live.vote_reveal"), key=REVEAL_KEY, type="primary", icon=":material/visibility:",
                       width="stretch", on_click=_on_vote, args=(replace(vote, phase="revealed"),))
        return
    st.success(t("live.vote_answer", answer=options[answer]), icon=":material/check_circle:")
    st.markdown(explanation)


def _moved(rows: Sequence, key: str, options: tuple[str, ...], answer: int, revealed: bool) -> None:
    """After the vote again: both rounds side by side, the share right before → after, and who moved where."""
    sh = shift(rows, key, len(options), answer)
    render.chart(vote_charts.shift_bars, sh.before, sh.after, options,
                 round_titles=(t("live.round_1"), t("live.round_2")), count_title=t("live.votes_axis"))
    if revealed:
        share = "–" if sh.right_before is None else f"{sh.right_before:.0%}"
        after = "–" if sh.right_after is None else f"{sh.right_after:.0%}"
        st.metric(t("live.right_share"), f"{share} → {after}")
    numbered = [f"{i + 1}" for i in range(len(options))]
    columns: dict[str, list] = {t("live.moved_from"): numbered}
    for j, name in enumerate(numbered):
        columns[t("live.moved_to", option=name)] = [sh.moved[i][j] for i in range(len(options))]
    st.caption(t("live.moved_caption"))
    render.table(columns, decimals=0)


@st.fragment(run_every=COUNT_POLL_S)
def _vote_count(lesson: Lesson, key: str, round_: int) -> None:
    """"12 of 30 voted", live."""
    try:
        voted = sum(1 for r in storage().votes(lesson.class_id, key) if r.round == round_)
        _, present_n = storage().presence(lesson.class_id)
    except LabError as err:
        render.show_error(err)
        return
    st.metric(t("live.voted_label"), t("live.voted", x=voted, y=max(present_n, voted)))


def _on_send(m: Member, vote: VoteState) -> None:
    """Send the student's vote; on trouble keep the choice and say why (it can be sent again)."""
    ss = st.session_state
    ck = choice_key(vote.key, vote.round)
    if ss.get(ck) is None:  # the button is disabled until a choice is made
        return
    try:
        choice = ballot(ss[ck], vote.n_options)  # a forged websocket value: a clear message, nothing stored
        storage().cast_vote(m, vote.key, vote.round, choice, choice == vote.answer)
    except LabError as err:  # DatabaseError included: nothing stored, the choice stays to send again
        render.flash(VOTE_FLASH_KEY, err)
        ss[VOTE_FAILED_KEY] = isinstance(err, DatabaseError)
        if isinstance(err, DatabaseError):
            UNSENT.keep(m.key, _unsent_key(m, vote), choice)  # a reload finds it (and sends it again)
        else:
            UNSENT.sent(m.key, _unsent_key(m, vote))  # refused: never to be sent
        if err.key == "vote_choice_bad":
            ss[ck] = None  # not an option: the ballot is empty again
        return
    UNSENT.sent(m.key, _unsent_key(m, vote))
    ss[VOTE_FAILED_KEY] = False
    ss.setdefault(VOTED_KEY, {})[(vote.key, vote.round)] = choice


def _stored_votes(m: Member | None, key: str) -> dict:
    """This student's votes {(vote key, round): choice}: the session's, with the database's for this vote read
    once per session (a reload or a restart starts a new session, and the vote is stored)."""
    ss = st.session_state
    voted: dict = ss.setdefault(VOTED_KEY, {})
    if m is None:
        return voted
    read = ss.get(VOTES_READ_KEY)
    if not read or read[0] != m.class_id:
        read = (m.class_id, frozenset())
    if key in read[1]:
        return voted
    try:
        rows = storage().votes(m.class_id, key, m.student_id)
    except LabError:  # no database now: the next run reads again
        return voted
    for r in rows:
        voted.setdefault((r.vote_key, r.round), r.choice)
    ss[VOTES_READ_KEY] = (m.class_id, read[1] | {key})
    return voted


def _resend_unsent(m: Member, vote: VoteState) -> bool:
    """A vote this process keeps unsent for the student (the database failed, then perhaps a reload) is on the
    ballot and sent again, once per session. True while it is still unsent (the ballot says so)."""
    ss = st.session_state
    ukey, ck = _unsent_key(m, vote), choice_key(vote.key, vote.round)
    kept = UNSENT.of(m.key).get(ukey)
    if kept is None:
        return False
    if ss.get(ck) is None:  # before the radio is drawn in this run
        ss[ck] = kept
    resent: set = ss.setdefault(RESENT_KEY, set())
    if ukey not in resent:
        resent.add(ukey)
        _on_send(m, vote)
    unsent = UNSENT.of(m.key).get(ukey) is not None
    if unsent:
        ss[VOTE_FAILED_KEY] = True
    return unsent


def _student_vote(key: str, options: tuple[str, ...], answer: int, explanation: str) -> None:
    ss = st.session_state
    state, m = _live_seen(), _member()
    vote = state.vote if state is not None and state.vote is not None and state.vote.key == key else None
    voted: dict = _stored_votes(m, key) if vote is not None else ss.setdefault(VOTED_KEY, {})
    if vote is None:
        st.radio(t("common.predict_pick"), range(len(options)), index=None, key=choice_key(key, 0),
                 format_func=list(options).__getitem__, label_visibility="collapsed", disabled=True)
        st.info(t("live.vote_wait_open"), icon=":material/hourglass_top:")
        return
    ck = choice_key(key, vote.round)
    mine = voted.get((key, vote.round))
    if ck not in ss and mine is not None:
        ss[ck] = mine
    is_open = vote.phase == "open"
    unsent = is_open and m is not None and mine is None and _resend_unsent(m, vote)
    mine = voted.get((key, vote.round))
    st.radio(t("common.predict_pick"), range(len(options)), index=None, key=ck,
             format_func=list(options).__getitem__, label_visibility="collapsed", disabled=not is_open)
    if vote.round == 2 and is_open:
        st.caption(t("live.vote_round_2"))
    if is_open:
        failed = bool(ss.get(VOTE_FAILED_KEY))
        label = t("live.vote_send_again") if failed else t("live.vote_send")
        st.button(label, key=SEND_KEY, type="primary", icon=":material/send:", on_click=_on_send,
                  args=(m, vote), disabled=m is None or ss.get(ck) is None)
        render.show_flash(VOTE_FLASH_KEY)
        if unsent:
            st.warning(t("live.vote_unsent"), icon=":material/cloud_off:")
        if mine is not None and not failed:
            st.success(t("live.vote_in"), icon=":material/how_to_reg:")
        return
    if vote.phase != "revealed":
        st.info(t("live.vote_closed_wait") if mine is not None else t("live.vote_missed"), icon=":material/cast:")
        return
    given = voted.get((key, 2), voted.get((key, 1)))
    if given is None:
        st.info(t("live.vote_none", answer=options[answer]), icon=":material/lightbulb:")
    elif given == answer:
        st.success(t("common.predict_right", answer=options[answer]), icon=":material/check_circle:")
    else:
        st.warning(t("common.predict_wrong", answer=options[answer]), icon=":material/lightbulb:")
    st.markdown(explanation)


# --- the teacher's plan (class page) ---

def _edited(class_id: int) -> Plan:
    """The plan in the editor for this class: as edited in this session, else the saved one, else the default."""
    ss = st.session_state
    edit = ss.get(EDIT_KEY)
    if edit and edit[0] == class_id:
        return edit[1]
    try:
        plan = storage().load_plan(class_id) or default_plan()
    except LabError as err:
        _flash(err)
        plan = default_plan()
    ss[EDIT_KEY] = (class_id, plan)
    return plan


def _set_edited(class_id: int, plan: Plan) -> None:
    st.session_state[EDIT_KEY] = (class_id, plan)


def _on_move(class_id: int, i: int, delta: int) -> None:
    _set_edited(class_id, moved(_edited(class_id), i, delta))


def _on_drop(class_id: int, i: int) -> None:
    try:
        _set_edited(class_id, dropped(_edited(class_id), i))
    except LabError as err:
        _flash(err)


def _on_retime(class_id: int, i: int) -> None:
    try:
        _set_edited(class_id, retimed(_edited(class_id), i, float(st.session_state[minutes_key(i)])))
    except (LabError, TypeError, ValueError) as err:
        _flash(err if isinstance(err, LabError) else LabError("lesson_minutes_bad", max_minutes=MAX_MINUTES))


def _on_add(class_id: int) -> None:
    plan = _edited(class_id)
    page = st.session_state.get(ADD_PAGE_KEY) or LESSON_PAGES[0]
    if len(plan.steps) >= MAX_STEPS:
        return
    check = next((s.questions for s in default_plan().steps if s.page == QUIZ_PAGE), ()) if page == QUIZ_PAGE else ()
    _set_edited(class_id, Plan((*plan.steps, Step(page, NEW_STEP_MINUTES, check))))


def _on_reset(class_id: int) -> None:
    _set_edited(class_id, default_plan())


def _on_save(class_id: int) -> None:
    try:
        storage().save_plan(class_id, _edited(class_id))
    except LabError as err:
        _flash(err)
        return
    st.toast(t("live.plan_saved"), icon=":material/save:")


def plan_card(class_id: int, code: str) -> None:
    """For the teacher's view: the class's lesson plan (reorder, drop, retime, add, reset, save) and Teach live."""
    ss = st.session_state
    plan = _edited(class_id)
    lesson = Lesson(class_id, code)
    bound = bound_t()
    shown = [p.key for p in PAGES if p.key in LESSON_PAGES]
    with st.container(border=True, key="live_plan"):
        st.subheader(t("live.plan_title"), anchor=False)
        st.caption(t("live.plan_lead"))
        n = len(plan.steps)
        for i, s in enumerate(plan.steps):
            cols = st.columns([0.5, 4, 2, 0.7, 0.7, 0.7], vertical_alignment="center")
            cols[0].markdown(f"**{i + 1}**")
            name = t(f"nav.{s.page}")
            if s.questions:
                name = t("live.check_step", page=name, n=len(s.questions))
            cols[1].markdown(name)
            ss[minutes_key(i)] = float(s.minutes)
            cols[2].number_input(t("live.minutes"), min_value=0.5, max_value=float(MAX_MINUTES), step=0.5,
                                 key=minutes_key(i), on_change=_on_retime, args=(class_id, i),
                                 label_visibility="collapsed", format="%g")
            cols[3].button("", key=step_button_key("up", i), icon=":material/arrow_upward:", disabled=i == 0,
                           on_click=_on_move, args=(class_id, i, -1), help=t("live.up"))
            cols[4].button("", key=step_button_key("down", i), icon=":material/arrow_downward:",
                           disabled=i == n - 1, on_click=_on_move, args=(class_id, i, 1), help=t("live.down"))
            cols[5].button("", key=step_button_key("drop", i), icon=":material/delete:", disabled=n == 1,
                           on_click=_on_drop, args=(class_id, i), help=t("live.drop"))
        st.markdown(t("live.plan_total", minutes=_minutes(plan.total_minutes()), n=n))
        add = st.columns([3, 2], vertical_alignment="bottom")
        if ss.get(ADD_PAGE_KEY) not in shown:
            ss[ADD_PAGE_KEY] = shown[0]
        add[0].selectbox(t("live.add_page"), shown, key=ADD_PAGE_KEY, format_func=lambda k: bound(f"nav.{k}"))
        add[1].button(t("live.add"), key=ADD_KEY, icon=":material/add:", on_click=_on_add, args=(class_id,),
                      disabled=n >= MAX_STEPS, width="stretch")
        row = st.columns(3)
        row[0].button(t("live.save"), key=SAVE_KEY, icon=":material/save:", on_click=_on_save, args=(class_id,),
                      width="stretch")
        row[1].button(t("live.reset"), key=RESET_KEY, icon=":material/restart_alt:", on_click=_on_reset,
                      args=(class_id,), width="stretch")
        row[2].button(t("live.start"), key=START_KEY, type="primary", icon=":material/cast_for_education:",
                      on_click=_on_start, args=(lesson,), width="stretch", help=t("live.start_help"))
        try:
            running = storage().read_live(class_id)[1]
        except LabError:
            running = None
        if running is not None and not presenting():
            st.info(t("live.running", step=running.step + 1, page=t(f"nav.{running.page}")), icon=":material/cast:")
            st.button(t("live.resume"), key=RESUME_KEY, icon=":material/play_arrow:", on_click=_on_resume,
                      args=(lesson,))
        render.show_flash(FLASH_KEY)

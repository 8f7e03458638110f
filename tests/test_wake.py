"""A class of 60 at once: the watchlist's decisions (pure); a real server that wakes a student who never polls (this
test's client runs no fragment timer) the moment the teacher moves; and a ballot that votes without a full run."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TypeVar
from urllib.parse import parse_qs, urlencode

import pytest
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.runtime.app_session import AppSessionState

from harness.server import start_server, stop_server
from harness.websocket_client import DEFAULT_PAGE, Student, rerun_request, widget_key
from mha_core.classroom import Storage, sqlite_url
from mha_core.lesson import LiveState, VoteState, default_plan, snapshot
from mha_core.lesson.store import publish_live, save_plan
from mha_core.lesson.wake import Watchlist
from mha_core.quiz.progress_store import new_student_id
from mha_core.settings import H_DIV, SETTINGS
from mha_core.ui.live.keys import LIVE_QUERY, SEND_KEY, choice_key
from mha_core.ui.live.wake import _rerun_if_idle
from mha_core.ui.nav import ROOT, spec

T = TypeVar("T")


def test_a_grown_version_makes_every_session_of_that_class_due():
    w = Watchlist(forget_s=5)
    w.seen(1, "a", 0.0, None)
    w.seen(1, "b", 0.0, None)
    w.seen(2, "c", 0.0, None)
    assert w.classes(1.0) == [1, 2]
    w.grown(1, 7)                      # the first read only learns where the class is
    w.grown(2, 3)
    assert w.due() == []
    w.grown(1, 7)                      # unchanged
    assert w.due() == []
    w.grown(1, 8)
    assert w.due() == ["a", "b"] and w.version(1) == 8


def test_a_due_session_stays_due_until_woken_or_it_reports_the_version_drawn():
    w = Watchlist(forget_s=5)
    for s in ("a", "b", "c"):
        w.seen(1, s, 0.0, 4)
    w.grown(1, 4)
    w.grown(1, 5)
    w.woken("a")                       # asked for a full run
    w.seen(1, "b", 0.5, 5)             # drew 5 on its own (a poll was first)
    w.seen(1, "c", 0.5, 4)             # still on 4: stays due
    assert w.due() == ["c"]


def test_a_session_behind_the_version_first_read_is_due_whichever_came_first():
    """A move published between a session's report and the watcher's first read of its class woke no one (the first
    read only learned the version; the tests' student, which runs no poll timer, waited forever): a session that
    reported drawing an older version than one read is due, whether it reported before or after that read."""
    w = Watchlist(forget_s=5)
    w.seen(1, "before", 0.0, 4)        # drew 4, then the teacher published 5 ...
    w.seen(1, "unknown", 0.0, None)    # polled, never drew a live version: its poll draws it
    w.grown(1, 5)                      # ... before the watcher's first read of class 1
    assert w.due() == ["before"]
    w.seen(1, "after", 0.2, 4)         # reports drawing 4 after 5 was read: no growth will come for it
    w.seen(1, "current", 0.2, 5)
    assert w.due() == ["after", "before"]
    w.seen(1, "before", 0.4, 5)
    w.woken("after")
    assert w.due() == []


def test_sessions_that_stop_reporting_explore_or_change_class_are_not_woken():
    w = Watchlist(forget_s=5)
    w.seen(1, "gone", 0.0, None)
    w.seen(1, "exploring", 0.0, None)
    w.seen(1, "moved", 0.0, None)
    w.seen(1, "here", 4.0, None)
    w.grown(1, 1)
    w.left("exploring")
    w.seen(2, "moved", 4.0, None)
    assert w.classes(6.0) == [1, 2]    # "gone" last reported 6 s ago
    w.grown(1, 2)
    assert w.due() == ["here"]
    w.left("here")
    assert w.classes(20.0) == [] and w.version(1) is None


def test_a_session_silent_after_drawing_is_woken_once_per_version():
    """A following session polls every few seconds; one that drew a version and then said nothing for silent_s lost
    its poll's timer (Streamlit dropped the end of its run): it is woken once for that version, not again."""
    w = Watchlist(forget_s=100, silent_s=6)
    w.seen(1, "quiet", 0.0, 4)
    w.seen(1, "polling", 0.0, 4)
    w.seen(1, "new", 0.0, None)        # never drew a live version: the next move wakes it
    w.grown(1, 4)
    w.seen(1, "polling", 5.0, 4)
    assert w.silent(5.9) == []
    assert w.silent(7.0) == ["quiet"]
    w.rescue("quiet")
    assert w.silent(12.0) == ["polling"]   # quiet was woken for version 4 already
    w.rescue("polling")
    w.seen(1, "quiet", 13.0, 5)            # drew the next version, then went quiet again
    assert w.silent(20.0) == ["quiet"]
    w.left("quiet")
    assert w.silent(30.0) == []


async def _followed(student: Student, version: int, timeout: float) -> float | None:
    """Seconds until a full run the client never asked for ends with the address saying ``version`` is drawn."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        try:
            fm = await student.receive(timeout=max(0.1, timeout - (time.perf_counter() - t0)))
        except TimeoutError:
            return None
        if fm.WhichOneof("type") == "page_info_changed":
            student.query = {k: v[0] for k, v in parse_qs(fm.page_info_changed.query_string).items()}
        if (fm.WhichOneof("type") == "script_finished" and fm.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN
                and student.query.get(LIVE_QUERY) == str(version)):
            return time.perf_counter() - t0
    return None


def _live_class(tmp_path) -> tuple[str, Storage, object, str, dict, LiveState, int]:  # noqa: ANN001
    """A class with one student (its key) following a lesson on its first page: (url, store, class, key, settings,
    state, version)."""
    url = sqlite_url(tmp_path / "class.db")
    store = Storage.open(url)
    info = store.create_class()
    save_plan(store, info.id, default_plan())
    key = secrets.token_hex(16)
    store.join(info.code, key, "Ada")
    values = {s.key: s.default for s in SETTINGS if s.default is not None}
    now = time.time()
    state = LiveState(step=0, page=default_plan().steps[0].page, settings=snapshot(values), step_started_at=now,
                      lesson_started_at=now)
    return url, store, info, key, values, state, publish_live(store, info.id, state)


def _as_student(url: str, store: Storage, code: str, key: str, body: Callable[[Student], Awaitable[T]]) -> T:
    """``body(student)`` for the student ``key`` of class ``code``, connected to a fresh server on the class store at
    ``url``; the student closed, the server stopped and the store closed whatever happens."""
    proc, base = start_server(env={"MHA_DATABASE_URL": url})

    async def session() -> T:
        student = Student(base, new_student_id(), {"class": code, "student": key})
        await student.connect()
        try:
            return await body(student)
        finally:
            await student.close()

    try:
        return asyncio.run(session())
    finally:
        stop_server(proc)
        store.dispose()


@pytest.mark.e2e
def test_a_following_student_who_never_polls_draws_the_teachers_move_at_once(tmp_path):
    url, store, info, key, values, state, first = _live_class(tmp_path)

    async def lesson(student: Student) -> tuple[float | None, str | None]:
        await student.run(DEFAULT_PAGE)          # joins and follows: its poll registers it with the watcher
        await asyncio.sleep(1.0)                 # the watcher reads the class once (where it is now)
        values[H_DIV.key] = 2
        moved = publish_live(store, info.id, replace(state, settings=snapshot(values)))
        assert moved == first + 1
        return await _followed(student, moved, timeout=5.0), student.query.get(LIVE_QUERY)

    took, shown = _as_student(url, store, info.code, key, lesson)
    # No fragment timer ran, so no poll: only the server's push can have drawn it (the watcher reads every 0.1 s).
    assert took is not None, f"the student was never woken (address says live={shown})"
    assert took < 2.0


@pytest.mark.e2e
def test_a_following_student_whose_poll_stopped_is_redrawn_once(tmp_path):
    """This test's client runs no fragment timer, as a browser whose full run lost its end (and with it the poll's
    timer) runs none: after SILENT_S without a report the watcher asks for one full run, which redraws the page."""
    from mha_core.ui.live.wake import SILENT_S
    url, store, info, key, _, _, first = _live_class(tmp_path)

    async def lesson(student: Student) -> tuple[float | None, float | None]:
        await student.run(DEFAULT_PAGE)              # joins, follows and draws the lesson's first version
        assert student.query.get(LIVE_QUERY) == str(first)
        return (await _followed(student, first, timeout=SILENT_S + 4),
                await _followed(student, first, timeout=SILENT_S + 1))

    redrawn, again = _as_student(url, store, info.code, key, lesson)
    assert redrawn is not None and SILENT_S - 1 < redrawn < SILENT_S + 4, redrawn
    assert again is None  # once per version


@pytest.mark.e2e
def test_choosing_and_sending_a_vote_reruns_only_the_ballot(tmp_path):
    """A full run waits its turn behind every classmate's redraw; the ballot's own reruns (a fragment) do not."""
    url, store, info, key, _, state, _ = _live_class(tmp_path)

    async def vote(student: Student) -> tuple[list[int], list]:
        first = await student.run(DEFAULT_PAGE)
        ballot = next(k for k in first.widgets if k.startswith("live_choice_") and k.endswith("_0"))
        vote_key = ballot[len("live_choice_"):-2]
        publish_live(store, info.id, replace(state, vote=VoteState(vote_key, 1, "open", 0, 4)))
        drawn: dict[str, tuple[str, object, str]] = {}   # widget key -> (id, element, fragment id)
        endings: list[int] = []

        async def until(done) -> None:  # noqa: ANN001 - a predicate over what was drawn
            while not done():
                fm = await student.receive(timeout=10)
                kind = fm.WhichOneof("type")
                if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                    el = fm.delta.new_element
                    sub = getattr(el, el.WhichOneof("type"))
                    if isinstance(getattr(sub, "id", None), str) and sub.id.startswith("$$ID"):
                        drawn[widget_key(sub.id)] = (sub.id, sub, fm.delta.fragment_id)
                elif kind == "script_finished":
                    endings.append(fm.script_finished)

        ck = choice_key(vote_key, 1)
        await until(lambda: ck in drawn and not drawn[ck][1].disabled and endings)  # woken: the ballot is open
        endings.clear()
        radio_id, radio, fragment = drawn[ck]
        assert fragment, "the ballot is not drawn in a fragment"
        choice = WidgetState(id=radio_id, string_value=radio.options[2])
        await student.send(rerun_request(urlencode(student.query), "", [choice], fragment_id=fragment, auto=False))
        await until(lambda: endings and SEND_KEY in drawn and not drawn[SEND_KEY][1].disabled)
        send = WidgetState(id=drawn[SEND_KEY][0], trigger_value=True)
        await student.send(rerun_request(urlencode(student.query), "", [choice, send], fragment_id=fragment,
                                         auto=False))
        await until(lambda: len(endings) >= 2)
        return endings, store.votes(info.id, vote_key)

    endings, stored = _as_student(url, store, info.code, key, vote)
    assert endings == [ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY] * 2     # two ballot runs, no page run
    assert [(r.round, r.choice) for r in stored] == [(1, 2)]


class _Session:
    """An AppSession as the watcher sees it: its runner, its state, its last widget values, the runs asked of it."""

    def __init__(self, runner: object | None, state: AppSessionState) -> None:
        self._scriptrunner, self._state, self._client_state = runner, state, ClientState()
        self.asked: list[ClientState] = []

    def request_rerun(self, client_state: ClientState) -> None:
        self.asked.append(client_state)


@pytest.mark.parametrize(("runner", "state", "woken"), [
    (None, AppSessionState.APP_NOT_RUNNING, True),      # idle: its last runner shut down
    (object(), AppSessionState.APP_NOT_RUNNING, False),  # the browser just asked for a run (a vote): not started yet
    (None, AppSessionState.APP_IS_RUNNING, False),
])
def test_the_watcher_never_preempts_a_run_the_browser_asked_for(runner, state, woken):
    """bench_live: a student's vote stored but the ballot never confirmed it, another's not stored. Streamlit marks
    a session running only when its new runner's first event reaches the event loop, so a wake judged by that mark
    alone could stop the browser's run (fast reruns) and rerun with the widget values of the run before."""
    session = _Session(runner, state)
    _rerun_if_idle(session)  # type: ignore[arg-type] - the fields the watcher reads
    assert bool(session.asked) is woken


class _Pages:
    """A session's registered pages, as st.navigation leaves them (hash -> page info)."""

    def __init__(self, *keys: str) -> None:
        self.pages = {f"hash-{k}": {"page_script_hash": f"hash-{k}", "script_path": str(ROOT / spec(k).script),
                                    "page_name": k, "url_pathname": k} for k in keys}

    def get_pages(self) -> dict:
        return self.pages


def test_a_woken_session_runs_the_teachers_page_itself():
    """Woken on its own page, a follower's poll switched pages with st.switch_page: a second run, after a 10 ms
    sleep, with the class's turn held (issue 26: a fifth of a redraw's time under a class of 60)."""
    session = _Session(None, AppSessionState.APP_NOT_RUNNING)
    session._pages_manager = _Pages("overview", "split", "attend")
    session._client_state.page_script_hash = "hash-overview"
    _rerun_if_idle(session, "split")  # type: ignore[arg-type] - the fields the watcher reads
    _rerun_if_idle(session, "quiz")   # type: ignore[arg-type] - a page the session has not registered: its own
    _rerun_if_idle(session)           # type: ignore[arg-type] - no page known: its own
    assert [(a.page_script_hash, a.page_name) for a in session.asked] == [
        ("hash-split", "split"), ("hash-overview", ""), ("hash-overview", "")]


def test_the_watchlist_knows_each_sessions_class():
    w = Watchlist(forget_s=5)
    w.seen(1, "a", 0.0, None)
    w.seen(2, "b", 0.0, None)
    w.seen(2, "a", 0.1, None)  # moved to another class
    assert (w.class_of("a"), w.class_of("b"), w.class_of("c")) == (2, 2, None)


def test_the_watcher_reads_the_teachers_page_from_the_stored_state_and_nothing_from_a_bad_one():
    from mha_core.ui.live.wake import page_of

    assert page_of(LiveState(step=2, page="attend", settings=()).to_json()) == "attend"
    assert page_of(None) is None and page_of("{not json") is None  # a bad state: the polls report it

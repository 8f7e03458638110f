"""Push, not only poll: one thread per server process reads the live version of each class whose members follow on
this process, every ``WATCH_S``, and wakes those members' sessions the moment it grows (a full run, as the poll's
REDRAW would ask), instead of leaving each to its next poll, up to ``FOLLOW_POLL_S`` later.

Holds nothing that matters: the polls go on as before (the fallback, and how a session reports itself); a cleared
cache (any browser can send ``clear_cache``) starts a new watcher and stops the old one, costing at most one poll's
wait. A session busy running is not interrupted (its browser may have just sent a vote): it is woken once idle,
unless it reports the version drawn first. Under ``AppTest`` (no server runtime) nothing is woken.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

import streamlit as st
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime import Runtime
from streamlit.runtime.app_session import AppSession, AppSessionState
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from mha_core.errors import LabError
from mha_core.lesson import LiveState
from mha_core.lesson.wake import Watchlist
from mha_core.ui.class_services import storage, store_url
from mha_core.ui.nav import ROOT, spec

if TYPE_CHECKING:
    from mha_core.classroom import Storage

WATCH_S = 0.05    # how often the watcher reads the live version of each watched class (one indexed read each):
# a move waits half of it on average before the class is woken (0.1 s before issue 26's twenty-third evening)
# A session that stops reporting (its browser's poll timer was lost, as bench_live saw now and then under load) is
# woken once after SILENT_S and again at the next move, which restarts its poll; one that closed is dropped at once
# (no session to wake).
FORGET_S = 900.0
# Two polls (FOLLOW_POLL_S) missed after drawing a version: the poll's timer was lost. Woken then, it beats again
# before the teacher's count of who is here (classroom.live_lesson.PRESENT_S) lets it go.
SILENT_S = 13.0


class Watcher:
    """The process's watcher over one class store: its list (under a lock) and its thread."""

    def __init__(self, store: Storage) -> None:
        self.store = store
        self.lock = threading.Lock()
        self.watchlist = Watchlist(FORGET_S, SILENT_S)
        self.pages: dict[int, str | None] = {}  # class id -> the teacher's page as last read (woken onto it)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="mha-live-wake", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        """Tick until stopped; a round that fails is skipped, never the end of the thread (the polls still work)."""
        while not self.stopped.wait(WATCH_S):
            try:
                self.tick()
            except Exception:  # noqa: BLE001, S112 - e.g. a session closing while it is woken: the next round goes on
                continue

    def tick(self) -> list[str]:
        """One round: read each watched class's version, wake the sessions due and idle; the sessions woken."""
        with self.lock:
            classes = self.watchlist.classes(time.monotonic())
        for class_id in classes:
            try:
                version, data = self.store.read_live_json(class_id)
            except Exception:  # noqa: BLE001 - the polls report database trouble; the thread goes on
                continue
            with self.lock:
                self.watchlist.grown(class_id, version)
                self.pages[class_id] = page_of(data)
        with self.lock:
            self.pages = {c: p for c, p in self.pages.items() if c in classes}  # classes no longer watched go
        with self.lock:
            due = self.watchlist.due()
            silent = [s for s in self.watchlist.silent(time.monotonic()) if s not in due]
            pages = {s: self.pages.get(self.watchlist.class_of(s)) for s in due + silent}
        woken = []
        for session_id in due + silent:
            outcome = rerun(session_id, pages[session_id])
            if outcome is not None:
                with self.lock:
                    if outcome:
                        self.watchlist.woken(session_id)
                        self.watchlist.rescue(session_id)
                        woken.append(session_id)
                    else:
                        self.watchlist.left(session_id)
        return woken

    def seen(self, class_id: int, session_id: str, drawn: int | None) -> None:
        """A following session reported (it polled, or drew live version ``drawn``): watch it."""
        with self.lock:
            self.watchlist.seen(class_id, session_id, time.monotonic(), drawn)

    def left(self, session_id: str) -> None:
        """The session no longer follows (exploring, or not a member): never wake it."""
        with self.lock:
            self.watchlist.left(session_id)

    def version(self, class_id: int) -> int | None:
        """The class's live version as last read (the shared read's cache key: woken sessions read what grew)."""
        with self.lock:
            return self.watchlist.version(class_id)

    def stop(self) -> None:
        """Let the thread end (the cache released this watcher)."""
        self.stopped.set()


def page_of(data: str | None) -> str | None:
    """The teacher's page in a class's live state as stored (None: not live, or a state that does not read, which
    the polls report)."""
    if data is None:
        return None
    try:
        return LiveState.from_json(data).page
    except LabError:
        return None


@st.cache_resource(show_spinner=False, on_release=Watcher.stop)
def _watcher(url: str) -> Watcher:
    """The process's watcher of the class store at ``url`` (its thread stops when the cache lets it go)."""
    return Watcher(storage())


def watcher() -> Watcher | None:
    """This process's watcher; None outside a server (AppTest) or without a class store. One cached lookup, by the
    store's URL (two, the store's and the watcher's, were 3% of a class's redraw: issue 26)."""
    if not Runtime.exists():
        return None
    try:
        return _watcher(store_url())
    except LabError:
        return None


def session_id() -> str | None:
    """This run's session id (None outside a script run)."""
    ctx = get_script_run_ctx()
    return None if ctx is None else ctx.session_id


TRIGGERS = frozenset({"trigger_value", "string_trigger_value", "json_trigger_value", "chat_input_value"})


def rerun(session_id: str, page: str | None = None) -> bool | None:
    """Ask ``session_id`` for a full run, as its browser's rerun message would (its last widget values), of
    ``page`` (the teacher's; None or unknown: the page it shows), on the server's event loop (an AppSession is not
    thread-safe). True: asked; None: busy running, ask later; False: no such session any more.

    Woken onto the teacher's page, a follower draws it in one run: woken on its own page, its poll would switch
    pages with ``st.switch_page``, a second run after a 10 ms sleep that Streamlit takes for the address's
    parameters (unchanged here) — with the class's turn held, 60 times per move (issue 26).

    Streamlit 1.67's own code does the same for "run on save" (``AppSession._on_source_file_changed``); the last
    client state and the event loop are the session's private fields, so tests/test_wake.py drives a real server."""
    runtime = Runtime.instance() if Runtime.exists() else None
    session = None if runtime is None else runtime.get_app_session(session_id)
    if session is None:
        return False
    if not idle(session):
        return None
    session._event_loop.call_soon_threadsafe(_rerun_if_idle, session, page)  # noqa: SLF001 - see above
    return True


def idle(session: AppSession) -> bool:
    """No run going, asked for or ending: the session's runner has shut down and said so (``_scriptrunner`` is None).

    The session's "not running" mark alone is wrong in two windows: a runner the browser has just asked for (a vote
    being sent) counts as not running until its first event reaches the event loop, and a runner that has finished
    holds back the widget values the session reruns with (``_client_state``) until it shuts down. A full run asked
    for in either window stops the browser's run (Streamlit's fast reruns) or replays older widget values."""
    return (session._scriptrunner is None  # noqa: SLF001 - see rerun
            and session._state == AppSessionState.APP_NOT_RUNNING)  # noqa: SLF001 - see rerun


def page_hash(session: AppSession, page: str) -> tuple[str, str] | None:
    """(script hash, address path) of ``page`` among the pages the session's navigation registered (None: not one
    of them, e.g. before its first run)."""
    script = str(ROOT / spec(page).script)
    for info in session._pages_manager.get_pages().values():  # noqa: SLF001 - see rerun
        if info["script_path"] == script:
            return info["page_script_hash"], info.get("url_pathname", "")
    return None


def _rerun_if_idle(session: AppSession, page: str | None = None) -> None:
    """On the event loop, where the browser's messages are handled too: a run the browser asked for meanwhile (a
    vote being sent) is never pre-empted, and no button press of the last run is sent again."""
    if not idle(session):
        return
    state = ClientState()
    state.CopyFrom(session._client_state)  # noqa: SLF001 - see rerun
    state.fragment_id = ""                 # the whole page, not the poll's fragment
    target = None if page is None else page_hash(session, page)
    if target is not None:                 # the teacher's page (the address follows, as after a switch_page)
        state.page_script_hash, state.page_name = target
    state.is_auto_rerun = False
    values = [w for w in state.widget_states.widgets if w.WhichOneof("value") not in TRIGGERS]
    del state.widget_states.widgets[:]
    state.widget_states.widgets.extend(values)
    session.request_rerun(state)

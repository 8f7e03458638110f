"""Three Streamlit races where a full run hands over to a fragment run (a live lesson's poll or vote right after a
move's full run): the first two left a browser with a page its server no longer matched (bench_live, issue 26), the
third lost settings.

1. ``ForwardMsgQueue.clear``: when a run starts, Streamlit clears its session's unsent messages; for a fragment run it
   drops every queued delta tagged with that fragment's id, taking them for an earlier run of the same fragment. But a
   full run tags what it draws inside a fragment with the fragment's id too, the fragment's own container included. A
   fragment run started before the event loop flushed a full run's end so erased the full run's copy of the fragment:
   the browser finished the run without it, dropped the old copy as stale, and then failed to place the fragment's
   next message ("'setIn' cannot be called on an ElementNode": a blank page), or a ballot never said the vote was in.
   Here a fragment run's clear keeps the queue as it is, exactly as if the event loop had flushed it a moment earlier
   (which it may do at any time), and only stops the new run's deltas from being merged into the old run's messages.
2. ``AppSession.request_rerun``: a fragment run asked for after a runner has finished its script but before its last
   events (the run's last deltas, its end) reached the event loop gets a new runner at once, and the session then
   ignores the old runner's events: the browser never hears the full run end (polls go on; the page is half drawn).
   Here such a request waits, on the event loop, until the old runner's shutdown has been handled (a few ms), then
   goes to Streamlit as it came. A full run is Streamlit's own business: it redraws everything anyway.
3. ``ScriptRunner._run_script``: when the server switches a session's page (a live lesson's move, ``st.switch_page``),
   its browser still shows the old page until the new run reaches it, and a fragment timer that fires meanwhile asks
   for a fragment run *of the old page*. Streamlit runs the new page's fragment (same id) but takes the request's
   page for the session's, and the next fragment run, from the new page, counts as a page change: its start drops
   every widget value the browser did not send, including the settings the app keeps across pages
   (``ui.state.keep``; a fragment run does not re-assign them). A presenter's clock then published the lesson
   without the causal mask the teacher had set, and the teacher's own toggle goes off at the next full run (one of
   the two ways tests/e2e/test_live_browser.py failed in 2 of 7 full runs). Here a fragment run always runs on the
   page the session shows: a fragment never switches pages.
"""

from __future__ import annotations

import time
from dataclasses import replace

from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.forward_msg_queue import ForwardMsgQueue
from streamlit.runtime.scriptrunner.script_runner import ScriptRunner
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData, ScriptRequestType

RETRY_S = 0.005   # how often a held fragment request looks whether the finished runner's shutdown has been handled
HOLD_S = 2.0      # a runner whose shutdown never comes (a thread that died) is left to Streamlit after this long

# Streamlit's own two, also when this module is imported again after ``install`` (a watcher reloading changed code):
# each replacement keeps the original as ``__wrapped__``.
_streamlit_clear = getattr(ForwardMsgQueue.clear, "__wrapped__", ForwardMsgQueue.clear)
_streamlit_request_rerun = getattr(AppSession.request_rerun, "__wrapped__", AppSession.request_rerun)
_streamlit_run_script = getattr(ScriptRunner._run_script, "__wrapped__", ScriptRunner._run_script)  # noqa: SLF001


def clear(
    self: ForwardMsgQueue, retain_lifecycle_msgs: bool = False, fragment_ids_this_run: list[str] | None = None
) -> None:
    """Streamlit's clear, except that a fragment run starting keeps every queued message (race 1 above)."""
    if retain_lifecycle_msgs and fragment_ids_this_run is not None:
        self._delta_index_map = {}  # noqa: SLF001 - a new run's delta never replaces the last run's at the same place
        return
    _streamlit_clear(self, retain_lifecycle_msgs, fragment_ids_this_run)


def finished_runner_pending(session: AppSession) -> bool:
    """The session's runner has run its script and refuses reruns, but its shutdown has not reached the event loop."""
    runner = session._scriptrunner  # noqa: SLF001 - Streamlit has no public view of this
    return runner is not None and runner._requests._state == ScriptRequestType.STOP  # noqa: SLF001


def request_rerun(self: AppSession, client_state: ClientState | None, _since: float | None = None) -> None:
    """Streamlit's request_rerun, except that a fragment run waits for a finished runner's last events (race 2)."""
    since = time.monotonic() if _since is None else _since
    if (client_state is not None and client_state.fragment_id and finished_runner_pending(self)
            and time.monotonic() - since < HOLD_S):
        self._event_loop.call_later(RETRY_S, request_rerun, self, client_state, since)  # noqa: SLF001
        return
    _streamlit_request_rerun(self, client_state)


def run_script(self: ScriptRunner, rerun_data: RerunData) -> None:
    """Streamlit's _run_script, except that a fragment run stays on the page the session shows (race 3 above)."""
    shown = self._pages_manager.current_page_script_hash  # noqa: SLF001 - the page of the session's last run
    if rerun_data.fragment_id_queue and shown and rerun_data.page_script_hash != shown:
        rerun_data = replace(rerun_data, page_script_hash=shown, page_name="")
    _streamlit_run_script(self, rerun_data)


clear.__wrapped__ = _streamlit_clear  # type: ignore[attr-defined]
request_rerun.__wrapped__ = _streamlit_request_rerun  # type: ignore[attr-defined]
run_script.__wrapped__ = _streamlit_run_script  # type: ignore[attr-defined]


def install() -> None:
    """Put all three in Streamlit's place (idempotent, and safe after a reload: see ``_streamlit_clear``)."""
    ForwardMsgQueue.clear = clear  # type: ignore[method-assign]
    AppSession.request_rerun = request_rerun  # type: ignore[method-assign]
    ScriptRunner._run_script = run_script  # type: ignore[method-assign]  # noqa: SLF001

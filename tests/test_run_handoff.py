"""A full run handing over to a fragment run (mha_core.ui.run_handoff): a fragment run that starts before a full run's
messages were sent must not erase the full run's copy of the fragment (the queue as Streamlit fills it, cleared as
AppSession clears it), and a fragment run asked for while a finished runner's last events are on their way waits for
them (a stub session on a real event loop)."""

from __future__ import annotations

import asyncio
import importlib
from types import SimpleNamespace

import pytest
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.forward_msg_queue import ForwardMsgQueue
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType

import mha_core.ui  # noqa: F401 - installs the fix, as every page's import does
from mha_core.ui import run_handoff

POLL = "poll-fragment-id"


def _delta(path: list[int], fragment_id: str = "", block: bool = False) -> ForwardMsg:
    msg = ForwardMsg()
    msg.metadata.delta_path[:] = path
    if block:
        msg.delta.add_block.vertical.SetInParent()
    else:
        msg.delta.new_element.markdown.body = f"at {path}"
    if fragment_id:
        msg.delta.fragment_id = fragment_id
    return msg


def _finished(status: ForwardMsg.ScriptFinishedStatus.ValueType) -> ForwardMsg:
    msg = ForwardMsg()
    msg.script_finished = status
    return msg


def _full_run_then_poll_starts(clear) -> list[ForwardMsg]:
    """A full run drew the poll fragment at [0, 0] and a paragraph after it, ended, and the poll's own run started
    before the event loop flushed: what is left to send."""
    q = ForwardMsgQueue()
    start = ForwardMsg()
    start.new_session.page_script_hash = "page"
    for msg in (start, _delta([0, 0], POLL, block=True), _delta([0, 0, 0], POLL), _delta([0, 1]),
                _finished(ForwardMsg.FINISHED_SUCCESSFULLY)):
        q.enqueue(msg)
    clear(q, retain_lifecycle_msgs=True, fragment_ids_this_run=[POLL])
    return q.flush()


def _kinds(msgs: list[ForwardMsg]) -> list[str]:
    return [m.WhichOneof("type") + (str(list(m.metadata.delta_path)) if m.HasField("delta") else "") for m in msgs]


def test_the_pinned_streamlit_still_drops_a_full_runs_fragment_deltas_when_a_fragment_run_starts():
    """The race the fix is for: if this fails, Streamlit fixed it and run_handoff.clear can go."""
    sent = _full_run_then_poll_starts(run_handoff._streamlit_clear)  # noqa: SLF001
    assert _kinds(sent) == ["new_session", "delta[0, 1]", "script_finished"]


def test_a_fragment_run_starting_keeps_the_full_run_before_it_whole_and_unmerged():
    assert ForwardMsgQueue.clear is run_handoff.clear
    sent = _full_run_then_poll_starts(ForwardMsgQueue.clear)
    assert _kinds(sent) == ["new_session", "delta[0, 0]", "delta[0, 0, 0]", "delta[0, 1]", "script_finished"]
    assert sent[-1].script_finished == ForwardMsg.FINISHED_SUCCESSFULLY
    # the fragment run's first delta lands after the full run's end, not merged into the full run's [0, 0]
    q = ForwardMsgQueue()
    q.enqueue(_delta([0, 0], POLL, block=True))
    q.clear(retain_lifecycle_msgs=True, fragment_ids_this_run=[POLL])
    q.enqueue(_delta([0, 0], POLL))
    assert [m.delta.WhichOneof("type") for m in q.flush()] == ["add_block", "new_element"]


def test_a_full_run_starting_still_drops_the_unsent_deltas_of_the_run_before():
    q = ForwardMsgQueue()
    for msg in (_delta([0, 0], POLL, block=True), _delta([0, 1]), _finished(ForwardMsg.FINISHED_SUCCESSFULLY)):
        q.enqueue(msg)
    q.clear(retain_lifecycle_msgs=True)
    assert _kinds(q.flush()) == ["script_finished"]


def _session(loop: asyncio.AbstractEventLoop, state: ScriptRequestType | None) -> SimpleNamespace:
    """A session as request_rerun sees it: its event loop and its runner's request state (None: no runner)."""
    runner = None if state is None else SimpleNamespace(_requests=SimpleNamespace(_state=state))
    return SimpleNamespace(_event_loop=loop, _scriptrunner=runner)


def _client(fragment_id: str) -> ClientState:
    state = ClientState()
    state.fragment_id = fragment_id
    return state


@pytest.mark.parametrize(("state", "fragment_id", "held"), [
    (ScriptRequestType.STOP, POLL, True),        # finished runner, its shutdown not handled yet: the race
    (ScriptRequestType.CONTINUE, POLL, False),   # a running runner takes the request itself
    (None, POLL, False),                         # no runner: a new one starts at once
    (ScriptRequestType.STOP, "", False),         # a full run replaces the runner and redraws everything
])
def test_a_fragment_run_waits_for_a_finished_runners_shutdown_and_nothing_else_does(monkeypatch, state, fragment_id,
                                                                                    held):
    assert AppSession.request_rerun is run_handoff.request_rerun
    passed: list[ClientState] = []
    monkeypatch.setattr(run_handoff, "_streamlit_request_rerun", lambda _session, client: passed.append(client))
    client = _client(fragment_id)

    async def scenario() -> list[int]:
        session = _session(asyncio.get_running_loop(), state)
        run_handoff.request_rerun(session, client)
        counts = [len(passed)]
        await asyncio.sleep(5 * run_handoff.RETRY_S)
        counts.append(len(passed))                 # still held while the shutdown has not come
        session._scriptrunner = None               # the old runner's shutdown event handled
        await asyncio.sleep(5 * run_handoff.RETRY_S)
        counts.append(len(passed))
        return counts

    assert asyncio.run(scenario()) == ([0, 0, 1] if held else [1, 1, 1])
    assert passed == [client]


def test_a_held_fragment_run_is_given_to_streamlit_if_the_shutdown_never_comes(monkeypatch):
    passed: list[ClientState] = []
    monkeypatch.setattr(run_handoff, "_streamlit_request_rerun", lambda _session, client: passed.append(client))
    monkeypatch.setattr(run_handoff, "HOLD_S", 4 * run_handoff.RETRY_S)

    async def scenario() -> None:
        run_handoff.request_rerun(_session(asyncio.get_running_loop(), ScriptRequestType.STOP), _client(POLL))
        await asyncio.sleep(20 * run_handoff.RETRY_S)

    asyncio.run(scenario())
    assert len(passed) == 1


def test_importing_the_module_again_still_wraps_streamlits_own_functions():
    """A reload after install must not take the installed replacements for Streamlit's (endless recursion)."""
    importlib.reload(run_handoff)
    run_handoff.install()
    assert run_handoff._streamlit_clear.__module__.startswith("streamlit.")  # noqa: SLF001
    assert run_handoff._streamlit_request_rerun.__module__.startswith("streamlit.")  # noqa: SLF001
    assert _kinds(_full_run_then_poll_starts(ForwardMsgQueue.clear))[1] == "delta[0, 0]"

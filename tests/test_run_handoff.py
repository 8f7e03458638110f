"""A full run handing over to a fragment run (mha_core.ui.run_handoff): a fragment run that starts before a full run's
messages were sent must not erase the full run's copy of the fragment (the queue as Streamlit fills it, cleared as
AppSession clears it), and a fragment run asked for while a finished runner's last events are on their way waits for
them (a stub session on a real event loop); a fragment run asked for by a browser still on the page the server just
left keeps the values the app keeps across pages, and so does a click on that page after it (real servers of small
apps)."""

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
    assert run_handoff._streamlit_run_script.__module__.startswith("streamlit.")  # noqa: SLF001
    assert _kinds(_full_run_then_poll_starts(ForwardMsgQueue.clear))[1] == "delta[0, 0]"


# Race 3: a fragment run asked for by a browser still showing the page the server just switched away from. The app
# below keeps a toggle's value across pages as ui.state.init_state does (re-assigned at the top of every full run);
# page "a" draws the toggle and a button whose run switches to page "b" on the server, as a live lesson's move does.
STALE_PAGE_APP = '''
import os
if os.environ.get("MHA_TEST_HANDOFF") == "1":
    import mha_core.ui  # installs run_handoff, as every page of the app does
import streamlit as st

ss = st.session_state
ss["causal"] = ss["causal"] if "causal" in ss else False


@st.fragment
def clock() -> None:
    st.markdown(f"causal={ss.get('causal')!r}")


def page_a() -> None:
    clock()
    st.toggle("causal", key="causal")
    if st.button("next", key="next"):
        st.switch_page(page_b)


def page_b() -> None:
    clock()


page_a = st.Page(page_a, url_path="a", default=True)
page_b = st.Page(page_b, url_path="b")
st.navigation([page_a, page_b]).run()
'''


async def _drawn(c, msg) -> tuple[list[str], set[str], dict[str, str]]:  # noqa: ANN001 - a Connection, a BackMsg
    """Send one run's request and read the run to its end: what its fragment drew, the fragments' ids, the widgets'
    ids by key."""
    from harness.websocket_client import widget_key

    drawn, fragments, ids = [], set(), {}
    # a new runner, as after any pause of the browser's: a reused one still holds the last run's fragment ids,
    # which hide the loss
    await asyncio.sleep(1.0)
    await c.send(msg)
    while True:
        fm = await c.receive(30)
        kind = fm.WhichOneof("type")
        if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
            fragments.add(fm.delta.fragment_id)
            el = fm.delta.new_element
            sub = getattr(el, el.WhichOneof("type"))
            if el.WhichOneof("type") == "markdown" and sub.body.startswith("causal="):
                drawn.append(sub.body)
            if str(getattr(sub, "id", "")).startswith("$$ID"):
                ids[widget_key(sub.id)] = sub.id
        elif kind == "script_finished" and fm.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            return drawn, fragments - {""}, ids


def _served(tmp_path, app: str, env: dict[str, str | None], scenario) -> list[str]:  # noqa: ANN001
    """What ``scenario(connection)`` returns from a fresh server of ``app`` (written to tmp_path), stopped after."""
    from harness.server import start_server, stop_server
    from harness.websocket_client import Connection

    (tmp_path / "app.py").write_text(app)
    proc, base = start_server(script=tmp_path / "app.py", cwd=tmp_path, env=env)

    async def session() -> list[str]:
        c = Connection(base, "test")
        await c.connect()
        try:
            return await scenario(c)
        finally:
            await c.close()

    try:
        return asyncio.run(session())
    finally:
        stop_server(proc)


def _stale_page_fragment_run(tmp_path, fixed: bool) -> list[str]:  # noqa: ANN001 - pytest's tmp_path
    """What the fragment drew in each run: the toggle set on page a, the server's switch to b, the old page's timer
    firing after it, then b's own timer, then a full run of b."""
    from streamlit.util import calc_hash

    from harness.websocket_client import rerun_request, widget_state

    async def scenario(c) -> list[str]:  # noqa: ANN001 - a Connection
        a, b = "", calc_hash("b")
        _, (clock,), ids = await _drawn(c, rerun_request("", a))
        on = widget_state(ids["causal"], "bool_value", True)
        seen = (await _drawn(c, rerun_request("", a, [on])))[0]
        seen += (await _drawn(c, rerun_request("", a, [on, widget_state(ids["next"], "trigger_value", True)])))[0]
        seen += (await _drawn(c, rerun_request("", a, [on], fragment_id=clock)))[0]   # the old page's timer
        seen += (await _drawn(c, rerun_request("", b, [], page_name="b", fragment_id=clock)))[0]
        seen += (await _drawn(c, rerun_request("", b, [], page_name="b")))[0]
        return seen

    return _served(tmp_path, STALE_PAGE_APP, {"MHA_TEST_HANDOFF": "1" if fixed else None}, scenario)


def test_the_pinned_streamlit_still_drops_kept_values_after_a_fragment_run_of_the_page_just_left(tmp_path):
    """The race the fix is for: if this fails, Streamlit fixed it and run_handoff.run_script can go."""
    assert _stale_page_fragment_run(tmp_path, fixed=False)[-2:] == ["causal=None", "causal=False"]


def test_a_fragment_run_of_the_page_just_left_keeps_every_kept_value(tmp_path):
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner
    assert ScriptRunner._run_script is run_handoff.run_script  # noqa: SLF001 - installed by the import at the top
    # the toggle set; a (switching), b; the old page's timer; b's timer; b's full run: always on
    assert _stale_page_fragment_run(tmp_path, fixed=True) == ["causal=True"] * 6


# Its kin, which no runner fix reaches: after that fragment run, a click on the page just left (a full run of it,
# which Streamlit takes for the browser's own page change) drops the values of the widgets the browser did not send.
# The app's init_state keeps a value whose widget is on a third page ("c") from the last full run before.
KIN_APP = '''
import streamlit as st
from mha_core.ui import state

state.init_state({"causal": False})
ss = st.session_state


@st.fragment
def clock() -> None:
    st.markdown(f"causal={ss.get('causal')!r}")


def page_a() -> None:
    clock()
    if st.button("next", key="next"):
        st.switch_page(page_b)


def page_b() -> None:
    clock()


def page_c() -> None:
    clock()
    st.toggle("causal", key="causal")


page_a = st.Page(page_a, url_path="a", default=True)
page_b = st.Page(page_b, url_path="b")
page_c = st.Page(page_c, url_path="c")
st.navigation([page_a, page_b, page_c]).run()
'''


def test_a_click_on_the_page_just_left_after_a_fragment_run_keeps_every_kept_value(tmp_path):
    from streamlit.util import calc_hash

    from harness.websocket_client import rerun_request, widget_state

    async def scenario(c) -> list[str]:  # noqa: ANN001 - a Connection
        a, c_page = "", calc_hash("c")
        _, (clock,), ids = await _drawn(c, rerun_request("", c_page, page_name="c"))
        on = widget_state(ids["causal"], "bool_value", True)
        seen = (await _drawn(c, rerun_request("", c_page, [on], page_name="c")))[0]   # set on c
        seen += (drawn := await _drawn(c, rerun_request("", a, [on])))[0]              # the sidebar to a
        nxt = widget_state(drawn[2]["next"], "trigger_value", True)
        seen += (await _drawn(c, rerun_request("", a, [nxt])))[0]                    # a switches to b
        seen += (await _drawn(c, rerun_request("", a, [], fragment_id=clock)))[0]    # a's timer, b's fragment
        seen += (await _drawn(c, rerun_request("", a, [])))[0]                       # a click still on a
        return seen

    # set on c; a; a and b (the switch); the timer; the click on a: always on (the last was off before the fix)
    assert _served(tmp_path, KIN_APP, {}, scenario) == ["causal=True"] * 6

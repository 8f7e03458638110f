"""A script run's events reach the event loop in batches (mha_core.ui.runner_events): one wake-up of the loop for
all that queued before it ran, the same handler for each, in order; Streamlit's parameters kept."""

from __future__ import annotations

import asyncio
import inspect

from streamlit.runtime.app_session import AppSession

import mha_core.ui  # noqa: F401 - installs it
from mha_core.ui import runner_events
from mha_core.ui.runner_events import DRAIN_S, on_scriptrunner_event


class _Session:
    """An AppSession as the batching sees it: the loop's wake-ups asked for, and the events handled."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop, self.wakes, self.handled = loop, 0, []

    def _call_soon_on_event_loop(self, callback) -> None:  # noqa: ANN001 - as AppSession's
        self.wakes += 1
        self.loop.call_soon_threadsafe(callback)

    def _handle_scriptrunner_event_on_event_loop(self, sender, event, forward_msg, *rest) -> None:  # noqa: ANN001
        if event == "boom":
            raise RuntimeError("a handler that fails")
        self.handled.append((sender, event, forward_msg))


def _settle(loop: asyncio.AbstractEventLoop, *sessions: _Session) -> None:
    """Run the loop until every session's queue has gone quiet (drained, and the look after the last found nothing),
    however slow the box: waiting a fixed time once let a loaded CI box stop before the look."""
    async def quiet() -> None:
        for _ in range(2000):
            await asyncio.sleep(DRAIN_S)
            if not any(runner_events.queue_of(s).asked for s in sessions):  # type: ignore[arg-type]
                return
        raise AssertionError("the queue never went quiet")

    loop.run_until_complete(quiet())


def test_installed_in_streamlits_place_with_its_parameters():
    assert AppSession._on_scriptrunner_event is on_scriptrunner_event
    ours = list(inspect.signature(on_scriptrunner_event).parameters)
    assert ours == list(inspect.signature(on_scriptrunner_event.__wrapped__).parameters)  # the pinned Streamlit's


def test_a_runs_events_wake_the_loop_once_and_are_handled_in_order(loop: asyncio.AbstractEventLoop):
    """Streamlit woke the loop once per event (each element drawn), handing the GIL over each time."""
    session = _Session(loop)
    for i in range(50):  # as a script thread: the loop is not running yet
        on_scriptrunner_event(session, "runner", f"event {i}", forward_msg=i)  # type: ignore[arg-type]
    assert session.wakes == 1 and session.handled == []
    _settle(loop, session)
    assert session.handled == [("runner", f"event {i}", i) for i in range(50)]
    on_scriptrunner_event(session, "runner", "later")  # type: ignore[arg-type] - the run went quiet: wake again
    assert session.wakes == 2
    _settle(loop, session)
    assert session.handled[-1] == ("runner", "later", None)


def test_events_queued_while_the_loop_drains_need_no_wake_of_their_own(loop: asyncio.AbstractEventLoop):
    """An event sent while the loop handles the batch before it (as a script thread would) waits for the look after
    DRAIN_S. Sent from inside a handler, so no timing decides it: a slow box once let the look run first."""
    session = _Session(loop)
    handle = session._handle_scriptrunner_event_on_event_loop

    def handle_and_send(sender, event, forward_msg, *rest) -> None:  # noqa: ANN001
        handle(sender, event, forward_msg, *rest)
        if event == "first":
            on_scriptrunner_event(session, "runner", "second")  # type: ignore[arg-type]

    session._handle_scriptrunner_event_on_event_loop = handle_and_send  # type: ignore[method-assign]
    on_scriptrunner_event(session, "runner", "first")  # type: ignore[arg-type]
    _settle(loop, session)
    assert session.wakes == 1 and [e for _, e, _ in session.handled] == ["first", "second"]


def test_a_handler_that_fails_is_reported_and_the_next_events_go_on(loop: asyncio.AbstractEventLoop):
    reported: list[dict] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    session = _Session(loop)
    for event in ("a", "boom", "b"):
        on_scriptrunner_event(session, "runner", event)  # type: ignore[arg-type]
    _settle(loop, session)
    assert [e for _, e, _ in session.handled] == ["a", "b"]
    assert len(reported) == 1 and isinstance(reported[0]["exception"], RuntimeError)


def test_two_sessions_keep_their_own_queues(loop: asyncio.AbstractEventLoop):
    one, two = _Session(loop), _Session(loop)
    on_scriptrunner_event(one, "r1", "x")  # type: ignore[arg-type]
    on_scriptrunner_event(two, "r2", "y")  # type: ignore[arg-type]
    _settle(loop, one, two)
    assert one.handled == [("r1", "x", None)] and two.handled == [("r2", "y", None)]
    assert runner_events.queue_of(one) is not runner_events.queue_of(two)  # type: ignore[arg-type]

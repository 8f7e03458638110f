"""A script run's events reach the event loop in batches. Streamlit hands every event of a run to the session's event
loop on its own (``AppSession._on_scriptrunner_event``: one ``call_soon_threadsafe`` each), every element drawn
included, and each of those writes to the loop's wake-up socket, which lets go of the GIL: the event loop thread takes
it for that one message, and the script thread waits to get it back. Under a live lesson (60 followers redrawn one
after another) that was a handoff of the GIL per element, and the event loop held it a third of the time (py-spy,
issue 26). Here a session's events queue in order and the loop is woken once for all that queued before it ran, and
looks again every DRAIN_S while a run goes on sending: the same handler, the same events, in the same order, handled
a little later than the first and a little earlier than the last would have been — an order Streamlit also sees
whenever its script thread runs ahead.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import Any

from streamlit.runtime.app_session import AppSession

# Streamlit's own, also when this module is imported again after ``install`` (see run_handoff).
_streamlit_on_event = getattr(AppSession._on_scriptrunner_event, "__wrapped__",  # noqa: SLF001 - no public hook
                              AppSession._on_scriptrunner_event)  # noqa: SLF001

_QUEUE = "_mha_runner_events"  # the attribute of an AppSession that holds its queue
DRAIN_S = 0.003  # while a run sends events, the loop takes them this often (Streamlit flushes every 5 ms)


class EventQueue:
    """One session's events waiting for the event loop, and whether a drain of them is already asked for."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.handlers: deque[Callable[[], None]] = deque()
        self.asked = False

    def put(self, handler: Callable[[], None]) -> bool:
        """Queue ``handler``; True if the loop must be asked to drain (no drain asked for yet)."""
        with self.lock:
            self.handlers.append(handler)
            if self.asked:
                return False
            self.asked = True
            return True

    def take(self) -> list[Callable[[], None]]:
        """Everything queued, in order; the next ``put`` asks for a drain again."""
        with self.lock:
            handlers = list(self.handlers)
            self.handlers.clear()
            self.asked = False
            return handlers

    def drain(self) -> None:
        """On the event loop: handle every queued event in order (one that raises is reported as asyncio would),
        then look again after DRAIN_S while events keep coming: a run's next events need no wake-up of their own."""
        with self.lock:
            handlers = list(self.handlers)
            self.handlers.clear()
            if not handlers:
                self.asked = False  # the run went quiet: the next event wakes the loop
                return
        loop = asyncio.get_running_loop()
        for handler in handlers:
            try:
                handler()
            except Exception as err:  # noqa: BLE001 - the loop's own handler reports it; the next event goes on
                loop.call_exception_handler({"message": "Exception in a script run's event", "exception": err})
        loop.call_later(DRAIN_S, self.drain)


def queue_of(session: AppSession) -> EventQueue:
    """The session's queue (made on its first event; ``setdefault`` is atomic, so two threads get one queue)."""
    found = session.__dict__.get(_QUEUE)
    return found if found is not None else session.__dict__.setdefault(_QUEUE, EventQueue())


def on_scriptrunner_event(
    self: AppSession, sender: Any, event: Any, forward_msg: Any = None, exception: Any = None,
    client_state: Any = None, page_script_hash: Any = None, fragment_ids_this_run: Any = None, pages: Any = None,
    run_descriptor: Any = None,
) -> None:
    """Streamlit's ``_on_scriptrunner_event`` (the same parameters), the loop woken once per batch, not per event."""
    events = queue_of(self)
    handler = partial(self._handle_scriptrunner_event_on_event_loop, sender, event, forward_msg,  # noqa: SLF001
                      exception, client_state, page_script_hash, fragment_ids_this_run, pages, run_descriptor)
    if events.put(handler):
        try:
            self._call_soon_on_event_loop(events.drain)  # noqa: SLF001 - drops it, as Streamlit does, once closed
        except BaseException:
            events.take()  # never left asking: the next event asks again
            raise


on_scriptrunner_event.__wrapped__ = _streamlit_on_event  # type: ignore[attr-defined]


def install() -> None:
    """Put it in Streamlit's place (idempotent). A session binds the method when it starts a runner, so sessions made
    after this use it."""
    AppSession._on_scriptrunner_event = on_scriptrunner_event  # type: ignore[method-assign]  # noqa: SLF001

"""A message queued on the event loop's own thread wakes the flush loop directly, not through the loop's socket.
Streamlit tells its flush loop that a session has something to send with ``call_soon_threadsafe`` for every message
(``Runtime._enqueued_some_message``), and that writes a byte to the loop's wake-up socket even when the caller is the
loop itself, as every run's messages are once ``runner_events`` hands them over there: a send, a wake of the
selector and a read per element drawn, each letting go of the GIL (a tenth of the event loop thread's wall-clock
samples while 60 sessions redrew, py-spy, issue 26; the CPU it saves was within the benchmark box's noise). On the
loop's thread the same event is set at once; from any other thread it is set as Streamlit sets it.
"""

from __future__ import annotations

import asyncio

from streamlit.runtime.runtime import Runtime

# Streamlit's own, also when this module is imported again after ``install`` (see run_handoff).
_streamlit_enqueued = getattr(Runtime._enqueued_some_message, "__wrapped__",  # noqa: SLF001 - no public hook
                              Runtime._enqueued_some_message)  # noqa: SLF001


def enqueued_some_message(self: Runtime) -> None:
    """Streamlit's ``Runtime._enqueued_some_message``: the flush loop's event set, without a wake-up of the loop
    by itself when called on the loop's thread."""
    objs = self._get_async_objs()  # noqa: SLF001 - raises, as Streamlit's does, before the runtime started
    try:
        here = asyncio.get_running_loop()
    except RuntimeError:  # a script thread, or any other without a running loop
        here = None
    if here is objs.eventloop:
        objs.need_send_data.set()
    else:
        objs.eventloop.call_soon_threadsafe(objs.need_send_data.set)


enqueued_some_message.__wrapped__ = _streamlit_enqueued  # type: ignore[attr-defined]


def install() -> None:
    """Put it in Streamlit's place (idempotent; an AppSession calls the runtime's bound method at every message)."""
    Runtime._enqueued_some_message = enqueued_some_message  # type: ignore[method-assign]  # noqa: SLF001

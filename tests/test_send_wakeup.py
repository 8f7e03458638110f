"""A message queued on the event loop's own thread sets the flush loop's event at once, without writing to the
loop's wake-up socket (mha_core.ui.send_wakeup); from another thread it is set as Streamlit sets it."""

from __future__ import annotations

import asyncio
import inspect
import threading
from types import SimpleNamespace

from streamlit.runtime.runtime import Runtime

import mha_core.ui  # noqa: F401 - installs it
from mha_core.ui.send_wakeup import enqueued_some_message


class _Runtime:
    """A Runtime as the wake-up sees it: its loop, the flush loop's event, and the loop's thread-safe calls counted."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.objs = SimpleNamespace(eventloop=loop, need_send_data=asyncio.Event())
        self.threadsafe_calls = 0
        real = loop.call_soon_threadsafe

        def counted(*args, **kwargs):  # noqa: ANN002, ANN003 - as the loop's
            self.threadsafe_calls += 1
            return real(*args, **kwargs)

        loop.call_soon_threadsafe = counted  # type: ignore[method-assign]

    def _get_async_objs(self) -> SimpleNamespace:
        return self.objs


def test_installed_in_streamlits_place_with_its_parameters():
    assert Runtime._enqueued_some_message is enqueued_some_message
    ours = list(inspect.signature(enqueued_some_message).parameters)
    assert ours == list(inspect.signature(enqueued_some_message.__wrapped__).parameters)  # the pinned Streamlit's


def test_on_the_loops_thread_the_event_is_set_at_once_without_a_wake_up(loop: asyncio.AbstractEventLoop):
    """Streamlit's own went through call_soon_threadsafe (a byte written to the loop's socket) for every message,
    and its event was set only on the loop's next turn."""
    runtime = _Runtime(loop)

    async def on_the_loop() -> bool:
        enqueued_some_message(runtime)  # type: ignore[arg-type]
        return runtime.objs.need_send_data.is_set()

    assert loop.run_until_complete(on_the_loop()) is True
    assert runtime.threadsafe_calls == 0


def test_from_a_script_thread_the_loop_is_woken_as_streamlit_does(loop: asyncio.AbstractEventLoop):
    runtime = _Runtime(loop)
    thread = threading.Thread(target=enqueued_some_message, args=(runtime,))
    thread.start()
    thread.join()
    assert runtime.threadsafe_calls == 1 and not runtime.objs.need_send_data.is_set()
    loop.run_until_complete(asyncio.wait_for(runtime.objs.need_send_data.wait(), 1))

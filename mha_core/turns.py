"""Taking turns at the shared model: at most ``slots`` computations at once, first come first served, and each
waiter can tell how many are ahead of it (the real-model page shows that instead of a frozen page).

Pure: no Streamlit, no global state; mha_core/ui/real.py keeps the one instance of the process.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Turns:
    """A first-come-first-served gate with ``slots`` places."""

    def __init__(self, slots: int) -> None:
        self.slots = max(1, slots)
        self._cond = threading.Condition()
        self._tickets = itertools.count()
        self._waiting: list[int] = []   # tickets in arrival order
        self._active = 0

    def busy(self) -> bool:
        """True while anyone computes or waits."""
        with self._cond:
            return bool(self._active or self._waiting)

    def ahead(self, ticket: int) -> int:
        """How many are ahead of ``ticket``: those computing now and those who came earlier and still wait."""
        with self._cond:
            return self._ahead(ticket)

    def _ahead(self, ticket: int) -> int:
        return self._active + (self._waiting.index(ticket) if ticket in self._waiting else 0)

    @contextmanager
    def turn(self, on_wait: Callable[[int], None] | None = None, every: float = 0.5) -> Iterator[None]:
        """Wait for a place (calling ``on_wait(ahead)`` at once and every ``every`` seconds while waiting), then
        hold it for the ``with`` block."""
        with self._cond:
            ticket = next(self._tickets)
            self._waiting.append(ticket)
        try:
            while True:
                with self._cond:
                    if self._waiting[0] == ticket and self._active < self.slots:
                        self._waiting.pop(0)
                        self._active += 1
                        break
                    ahead = self._ahead(ticket)
                if on_wait is not None:
                    on_wait(ahead)
                with self._cond:
                    if not (self._waiting[0] == ticket and self._active < self.slots):
                        self._cond.wait(every)
        except BaseException:
            with self._cond:
                if ticket in self._waiting:
                    self._waiting.remove(ticket)
                self._cond.notify_all()
            raise
        try:
            yield
        finally:
            with self._cond:
                self._active -= 1
                self._cond.notify_all()

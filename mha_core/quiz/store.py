"""Progress kept server-side per student id, so a reload with the same URL restores it."""

from __future__ import annotations

import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable

from mha_core.quiz.progress import Progress

_STUDENT_ID = re.compile(r"[0-9a-f]{8}")


def new_student_id() -> str:
    """A fresh id: 8 hex digits, short enough for a URL, random enough for a class."""
    return secrets.token_hex(4)


def valid_student_id(value: object) -> bool:
    """Whether a value (e.g. from the URL) is a well-formed student id."""
    return isinstance(value, str) and _STUDENT_ID.fullmatch(value) is not None


def student_seed(student_id: str) -> int:
    """The seed that shuffles this student's options and draws their numbers."""
    return int(student_id, 16)


class ProgressStore:
    """Progress per student id, shared by every session of one server process: thread-safe, and
    bounded (the least recently used student is forgotten first)."""

    def __init__(self, capacity: int = 10_000) -> None:
        self._capacity = capacity
        self._lock = threading.Lock()
        self._data: OrderedDict[str, Progress] = OrderedDict()

    def get(self, student_id: str) -> Progress:
        """This student's progress (a fresh one if unknown)."""
        with self._lock:
            progress = self._data.get(student_id, Progress())
            if student_id in self._data:
                self._data.move_to_end(student_id)
            return progress

    def update(self, student_id: str, change: Callable[[Progress], Progress]) -> Progress:
        """Apply ``change`` atomically; if it raises, nothing is stored."""
        with self._lock:
            new = change(self._data.get(student_id, Progress()))
            self._data[student_id] = new
            self._data.move_to_end(student_id)
            while len(self._data) > self._capacity:
                self._data.popitem(last=False)
            return new

    def reset(self, student_id: str) -> None:
        """Forget a student's progress (start over)."""
        with self._lock:
            self._data.pop(student_id, None)

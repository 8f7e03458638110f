"""A cache bounded by bytes (and optionally by age), safe to share between threads: what the real-model page keeps
of its results, so a class of thirty cannot grow the server without limit.

Pure: no Streamlit, no global state. A caller owns each instance (mha_core/ui/real.py keeps one per kind of
result, process-wide). Concurrent requests for the same key compute it once; the others wait for that value.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

MIB = 1 << 20  # the unit the caches' budgets are written in


def nbytes(obj: Any, _seen: set[int] | None = None) -> int:
    """Bytes held by ``obj``'s arrays (numpy, also inside dataclasses, tuples, lists and dicts) plus a small
    allowance per other object: the size a result costs the cache."""
    seen = set() if _seen is None else _seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return obj.nbytes + 112  # a view counts as its own bytes: an overestimate, never an under-count
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return 64 + sum(nbytes(getattr(obj, f.name), seen) for f in dataclasses.fields(obj))
    if isinstance(obj, (tuple, list, set, frozenset)):
        return 56 + 8 * len(obj) + sum(nbytes(x, seen) for x in obj)
    if isinstance(obj, dict):
        return 64 + sum(nbytes(k, seen) + nbytes(v, seen) for k, v in obj.items())
    if isinstance(obj, (str, bytes)):
        return 49 + len(obj)
    return 32


def read_only(obj: Any, _seen: set[int] | None = None) -> Any:
    """``obj`` with every numpy array in it (also inside dataclasses, tuples, lists and dicts) made read-only: a
    value shared between sessions that no caller can change for the others. Returns ``obj``."""
    seen = set() if _seen is None else _seen
    if id(obj) in seen:
        return obj
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        obj.setflags(write=False)
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            read_only(getattr(obj, f.name), seen)
    elif isinstance(obj, (tuple, list, set, frozenset)):
        for x in obj:
            read_only(x, seen)
    elif isinstance(obj, dict):
        for x in obj.values():
            read_only(x, seen)
    return obj


@dataclasses.dataclass
class _Entry:
    value: Any
    size: int
    born: float


class ByteLRU:
    """Least recently used entries go first once the sizes add up to more than ``max_bytes``; entries older than
    ``ttl`` seconds are dropped on the next access. An entry larger than the whole budget is returned, not kept."""

    def __init__(self, max_bytes: int, ttl: float | None = None, clock: Callable[[], float] = time.monotonic,
                 size: Callable[[Any], int] = nbytes) -> None:
        self.max_bytes = max_bytes
        self.ttl = ttl
        self._clock = clock
        self._size = size
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._pending: dict[Hashable, threading.Event] = {}
        self._lock = threading.Lock()
        self.total = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            self._expire()
            return key in self._entries

    def get(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The value for ``key``: cached, or ``compute()`` once (other threads asking meanwhile wait for it).
        An exception from ``compute`` reaches every waiter's own call (each retries) and is not cached."""
        while True:
            with self._lock:
                self._expire()
                entry = self._entries.get(key)
                if entry is not None:
                    self._entries.move_to_end(key)
                    return entry.value
                waiting = self._pending.get(key)
                if waiting is None:
                    done = self._pending[key] = threading.Event()
                    break
            waiting.wait()
        try:
            value = compute()
        except BaseException:
            with self._lock:
                del self._pending[key]
            done.set()
            raise
        with self._lock:
            del self._pending[key]
            self._put(key, value)
        done.set()
        return value

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._entries.clear()
            self.total = 0

    def _put(self, key: Hashable, value: Any) -> None:
        size = self._size(value)
        if size > self.max_bytes:
            return
        self._entries[key] = _Entry(value, size, self._clock())
        self.total += size
        while self.total > self.max_bytes:
            _, old = self._entries.popitem(last=False)
            self.total -= old.size

    def _expire(self) -> None:
        if self.ttl is None:
            return
        now = self._clock()
        for key in [k for k, e in self._entries.items() if now - e.born > self.ttl]:
            self.total -= self._entries.pop(key).size

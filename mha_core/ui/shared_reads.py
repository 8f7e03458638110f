"""Reads a process's students share for a short window of time (their class's live state, its removed students):
one database read per window for every student on the server.

Kept in one ``st.cache_resource`` object, not ``st.cache_data``: cache_data hashes the arguments and pickles the
value out and back in at every call, and a class's redraw made four such calls per following student (py-spy: a
sixth of the script's time, issue 26). The values kept are immutable (a frozen ``LiveState``, a frozenset), so
every student may hold the same one. Holds nothing that matters: a cleared cache costs one more read.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

import streamlit as st

T = TypeVar("T")
KEPT = 64  # reads kept (the oldest go first): a process serves a few classes at a time


class Reads:
    """The last read of each key, with the window it was read in."""

    def __init__(self, kept: int = KEPT) -> None:
        self.lock = threading.Lock()
        self.kept = kept
        self.entries: OrderedDict[Hashable, tuple[int, object]] = OrderedDict()

    def get(self, key: Hashable, window: int, load: Callable[[], T]) -> T:
        """``key``'s value read in ``window``, read now by ``load`` if it was not. Two students missing at once
        both read (no lock is held while the database answers); a read that raises keeps nothing."""
        with self.lock:
            hit = self.entries.get(key)
            if hit is not None and hit[0] == window:
                return hit[1]  # type: ignore[return-value]
        value = load()
        with self.lock:
            self.entries[key] = (window, value)
            self.entries.move_to_end(key)
            while len(self.entries) > self.kept:
                self.entries.popitem(last=False)
        return value


@st.cache_resource(show_spinner=False)
def reads() -> Reads:
    """This process's shared reads."""
    return Reads()


def shared(key: Hashable, window: int, load: Callable[[], T]) -> T:
    """``load()``'s value for ``key``, read once in ``window`` by this process for all its students."""
    return reads().get(key, window, load)

"""A read the process's students share for a window of time (mha_core.ui.shared_reads): read once per window and
key, nothing kept from a read that failed, a bounded number kept."""

from __future__ import annotations

import pytest

from mha_core.classroom import DatabaseError
from mha_core.ui.shared_reads import Reads


def test_one_read_per_key_and_window():
    reads, calls = Reads(), []

    def load(value: str) -> str:
        calls.append(value)
        return value

    assert reads.get(("live", 1), 7, lambda: load("a")) == "a"
    assert reads.get(("live", 1), 7, lambda: load("b")) == "a"   # the same window: the first read's value
    assert reads.get(("live", 2), 7, lambda: load("c")) == "c"   # another class
    assert reads.get(("live", 1), 8, lambda: load("d")) == "d"   # the next window reads again
    assert calls == ["a", "c", "d"]


def test_a_failed_read_keeps_nothing_and_the_oldest_reads_go_first():
    reads = Reads(kept=2)

    def down() -> str:
        raise DatabaseError("class_db_unavailable")

    with pytest.raises(DatabaseError):
        reads.get("k", 1, down)
    assert reads.get("k", 1, lambda: "read") == "read"   # not a remembered failure
    reads.get("j", 1, lambda: "j")
    reads.get("i", 1, lambda: "i")
    assert list(reads.entries) == ["j", "i"]

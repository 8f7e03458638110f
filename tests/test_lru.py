"""The byte-bounded cache and the turn-taking gate the real-model page shares between sessions (issue 28.4)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from mha_core.lru import ByteLRU, nbytes
from mha_core.turns import Turns


def test_nbytes_counts_arrays_inside_dataclasses_and_tuples():
    from mha_core import layer_check

    d = layer_check.LayerDiff(0, 1e-6, 2e-6)
    a = np.zeros((6, 12, 128, 128), np.float32)
    assert nbytes(a) >= a.nbytes == 4_718_592
    assert nbytes((a, a)) == nbytes(a) + 56 + 16  # the same array twice counts once
    assert 0 < nbytes(d) < 1000 and nbytes({"k": a}) > a.nbytes


def test_least_recently_used_go_first_once_over_the_byte_budget():
    c = ByteLRU(max_bytes=1000, size=lambda v: v)
    for k in "abc":
        c.get(k, lambda k=k: 300)
    c.get("a", lambda: pytest.fail("a is cached"))  # a is now the most recent
    c.get("d", lambda: 300)                           # 1200 > 1000: b (least recent) goes
    assert "b" not in c and all(k in c for k in "acd") and c.total == 900
    c.get("huge", lambda: 5000)                       # larger than the budget: returned, never kept
    assert "huge" not in c and c.total == 900


def test_entries_older_than_the_ttl_are_computed_again():
    now = [0.0]
    c = ByteLRU(max_bytes=10_000, ttl=60, clock=lambda: now[0])
    calls = []
    c.get("k", lambda: calls.append(1) or 1)
    now[0] = 59
    c.get("k", lambda: calls.append(1) or 1)
    now[0] = 61
    c.get("k", lambda: calls.append(1) or 1)
    assert len(calls) == 2 and c.total == nbytes(1)


def test_concurrent_asks_for_one_key_compute_it_once_and_an_error_is_not_cached():
    c = ByteLRU(max_bytes=10_000)
    calls = []

    def slow() -> int:
        calls.append(1)
        time.sleep(0.2)
        return 7

    got = []
    threads = [threading.Thread(target=lambda: got.append(c.get("k", slow))) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert got == [7] * 8 and len(calls) == 1

    def boom() -> int:
        raise ValueError("no")

    with pytest.raises(ValueError):
        c.get("bad", boom)
    assert "bad" not in c and c.get("bad", lambda: 3) == 3


def test_turns_let_at_most_slots_in_first_come_first_served_and_tell_each_how_many_are_ahead():
    turns = Turns(2)
    inside, most, order, told = [0], [0], [], {}
    lock = threading.Lock()
    release = threading.Event()

    def student(i: int) -> None:
        def waiting(ahead: int) -> None:
            told.setdefault(i, ahead)

        with turns.turn(waiting, every=0.01):
            with lock:
                inside[0] += 1
                most[0] = max(most[0], inside[0])
                order.append(i)
            release.wait(5)
            with lock:
                inside[0] -= 1

    threads = []
    for i in range(6):  # arrive one after another
        th = threading.Thread(target=student, args=(i,))
        th.start()
        threads.append(th)
        deadline = time.time() + 5
        while i >= 2 and i not in told and time.time() < deadline:
            time.sleep(0.01)
    release.set()
    for th in threads:
        th.join()
    assert most[0] == 2 and order == list(range(6))
    assert 0 not in told and 1 not in told and [told[i] for i in range(2, 6)] == [2, 3, 4, 5]


def test_a_waiter_that_gives_up_leaves_the_queue():
    turns = Turns(1)
    hold = threading.Event()
    entered = threading.Event()

    def first() -> None:
        with turns.turn():
            entered.set()
            hold.wait(5)

    th = threading.Thread(target=first)
    th.start()
    entered.wait(5)

    def give_up(_ahead: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        with turns.turn(give_up):
            pass
    hold.set()
    th.join()
    with turns.turn(lambda _a: pytest.fail("nobody is ahead")):
        pass

"""A class's redraws take turns on one process, and a student's vote being sent goes ahead of the next redraw
(mha_core.ui.live.page.Turns): the vote's few milliseconds no longer wait for most of a redraw (issue 26)."""

from __future__ import annotations

import threading
import time

from mha_core.ui.live import page
from mha_core.ui.live.page import Turns


def _in_thread(fn) -> threading.Thread:  # noqa: ANN001
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    return t


def test_redraws_take_turns():
    turns, inside, most = Turns(), [], []
    lock = threading.Lock()

    def redraw() -> None:
        with turns.redraw():
            with lock:
                inside.append(1)
                most.append(len(inside))
            time.sleep(0.01)
            with lock:
                inside.pop()

    threads = [_in_thread(redraw) for _ in range(5)]
    for t in threads:
        t.join(5)
    assert len(most) == 5 and max(most) == page.RUNS_AT_ONCE


def test_a_redraw_begins_only_once_the_votes_being_sent_are_in():
    turns, events = Turns(), []
    sent = threading.Event()

    def vote() -> None:
        with turns.vote():
            sent.set()
            time.sleep(0.2)
            events.append("vote in")

    def redraw() -> None:
        with turns.redraw():
            events.append("redraw")

    v = _in_thread(vote)
    sent.wait(5)
    r = _in_thread(redraw)
    for t in (v, r):
        t.join(5)
    assert events == ["vote in", "redraw"]


def test_a_vote_never_holds_a_redraw_longer_than_vote_first_s(monkeypatch):
    monkeypatch.setattr(page, "VOTE_FIRST_S", 0.05)
    turns = Turns()
    with turns.vote():  # a vote that never ends (its thread died)
        t0 = time.monotonic()
        with turns.redraw():
            waited = time.monotonic() - t0
    assert 0.04 < waited < 1.0 and turns.sending == 0

"""A class's redraw draws a lesson page's body once (mha_core.ui.shared_body): the pure pieces, and a real server
where the second of two following students gets the first one's recorded body and still votes as themself."""

from __future__ import annotations

import asyncio
import re
import secrets
import threading
import time
from dataclasses import replace
from types import SimpleNamespace
from urllib.parse import parse_qs, urlencode

import numpy as np
import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from harness.server import start_server, stop_server
from harness.websocket_client import DEFAULT_PAGE, Run, Student, rerun_request
from mha_core.classroom import Storage, sqlite_url
from mha_core.lesson import LiveState, VoteState, default_plan, snapshot
from mha_core.lesson.store import publish_live, save_plan
from mha_core.quiz.progress_store import new_student_id
from mha_core.settings import H_DIV, SETTINGS
from mha_core.ui import shared_body
from mha_core.ui.live import page
from mha_core.ui.live.keys import LIVE_QUERY, SEND_KEY, choice_key
from mha_core.ui.shared_body import MISSING, Recording, Store, frozen, same

HEX = re.compile(rb"[0-9a-f]{32}")  # a deferred download's file id: new in every run


def test_only_equal_values_of_one_type_are_the_same():
    assert same(4, 4) and same("zh", "zh") and same((1, "a"), (1, "a")) and same(MISSING, MISSING)
    assert not same(4, 4.0)           # an int setting read as a float is not the same setting
    assert not same(1, True)
    assert not same(np.ones(2), np.ones(2))  # no truth value: never shared


def test_a_value_read_is_kept_as_it_was_then():
    seen = {"a": [1]}
    kept = frozen(seen)
    seen["a"].append(2)
    assert kept == {"a": [1]}


def test_a_recording_keeps_the_first_look_and_not_what_the_body_wrote_first():
    rec = Recording(start=())
    rec.read("h", 4)
    rec.read("h", 8)                  # the body changed it in between: the first look is what it depended on
    rec.written.add("mine")
    rec.read("mine", 1)
    rec.depth = 1
    rec.read("ballot", 2)             # a student's own part reads for itself
    assert rec.reads == {"h": 4}
    rec.refuse("one")
    rec.refuse("two")
    assert rec.refused == "one"


def test_the_store_finds_the_newest_match_and_keeps_a_few_per_page():
    store = Store()
    for i in range(shared_body.VARIANTS + 2):
        store.keep(("split", 1), Recording(start=(), live=i))
    assert store.find(("split", 1), lambda r: r.live >= 3).live == shared_body.VARIANTS + 1
    assert store.find(("split", 1), lambda r: r.live == 0) is None  # the oldest went
    assert store.find(("attend", 1), lambda r: True) is None
    for c in range(shared_body.PAGES_KEPT + 1):
        store.keep(("why", c), Recording(start=()))
    assert ("split", 1) not in store.pages and len(store.pages) == shared_body.PAGES_KEPT


def test_a_redraw_waits_until_the_event_loop_has_sent_what_was_queued_before_it(monkeypatch):
    """A replayed page is queued faster than the loop sends it: the next follower's turn waits for the loop (a
    flush hands its writes to the loop's next round, as Streamlit's sender tasks take them), never for ever."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    monkeypatch.setattr(page.Runtime, "exists", staticmethod(lambda: True))
    monkeypatch.setattr(page.Runtime, "instance", staticmethod(
        lambda: SimpleNamespace(_get_async_objs=lambda: SimpleNamespace(eventloop=loop))))
    sent: list[str] = []
    try:
        def write() -> None:  # a socket write that takes a while
            time.sleep(0.05)
            sent.append("written")

        gate = threading.Event()
        loop.call_soon_threadsafe(gate.wait, 1.0)  # the loop busy: what follows is queued together
        loop.call_soon_threadsafe(lambda: loop.call_soon(write))  # a flush, which hands its write to the next round
        threading.Timer(0.05, gate.set).start()
        assert page.caught_up(1.0) and sent == ["written"]
        busy = threading.Event()
        loop.call_soon_threadsafe(lambda: busy.wait(2.0))  # a loop stuck for 2 s
        t0 = time.perf_counter()
        assert not page.caught_up(0.1) and time.perf_counter() - t0 < 1.0
        busy.set()
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
    monkeypatch.setattr(page.Runtime, "exists", staticmethod(lambda: False))
    assert not page.caught_up(1.0)  # AppTest: no server, no loop


Deltas = list[tuple[tuple[int, ...], bytes]]


def _note(fm: ForwardMsg, run: Run, fragments: dict[str, str]) -> None:
    """A new element noted as the harness notes a run's (``Run.collect``), with the fragment each widget is in."""
    if fm.WhichOneof("type") == "delta" and fm.delta.WhichOneof("type") == "new_element":
        run.collect(fm.delta.new_element)
        for wid, _, _ in run.widgets.values():
            fragments.setdefault(wid, fm.delta.fragment_id)


async def _redrawn(student: Student, version: int) -> tuple[Deltas, Run, dict[str, str]]:
    """The full run the server pushes to ``student`` for live ``version``: the page's deltas outside fragments (the
    ballot is one), as (path, element with its run-to-run file ids blanked) in the order sent; its widgets; and the
    fragment of each widget id."""
    deltas: Deltas = []
    run, fragments = Run(), {}
    while True:
        fm = await student.receive(timeout=20)
        kind = fm.WhichOneof("type")
        if kind == "new_session":
            deltas.clear()
            run, fragments = Run(), {}
        elif kind == "page_info_changed":
            student.query = {k: v[0] for k, v in parse_qs(fm.page_info_changed.query_string).items()}
        elif kind == "delta" and not fm.delta.fragment_id:
            deltas.append((tuple(fm.metadata.delta_path), HEX.sub(b"X", fm.delta.SerializeToString())))
        elif (kind == "script_finished" and fm.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY
              and student.query.get(LIVE_QUERY) == str(version)):
            return deltas, run, fragments
        _note(fm, run, fragments)


@pytest.mark.e2e
def test_a_classmate_gets_the_same_page_and_votes_as_themself(tmp_path):
    url = sqlite_url(tmp_path / "class.db")
    store = Storage.open(url)
    info = store.create_class()
    save_plan(store, info.id, default_plan())
    keys = [secrets.token_hex(16) for _ in range(2)]
    ids = {store.join(info.code, k, name).student_id: i
           for i, (k, name) in enumerate(zip(keys, ("Ada", "Bo"), strict=True))}
    values = {s.key: s.default for s in SETTINGS if s.default is not None}
    now = time.time()
    state = LiveState(step=0, page="split", settings=snapshot(values), step_started_at=now, lesson_started_at=now)
    publish_live(store, info.id, state)
    proc, base = start_server(env={"MHA_DATABASE_URL": url})

    async def lesson() -> tuple[list, list, str]:
        students = [Student(base, new_student_id(), {"class": info.code, "student": k}) for k in keys]
        for s in students:
            await s.connect()
        try:
            for s in students:
                await s.run(DEFAULT_PAGE)
            await asyncio.sleep(1.0)      # the watcher reads the class once (where it is now)
            values[H_DIV.key] = 2         # a move: a new live state, recorded by one and replayed to the other
            moved = publish_live(store, info.id, replace(state, settings=snapshot(values)))
            moves = await asyncio.gather(*(_redrawn(s, moved) for s in students))
            ballot = next(k for k in moves[1][1].widgets if k.startswith("live_choice_") and k.endswith("_0"))
            vote_key = ballot[len("live_choice_"):-2]  # the question as asked at these settings
            run, fragments = moves[1][1], moves[1][2]
            assert fragments[run.widget_id(ballot)] == ""  # before the vote opens: drawn with the page, shared
            voting = publish_live(store, info.id, replace(state, settings=snapshot(values),
                                                          vote=VoteState(vote_key, 1, "open", 0, 4)))
            votes = await asyncio.gather(*(_redrawn(s, voting) for s in students))
            for s, (_, run, fragments), choice in zip(students, votes, (1, 2), strict=True):
                await _vote(s, run, fragments, vote_key, choice)
            return [d for d, _, _ in moves], [d for d, _, _ in votes], vote_key
        finally:
            for s in students:
                await s.close()

    try:
        moves, votes, vote_key = asyncio.run(lesson())
        stored = {ids[r.student_id]: r.choice for r in store.votes(info.id, vote_key)}
    finally:
        stop_server(proc)
        store.dispose()
    for drawn in (moves, votes):
        assert len(drawn[0]) > 20 and any(b"live_vote_" in d for _, d in drawn[0])
        assert drawn[0] == drawn[1]   # the same page, element for element, path for path
    assert stored == {0: 1, 1: 2}     # each vote stored as its own student's


async def _vote(student: Student, run: Run, fragments: dict[str, str], vote_key: str, choice: int) -> None:
    """Pick ``choice`` on the open ballot as ``run`` drew it and send it, as a browser does (two runs of the
    ballot's fragment)."""
    radio_id, _, radio = run.widgets[choice_key(vote_key, 1)]
    fragment = fragments[radio_id]
    pick = WidgetState(id=radio_id, string_value=radio.options[choice])
    await student.send(rerun_request(urlencode(student.query), "", [pick], fragment_id=fragment, auto=False))
    after = Run()
    while SEND_KEY not in after.widgets:
        _note(await student.receive(timeout=20), after, fragments)
    send = WidgetState(id=after.widget_id(SEND_KEY), trigger_value=True)
    await student.send(rerun_request(urlencode(student.query), "", [pick, send], fragment_id=fragment, auto=False))
    ended = 0
    while ended < 2:  # the choice's run, then the send's
        fm = await student.receive(timeout=20)
        ended += fm.WhichOneof("type") == "script_finished"

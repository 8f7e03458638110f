"""The live lesson's storage on SQLite and PostgreSQL (MHA_TEST_DATABASE_URL, required in CI): the saved plan,
the presenter's state and its versions (10 publishers at once), class votes (idempotent, refused unless their
round is open), presence, the v2 → v3 migration, and the votes on the dashboard and in the CSV export."""

from __future__ import annotations

import csv
import io
import threading
import time
from collections.abc import Iterator
from datetime import datetime

import pytest
from dbhelpers import BACKENDS, empty_database
from sqlalchemy import MetaData, func, select

from mha_core.classroom import (
    AnswerRow,
    Member,
    Storage,
    StudentRow,
    VoteRow,
    answers_csv,
    dashboard,
    vote_stats,
)
from mha_core.classroom.schema import (
    SCHEMA_VERSION,
    answers,
    classes,
    live,
    metadata,
    plans,
    presence,
    schema_version,
    students,
    votes,
)
from mha_core.errors import LabError
from mha_core.lesson import LiveState, Plan, Step, VoteState, default_plan, snapshot, vote_key
from mha_core.lesson.store import load_plan, publish_live, read_live, save_plan

KEY = vote_key("attend", "row_sum", (2, 8, "the cat sat"))
OTHER_KEY = vote_key("split", "shape", (2, 8))
V2_TABLES = ("mha_schema_version", "mha_classes", "mha_students", "mha_answers", "mha_progress", "mha_limiter")


@pytest.fixture(params=BACKENDS)
def url(request, tmp_path) -> Iterator[str]:
    """An empty database on each backend (PostgreSQL tables dropped before and after)."""
    with empty_database(request.param, tmp_path) as u:
        yield u


@pytest.fixture
def store(url) -> Iterator[Storage]:
    s = Storage.open(url)
    yield s
    s.dispose()


def _state(step: int = 0, vote: VoteState | None = None) -> LiveState:
    return LiveState(step=step, page="attend", settings=snapshot({"h": 2, "d_head": 8, "causal": True}), vote=vote,
                     step_started_at=1_700_000_060.0, lesson_started_at=1_700_000_000.0)


def _vote(phase: str = "open", round_: int = 1, key: str = KEY) -> VoteState:
    return VoteState(key=key, round=round_, phase=phase, answer=1, n_options=3)


def _class_with(store: Storage, n: int) -> tuple[int, list[Member]]:
    info = store.create_class()
    return info.id, [store.join(info.code, f"{i:032x}", f"student {i}") for i in range(n)]


def _count(store: Storage, table) -> int:  # noqa: ANN001 - a Table
    with store.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


# --- the plan ---

def test_a_class_keeps_its_plan(store):
    class_id, _ = _class_with(store, 0)
    assert load_plan(store, class_id) is None
    save_plan(store, class_id, default_plan())
    assert load_plan(store, class_id) == default_plan()
    short = Plan((Step("split", 4), Step("quiz", 6, ("d-head",))))
    save_plan(store, class_id, short)
    assert load_plan(store, class_id) == short and _count(store, plans) == 1
    with pytest.raises(LabError) as err:
        save_plan(store, class_id + 100, short)
    assert err.value.key == "lesson_class_gone"


# --- the presenter's state ---

def test_each_publish_grows_the_version_by_one(store):
    class_id, _ = _class_with(store, 0)
    assert read_live(store, class_id) == (0, None)
    assert [publish_live(store, class_id, _state(i)) for i in range(3)] == [1, 2, 3]
    assert read_live(store, class_id) == (3, _state(2))
    publish_live(store, class_id, _state(4, _vote("histogram", 2)))
    assert read_live(store, class_id) == (4, _state(4, _vote("histogram", 2)))
    with store.engine.connect() as conn:  # the vote's mirrors, for cast_vote's check in SQL
        row = conn.execute(select(live).where(live.c.class_id == class_id)).one()
    assert (row.vote_key, row.vote_round, row.vote_phase) == (KEY, 2, "histogram")
    store.end_live(class_id)
    assert read_live(store, class_id) == (5, None)  # ended, and the version still grew: followers notice
    assert publish_live(store, class_id, _state()) == 6 and read_live(store, class_id) == (6, _state())
    with pytest.raises(LabError) as err:
        publish_live(store, class_id + 100, _state())
    assert err.value.key == "lesson_class_gone"


def test_a_publish_on_a_stale_version_stores_nothing(store):
    class_id = store.create_class().id
    assert publish_live(store, class_id, _state(0)) == 1
    assert publish_live(store, class_id, _state(2), seen=1) == 2           # the version this window saw
    assert publish_live(store, class_id, _state(1), seen=1) is None        # a stale window: refused
    assert read_live(store, class_id) == (2, _state(2))
    store.end_live(class_id)
    assert publish_live(store, class_id, _state(1), seen=2) is None        # ended elsewhere meanwhile
    assert publish_live(store, store.create_class().id, _state(1), seen=0) is None  # never live


def test_of_ten_windows_publishing_on_one_seen_version_one_wins(store):
    class_id = store.create_class().id
    publish_live(store, class_id, _state(0))
    barrier, won = threading.Barrier(10), []

    def publish(step: int) -> None:
        barrier.wait()
        if publish_live(store, class_id, _state(step), seen=1) is not None:
            won.append(step)

    threads = [threading.Thread(target=publish, args=(i,)) for i in range(10)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(won) == 1 and read_live(store, class_id) == (2, _state(won[0]))


def test_ten_publishers_at_once_get_ten_distinct_versions(store):
    class_id, _ = _class_with(store, 0)
    barrier = threading.Barrier(10)
    got: list[int] = []
    errors: list[BaseException] = []

    def publish(i: int) -> None:
        try:
            barrier.wait()
            got.append(publish_live(store, class_id, _state(i)))
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=publish, args=(i,)) for i in range(10)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors[:3]
    assert sorted(got) == list(range(1, 11))
    version, state = read_live(store, class_id)
    assert version == 10 and state is not None and state.step in range(10)


# --- votes ---

def test_a_vote_is_stored_once_and_voting_again_replaces_the_choice(store):
    class_id, (ann, bo) = _class_with(store, 2)
    publish_live(store, class_id, _state(vote=_vote()))
    store.cast_vote(ann, KEY, 1, 0, False)
    store.cast_vote(ann, KEY, 1, 0, False)  # the same vote resent (a retry): still one row
    assert [(v.name, v.choice, v.correct) for v in store.votes(class_id)] == [("student 0", 0, False)]
    store.cast_vote(ann, KEY, 1, 1, True)   # a change of mind while the round is open
    store.cast_vote(bo, KEY, 1, 2, False)
    rows = store.votes(class_id)
    assert [(v.student_id, v.vote_key, v.round, v.choice, v.correct) for v in rows] == [
        (ann.student_id, KEY, 1, 1, True), (bo.student_id, KEY, 1, 2, False)]
    assert all(isinstance(v, VoteRow) and isinstance(v.voted_at, datetime) for v in rows)
    publish_live(store, class_id, _state(vote=_vote(round_=2)))  # vote again: round 2 is a new row
    store.cast_vote(ann, KEY, 2, 1, True)
    assert _count(store, votes) == 3
    assert [(v.round, v.choice) for v in store.votes(class_id) if v.student_id == ann.student_id] == [(1, 1), (2, 1)]


@pytest.mark.parametrize("live_vote, key, round_", [
    (None, KEY, 1),                      # no live lesson at all
    (_vote("closed"), KEY, 1),           # the teacher closed the round
    (_vote("histogram"), KEY, 1),
    (_vote("revealed"), KEY, 1),
    (_vote(), OTHER_KEY, 1),             # another vote is open
    (_vote(), KEY, 2),                   # round 1 is open, not round 2
    (_vote(round_=2), KEY, 1),           # round 2 is open: round 1 takes no more
], ids=["not-live", "closed", "histogram", "revealed", "other-key", "other-round", "old-round"])
def test_a_vote_outside_its_open_round_is_refused(store, live_vote, key, round_):
    class_id, (ann,) = _class_with(store, 1)
    if live_vote is not None:
        publish_live(store, class_id, _state(vote=live_vote))
    with pytest.raises(LabError) as err:
        store.cast_vote(ann, key, round_, 1, True)
    assert err.value.key == "vote_closed"
    assert store.votes(class_id) == ()


@pytest.mark.parametrize("choice", [3, 7, -1, 2**31, 10**30, True, 1.0, float("nan"), "1", "7", None],
                         ids=["n", "7-of-3", "negative", "int32+1", "huge", "bool", "float", "nan", "str-1", "str-7",
                              "none"])
def test_a_ballot_outside_the_votes_options_is_refused_and_nothing_stored(store, choice):
    class_id, (ann,) = _class_with(store, 1)
    publish_live(store, class_id, _state(vote=_vote()))       # 3 options
    with pytest.raises(LabError) as err:
        store.cast_vote(ann, KEY, 1, choice, False)
    assert err.value.key == "vote_choice_bad"
    assert store.votes(class_id) == ()
    store.cast_vote(ann, KEY, 1, 2, False)                   # the last option is one
    assert [v.choice for v in store.votes(class_id)] == [2]


def test_the_option_count_is_checked_by_the_statement_that_stores_the_ballot(store):
    """The count is read from the stored live state in SQL: a vote with 2 options refuses choice 2 even when the
    caller believes there are 3."""
    class_id, (ann,) = _class_with(store, 1)
    publish_live(store, class_id, _state(vote=VoteState(key=KEY, round=1, phase="open", answer=1, n_options=2)))
    with pytest.raises(LabError) as err:
        store.cast_vote(ann, KEY, 1, 2, False)
    assert err.value.key == "vote_choice_bad" and store.votes(class_id) == ()
    store.end_live(class_id)                                 # no vote (empty state): closed, not a bad choice
    with pytest.raises(LabError) as err:
        store.cast_vote(ann, KEY, 1, 0, False)
    assert err.value.key == "vote_closed"


def test_a_closed_vote_keeps_the_choice_made_while_open(store):
    class_id, (ann,) = _class_with(store, 1)
    publish_live(store, class_id, _state(vote=_vote()))
    store.cast_vote(ann, KEY, 1, 2, False)
    publish_live(store, class_id, _state(vote=_vote("closed")))
    with pytest.raises(LabError):
        store.cast_vote(ann, KEY, 1, 1, True)
    store.end_live(class_id)
    with pytest.raises(LabError) as err:
        store.cast_vote(ann, KEY, 1, 1, True)
    assert err.value.key == "vote_closed"
    assert [(v.choice, v.correct) for v in store.votes(class_id)] == [(2, False)]


def test_a_vote_in_a_closed_or_vanished_class_is_refused(store):
    class_id, (ann, bo) = _class_with(store, 2)
    publish_live(store, class_id, _state(vote=_vote()))
    store.set_closed(class_id, True)
    with pytest.raises(LabError) as err:
        store.cast_vote(ann, KEY, 1, 1, True)
    assert err.value.key == "class_closed" and err.value.params == {"code": ann.code}
    store.set_closed(class_id, False)
    with store.engine.begin() as conn:
        conn.execute(students.delete().where(students.c.id == bo.student_id))
    with pytest.raises(LabError) as err:
        store.cast_vote(bo, KEY, 1, 1, True)
    assert err.value.key == "class_gone"
    store.cast_vote(ann, KEY, 1, 1, True)
    with store.engine.begin() as conn:
        conn.execute(classes.delete())
    with pytest.raises(LabError) as err:
        store.cast_vote(ann, KEY, 1, 0, False)
    assert err.value.key == "class_gone"
    assert _count(store, votes) == _count(store, live) == 0  # gone with their class (cascade)


def test_votes_can_be_read_for_one_key(store):
    class_id, (ann, bo) = _class_with(store, 2)
    other_class, (cy,) = _class_with(store, 1)
    for cid, key, voters in ((class_id, KEY, (ann, bo)), (class_id, OTHER_KEY, (bo,)), (other_class, KEY, (cy,))):
        publish_live(store, cid, _state(vote=_vote(key=key)))
        for m in voters:
            store.cast_vote(m, key, 1, 0, False)
    assert [(v.name, v.vote_key) for v in store.votes(class_id)] == [
        ("student 0", KEY), ("student 1", KEY), ("student 1", OTHER_KEY)]
    assert [v.name for v in store.votes(class_id, OTHER_KEY)] == ["student 1"]
    assert [v.name for v in store.votes(class_id, KEY)] == ["student 0", "student 1"]
    assert store.votes(class_id, "nobody.voted.0000000000") == ()
    assert [v.student_id for v in store.votes(other_class)] == [cy.student_id]
    assert [(v.name, v.vote_key) for v in store.votes(class_id, KEY, bo.student_id)] == [("student 1", KEY)]
    assert store.votes(class_id, OTHER_KEY, ann.student_id) == ()           # one student's (a reload restores them)


# --- presence ---

def test_presence_counts_students_seen_lately_and_those_following(store):
    class_id, (ann, bo, cy, dee) = _class_with(store, 4)
    assert store.presence(class_id) == (0, 0)
    store.heartbeat(ann, True)
    store.heartbeat(bo, True)
    store.heartbeat(cy, False)
    assert store.presence(class_id) == (2, 3)
    store.heartbeat(bo, False)  # bo left to explore: one row, updated
    assert store.presence(class_id) == (1, 3) and _count(store, presence) == 3
    with store.engine.begin() as conn:  # dee was here a minute ago, ann 10 s ago
        conn.execute(presence.insert().values(class_id=class_id, student_id=dee.student_id, following=True,
                                              seen_at=time.time() - 60))
        conn.execute(presence.update().where(presence.c.student_id == ann.student_id)
                     .values(seen_at=time.time() - 10))
    assert store.presence(class_id) == (1, 3)
    assert store.presence(class_id, within_s=5) == (0, 2)
    assert store.presence(class_id, within_s=120) == (2, 4)
    with store.engine.begin() as conn:
        conn.execute(students.delete().where(students.c.id == cy.student_id))
    assert store.presence(class_id, within_s=120) == (2, 3)  # the presence row went with the student
    with pytest.raises(LabError) as err:
        store.heartbeat(cy, True)
    assert err.value.key == "class_gone"


# --- migration from a v2 database ---

def test_a_v2_database_is_migrated_to_v3_and_keeps_its_rows(url):
    old = MetaData()
    for name in V2_TABLES:
        metadata.tables[name].to_metadata(old)
    s = Storage.open(url)  # only to get an engine of the right kind; start from the v2 tables alone
    metadata.drop_all(s.engine)
    old.create_all(s.engine)
    now = datetime(2025, 1, 1)
    with s.engine.begin() as conn:
        conn.execute(schema_version.insert().values(id=1, version=2))
        conn.execute(classes.insert().values(id=7, code="K7QX2MPA", created_at=now, closed=False, reveal=True))
        conn.execute(students.insert().values(id=3, class_id=7, key="a" * 32, name="Ann", joined_at=now))
        conn.execute(answers.insert().values(class_id=7, student_id=3, question_id="d-head", canonical="128",
                                             correct=True, attempts=2, answered_at=now))
        assert not {"mha_live", "mha_votes"} & set(s.engine.dialect.get_table_names(conn))
    s.dispose()
    s = Storage.open(url)
    with s.engine.connect() as conn:
        assert conn.execute(select(schema_version.c.version)).scalars().all() == [SCHEMA_VERSION]
        assert {"mha_plans", "mha_live", "mha_votes", "mha_presence"} <= set(s.engine.dialect.get_table_names(conn))
    assert [(r.name, r.question_id, r.canonical, r.attempts) for r in s.answers(7)] == [("Ann", "d-head", "128", 2)]
    ann = s.member("K7QX2MPA", "a" * 32)
    assert ann is not None and s.find_class("K7QX2MPA").reveal
    assert publish_live(s, 7, _state(vote=_vote())) == 1
    s.cast_vote(ann, KEY, 1, 1, True)
    assert [(v.name, v.choice) for v in s.votes(7)] == [("Ann", 1)]
    s.dispose()


# --- the dashboard and the CSV export ---

def _vrow(sid: int, name: str, key: str, round_: int, choice: int, correct: bool) -> VoteRow:
    return VoteRow(sid, name, key, round_, choice, correct, datetime(2025, 1, 1, 9, 30))


VOTES = [_vrow(1, "Ann", KEY, 1, 0, False), _vrow(2, "Bo", KEY, 1, 1, True), _vrow(3, "Cy", OTHER_KEY, 1, 2, True),
         _vrow(1, "Ann", KEY, 2, 1, True), _vrow(2, "Bo", KEY, 2, 1, True), _vrow(3, "Cy", KEY, 1, 0, False)]


def test_the_dashboard_shows_each_vote_round_in_the_order_first_voted():
    stats = vote_stats(VOTES)
    assert [(s.vote_key, s.round, s.answered, s.right) for s in stats] == [
        (KEY, 1, 3, 1), (KEY, 2, 2, 2), (OTHER_KEY, 1, 1, 1)]
    assert stats[0].share == pytest.approx(1 / 3) and stats[1].share == 1
    people = [StudentRow(1, "Ann", datetime(2025, 1, 1))]
    assert dashboard(people, [], ["q1"], votes=VOTES).votes == stats
    assert dashboard(people, [], ["q1"]).votes == ()  # the teacher view's call as it was still works


def test_the_csv_lists_votes_after_the_answers_spreadsheet_safe():
    answer = AnswerRow(1, "Ann", "d-head", "128", True, 2, datetime(2025, 1, 1))
    evil = [_vrow(4, "\u202e=cmd|' /C calc'!A0", KEY, 2, 1, True), _vrow(5, "@SUM(1)", "=evil.key", 1, 0, False)]
    text = answers_csv("K7QX2MPA", [answer], {"d-head": "d_head", KEY: "Row sums"}, votes=evil)
    assert text.startswith("\ufeff")
    table = list(csv.reader(io.StringIO(text[1:])))
    assert table[0] == ["class", "student", "question_id", "question", "answer", "correct", "attempts",
                        "answered_at", "kind", "round"]
    assert table[1] == ["K7QX2MPA", "Ann", "d-head", "d_head", "128", "1", "2", "2025-01-01T00:00:00", "answer", ""]
    assert table[2] == ["K7QX2MPA", "'=cmd|' /C calc'!A0", KEY, "Row sums", "1", "1", "", "2025-01-01T09:30:00",
                        "vote", "2"]
    assert table[3][1:4] == ["'@SUM(1)", "'=evil.key", "'=evil.key"] and table[3][8:] == ["vote", "1"]
    assert len(table) == 4 and "\u202e" not in text
    assert answers_csv("K7QX2MPA", [answer], {}) == answers_csv("K7QX2MPA", [answer], {}, votes=())

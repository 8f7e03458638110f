"""Issue 28 items 2 and 11 in the core (SQLite always, PostgreSQL with MHA_TEST_DATABASE_URL): one name per
student in a class, joins limited per class and per address in the database, a lock on new joins, a student
removed with their answers and votes, the presenter's counts, an old database upgraded; and a right password
clearing the shared address's back-off."""

from __future__ import annotations

import pytest
from dbhelpers import BACKENDS, empty_database, old_schema
from sqlalchemy import func, inspect, select

from mha_core.classroom import SESSION, SOURCE, RateLimiter, Storage, make_engine
from mha_core.classroom.joins import Bucket, JoinLimiter, JoinLimits, join_limits
from mha_core.classroom.names import name_key
from mha_core.classroom.schema import SCHEMA_VERSION, answers, migrate, students, votes
from mha_core.errors import LabError
from mha_core.lesson.live import LiveState, VoteState
from mha_core.lesson.store import publish_live
from mha_core.quiz import load_questions

QUESTIONS = tuple(q.id for q in load_questions("en"))
A, B, C = "a" * 32, "b" * 32, "c" * 32



def _open(key: str, round_: int) -> LiveState:
    """A live state with an open three-option vote."""
    return LiveState(step=0, page="attend", settings=(),
                     vote=VoteState(key=key, round=round_, phase="open", answer=0, n_options=3))


# --- (a) one name per student ---

def test_names_compare_after_nfkc_case_folding_and_spaces():
    same = ["Ann Lee", " ann  lee ", "ANN LEE", "Ａｎｎ Ｌｅｅ", "Ann\u200b Lee", "ann\u3000lee", "Ann\u202e Lee"]
    assert {name_key(n) for n in same} == {"ann lee"}
    assert name_key("Straße") == name_key("STRASSE") and name_key("Ann") != name_key("Anna")
    assert len(name_key("\ufdfa" * 40)) <= 128  # a name that NFKC makes 18 times longer fits its column


def test_a_taken_name_is_refused_but_its_owner_comes_back(store):
    info = store.create_class()
    ann = store.join(info.code, A, "Ann Lee")
    for variant in ("Ann Lee", "ann lee", "ＡＮＮ  LEE", "Ann\u200bLee".replace("\u200b", "\u200b ")):
        with pytest.raises(LabError) as err:
            store.join(info.code, B, variant)
        assert err.value.key == "class_name_taken"
    assert store.join(info.code, A, "Ann Lee") == ann                 # the same student reconnecting
    assert store.join(info.code, A, "ANN LEE") == ann                 # typed differently: stored name kept
    assert store.join(info.code, A, "Ann L.", rename=True).name == "Ann L."  # their own session renames
    with pytest.raises(LabError) as err:                              # a rename cannot take another's name
        store.join(info.code, B, "Bo")
        store.join(info.code, B, "ann l.", rename=True)
    assert err.value.key == "class_name_taken"
    assert store.join(info.code, C, "Ann Lee").name == "Ann Lee"      # Ann's old name is free again
    other = store.create_class()
    assert store.join(other.code, B, "Ann L.").name == "Ann L."       # names are per class
    assert len(store.students(info.id)) == 3


# --- (d) the lock and the removal ---

def test_a_locked_class_refuses_new_students_only(store):
    info = store.create_class()
    ann = store.join(info.code, A, "Ann")
    store.set_locked(info.id, True)
    assert store.find_class(info.code).locked and store.list_classes()[0].locked
    with pytest.raises(LabError) as err:
        store.join(info.code, B, "Bo")
    assert err.value.key == "class_locked"
    assert store.join(info.code, A, "Ann") == ann                     # coming back after a reload still works
    store.set_locked(info.id, False)
    assert store.join(info.code, B, "Bo").name == "Bo"


def test_a_removed_student_loses_answers_and_votes_and_cannot_rejoin(store):
    info = store.create_class()
    ann, bo = store.join(info.code, A, "Ann"), store.join(info.code, B, "Bo")
    publish_live(store, info.id, _open("attend.q.1", 1))
    for m in (ann, bo):
        store.record(m, QUESTIONS[0], "a", True)
        store.cast_vote(m, "attend.q.1", 1, 0, True)
    assert store.remove_student(info.id, ann.student_id)
    assert not store.remove_student(info.id, ann.student_id)          # twice: nothing more to remove
    assert [s.name for s in store.students(info.id)] == ["Bo"]
    assert [r.name for r in store.answers(info.id)] == ["Bo"] and [v.name for v in store.votes(info.id)] == ["Bo"]
    assert store.was_removed(info.id, A) and not store.was_removed(info.id, B)
    assert store.removed_keys(info.id) == frozenset({A})              # what a live lesson's followers share
    assert store.class_of(ann) is None                                # the session notices (see ui.student)
    for refused in (lambda: store.join(info.code, A, "Ann"), lambda: store.record(ann, QUESTIONS[1], "a", True),
                    lambda: store.cast_vote(ann, "attend.q.1", 1, 0, True)):
        with pytest.raises(LabError):
            refused()
    with pytest.raises(LabError) as err:
        store.join(info.code, A, "Ann again")
    assert err.value.key == "class_removed"
    assert store.join(info.code, C, "Ann").name == "Ann"              # the name is free for a real Ann


# --- (c) the counts ---

def test_turnout_counts_joined_and_votes_in_the_open_round(store):
    info = store.create_class()
    members = [store.join(info.code, k * 32, n) for k, n in zip("abc", ("Ann", "Bo", "Cy"), strict=True)]
    assert store.turnout(info.id).joined == 3 and store.turnout(info.id).voted is None
    publish_live(store, info.id, _open("attend.q.1", 1))
    store.cast_vote(members[0], "attend.q.1", 1, 0, True)
    store.cast_vote(members[1], "attend.q.1", 1, 1, False)
    assert (store.turnout(info.id).joined, store.turnout(info.id).voted) == (3, 2)
    publish_live(store, info.id, _open("attend.q.1", 2))
    store.cast_vote(members[2], "attend.q.1", 2, 0, True)
    assert store.turnout(info.id).voted == 1                          # the open round only


# --- (b) the join limiter ---

def _limiter(store: Storage, now: list[float]) -> JoinLimiter:
    return JoinLimiter(store, JoinLimits(), clock=lambda: now[0])


def test_a_script_is_stopped_but_a_class_behind_one_nat_gets_in(store):
    now = [10_000.0]
    lim = _limiter(store, now)
    admitted = 0
    for _ in range(100):                                              # 100 joins in 4 s from one address
        admitted += lim.take(1, "203.0.113.9") == 0
        now[0] += 0.04
    assert 12 <= admitted <= 12 + 3                                   # the burst, and 45 a minute for 4 s
    lim.take(1, "203.0.113.9")
    assert 0 < lim.take(1, "203.0.113.9") <= 60 / 45                 # told how long to wait
    now[0] += 3600
    for i in range(40):                                               # a class of 40 behind one NAT, over 50 s
        assert lim.take(2, "198.51.100.1") == 0, i
        now[0] += 1.25


def test_the_class_bucket_caps_many_addresses_and_the_state_is_in_the_database(store):
    now = [20_000.0]
    lim = _limiter(store, now)
    results = [lim.take(7, f"10.0.{i // 200}.{i % 200}") for i in range(100)]  # 100 addresses at once
    assert sum(w == 0 for w in results) == 60
    again = JoinLimiter(Storage(store.engine), JoinLimits(), clock=lambda: now[0])  # a restart or a replica
    assert again.take(7, "10.9.9.9") > 0 and again.take(8, "10.9.9.9") == 0
    assert again.level("class:7", JoinLimits().klass) < 1


def test_join_limits_come_from_the_environment():
    assert join_limits({}) == JoinLimits()
    assert join_limits({"MHA_JOIN_LIMITS": "200/600,500/900"}) == JoinLimits(Bucket(200, 600), Bucket(500, 900))
    assert join_limits({"MHA_JOIN_LIMITS": "nonsense"}) == JoinLimits()


# --- the schema upgrade ---

V3_TABLES = """
CREATE TABLE mha_schema_version (id INTEGER PRIMARY KEY, version INTEGER NOT NULL);
CREATE TABLE mha_classes (id {serial}, code VARCHAR(16) NOT NULL UNIQUE, created_at TIMESTAMP NOT NULL,
    closed BOOLEAN NOT NULL, reveal BOOLEAN NOT NULL);
CREATE TABLE mha_students (id {serial}, class_id INTEGER NOT NULL REFERENCES mha_classes (id) ON DELETE CASCADE,
    key VARCHAR(64) NOT NULL, name VARCHAR(40) NOT NULL, joined_at TIMESTAMP NOT NULL,
    CONSTRAINT uq_student_key UNIQUE (class_id, key));
INSERT INTO mha_schema_version VALUES (1, 3);
INSERT INTO mha_classes (code, created_at, closed, reveal) VALUES ('K7QX2MPA', '2025-01-01', FALSE, FALSE);
INSERT INTO mha_students (class_id, key, name, joined_at) VALUES (1, 'k1', 'Ann', '2025-01-01'),
    (1, 'k2', 'ANN', '2025-01-01'), (1, 'k3', 'Bo', '2025-01-01');
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_version_3_database_is_upgraded_in_place(backend, tmp_path):
    with empty_database(backend, tmp_path) as url:
        engine = make_engine(url)
        old_schema(engine, V3_TABLES)
        assert migrate(engine) == SCHEMA_VERSION >= 4
        with engine.connect() as conn:
            cols = {c["name"] for c in inspect(conn).get_columns("mha_students")}
            keys = conn.execute(select(students.c.key, students.c.name_key).order_by(students.c.id)).all()
        assert "name_key" in cols and keys == [("k1", "ann"), ("k2", None), ("k3", "bo")]  # the old twin stays
        engine.dispose()
        s = Storage.open(url)
        info = s.find_class("K7QX2MPA")
        assert not info.locked
        with pytest.raises(LabError) as err:
            s.join(info.code, B, "ann")
        assert err.value.key == "class_name_taken"
        s.set_locked(info.id, True)
        assert s.find_class(info.code).locked and migrate(s.engine) == SCHEMA_VERSION  # idempotent
        with s.reading() as conn:
            assert conn.execute(select(func.count()).select_from(answers)).scalar_one() == 0
            assert conn.execute(select(func.count()).select_from(votes)).scalar_one() == 0
        s.dispose()


# --- item 11: the teacher on the students' address ---

def test_a_right_password_clears_the_shared_address_so_students_cannot_lock_the_teacher_out_again(store):
    """Broken 11: students' wrong tries stayed counted on the school's address after the teacher logged in, so
    the next wrong try put it straight back into back-off and the teacher's second login (the presenter's
    window, a reload) was refused. A right password now clears the address; wrong tries still back off."""
    now = [50_000.0]
    lim = RateLimiter(store, clock=lambda: now[0], policies={"session": SESSION, "ip": SOURCE})
    nat = "ip:192.0.2.1"
    for i in range(SOURCE.free + 4):                                  # students guessing, each in a new tab
        lim.attempt(lambda: False, nat, f"session:s{i}")
        now[0] += 0.5
    blocked = lim.attempt(lambda: True, nat, "session:teacher")
    assert not blocked.ok and 0 < blocked.wait <= SOURCE.cap          # still bounded: a back-off is a back-off
    now[0] += blocked.wait
    assert lim.attempt(lambda: True, nat, "session:teacher").ok      # the teacher gets in …
    assert lim.failures(nat) == 0                                     # … and that forgets the students' guesses
    lim.attempt(lambda: False, nat, "session:s99")                    # one more wrong guess
    assert lim.attempt(lambda: True, nat, "session:presenter").ok    # the teacher's second window: in at once
    for i in range(SOURCE.free + 1):                                  # guessing still backs off afterwards
        lim.attempt(lambda: False, nat, f"session:t{i}")
    assert lim.wait(nat) > 0


def test_wrong_passwords_decay_with_time(store):
    now = [60_000.0]
    lim = RateLimiter(store, clock=lambda: now[0], policies={"session": SESSION, "ip": SOURCE})
    for i in range(SOURCE.free + 4):
        lim.attempt(lambda: False, "ip:192.0.2.2", f"session:s{i}")
    now[0] += SOURCE.leak * SOURCE.ceiling
    assert lim.failures("ip:192.0.2.2") == 0 and lim.attempt(lambda: True, "ip:192.0.2.2", "session:x").ok



def test_ten_students_racing_for_one_name_leave_one_holder(store):
    import threading

    info = store.create_class()
    barrier, outcomes = threading.Barrier(10), []

    def go(i: int) -> None:
        barrier.wait()
        try:
            store.join(info.code, f"{i:032x}", "Ann" if i % 2 else "ANN")
            outcomes.append("in")
        except LabError as err:
            outcomes.append(err.key)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(10)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(outcomes) == ["class_name_taken"] * 9 + ["in"] and len(store.students(info.id)) == 1


def test_joins_racing_from_one_address_never_overdraw_the_bucket(store):
    import threading

    now = [30_000.0]
    lim = _limiter(store, now)                                        # the clock stands still: no refill
    barrier, waits = threading.Barrier(20), []

    def go() -> None:
        barrier.wait()
        waits.append(lim.take(3, "203.0.113.50"))

    threads = [threading.Thread(target=go) for _ in range(20)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sum(w == 0 for w in waits) == JoinLimits().address.burst and len(waits) == 20

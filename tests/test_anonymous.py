"""Anonymous classes in the store (SQLite and PostgreSQL): no name is stored whatever a student sends, the CSVs
carry opaque ids, the mode is fixed once someone joined, and the lock and the removal still work (issue 27 §2,
issue 28 item 2)."""

from __future__ import annotations

import pytest
from dbhelpers import BACKENDS, empty_database, old_schema
from sqlalchemy import inspect, select

from mha_core.classroom import Storage, answers_csv, make_engine
from mha_core.classroom.names import pseudonym
from mha_core.classroom.prepost import PrePostStore, class_results, results_csv
from mha_core.classroom.schema import SCHEMA_VERSION, classes, metadata, migrate
from mha_core.errors import LabError
from mha_core.lesson.live import LiveState, VoteState
from mha_core.lesson.store import publish_live
from mha_core.quiz import concept, load_questions

NAMES = ("Zebediah Quux", "葛优瑶")
KEYS = ("a" * 32, "b" * 32, "c" * 32)
QUESTION = load_questions("en")[0].id



def _everything(store: Storage) -> str:
    """Every row of every table of the store, as text: what a look into the database would find."""
    with store.reading() as conn:
        return "\n".join(repr(row) for table in metadata.sorted_tables for row in conn.execute(select(table)))


def _vote_open(store: Storage, class_id: int) -> None:
    publish_live(store, class_id, LiveState(step=0, page="attend", settings=(),
                                            vote=VoteState(key="attend.q.1", round=1, phase="open", answer=0,
                                                           n_options=3)))


def test_an_anonymous_class_stores_no_name_and_its_exports_carry_opaque_ids(store):
    info = store.create_class(anonymous=True)
    assert store.find_class(info.code).anonymous and not store.create_class().anonymous
    members = [store.join(info.code, k, n) for k, n in zip(KEYS, NAMES, strict=False)]  # a forged name is dropped
    again = store.join(info.code, KEYS[0], "Another Name", rename=True)                 # and a rename too
    assert again.student_id == members[0].student_id and again.name == "" and all(m.name == "" for m in members)
    assert [s.name for s in store.students(info.id)] == ["", ""]
    _vote_open(store, info.id)
    pp = PrePostStore(store)
    item = concept.items()[0]
    for m in members:
        store.record(m, QUESTION, "a", True)
        store.cast_vote(m, "attend.q.1", 1, 0, True)
        pp.open_item(m, "pre", item.id)
        pp.answer(m, "pre", item.id, item.correct)
    dump = _everything(store)
    assert not any(n in dump or n.lower() in dump.lower() for n in (*NAMES, "Another Name"))
    ids = store.pseudonyms(info.id)
    assert ids == {m.student_id: pseudonym(info.code, m.key) for m in members} and len(set(ids.values())) == 2
    assert all(m.key not in ids.values() for m in members)           # the opaque id is not the sign-in id
    csv1 = answers_csv(info.code, store.answers(info.id), {}, votes=store.votes(info.id), ids=ids)
    rows = pp.rows(info.id)
    csv2 = results_csv(info.code, class_results(rows, store.students(info.id)), rows, ids=ids)
    for out in (csv1, csv2):
        assert not any(n in out for n in NAMES) and all(f",{i}," in out for i in ids.values())


def test_the_mode_is_chosen_before_anyone_joins_and_then_fixed(store):
    info = store.create_class()
    store.set_anonymous(info.id, True)
    store.set_anonymous(info.id, False)
    store.set_anonymous(info.id, True)
    assert store.find_class(info.code).anonymous
    store.join(info.code, KEYS[0], "")                                # no name asked: an empty one is fine
    for mode in (False, True):
        with pytest.raises(LabError) as err:
            store.set_anonymous(info.id, mode)
        assert err.value.key == "class_anonymous_fixed" and err.value.params["n"] == 1
    assert store.find_class(info.code).anonymous                      # the refused switch changed nothing
    named = store.create_class()
    store.join(named.code, KEYS[0], "Ann")
    with pytest.raises(LabError):
        store.set_anonymous(named.id, True)
    assert store.students(named.id)[0].name == "Ann" and not store.find_class(named.code).anonymous


def test_a_join_that_read_the_class_before_the_mode_changed_is_refused(store, monkeypatch):
    info = store.create_class()
    stale = store.find_class(info.code)
    store.set_anonymous(info.id, True)
    monkeypatch.setattr(store, "find_class", lambda code: stale)   # read before the teacher switched
    with pytest.raises(LabError) as err:
        store.join(info.code, KEYS[0], "Ann")
    assert err.value.key == "class_mode_changed" and store.students(info.id) == ()


def test_an_anonymous_class_can_be_locked_and_a_student_removed_with_their_votes(store):
    info = store.create_class(anonymous=True)
    ann, bo = store.join(info.code, KEYS[0], ""), store.join(info.code, KEYS[1], "")
    store.set_locked(info.id, True)
    with pytest.raises(LabError) as err:
        store.join(info.code, KEYS[2], "")
    assert err.value.key == "class_locked"
    assert store.join(info.code, KEYS[0], "").student_id == ann.student_id  # who joined before comes back
    _vote_open(store, info.id)
    for m in (ann, bo):
        store.cast_vote(m, "attend.q.1", 1, 0, True)
    assert store.turnout(info.id).voted == 2
    assert store.remove_student(info.id, bo.student_id)
    assert store.turnout(info.id).voted == 1 and [v.student_id for v in store.votes(info.id)] == [ann.student_id]
    assert store.was_removed(info.id, KEYS[1]) and list(store.pseudonyms(info.id)) == [ann.student_id]


V5_CLASSES = """
CREATE TABLE mha_schema_version (id INTEGER PRIMARY KEY, version INTEGER NOT NULL);
CREATE TABLE mha_classes (id {serial}, code VARCHAR(16) NOT NULL UNIQUE, created_at TIMESTAMP NOT NULL,
    closed BOOLEAN NOT NULL, reveal BOOLEAN NOT NULL, locked BOOLEAN NOT NULL DEFAULT FALSE);
INSERT INTO mha_schema_version VALUES (1, 5);
INSERT INTO mha_classes (code, created_at, closed, reveal, locked) VALUES ('K7QX2MPA', '2025-01-01', FALSE, FALSE,
    FALSE);
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_version_5_database_gets_the_anonymous_flag(backend, tmp_path):
    with empty_database(backend, tmp_path) as url:
        engine = make_engine(url)
        old_schema(engine, V5_CLASSES)
        assert migrate(engine) == SCHEMA_VERSION == 6 and migrate(engine) == 6   # idempotent
        with engine.connect() as conn:
            assert "anonymous" in {c["name"] for c in inspect(conn).get_columns("mha_classes")}
            assert conn.execute(select(classes.c.anonymous)).scalars().all() == [False]  # a named class stays one
        engine.dispose()

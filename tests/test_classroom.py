"""Class mode's core without Streamlit: join codes, display names, storage (SQLite always, PostgreSQL when
MHA_TEST_DATABASE_URL is set — required in CI), 50 concurrent students, restarts, locked and unreachable
databases, the dashboard figures, CSV export and the password back-off."""

from __future__ import annotations

import os
import socket
import sqlite3
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import event, func, select

from mha_core.classroom import (
    ALPHABET,
    BITS,
    SESSION,
    SOURCE,
    AnswerRow,
    ClassAnswer,
    DatabaseError,
    Member,
    Policy,
    RateLimiter,
    SaveOutcome,
    Storage,
    StudentRow,
    answers_csv,
    clean_name,
    configured_password,
    dashboard,
    database_url,
    make_engine,
    new_code,
    normalize_code,
    password_matches,
    pretty,
    shown_name,
    sqlite_url,
)
from mha_core.classroom.auth import PRUNE_AFTER_S
from mha_core.classroom.config import DEFAULT_FILE
from mha_core.classroom.names import BIDI_CONTROLS
from mha_core.classroom.schema import (
    SCHEMA_VERSION,
    SchemaTooNew,
    answers,
    classes,
    migrate,
    schema_version,
)
from mha_core.errors import LabError
from mha_core.quiz import load_questions

QUESTIONS = tuple(q.id for q in load_questions("en"))
NASTY_NAMES = ["<script>alert('x')</script>", "Robert'); DROP TABLE mha_students;--", '"quoted" \'name\'',
               "🦊🐼✨ 学生", "مرحبا بالعالم", "שלום", "=HYPERLINK(\"http://x\")", "**bold** _md_ `code`"]



# --- codes ---

def test_join_codes_have_at_least_30_bits_and_no_look_alikes():
    assert len(ALPHABET) == len(set(ALPHABET)) == 32 and BITS >= 30
    assert not set("IO01") & set(ALPHABET)
    codes = {new_code() for _ in range(5000)}
    assert len(codes) == 5000
    assert all(len(c) == 8 and set(c) <= set(ALPHABET) for c in codes)


def test_codes_are_compared_case_insensitively_and_ignore_separators():
    assert normalize_code(" k7qx-2mpa ") == "K7QX2MPA" == normalize_code("K7QX 2MPA")
    assert pretty("K7QX2MPA") == "K7QX-2MPA"
    for bad in ("", "K7QX2MP", "K7QX2MPAB", "K7QX2MP0", "K7QX2MPI", None, 12345678):
        assert normalize_code(bad) is None


# --- names ---

def test_names_are_trimmed_and_1_to_40_characters():
    assert clean_name("  Ann \n") == "Ann"
    assert clean_name("🦊" * 40) == "🦊" * 40
    assert clean_name("e\u0301\u200d") == "é\u200d" and clean_name("שלום") == "שלום"  # visible letters stay
    for bad, key in (("", "class_name_empty"), ("   ", "class_name_empty"), (None, "class_name_empty"),
                     ("x" * 41, "class_name_too_long"), ("a\nb", "class_name_control"),
                     ("a\x00b", "class_name_control"), ("\u200b\u200c\u200d", "class_name_invisible"),
                     ("\u2060\ufeff \u200b", "class_name_invisible"), ("\u202e\u2066", "class_name_invisible"),
                     ("\u3164\u3164", "class_name_invisible"), ("\u0301", "class_name_invisible")):
        with pytest.raises(LabError) as err:
            clean_name(bad)
        assert err.value.key == key


def test_awkward_names_are_stored_and_read_back_verbatim(store):
    info = store.create_class()
    for i, name in enumerate(NASTY_NAMES):
        m = store.join(info.code, f"{i:08x}", name)
        store.record(m, QUESTIONS[0], "a", True)
    assert [s.name for s in store.students(info.id)] == NASTY_NAMES
    assert len(store.answers(info.id)) == len(NASTY_NAMES)


# --- classes, joining, answers ---

def test_wrong_and_malformed_codes_get_a_clear_error(store):
    store.create_class()
    with pytest.raises(LabError) as err:
        store.join("ABCD-EFGH", "0000abcd", "Ann")
    assert err.value.key == "class_code_unknown" and err.value.params["code"] == "ABCDEFGH"
    with pytest.raises(LabError) as err:
        store.join("hello", "0000abcd", "Ann")
    assert err.value.key == "class_code_malformed"


def test_a_closed_class_accepts_no_answers_and_no_students(store):
    info = store.create_class()
    m = store.join(info.code.lower(), "0000abcd", "Ann")
    store.set_closed(info.id, True)
    for act in (lambda: store.record(m, QUESTIONS[0], "a", True), lambda: store.join(info.code, "0000beef", "Bo")):
        with pytest.raises(LabError) as err:
            act()
        assert err.value.key == "class_closed"
    assert store.answers(info.id) == ()
    store.set_closed(info.id, False)
    store.record(m, QUESTIONS[0], "a", True)
    assert len(store.answers(info.id)) == 1


def test_a_resubmission_updates_never_duplicates(store):
    info = store.create_class()
    m = store.join(info.code, "0000abcd", "Ann")
    again = store.join(info.code, "0000abcd", "Mallory")     # same quiz id (a seen link): same student, not renamed
    assert again == m and [s.name for s in store.students(info.id)] == ["Ann"]
    again = store.join(info.code, "0000abcd", "Ann B.", rename=True)  # the student's own session renames
    assert again.student_id == m.student_id and [s.name for s in store.students(info.id)] == ["Ann B."]
    store.record(m, QUESTIONS[0], "wrong", False)
    store.record(m, QUESTIONS[0], "right", True)
    (row,) = store.answers(info.id)
    assert (row.canonical, row.correct, row.attempts) == ("right", True, 2)


def test_a_student_reads_only_their_own_answers(store):
    info = store.create_class()
    ann, bo = store.join(info.code, "0000aaaa", "Ann"), store.join(info.code, "0000bbbb", "Bo")
    store.record(ann, QUESTIONS[0], "a", True)
    store.record(bo, QUESTIONS[1], "b", False)
    assert [r.name for r in store.answers(info.id, student_id=ann.student_id)] == ["Ann"]
    assert store.member(info.code, "0000bbbb") == bo and store.member(info.code, "0000cccc") is None


def test_fifty_students_answer_every_question_at_once(store, record_property):
    """50 threads, each joining and submitting all questions (a third of them twice): every answer stored
    exactly once, and the dashboard's totals exact."""
    info = store.create_class()
    n_students = 50
    barrier = threading.Barrier(n_students)
    errors: list[BaseException] = []

    def student(i: int) -> None:
        try:
            barrier.wait()
            m = store.join(info.code, f"{i:08x}", f"student {i} 🦊")
            for j, qid in enumerate(QUESTIONS):
                right = (i + j) % 3 != 0
                if j % 3 == 0:  # a resubmission: must update, not duplicate
                    store.record(m, qid, "first try", False)
                store.record(m, qid, "ok" if right else f"wrong{j % 2}", right)
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=student, args=(i,)) for i in range(n_students)]
    start = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    elapsed = time.perf_counter() - start
    assert not errors, errors[:3]
    writes = n_students * (len(QUESTIONS) + len(range(0, len(QUESTIONS), 3)))
    record_property("seconds", round(elapsed, 2))
    print(f"\n{store.engine.dialect.name}: {n_students} students, {writes} writes in {elapsed:.2f} s")
    with store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(answers)).scalar_one() == n_students * len(QUESTIONS)
    board = dashboard(store.students(info.id), store.answers(info.id), QUESTIONS)
    expected_right = sum((i + j) % 3 != 0 for i in range(n_students) for j in range(len(QUESTIONS)))
    assert len(board.students) == n_students and board.answers == n_students * len(QUESTIONS)
    assert board.right == expected_right
    assert all(s.answered == len(QUESTIONS) for s in board.students)
    assert all(q.answered == n_students for q in board.questions)
    rows = store.answers(info.id)
    assert all(r.attempts == (2 if QUESTIONS.index(r.question_id) % 3 == 0 else 1) for r in rows)


# --- reliability ---

def test_data_survives_a_restart(tmp_path):
    url = sqlite_url(tmp_path / "data" / "class.sqlite3")
    first = Storage.open(url)
    info = first.create_class()
    m = first.join(info.code, "0000abcd", "Ann")
    first.record(m, QUESTIONS[0], "a", True)
    first.dispose()
    second = Storage.open(url)  # a new engine on the same file, as after an app restart
    assert second.find_class(info.code) == info
    assert [(r.name, r.question_id) for r in second.answers(info.id)] == [("Ann", QUESTIONS[0])]
    assert second.member(info.code, "0000abcd") == m
    second.dispose()


def test_a_locked_sqlite_file_is_reported_and_nothing_is_stored(tmp_path):
    path = tmp_path / "class.sqlite3"
    s = Storage.open(sqlite_url(path), busy_timeout_ms=200)
    info = s.create_class()
    m = s.join(info.code, "0000abcd", "Ann")
    with s.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 200  # the wait below: 200 ms, not 5 s
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(DatabaseError) as err:
            s.record(m, QUESTIONS[0], "a", True)
        assert err.value.key == "class_db_busy"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    s.record(m, QUESTIONS[0], "a", True)  # the kept answer, resubmitted
    assert len(s.answers(info.id)) == 1
    s.dispose()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_unreachable_database_is_reported():
    url = f"postgresql+psycopg://nobody:nothing@127.0.0.1:{_closed_port()}/none"
    with pytest.raises(DatabaseError) as err:  # a refused connection: at once (the connect timeout: see below)
        Storage.open(url)
    assert err.value.key == "class_db_unavailable"


def test_the_schema_is_versioned_and_migrations_are_idempotent(tmp_path):
    s = Storage.open(sqlite_url(tmp_path / "c.sqlite3"))
    assert migrate(s.engine) == SCHEMA_VERSION == 6
    with s.engine.begin() as conn:
        assert conn.execute(select(schema_version.c.version)).scalars().all() == [SCHEMA_VERSION]
        conn.execute(schema_version.update().values(version=SCHEMA_VERSION + 1))
    with pytest.raises(SchemaTooNew):
        migrate(s.engine)
    s.dispose()


def test_the_default_database_is_a_sqlite_file_in_data():
    assert database_url({}, {}) == sqlite_url(DEFAULT_FILE) and DEFAULT_FILE.parent.name == "data"
    env = {"MHA_DATABASE_URL": "postgresql+psycopg://a@h/d"}
    assert database_url(env, {"database_url": "x"}).startswith("postgres")
    assert database_url({}, {"database_url": "sqlite:///x.db"}) == "sqlite:///x.db"


# --- dashboard figures and export ---

def _row(sid: int, name: str, qid: str, canonical: str, correct: bool) -> AnswerRow:
    return AnswerRow(sid, name, qid, canonical, correct, 1, datetime(2025, 1, 1))


def test_dashboard_figures():
    people = [StudentRow(1, "Ann", datetime(2025, 1, 1)), StudentRow(2, "Bo", datetime(2025, 1, 1)),
              StudentRow(3, "Cy", datetime(2025, 1, 1))]
    rows = [_row(1, "Ann", "q2", "a", True), _row(2, "Bo", "q2", "b", False), _row(3, "Cy", "q2", "b", False),
            _row(1, "Ann", "q1", "c", False), _row(2, "Bo", "q1", "x", True)]
    board = dashboard(people, rows, ["q1", "q2", "q3"])
    assert [(q.question_id, q.answered, q.right) for q in board.questions] == [("q1", 2, 1), ("q2", 3, 1), ("q3", 0, 0)]
    assert board.questions[1].share == pytest.approx(1 / 3) and board.questions[2].share == 0
    assert [(w.question_id, w.canonical, w.count) for w in board.wrong] == [("q2", "b", 2), ("q1", "c", 1)]
    assert [(s.name, s.answered, s.right) for s in board.students] == [("Ann", 2, 1), ("Bo", 2, 1), ("Cy", 1, 0)]
    assert (board.answers, board.right) == (5, 2)


def test_csv_export_is_spreadsheet_safe():
    rows = [_row(1, "=cmd|' /C calc'!A0", "q1", "a", True), _row(2, "学生 🦊", "q1", "b", False)]
    text = answers_csv("K7QX2MPA", rows, {"q1": "Question one"})
    assert text.startswith("\ufeffclass,student")
    assert "'=cmd" in text and "学生 🦊" in text and "Question one" in text
    assert len(text.strip().splitlines()) == 3


# --- the teacher's password ---

def test_password_comes_from_env_then_secrets_and_is_compared_exactly():
    assert configured_password({}, {}) is None and configured_password({"MHA_TEACHER_PASSWORD": ""}, {}) is None
    assert configured_password({"MHA_TEACHER_PASSWORD": "env"}, {"teacher_password": "sec"}) == "env"
    assert configured_password({}, {"teacher_password": "sec"}) == "sec"
    assert password_matches("längeres Passwort", "längeres Passwort")
    assert not password_matches("secret ", "secret") and not password_matches("", "secret")


def _limiter(store: Storage, now: list[float], **policies: Policy) -> RateLimiter:
    return RateLimiter(store, clock=lambda: now[0], policies={"session": SESSION, "ip": SOURCE, **policies})


def test_wrong_passwords_back_off_exponentially_per_key(store):
    now = [1_000.0]
    lim = _limiter(store, now, session=Policy(free=3, base=2.0, cap=60.0, leak=1e9, ceiling=40))
    for _ in range(3):
        assert lim.wait("session:a", "ip:x") == 0
        lim.failed("session:a")
    lim.failed("session:a")
    assert lim.wait("session:a") == pytest.approx(2.0)
    assert lim.wait("session:b") == 0                     # another session is not blocked by this one
    lim.failed("session:a")
    assert lim.wait("session:a") == pytest.approx(4.0)
    now[0] += 4.0
    assert lim.wait("session:a") == 0
    for _ in range(20):
        lim.failed("session:a")
    assert lim.wait("session:a") == pytest.approx(60.0)    # capped
    lim.succeeded("session:a")
    assert lim.wait("session:a") == 0


def test_wrong_tries_decay_are_bounded_and_old_sources_are_pruned(store):
    now = [5_000.0]
    lim = _limiter(store, now)
    for _ in range(150):                                   # a student hammering from one address
        lim.failed("ip:10.0.0.7")
    assert lim.failures("ip:10.0.0.7") == SOURCE.ceiling  # no unbounded growth
    assert lim.wait("ip:10.0.0.7") == pytest.approx(SOURCE.cap)
    now[0] += SOURCE.leak * 3
    assert lim.failures("ip:10.0.0.7") == pytest.approx(SOURCE.ceiling - 3)  # one forgiven per `leak` seconds
    now[0] += SOURCE.leak * SOURCE.ceiling
    assert lim.failures("ip:10.0.0.7") == 0
    lim.failed("ip:10.0.0.8")                              # any write prunes rows idle for an hour
    assert lim.rows() == 2
    now[0] += PRUNE_AFTER_S + 1
    lim.failed("ip:10.0.0.9")
    assert lim.rows() == 1


def test_the_teacher_gets_in_within_seconds_whatever_a_student_does(store):
    """150 wrong passwords from a student's address: the teacher on another address is never blocked, and on
    the same address (one NAT) waits at most SOURCE.cap seconds, however long the student keeps trying."""
    now = [9_000.0]
    lim = _limiter(store, now)
    for i in range(150):
        if lim.wait("ip:10.0.0.7", f"session:s{i}") == 0:
            lim.failed(f"session:s{i}")
            lim.failed("ip:10.0.0.7")
        now[0] += 0.1
    assert lim.wait("ip:10.0.0.1", "session:teacher") == 0
    assert 0 < lim.wait("ip:10.0.0.7", "session:teacher") <= SOURCE.cap
    assert SOURCE.cap <= 10 and SESSION.free >= 3


def test_the_limiter_lives_in_the_database_shared_by_replicas(tmp_path):
    """Two processes' limiters (two engines on one database) see the same counts; a new one (a restart, a
    cleared cache) still blocks."""
    url = sqlite_url(tmp_path / "c.sqlite3")
    a, b = Storage.open(url), Storage.open(url)
    for _ in range(SOURCE.free + 1):
        RateLimiter(a).failed("ip:10.0.0.7")
    assert RateLimiter(b).wait("ip:10.0.0.7") > 0
    b.dispose()
    c = Storage.open(url)
    assert RateLimiter(c).wait("ip:10.0.0.7") > 0
    a.dispose()
    c.dispose()


# --- the database lost under the running app (issue 14, Broken 3) ---

def _class_with_one_answer(url: str) -> tuple[Storage, Member]:
    s = Storage.open(url)
    info = s.create_class()
    m = s.join(info.code, "a" * 32, "Ann")
    s.record(m, QUESTIONS[0], "a", True)
    return s, m


def test_a_deleted_sqlite_file_is_noticed_before_any_write(tmp_path):
    """Today writes "succeed" into the unlinked file and vanish at the next start; now every call says so."""
    path = tmp_path / "data" / "class.sqlite3"
    s, m = _class_with_one_answer(sqlite_url(path))
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    acts = (lambda: s.record(m, QUESTIONS[1], "b", False), lambda: s.create_class(),
            lambda: s.save_progress("a" * 32, 0, "{}"), lambda: s.answers(m.class_id), lambda: s.class_of(m),
            lambda: RateLimiter(s).failed("ip:10.0.0.7"))
    for act in acts:
        with pytest.raises(DatabaseError) as err:
            act()
        assert err.value.key == "class_db_lost"
    s.dispose()
    again = Storage.open(sqlite_url(path))   # a restart: an empty database, and the member is told, not dropped
    assert again.class_of(m) is None
    with pytest.raises(LabError) as err:
        again.record(m, QUESTIONS[1], "b", False)
    assert err.value.key == "class_gone"
    again.dispose()


def test_a_replaced_sqlite_file_is_noticed(tmp_path):
    path = tmp_path / "class.sqlite3"
    s, m = _class_with_one_answer(sqlite_url(path))
    other = tmp_path / "other.sqlite3"
    Storage.open(sqlite_url(other)).dispose()
    os.replace(other, path)
    with pytest.raises(DatabaseError) as err:
        s.record(m, QUESTIONS[1], "b", False)
    assert err.value.key == "class_db_lost"
    s.dispose()


def test_a_class_that_vanished_is_reported_to_its_members(store):
    """Tables emptied under the app (a reset, a restore from an older copy): the member learns their class is
    gone; the progress is still stored, and nothing half-written stays."""
    info = store.create_class()
    m = store.join(info.code, "a" * 32, "Ann")
    assert store.class_of(m) == info
    with store.engine.begin() as conn:
        conn.execute(classes.delete())
    assert store.class_of(m) is None
    answer = ClassAnswer(m, QUESTIONS[0], "a", True)
    assert store.save_progress("a" * 32, 0, '{"p": 1}', answer) is SaveOutcome.CLASS_GONE
    assert store.load_progress("a" * 32) == (1, '{"p": 1}')


# --- progress and the class's answers: together, never overwritten by a fresh session (Broken 5) ---

def test_progress_and_the_class_answer_are_stored_together_or_not_at_all(store):
    info = store.create_class()
    m = store.join(info.code, "a" * 32, "Ann")
    answer = ClassAnswer(m, QUESTIONS[0], "a", True)
    assert store.save_progress("a" * 32, 0, "v1", answer) is SaveOutcome.SAVED
    assert store.save_progress("a" * 32, 0, "stale", ClassAnswer(m, QUESTIONS[0], "b", False)) \
        is SaveOutcome.CONFLICT                              # a stale session: neither progress nor answer
    assert store.load_progress("a" * 32) == (1, "v1")
    assert [(r.canonical, r.correct, r.attempts) for r in store.answers(info.id)] == [("a", True, 1)]
    store.set_closed(info.id, True)
    assert store.save_progress("a" * 32, 1, "v2", ClassAnswer(m, QUESTIONS[1], "c", True)) \
        is SaveOutcome.CLASS_CLOSED
    assert len(store.answers(info.id)) == 1


def test_re_uploading_earlier_answers_never_changes_a_stored_one(store):
    info = store.create_class()
    m = store.join(info.code, "a" * 32, "Ann")
    store.record(m, QUESTIONS[0], "right", True)
    store.record(m, QUESTIONS[0], "wrong", False, replace=False)
    store.record(m, QUESTIONS[1], "new", True, replace=False)
    assert [(r.canonical, r.correct, r.attempts) for r in store.answers(info.id)] == [("right", True, 1),
                                                                                       ("new", True, 1)]


# --- names on the dashboard and in the CSV ---

def test_bidi_overrides_are_neutralised_on_the_dashboard_and_in_the_csv():
    evil = "\u202eevil\u202c\u2067x\u2069"
    assert clean_name(evil) == evil                            # stored verbatim…
    people = [StudentRow(1, evil, datetime(2025, 1, 1)), StudentRow(2, "שלום", datetime(2025, 1, 1))]
    board = dashboard(people, [_row(1, evil, "q1", "a", True)], ["q1"])
    assert [s.name for s in board.students] == ["evilx", "שלום"]  # …shown without reordering, RTL letters kept
    text = answers_csv("K7QX2MPA", [_row(1, "\u202e=cmd", "q1", "a", True)], {})
    assert not BIDI_CONTROLS.search(text) and "'=cmd" in text
    assert shown_name("مرحبا") == "مرحبا"


# --- PostgreSQL that never answers (Weak: timeouts) ---

def test_postgresql_connect_and_statement_timeouts_are_at_most_2_s():
    engine = make_engine("postgresql+psycopg://u:p@127.0.0.1:1/db")
    args: dict[str, object] = {}

    @event.listens_for(engine, "do_connect")
    def _seen(_dialect, _record, _cargs, cparams) -> None:  # noqa: ANN001 - what the driver is given
        args.update(cparams)
        raise ConnectionAbortedError("no need to connect")

    with pytest.raises(ConnectionAbortedError):
        engine.connect()
    assert 0 < args["connect_timeout"] <= 2
    assert "statement_timeout=2000" in args["options"] and "lock_timeout=2000" in args["options"]
    engine.dispose()


def test_a_postgresql_server_that_never_answers_gets_the_translated_message():
    """A port that accepts the TCP connection and then says nothing (a hung server): the connect timeout ends
    the wait and the student reads class_db_unavailable (the time it takes is in the report, not asserted)."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        with pytest.raises(DatabaseError) as err:
            Storage.open(f"postgresql+psycopg://nobody:x@127.0.0.1:{port}/none")
    assert err.value.key == "class_db_unavailable"

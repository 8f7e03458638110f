"""The class store over SQLAlchemy 2: classes, students and their answers, one row per (class, student, question).

Every write transaction starts with a write (INSERT … SELECT … ON CONFLICT, or a compare-and-set UPDATE), so
SQLite never has to upgrade a read lock to a write lock mid-transaction and PostgreSQL never sees a duplicate under
concurrency. Database failures become ``DatabaseError`` (a translated LabError) so a page can keep the answer and
offer a resubmit. A SQLite file deleted or replaced under the running app is noticed before every statement
(its device and inode are compared with the file opened), so nothing is "stored" into an unlinked file.

Everything whose loss matters lives here, never in a process: classes and their switches, students, answers,
every student's quiz progress (``load_progress`` / ``save_progress``) and the password limiter (``auth``).
Several app replicas can share one PostgreSQL database.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path

from sqlalchemy import (
    Boolean,
    Connection,
    DateTime,
    Engine,
    Integer,
    String,
    case,
    create_engine,
    event,
    exc,
    func,
    literal,
    or_,
    select,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url

from mha_core.classroom.codes import new_code, normalize_code
from mha_core.classroom.names import clean_name, name_key
from mha_core.classroom.schema import (
    answers,
    classes,
    live,
    migrate,
    plans,
    presence,
    progress,
    removed,
    students,
    votes,
)
from mha_core.errors import LabError
from mha_core.lesson.live import LiveState
from mha_core.lesson.plan import Plan, plan_from_json, plan_to_json

BUSY_TIMEOUT_MS = 5000
WRITE_QUEUE_S = 30.0  # how long a write waits for its turn among this process's writers (SQLite)
_IMMEDIATE = "mha_sqlite_immediate"  # execution option: this transaction writes
PG_TIMEOUT_S = 2.0  # PostgreSQL connect and statement timeout: a quiz click waits at most about this long


class DatabaseError(LabError):
    """The database is locked or unreachable: nothing was stored, and the caller should keep the data."""


@dataclass(frozen=True)
class ClassInfo:
    """One class: its join code, whether it still takes answers, whether explanations are revealed."""

    id: int
    code: str
    created_at: datetime
    closed: bool
    reveal: bool
    locked: bool = False  # no new students (those who joined may come back)


def _class_info(row) -> ClassInfo:  # noqa: ANN001 - a mha_classes row
    return ClassInfo(row.id, row.code, row.created_at, row.closed, row.reveal, bool(row.locked))


@dataclass(frozen=True)
class Turnout:
    """What the presenter and the dashboard count: students in the class, and votes in the round open now
    (None when no vote is open)."""

    joined: int
    voted: int | None


@dataclass(frozen=True)
class Member:
    """A student in a class: the row id, the quiz's student id (``key``) and the display name."""

    class_id: int
    code: str
    student_id: int
    key: str
    name: str


@dataclass(frozen=True)
class StudentRow:
    """A student as the teacher's dashboard lists them."""

    id: int
    name: str
    joined_at: datetime


@dataclass(frozen=True)
class AnswerRow:
    """One stored answer (the latest for its question) with the student's display name."""

    student_id: int
    name: str
    question_id: str
    canonical: str
    correct: bool
    attempts: int
    answered_at: datetime


@dataclass(frozen=True)
class VoteRow:
    """One stored class vote (one per student, vote key and round) with the student's display name."""

    student_id: int
    name: str
    vote_key: str
    round: int
    choice: int
    correct: bool
    voted_at: datetime


def _now() -> datetime:
    return datetime.now(UTC)


def make_engine(url: str, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> Engine:
    """An engine for any SQLAlchemy URL; SQLite files get their folder, WAL journal and a busy timeout,
    PostgreSQL a connect and a statement timeout of ``PG_TIMEOUT_S`` (a silent server costs seconds, not minutes)."""
    u = make_url(url)
    if u.get_backend_name() != "sqlite":
        args: dict[str, object] = {}
        if u.get_backend_name() == "postgresql":
            ms = int(PG_TIMEOUT_S * 1000)
            args = {"connect_timeout": int(PG_TIMEOUT_S),
                    "options": f"-c statement_timeout={ms} -c lock_timeout={ms}"}
        return create_engine(u, pool_pre_ping=True, pool_size=10, max_overflow=20, pool_timeout=WRITE_QUEUE_S,
                             connect_args=args)
    if u.database and u.database != ":memory:":
        Path(u.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(u, pool_size=10, max_overflow=20, pool_timeout=20,
                           connect_args={"timeout": busy_timeout_ms / 1000, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn, _record) -> None:  # noqa: ANN001 - DB-API connection
        dbapi_conn.isolation_level = None  # the driver's own implicit BEGIN off: "begin" below issues it
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        # A write transaction takes the write lock up front (BEGIN IMMEDIATE), so it waits on the busy timeout;
        # a deferred one that reads first and then writes fails at once with "database is locked" when another
        # writer committed in between (SQLite cannot upgrade a stale snapshot).
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(_IMMEDIATE) else "BEGIN")

    return engine


def _gone(member: Member) -> LabError:
    return LabError("class_gone", code=member.code)


def _lost() -> DatabaseError:
    return DatabaseError("class_db_lost")


@contextlib.contextmanager
def _translated() -> Iterator[None]:
    """Turn driver failures into DatabaseError: busy (locked), lost (tables gone) or unavailable (the rest)."""
    try:
        yield
    except (exc.OperationalError, exc.InterfaceError, exc.TimeoutError, exc.ProgrammingError) as err:
        text = str(err).lower()
        if "no such table" in text or "undefinedtable" in text or ("relation" in text and "does not exist" in text):
            raise _lost() from err
        if isinstance(err, exc.ProgrammingError):
            raise
        if "locked" in text or "busy" in text:
            raise DatabaseError("class_db_busy") from err
        raise DatabaseError("class_db_unavailable") from err


def dialect_insert(engine: Engine, table):  # noqa: ANN001, ANN202 - a dialect's Insert construct
    name = engine.dialect.name
    if name == "sqlite":
        return sqlite.insert(table)
    if name == "postgresql":
        return postgresql.insert(table)
    raise NotImplementedError(f"class mode supports SQLite and PostgreSQL, not {name}")


def _file_identity(engine: Engine) -> tuple[Path, tuple[int, int]] | None:
    """(path, (device, inode)) of a SQLite file database, to notice the file being deleted or replaced."""
    db = engine.url.database
    if engine.dialect.name != "sqlite" or not db or db == ":memory:" or db.startswith("file:"):
        return None
    path = Path(db).resolve()
    st = path.stat()
    return path, (st.st_dev, st.st_ino)


class SaveOutcome(Enum):
    """What ``save_progress`` did: stored (and the class answer too), stored but the class refused, or a conflict."""

    SAVED = "saved"
    CONFLICT = "conflict"          # someone else wrote this progress first: nothing stored, read and try again
    CLASS_CLOSED = "class_closed"  # progress stored; the class takes no more answers
    CLASS_GONE = "class_gone"      # progress stored; the class is no longer in the database


class Storage:
    """Classes, students, answers and quiz progress in one database (thread-safe: one engine, a connection per
    call). Public methods are the stable contract other modules (and the replicated deployment) rely on."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._file = _file_identity(engine)
        # SQLite: this process's writers queue here, in Python, rather than in SQLite's busy handler, which polls
        # and lets 50 eager writers starve one past its timeout; the busy timeout then only arbitrates between
        # processes. PostgreSQL locks rows itself.
        self._write_turn = threading.Lock() if engine.dialect.name == "sqlite" else None

    @classmethod
    def open(cls, url: str, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> Storage:
        """Connect and create or migrate the schema (DatabaseError if the database is unusable)."""
        engine = make_engine(url, busy_timeout_ms)
        try:
            with _translated():
                migrate(engine)
        except DatabaseError:
            engine.dispose()
            raise
        return cls(engine)

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def check(self) -> None:
        """DatabaseError ``class_db_lost`` when the SQLite file opened was deleted or replaced since."""
        if self._file is None:
            return
        path, ident = self._file
        try:
            st = os.stat(path)
        except OSError:
            raise _lost() from None
        if (st.st_dev, st.st_ino) != ident:
            raise _lost()

    @contextlib.contextmanager
    def reading(self) -> Iterator[Connection]:
        """A connection for reads, after the file check; driver failures become DatabaseError."""
        self.check()
        with _translated(), self.engine.connect() as conn:
            yield conn

    @contextlib.contextmanager
    def writing(self) -> Iterator[Connection]:
        """A transaction (committed on leaving), after the file check; driver failures become DatabaseError."""
        self.check()
        with self._turn(), _translated(), self.engine.connect().execution_options(**{_IMMEDIATE: True}) as conn, \
                conn.begin():
            yield conn

    @contextlib.contextmanager
    def _turn(self) -> Iterator[None]:
        """Wait for this process's write turn (SQLite only); DatabaseError if it does not come in WRITE_QUEUE_S."""
        if self._write_turn is None:
            yield
            return
        if not self._write_turn.acquire(timeout=WRITE_QUEUE_S):
            raise DatabaseError("class_db_busy")
        try:
            yield
        finally:
            self._write_turn.release()

    # --- classes ---

    def create_class(self) -> ClassInfo:
        """A new open class with a fresh random join code."""
        for _ in range(5):
            code = new_code()
            try:
                with self.writing() as conn:
                    conn.execute(classes.insert().values(code=code, created_at=_now(), closed=False, reveal=False))
                return self.find_class(code)
            except exc.IntegrityError:  # the same code twice: vanishingly rare, try another
                continue
        raise RuntimeError("could not draw an unused join code")

    def find_class(self, code_text: str) -> ClassInfo:
        """The class with this join code (any case, spaces or dashes); LabError if there is none."""
        code = normalize_code(code_text)
        if code is None:
            raise LabError("class_code_malformed")
        with self.reading() as conn:
            row = conn.execute(select(classes).where(classes.c.code == code)).first()
        if row is None:
            raise LabError("class_code_unknown", code=code)
        return _class_info(row)

    def list_classes(self, limit: int = 50) -> tuple[ClassInfo, ...]:
        """The most recent classes first."""
        with self.reading() as conn:
            rows = conn.execute(select(classes).order_by(classes.c.id.desc()).limit(limit)).all()
        return tuple(_class_info(r) for r in rows)

    def set_closed(self, class_id: int, closed: bool) -> None:
        """Close a class (no more answers) or open it again."""
        with self.writing() as conn:
            conn.execute(classes.update().where(classes.c.id == class_id).values(closed=closed))

    def set_locked(self, class_id: int, locked: bool) -> None:
        """Lock a class to new students (those who joined before can still come back), or unlock it."""
        with self.writing() as conn:
            conn.execute(classes.update().where(classes.c.id == class_id).values(locked=locked))

    def set_reveal(self, class_id: int, reveal: bool) -> None:
        """Let the class's students see the explanations (or hide them again)."""
        with self.writing() as conn:
            conn.execute(classes.update().where(classes.c.id == class_id).values(reveal=reveal))

    # --- students ---

    def join(self, code_text: str, key: str, name_text: str, rename: bool = False) -> Member:
        """Join an open class under a display name; joining again with the same key never duplicates, and
        renames only with ``rename`` (the student's own session), else keeps the stored name.

        Refused (LabError): the class is closed (class_closed); locked and the key is new (class_locked); the
        teacher removed this key (class_removed); another student has this name after case folding
        (class_name_taken). The checks and the insert are one statement, so no race lets a second name in."""
        name = clean_name(name_text)
        folded = name_key(name)
        info = self.find_class(code_text)
        if info.closed:
            raise LabError("class_closed", code=info.code)
        ins = dialect_insert(self.engine, students)
        returning = select(students.c.id).where(students.c.class_id == info.id, students.c.key == key).exists()
        src = select(literal(info.id, Integer), literal(key, String), literal(name, String), literal(folded, String),
                     literal(_now(), DateTime(timezone=True))).where(
            select(classes.c.id).where(classes.c.id == info.id, classes.c.closed.is_(False),
                                       or_(classes.c.locked.is_(False), returning)).exists(),
            ~select(removed.c.key).where(removed.c.class_id == info.id, removed.c.key == key).exists())
        kept = {"name": ins.excluded.name, "name_key": ins.excluded.name_key} if rename else \
            {"name": students.c.name, "name_key": students.c.name_key}
        stmt = ins.from_select(["class_id", "key", "name", "name_key", "joined_at"], src).on_conflict_do_update(
            index_elements=["class_id", "key"], set_=kept).returning(students.c.id, students.c.name)
        try:
            with self.writing() as conn:
                row = conn.execute(stmt).first()  # RETURNING: no row when a check refused
                refused = None if row is not None else self._join_refused(conn, info.id, key, info.code)
        except exc.IntegrityError:  # uq_student_name: another key holds this name (or the class just went)
            raise LabError("class_name_taken") from None
        if refused is not None:
            raise refused
        return Member(info.id, info.code, row.id, key, row.name)

    @staticmethod
    def _join_refused(conn: Connection, class_id: int, key: str, code: str) -> LabError:
        """Why join stored nothing, as the error to raise (each key a literal, so the catalog check sees it)."""
        if conn.execute(select(removed.c.key).where(removed.c.class_id == class_id, removed.c.key == key)).first():
            return LabError("class_removed", code=code)
        row = conn.execute(select(classes.c.closed, classes.c.locked).where(classes.c.id == class_id)).first()
        if row is None:
            return LabError("class_gone", code=code)
        if row.closed:
            return LabError("class_closed", code=code)
        return LabError("class_locked", code=code)

    def member(self, code_text: str, key: str) -> Member | None:
        """The student with this quiz id in this class, if they joined before (to restore after a reload)."""
        info = self.find_class(code_text)
        with self.reading() as conn:
            row = conn.execute(select(students).where(students.c.class_id == info.id, students.c.key == key)).first()
        return None if row is None else Member(info.id, info.code, row.id, key, row.name)

    def class_of(self, m: Member) -> ClassInfo | None:
        """The member's class as stored now, or None when the class or the student's row is no longer in the
        database (lost, reset or restored from an older copy): the caller says so instead of dropping them."""
        with self.reading() as conn:
            row = conn.execute(select(classes).join(students, students.c.class_id == classes.c.id).where(
                students.c.id == m.student_id, students.c.key == m.key, classes.c.id == m.class_id,
                classes.c.code == m.code)).first()
        return None if row is None else _class_info(row)

    def students(self, class_id: int) -> tuple[StudentRow, ...]:
        """Everyone who joined, in joining order."""
        with self.reading() as conn:
            rows = conn.execute(select(students).where(students.c.class_id == class_id)
                                .order_by(students.c.id)).all()
        return tuple(StudentRow(r.id, r.name, r.joined_at) for r in rows)

    def is_member(self, class_id: int, key: str) -> bool:
        """Whether this key is in the class already (coming back costs no join from the limiter)."""
        with self.reading() as conn:
            return conn.execute(select(students.c.id).where(students.c.class_id == class_id,
                                                            students.c.key == key)).first() is not None

    def remove_student(self, class_id: int, student_id: int) -> bool:
        """Remove a student with their answers, votes and presence (the teacher's "remove"), and remember their
        id so that their session is told and cannot join again; False when they were not in the class."""
        with self.writing() as conn:
            key = conn.execute(students.delete().where(students.c.id == student_id, students.c.class_id == class_id)
                               .returning(students.c.key)).scalar()
            if key is None:
                return False
            conn.execute(dialect_insert(self.engine, removed).values(class_id=class_id, key=key, removed_at=_now())
                         .on_conflict_do_nothing(index_elements=["class_id", "key"]))
            # the foreign keys cascade too; said here so that a database made without them is cleaned alike
            for table in (answers, votes, presence):
                conn.execute(table.delete().where(table.c.class_id == class_id, table.c.student_id == student_id))
        return True

    def was_removed(self, class_id: int, key: str) -> bool:
        """Whether the teacher removed this key from the class (its session says so)."""
        with self.reading() as conn:
            return conn.execute(select(removed.c.key).where(removed.c.class_id == class_id,
                                                            removed.c.key == key)).first() is not None

    def turnout(self, class_id: int) -> Turnout:
        """How many students joined, and how many voted in the round open now (None when no vote is open)."""
        with self.reading() as conn:
            joined = conn.execute(select(func.count()).select_from(students)
                                  .where(students.c.class_id == class_id)).scalar_one()
            open_vote = conn.execute(select(live.c.vote_key, live.c.vote_round).where(
                live.c.class_id == class_id, live.c.vote_phase == "open")).first()
            voted = None if open_vote is None or open_vote.vote_key is None else conn.execute(
                select(func.count()).select_from(votes).where(
                    votes.c.class_id == class_id, votes.c.vote_key == open_vote.vote_key,
                    votes.c.round == open_vote.vote_round)).scalar_one()
        return Turnout(int(joined), voted)

    # --- answers ---

    def _answer_stmt(self, member: Member, question_id: str, canonical: str, correct: bool, replace: bool):  # noqa: ANN202
        ins = dialect_insert(self.engine, answers)
        src = select(
            literal(member.class_id, Integer), literal(member.student_id, Integer), literal(question_id, String),
            literal(canonical, String), literal(bool(correct), Boolean), literal(1, Integer),
            literal(_now(), DateTime(timezone=True)),
        ).where(select(classes.c.id).where(classes.c.id == member.class_id, classes.c.closed.is_(False)).exists())
        # a student row that is gone fails the foreign key (IntegrityError): see _gone
        stmt = ins.from_select(
            ["class_id", "student_id", "question_id", "canonical", "correct", "attempts", "answered_at"], src)
        if replace:
            stmt = stmt.on_conflict_do_update(
                index_elements=["class_id", "student_id", "question_id"],
                set_={"canonical": ins.excluded.canonical, "correct": ins.excluded.correct,
                      "attempts": answers.c.attempts + 1, "answered_at": ins.excluded.answered_at})
        else:  # keep what is stored (re-uploading earlier answers must never change one)
            stmt = stmt.on_conflict_do_update(index_elements=["class_id", "student_id", "question_id"],
                                              set_={"attempts": answers.c.attempts})
        return stmt.returning(answers.c.id)

    def _refused(self, conn: Connection, member: Member) -> LabError:
        """Why the class took no answer: closed, or no longer in the database."""
        row = conn.execute(select(classes.c.closed).where(classes.c.id == member.class_id,
                                                          classes.c.code == member.code)).first()
        alive = row is not None and conn.execute(
            select(students.c.id).where(students.c.id == member.student_id)).first() is not None
        if alive:
            return LabError("class_closed", code=member.code)
        return _gone(member)

    def record(self, member: Member, question_id: str, canonical: str, correct: bool, replace: bool = True) -> None:
        """Store a graded answer; a resubmission of the same question updates it (attempts + 1), unless
        ``replace`` is False (then a stored answer stays as it is).

        Refused (LabError class_closed / class_gone) when the class is closed or gone; DatabaseError when the
        database fails.
        """
        stmt = self._answer_stmt(member, question_id, canonical, correct, replace)
        try:
            with self.writing() as conn:
                stored = conn.execute(stmt).first()  # RETURNING (rowcount is unreliable for INSERT … SELECT)
                refused = None if stored is not None else self._refused(conn, member)
        except exc.IntegrityError:  # the student's row is gone (foreign key)
            refused = _gone(member)
        if refused is not None:
            raise refused

    def answers(self, class_id: int, student_id: int | None = None) -> tuple[AnswerRow, ...]:
        """The class's stored answers (one student's only, when given), oldest first."""
        query = (select(answers, students.c.name).join(students, students.c.id == answers.c.student_id)
                 .where(answers.c.class_id == class_id).order_by(answers.c.id))
        if student_id is not None:
            query = query.where(answers.c.student_id == student_id)
        with self.reading() as conn:
            rows = conn.execute(query).all()
        return tuple(AnswerRow(r.student_id, r.name, r.question_id, r.canonical, r.correct, r.attempts,
                               r.answered_at) for r in rows)

    # --- quiz progress (every student, in a class or not) ---

    def load_progress(self, key: str) -> tuple[int, str | None]:
        """(version, the stored JSON) of a student's quiz progress; (0, None) when nothing is stored yet."""
        with self.reading() as conn:
            row = conn.execute(select(progress.c.version, progress.c.data).where(progress.c.key == key)).first()
        return (0, None) if row is None else (row.version, row.data)

    def save_progress(self, key: str, version: int, data: str, answer: ClassAnswer | None = None) -> SaveOutcome:
        """Store the progress read at ``version`` (compare-and-set) and, in the same transaction, the class
        answer it adds: both or neither, so the quiz never shows an answer the teacher does not have.

        CONFLICT (nothing stored) when the progress changed since it was read; CLASS_CLOSED / CLASS_GONE when
        the progress was stored but the class refused the answer; DatabaseError when the database fails.
        """
        now = _now()
        if version == 0:
            ins = dialect_insert(self.engine, progress)
            cas = ins.values(key=key, data=data, version=1, updated_at=now).on_conflict_do_nothing(
                index_elements=["key"]).returning(progress.c.version)
        else:
            cas = (progress.update().where(progress.c.key == key, progress.c.version == version)
                   .values(data=data, version=version + 1, updated_at=now).returning(progress.c.version))
        try:
            with self.writing() as conn:
                if conn.execute(cas).first() is None:
                    return SaveOutcome.CONFLICT  # nothing written in this transaction
                if answer is None:
                    return SaveOutcome.SAVED
                stmt = self._answer_stmt(answer.member, answer.question_id, answer.canonical, answer.correct,
                                         replace=True)
                if conn.execute(stmt).first() is not None:
                    return SaveOutcome.SAVED
                refused = self._refused(conn, answer.member)
        except exc.IntegrityError:  # the student's row is gone (foreign key): keep the progress, say so
            outcome = self.save_progress(key, version, data)
            return SaveOutcome.CLASS_GONE if outcome is SaveOutcome.SAVED else outcome
        return SaveOutcome.CLASS_CLOSED if refused.key == "class_closed" else SaveOutcome.CLASS_GONE

    def delete_progress(self, key: str) -> None:
        """Forget a student's quiz progress (start over); their class answers stay."""
        with self.writing() as conn:
            conn.execute(progress.delete().where(progress.c.key == key))

    # --- the live lesson (mha_core.lesson): plan, presenter state, votes, presence ---

    def save_plan(self, class_id: int, plan: Plan) -> None:
        """Store the class's lesson plan (replacing the one before); LabError lesson_class_gone if the class is
        no longer in the database."""
        ins = dialect_insert(self.engine, plans)
        stmt = ins.values(class_id=class_id, data=plan_to_json(plan), updated_at=_now()).on_conflict_do_update(
            index_elements=["class_id"], set_={"data": ins.excluded.data, "updated_at": ins.excluded.updated_at})
        try:
            with self.writing() as conn:
                conn.execute(stmt)
        except exc.IntegrityError:  # the class is gone (foreign key)
            raise LabError("lesson_class_gone") from None

    def load_plan(self, class_id: int) -> Plan | None:
        """The class's saved plan; None when it has none (use the default). LabError lesson_plan_bad when the stored
        plan no longer reads (e.g. a question left the bank)."""
        with self.reading() as conn:
            data = conn.execute(select(plans.c.data).where(plans.c.class_id == class_id)).scalar()
        return None if data is None else plan_from_json(data)

    def publish_live(self, class_id: int, state: LiveState, seen: int | None = None) -> int | None:
        """Make ``state`` the class's live state; the new version (the one before + 1, 1 for the first), assigned
        atomically so concurrent publishers never share a version. LabError lesson_class_gone without the class.

        With ``seen`` (the version this presenter last read or wrote) it is a compare-and-set in one UPDATE:
        stored only if the version is still ``seen``, else None and nothing stored (another window presented
        since: a stale window must never move the class back)."""
        vote = state.vote
        if seen is not None:
            cas = (live.update().where(live.c.class_id == class_id, live.c.version == seen).values(
                version=live.c.version + 1, data=state.to_json(), vote_key=vote and vote.key,
                vote_round=vote and vote.round, vote_phase=vote and vote.phase, updated_at=_now(),
            ).returning(live.c.version))
            with self.writing() as conn:
                return conn.execute(cas).scalar()
        ins = dialect_insert(self.engine, live)
        stmt = ins.values(
            class_id=class_id, version=1, data=state.to_json(), vote_key=vote and vote.key,
            vote_round=vote and vote.round, vote_phase=vote and vote.phase, updated_at=_now(),
        ).on_conflict_do_update(index_elements=["class_id"], set_={
            "version": live.c.version + 1, "data": ins.excluded.data, "vote_key": ins.excluded.vote_key,
            "vote_round": ins.excluded.vote_round, "vote_phase": ins.excluded.vote_phase,
            "updated_at": ins.excluded.updated_at,
        }).returning(live.c.version)
        try:
            with self.writing() as conn:
                return int(conn.execute(stmt).scalar_one())
        except exc.IntegrityError:  # the class is gone (foreign key)
            raise LabError("lesson_class_gone") from None

    def read_live(self, class_id: int) -> tuple[int, LiveState | None]:
        """(version, state) of the class's live lesson: (0, None) when it was never live, (version, None) after
        ``end_live`` (the version keeps growing, so a follower always sees a change)."""
        with self.reading() as conn:
            row = conn.execute(select(live.c.version, live.c.data).where(live.c.class_id == class_id)).first()
        if row is None:
            return 0, None
        return row.version, (LiveState.from_json(row.data) if row.data else None)

    def end_live(self, class_id: int) -> None:
        """End the live lesson: students stop following, and open votes take no more answers."""
        with self.writing() as conn:
            conn.execute(live.update().where(live.c.class_id == class_id).values(
                version=live.c.version + 1, data="", vote_key=None, vote_round=None, vote_phase=None,
                updated_at=_now()))

    def cast_vote(self, member: Member, vote_key: str, round: int, choice: int, correct: bool) -> None:  # noqa: A002
        """Store a student's vote: one row per (class, student, vote key, round), accepted only while the class's
        live vote has this key and round and is open, ``0 <= choice <`` its number of options, and the class is open
        (all checked in the same statement); voting again while open replaces the choice. Refused: LabError
        vote_choice_bad / vote_closed / class_closed / class_gone; DatabaseError when the database fails."""
        if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < 2**31:
            raise LabError("vote_choice_bad")  # never sent (beyond 32 bits it would overflow PostgreSQL's INTEGER)
        ins = dialect_insert(self.engine, votes)
        vote_open = select(live.c.class_id).where(
            live.c.class_id == member.class_id, live.c.vote_key == vote_key, live.c.vote_round == round,
            live.c.vote_phase == "open", literal(choice, Integer) < self._vote_options()).exists()
        class_open = select(classes.c.id).where(classes.c.id == member.class_id, classes.c.closed.is_(False)).exists()
        in_class = select(students.c.id).where(students.c.id == member.student_id,
                                               students.c.class_id == member.class_id).exists()
        src = select(
            literal(member.class_id, Integer), literal(member.student_id, Integer), literal(vote_key, String),
            literal(round, Integer), literal(choice, Integer), literal(bool(correct), Boolean),
            literal(_now(), DateTime(timezone=True)),
        ).where(vote_open, class_open, in_class)
        stmt = ins.from_select(["class_id", "student_id", "vote_key", "round", "choice", "correct", "voted_at"],
                               src).on_conflict_do_update(
            index_elements=["class_id", "student_id", "vote_key", "round"],
            set_={"choice": ins.excluded.choice, "correct": ins.excluded.correct,
                  "voted_at": ins.excluded.voted_at}).returning(votes.c.id)
        try:
            with self.writing() as conn:
                stored = conn.execute(stmt).first()  # RETURNING: no row when the vote or the class refused
                refused = None if stored is not None else self._vote_refused(conn, member, vote_key, round)
        except exc.IntegrityError:  # the student's row is gone (foreign key)
            refused = _gone(member)
        if refused is not None:
            raise refused

    def _vote_options(self):  # noqa: ANN202 - a SQL expression
        """The live vote's number of options, read in SQL from the stored LiveState's JSON (NULL when no vote or
        after the lesson ended), so a ballot is checked against it in the statement that stores it."""
        data = func.nullif(live.c.data, "")
        if self.engine.dialect.name == "postgresql":
            return data.cast(postgresql.JSONB)[("vote", "n_options")].astext.cast(Integer)
        return func.json_extract(data, "$.vote.n_options")

    def _vote_refused(self, conn: Connection, member: Member, vote_key: str, round: int) -> LabError:  # noqa: A002
        """Why a vote was not stored: the class is gone or closed, else this vote is not open, else the choice is
        not one of its options."""
        row = conn.execute(select(classes.c.closed).where(classes.c.id == member.class_id,
                                                          classes.c.code == member.code)).first()
        if row is None or conn.execute(select(students.c.id).where(
                students.c.id == member.student_id, students.c.class_id == member.class_id)).first() is None:
            return _gone(member)
        if row.closed:
            return LabError("class_closed", code=member.code)
        still_open = conn.execute(select(live.c.class_id).where(
            live.c.class_id == member.class_id, live.c.vote_key == vote_key, live.c.vote_round == round,
            live.c.vote_phase == "open")).first()
        return LabError("vote_closed") if still_open is None else LabError("vote_choice_bad")

    def votes(self, class_id: int, vote_key: str | None = None, student_id: int | None = None) -> tuple[VoteRow, ...]:
        """The class's stored votes (of one vote key, one student only, when given), oldest first."""
        query = (select(votes, students.c.name).join(students, students.c.id == votes.c.student_id)
                 .where(votes.c.class_id == class_id).order_by(votes.c.id))
        if vote_key is not None:
            query = query.where(votes.c.vote_key == vote_key)
        if student_id is not None:
            query = query.where(votes.c.student_id == student_id)
        with self.reading() as conn:
            rows = conn.execute(query).all()
        return tuple(VoteRow(r.student_id, r.name, r.vote_key, r.round, r.choice, r.correct, r.voted_at)
                     for r in rows)

    def heartbeat(self, member: Member, following: bool) -> None:
        """Note that the student is here now, following the teacher or exploring; LabError class_gone when the
        student's row is no longer in the database."""
        ins = dialect_insert(self.engine, presence)
        stmt = ins.values(class_id=member.class_id, student_id=member.student_id, following=bool(following),
                          seen_at=time.time()).on_conflict_do_update(
            index_elements=["class_id", "student_id"],
            set_={"following": ins.excluded.following, "seen_at": ins.excluded.seen_at})
        try:
            with self.writing() as conn:
                conn.execute(stmt)
        except exc.IntegrityError:  # the student's (or the class's) row is gone (foreign key)
            raise _gone(member) from None

    def presence(self, class_id: int, within_s: float = 15.0) -> tuple[int, int]:
        """(following, present): students seen in the last ``within_s`` seconds, and those of them following."""
        since = time.time() - within_s
        query = select(func.count(), func.coalesce(func.sum(case((presence.c.following.is_(True), 1), else_=0)), 0)
                       ).where(presence.c.class_id == class_id, presence.c.seen_at >= since)
        with self.reading() as conn:
            present, following = conn.execute(query).one()
        return int(following), int(present)


@dataclass(frozen=True)
class ClassAnswer:
    """A graded answer for the class, stored together with the progress that records it."""

    member: Member
    question_id: str
    canonical: str
    correct: bool

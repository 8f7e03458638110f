"""The class store over SQLAlchemy 2: classes, students and their answers, one row per (class, student, question).

Every write is one statement (INSERT … SELECT … ON CONFLICT DO UPDATE), so SQLite never has to upgrade a
read lock to a write lock mid-transaction and PostgreSQL never sees a duplicate under concurrency. Database
failures become ``DatabaseError`` (a translated LabError) so a page can keep the answer and offer a resubmit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Boolean, DateTime, Engine, Integer, String, create_engine, event, exc, literal, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url

from mha_core.classroom.codes import new_code, normalize_code
from mha_core.classroom.names import clean_name
from mha_core.classroom.schema import answers, classes, migrate, students
from mha_core.errors import LabError

BUSY_TIMEOUT_MS = 5000


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


def _now() -> datetime:
    return datetime.now(UTC)


def make_engine(url: str, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> Engine:
    """An engine for any SQLAlchemy URL; SQLite files get their folder, WAL journal and a busy timeout."""
    u = make_url(url)
    if u.get_backend_name() != "sqlite":
        args = {"connect_timeout": 5} if u.get_backend_name() == "postgresql" else {}
        return create_engine(u, pool_pre_ping=True, pool_size=10, max_overflow=20, pool_timeout=20,
                             connect_args=args)
    if u.database and u.database != ":memory:":
        Path(u.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(u, pool_size=10, max_overflow=20, pool_timeout=20,
                           connect_args={"timeout": busy_timeout_ms / 1000, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn, _record) -> None:  # noqa: ANN001 - DB-API connection
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    return engine


@contextlib.contextmanager
def _translated() -> Iterator[None]:
    """Turn driver failures into DatabaseError: busy (locked) or unavailable (anything else operational)."""
    try:
        yield
    except (exc.OperationalError, exc.InterfaceError, exc.TimeoutError) as err:
        text = str(err).lower()
        if "locked" in text or "busy" in text:
            raise DatabaseError("class_db_busy", "The class database is busy; your answer was kept.") from err
        raise DatabaseError("class_db_unavailable", "The class database cannot be reached; your answer was kept.") \
            from err


def _insert(engine: Engine, table):  # noqa: ANN001, ANN202 - a dialect's Insert construct
    name = engine.dialect.name
    if name == "sqlite":
        return sqlite.insert(table)
    if name == "postgresql":
        return postgresql.insert(table)
    raise NotImplementedError(f"class mode supports SQLite and PostgreSQL, not {name}")


class Storage:
    """Classes, students and answers in one database (thread-safe: one engine, a connection per call)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

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

    # --- classes ---

    def create_class(self) -> ClassInfo:
        """A new open class with a fresh random join code."""
        for _ in range(5):
            code = new_code()
            try:
                with _translated(), self.engine.begin() as conn:
                    conn.execute(classes.insert().values(code=code, created_at=_now(), closed=False, reveal=False))
                return self.find_class(code)
            except exc.IntegrityError:  # the same code twice: vanishingly rare, try another
                continue
        raise RuntimeError("could not draw an unused join code")

    def find_class(self, code_text: str) -> ClassInfo:
        """The class with this join code (any case, spaces or dashes); LabError if there is none."""
        code = normalize_code(code_text)
        if code is None:
            raise LabError("class_code_malformed", "A class code has 8 letters and digits, e.g. K7QX-2MPA.")
        with _translated(), self.engine.connect() as conn:
            row = conn.execute(select(classes).where(classes.c.code == code)).first()
        if row is None:
            raise LabError("class_code_unknown", "There is no class with the code {code}.", code=code)
        return ClassInfo(row.id, row.code, row.created_at, row.closed, row.reveal)

    def list_classes(self, limit: int = 50) -> tuple[ClassInfo, ...]:
        """The most recent classes first."""
        with _translated(), self.engine.connect() as conn:
            rows = conn.execute(select(classes).order_by(classes.c.id.desc()).limit(limit)).all()
        return tuple(ClassInfo(r.id, r.code, r.created_at, r.closed, r.reveal) for r in rows)

    def set_closed(self, class_id: int, closed: bool) -> None:
        """Close a class (no more answers) or open it again."""
        with _translated(), self.engine.begin() as conn:
            conn.execute(classes.update().where(classes.c.id == class_id).values(closed=closed))

    def set_reveal(self, class_id: int, reveal: bool) -> None:
        """Let the class's students see the explanations (or hide them again)."""
        with _translated(), self.engine.begin() as conn:
            conn.execute(classes.update().where(classes.c.id == class_id).values(reveal=reveal))

    # --- students ---

    def join(self, code_text: str, key: str, name_text: str) -> Member:
        """Join an open class under a display name; joining again with the same key renames, never duplicates."""
        name = clean_name(name_text)
        info = self.find_class(code_text)
        if info.closed:
            raise LabError("class_closed", "Class {code} is closed.", code=info.code)
        ins = _insert(self.engine, students)
        src = select(literal(info.id, Integer), literal(key, String), literal(name, String),
                     literal(_now(), DateTime(timezone=True))).where(
            select(classes.c.id).where(classes.c.id == info.id, classes.c.closed.is_(False)).exists())
        stmt = ins.from_select(["class_id", "key", "name", "joined_at"], src).on_conflict_do_update(
            index_elements=["class_id", "key"], set_={"name": ins.excluded.name}).returning(students.c.id)
        with _translated(), self.engine.begin() as conn:
            row = conn.execute(stmt).first()  # RETURNING: no row when the class closed meanwhile
        if row is None:
            raise LabError("class_closed", "Class {code} is closed.", code=info.code)
        return Member(info.id, info.code, row.id, key, name)

    def member(self, code_text: str, key: str) -> Member | None:
        """The student with this quiz id in this class, if they joined before (to restore after a reload)."""
        info = self.find_class(code_text)
        with _translated(), self.engine.connect() as conn:
            row = conn.execute(select(students).where(students.c.class_id == info.id, students.c.key == key)).first()
        return None if row is None else Member(info.id, info.code, row.id, key, row.name)

    def students(self, class_id: int) -> tuple[StudentRow, ...]:
        """Everyone who joined, in joining order."""
        with _translated(), self.engine.connect() as conn:
            rows = conn.execute(select(students).where(students.c.class_id == class_id)
                                .order_by(students.c.id)).all()
        return tuple(StudentRow(r.id, r.name, r.joined_at) for r in rows)

    # --- answers ---

    def record(self, member: Member, question_id: str, canonical: str, correct: bool) -> None:
        """Store a graded answer; a resubmission of the same question updates it (attempts + 1).

        Refused (LabError class_closed) when the class is closed; DatabaseError when the database fails.
        """
        ins = _insert(self.engine, answers)
        src = select(
            literal(member.class_id, Integer), literal(member.student_id, Integer), literal(question_id, String),
            literal(canonical, String), literal(bool(correct), Boolean), literal(1, Integer),
            literal(_now(), DateTime(timezone=True)),
        ).where(select(classes.c.id).where(classes.c.id == member.class_id, classes.c.closed.is_(False)).exists())
        stmt = ins.from_select(
            ["class_id", "student_id", "question_id", "canonical", "correct", "attempts", "answered_at"], src,
        ).on_conflict_do_update(
            index_elements=["class_id", "student_id", "question_id"],
            set_={"canonical": ins.excluded.canonical, "correct": ins.excluded.correct,
                  "attempts": answers.c.attempts + 1, "answered_at": ins.excluded.answered_at},
        ).returning(answers.c.id)
        with _translated(), self.engine.begin() as conn:
            stored = conn.execute(stmt).first()  # RETURNING (rowcount is unreliable for INSERT … SELECT)
        if stored is None:
            raise LabError("class_closed", "Class {code} is closed.", code=member.code)

    def answers(self, class_id: int, student_id: int | None = None) -> tuple[AnswerRow, ...]:
        """The class's stored answers (one student's only, when given), oldest first."""
        query = (select(answers, students.c.name).join(students, students.c.id == answers.c.student_id)
                 .where(answers.c.class_id == class_id).order_by(answers.c.id))
        if student_id is not None:
            query = query.where(answers.c.student_id == student_id)
        with _translated(), self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return tuple(AnswerRow(r.student_id, r.name, r.question_id, r.canonical, r.correct, r.attempts,
                               r.answered_at) for r in rows)

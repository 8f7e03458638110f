"""Tables and the app's own migrations: created on start, upgraded step by step, version kept in the database."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    DateTime,
    Engine,
    Float,
    ForeignKey,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    exc,
    false,
    inspect,
    select,
)

from mha_core.classroom.names import MAX_NAME, NAME_KEY_LENGTH, name_key

KEY_LENGTH = 64  # a student id: 32 hex digits today (128 bits); room for a longer one

metadata = MetaData()

schema_version = Table(
    "mha_schema_version", metadata,
    Column("id", Integer, primary_key=True),
    Column("version", Integer, nullable=False),
)

classes = Table(
    "mha_classes", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("code", String(16), nullable=False, unique=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("closed", Boolean, nullable=False, default=False),
    Column("reveal", Boolean, nullable=False, default=False),
    # v4: no new students (those who joined before can still come back); added by _join_guards on old databases
    Column("locked", Boolean, nullable=False, default=False, server_default=false()),
    # v6: students join without a name (the teacher sees aggregates and opaque ids); added by _anonymous_classes
    Column("anonymous", Boolean, nullable=False, default=False, server_default=false()),
)

students = Table(
    "mha_students", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("class_id", Integer, ForeignKey("mha_classes.id", ondelete="CASCADE"), nullable=False),
    Column("key", String(KEY_LENGTH), nullable=False),  # the quiz's student id (seeds the numbers)
    Column("name", String(MAX_NAME), nullable=False),
    Column("joined_at", DateTime(timezone=True), nullable=False),
    # v4: the name as compared (names.name_key): one student per name in a class; NULL never collides
    Column("name_key", String(NAME_KEY_LENGTH), nullable=True),
    UniqueConstraint("class_id", "key", name="uq_student_key"),
    UniqueConstraint("class_id", "name_key", name="uq_student_name"),
)

removed = Table(
    "mha_removed", metadata,  # v4: students the teacher removed: their session is told, their id cannot rejoin
    Column("class_id", Integer, ForeignKey("mha_classes.id", ondelete="CASCADE"), primary_key=True),
    Column("key", String(KEY_LENGTH), primary_key=True),
    Column("removed_at", DateTime(timezone=True), nullable=False),
)

join_buckets = Table(
    "mha_join_buckets", metadata,  # v4: token buckets of the join limiter (mha_core.classroom.joins)
    Column("key", String(160), primary_key=True),          # "class:<id>" or "ip:<address>"
    Column("tokens", Float, nullable=False),               # joins still allowed now (refilled with time)
    Column("updated_at", Float, nullable=False),           # epoch seconds (wall clock: shared by replicas)
)

answers = Table(
    "mha_answers", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("class_id", Integer, ForeignKey("mha_classes.id", ondelete="CASCADE"), nullable=False),
    Column("student_id", Integer, ForeignKey("mha_students.id", ondelete="CASCADE"), nullable=False),
    Column("question_id", String(64), nullable=False),
    Column("canonical", String(400), nullable=False),
    Column("correct", Boolean, nullable=False),
    Column("attempts", Integer, nullable=False, default=1),
    Column("answered_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("class_id", "student_id", "question_id", name="uq_answer_once"),
)

progress = Table(
    "mha_progress", metadata,
    Column("key", String(KEY_LENGTH), primary_key=True),  # the quiz's student id, in a class or not
    Column("data", Text, nullable=False),                  # the Progress as JSON (mha_core.quiz.progress_store)
    Column("version", Integer, nullable=False),            # +1 per write: compare-and-set, never a lost update
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

limiter = Table(
    "mha_limiter", metadata,
    Column("key", String(160), primary_key=True),        # e.g. "ip:203.0.113.9", "session:…"
    Column("failures", Float, nullable=False),           # wrong tries, leaking away with time
    Column("blocked_until", Float, nullable=False),      # epoch seconds (wall clock: shared by replicas)
    Column("updated_at", Float, nullable=False),
    Column("version", Integer, nullable=False),
)

plans = Table(
    "mha_plans", metadata,
    Column("class_id", Integer, ForeignKey("mha_classes.id", ondelete="CASCADE"), primary_key=True),
    Column("data", Text, nullable=False),                  # the Plan as JSON (mha_core.lesson.plan)
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

VOTE_KEY_LENGTH = 160  # "page.question." + 10 hex digits (mha_core.lesson.live.vote_key)
PHASE_LENGTH = 16

live = Table(
    "mha_live", metadata,
    Column("class_id", Integer, ForeignKey("mha_classes.id", ondelete="CASCADE"), primary_key=True),
    Column("version", Integer, nullable=False),            # +1 per publish: followers copy when it grew
    Column("data", Text, nullable=False),                  # the LiveState as JSON (mha_core.lesson.live)
    # mirrors of LiveState.vote, so that a vote is checked against the open round in the same SQL statement
    Column("vote_key", String(VOTE_KEY_LENGTH), nullable=True),
    Column("vote_round", Integer, nullable=True),
    Column("vote_phase", String(PHASE_LENGTH), nullable=True),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

votes = Table(
    "mha_votes", metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("class_id", Integer, ForeignKey("mha_classes.id", ondelete="CASCADE"), nullable=False),
    Column("student_id", Integer, ForeignKey("mha_students.id", ondelete="CASCADE"), nullable=False),
    Column("vote_key", String(VOTE_KEY_LENGTH), nullable=False),
    Column("round", Integer, nullable=False),
    Column("choice", Integer, nullable=False),
    Column("correct", Boolean, nullable=False),
    Column("voted_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("class_id", "student_id", "vote_key", "round", name="uq_vote_once"),
)

presence = Table(
    "mha_presence", metadata,
    Column("class_id", Integer, ForeignKey("mha_classes.id", ondelete="CASCADE"), primary_key=True),
    Column("student_id", Integer, ForeignKey("mha_students.id", ondelete="CASCADE"), primary_key=True),
    Column("following", Boolean, nullable=False),
    Column("seen_at", Float, nullable=False),              # epoch seconds (wall clock: shared by replicas)
)

TEST_LENGTH = 8   # "pre" / "post" (mha_core.quiz.concept.TESTS)
ITEM_LENGTH = 64  # a concept item's id
OPTION_LENGTH = 64

test_answers = Table(
    "mha_test_answers", metadata,  # v5: the pre/post concept test, one row per (class, student, test, item)
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("class_id", Integer, ForeignKey("mha_classes.id", ondelete="CASCADE"), nullable=False),
    Column("student_id", Integer, ForeignKey("mha_students.id", ondelete="CASCADE"), nullable=False),
    Column("test", String(TEST_LENGTH), nullable=False),
    Column("form", String(4), nullable=False),
    Column("item_id", String(ITEM_LENGTH), nullable=False),
    Column("opened_at", DateTime(timezone=True), nullable=False),   # when the item was first shown to this student
    Column("choice", String(OPTION_LENGTH), nullable=True),         # NULL: shown, not answered yet
    Column("score", Float, nullable=True),                          # fraction in [0, 1], graded by the store
    Column("answered_at", DateTime(timezone=True), nullable=True),
    Column("response_ms", Integer, nullable=True),                  # answered_at - opened_at; never used for points
    UniqueConstraint("class_id", "student_id", "test", "item_id", name="uq_test_answer_once"),
)

test_windows = Table(
    "mha_test_windows", metadata,  # v5: which concept test (if any) a class takes now
    Column("class_id", Integer, ForeignKey("mha_classes.id", ondelete="CASCADE"), primary_key=True),
    Column("test", String(TEST_LENGTH), nullable=True),             # "pre", "post" or NULL (none open)
    Column("updated_at", DateTime(timezone=True), nullable=False),
)


def _wider_student_key(conn: Connection) -> None:
    """v2: student ids grew from 8 to 32 hex digits (SQLite ignores VARCHAR lengths; PostgreSQL does not)."""
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(f"ALTER TABLE mha_students ALTER COLUMN key TYPE VARCHAR({KEY_LENGTH})")


def _join_guards(conn: Connection) -> None:
    """v4: mha_classes.locked and mha_students.name_key on a database made before them (create_all makes the new
    tables and, on a new database, the columns: then this does nothing). Names stored before are given their key,
    oldest first; a later duplicate of a name in the same class keeps NULL (it stays, nobody else can take it)."""
    have = inspect(conn)
    if "locked" not in {c["name"] for c in have.get_columns("mha_classes")}:
        conn.exec_driver_sql("ALTER TABLE mha_classes ADD COLUMN locked BOOLEAN NOT NULL DEFAULT FALSE")
    if "name_key" in {c["name"] for c in have.get_columns("mha_students")}:
        return
    conn.exec_driver_sql(f"ALTER TABLE mha_students ADD COLUMN name_key VARCHAR({NAME_KEY_LENGTH})")
    seen: set[tuple[int, str]] = set()
    for row in conn.execute(select(students.c.id, students.c.class_id, students.c.name).order_by(students.c.id)):
        k = (row.class_id, name_key(row.name))
        if k not in seen:
            seen.add(k)
            conn.execute(students.update().where(students.c.id == row.id).values(name_key=k[1]))
    conn.exec_driver_sql("CREATE UNIQUE INDEX uq_student_name ON mha_students (class_id, name_key)")


def _anonymous_classes(conn: Connection) -> None:
    """v6: mha_classes.anonymous on a database made before it (every class made before was a named one)."""
    if "anonymous" not in {c["name"] for c in inspect(conn).get_columns("mha_classes")}:
        conn.exec_driver_sql("ALTER TABLE mha_classes ADD COLUMN anonymous BOOLEAN NOT NULL DEFAULT FALSE")


# Each step upgrades version n-1 to n. Version 1 is the tables above (create_all); add steps, never edit them.
# v2 adds mha_progress and mha_limiter (create_all makes them) and widens mha_students.key.
# v3 adds the live lesson's mha_plans, mha_live, mha_votes and mha_presence (create_all makes them).
# v4 adds mha_removed, mha_join_buckets (create_all), mha_classes.locked and mha_students.name_key (_join_guards).
# v5 adds the pre/post concept test's mha_test_answers and mha_test_windows (create_all makes them).
# v6 adds mha_classes.anonymous (_anonymous_classes).
MIGRATIONS: tuple[Callable[[Connection], None], ...] = (lambda conn: None, _wider_student_key, lambda conn: None,
                                                       _join_guards, lambda conn: None, _anonymous_classes)
SCHEMA_VERSION = len(MIGRATIONS)


class SchemaTooNew(RuntimeError):
    """The database was written by a newer app version; refuse rather than corrupt it."""


def migrate(engine: Engine) -> int:
    """Create missing tables and run pending migrations; the schema version afterwards.

    Safe when several replicas start together: a lost race to create a table is retried once.
    """
    for attempt in range(2):
        try:
            with engine.begin() as conn:
                metadata.create_all(conn, checkfirst=True)
                return _upgrade(conn)
        except (exc.IntegrityError, exc.ProgrammingError):
            if attempt:
                raise
    raise AssertionError("unreachable")


def _upgrade(conn: Connection) -> int:
    row = conn.execute(select(schema_version.c.version).where(schema_version.c.id == 1)).first()
    current = row.version if row else 0
    if current > SCHEMA_VERSION:
        raise SchemaTooNew(f"database schema {current} is newer than this app's {SCHEMA_VERSION}")
    for step in MIGRATIONS[current:]:
        step(conn)
    if row is None:
        conn.execute(schema_version.insert().values(id=1, version=SCHEMA_VERSION))
    elif current != SCHEMA_VERSION:
        conn.execute(schema_version.update().where(schema_version.c.id == 1).values(version=SCHEMA_VERSION))
    return SCHEMA_VERSION

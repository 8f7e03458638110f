"""The class store over SQLAlchemy 2: classes, students and their answers, one row per (class, student, question).

Every write transaction starts with a write (INSERT … SELECT … ON CONFLICT, or a compare-and-set UPDATE), so
SQLite never has to upgrade a read lock to a write lock mid-transaction and PostgreSQL never sees a duplicate under
concurrency. Database failures become ``DatabaseError`` (a translated LabError) so a page can keep the answer and
offer a resubmit. A SQLite file deleted or replaced under the running app is noticed before every statement
(its device and inode are compared with the file opened), so nothing is "stored" into an unlinked file.

Everything whose loss matters lives here, never in a process: classes and their switches, students, answers,
every student's quiz progress (``load_progress`` / ``save_progress``) and the password limiter (``auth``).
Several app replicas can share one PostgreSQL database.

The store is split by job: ``db`` (engine, errors, connections), ``rows`` (its values), ``classes`` (classes and
students), ``answers`` (answers and quiz progress) and ``live_lesson`` (plan, live state, votes, presence); this
module joins them into ``Storage`` and keeps every name importable from here.
"""

from __future__ import annotations

from mha_core.classroom.answers import AnswerTables
from mha_core.classroom.classes import ClassTables
from mha_core.classroom.db import (
    BUSY_TIMEOUT_MS,
    PG_TIMEOUT_S,
    WRITE_QUEUE_S,
    Database,
    DatabaseError,
    dialect_insert,
    make_engine,
)
from mha_core.classroom.live_lesson import LiveLessonTables
from mha_core.classroom.rows import (
    AnswerRow,
    ClassAnswer,
    ClassInfo,
    LiveVote,
    Member,
    SaveOutcome,
    StudentRow,
    Turnout,
    VoteRow,
)

__all__ = [
    "BUSY_TIMEOUT_MS", "PG_TIMEOUT_S", "WRITE_QUEUE_S", "AnswerRow", "ClassAnswer", "ClassInfo", "Database",
    "DatabaseError", "LiveVote", "Member", "SaveOutcome", "Storage", "StudentRow", "Turnout", "VoteRow",
    "dialect_insert", "make_engine",
]


class Storage(ClassTables, AnswerTables, LiveLessonTables):
    """Classes, students, answers, quiz progress and the live lesson in one database (thread-safe: one engine, a
    connection per call). Public methods are the stable contract other modules (and the replicated deployment)
    rely on."""

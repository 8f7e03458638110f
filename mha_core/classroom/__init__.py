"""Class mode without Streamlit: join codes, display names, storage over SQLAlchemy 2, the teacher's
dashboard figures and password checks. The Streamlit side lives in ``mha_core.ui`` (class_services, student, teacher,
present, classroom)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

# Where each name lives. The package imports none of them until one is asked for (PEP 562), so that a page can name
# a Member or catch a DatabaseError without importing SQLAlchemy (about 0.25 s of a fresh server's first page,
# issue 26): only the store's own modules (db, schema, classes, answers, live_lesson, auth, joins, prepost) need it.
_WHERE = {
    "aggregates": ("Dashboard", "QuestionStat", "StudentScore", "VoteStat", "WrongAnswer", "answers_csv", "dashboard",
                   "vote_stats"),
    "auth": ("SESSION", "SOURCE", "Policy", "RateLimiter", "configured_password", "password_matches"),
    "codes": ("ALPHABET", "BITS", "new_code", "normalize_code", "pretty"),
    "config": ("database_url", "sqlite_url"),
    "errors": ("DatabaseError",),
    "joins": ("Bucket", "JoinLimiter", "JoinLimits", "join_limits"),
    "names": ("MAX_NAME", "clean_name", "shown_name"),
    "rows": ("AnswerRow", "ClassAnswer", "ClassInfo", "Member", "SaveOutcome", "StudentRow", "Turnout", "VoteRow"),
    "storage": ("Storage", "make_engine"),
}
_MODULE = {name: module for module, names in _WHERE.items() for name in names}

if TYPE_CHECKING:  # what a type checker and an editor see: the names, imported as usual
    from mha_core.classroom.aggregates import (
        Dashboard,
        QuestionStat,
        StudentScore,
        VoteStat,
        WrongAnswer,
        answers_csv,
        dashboard,
        vote_stats,
    )
    from mha_core.classroom.auth import SESSION, SOURCE, Policy, RateLimiter, configured_password, password_matches
    from mha_core.classroom.codes import ALPHABET, BITS, new_code, normalize_code, pretty
    from mha_core.classroom.config import database_url, sqlite_url
    from mha_core.classroom.errors import DatabaseError
    from mha_core.classroom.joins import Bucket, JoinLimiter, JoinLimits, join_limits
    from mha_core.classroom.names import MAX_NAME, clean_name, shown_name
    from mha_core.classroom.rows import (
        AnswerRow,
        ClassAnswer,
        ClassInfo,
        Member,
        SaveOutcome,
        StudentRow,
        Turnout,
        VoteRow,
    )
    from mha_core.classroom.storage import Storage, make_engine


def __getattr__(name: str) -> object:
    """A name of the package, imported from its module the first time it is asked for."""
    module = _MODULE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ALPHABET",
    "BITS",
    "MAX_NAME",
    "SESSION",
    "SOURCE",
    "AnswerRow",
    "Bucket",
    "ClassAnswer",
    "ClassInfo",
    "Dashboard",
    "JoinLimiter",
    "JoinLimits",
    "DatabaseError",
    "Member",
    "Policy",
    "QuestionStat",
    "RateLimiter",
    "SaveOutcome",
    "Storage",
    "StudentRow",
    "StudentScore",
    "Turnout",
    "VoteRow",
    "VoteStat",
    "WrongAnswer",
    "answers_csv",
    "clean_name",
    "configured_password",
    "dashboard",
    "database_url",
    "join_limits",
    "make_engine",
    "new_code",
    "normalize_code",
    "password_matches",
    "pretty",
    "shown_name",
    "sqlite_url",
    "vote_stats",
]

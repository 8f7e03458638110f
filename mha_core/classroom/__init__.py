"""Class mode without Streamlit: join codes, display names, storage over SQLAlchemy 2, the teacher's
dashboard figures and password checks. The Streamlit side lives in ``mha_core.ui`` (class_services, student, teacher,
present, classroom)."""

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
from mha_core.classroom.joins import Bucket, JoinLimiter, JoinLimits, join_limits
from mha_core.classroom.names import MAX_NAME, clean_name, shown_name
from mha_core.classroom.storage import (
    AnswerRow,
    ClassAnswer,
    ClassInfo,
    DatabaseError,
    Member,
    SaveOutcome,
    Storage,
    StudentRow,
    Turnout,
    VoteRow,
    make_engine,
)

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

"""The class store's values: a class, a member, the rows the teacher's dashboard reads, a graded answer to store
with its progress, what a progress save did, and the live vote's indexed columns."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum


@dataclass(frozen=True)
class ClassInfo:
    """One class: its join code, whether it still takes answers, whether explanations are revealed."""

    id: int
    code: str
    created_at: datetime
    closed: bool
    reveal: bool
    locked: bool = False  # no new students (those who joined may come back)
    anonymous: bool = False  # students join without a name; the teacher sees aggregates and opaque ids


def class_info(row) -> ClassInfo:  # noqa: ANN001 - a mha_classes row
    """A class as read from its row (a database made before the lock reads it as unlocked)."""
    return ClassInfo(row.id, row.code, row.created_at, row.closed, row.reveal, bool(row.locked),
                     bool(row.anonymous))


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
class LiveVote:
    """The live state's vote as the store indexes it (its own columns: a ballot is checked against them in SQL)."""

    key: str
    round: int
    phase: str


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


class SaveOutcome(Enum):
    """What ``save_progress`` did: stored (and the class answer too), stored but the class refused, or a conflict."""

    SAVED = "saved"
    CONFLICT = "conflict"          # someone else wrote this progress first: nothing stored, read and try again
    CLASS_CLOSED = "class_closed"  # progress stored; the class takes no more answers
    CLASS_GONE = "class_gone"      # progress stored; the class is no longer in the database


@dataclass(frozen=True)
class ClassAnswer:
    """A graded answer for the class, stored together with the progress that records it."""

    member: Member
    question_id: str
    canonical: str
    correct: bool

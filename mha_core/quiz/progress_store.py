"""Every student's progress, kept in the class database (through ``mha_core.classroom`` storage) by student id:
a reload, a server restart, another replica or a cleared cache all find it again.

The student id is also the only key to that progress (and to a class membership), so it is a 128-bit random
token: not guessable, and never written where a projector shows it.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from mha_core.classroom.errors import DatabaseError
from mha_core.classroom.rows import ClassAnswer, Member, SaveOutcome
from mha_core.quiz.model import Grade
from mha_core.quiz.progress import Attempt, Progress

if TYPE_CHECKING:
    from mha_core.classroom.storage import Storage

ID_BYTES = 16  # 128 bits
_STUDENT_ID = re.compile(f"[0-9a-f]{{{2 * ID_BYTES}}}")
MAX_TRIES = 20  # compare-and-set rounds before giving up (only the same student's own tabs compete)
MAX_UNSENT_STUDENTS = 2000  # students with unsent answers a process keeps (the least recently touched go first)
MAX_UNSENT_EACH = 64        # unsent answers kept per student (the oldest go first)


def new_student_id() -> str:
    """A fresh id: 32 hex digits (128 random bits from ``secrets``)."""
    return secrets.token_hex(ID_BYTES)


def valid_student_id(value: object) -> bool:
    """Whether a value (e.g. from the URL) is a well-formed student id."""
    return isinstance(value, str) and _STUDENT_ID.fullmatch(value) is not None


def student_seed(student_id: str) -> int:
    """The seed that shuffles this student's options and draws their numbers."""
    return int(student_id, 16)


def encode(p: Progress) -> str:
    """A Progress as compact JSON (what the database stores)."""
    return json.dumps({
        "grades": [[g.question_id, g.correct, g.canonical, g.expected] for g in p.grades],
        "history": [[a.question_id, a.canonical, a.correct, a.round] for a in p.history],
        "round": p.round, "position": p.position,
    }, ensure_ascii=False, separators=(",", ":"))


def decode(text: str | None) -> Progress:
    """The Progress stored as ``text`` (a fresh one for nothing stored)."""
    if text is None:
        return Progress()
    d = json.loads(text)
    return Progress(grades=tuple(Grade(q, bool(c), str(can), str(exp)) for q, c, can, exp in d["grades"]),
                    history=tuple(Attempt(q, str(can), bool(c), int(r)) for q, can, c, r in d["history"]),
                    round=int(d["round"]), position=int(d["position"]))


class ProgressStore:
    """Progress per student id in the database: every change is read–change–compare-and-set, so two tabs of
    one student (or two replicas) never lose an update, and a change that raises stores nothing."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def get(self, student_id: str) -> Progress:
        """This student's progress (a fresh one if unknown)."""
        return decode(self._storage.load_progress(student_id)[1])

    def update(self, student_id: str, change: Callable[[Progress], Progress],
               answer: Callable[[Progress], ClassAnswer | None] | None = None) -> tuple[Progress, SaveOutcome]:
        """Apply ``change`` and store the result; ``answer`` (from the new progress) names the class answer to
        store in the same transaction. (new progress, outcome); LabError from ``change`` stores nothing."""
        for _ in range(MAX_TRIES):
            version, text = self._storage.load_progress(student_id)
            new = change(decode(text))
            outcome = self._storage.save_progress(student_id, version, encode(new), answer(new) if answer else None)
            if outcome is not SaveOutcome.CONFLICT:
                return new, outcome
        raise DatabaseError("class_db_busy")

    def record(self, student_id: str, g: Grade, member: Member | None = None) -> tuple[Progress, SaveOutcome]:
        """Add a grade (refused with LabError if the question is graded already) and, for a class member
        store the answer for the class in the same transaction."""
        def for_class(_: Progress) -> ClassAnswer | None:
            return None if member is None else ClassAnswer(member, g.question_id, g.canonical, g.correct)
        return self.update(student_id, lambda p: p.record(g), for_class)

    def reset(self, student_id: str) -> None:
        """Forget a student's progress (start over); answers already given to a class stay there."""
        self._storage.delete_progress(student_id)


class Unsent:
    """Answers the database did not take (busy or down), per student id, kept by this process until they are
    sent, so that a reload (a new session of the same student id, which the address carries) finds them and
    sends them again. Bounded (MAX_UNSENT_STUDENTS ids, MAX_UNSENT_EACH answers each, oldest dropped first) and
    thread-safe; a restart of the process, or a reload that another replica serves, does not find them (the
    student is told so). ``key`` names what an answer is for (a question, a vote round): a newer one replaces it."""

    def __init__(self, max_students: int = MAX_UNSENT_STUDENTS, max_each: int = MAX_UNSENT_EACH) -> None:
        self._max_students, self._max_each = max_students, max_each
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, OrderedDict[str, object]] = OrderedDict()

    def keep(self, student_id: str, key: str, answer: object) -> None:
        """Keep an answer that was not stored (replacing one kept for the same key)."""
        with self._lock:
            mine = self._kept.setdefault(student_id, OrderedDict())
            self._kept.move_to_end(student_id)
            mine.pop(key, None)
            mine[key] = answer
            while len(mine) > self._max_each:
                mine.popitem(last=False)
            while len(self._kept) > self._max_students:
                self._kept.popitem(last=False)

    def sent(self, student_id: str, key: str) -> None:
        """Forget an answer: it is stored now (or will never be: refused, or the student started over)."""
        with self._lock:
            mine = self._kept.get(student_id)
            if mine is not None:
                mine.pop(key, None)
                if not mine:
                    del self._kept[student_id]

    def of(self, student_id: str) -> dict[str, object]:
        """This student's unsent answers, oldest first (a copy)."""
        with self._lock:
            return dict(self._kept.get(student_id, {}))

    def forget(self, student_id: str, prefix: str = "") -> None:
        """Forget this student's unsent answers whose key starts with ``prefix`` (e.g. starting the quiz over)."""
        with self._lock:
            mine = self._kept.get(student_id)
            if mine is None:
                return
            for key in [k for k in mine if k.startswith(prefix)]:
                del mine[key]
            if not mine:
                del self._kept[student_id]

"""What the teacher's dashboard shows, computed from stored rows: per question, per student, common mistakes."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from mha_core.classroom.names import shown_name
from mha_core.classroom.storage import AnswerRow, StudentRow


@dataclass(frozen=True)
class QuestionStat:
    """Answers to one question and how many are right."""

    question_id: str
    answered: int
    right: int

    @property
    def share(self) -> float:
        """Share of right answers (0 when nobody answered)."""
        return self.right / self.answered if self.answered else 0.0


@dataclass(frozen=True)
class WrongAnswer:
    """A wrong answer (canonical form) and how many students gave it."""

    question_id: str
    canonical: str
    count: int


@dataclass(frozen=True)
class StudentScore:
    """One student's line in the score table."""

    student_id: int
    name: str
    answered: int
    right: int


@dataclass(frozen=True)
class Dashboard:
    """Everything the teacher sees about one class at one moment."""

    students: tuple[StudentScore, ...]
    questions: tuple[QuestionStat, ...]
    wrong: tuple[WrongAnswer, ...]

    @property
    def answers(self) -> int:
        """Stored answers in total (one per student and question)."""
        return sum(q.answered for q in self.questions)

    @property
    def right(self) -> int:
        """Right answers in total."""
        return sum(q.right for q in self.questions)


def dashboard(students: Sequence[StudentRow], rows: Sequence[AnswerRow], question_ids: Sequence[str],
              top_wrong: int = 10) -> Dashboard:
    """Aggregate a class: questions in bank order (unknown ids after), students in joining order (names as shown:
    bidirectional overrides neutralised)."""
    order = list(dict.fromkeys([*question_ids, *(r.question_id for r in rows)]))
    answered = Counter(r.question_id for r in rows)
    right = Counter(r.question_id for r in rows if r.correct)
    stats = tuple(QuestionStat(q, answered[q], right[q]) for q in order)
    wrong = Counter((r.question_id, r.canonical) for r in rows if not r.correct)
    rank = {q: i for i, q in enumerate(order)}
    common = sorted(wrong.items(), key=lambda kv: (-kv[1], rank[kv[0][0]], kv[0][1]))[:top_wrong]
    per_answered = Counter(r.student_id for r in rows)
    per_right = Counter(r.student_id for r in rows if r.correct)
    scores = tuple(StudentScore(s.id, shown_name(s.name), per_answered[s.id], per_right[s.id]) for s in students)
    return Dashboard(scores, stats, tuple(WrongAnswer(q, c, n) for (q, c), n in common))


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: object) -> object:
    """A spreadsheet-safe cell: text that a spreadsheet would run as a formula gets a leading apostrophe."""
    return f"'{value}" if isinstance(value, str) and value.startswith(_FORMULA_START) else value


def answers_csv(code: str, rows: Sequence[AnswerRow], titles: dict[str, str]) -> str:
    """The class's answers as CSV (UTF-8 with BOM so spreadsheets read Chinese names), one row per answer; names
    without bidirectional overrides, cells that could run as formulas defused."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["class", "student", "question_id", "question", "answer", "correct", "attempts", "answered_at"])
    for r in rows:
        title = titles.get(r.question_id, r.question_id)
        writer.writerow([_cell(v) for v in (code, shown_name(r.name), r.question_id, title, r.canonical,
                                            int(r.correct), r.attempts, r.answered_at.isoformat())])
    return "\ufeff" + out.getvalue()

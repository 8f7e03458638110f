"""What the teacher's dashboard shows, computed from stored rows: per question, per student, common mistakes."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mha_core.classroom.names import shown_name
from mha_core.classroom.rows import AnswerRow, StudentRow, VoteRow


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
class VoteStat:
    """One round of one class vote: how many voted and how many chose the right option."""

    vote_key: str
    round: int
    answered: int
    right: int

    @property
    def share(self) -> float:
        """Share of right votes (0 when nobody voted)."""
        return self.right / self.answered if self.answered else 0.0


@dataclass(frozen=True)
class Dashboard:
    """Everything the teacher sees about one class at one moment."""

    students: tuple[StudentScore, ...]
    questions: tuple[QuestionStat, ...]
    wrong: tuple[WrongAnswer, ...]
    votes: tuple[VoteStat, ...] = ()  # the live lesson's votes, per key and round

    @property
    def answers(self) -> int:
        """Stored answers in total (one per student and question)."""
        return sum(q.answered for q in self.questions)

    @property
    def right(self) -> int:
        """Right answers in total."""
        return sum(q.right for q in self.questions)


def vote_stats(votes: Sequence[VoteRow]) -> tuple[VoteStat, ...]:
    """Per vote key (in the order first voted) and round (1, then 2): votes cast and votes right."""
    order = {k: i for i, k in enumerate(dict.fromkeys(v.vote_key for v in votes))}
    answered = Counter((v.vote_key, v.round) for v in votes)
    right = Counter((v.vote_key, v.round) for v in votes if v.correct)
    return tuple(VoteStat(k, r, answered[k, r], right[k, r])
                 for k, r in sorted(answered, key=lambda kr: (order[kr[0]], kr[1])))


def dashboard(students: Sequence[StudentRow], rows: Sequence[AnswerRow], question_ids: Sequence[str],
              top_wrong: int = 10, votes: Sequence[VoteRow] = ()) -> Dashboard:
    """Aggregate a class: questions in bank order (unknown ids after), students in joining order (names as shown:
    bidirectional overrides neutralised), the live lesson's votes per key and round."""
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
    return Dashboard(scores, stats, tuple(WrongAnswer(q, c, n) for (q, c), n in common), vote_stats(votes))


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: object) -> object:
    """A spreadsheet-safe cell: text that a spreadsheet would run as a formula gets a leading apostrophe."""
    return f"'{value}" if isinstance(value, str) and value.startswith(_FORMULA_START) else value


def answers_csv(code: str, rows: Sequence[AnswerRow], titles: dict[str, str], votes: Sequence[VoteRow] = (),
                ids: Mapping[int, str] | None = None) -> str:
    """The class's answers as CSV (UTF-8 with BOM so spreadsheets read Chinese names), one row per answer, then one
    per vote (kind "vote": the vote key as question_id, the option index as answer, its round); names without
    bidirectional overrides, cells that could run as formulas defused. With ``ids`` (an anonymous class: student
    row id -> opaque id) the student column holds the opaque id, never a name."""

    def who(r: AnswerRow | VoteRow) -> str:
        return ids.get(r.student_id, "") if ids is not None else shown_name(r.name)

    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["class", "student", "question_id", "question", "answer", "correct", "attempts", "answered_at",
                     "kind", "round"])
    for r in rows:
        title = titles.get(r.question_id, r.question_id)
        writer.writerow([_cell(v) for v in (code, who(r), r.question_id, title, r.canonical,
                                            int(r.correct), r.attempts, r.answered_at.isoformat(), "answer", "")])
    for v in votes:
        title = titles.get(v.vote_key, v.vote_key)
        writer.writerow([_cell(x) for x in (code, who(v), v.vote_key, title, v.choice, int(v.correct),
                                            "", v.voted_at.isoformat(), "vote", v.round)])
    return "\ufeff" + out.getvalue()

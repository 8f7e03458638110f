"""A student's progress through the quiz as an immutable value: record, retry, score, summary."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

from mha_core.errors import LabError
from mha_core.quiz.model import Grade, Kind, Question


@dataclass(frozen=True)
class Attempt:
    """One graded answer, kept even after a retry (what a class mode would store per student)."""

    question_id: str
    canonical: str
    correct: bool
    round: int


@dataclass(frozen=True)
class Score:
    """Right answers, answered questions and the bank size."""

    right: int
    answered: int
    total: int

    @property
    def complete(self) -> bool:
        """Every question has a grade."""
        return self.answered == self.total


@dataclass(frozen=True)
class Summary:
    """The end of a round: what was right, and what to revisit grouped by the page that teaches it."""

    right: tuple[Question, ...]
    wrong: tuple[Question, ...]
    revisit: tuple[tuple[str, tuple[Question, ...]], ...]  # (page key, its wrong questions), bank order


@dataclass(frozen=True)
class Progress:
    """The current grade per question, every attempt so far, the retry round and the position shown
    one-at-a-time. Methods return a new Progress."""

    grades: tuple[Grade, ...] = ()
    history: tuple[Attempt, ...] = ()
    round: int = 1
    position: int = 0

    def grade_of(self, question_id: str) -> Grade | None:
        """This question's current grade, or None while it is open."""
        return next((g for g in self.grades if g.question_id == question_id), None)

    def record(self, g: Grade) -> Progress:
        """Add a grade; an answer to a question already graded is refused (LabError) and costs nothing."""
        if self.grade_of(g.question_id) is not None:
            raise LabError("quiz_already_graded")
        attempt = Attempt(g.question_id, g.canonical, g.correct, self.round)
        return replace(self, grades=(*self.grades, g), history=(*self.history, attempt))

    def retry_wrong(self, questions: Sequence[Question]) -> Progress:
        """Reopen the wrong questions for a new round and show the first of them."""
        wrong = {g.question_id for g in self.grades if not g.correct}
        first = next((i for i, q in enumerate(questions) if q.id in wrong), 0)
        return replace(self, grades=tuple(g for g in self.grades if g.correct), round=self.round + 1,
                       position=first)

    def moved(self, position: int, count: int) -> Progress:
        """Show question ``position`` (clamped to a bank of ``count`` questions)."""
        return replace(self, position=max(0, min(position, count - 1)))

    def score(self, questions: Sequence[Question]) -> Score:
        """The running score over this bank."""
        graded = [g for q in questions if (g := self.grade_of(q.id)) is not None]
        return Score(right=sum(g.correct for g in graded), answered=len(graded), total=len(questions))

    def summary(self, questions: Sequence[Question]) -> Summary:
        """Right and wrong questions, and the pages to revisit (in the order they first appear)."""
        right = tuple(q for q in questions if (g := self.grade_of(q.id)) is not None and g.correct)
        wrong = tuple(q for q in questions if (g := self.grade_of(q.id)) is not None and not g.correct)
        pages = dict.fromkeys(q.teaches for q in wrong)
        return Summary(right, wrong, tuple((p, tuple(q for q in wrong if q.teaches == p)) for p in pages))


def presented_order(question: Question, seed: int) -> tuple[str, ...]:
    """Option ids in the order this student sees them: shuffled per (seed, question), stable across
    reruns and languages. Ordering items never start out already in the right order."""
    ids = list(question.option_ids)
    rng = random.Random(f"order/{seed}/{question.id}")
    rng.shuffle(ids)
    if question.kind is Kind.ORDERING and tuple(ids) == question.correct and len(ids) > 1:
        ids = ids[1:] + ids[:1]
    return tuple(ids)

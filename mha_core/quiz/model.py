"""The quiz's typed objects: questions, options, answers and grades (no Streamlit, no I/O)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from types import MappingProxyType


class Kind(StrEnum):
    """What a question asks for; the value is what the bank files write."""

    SINGLE = "single"        # answer: one option id
    MULTIPLE = "multiple"    # answer: a collection of option ids
    NUMERIC = "numeric"      # answer: the text the student typed
    ORDERING = "ordering"    # answer: a sequence of item ids, first to last
    TEXT = "text"            # answer: SelfMark (free text, marked by the student after the model answer)
    SHORT = "short"          # answer: the word or symbol typed, matched against the accepted forms


@dataclass(frozen=True)
class Option:
    """One choice (or one item to order), identified by a stable id, never by its text or position."""

    id: str
    text: str


@dataclass(frozen=True)
class Question:
    """One question in one language. ``correct`` holds option ids (single/multiple), the item order
    (ordering) or a short answer's id (its language-free form, e.g. "W^O"); ``value`` is a numeric question's
    answer in base units, computed at load time, with its ``tolerance`` and the documented ``wrong`` answers
    (misconception → value); ``accepted`` are a short answer's forms in this language, the
    one shown as the right answer first."""

    id: str
    kind: Kind
    lang: str
    title: str          # a few words, for the summary and a teacher's dashboard
    prompt: str         # markdown, as the app shows it (label, stem, the app's instruction: mha_core.quiz.media)
    explanation: str    # markdown, shown after grading
    section: str        # the part of the knowledge point it checks (assets/quiz/bank.toml)
    teaches: str        # key of the page that teaches the point (mha_core.ui.nav)
    options: tuple[Option, ...] = ()
    correct: tuple[str, ...] = ()
    value: Fraction | None = None
    unit: str = ""
    tolerance: Fraction = Fraction(0)  # a numeric answer's band in base units (numbers.answer_tolerance)
    wrong: Mapping[str, Fraction] = field(default_factory=lambda: MappingProxyType({}))  # documented wrong answers
    model_answer: str = ""
    accepted: tuple[str, ...] = ()
    params: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    stem: str = ""      # the question alone: no label, no instruction (printed and exported: media.prompt_for)
    label: str = ""     # the app's name for a self-test question ("Self-test 2"), shown in the app only

    def option(self, option_id: str) -> Option:
        """The option with this id (KeyError if there is none)."""
        for opt in self.options:
            if opt.id == option_id:
                return opt
        raise KeyError(option_id)

    @property
    def option_ids(self) -> tuple[str, ...]:
        """Option ids in bank order."""
        return tuple(o.id for o in self.options)


@dataclass(frozen=True)
class SelfMark:
    """A free-text answer and the student's own verdict after reading the model answer."""

    text: str
    correct: bool


@dataclass(frozen=True)
class Grade:
    """The grader's verdict: truthy when right. ``canonical`` is the answer normalised for storage and
    aggregation (same answer → same string, in any language); ``expected`` is the right one, same form."""

    question_id: str
    correct: bool
    canonical: str
    expected: str

    def __bool__(self) -> bool:
        return self.correct

"""The one grader: every answer, from the page or a future class mode, goes through ``grade``."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from fractions import Fraction
from types import MappingProxyType

from mha_core.errors import LabError
from mha_core.quiz.model import Grade, Kind, Question, SelfMark
from mha_core.quiz.numbers import canonical_number, format_value, matches, parse_number
from mha_core.quiz.short import clean, match, normalise

SELF_RIGHT = "self:right"
SELF_WRONG = "self:wrong"


def _empty() -> LabError:
    return LabError("quiz_empty")


def _known(q: Question, ids: Collection[str]) -> None:
    unknown = [i for i in ids if i not in q.option_ids]
    if unknown:
        raise LabError("quiz_unknown_option", option=unknown[0])


def _single(q: Question, answer: object) -> tuple[bool, str, str]:
    if answer is None or answer == "":
        raise _empty()
    if not isinstance(answer, str):
        raise TypeError("a single-choice answer is one option id (str)")
    _known(q, [answer])
    return answer == q.correct[0], answer, q.correct[0]


def _multiple(q: Question, answer: object) -> tuple[bool, str, str]:
    if answer is None or isinstance(answer, str) or not isinstance(answer, Collection):
        raise TypeError("a multiple-choice answer is a collection of option ids")
    chosen = set(answer)
    if not chosen:
        raise _empty()
    _known(q, chosen)
    return chosen == set(q.correct), ",".join(sorted(chosen)), ",".join(sorted(q.correct))


def _ordering(q: Question, answer: object) -> tuple[bool, str, str]:
    if answer is None or isinstance(answer, str) or not isinstance(answer, Sequence):
        raise TypeError("an ordering answer is a sequence of item ids, first to last")
    if not answer:
        raise _empty()
    _known(q, answer)
    if sorted(answer) != sorted(q.option_ids):
        raise LabError("quiz_order_incomplete", n=len(q.options))
    return tuple(answer) == q.correct, ">".join(answer), ">".join(q.correct)


def _numeric(q: Question, answer: object) -> tuple[bool, str, str]:
    if answer is None:
        raise _empty()
    if not isinstance(answer, str):
        raise TypeError("a numeric answer is the text the student typed")
    assert q.value is not None
    parsed = parse_number(answer, q.unit)
    return matches(parsed, q.value, q.tolerance), canonical_number(parsed.value), canonical_number(q.value)


def _text(q: Question, answer: object) -> tuple[bool, str, str]:
    if not isinstance(answer, SelfMark):
        raise TypeError("a free-text answer is a SelfMark(text, correct)")
    if not answer.text.strip():
        raise _empty()
    return answer.correct, SELF_RIGHT if answer.correct else SELF_WRONG, SELF_RIGHT


def _short(q: Question, answer: object) -> tuple[bool, str, str]:
    if answer is None:
        raise _empty()
    if not isinstance(answer, str):
        raise TypeError("a short answer is the text the student typed")
    if not normalise(answer):  # blanks or marks only ("  ", "_", "。"): nothing was answered
        raise _empty()
    typed, right = clean(answer), match(answer, q.accepted)
    return right, q.correct[0] if right else typed, q.correct[0]


_GRADERS = MappingProxyType({Kind.SINGLE: _single, Kind.MULTIPLE: _multiple, Kind.ORDERING: _ordering,
                             Kind.NUMERIC: _numeric, Kind.TEXT: _text, Kind.SHORT: _short})


def grade(question: Question, answer: object) -> Grade:
    """Whether ``answer`` is right, as a Grade (truthy when right) with the answer's canonical form.

    Answers by kind: single → option id; multiple → collection of option ids; numeric → the typed
    string (separators, exponents, full-width digits, K/M/G or KiB/MiB/GiB as the question states; a whole-number
    answer only exactly, a rounded "4.19M" is refused with quiz_exact);
    ordering → sequence of item ids, first to last; text → SelfMark(text, correct), the student's own
    verdict after reading the model answer; short → the typed string, right when it matches an accepted form
    after mha_core.quiz.short.normalise (case, width, blanks, sub/superscript marks). Canonical forms: option
    id; sorted ids joined by ","; the number in base units ("1048576"); ids joined by ">"; "self:right" /
    "self:wrong"; a short answer's id when right (the same in every language), else the text as typed
    (mha_core.quiz.short.clean: blanks collapsed, capped).
    Bad input raises LabError (quiz_empty, quiz_not_number, quiz_bad_unit, quiz_exact, quiz_unknown_option,
    quiz_order_incomplete) and grades nothing; a wrong Python type raises TypeError.
    """
    correct, canonical, expected = _GRADERS[question.kind](question, answer)
    return Grade(question_id=question.id, correct=correct, canonical=canonical, expected=expected)


def describe(question: Question, canonical: str) -> str:
    """A canonical answer written for the student: option texts, the number in the stated unit, or a short
    answer's first accepted form (a wrong one as typed: plain text, for the caller to escape in markdown).
    Free-text answers have no text here (the page says "marked right/wrong")."""
    if question.kind is Kind.SINGLE:
        return question.option(canonical).text
    if question.kind is Kind.MULTIPLE:
        return "; ".join(question.option(i).text for i in canonical.split(","))
    if question.kind is Kind.ORDERING:
        return " → ".join(question.option(i).text for i in canonical.split(">"))
    if question.kind is Kind.NUMERIC:
        return format_value(Fraction(canonical), question.unit)
    if question.kind is Kind.SHORT:
        return question.accepted[0] if canonical == question.correct[0] else canonical
    return ""

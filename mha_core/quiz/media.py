"""A question's text for the medium it is shown in: the app, a printed handout, or Moodle.

The bank's ``prompt`` is the stem: the question alone, without the self-test label and without any instruction on
how to answer, because each medium gives its own. The app shows the label ("Self-test 2") and the instructions its
widgets do not already give; a printed handout prints its own line per kind ("Write the letters in order") under the
stem; Moodle adds what its own interface does not say (how to use the position menus, to type the full number).
"""

from __future__ import annotations

from enum import StrEnum

from mha_core.i18n import translate
from mha_core.quiz.model import Kind, Question


class Medium(StrEnum):
    """Where a question is shown."""

    APP = "app"
    PRINT = "print"
    MOODLE = "moodle"


def instruction_key(medium: Medium, kind: Kind, unit: str = "") -> str | None:
    """The catalog key of the instruction this medium adds to a question of this kind, or None.

    The app's widgets already say how to answer a multiple choice (quiz.hint_multiple), an ordering
    (quiz.order_label) and a number (quiz.hint_<unit>); only a free text needs its length. Moodle says "Select one"
    for choices itself, but not how its position menus map to an order, nor that a plain count takes no K or M.
    """
    if medium is Medium.APP:
        return "quiz.instruction_text" if kind is Kind.TEXT else None
    if medium is Medium.MOODLE:
        if kind is Kind.NUMERIC and unit == "count":
            return "moodle.count_instruction"
        return {Kind.TEXT: "moodle.text_instruction", Kind.ORDERING: "moodle.order_instruction"}.get(kind)
    return None  # print: the handout prints its own line per kind (handout.kind_<kind>)


def compose(lang: str, medium: Medium, kind: Kind, stem: str, label: str = "", unit: str = "") -> str:
    """The markdown of a question's text in one medium: the label in the app only, then the stem, then the
    medium's instruction (in the app on the same line, in Moodle as its own paragraph)."""
    text = stem
    key = instruction_key(medium, kind, unit)
    if medium is Medium.APP:
        if key:
            text = translate(lang, "quiz.with_instruction", prompt=text, instruction=translate(lang, key))
        return translate(lang, "quiz.labelled", label=label, prompt=text) if label else text
    if key:
        text = f"{text}\n\n{translate(lang, key)}"
    return text


def prompt_for(q: Question, medium: Medium) -> str:
    """The text of ``q`` as ``medium`` shows it (the app's is ``q.prompt``)."""
    return compose(q.lang, medium, q.kind, q.stem, q.label, q.unit)

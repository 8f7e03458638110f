"""The quiz bank as Moodle XML, so a teacher can import it into the learning management system they already use.

``moodle_xml(lang, seed, variants)`` is the stable contract (the CLI ``python -m mha_core.quiz export`` and the
teacher's download call it). Every question of the bank, in one language, grouped in one category per bank section
(``$course$/top/MHA Lab/<section name>``), each with its bank id as ``<idnumber>``. A question whose numbers are
drawn comes in ``variants`` versions (seeds seed, seed + 1, …, no two with the same numbers) in a sub-category of
its own (``…/<section name>/<title>: variants``, whose info tells the teacher to add "a random question" from it),
so that a class gets per-student numbers as in the app; the XML writes no random question itself: since Moodle
4 a quiz's random pick is a setting of the quiz (a question set reference), and recent versions have dropped the
old "random" question type, so a file that held one would not import everywhere. Texts
are mha_core.quiz.media's Moodle form: no app label, Moodle's own instructions. How each kind maps (the rules are
those of Moodle's importer, question/format/xml/format.php, and of lib/questionlib.php for the grades):

- single → ``multichoice`` (single): the right option 100 %, the others 0.
- multiple → ``multichoice`` (not single): each right option 100/k %, each wrong one −100/w %, so that ticking
  every box scores 0. Moodle accepts only its list of grades (p/q for q ≤ 6, p/10, 1/q for q ≤ 10, 1/20): an
  answer key that needs another share is refused here (``ValueError``), never rounded.
- numeric → ``numerical``: the text with the numbers drawn for ``seed``; the answer computed by mha_core.counts,
  written in the question's stated unit (MiB, GiB, ×, or a plain count); the other units the app accepts for it
  are Moodle ``<units>`` with their multipliers (optional for the student, not graded). The tolerance is the app's
  band (mha_core.quiz.numbers.answer_tolerance): 0 for an answer that is a whole number in its unit (every count,
  byte size and ratio of the bank), so "4.19M" cannot pass for 4,194,304 or 4,198,400; only a non-whole answer gets
  a band, narrower than the distance to the nearest documented wrong answer. A plain count's text says to type
  the full number (no K or M: Moodle reads none).
- ordering → ``matching`` (position → item): the matching type is in every Moodle version, whereas an ordering
  type is in core only in recent ones and drag-and-drop into text (``ddwtos``) needs the items written into a
  sentence. Each position ("Position 1" = first) gets a menu of all the items. Moodle gives partial credit per
  position; the app grades the whole order.
- short → ``shortanswer``: every form the bank accepts in the exported language is an answer worth 100 %, case
  ignored (``usecase`` 0). Moodle compares the trimmed text with each form and reads ``*`` as a wildcard, but it
  does not fold width or drop the marks in W^O / W_O as the app does (mha_core.quiz.short), so the bank lists the
  common spellings themselves; forms that differ only in case are written once, and a literal ``*`` is ``\\*``.
- text → ``essay`` (each free-text item asks for a sentence or an explanation, which string matching cannot
  mark): marked by the teacher, with the model answer as the grader's information and in the feedback.

Texts are the bank's markdown rendered to HTML with CommonMark (as the app renders them). The XML is built with
ElementTree, which escapes the HTML as character data; that is the same XML as the CDATA sections Moodle's own
export writes (any XML parser, Moodle's included, reads both to the same text).
"""

from __future__ import annotations

import functools
import html
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from fractions import Fraction
from types import MappingProxyType

from markdown_it import MarkdownIt

from mha_core.errors import LabError
from mha_core.i18n import LANGS, translate
from mha_core.quiz.bank import load_questions, sections, structure
from mha_core.quiz.draws import draw
from mha_core.quiz.media import Medium, prompt_for
from mha_core.quiz.model import Kind, Question
from mha_core.quiz.numbers import UNITS, canonical_number

FORMATS = ("moodle",)
CATEGORY_ROOT = ("$course$", "top", "MHA Lab")
# Units a student may type in Moodle, the question's stated unit first (Moodle's base unit, multiplier 1). Their
# multipliers come from the app's own parser table (UNITS); a plain count takes no unit in Moodle.
MOODLE_UNITS = MappingProxyType({"count": (), "ratio": ("×", "x", "倍"), "MiB": ("MiB", "KiB", "GiB"),
                                 "GiB": ("GiB", "MiB")})
ESSAY_LINES = 5  # the free-text items ask for a sentence or two
XML_DECLARATION = b'<?xml version="1.0" encoding="UTF-8"?>\n'  # as Moodle's own export writes it
# Variants per calculation question: a class of 30 drawing one at random each meets the same numbers in pairs only
# (every recipe has more distinct draws than this). VARIANT_SEARCH bounds the seeds tried per variant wanted.
DEFAULT_VARIANTS, MAX_VARIANTS, VARIANT_SEARCH = 20, 100, 50


def _moodle_grades() -> frozenset[Fraction]:
    """The grades Moodle's importer accepts (question_bank::fraction_options_full): p/q for q ≤ 6, p/10,
    1/q for q ≤ 10 and 1/20, each also negative."""
    positive = {Fraction(p, q) for q in range(1, 7) for p in range(q + 1)}
    positive |= {Fraction(p, 10) for p in range(11)} | {Fraction(1, q) for q in range(1, 11)} | {Fraction(1, 20)}
    return frozenset(positive | {-g for g in positive})


MOODLE_GRADES = _moodle_grades()


def grade_text(share: Fraction) -> str:
    """A grade (share of the mark, −1..1) as the percentage Moodle writes: '100', '33.33333', '-50'."""
    if share not in MOODLE_GRADES:
        raise ValueError(f"Moodle has no grade {share} (allowed: p/q for q ≤ 6, p/10, 1/q for q ≤ 10, 1/20)")
    text = f"{float(share * 100):.5f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def category_path(names: Sequence[str]) -> str:
    """Names joined as Moodle's assemble_category_path does: a '/' inside a name is written '//'."""
    escaped = []
    for name in names:
        part = name.replace("/", "//")
        part = " " + part if part.startswith("/") else part
        escaped.append(part + " " if part.endswith("/") else part)
    return "/".join(escaped)


@functools.cache
def _markdown() -> MarkdownIt:
    """CommonMark as the app renders it (tables, strikethrough); raw HTML in a text stays text."""
    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def as_html(markdown: str) -> str:
    """A block of the bank's markdown as HTML."""
    return _markdown().render(markdown).strip()


def as_plain(markdown: str) -> str:
    """A line of the bank's markdown as plain text (Moodle's matching answers are plain text)."""
    return html.unescape(re.sub(r"<[^>]+>", "", _markdown().renderInline(markdown))).strip()


def _decimal(value: Fraction) -> str:
    """A number as Moodle reads it (a finite decimal); anything else is a bank mistake."""
    text = canonical_number(value)
    if "/" in text:
        raise ValueError(f"{value} is not a finite decimal")
    return text


def numeric_answer(q: Question) -> tuple[Fraction, Fraction]:
    """(the answer in the question's stated unit, Moodle's absolute tolerance around it): the app's band
    (numbers.answer_tolerance), 0 for every whole-number answer."""
    assert q.value is not None
    scale = UNITS[q.unit].scale
    return q.value / scale, q.tolerance / scale


def moodle_units(unit: str) -> tuple[tuple[str, Fraction], ...]:
    """(name, multiplier) for each unit Moodle accepts: answer in the stated unit × multiplier = value in that one."""
    spec = UNITS[unit]
    return tuple((name, Fraction(spec.scale, spec.suffixes[name.casefold()])) for name in MOODLE_UNITS[unit])


def draws(question_id: str) -> bool:
    """Whether a question's numbers are drawn per seed (a numeric question without fixed numbers)."""
    entry = next(e for e in structure()[1] if e.id == question_id)
    return entry.kind is Kind.NUMERIC and entry.fixed is None


def idnumber(q: Question, seed: int) -> str:
    """Stable across runs and languages: the bank id, plus the seed where the numbers depend on it."""
    return f"mha-{q.id}-seed{seed}" if draws(q.id) else f"mha-{q.id}"


# --- building the elements ---

def _sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    el = ET.SubElement(parent, tag, attrs)
    if text is not None:
        el.text = text
    return el


def _text(parent: ET.Element, tag: str, content: str, fmt: str = "html") -> ET.Element:
    """``<tag format=…><text>content</text></tag>``: Moodle's form of every text field."""
    el = _sub(parent, tag, format=fmt)
    _sub(el, "text", content)
    return el


def _header(q: Question, qtype: str, seed: int) -> ET.Element:
    """The parts every question has: name, text (media.prompt_for Moodle), general feedback (the bank's
    explanation), mark, id."""
    el = ET.Element("question", type=qtype)
    _sub(_sub(el, "name"), "text", q.title)
    _text(el, "questiontext", as_html(prompt_for(q, Medium.MOODLE)))
    _text(el, "generalfeedback", as_html(q.explanation))
    _sub(el, "defaultgrade", "1")
    _sub(el, "penalty", "0.3333333")
    _sub(el, "hidden", "0")
    _sub(el, "idnumber", idnumber(q, seed))
    return el


def _answer(parent: ET.Element, share: Fraction, content: str, fmt: str = "html") -> ET.Element:
    el = _text(parent, "answer", content, fmt)
    el.set("fraction", grade_text(share))
    return el


def _choice(q: Question, seed: int) -> ET.Element:
    el = _header(q, "multichoice", seed)
    single = q.kind is Kind.SINGLE
    _sub(el, "single", "true" if single else "false")
    _sub(el, "shuffleanswers", "true")  # the bank often lists the right option first
    _sub(el, "answernumbering", "abc")
    right = set(q.correct)
    n_wrong = len(q.options) - len(right)
    for opt in q.options:
        if opt.id in right:
            share = Fraction(1, len(right))
        else:
            share = Fraction(0) if single else Fraction(-1, n_wrong)
        _answer(el, share, _markdown().renderInline(opt.text))
    return el


def _numerical(q: Question, seed: int) -> ET.Element:
    el = _header(q, "numerical", seed)
    value, tolerance = numeric_answer(q)
    answer = _answer(el, Fraction(1), _decimal(value), fmt="moodle_auto_format")
    _sub(answer, "tolerance", _decimal(tolerance))
    units = moodle_units(q.unit)
    if units:
        box = _sub(el, "units")
        for name, multiplier in units:
            unit = _sub(box, "unit")
            _sub(unit, "multiplier", _decimal(multiplier))
            _sub(unit, "unit_name", name)
    _sub(el, "unitgradingtype", "0")  # units optional: a unit, if typed, converts the number; it costs nothing
    _sub(el, "unitpenalty", "0.1000000")
    _sub(el, "showunits", "0" if units else "3")  # 0: typed in the answer box; 3: no units
    _sub(el, "unitsleft", "0")
    return el


def _matching(q: Question, seed: int) -> ET.Element:
    el = _header(q, "matching", seed)
    _sub(el, "shuffleanswers", "true")
    for position, item in enumerate(q.correct, start=1):
        sub = _text(el, "subquestion", as_html(translate(q.lang, "moodle.position", n=position)))
        _sub(_sub(sub, "answer"), "text", as_plain(q.option(item).text))
    return el


def shortanswer_forms(q: Question) -> tuple[str, ...]:
    """A short answer's accepted forms as Moodle answers: bank order, one per case-insensitive spelling, ``*``
    escaped (Moodle's wildcard)."""
    seen: dict[str, str] = {}
    for form in q.accepted:
        seen.setdefault(form.casefold(), form.replace("*", "\\*"))
    return tuple(seen.values())


def _shortanswer(q: Question, seed: int) -> ET.Element:
    el = _header(q, "shortanswer", seed)
    _sub(el, "usecase", "0")  # case-insensitive, like the app
    for form in shortanswer_forms(q):
        _answer(el, Fraction(1), form, fmt="moodle_auto_format")
    return el


def _essay(q: Question, seed: int) -> ET.Element:
    el = _header(q, "essay", seed)
    model = as_html(translate(q.lang, "quiz.model_answer", text=q.model_answer))
    el.find("generalfeedback/text").text += "\n" + model  # type: ignore[union-attr]  # _header wrote it
    _sub(el, "responseformat", "editor")
    _sub(el, "responserequired", "1")
    _sub(el, "responsefieldlines", str(ESSAY_LINES))
    _sub(el, "attachments", "0")
    _sub(el, "attachmentsrequired", "0")
    _text(el, "graderinfo", as_html(q.model_answer))
    return el


_BUILDERS = MappingProxyType({Kind.SINGLE: _choice, Kind.MULTIPLE: _choice, Kind.NUMERIC: _numerical,
                              Kind.ORDERING: _matching, Kind.TEXT: _essay, Kind.SHORT: _shortanswer})


def _category(lang: str, names: Sequence[str], info: str = "") -> ET.Element:
    """A category switch: the questions after it go to ``$course$/top/MHA Lab/<names…>``, created if missing."""
    el = ET.Element("question", type="category")
    _sub(_sub(el, "category"), "text", category_path((*CATEGORY_ROOT, *names)))
    if info:
        _text(el, "info", as_html(info))
    return el


def _grouped(questions: Iterable[Question]) -> list[tuple[str, list[Question]]]:
    """Questions by section, sections in teaching order, bank order inside each (empty sections left out)."""
    by_section: dict[str, list[Question]] = {s: [] for s in sections()}
    for q in questions:
        by_section[q.section].append(q)
    return [(s, qs) for s, qs in by_section.items() if qs]


def variant_seeds(question_id: str, seed: int, variants: int) -> tuple[int, ...]:
    """The seeds of a drawn question's variants: seed, seed + 1, … keeping only those that draw numbers not drawn
    before, until there are ``variants`` of them (fewer if the recipe has fewer distinct draws within
    VARIANT_SEARCH × variants seeds)."""
    entry = next(e for e in structure()[1] if e.id == question_id)
    found: dict[tuple, int] = {}
    for s in range(seed, seed + VARIANT_SEARCH * variants):
        params, _ = draw(entry.recipe, s, entry.id, entry.fixed)
        found.setdefault(tuple(sorted(params.items())), s)
        if len(found) == variants:
            break
    return tuple(found.values())


def _variant(lang: str, question_id: str, seed: int, k: int, n: int) -> ET.Element:
    """Variant k of n: the question drawn for ``seed``, named so that a teacher tells the variants apart."""
    q = next(x for x in load_questions(lang, seed) if x.id == question_id)
    el = _numerical(q, seed)
    el.find("name/text").text = translate(lang, "moodle.variant_name", title=q.title, k=k, n=n)  # type: ignore[union-attr]
    return el


def _quiz(lang: str, seed: int, variants: int) -> ET.Element:
    """The <quiz> element: per section its category and questions; with variants > 1, each drawn question as a
    sub-category of its variants, for a quiz's "random question from this category"."""
    quiz = ET.Element("quiz")
    for section, questions in _grouped(load_questions(lang, seed)):
        name = translate(lang, f"quiz.sections.{section}")
        quiz.append(_category(lang, (name,)))
        drawn = [q for q in questions if draws(q.id)] if variants > 1 else []
        for q in questions:
            if q not in drawn:
                quiz.append(_BUILDERS[q.kind](q, seed))
        for q in drawn:
            seeds = variant_seeds(q.id, seed, variants)
            folder = translate(lang, "moodle.variants_category", title=q.title)
            quiz.append(_category(lang, (name, folder), translate(lang, "moodle.variants_info", n=len(seeds))))
            quiz.extend(_variant(lang, q.id, s, k, len(seeds)) for k, s in enumerate(seeds, start=1))
    return quiz


def check_variants(variants: object) -> int:
    """A number of variants as asked for (an int or its text): 1 to MAX_VARIANTS, else LabError("export_variants")."""
    text = str(variants).strip()
    if isinstance(variants, bool) or not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= MAX_VARIANTS:
        raise LabError("export_variants", got=variants, max=MAX_VARIANTS)
    return int(text)


def question_count(lang: str, seed: int = 0, variants: int = DEFAULT_VARIANTS) -> int:
    """How many questions (not categories) moodle_xml writes for these arguments."""
    return sum(el.get("type") != "category" for el in _quiz(lang, int(seed), check_variants(variants)))


def moodle_xml(lang: str, seed: int = 0, variants: int = DEFAULT_VARIANTS) -> bytes:
    """Every question of the bank in ``lang`` as a Moodle XML file (UTF-8); each calculation question in
    ``variants`` versions drawn from the seeds ``seed``, ``seed`` + 1, … (variant_seeds), one category each, so that
    a quiz's random question gives each student other numbers (with ``variants`` = 1: the numbers of ``seed``,
    in the section's category like every other question).

    The same arguments give the same bytes. An unknown language raises LabError("export_lang"), a number of
    variants outside 1..MAX_VARIANTS LabError("export_variants").
    """
    if lang not in LANGS:
        raise LabError("export_lang", got=lang, langs=", ".join(LANGS))
    quiz = _quiz(lang, int(seed), check_variants(variants))
    ET.indent(quiz, space="  ")
    return XML_DECLARATION + ET.tostring(quiz, encoding="unicode").encode("utf-8") + b"\n"

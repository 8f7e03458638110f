"""The pre/post concept test: items in two isomorphic forms (assets/quiz/concept.toml, texts concept_<lang>.toml),
every distractor tied to a named misconception (assets/quiz/misconceptions.toml, with the sources of the fact it
contradicts), and the form a student takes for each test, so that no student meets the same form twice.

Numbers are computed, never typed: an item with a recipe takes its right option and distractors from
mha_core.quiz.draws (mha_core.counts), the others their derived numbers from :func:`fields`. Questions are the
quiz's own ``Question`` objects (kind single), so grading, option shuffling and rendering are the quiz's.
"""

from __future__ import annotations

import functools
import hashlib
import math
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType

from mha_core.i18n import LANGS, cite_style
from mha_core.quiz.bank import BANK_DIR, BankError, sections
from mha_core.quiz.draws import RECIPES, Params, wrong_answers
from mha_core.quiz.media import Medium, compose
from mha_core.quiz.model import Kind, Option, Question
from mha_core.quiz.numbers import UNITS, format_value
from mha_core.sources import load_sources, render_citations

FORMS = ("a", "b")
TESTS = ("pre", "post")
RIGHT = "right"  # a recipe item's right option id


@dataclass(frozen=True)
class Misconception:
    """A misconception a distractor stands for: its statement per language, sources, and the page confronting it."""

    key: str
    text: Mapping[str, str]
    sources: tuple[str, ...]
    page: str = ""


@dataclass(frozen=True)
class ConceptItem:
    """One item's language-neutral part: options (right one first), its two forms' numbers, distractor →
    misconception."""

    id: str
    section: str
    options: tuple[str, ...]
    forms: Mapping[str, Params]
    misconceptions: Mapping[str, str]
    recipe: str = ""
    unit: str = ""

    @property
    def correct(self) -> str:
        """The right option's id (the first in the data file)."""
        return self.options[0]


def _d_head(p: Params) -> int:
    """d_model / h through the generator's recipe (mha_core.counts validates the shape)."""
    value = RECIPES["d_head"].value(p)
    if value.denominator != 1:
        raise BankError(f"d_model {p['d_model']} is not divisible by h {p['h']}")
    return int(value)


def _sqrt(x: int) -> str:
    """'= 8' for a perfect square, '≈ 27.7' otherwise."""
    r = math.isqrt(x)
    return f"= {r}" if r * r == x else f"≈ {math.sqrt(x):.1f}"


def fields(p: Params) -> dict[str, object]:
    """A form's numbers and those computed from them for the texts ({d_head}, {hd}, {sqrt_dhead}, …)."""
    out: dict[str, object] = dict(p)
    if "d_model" in p and "h" in p:
        d_head = _d_head(p)
        out |= {"d_head": d_head, "hd": p["h"] * d_head, "h_dmodel": p["h"] * p["d_model"],
                "sqrt_dhead": _sqrt(d_head), "sqrt_dmodel": _sqrt(p["d_model"]), "sqrt_h": _sqrt(p["h"])}
        if "n" in p:
            out["hn"] = p["h"] * p["n"]
    return out


# Distractors the quiz's recipes do not list, computed the same way (mha_core.counts through the recipes).
EXTRA_WRONG: Mapping[str, Callable[[Params], Fraction]] = MappingProxyType({
    "divided_by_h": lambda p: RECIPES["mha_params"].value(p) / p["h"],            # "splitting shrinks W h-fold"
    "heads_full_width": lambda p: RECIPES["wo_params"].value(p) * p["h"],         # W^O reads h · d_model inputs
})


def option_values(item: ConceptItem, form: str) -> Mapping[str, Fraction]:
    """A recipe item's options as numbers in base units for one form (right one under its id)."""
    p = item.forms[form]
    documented = wrong_answers(item.recipe, p)
    values = {}
    for o in item.options:
        if o == RIGHT:
            values[o] = RECIPES[item.recipe].value(p)
        elif o in EXTRA_WRONG:
            values[o] = EXTRA_WRONG[o](p)
        else:
            values[o] = documented[o]
    return MappingProxyType(values)


def _read(name: str) -> dict:
    with (BANK_DIR / name).open("rb") as f:
        return tomllib.load(f)


@functools.cache
def misconceptions() -> Mapping[str, Misconception]:
    """Every documented misconception, checked: both languages, known sources."""
    known = load_sources()
    out = {}
    for key, raw in _read("misconceptions.toml").items():
        m = Misconception(key, MappingProxyType({lang: raw.get(lang, "") for lang in LANGS}),
                          tuple(raw.get("sources", ())), raw.get("page", ""))
        if not all(m.text.values()) or not m.sources or not set(m.sources) <= set(known):
            raise BankError(f"misconception {key}: needs a text in {LANGS} and sources from assets/sources.toml")
        out[key] = m
    return MappingProxyType(out)


def _item(raw: dict) -> ConceptItem:
    iid = raw.get("id", "?")
    try:
        item = ConceptItem(
            id=iid, section=raw["section"], options=tuple(raw["options"]), recipe=raw.get("recipe", ""),
            unit=raw.get("unit", ""),
            forms=MappingProxyType({f: MappingProxyType(dict(raw["forms"][f])) for f in FORMS}),
            misconceptions=MappingProxyType(dict(raw["misconceptions"])))
    except KeyError as err:
        raise BankError(f"{iid}: missing {err}") from err
    problems = []
    if item.section not in sections():
        problems.append(f"unknown section {item.section!r}")
    if set(raw["forms"]) != set(FORMS):
        problems.append(f"needs exactly the forms {FORMS}")
    if len(item.options) < 3 or len(set(item.options)) != len(item.options):
        problems.append("needs at least three distinct options")
    if set(item.misconceptions) != set(item.options[1:]):
        problems.append("every distractor (and only they) names a misconception")
    if unknown := set(item.misconceptions.values()) - set(misconceptions()):
        problems.append(f"misconceptions not in misconceptions.toml: {sorted(unknown)}")
    if item.recipe:
        if item.recipe not in RECIPES or item.unit not in UNITS or item.correct != RIGHT:
            problems.append("a recipe item needs a known recipe and unit, and 'right' first")
        else:
            for f in FORMS:
                values = list(option_values(item, f).values())
                if len(set(values)) != len(values):
                    problems.append(f"form {f}: two options have the same value")
    if problems:
        raise BankError(f"{iid}: " + "; ".join(problems))
    return item


@functools.cache
def items() -> tuple[ConceptItem, ...]:
    """The concept test's items in test order, checked against the rules above."""
    found = tuple(_item(raw) for raw in _read("concept.toml")["item"])
    if len({i.id for i in found}) != len(found):
        raise BankError("duplicate concept item ids")
    return found


def item(item_id: str) -> ConceptItem:
    """One item by id (KeyError if there is none)."""
    for i in items():
        if i.id == item_id:
            return i
    raise KeyError(item_id)


@functools.cache
def _texts(lang: str) -> Mapping[str, Mapping]:
    """One language's texts with citations rendered, checked against the structure."""
    style = cite_style(lang)
    raw = _read(f"concept_{lang}.toml")
    if set(raw) != {i.id for i in items()}:
        raise BankError(f"concept_{lang}.toml ids differ from concept.toml")
    for i in items():
        t = raw[i.id]
        need = {"title", "prompt", "explanation"} | (set() if i.recipe else {"options"})
        if set(t) != need or set(t["prompt"]) != set(FORMS) or (
                not i.recipe and set(t["options"]) != set(i.options)):
            raise BankError(f"concept_{lang}.toml [{i.id}] needs {sorted(need)}, prompts {FORMS} and its options")

    def cite(v: object) -> object:
        return {k: cite(x) for k, x in v.items()} if isinstance(v, dict) else (
            render_citations(v, style) if isinstance(v, str) else v)

    return MappingProxyType({k: cite(v) for k, v in raw.items()})


@functools.lru_cache(maxsize=64)
def question(item_id: str, form: str, lang: str) -> Question:
    """One item in one form and language, as the quiz's Question (kind single; id = the item's id)."""
    i = item(item_id)
    if form not in FORMS or lang not in LANGS:
        raise ValueError(f"form {form!r} / language {lang!r}")
    t = _texts(lang)[i.id]
    f = fields(i.forms[form])
    if i.recipe:
        values = option_values(i, form)
        options = tuple(Option(o, format_value(values[o], i.unit)) for o in i.options)
        answer = format_value(values[RIGHT], i.unit)
    else:
        options = tuple(Option(o, t["options"][o].format(**f)) for o in i.options)
        answer = options[0].text
    stem = t["prompt"][form].format(**f)
    return Question(id=i.id, kind=Kind.SINGLE, lang=lang, title=t["title"], stem=stem,
                    prompt=compose(lang, Medium.APP, Kind.SINGLE, stem, "", i.unit),
                    explanation=t["explanation"].format(**f, answer=answer), section=i.section, teaches="",
                    options=options, correct=(i.correct,), unit=i.unit,
                    params=MappingProxyType(dict(i.forms[form])))


def questions(form: str, lang: str) -> tuple[Question, ...]:
    """The whole test in one form and language, in test order."""
    return tuple(question(i.id, form, lang) for i in items())


def form_for(class_code: str, student_key: str, test: str) -> str:
    """The form a student takes for ``test`` ("pre" / "post") in a class: drawn from (class, student), the post
    form always the other one, so no student sees the same form twice (about half the class starts with each)."""
    if test not in TESTS:
        raise ValueError(f"test must be one of {TESTS}, got {test!r}")
    digest = hashlib.sha256(f"concept/{class_code}/{student_key}".encode()).digest()
    first = FORMS[digest[0] % 2]
    return first if test == "pre" else next(f for f in FORMS if f != first)


def misconception_of(item_id: str, option_id: str) -> Misconception | None:
    """The misconception a chosen option stands for (None for the right one)."""
    key = item(item_id).misconceptions.get(option_id)
    return misconceptions()[key] if key else None

"""The question bank: language-neutral structure (assets/quiz/bank.toml) + texts per language
(assets/quiz/<lang>.toml), checked against each other and turned into Question objects."""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType

from mha_core.i18n import LANGS, cite_style
from mha_core.presets import PRESET_KEYS, preset
from mha_core.quiz.draws import RECIPES, draw, text_fields, wrong_answers
from mha_core.quiz.media import Medium, compose
from mha_core.quiz.model import Kind, Option, Question
from mha_core.quiz.numbers import UNITS, answer_tolerance, format_value
from mha_core.quiz.short import normalise
from mha_core.sources import render_citations

BANK_DIR = Path(__file__).resolve().parents[2] / "assets" / "quiz"
# Pages a question may point to (keys of mha_core.ui.nav.PAGES; the quiz itself teaches nothing).
TEACHING_PAGES = ("overview", "split", "attend", "concat", "cost", "heads")


class BankError(ValueError):
    """The bank files disagree with each other or with the rules above (a developer's mistake)."""


@dataclass(frozen=True)
class Entry:
    """One question's language-neutral part, as bank.toml writes it."""

    id: str
    kind: Kind
    section: str
    teaches: str
    options: tuple[str, ...] = ()
    correct: tuple[str, ...] = ()
    recipe: str = ""
    unit: str = ""
    fixed: Mapping[str, int] | None = None
    preset: str = ""  # a published model whose shape fills {model}, {h}, {g}, {r} in the texts (never typed)


def _read(name: str) -> dict:
    with (BANK_DIR / name).open("rb") as f:
        return tomllib.load(f)


def _entry(raw: dict, sections: tuple[str, ...]) -> Entry:
    """Check one bank.toml record and type it."""
    qid = raw.get("id", "?")
    try:
        e = Entry(id=qid, kind=Kind(raw["kind"]), section=raw["section"], teaches=raw["teaches"],
                  options=tuple(raw.get("options", ())), correct=tuple(raw.get("correct", ())),
                  recipe=raw.get("recipe", ""), unit=raw.get("unit", ""),
                  fixed=MappingProxyType(dict(raw["fixed"])) if "fixed" in raw else None,
                  preset=raw.get("preset", ""))
    except (KeyError, ValueError) as err:
        raise BankError(f"{qid}: {err!r}") from err
    problems = []
    if e.section not in sections:
        problems.append(f"unknown section {e.section!r}")
    if e.teaches not in TEACHING_PAGES:
        problems.append(f"teaches {e.teaches!r} is not a teaching page")
    if len(set(e.options)) != len(e.options):
        problems.append("duplicate option ids")
    if e.preset and (e.preset not in PRESET_KEYS or e.kind is Kind.NUMERIC):
        problems.append(f"preset {e.preset!r} must be a known model, on a question that draws no numbers")
    if e.kind is Kind.NUMERIC:
        if e.recipe not in RECIPES or e.unit not in UNITS:
            problems.append(f"numeric needs a known recipe and unit (got {e.recipe!r}, {e.unit!r})")
    elif e.kind is Kind.TEXT:
        if e.options or e.correct:
            problems.append("free text takes no options")
    elif e.kind is Kind.SHORT:
        if e.options or len(e.correct) != 1 or not normalise(e.correct[0]):
            problems.append("a short answer takes no options and one answer id (its language-free form)")
    else:
        wanted = {Kind.SINGLE: len(e.correct) == 1, Kind.MULTIPLE: len(e.correct) >= 1,
                  Kind.ORDERING: sorted(e.correct) == sorted(e.options)}[e.kind]
        if len(e.options) < 2 or not wanted or not set(e.correct) <= set(e.options):
            problems.append(f"{e.kind} needs options and a matching answer key")
    if problems:
        raise BankError(f"{qid}: " + "; ".join(problems))
    return e


@functools.cache
def structure() -> tuple[tuple[str, ...], tuple[Entry, ...]]:
    """(sections in teaching order, entries in bank order), read once per process."""
    raw = _read("bank.toml")
    sections = tuple(raw["sections"])
    entries = tuple(_entry(q, sections) for q in raw["question"])
    ids = [e.id for e in entries]
    if len(set(ids)) != len(ids):
        raise BankError("duplicate question ids")
    return sections, entries


@functools.cache
def _texts(lang: str) -> Mapping[str, Mapping]:
    """One language's texts, checked against the structure (same ids, same option ids, all fields)."""
    texts = _cited(_read(f"{lang}.toml"), lang)
    _, entries = structure()
    if set(texts) != {e.id for e in entries}:
        raise BankError(f"{lang}.toml ids differ from bank.toml: {sorted(set(texts) ^ {e.id for e in entries})}")
    for e in entries:
        t = texts[e.id]
        need = {"title", "prompt", "explanation"} | ({"model_answer"} if e.kind is Kind.TEXT else set())
        if e.options:
            need.add("options")
        if e.kind is Kind.SHORT:
            need.add("accept")
        if set(t) - {"label"} != need or set(t.get("options", {})) != set(e.options):
            raise BankError(f"{lang}.toml [{e.id}] needs exactly {sorted(need)} (and may have a label) and options "
                            f"{list(e.options)}")
        if e.kind is Kind.SHORT:
            _check_accepted(e, lang, t["accept"])
    return MappingProxyType(texts)


def _check_accepted(e: Entry, lang: str, forms: object) -> None:
    """A short answer's accepted forms: a list of distinct, non-blank strings that includes the answer id."""
    if not isinstance(forms, list) or not forms or not all(isinstance(f, str) and normalise(f) for f in forms):
        raise BankError(f"{lang}.toml [{e.id}] accept must be a list of non-blank strings")
    if len(set(forms)) != len(forms):
        raise BankError(f"{lang}.toml [{e.id}] lists an accepted form twice")
    if normalise(e.correct[0]) not in {normalise(f) for f in forms}:
        raise BankError(f"{lang}.toml [{e.id}] must accept the answer id {e.correct[0]!r}")


def _cited(table: dict, lang: str) -> dict:
    """The same texts with citation markers ([@key]) rendered in ``lang`` (mha_core.sources)."""
    style = cite_style(lang)
    return {k: _cited(v, lang) if isinstance(v, dict) else render_citations(v, style) if isinstance(v, str) else v
            for k, v in table.items()}


def preset_fields(key: str) -> dict[str, object]:
    """A published model's shape as text fields: {model}, {h} query heads, {g} K/V heads, {r} = h / g."""
    p = preset(key)
    return {"model": p.name, "h": p.n_heads, "g": p.n_kv_heads, "r": p.n_heads // p.n_kv_heads}


def _question(e: Entry, lang: str, seed: int) -> Question:
    """One question in one language; a numeric one gets its numbers and answer from the seed."""
    t = _texts(lang)[e.id]
    params: Mapping[str, int] = MappingProxyType({})
    value = None
    wrong: Mapping[str, Fraction] = MappingProxyType({})
    tolerance = Fraction(0)
    prompt, explanation = t["prompt"], t["explanation"]
    shown = {**(preset_fields(e.preset) if e.preset else {}), **text_fields(e.id)}  # texts only, never params
    if e.kind is Kind.NUMERIC:
        params, value = draw(e.recipe, seed, e.id, e.fixed)
        wrong = wrong_answers(e.recipe, params)
        tolerance = answer_tolerance(value, UNITS[e.unit].scale, wrong.values())
        prompt = prompt.format(**params, **shown)
        explanation = explanation.format(**params, **shown, answer=format_value(value, e.unit))
    if shown:
        prompt, explanation = prompt.format(**shown), explanation.format(**shown)
    label = t.get("label", "")
    return Question(
        id=e.id, kind=e.kind, lang=lang, title=t["title"].format(**params, **shown),
        prompt=compose(lang, Medium.APP, e.kind, prompt, label, e.unit), stem=prompt, label=label,
        explanation=explanation, section=e.section, teaches=e.teaches,
        options=tuple(Option(o, t["options"][o].format(**shown) if shown else t["options"][o]) for o in e.options),
        correct=e.correct,
        value=value, unit=e.unit, params=params, tolerance=tolerance, wrong=wrong,
        model_answer=t.get("model_answer", "").format(**shown) if shown else t.get("model_answer", ""),
        accepted=tuple(t.get("accept", ())),
    )


@functools.lru_cache(maxsize=256)
def load_questions(lang: str, seed: int = 0) -> tuple[Question, ...]:
    """Every question of the bank in ``lang`` (a catalog language), in teaching order; numeric questions
    drawn from ``seed`` (a student's seed) with answers computed by mha_core.counts."""
    if lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; expected one of {LANGS}")
    _, entries = structure()
    return tuple(_question(e, lang, int(seed)) for e in entries)


def sections() -> tuple[str, ...]:
    """Section keys in teaching order (their names: ``quiz.sections.<key>`` in the catalogs)."""
    return structure()[0]

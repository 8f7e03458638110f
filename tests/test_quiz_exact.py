"""Numeric answers are graded so that no documented wrong answer can pass: whole numbers (parameters, bytes, cache
sizes) only exactly, in the app and in Moodle; a band only for a non-whole answer, and narrower than the distance to
the nearest wrong answer (bias vs no bias, h vs g, with vs without W^O). Issue 24, item 1."""

from __future__ import annotations

import re
from dataclasses import replace
from fractions import Fraction

import pytest

from mha_core.errors import LabError
from mha_core.i18n import LANGS, translate
from mha_core.quiz import Kind, grade, load_questions
from mha_core.quiz.bank import structure
from mha_core.quiz.draws import RECIPES, draw, wrong_answers
from mha_core.quiz.moodle import numeric_answer
from mha_core.quiz.numbers import UNITS, answer_tolerance
from quizhelpers import STATED, torch_expected

SEEDS = range(0, 400, 7)
NUMERIC = [e for e in structure()[1] if e.kind is Kind.NUMERIC]


def _si(n: int, digits: int) -> str:
    """``n`` rounded to ``digits`` significant figures with an SI letter, as a student abbreviates: '4.19M'."""
    for scale, letter in ((10**9, "G"), (10**6, "M"), (10**3, "K")):
        if n >= scale:
            return f"{n / scale:.{digits}g}{letter}"
    return str(n)


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_every_recipe_documents_wrong_answers_that_are_wrong(recipe):
    for seed in SEEDS:
        params, value = draw(recipe, seed, "q")
        wrong = wrong_answers(recipe, params)
        assert wrong and value not in wrong.values(), (recipe, seed)


@pytest.mark.parametrize("entry", NUMERIC, ids=lambda e: e.id)
def test_no_band_covers_the_nearest_wrong_answer(entry):
    """The app's band and Moodle's tolerance, for every seed: zero for a whole answer, and never as wide as the
    distance to the nearest documented wrong answer (which mha_core.counts computes)."""
    for seed in SEEDS:
        q = next(q for q in load_questions("en", seed) if q.id == entry.id)
        assert q.value == torch_expected(q), (q.id, seed)
        scale = UNITS[q.unit].scale
        nearest = min(abs(w - q.value) for w in q.wrong.values())
        shown, moodle_tol = numeric_answer(q)
        assert q.tolerance < nearest and moodle_tol * scale < nearest, (q.id, seed, q.tolerance, nearest)
        if (q.value / scale).denominator == 1:  # every answer of the bank: a whole number in its unit
            assert q.tolerance == 0 and moodle_tol == 0, (q.id, seed)


@pytest.mark.parametrize("qid, wrong", [("mha-params-bias", "without_bias"), ("mha-params", "with_bias"),
                                        ("gqa-params", "mha_g_is_h"), ("wo-params", "with_bias")])
def test_the_issues_pairs_are_told_apart(qid, wrong):
    """mha-params-bias must refuse the no-bias count and mha-params the with-bias one, typed in full or rounded."""
    for seed in SEEDS:
        q = next(q for q in load_questions("en", seed) if q.id == qid)
        other = int(q.wrong[wrong])
        assert grade(q, str(int(q.value))) and not grade(q, str(other)) and not grade(q, f"{other:,}")
        for digits in (2, 3, 4):
            rounded = _si(int(q.value), digits)
            if Fraction(rounded[:-1]) * 10 ** (3 * "KMG".index(rounded[-1]) + 3) != q.value:
                with pytest.raises(LabError) as err:
                    grade(q, rounded)
                assert err.value.key == "quiz_exact"


def test_an_exact_abbreviation_is_still_right():
    q = next(q for q in load_questions("en", 0) if q.id == "mha-params")
    n = int(q.value)  # 2,359,296: "2.359296M" and "2359.296K" are the same number
    assert grade(q, f"{n / 10**6}M") and grade(q, f"{n / 10**3}K")


def test_the_app_says_the_number_must_be_exact_in_both_languages():
    for lang in LANGS:
        for unit in STATED:
            hint = translate(lang, f"quiz.hint_{unit}")
            assert ("exact" in hint) if lang == "en" else ("准确" in hint), (lang, unit, hint)
        assert "1.05M" not in translate(lang, "quiz.hint_count").replace("（", "(").split("(")[0]
        message = translate(lang, "errors.quiz_exact")
        assert "⟦" not in message and ("exact" in message if lang == "en" else "准确" in message)


def test_a_band_is_a_third_of_the_gap_to_the_nearest_wrong_answer():
    value = Fraction(2097153, 2)
    assert answer_tolerance(Fraction(1048576), 1, [Fraction(1048577)]) == 0
    assert answer_tolerance(value, 1) == value / 200
    assert answer_tolerance(value, 1, [value + 30]) == 10


def test_the_examples_in_hints_and_messages_are_never_an_answer():
    """A hint's example ("1,234,567", "123 MiB") must not give away a student's answer: no example number equals
    any numeric answer, in its stated unit or in base units, for any seed."""
    keys = [f"quiz.{k}_{u}" for k in ("hint", "placeholder") for u in STATED]
    keys += ["errors.quiz_exact", "errors.quiz_not_number", "moodle.count_instruction"]
    examples = set()
    for lang in LANGS:
        for key in keys:
            for token in re.findall(r"\d[\d,]*(?:\.\d+)?(?:e\d+)?", translate(lang, key)):
                examples.add(Fraction(float(token.replace(",", ""))) if "e" in token
                             else Fraction(token.replace(",", "")))
    answers = set()
    for seed in range(300):
        for q in load_questions("en", seed):
            if q.kind is Kind.NUMERIC:
                answers |= {q.value, q.value / STATED[q.unit]}
    assert not examples & answers, sorted(examples & answers)
    assert len(examples) >= 5


def test_the_wrong_answers_agree_with_torch():
    """The with-bias / without-bias pair and the MHA count of a GQA layer, as torch's own modules count them."""
    for seed in SEEDS:
        qs = {q.id: q for q in load_questions("en", seed)}
        plain, biased = qs["mha-params"], qs["mha-params-bias"]
        assert plain.wrong["with_bias"] == torch_expected(replace(plain, id="mha-params-bias"))
        assert biased.wrong["without_bias"] == torch_expected(replace(biased, id="mha-params"))
        gqa = qs["gqa-params"]
        assert gqa.wrong["mha_g_is_h"] == torch_expected(replace(gqa, params={**gqa.params, "g": gqa.params["h"]}))

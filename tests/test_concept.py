"""The pre/post concept test: two isomorphic forms per item, every distractor a named misconception with a
source, computed numbers, and a form per student that never repeats."""

from __future__ import annotations

import random
import re
import tomllib
from difflib import SequenceMatcher
from fractions import Fraction

import pytest

from mha_core.counts import kv_cache_bytes, param_counts
from mha_core.i18n import LANGS
from mha_core.quiz import concept, grade
from mha_core.quiz.bank import BANK_DIR, load_questions
from mha_core.quiz.draws import RECIPES
from mha_core.sources import load_sources
from mha_core.ui.nav import PAGES


def test_at_least_twelve_items_each_in_two_forms():
    assert len(concept.items()) >= 12
    for i in concept.items():
        assert set(i.forms) == set(concept.FORMS)


@pytest.mark.parametrize("lang", LANGS)
def test_forms_differ_in_numbers_or_surface_but_keep_options(lang):
    for i in concept.items():
        a, b = (concept.question(i.id, f, lang) for f in concept.FORMS)
        assert a.stem != b.stem, i.id
        assert a.option_ids == b.option_ids and a.correct == b.correct
        if i.recipe:  # a numeric item has other numbers in form b
            assert [o.text for o in a.options] != [o.text for o in b.options], i.id


def test_every_distractor_is_a_misconception_with_a_known_source():
    known = load_sources()
    pages = {p.key for p in PAGES}
    used = set()
    for i in concept.items():
        assert set(i.misconceptions) == set(i.options) - {i.correct}
        for option, key in i.misconceptions.items():
            m = concept.misconceptions()[key]
            assert m.sources and set(m.sources) <= set(known), key
            assert all(m.text[lang].strip() for lang in LANGS)
            assert not m.page or m.page in pages
            assert concept.misconception_of(i.id, option) is m
            used.add(key)
        assert concept.misconception_of(i.id, i.correct) is None
    with (BANK_DIR / "misconceptions.toml").open("rb") as f:
        assert used == set(tomllib.load(f)), "every listed misconception is some distractor's"


@pytest.mark.parametrize("lang", LANGS)
def test_options_are_distinct_and_of_like_form(lang):
    for i in concept.items():
        for f in concept.FORMS:
            q = concept.question(i.id, f, lang)
            texts = [o.text for o in q.options]
            assert len(set(texts)) == len(texts), (i.id, f)
            assert "{" not in q.stem + "".join(texts) + q.explanation, (i.id, f)
            lengths = [len(t) for t in texts]
            # Haladyna et al. (2002): the right option is not the longest or the only one of its kind
            assert max(lengths) <= 2.2 * min(lengths) or max(lengths) - min(lengths) <= 12, (i.id, f, texts)
            assert grade(q, q.correct[0]) and not any(grade(q, o) for o in q.option_ids[1:])


def test_recipe_numbers_equal_a_count_done_here():
    p = concept.item("c-params").forms["a"]
    full = param_counts(p["d_model"], p["h"])["total"]
    assert concept.option_values(concept.item("c-params"), "a") == {
        "right": full, "full_per_head": full * p["h"], "without_wo": 3 * p["d_model"] ** 2,
        "divided_by_h": Fraction(full, p["h"])}
    q = concept.item("c-kv-cache").forms["b"]
    right = 2 * q["layers"] * q["g"] * q["d_head"] * q["seq_len"] * q["batch"] * 2  # K and V, fp16
    assert right == kv_cache_bytes(n_layers=q["layers"], n_kv_heads=q["g"], d_head=q["d_head"],
                                   seq_len=q["seq_len"], batch=q["batch"])
    values = concept.option_values(concept.item("c-kv-cache"), "b")
    assert values["right"] == right and values["h_heads"] == right * q["h"] // q["g"]
    assert values["k_only"] == right // 2 and values["no_batch"] == right // q["batch"]


def test_no_number_in_a_numeric_option_is_typed_in_the_texts():
    for lang in LANGS:
        with (BANK_DIR / f"concept_{lang}.toml").open("rb") as f:
            raw = tomllib.load(f)
        for i in concept.items():
            for text in raw[i.id].get("options", {}).values():
                assert not re.search(r"\d{2,}", text), (lang, i.id, text)  # numbers come from {fields}


def test_form_per_student_never_repeats_and_splits_the_class():
    keys = [f"{n:032x}" for n in range(200)]
    for key in keys:
        pre, post = (concept.form_for("ABC123", key, t) for t in concept.TESTS)
        assert {pre, post} == set(concept.FORMS)
        assert concept.form_for("ABC123", key, "pre") == pre  # deterministic
    firsts = [concept.form_for("ABC123", k, "pre") for k in keys]
    assert 70 <= firsts.count("a") <= 130
    with pytest.raises(ValueError):
        concept.form_for("ABC123", keys[0], "mid")


def test_no_number_is_shown_in_two_places():
    """A computed option appears once in the whole test (both forms): the same value as another item's key, or as
    the other form's key, lets a student answer by recognising a number instead of by the idea."""
    seen: dict[tuple[str, Fraction], tuple[str, str, str]] = {}
    for i in concept.items():
        if not i.recipe:
            continue
        for f in concept.FORMS:
            for option, value in concept.option_values(i, f).items():
                where = seen.setdefault((i.unit, value), (i.id, f, option))
                assert where == (i.id, f, option), (i.unit, value, where, (i.id, f, option))


@pytest.mark.parametrize("lang", LANGS)
def test_no_form_repeats_a_class_quiz_question(lang):
    """The class quiz shows its answers and explanations during the lesson: a post-test form that copies one of its
    fixed questions (wording or options) is answered from memory."""
    quiz = load_questions(lang)
    for i in concept.items():
        if i.recipe:  # the quiz draws each student's own numbers for these
            continue
        for f in concept.FORMS:
            q = concept.question(i.id, f, lang)
            texts = {o.text for o in q.options}
            for other in quiz:
                assert SequenceMatcher(None, q.stem, other.stem).ratio() < 0.8, (i.id, f, other.id)
                assert len(texts & {o.text for o in other.options}) < 2, (i.id, f, other.id)


_MATH = re.compile(r"^[\d\s×·()=≈√.,]+$")


@pytest.mark.parametrize("lang", LANGS)
def test_math_options_share_one_form(lang):
    """Options of like form (Haladyna et al. 2002): if one option is a bare expression, all are, and none carries a
    worked value (“= 8”) the others lack."""
    for i in concept.items():
        if i.recipe:
            continue
        for f in concept.FORMS:
            texts = [o.text for o in concept.question(i.id, f, lang).options]
            bare = [bool(_MATH.match(t)) for t in texts]
            assert all(bare) or not any(bare), (i.id, f, texts)
            if all(bare):
                assert len({("=" in t, "≈" in t) for t in texts}) == 1, (i.id, f, texts)


# Stems that gave the key away in one form only (found in review): the phrase may appear in neither form.
_CUES = {
    "c-concat": ("side by side", "并排"),              # rules out stacking the rows: the key's very idea
    "c-ensemble": ("ensemble", "集成"),                 # states one distractor's claim, then asks what is "really" so
    "c-designed": ("who decides", "是谁决定"),          # presupposes that someone decides (a trick stem)
    "c-wo-role": ("wide already", "已经是"),            # rules out the shape distractor in one form only
}


@pytest.mark.parametrize("lang", LANGS)
def test_stems_do_not_cue_the_key(lang):
    for item_id, phrases in _CUES.items():
        for f in concept.FORMS:
            stem = concept.question(item_id, f, lang).stem.lower()
            assert not any(p in stem for p in phrases), (item_id, f, stem)


@pytest.mark.parametrize("lang", LANGS)
def test_both_forms_give_the_same_facts(lang):
    """Isomorphic forms: a fact one form hands the student, the other does too (fp16's two bytes)."""
    two_bytes = {"en": "2 bytes", "zh": "2 字节"}[lang]
    for f in concept.FORMS:
        assert two_bytes in concept.question("c-kv-cache", f, lang).stem, f


def _catalog(lang: str, name: str) -> dict:
    with (BANK_DIR.parent / "i18n" / lang / name).open("rb") as f:
        return tomllib.load(f)


def test_no_text_claims_the_sources_document_the_misconceptions():
    """The misconceptions' sources publish the right fact; none of them studies what students believe, so no text
    may say the misconceptions are documented (“有文献记载”) or that every distractor is a real, held one."""
    with (BANK_DIR.parent / "sources.toml").open("rb") as f:
        notes = [e["note"][lang] for e in tomllib.load(f).values() for lang in LANGS]
    texts = [_catalog(lang, "prepost.toml")["prepost"]["method"] for lang in LANGS] + notes
    for bad in ("documented misconception", "real misconception", "有文献记载", "真实的误解"):
        assert not any(bad in t for t in texts), bad


def test_gain_bands_do_not_overlap():
    """Hake's low band is 0 ≤ g < 0.3 (analysis.band); a loss (g < 0) is its own band, so “low (< 0.3)” was wrong."""
    for lang in LANGS:
        text = _catalog(lang, "prepost.toml")["prepost"]["bands"]
        assert "0–0.3" in text and "< 0.3" not in text, lang


def test_no_form_can_be_drawn_by_the_class_quiz():
    """The quiz draws each student's numbers for its numeric questions and shows the answer: a concept form with
    numbers the quiz can draw is, for some students, a question they already saw answered (1 in 36 to 1 in 567 per item
    before this fix). 20,000 seeds cover every draw of these recipes (a few hundred shapes at most)."""
    for i in concept.items():
        if not i.recipe:
            continue
        draw = RECIPES[i.recipe].draw
        drawn = {tuple(sorted(draw(random.Random(s)).items())) for s in range(20_000)}
        for f in concept.FORMS:
            assert tuple(sorted(i.forms[f].items())) not in drawn, (i.id, f)

"""Item-writing checks on the bank's texts (issue 24, items 3, 8, 12): single-choice keys not guessable by length,
no throw-away distractors, distractors that are false for the data they talk about, no internal jargon."""

from __future__ import annotations

import re

import pytest

from mha_core.i18n import LANGS
from mha_core.presets import PRESET_KEYS, preset
from mha_core.quiz import Kind, load_questions
from mha_core.quiz.bank import structure
from mha_core.quiz.moodle import as_plain

# Items whose options are formulas (a shape, a number): their lengths differ by nature ("n × n", "√768 ≈ 27.7").
FORMULA_ITEMS = frozenset({"head-output-shape", "scale-which"})
MAX_LENGTH_RATIO = 1.6  # longest / shortest option of a verbal item (Haladyna et al. 2002: homogeneous length)
THROW_AWAYS = ("Always h = 1", "salary", "Pruning adds parameters", "logical induction", "永远 h = 1", "工资",
               "剪枝会增加参数", "逻辑归纳")


def _single(lang: str) -> list:
    return [q for q in load_questions(lang) if q.kind is Kind.SINGLE]


def _lengths(q) -> dict[str, int]:
    """Each option's length in display characters (markdown removed; a Chinese character counts one)."""
    return {o.id: len(as_plain(o.text)) for o in q.options}


@pytest.mark.parametrize("lang", LANGS)
def test_the_key_is_not_guessable_by_length(lang):
    """The key is the uniquely longest option in at most a third of the single-choice items, and the uniquely
    shortest in at most a third; in a verbal item no option is more than 1.6 times as long as another."""
    items = _single(lang)
    longest, shortest = [], []
    for q in items:
        lengths = _lengths(q)
        key = lengths.pop(q.correct[0])
        longest += [q.id] if key > max(lengths.values()) else []
        shortest += [q.id] if key < min(lengths.values()) else []
        if q.id not in FORMULA_ITEMS:
            everything = [key, *lengths.values()]
            assert max(everything) <= MAX_LENGTH_RATIO * min(everything), (q.id, _lengths(q))
    assert len(longest) <= len(items) / 3, longest
    assert len(shortest) <= len(items) / 3, shortest


@pytest.mark.parametrize("lang", LANGS)
def test_no_throw_away_distractor_is_left(lang):
    texts = " ".join(o.text for q in load_questions(lang) for o in q.options)
    assert not [t for t in THROW_AWAYS if t in texts]


def test_the_typical_head_count_distractors_are_false_for_the_presets():
    """'Most keep h = 8', 'd_head is exactly 64 in every one', 'h stays between 8 and 16': each false for the
    published models the question is about."""
    shapes = [preset(k) for k in PRESET_KEYS]
    heads = [p.n_heads for p in shapes]
    widths = {p.shape.d_head for p in shapes}
    assert sum(h == 8 for h in heads) < len(heads) / 2
    assert widths != {64}
    assert max(heads) > 16 or min(heads) < 8
    for lang in LANGS:
        q = next(q for q in load_questions(lang) if q.id == "myth-typical-h")
        assert "8" in q.option("max_heads").text and "64" in q.option("one_head").text
        assert "16" in q.option("gpu_limit").text


def test_the_gqa_distractor_that_describes_mqa_is_false_for_the_model_asked_about():
    entry = next(e for e in structure()[1] if e.id == "gqa-shares")
    model = preset(entry.preset)
    assert 1 < model.n_kv_heads < model.n_heads, "with g = 1 the 'one key head for all' option would be right"


def test_the_induction_heads_helper_sits_in_an_earlier_layer_not_the_one_before():
    """K-composition (Elhage et al. 2021): the previous-token head is in an earlier layer; 'the layer before' holds
    only in a two-layer model."""
    en = next(q for q in load_questions("en") if q.id == "induction-head").option("copy").text
    zh = next(q for q in load_questions("zh") if q.id == "induction-head").option("copy").text
    assert "an earlier layer" in en and "layer before" not in en
    assert "更早" in zh and "前一层" not in zh


@pytest.mark.parametrize("lang", LANGS)
def test_no_internal_jargon_reaches_students(lang):
    for q in load_questions(lang):
        for text in (q.prompt, q.explanation, q.model_answer, *(o.text for o in q.options)):
            assert not re.search(r"knowledge point|知识点|kp-\d", text), (q.id, text)


# Cue words (Haladyna et al. 2002): absolutes that only distractors use, or hedges that only keys use, point at the
# key. zh uses only unambiguous words (每个 / 都 are ordinary grammar there, not absolutes).
ABSOLUTES = {"en": r"\b(always|never|only|every|all|any|none|nothing|exactly)\b",
             "zh": r"总是|从不|永远|只|所有|任何|全部|一定|完全|正好"}
HEDGES = {"en": r"\b(may|might|can|possibly|often|usually|some|little|roughly|about)\b",
          "zh": r"可能|往往|通常|大致|几乎|少量|一些|或许"}


def _share(pattern: str, texts: list[str]) -> float:
    return sum(bool(re.search(pattern, t, re.IGNORECASE)) for t in texts) / len(texts)


@pytest.mark.parametrize("lang", LANGS)
def test_absolutes_and_hedges_do_not_point_at_the_key(lang):
    """Across the single-choice items, keys use absolute words at least half as often as distractors do, and hedges
    at most twice as often (plus one item): the old bank had 'Always', 'Only', 'any single' in distractors only."""
    keys = [o.text for q in _single(lang) for o in q.options if o.id in q.correct]
    distractors = [o.text for q in _single(lang) for o in q.options if o.id not in q.correct]
    assert _share(ABSOLUTES[lang], keys) >= _share(ABSOLUTES[lang], distractors) / 2
    assert _share(HEDGES[lang], keys) <= 2 * _share(HEDGES[lang], distractors) + 1 / len(keys)


@pytest.mark.parametrize("lang", LANGS)
def test_within_an_item_the_key_is_not_the_only_hedged_or_the_only_unqualified_option(lang):
    """The pruning key was the only hedged option and the only one without 'any' / 'Only' (issue 24 review)."""
    for q in _single(lang):
        hedged = {o.id for o in q.options if re.search(HEDGES[lang], o.text, re.IGNORECASE)}
        absolute = {o.id for o in q.options if re.search(ABSOLUTES[lang], o.text, re.IGNORECASE)}
        assert hedged != set(q.correct), (q.id, "only the key is hedged")
        assert len(q.options) - len(absolute) != 1 or q.correct[0] in absolute, (q.id, "only the key is unqualified")


@pytest.mark.parametrize("lang", LANGS)
def test_no_distractor_that_is_arguably_true_comes_back(lang):
    """Induction heads (like most heads) do park on the first token when nothing matches, and a fixed-offset head is
    one position of a convolution kernel (Cordonnier et al. 2020, on the app's own why page): neither is a fair
    distractor."""
    qs = {q.id: q for q in load_questions(lang)}
    induction = " ".join(o.text for o in qs["induction-head"].options if o.id not in qs["induction-head"].correct)
    clark = " ".join(o.text for o in qs["clark-heads"].options if o.id not in qs["clark-heads"].correct)
    assert not re.search(r"first token|第一个词元|首词", induction)
    assert not re.search(r"convolution|卷积", clark)


@pytest.mark.parametrize("lang", LANGS)
def test_the_gqa_stem_does_not_give_the_answer_away(lang):
    """The stem said '32 query heads share 8 K/V heads', so the key only repeated it and the MQA distractor
    contradicted the stem: the stem names the model and h only."""
    entry = next(e for e in structure()[1] if e.id == "gqa-shares")
    q = next(q for q in load_questions(lang) if q.id == "gqa-shares")
    model = preset(entry.preset)
    stem = as_plain(q.stem).replace(model.name, "")
    assert "K/V" not in stem and not re.search(rf"(?<!\d){model.n_kv_heads}(?!\d)", stem), stem


def test_the_figures_typed_into_fixed_items_agree_with_the_counts():
    """Items that draw no numbers type their givens; what is derived from them must be what mha_core.counts says."""
    from mha_core.counts import param_counts

    for lang in LANGS:
        qs = {q.id: q for q in load_questions(lang)}
        d_head = param_counts(768, 12)["q"] // 768 // 12
        which = qs["scale-which"]
        assert which.option("sqrt_dhead").text == f"√{d_head} = {d_head ** 0.5:g}"
        assert which.option("sqrt_dmodel").text == f"√768 ≈ {768 ** 0.5:.1f}"
        assert which.option("h").text == f"√12 ≈ {12 ** 0.5:.2f}" and which.option("dhead").text == str(d_head)
        narrow = param_counts(512, 128)["q"] // 512 // 128
        assert f"{narrow} " in qs["myth-more-heads"].option("too_narrow").text
        full = param_counts(512, 8)
        assert full["q"] == full["o"] == 512 * 512 and full["q"] // 8 == 512 * 64
        assert "512 × 512" in qs["self-test-1b"].option("same").text
        assert "512 × 64" in qs["self-test-1b"].option("one_over_h").text

"""Quiz numbers that come from the core: GQA questions draw a real GQA, and the figures quoted from published
models are the presets' own, checked against numbers written out here independently."""

from __future__ import annotations

import math

import pytest

from mha_core.counts import attention_kind
from mha_core.i18n import LANGS
from mha_core.quiz import load_questions
from mha_core.quiz.draws import RECIPES, draw

GQA_QUESTIONS = {"gqa-params": "gqa_params", "kv-gqa": "kv_gqa", "kv-ratio": "kv_ratio"}


@pytest.mark.parametrize("qid, recipe", GQA_QUESTIONS.items())
def test_questions_that_say_gqa_never_draw_mqa_or_mha(qid: str, recipe: str) -> None:
    """g = 1 is MQA and g = h is MHA: a question whose text says GQA must draw 1 < g < h (over many seeds)."""
    drawn = set()
    for seed in range(600):
        params, _ = draw(recipe, seed, qid)
        assert 1 < params["g"] < params["h"] and params["h"] % params["g"] == 0, (seed, dict(params))
        assert attention_kind(params["h"], params["g"]) == "GQA"
        drawn.add(params["g"])
    assert len(drawn) >= 3  # still a variety of group counts


@pytest.mark.parametrize("lang", LANGS)
def test_gqa_questions_say_gqa(lang: str) -> None:
    for q in load_questions(lang, 5):
        if q.id in GQA_QUESTIONS:
            assert "GQA" in q.prompt or "GQA" in q.title, q.id


def test_every_recipe_with_kv_heads_draws_a_divisor() -> None:
    for name in RECIPES:
        for seed in range(200):
            params, _ = draw(name, seed, "x")
            if "g" in params:
                assert params["h"] % params["g"] == 0, (name, dict(params))


# Written out independently: (name, query heads, d_head) of the cost lab's published models.
PUBLISHED_HEADS = [("Transformer base", 8, 64), ("Transformer big", 16, 64), ("BERT-base", 12, 64),
                   ("BERT-large", 16, 64), ("all-MiniLM-L6-v2", 12, 32), ("GPT-2 small", 12, 64),
                   ("GPT-3 175B", 96, 128), ("Llama-2-7B", 32, 128), ("Llama-2-70B", 64, 128),
                   ("Llama-3-8B", 32, 128), ("Mistral-7B", 32, 128), ("Falcon-7B", 71, 64)]


@pytest.mark.parametrize("lang", LANGS)
def test_typical_heads_question_quotes_the_presets(lang: str) -> None:
    q = next(q for q in load_questions(lang) if q.id == "myth-typical-h")
    heads = [h for _, h, _ in PUBLISHED_HEADS]
    widths = [d for _, _, d in PUBLISHED_HEADS]
    right = next(o.text for o in q.options if o.id in q.correct)
    for number in (min(heads), max(heads), min(widths), max(widths)):
        assert str(number) in right
    assert "GPT-3 175B" in q.explanation and "all-MiniLM-L6-v2" in q.explanation
    assert f"{len(PUBLISHED_HEADS)}" in q.prompt
    assert "8 to 32" not in q.explanation and "8~32" not in q.explanation  # the old, contradicted claim


@pytest.mark.parametrize("lang", LANGS)
def test_cache_questions_state_the_condition_with_computed_figures(lang: str) -> None:
    """Llama-2-70B: 68,976,648,192 parameters (model card); 2 × 80 × 8 × 128 cache values per token.
    Llama-2-7B: 6,738,415,616 parameters; 2 × 32 × 32 × 128 values per token."""
    big = math.ceil(68_976_648_192 / (2 * 80 * 8 * 128))
    small = math.ceil(6_738_415_616 / (2 * 32 * 32 * 128))
    qs = {q.id: q for q in load_questions(lang, 11)}
    long_text = qs["kv-long"].explanation
    assert f"{big:,}" in long_text and "128 GiB" in long_text and "1.25 GiB" in long_text
    why = qs["kv-why"].model_answer
    assert f"{big:,}" in why and f"{small:,}" in why
    for text in (long_text, why, qs["kv-why"].explanation):
        assert "{" not in text
        assert ("batch" in text) if lang == "en" else ("批" in text)

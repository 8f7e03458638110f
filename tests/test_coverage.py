"""Every section of the knowledge point (../shared/seed/multi-head-attention.zh.md) is taught, in both
languages: each section maps to a registered page and catalog keys that page (or its renderer) uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from mha_core.i18n import LANGS, catalog, cite_style
from mha_core.quiz import load_questions
from mha_core.sources import reading_list
from mha_core.ui.nav import PAGES

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT.parent / "shared" / "seed" / "multi-head-attention.zh.md"

# section heading in the seed -> (page key, file that renders the text, catalog keys)
COVERAGE: dict[str, list[tuple[str, str, tuple[str, ...]]]] = {
    "一句话定义": [("overview", "pages/overview.py", ("overview.definition",))],
    "为什么重要": [("overview", "pages/overview.py", ("overview.why_title", "overview.why"))],
    "前置知识": [("prereq", "pages/prereq.py", ("prereq.intro", "prereq.step1", "prereq.step2", "prereq.step3")),
                 ("map", "pages/map.py", ("map.rel_kp002",))],
    "核心概念": [("overview", "pages/overview.py", ("overview.pipeline_caption", "overview.predict_why")),
                 ("split", "pages/split.py", ("split.explain",)),
                 ("split", "mha_core/ui/sidebar.py", ("controls.same_budget",)),
                 ("myths", "pages/myths.py", ("myths.m3_verdict",)),
                 ("map", "pages/map.py", ("map.rel_kp024", "map.rel_kp023", "map.ex_clark", "map.ex_voita"))],
    "原理与机制": [("why", "pages/why.py", ("why.setup", "why.explain", "why.geometry", "why.cnn")),
                   ("concat", "pages/concat.py", ("concat.explain", "concat.avg_explain"))],
    "图示": [("overview", "pages/overview.py", ("overview.pipeline_title",))],
    "直观类比": [("overview", "pages/overview.py", ("overview.analogy",)),
                 ("why", "pages/why.py", ("why.cnn",)), ("map", "pages/map.py", ("map.rel_kp020",))],
    "实例或案例": [("map", "pages/map.py", ("map.ex_clark", "map.ex_induction", "map.ex_llama"))],
    "常见误区": [("myths", "pages/myths.py", ("myths.m1_verdict", "myths.m2_verdict", "myths.m3_verdict"))],
    "与其他知识点的关系": [("map", "pages/map.py", ("map.rel_kp002", "map.rel_kp023", "map.rel_kp029",
                                                   "map.rel_kp008"))],
    "自测题": [("quiz", "mha_core/ui/quiz.py", ("quiz.score",))],
    "延伸阅读": [("map", "pages/map.py", ("map.reading_title", "map.reading_lead"))],
}


def test_every_seed_section_is_mapped():
    text = SEED.read_text(encoding="utf-8") if SEED.exists() else "\n".join(COVERAGE)
    headings = [line.strip() for line in text.splitlines() if line.strip() in COVERAGE or line.strip() in {
        "一句话定义", "为什么重要", "前置知识", "核心概念", "原理与机制", "图示", "直观类比", "实例或案例", "常见误区",
        "与其他知识点的关系", "自测题", "延伸阅读"}]
    assert set(headings) == set(COVERAGE)


@pytest.mark.parametrize("section", list(COVERAGE))
@pytest.mark.parametrize("lang", LANGS)
def test_section_is_taught(section, lang):
    pages = {p.key for p in PAGES}
    for page, source, keys in COVERAGE[section]:
        assert page in pages, f"{section}: page {page} is not in the app"
        code = (ROOT / source).read_text(encoding="utf-8")
        for key in keys:
            assert key in catalog(lang), f"{section}: {key} missing in {lang}"
            assert _shown_by(code, key), f"{section}: {source} does not show {key}"


def _shown_by(code: str, key: str) -> bool:
    """The key appears literally, or as t(f"table.prefix_{x}") with the suffix literal nearby."""
    if f'"{key}"' in code:
        return True
    table, name = key.split(".", 1)
    prefix, _, suffix = name.partition("_")
    return bool(suffix) and f'{table}.{prefix}_{{' in code and f'"{suffix}"' in code


def test_self_test_questions_are_in_the_quiz_in_both_languages():
    for lang in LANGS:
        ids = {q.id for q in load_questions(lang)}
        assert {"self-test-1a", "self-test-1b", "self-test-2", "self-test-3"} <= ids


@pytest.mark.parametrize("lang", LANGS)
def test_further_reading_cites_every_source(lang):
    """The seed's further reading (Vaswani §3.2.2, Clark, Elhage) and the issue's sources are in the list the
    map page renders from assets/sources.toml (tests/test_sources.py checks the page itself)."""
    reading = reading_list(lang, cite_style(lang))
    for needle in ("Vaswani", "3.2.2", "Clark", "Elhage", "Olsson", "Michel", "Voita", "Ainslie", "Shazeer",
                   "Bhojanapalli", "Cordonnier", "Jain", "Wiegreffe", "1706.03762"):
        assert needle in reading

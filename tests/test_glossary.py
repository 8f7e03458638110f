"""One glossary, zh ⇄ en: complete in both languages, and every page worded with its canonical terms."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from apphelpers import open_page, visible_strings
from mha_core.glossary import GROUPS, Term, load_glossary, search, variants_in
from mha_core.i18n import LANGS, catalog
from mha_core.sources import cited_keys, load_sources
from mha_core.ui.nav import PAGES

ROOT = Path(__file__).resolve().parents[1]
CJK = re.compile(r"[\u4e00-\u9fff]")
TERMS = load_glossary()
# The landing page's title names the topic rather than repeating its menu entry "Overview".
TITLE_NOT_MENU = {"overview"}


def _strings(lang: str) -> list[tuple[str, str]]:
    """Every visible string of one language: the i18n catalog and the quiz texts (citations written out)."""
    return visible_strings(lang)


def test_the_glossary_holds_the_terms_the_issue_names():
    ids = {term.id for term in TERMS}
    assert {"attention_head", "query", "key", "value", "projection", "concat", "output_projection", "sdpa", "mask",
            "causal_mask", "induction_head", "previous_token_head", "attention_sink", "kv_cache", "mha", "gqa", "mqa",
            "d_model", "d_head", "softmax", "full_width_head", "broad_head", "token", "layer", "head_pruning",
            "ablation", "attention_weight", "attention_score", "single_head", "subspace", "parameter_count",
            "syntactic_head", "coreference_head", "positional_head", "rare_word_head"} <= ids
    zh = {term.id: term.zh for term in TERMS}
    assert (zh["mask"], zh["induction_head"], zh["attention_sink"], zh["kv_cache"]) == ("掩码", "归纳头", "注意力汇聚",
                                                                                       "KV 缓存")
    assert "d_k = d_v" in next(t for t in TERMS if t.id == "d_head").en_def


@pytest.mark.parametrize("term", TERMS, ids=[t.id for t in TERMS])
def test_every_entry_has_both_languages(term: Term):
    assert term.group in GROUPS
    assert term.zh.strip() and term.en.strip() and term.zh_def.strip() and term.en_def.strip()
    assert CJK.search(term.zh_def), "the Chinese definition is Chinese"
    assert not CJK.search(term.en) and not CJK.search(term.en_def), "the English side has no Chinese in it"


def test_glossary_citations_name_sources_of_the_sources_file():
    cited = {key for t in TERMS for key in cited_keys(t.zh_def) + cited_keys(t.en_def)}
    assert {"vaswani2017", "clark2019", "elhage2021", "olsson2022", "voita2019"} <= cited <= set(load_sources())
    assert all(Counter(cited_keys(t.zh_def)) == Counter(cited_keys(t.en_def)) for t in TERMS)
    assert not [t.id for t in TERMS for lang in LANGS if "@" in t.definition(lang)]


@pytest.mark.parametrize("lang", LANGS)
def test_canonical_terms_and_definitions_are_not_variants_themselves(lang):
    bad = [(t.id, v) for t in TERMS for v in variants_in(t.term(lang), lang) + variants_in(t.definition(lang), lang)]
    assert not bad


def test_the_variant_check_sees_variants_and_skips_code_placeholders_and_glosses():
    assert ("mask", "遮罩") in variants_in("因果遮罩（只能看前面）", "zh")
    assert ("token", "token") in variants_in("最多 24 个 token。", "zh")
    assert ("token", "token") in variants_in("预测下一个 tokens。", "zh")
    assert ("broad_head", "looks everywhere") in variants_in("head 2 · looks everywhere", "en")
    assert not variants_in("词元（token）、`token_ids`、查询词元「{token}」", "zh")
    assert not variants_in("tokenizer and detokenize", "zh")      # a variant matches only as a whole word
    assert not variants_in("the KV cache of a model", "en")


@pytest.mark.parametrize("lang", LANGS)
def test_no_page_or_quiz_text_uses_a_non_glossary_variant(lang):
    bad = {key: sorted({v for _, v in found}) for key, text in _strings(lang) if (found := variants_in(text, lang))}
    assert not bad, "\n".join(f"{k}: {v}" for k, v in bad.items())


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", [p for p in PAGES if p.key not in TITLE_NOT_MENU],
                         ids=[p.key for p in PAGES if p.key not in TITLE_NOT_MENU])
def test_page_title_starts_with_its_menu_entry(page, lang):
    """A student who clicks "头的分工" lands on a page titled 头的分工: the title's head equals the menu entry's."""
    menu, title = catalog(lang)[f"nav.{page.key}"], catalog(lang)[f"{page.key}.title"]
    assert re.split(r"[:：]", title)[0].strip() == re.split(r"[:：]", menu)[0].strip()


def test_search_finds_a_term_by_either_language_and_symbol():
    assert [t.id for t in search(TERMS, "掩码")][:1] == ["mask"]
    assert "output_projection" in {t.id for t in search(TERMS, "w^o")}
    assert "kv_cache" in {t.id for t in search(TERMS, "KV cache")}
    assert search(TERMS, "  ") == TERMS
    assert search(TERMS, "no such term at all") == ()


@pytest.mark.parametrize("lang", LANGS)
def test_glossary_page_shows_every_term_with_the_other_language_beside_it(lang):
    at = open_page("pages/glossary.py", lang)
    assert not at.exception
    other = "en" if lang == "zh" else "zh"
    rows = [row for table in at.table for row in table.value.itertuples(index=False)]
    assert len(rows) == len(TERMS)
    assert {(row[0], row[1]) for row in rows} == {(t.term(lang), t.term(other)) for t in TERMS}
    at.text_input(key="glossary_search").set_value("归纳头").run()
    assert {row[0] for table in at.table for row in table.value.itertuples(index=False)} >= {
        next(t for t in TERMS if t.id == "induction_head").term(lang)}
    assert sum(len(table.value) for table in at.table) < len(TERMS)

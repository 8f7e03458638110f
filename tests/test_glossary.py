"""One glossary, zh ⇄ en: complete in both languages, and every page worded with its canonical terms."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from apphelpers import open_page, tables, visible_strings
from mha_core.glossary import GROUPS, Term, load_glossary, search, variants_in
from mha_core.i18n import LANGS, catalog, translate
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
    zh = {term.id: term.term("zh") for term in TERMS}
    assert (zh["mask"], zh["induction_head"], zh["attention_sink"], zh["kv_cache"]) == ("掩码", "归纳头", "注意力汇聚",
                                                                                       "KV 缓存")
    assert "d_k = d_v" in next(t for t in TERMS if t.id == "d_head").definitions["en"]


@pytest.mark.parametrize("term", TERMS, ids=[t.id for t in TERMS])
def test_every_entry_has_both_languages(term: Term):
    assert term.group in GROUPS
    assert all(term.term(lang).strip() and term.definitions[lang].strip() for lang in ("zh", "en"))
    assert CJK.search(term.definitions["zh"]), "the Chinese definition is Chinese"
    assert not CJK.search(term.term("en")) and not CJK.search(term.definitions["en"]), "the English side: no Chinese"


def test_glossary_citations_name_sources_of_the_sources_file():
    cited = {key for t in TERMS for key in cited_keys(t.definitions["zh"]) + cited_keys(t.definitions["en"])}
    assert {"vaswani2017", "clark2019", "elhage2021", "olsson2022", "voita2019"} <= cited <= set(load_sources())
    assert all(Counter(cited_keys(t.definitions["zh"])) == Counter(cited_keys(t.definitions["en"])) for t in TERMS)
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
    head, other_head = (translate(lang, f"glossary.col_{c}") for c in ("term", "other"))
    rows = [row for table in tables(at) for row in table]
    assert len(rows) == len(TERMS)
    assert {(row[head], row[other_head]) for row in rows} == {(t.term(lang), t.term(other)) for t in TERMS}
    at.text_input(key="glossary_search").set_value("归纳头").run()
    found = [row[head] for table in tables(at) for row in table]
    assert next(t for t in TERMS if t.id == "induction_head").term(lang) in found
    assert len(found) < len(TERMS)


# 词 inside a word that is not "token": 名词 (noun), 分词 (segmentation), 词典 (dictionary), 提示 … (a prompt).
_WORDS_WITH_CI = re.compile(r"[名代动限先子分单译源标提宾副介连助量形数实虚]词|词[典表义性汇语组对]")
_TOKEN_EN = re.compile(r"\btokens?\b", re.I)
_WORD_EN = re.compile(r"\bwords?\b", re.I)


def bare_ci_for_token(zh: str, en: str) -> list[str]:
    """Where the English says "token" (and never "word"), the bare 词 the Chinese uses instead of 词元, with a
    little context. Glossary terms spelled with 词 (前一词头, 首词头) and their stems (前一词) are the terms
    themselves; 词 inside an ordinary word (名词, 分词, 词典) is not meant as a token."""
    if not _TOKEN_EN.search(en) or _WORD_EN.search(en):
        return []
    text = zh
    for term in TERMS:
        for form in {term.term("zh"), term.term("zh").removesuffix("头")} if "词" in term.term("zh") else ():
            text = text.replace(form, "□" * len(form))
    text = _WORDS_WITH_CI.sub(lambda m: "□" * len(m.group(0)), text)
    return [text[max(0, m.start() - 4):m.end() + 2] for m in re.finditer(r"词(?!元)", text)]


def test_the_bare_ci_check_sees_the_slips_and_not_the_terms():
    assert bare_ci_for_token("头视图：一个头，逐词对逐词", "Head view: one head, token to token")
    assert bare_ci_for_token("看前一个词", "previous token")
    assert not bare_ci_for_token("看前一个词", "previous word")              # the English means a word
    assert not bare_ci_for_token("看前一个词元", "previous token")
    assert not bare_ci_for_token("前一词头和首词头；前一词分数", "previous-token and first-token heads")
    assert not bare_ci_for_token("代词、名词和分词器", "the pronoun's token")


def test_zh_says_token_where_en_does():
    """Item 16 of issue 24: 看前一个词 where the English (and the model's word pieces) say "previous token"."""
    en, zh = catalog("en"), catalog("zh")
    bad = {key: found for key, text in zh.items() if (found := bare_ci_for_token(text, en.get(key, "")))}
    assert not bad, "\n".join(f"{k}: {v}" for k, v in bad.items())


def _term(term_id: str) -> Term:
    return next(t for t in TERMS if t.id == term_id)


def test_the_token_entry_takes_the_toy_vocabulary_from_the_config():
    from mha_core.toy_config import ToyConfig

    top = ToyConfig().vocab_size - 1
    for lang in LANGS:
        assert f"0–{top}" in _term("token").definition(lang) and "{" not in _term("token").definition(lang)
    assert "{toy_top}" in _term("token").definitions["en"], "typed in once, it would go stale when the config changes"


def test_attention_sink_names_its_origin_and_keeps_clark_for_sep():
    """Xiao et al. 2023 coined the term; Clark et al. 2019 describe [SEP] and the no-op reading (zh 空操作)."""
    sink = _term("attention_sink")
    en = cited_keys(sink.definitions["en"])
    assert en[:1] == ["xiao2023"] and "clark2019" in en
    assert "空操作" in sink.definitions["zh"] and "不操作" not in sink.definitions["zh"]
    assert load_sources()["xiao2023"].arxiv == "2309.17453"


@pytest.mark.parametrize("lang", LANGS)
def test_student_text_has_no_internal_jargon(lang):
    """Glossary definitions (printed in the handout) and the map's examples name no knowledge-point ids."""
    texts = {t.id: t.definition(lang) for t in TERMS} | {k: v for k, v in catalog(lang).items()
                                                        if not k.startswith(("map.n_kp", "map.rel_kp"))}
    bad = sorted(k for k, v in texts.items() if re.search(r"kp-\d|knowledge point|本知识点|知识点写", v))
    assert not bad


def test_self_attention_symbol_spells_out_the_three_projections():
    assert _term("self_attention").symbol == "Q = XW^Q, K = XW^K, V = XW^V"


def test_the_glossary_code_names_no_language():
    """README: nothing in code names a language. The glossary's code and page read the languages from the catalogs
    (i18n.LANGS); failed before: Term had zh/en fields and the page chose "en" if "zh" else "zh"."""
    import ast

    from mha_core.i18n import LANGS
    from mha_core.ui.nav import ROOT

    for path in (ROOT / "mha_core" / "glossary.py", ROOT / "pages" / "glossary.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        named = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in LANGS}
        named |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr.split("_")[0] in LANGS}
        assert not named, f"{path.name} names {sorted(named)}"

"""Both catalogs carry every key, with the same placeholders, and every key the code uses exists."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from mha_core.i18n import LANGS, catalog, lang_from_locale, translate
from mha_core.ui.nav import PAGES

ROOT = Path(__file__).resolve().parents[1]
CODE = [ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "mha_core").rglob("*.py")]


def _fields(text: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(text) if f}


def test_languages_have_identical_keys():
    zh, en = catalog("zh"), catalog("en")
    assert set(zh) == set(en), sorted(set(zh) ^ set(en))
    assert len(zh) > 100


@pytest.mark.parametrize("lang", LANGS)
def test_no_empty_text(lang):
    assert all(str(v).strip() for v in catalog(lang).values())


def test_placeholders_agree_between_languages():
    zh, en = catalog("zh"), catalog("en")
    bad = [k for k in zh if _fields(zh[k]) != _fields(en[k])]
    assert not bad


def test_chinese_catalog_is_chinese():
    """Guards against an English string pasted into zh: most zh texts contain CJK characters."""
    zh = catalog("zh")
    cjk = [k for k, v in zh.items() if re.search(r"[\u4e00-\u9fff]", v)]
    assert len(cjk) / len(zh) > 0.8


def test_every_key_used_in_code_exists():
    literal = re.compile(r"""\bt\(\s*f?["']([A-Za-z0-9_.]+)(["'{])""")  # f"x.{y}" is checked elsewhere
    used = {m.group(1) for p in CODE for m in literal.finditer(p.read_text(encoding="utf-8")) if m.group(2) != "{"}
    assert used, "no keys found: the pattern is broken"
    missing = sorted(k for k in used if k not in catalog("zh"))
    assert not missing


def test_every_page_and_error_has_text():
    zh = catalog("zh")
    for page in PAGES:
        assert f"nav.{page.key}" in zh
        assert page.section in zh
    raised = set()
    for p in CODE:
        raised |= set(re.findall(r'LabError\(\s*"([a-z_]+)"', p.read_text(encoding="utf-8")))
    assert raised
    assert not sorted(k for k in raised if f"errors.{k}" not in zh)


def test_translate_fills_fields_and_marks_missing_keys():
    assert translate("en", "common.truncated", max=24, dropped=3).startswith("The sentence is long")
    assert "24" in translate("zh", "common.truncated", max=24, dropped=3)
    assert translate("en", "no.such.key") == "⟦no.such.key⟧"


@pytest.mark.parametrize("locale,lang", [("en-US", "en"), ("en", "en"), ("zh-CN", "zh"), ("fr-FR", "zh"), (None, "zh")])
def test_first_language_follows_the_browser(locale, lang):
    assert lang_from_locale(locale) == lang


def test_languages_come_from_the_catalog_folders(tmp_path, monkeypatch):
    """A third language is a third catalog folder: nothing in code names the languages."""
    import mha_core.i18n as i18n

    assert set(LANGS) == {d.name for d in i18n.CATALOG_DIR.iterdir() if d.is_dir()}
    assert LANGS[0] == i18n.DEFAULT_LANG
    for code in ("zh", "en", "fr"):
        (tmp_path / code).mkdir()
        (tmp_path / code / "common.toml").write_text('[common]\nlang_name = "x"\n', encoding="utf-8")
    monkeypatch.setattr(i18n, "CATALOG_DIR", tmp_path)
    assert i18n._languages() == ("zh", "en", "fr")
    monkeypatch.setattr(i18n, "LANGS", i18n._languages())
    assert i18n.lang_from_locale("fr-CA") == "fr" and i18n.lang_from_locale("de") == "zh"


def test_no_language_code_is_written_in_code():
    """Languages are never listed in code (the tests and the catalogs' own folder names aside)."""
    offenders = [str(p.relative_to(ROOT)) for p in CODE if re.search(r"""\(\s*["']zh["']\s*,\s*["']en["']""",
                                                                   p.read_text(encoding="utf-8"))]
    assert not offenders


def _zh_texts() -> dict[str, str]:
    """Every Chinese text a student reads: the catalog, the glossary and the sources' notes."""
    from mha_core.glossary import load_glossary
    from mha_core.sources import load_sources

    texts = dict(catalog("zh"))
    texts.update({f"glossary:{t.id}": f"{t.term('zh')}\n{t.definitions['zh']}" for t in load_glossary()})
    texts.update({f"sources:{k}": s.note("zh") for k, s in load_sources().items()})
    return texts


CORNER_QUOTES = re.compile(r"[「」『』]")
SPACE_AFTER_FULL_WIDTH = re.compile(r"[：，；！？、（“。](?:\*\*)? +")  # also past a closing **


def test_chinese_typography():
    """Chinese quotes are “” (GB/T 15834; never the corner quotes 「」), and no ASCII space follows full-width
    punctuation (“**一句话定义**： 多头注意力”)."""
    texts = _zh_texts()
    corner = sorted(k for k, v in texts.items() if CORNER_QUOTES.search(v))
    spaced = {k: m.group(0) for k, v in texts.items() for m in [SPACE_AFTER_FULL_WIDTH.search(v)]
              if m}
    assert not corner, corner
    assert not spaced, spaced


def test_the_typography_check_sees_the_slips():
    assert CORNER_QUOTES.search("默认句子「猫」") and SPACE_AFTER_FULL_WIDTH.search("**一句话定义**： 多头")
    assert SPACE_AFTER_FULL_WIDTH.search("**你正在自主探索。** 老师")
    assert not CORNER_QUOTES.search("默认句子“猫”") and not SPACE_AFTER_FULL_WIDTH.search("（h = 1）和 “it” 的")


def test_zh_names_authors_one_way():
    """“Clark 等[-@clark2019]” everywhere, never “Clark 等人[…]” beside it (issue 24, item 19)."""
    assert not sorted(k for k, v in _zh_texts().items() if re.search(r"[A-Z][a-z]+ 等人", v))
    assert re.search(r"[A-Z][a-z]+ 等人", "Clark 等人（2019，“What Does BERT Look At?”）")


def test_wording_fixed_in_issue_24():
    """Items 2, 7, 9, 22: the two-layer task is Repeat, the generation page's models share a recipe (their
    parameter budgets differ), the shared cross-attention weights are an illustration, one word for the prompt."""
    zh, en = catalog("zh"), catalog("en")
    assert "repeat task" in en["heads.count_intro"] and "copy task" not in en["heads.count_intro"]
    assert "重复任务" in zh["heads.count_intro"] and "复制任务" not in zh["heads.count_intro"]
    for key in ("generate.compare_title", "generate.share_intro"):
        assert "budget" not in en[key] and "预算" not in zh[key]
        assert "recipe" in en[key] and "训练方法" in zh[key]
    assert "own W^Q" in en["cross.masks_intro"] and "各有自己的 W^Q" in zh["cross.masks_intro"]
    assert not sorted(k for k, v in zh.items() if "提示词" in v)


def test_a_misconception_has_one_name_in_zh():
    """The quiz's category and its question title name the myth alike (issue 24 item 18: 由人指定 vs 由人设计)."""
    from mha_core.quiz import load_questions

    for lang in LANGS:
        title = next(q for q in load_questions(lang) if q.id == "myth-designed").title
        assert translate(lang, "quiz.sections.myth_designed") == title

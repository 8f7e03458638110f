"""Every source the app cites lives in assets/sources.toml: each citation marker in a catalog or quiz text names an
entry there, both languages cite the same sources, no citation is hand-typed, and the map page lists every entry
with its full reference."""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from apphelpers import open_page, shown_text
from mha_core.i18n import LANGS, catalog, cite_style
from mha_core.presets import PRESETS
from mha_core.quiz import load_questions
from mha_core.sources import (
    CITATION,
    CiteStyle,
    Source,
    cited_keys,
    inline_cite,
    load_sources,
    reading_list,
    render_citations,
)

ROOT = Path(__file__).resolve().parents[1]
CATALOG_DIR = ROOT / "assets" / "i18n"
QUIZ_DIR = ROOT / "assets" / "quiz"

# The issue's list and the knowledge point's further reading (Vaswani §3.2.2, Clark, Elhage).
REQUIRED = ("vaswani2017", "clark2019", "michel2019", "voita2019", "jain2019", "wiegreffe2019", "elhage2021",
            "olsson2022", "shazeer2019", "ainslie2023", "bhojanapalli2020", "cordonnier2020")
# A citation typed by hand instead of a marker: "Clark et al. 2019", "Clark et al. (2019)", "Clark 等，2019".
HAND_TYPED = re.compile(r"(?:et al\.|等)\s*[,，(（]?\s*(?:19|20)\d\d")


def _strings(table: dict, prefix: str = "") -> Iterator[tuple[str, str]]:
    for key, value in table.items():
        if isinstance(value, dict):
            yield from _strings(value, f"{prefix}{key}.")
        elif isinstance(value, str):
            yield f"{prefix}{key}", value


def _raw_texts(lang: str) -> dict[str, str]:
    """Every catalog and quiz string of one language as written in its file (markers not yet rendered)."""
    texts: dict[str, str] = {}
    for path in sorted((CATALOG_DIR / lang).glob("*.toml")):
        with path.open("rb") as f:
            texts.update(_strings(tomllib.load(f)))
    with (QUIZ_DIR / f"{lang}.toml").open("rb") as f:
        texts.update((f"quiz:{k}", v) for k, v in _strings(tomllib.load(f)))
    return texts


def test_the_issue_and_the_seed_sources_are_all_there():
    assert set(REQUIRED) <= set(load_sources())


@pytest.mark.parametrize("key", list(load_sources()))
def test_every_source_is_a_complete_reference(key):
    s = load_sources()[key]
    assert s.key == key and s.authors and 1990 <= s.year <= 2030
    assert s.title.strip() and s.short.strip() and s.venue.strip()
    assert s.url.startswith("https://")
    assert s.arxiv == "" or re.fullmatch(r"\d{4}\.\d{4,5}", s.arxiv)
    assert {lang for lang, _ in s.notes} == set(LANGS), "a note in every language the app speaks"
    assert len({s.note(lang) for lang in LANGS}) == len(LANGS)


@pytest.mark.parametrize("lang", LANGS)
def test_every_cited_key_is_in_the_sources_file(lang):
    sources = load_sources()
    cited = {k: cited_keys(v) for k, v in _raw_texts(lang).items() if cited_keys(v)}
    assert len(cited) >= 20, "the catalogs cite their claims"
    unknown = {k: keys for k, keys in cited.items() if not set(keys) <= set(sources)}
    assert not unknown


def test_both_languages_cite_the_same_sources_in_the_same_text():
    zh, en = _raw_texts("zh"), _raw_texts("en")
    differ = {k: (cited_keys(zh[k]), cited_keys(en[k])) for k in zh.keys() & en.keys()
              if Counter(cited_keys(zh[k])) != Counter(cited_keys(en[k]))}
    assert not differ


@pytest.mark.parametrize("lang", LANGS)
def test_no_citation_is_typed_by_hand(lang):
    """A citation is a marker, so it is checked here and written the same way everywhere."""
    typed = {k: HAND_TYPED.findall(v) for k, v in _raw_texts(lang).items() if HAND_TYPED.search(v)}
    assert not typed


@pytest.mark.parametrize("lang", LANGS)
def test_every_marker_is_rendered_where_students_read(lang):
    """No marker, malformed marker or unknown key (⟦@key⟧) reaches a page or a quiz question."""
    shown = list(catalog(lang).values())
    for q in load_questions(lang):
        shown += [q.title, q.prompt, q.explanation, q.model_answer, *(o.text for o in q.options)]
    left = [s for s in shown if "[@" in s or "[-@" in s or "⟦@" in s]
    assert not left


def test_catalogs_render_citations_in_each_language():
    assert "(Clark et al., 2019, “What Does BERT Look At?”)" in catalog("en")["map.ex_clark"]
    assert "（Clark 等，2019，“What Does BERT Look At?”）" in catalog("zh")["map.ex_clark"]
    gqa = {q.id: q for q in load_questions("en")}["gqa-shares"]
    assert "(Touvron et al., 2023, “Llama 2”)" in gqa.explanation


def _source(authors: tuple[str, ...], et_al: bool = False) -> Source:
    return Source(key="x", authors=authors, year=2019, title="A Title", short="Short", venue="V",
                  url="https://example.org", notes=(("en", "note"),), et_al=et_al)


@pytest.mark.parametrize(("authors", "et_al", "en", "zh"), [
    (("Shazeer, N.",), False, "(Shazeer, 2019, “Short”)", "（Shazeer，2019，“Short”）"),
    (("Jain, S.", "Wallace, B. C."), False, "(Jain & Wallace, 2019, “Short”)", "（Jain 和 Wallace，2019，“Short”）"),
    (("Michel, P.", "Levy, O.", "Neubig, G."), False, "(Michel et al., 2019, “Short”)", "（Michel 等，2019，“Short”）"),
    (("Elhage, N.", "Nanda, N."), True, "(Elhage et al., 2019, “Short”)", "（Elhage 等，2019，“Short”）"),
    (("de Jong, M.",), False, "(de Jong, 2019, “Short”)", "（de Jong，2019，“Short”）"),
])
def test_inline_citation_names_authors_year_and_short_title(authors, et_al, en, zh):
    sources = {"x": _source(authors, et_al)}
    assert inline_cite([("x", True)], cite_style("en"), sources) == en
    assert inline_cite([("x", True)], cite_style("zh"), sources) == zh


def test_markers_render_parenthetical_narrative_several_and_unknown():
    text = "A [@clark2019]. Clark et al. [-@clark2019] found it [@jain2019; @wiegreffe2019] [@nobody1999]."
    out = render_citations(text, cite_style("en"))
    assert out == ("A (Clark et al., 2019, “What Does BERT Look At?”). Clark et al. (2019, “What Does BERT Look "
                   "At?”) found it (Jain & Wallace, 2019, “Attention is not Explanation”; Wiegreffe & Pinter, 2019, "
                   "“Attention is not not Explanation”) (⟦@nobody1999⟧).")
    assert cited_keys(text) == ["clark2019", "clark2019", "jain2019", "wiegreffe2019", "nobody1999"]
    assert not CITATION.search("an e-mail a@b.org [not @ a cite]")
    assert render_citations("[@clark2019]", CiteStyle()) == "(Clark et al., 2019, “What Does BERT Look At?”)"


def test_every_preset_names_a_source_in_the_file():
    """The cost lab's published shapes cite papers that the map page lists in full."""
    sources = load_sources().values()
    missing = [p.key for p in PRESETS
               if not any(s.surnames[0] in p.source and str(s.year) in p.source for s in sources)]
    assert not missing


@pytest.mark.parametrize("lang", LANGS)
def test_reading_list_is_every_source_in_full(lang):
    lines = reading_list(lang, cite_style(lang)).splitlines()
    assert len(lines) == len(load_sources())
    for s in load_sources().values():
        line = next(line for line in lines if s.title in line)
        assert s.authors[0] in line and f"({s.year})" in line and s.note(lang) in line
        assert (s.arxiv and f"arXiv:{s.arxiv}" in line) or s.url in line


@pytest.mark.parametrize("lang", LANGS)
def test_map_page_lists_every_source(lang):
    text = shown_text(open_page("pages/map.py", lang))
    missing = [s.key for s in load_sources().values() if s.title not in text or s.note(lang) not in text]
    assert not missing
    assert "⟦" not in text and "[@" not in text

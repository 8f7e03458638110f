"""The app's bibliography: every cited source in one data file (assets/sources.toml), formatted per language.

Catalog and quiz texts cite with markers that :func:`render_citations` turns into text when they are loaded:

- ``[@clark2019]``  -> "(Clark et al., 2019, “What Does BERT Look At?”)", in zh "（Clark 等，2019，“…”）"
- ``[-@clark2019]`` -> "(2019, “What Does BERT Look At?”)", after a sentence that already names the authors
- ``[@a; @b]``      -> several sources in one parenthesis

so a citation is checked against the data file (tests/test_sources.py) and written the same way everywhere.
Each language's punctuation ("et al." / "等", brackets) is the ``[cite]`` table of its catalog (a CiteStyle).
Pure: no Streamlit, no i18n import (the i18n loader calls this module).
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

SOURCES_FILE = Path(__file__).resolve().parent.parent / "assets" / "sources.toml"
# [@key], [-@key], [@a; @b]: keys are lower-case letters, digits and "_".
CITATION = re.compile(r"\[(-?@[a-z0-9_]+(?:\s*;\s*-?@[a-z0-9_]+)*)\]")
_KEY = re.compile(r"(-?)@([a-z0-9_]+)")
STYLE_KEYS = ("open", "close", "sep", "between", "and_", "et_al", "dash")


@dataclass(frozen=True)
class CiteStyle:
    """One language's citation punctuation, from the ``cite.*`` keys of its catalog (these defaults otherwise)."""

    open: str = "("
    close: str = ")"
    sep: str = ", "  # between authors, year and short title
    between: str = "; "  # between two sources in one parenthesis
    and_: str = "&"  # "Jain & Wallace"
    et_al: str = "et al."  # "Clark et al."
    dash: str = " — "  # between a full reference and why it is cited

    @classmethod
    def from_texts(cls, texts: Mapping[str, object]) -> CiteStyle:
        """The style a catalog declares (``cite.open`` …, ``cite.and`` for ``and_``)."""
        found = {f: texts[f"cite.{f.rstrip('_')}"] for f in STYLE_KEYS if f"cite.{f.rstrip('_')}" in texts}
        return cls(**{f: str(v) for f, v in found.items()})


@dataclass(frozen=True)
class Source:
    """One published source: enough to write its full reference and a short inline citation."""

    key: str
    authors: tuple[str, ...]  # "Surname, I." as printed in the reference
    year: int
    title: str
    short: str  # the short title used inline
    venue: str
    url: str
    notes: tuple[tuple[str, str], ...]  # (language, why the app cites it)
    arxiv: str = ""
    et_al: bool = False  # the paper has more authors than listed

    @property
    def surnames(self) -> tuple[str, ...]:
        """The authors' surnames ("de Jong, M." -> "de Jong"; an organisation stays whole)."""
        return tuple(a.split(",")[0].strip() for a in self.authors)

    def note(self, lang: str) -> str:
        """Why the app cites this source, in ``lang`` (the file's first note when that language has none)."""
        return dict(self.notes).get(lang, self.notes[0][1])


def _source(key: str, raw: dict) -> Source:
    """Check one record of sources.toml and type it (ValueError names the record and the problem)."""
    missing = [f for f in ("authors", "year", "title", "short", "venue", "url", "note") if not raw.get(f)]
    if missing:
        raise ValueError(f"sources.toml [{key}] lacks {missing}")
    notes = tuple((lang, str(text)) for lang, text in dict(raw["note"]).items())
    if not all(text.strip() for _, text in notes):
        raise ValueError(f"sources.toml [{key}] has an empty note")
    return Source(key=key, authors=tuple(raw["authors"]), year=int(raw["year"]), title=raw["title"],
                  short=raw["short"], venue=raw["venue"], url=raw["url"], notes=notes,
                  arxiv=raw.get("arxiv", ""), et_al=bool(raw.get("et_al", False)))


@functools.cache
def load_sources(path: Path = SOURCES_FILE) -> MappingProxyType:
    """Every source by key, in file order (read once per process)."""
    with path.open("rb") as f:
        raw = tomllib.load(f)
    return MappingProxyType({key: _source(key, rec) for key, rec in raw.items()})


def short_cite(source: Source, style: CiteStyle) -> str:
    """"Clark et al., 2019"; two authors "Jain & Wallace, 2019"; one "Shazeer, 2019" (in ``style``)."""
    names = source.surnames
    if len(names) == 1 and not source.et_al:
        who = names[0]
    elif len(names) == 2 and not source.et_al:
        who = f"{names[0]} {style.and_} {names[1]}"
    else:
        who = f"{names[0]} {style.et_al}"
    return f"{who}{style.sep}{source.year}"


def inline_cite(keys: list[tuple[str, bool]], style: CiteStyle, sources: Mapping[str, Source] | None = None) -> str:
    """One parenthesis citing ``keys`` ((key, with_authors) pairs) with year and short title;
    an unknown key shows as ⟦@key⟧ (as a missing catalog key shows as ⟦key⟧) and fails the tests."""
    sources = load_sources() if sources is None else sources
    parts = []
    for key, with_authors in keys:
        src = sources.get(key)
        if src is None:
            parts.append(f"⟦@{key}⟧")
            continue
        head = short_cite(src, style) if with_authors else str(src.year)
        parts.append(f"{head}{style.sep}“{src.short}”")
    return style.open + style.between.join(parts) + style.close


def cited_keys(text: str) -> list[str]:
    """The source keys cited in a text, in order (duplicates kept)."""
    return [m.group(2) for c in CITATION.finditer(text) for m in _KEY.finditer(c.group(1))]


def render_citations(text: str, style: CiteStyle) -> str:
    """Replace every citation marker in ``text`` by its inline citation in ``style`` (a language's: i18n.cite_style)."""
    if "@" not in text:
        return text
    return CITATION.sub(lambda c: inline_cite([(m.group(2), not m.group(1)) for m in _KEY.finditer(c.group(1))],
                                              style), text)


def full_reference(source: Source, lang: str, style: CiteStyle) -> str:
    """One reference in markdown: authors (year). *Title.* Venue. arXiv link or URL — why it is cited."""
    names = list(source.authors) + (["et al."] if source.et_al else [])
    if len(names) == 1:
        who = names[0]
    elif source.et_al:
        who = ", ".join(names)
    else:
        who = ", ".join(names[:-1]) + ", & " + names[-1]
    link = (f"[arXiv:{source.arxiv}](https://arxiv.org/abs/{source.arxiv})" if source.arxiv
            else f"<{source.url}>")
    title = source.title if source.title[-1] in "?!." else source.title + "."
    return f"{who} ({source.year}). *{title}* {source.venue}. {link}{style.dash}{source.note(lang)}"


def reading_list(lang: str, style: CiteStyle, sources: Mapping[str, Source] | None = None) -> str:
    """Every source as a numbered markdown list of full references, sorted by first author and year."""
    sources = load_sources() if sources is None else sources
    ordered = sorted(sources.values(), key=lambda s: (s.surnames[0].lower(), s.year, s.key))
    return "\n".join(f"{i}. {full_reference(s, lang, style)}" for i, s in enumerate(ordered, 1))

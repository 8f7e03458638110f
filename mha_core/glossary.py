"""The one glossary, every language side by side (assets/glossary.toml): terms, definitions, variants to avoid.

The glossary page shows it; tests/test_glossary.py uses ``variants_in`` to keep every catalog string on the
canonical terms.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from mha_core.i18n import LANGS, cite_style
from mha_core.sources import render_citations
from mha_core.toy_config import ToyConfig

GLOSSARY_PATH = Path(__file__).resolve().parent.parent / "assets" / "glossary.toml"
GROUPS = ("pipeline", "heads", "cost", "related")

_SKIPPED = re.compile(r"`[^`]*`|\{[^{}]*\}")  # code spans and {placeholders}
_LATIN_GLOSS = re.compile(r"（[^（）\u4e00-\u9fff]*）")  # 词元（token）: a Latin-script gloss in full-width brackets


def _fills() -> dict[str, str]:
    """Numbers a definition names but the code owns ({toy_top}: the toy model's largest token id), so the glossary
    never disagrees with the config (torch-free)."""
    return {"{toy_top}": str(ToyConfig().vocab_size - 1)}


@dataclass(frozen=True)
class Term:
    """One glossary entry: the canonical term and a short definition in each language, and variants to avoid.

    Each mapping is keyed by language code (``<code>``, ``<code>_def``, ``<code>_avoid`` in the file), one entry
    per catalog language: a new language is new keys in the file, no new field here.
    """

    id: str
    group: str
    symbol: str
    names: Mapping[str, str]
    definitions: Mapping[str, str]       # as written: citation markers and {placeholders} not yet filled
    avoids: Mapping[str, tuple[str, ...]]

    def term(self, lang: str) -> str:
        """The canonical term in ``lang``."""
        return self.names[lang]

    def definition(self, lang: str) -> str:
        """The short definition in ``lang``, its citation markers (``[@clark2019]``) and numbers written out."""
        text = self.definitions[lang]
        for placeholder, value in _fills().items():
            text = text.replace(placeholder, value)
        return render_citations(text, cite_style(lang))

    def avoid(self, lang: str) -> tuple[str, ...]:
        """The variants of this term that text in ``lang`` must not use."""
        return self.avoids[lang]


def _term(raw: dict) -> Term:
    return Term(id=raw["id"], group=raw["group"], symbol=raw.get("symbol", ""),
                names=MappingProxyType({lang: raw[lang] for lang in LANGS}),
                definitions=MappingProxyType({lang: raw[f"{lang}_def"] for lang in LANGS}),
                avoids=MappingProxyType({lang: tuple(raw.get(f"{lang}_avoid", ())) for lang in LANGS}))


@functools.cache
def load_glossary(path: Path = GLOSSARY_PATH) -> tuple[Term, ...]:
    """Every term, in file order (grouped as the pages are); read once per process."""
    with path.open("rb") as f:
        raw = tomllib.load(f)
    terms = tuple(_term(entry) for entry in raw["term"])
    ids = [term.id for term in terms]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate glossary ids in {path.name}")
    if unknown := {term.group for term in terms} - set(GROUPS):
        raise ValueError(f"unknown glossary groups {sorted(unknown)} in {path.name}")
    return terms


@functools.cache
def _pattern(variant: str, canonical: str = "") -> re.Pattern[str]:
    """A variant as a regex: a Latin word matches whole (an "s" plural included), CJK text matches anywhere except
    where it runs on into the canonical term: "前一个词" is avoided, "前一个词元" is the term itself."""
    body = re.escape(variant)
    if variant[:1].isascii() and variant[:1].isalpha():
        body = r"(?<![A-Za-z0-9_\-])" + body
    if variant[-1:].isascii() and variant[-1:].isalpha():
        body += r"s?(?![A-Za-z0-9_\-])"
    runs_on = [canonical[k:] for k in range(1, len(canonical)) if variant.endswith(canonical[:k])]
    return re.compile(body + "".join(f"(?!{re.escape(rest)})" for rest in runs_on))


def variants_in(text: str, lang: str, terms: tuple[Term, ...] | None = None) -> list[tuple[str, str]]:
    """(term id, variant) for every avoided variant ``text`` uses; code, placeholders and English glosses skipped."""
    plain = _LATIN_GLOSS.sub(" ", _SKIPPED.sub(" ", text))  # full-width brackets: only CJK text has them
    return [(term.id, variant) for term in (terms or load_glossary()) for variant in term.avoid(lang)
            if _pattern(variant, term.term(lang)).search(plain)]


def search(terms: tuple[Term, ...], query: str) -> tuple[Term, ...]:
    """The terms whose words, symbol or definitions (either language) contain ``query``, ignoring case."""
    needle = query.strip().casefold()
    if not needle:
        return terms
    return tuple(term for term in terms
                 if any(needle in field.casefold()
                        for field in (term.symbol, *term.names.values(), *term.definitions.values())))

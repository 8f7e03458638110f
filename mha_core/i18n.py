"""Translation catalogs: every visible string, in zh and en, from assets/i18n/<lang>/*.toml.

Each TOML file holds one area of the app (``common.toml``, ``split.toml`` …); nested tables
become dotted keys, so ``[split] title = "…"`` is ``t("split.title")``.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

from mha_core.sources import CiteStyle, render_citations

DEFAULT_LANG = "zh"
CATALOG_DIR = Path(__file__).resolve().parent.parent / "assets" / "i18n"


def _languages() -> tuple[str, ...]:
    """The languages whose catalog folder exists, the default first: a new language is a new folder."""
    found = sorted(d.name for d in CATALOG_DIR.iterdir() if d.is_dir() and any(d.glob("*.toml")))
    return tuple(sorted(found, key=lambda code: code != DEFAULT_LANG))


LANGS = _languages()


def _flatten(table: dict, prefix: str = "") -> dict[str, str]:
    flat: dict[str, str] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


@functools.cache
def catalog(lang: str) -> dict[str, str]:
    """All keys of one language, merged from every file of its folder (read once per process);
    citation markers such as ``[@clark2019]`` are rendered here, once (mha_core.sources)."""
    merged: dict[str, str] = {}
    for path in sorted((CATALOG_DIR / lang).glob("*.toml")):
        with path.open("rb") as f:
            merged.update(_flatten(tomllib.load(f)))
    style = CiteStyle.from_texts(merged)
    return {key: render_citations(text, style) if isinstance(text, str) else text for key, text in merged.items()}


def cite_style(lang: str) -> CiteStyle:
    """How citations are punctuated in ``lang``: the ``[cite]`` table of its catalog."""
    return CiteStyle.from_texts(catalog(lang if lang in LANGS else DEFAULT_LANG))


def translate(lang: str, key: str, **params: object) -> str:
    """The text for ``key`` in ``lang`` with ``{name}`` fields filled; a missing key shows as ⟦key⟧."""
    text = catalog(lang if lang in LANGS else DEFAULT_LANG).get(key)
    if text is None:
        return f"⟦{key}⟧"
    return text.format(**params) if params else text


def lang_from_locale(locale: str | None) -> str:
    """Browser locale -> app language: the catalog for its primary subtag (``en-US`` -> en), else the default."""
    primary = (locale or "").replace("_", "-").split("-")[0].lower()
    return primary if primary in LANGS else DEFAULT_LANG

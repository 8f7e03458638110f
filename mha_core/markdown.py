"""User text inside markdown: escaped, so a name or a sentence can never become a link, an image or bold; and small
tables as markdown (every cell literal)."""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping, Sequence

# CommonMark's ASCII punctuation that can start or end markup, plus Streamlit's own: ``:`` (emoji shortcodes,
# ``:red[…]`` colours, ``:material/…:`` icons) and ``$`` (KaTeX). A backslash before any of them is literal.
_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~:$&])")


def escape(text: str) -> str:
    """``text`` as literal characters in Streamlit markdown (newlines kept as spaces, so no block starts)."""
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).splitlines()))


def escape_params(params: dict[str, object]) -> dict[str, object]:
    """The same parameters with every string escaped (numbers stay numbers, so ``{n:,}`` still formats)."""
    return {k: escape(v) if isinstance(v, str) else v for k, v in params.items()}


def _cell(value: object, decimals: int) -> str:
    """One table cell: a number to ``decimals`` places (an integer as it is), anything else as literal text."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return "" if math.isnan(value) else f"{float(value):.{decimals}f}"
    return escape(str(value))


PROSE_CHARS = 40  # a text cell longer than this is prose (a definition), not a label


def prose_columns(columns: Mapping[str, Sequence]) -> list[int]:
    """The 1-based positions of the columns holding prose (some cell longer than ``PROSE_CHARS``): on a phone the
    table keeps them readable and scrolls sideways, instead of squeezing them to a word a line."""
    return [i for i, values in enumerate(columns.values(), 1)
            if any(isinstance(v, str) and len(v) > PROSE_CHARS for v in values)]


def table_markdown(columns: Mapping[str, Sequence], decimals: int = 3) -> str:
    """Columns (header -> values, all of one length) as a markdown table: every text literal (escaped), numbers to
    ``decimals`` places and right-aligned, so that a column of them lines up at the decimal point."""
    heads = list(columns)
    cols = [list(columns[h]) for h in heads]
    if len({len(c) for c in cols}) > 1:
        raise ValueError(f"table_markdown: columns of different lengths {[len(c) for c in cols]}")
    numeric = [bool(c) and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in c) for c in cols]
    lines = ["| " + " | ".join(escape(h) for h in heads) + " |",
             "|" + "|".join("---:" if n else ":---" for n in numeric) + "|"]
    lines += ["| " + " | ".join(_cell(c[i], decimals) for c in cols) + " |" for i in range(len(cols[0]) if cols else 0)]
    return "\n".join(lines)

"""User text inside markdown: escaped, so a name or a sentence can never become a link, an image or bold."""

from __future__ import annotations

import re

# CommonMark's ASCII punctuation that can start or end markup, plus Streamlit's own: ``:`` (emoji shortcodes,
# ``:red[…]`` colours, ``:material/…:`` icons) and ``$`` (KaTeX). A backslash before any of them is literal.
_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~:$&])")


def escape(text: str) -> str:
    """``text`` as literal characters in Streamlit markdown (newlines kept as spaces, so no block starts)."""
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).splitlines()))


def escape_params(params: dict[str, object]) -> dict[str, object]:
    """The same parameters with every string escaped (numbers stay numbers, so ``{n:,}`` still formats)."""
    return {k: escape(v) if isinstance(v, str) else v for k, v in params.items()}

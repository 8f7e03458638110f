"""Short answers (a word, a name or a symbol): one normaliser decides which typed forms mean the same answer, so
"W^O", "W_O", "WO", "Wᴼ" and "ｗ＿ｏ" all match W^O while "W^Q" does not; ``clean`` is what a wrong answer is stored as.

Pure functions, no I/O: the grader (mha_core.quiz.grading) and the bank's checks (mha_core.quiz.bank) share them.
"""

from __future__ import annotations

import re
import unicodedata

MAX_SHORT = 60  # characters kept of a typed answer (the page's box takes no more)
# Marks that only write a symbol or space a phrase, never change the answer: blanks, sub/superscript marks (_ ^),
# TeX braces and math delimiters, parentheses, hyphens and dashes, dots and commas (ASCII and CJK), quotes.
_DROP = re.compile(r"[\s_^{}()\[\]$\\\-‐‑‒–—―·・.。,，、;；:：'\"“”‘’`]+")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+")  # "the softmax" is "softmax"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def normalise(text: str) -> str:
    """The form two answers share when they mean the same: NFKC (full-width → half-width, ᴼ → O, ₒ → o), case
    folded, control characters, a leading English article and every mark in ``_DROP`` removed."""
    folded = _CONTROL.sub("", unicodedata.normalize("NFKC", text)).casefold().strip()
    return _DROP.sub("", _ARTICLE.sub("", folded))


def clean(text: str) -> str:
    """A typed answer as stored and shown back (wrong answers are kept as typed): NFKC, no control characters,
    blanks collapsed, at most MAX_SHORT characters."""
    flat = " ".join(_CONTROL.sub(" ", unicodedata.normalize("NFKC", text)).split())
    return flat[:MAX_SHORT].rstrip()


def match(typed: str, accepted: tuple[str, ...]) -> bool:
    """Whether ``typed`` is one of the accepted forms once both are normalised (an empty form matches nothing)."""
    key = normalise(typed)
    return bool(key) and any(key == normalise(form) for form in accepted)

"""Join codes: 8 characters from a 32-symbol alphabet without look-alikes (40 bits from ``secrets``)."""

from __future__ import annotations

import re
import secrets

ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no I, O, 0, 1: nothing to misread on a projector
LENGTH = 8
BITS = LENGTH * (len(ALPHABET).bit_length() - 1)
_SEPARATORS = re.compile(r"[\s\-_.·]+")


def new_code() -> str:
    """A fresh random join code, e.g. ``K7QX2MPA``."""
    return "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))


def normalize_code(text: object) -> str | None:
    """The code as stored (upper case, spaces and dashes dropped), or None if it cannot be one."""
    if not isinstance(text, str):
        return None
    code = _SEPARATORS.sub("", text).upper()
    if len(code) != LENGTH or any(c not in ALPHABET for c in code):
        return None
    return code


def pretty(code: str) -> str:
    """The code in two halves for reading aloud: ``K7QX-2MPA``."""
    half = len(code) // 2
    return f"{code[:half]}-{code[half:]}"

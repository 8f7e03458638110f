"""Display names: trimmed, 1–40 characters of any script or emoji, no control characters."""

from __future__ import annotations

import unicodedata

from mha_core.errors import LabError

MAX_NAME = 40


def clean_name(raw: object) -> str:
    """The name to store (NFC, trimmed) or a LabError saying what is wrong with it."""
    text = unicodedata.normalize("NFC", raw if isinstance(raw, str) else "").strip()
    if not text:
        raise LabError("class_name_empty", "Please type a display name.")
    if len(text) > MAX_NAME:
        raise LabError("class_name_too_long", "A display name has at most {max} characters.", max=MAX_NAME)
    if any(unicodedata.category(c) in ("Cc", "Cs") for c in text):
        raise LabError("class_name_control", "A display name cannot contain line breaks or control characters.")
    return text

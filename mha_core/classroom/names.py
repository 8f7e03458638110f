"""Display names: trimmed, 1–40 characters of any script or emoji, no control characters, something visible;
and the same names made safe to show (bidirectional overrides neutralised on the dashboard and in the CSV)."""

from __future__ import annotations

import hashlib
import re
import unicodedata

from mha_core.errors import LabError

MAX_NAME = 40
# Characters that draw nothing although they are letters or symbols (fillers, blank braille, Mongolian separator).
_BLANK_LOOKALIKES = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")
# Embeddings, overrides and isolates (LRE…RLO, LRI…PDI) and the implicit marks: they reorder what follows them,
# so a name could make a neighbouring cell or the next CSV field read backwards.
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")


def _invisible(c: str) -> bool:
    return c.isspace() or c in _BLANK_LOOKALIKES or unicodedata.category(c) in ("Cf", "Mn", "Me", "Zs")


def clean_name(raw: object) -> str:
    """The name to store (NFC, trimmed) or a LabError saying what is wrong with it."""
    text = unicodedata.normalize("NFC", raw if isinstance(raw, str) else "").strip()
    if not text:
        raise LabError("class_name_empty")
    if len(text) > MAX_NAME:
        raise LabError("class_name_too_long", max=MAX_NAME)
    if any(unicodedata.category(c) in ("Cc", "Cs") for c in text):
        raise LabError("class_name_control")
    if all(_invisible(c) for c in text):
        raise LabError("class_name_invisible")
    return text


def shown_name(name: str) -> str:
    """A stored name as the dashboard and the CSV show it: bidirectional controls removed (the letters of any
    script, right-to-left ones included, stay as they are)."""
    return BIDI_CONTROLS.sub("", name)


NAME_KEY_LENGTH = 128


def name_key(name: str) -> str:
    """What makes two display names the same within a class: NFKC, case folded, format characters (zero-width,
    bidirectional controls) dropped, runs of white space made one space; long keys end in a hash (a bounded
    column). "Ann", "ＡＮＮ", " ann " and "A\u200bnn" are one name."""
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    text = " ".join(text.split())
    if len(text) <= NAME_KEY_LENGTH:
        return text
    return text[:NAME_KEY_LENGTH - 41] + "#" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:40]


PSEUDONYM_HEX = 8  # 32 bits: two of 120 students share one with a chance of about 1 in 600,000


def pseudonym(code: str, key: str) -> str:
    """An anonymous class's student as the teacher's lists and CSVs name them: stable within the class, unlinkable
    across classes, and not the student id itself (that id in a link signs the student in)."""
    digest = hashlib.sha256(f"mha-anonymous:{code}:{key}".encode()).hexdigest()
    return digest[:PSEUDONYM_HEX].upper()

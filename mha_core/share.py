"""Shareable links: settings <-> URL query values, with hostile or odd values clamped or ignored.

Pure functions (no Streamlit): ``parse_query`` turns raw query values into clean settings and a
list of what it had to change; ``to_query`` is its inverse for the current settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from mha_core.settings import D_HEAD, D_MODEL, FIXED, H_DIV, LINKED, H, Setting, clamp


@dataclass(frozen=True)
class Parsed:
    """Clean settings from a URL, and the query keys whose values had to be clamped or dropped."""

    values: dict[str, object] = field(default_factory=dict)
    adjusted: tuple[str, ...] = ()


def _int(raw: str) -> tuple[int | None, bool]:
    """A whole number read from a query value, and whether it was written exactly so (``"4"``).

    Anything else that still reads as a number (``"3.7"``, ``"1_2"``, ``" 4"``, ``"2.0"``) is rounded and
    reported like a clamped value, so the student is told the link asked for something else.
    """
    try:
        value = float(raw.strip())
    except (ValueError, AttributeError, OverflowError):
        return None, False
    if value != value or abs(value) >= 1e9:  # NaN and huge are garbage
        return None, False
    whole = round(value)
    return whole, raw == str(whole)


def _read(setting: Setting, raw: str) -> tuple[object, bool]:
    """One query value made valid for its setting: (clean value or None to drop it, whether it had to change)."""
    if setting.kind is bool:
        return (raw == "1", False) if raw in ("0", "1") else (None, True)
    if setting.kind is str and setting.options:
        return (raw, False) if raw in setting.options else (None, True)
    if setting.kind is str:  # free text: control characters dropped, cut to length, blank means no request
        text = "".join(ch for ch in str(raw) if ch.isprintable() or ch in "\n\t")
        changed = text != raw or len(text) > (setting.max_chars or len(text))
        return (text[:setting.max_chars] if text.strip() else None), changed
    v, exact = _int(raw)
    if v is None:
        return None, True
    clean, changed = clamp(setting, v)  # the same rule as a forged widget value's (mha_core.settings.clamp)
    return clean, changed or not exact


def parse_query(query: Mapping[str, str]) -> Parsed:
    """Settings a URL asks for, each made valid (clamped to its range, snapped to an option, or dropped)."""
    out: dict[str, object] = {}
    adjusted: list[str] = []
    for setting in LINKED:
        if setting.query not in query:
            continue
        value, changed = _read(setting, query[setting.query])
        if changed:
            adjusted.append(setting.query)
        if value is not None:
            out[setting.key] = value
    free_keys, fixed_keys = {H.query, D_HEAD.query} & set(query), {D_MODEL.query, H_DIV.query} & set(query)
    if FIXED.query not in query:  # the mode a link implies: only h and d_head (links made before d_model was kept
        if free_keys and not fixed_keys:  # fixed by default) mean the free mode; only d_model and h, the fixed one
            out[FIXED.key] = False
        elif fixed_keys and not free_keys:
            out[FIXED.key] = True
    return Parsed(out, tuple(adjusted))


def to_query(state: Mapping[str, object]) -> dict[str, str]:
    """The query values that reproduce these settings (only keys present in ``state``)."""
    return {s.query: _text(s, state[s.key]) for s in LINKED if s.key in state}


def _text(setting: Setting, value: object) -> str:
    """One setting's query value: "1"/"0" for a switch, a whole number as written (a number input's 5.0 is "5")."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if setting.kind is int:
        return str(clamp(setting, value)[0])
    return str(value)

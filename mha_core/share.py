"""Shareable links: settings <-> URL query values, with hostile or odd values clamped or ignored.

Pure functions (no Streamlit): ``parse_query`` turns raw query values into clean settings and a
list of what it had to change; ``to_query`` is its inverse for the current settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from mha_core.i18n import LANGS
from mha_core.inputs import WEIGHT_MODES
from mha_core.limits import D_HEAD_RANGE, D_HEAD_STEP, D_MODEL_CHOICES, H_RANGE, MAX_SENTENCE, SEED_RANGE

HEAD_RANGE = (0, H_RANGE[1] - 1)

# query key -> session-state key
KEYS = {"lang": "lang", "h": "h", "dh": "d_head", "fixed": "fixed", "dm": "d_model", "hd": "h_div",
        "s": "sentence", "w": "weight_mode", "seed": "seed", "causal": "causal", "head": "head"}


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


def _clamp(v: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, v))


def parse_query(query: Mapping[str, str]) -> Parsed:
    """Settings a URL asks for, each made valid (clamped to its range or dropped)."""
    out: dict[str, object] = {}
    adjusted: list[str] = []

    def number(qkey: str, lo: int, hi: int, step: int = 1) -> None:
        if qkey not in query:
            return
        v, exact = _int(query[qkey])
        if v is None:
            adjusted.append(qkey)
            return
        clean = _clamp(round(v / step) * step, lo, hi)
        if clean != v or not exact:
            adjusted.append(qkey)
        out[KEYS[qkey]] = clean

    def choice(qkey: str, options: tuple, convert=str) -> None:
        if qkey not in query:
            return
        try:
            v = convert(query[qkey])
        except (ValueError, TypeError):
            v = None
        if v in options:
            out[KEYS[qkey]] = v
        else:
            adjusted.append(qkey)

    choice("lang", LANGS)
    number("h", *H_RANGE)
    number("dh", *D_HEAD_RANGE, D_HEAD_STEP)
    choice("fixed", ("0", "1"))
    if "fixed" in out:
        out["fixed"] = out["fixed"] == "1"
    elif "fixed" not in query and {"h", "dh"} & set(query) and not {"dm", "hd"} & set(query):
        out["fixed"] = False  # a link that sets only h and d_head (made before d_model was kept fixed by default)
    elif "fixed" not in query and {"dm", "hd"} & set(query) and not {"h", "dh"} & set(query):
        out["fixed"] = True
    if "dm" in query:
        v, exact = _int(query["dm"])
        if v is None:
            adjusted.append("dm")
        else:
            nearest = min(D_MODEL_CHOICES, key=lambda c: abs(c - v))
            if nearest != v or not exact:
                adjusted.append("dm")
            out["d_model"] = nearest
    number("hd", *H_RANGE)
    choice("w", WEIGHT_MODES)
    number("seed", *SEED_RANGE)
    choice("causal", ("0", "1"))
    if "causal" in out:
        out["causal"] = out["causal"] == "1"
    number("head", *HEAD_RANGE)
    if "s" in query:
        text = "".join(ch for ch in str(query["s"]) if ch.isprintable() or ch in "\n\t")
        if text != query["s"] or len(text) > MAX_SENTENCE:
            adjusted.append("s")
        if text.strip():
            out["sentence"] = text[:MAX_SENTENCE]
    return Parsed(out, tuple(adjusted))


def to_query(state: Mapping[str, object]) -> dict[str, str]:
    """The query values that reproduce these settings (only keys present in ``state``)."""
    query: dict[str, str] = {}
    for qkey, skey in KEYS.items():
        if skey not in state:
            continue
        v = state[skey]
        query[qkey] = ("1" if v else "0") if isinstance(v, bool) else str(v)
    return query

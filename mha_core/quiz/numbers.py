"""Reading a typed number robustly (separators, exponents, full-width digits, K/M/G, KiB/MiB/GiB)
and writing numbers back in one canonical form. Never eval."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Context, Decimal
from fractions import Fraction
from types import MappingProxyType

from mha_core.errors import LabError

MAX_CHARS = 60
MAX_EXPONENT = 30
# Every answer that is a whole number in the question's stated unit (parameters, bytes, cache sizes: every numeric
# question of the bank today) must be typed exactly: "4.19M" cannot tell 4,194,304 from 4,198,400. Only an answer
# that is genuinely not whole may be typed rounded, within this relative error and never as far as the nearest
# documented wrong answer (answer_tolerance).
ROUNDED_REL_TOL = Fraction(1, 200)

# Counts take SI letters, "B"/"T" as the cost lab writes parameters ("6.74 B"), and 万/亿.
_COUNT_SCALES = {"k": 10**3, "m": 10**6, "g": 10**9, "b": 10**9, "t": 10**12, "万": 10**4, "亿": 10**8}
_BYTE_SCALES = {
    "b": 1, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
}


@dataclass(frozen=True)
class Unit:
    """How a question wants its number: the stated unit (``scale`` base units each), its display
    symbol, and the suffixes a student may type instead."""

    key: str
    scale: int
    symbol: str
    suffixes: MappingProxyType

    def allowed(self) -> str:
        """The suffixes a student may type, for an error message."""
        return ", ".join(s for s in ("K", "M", "G", "B", "万", "亿", "KiB", "MiB", "GiB", "×")
                         if s.casefold() in self.suffixes)


UNITS: MappingProxyType = MappingProxyType({
    "count": Unit("count", 1, "", MappingProxyType(_COUNT_SCALES)),
    "ratio": Unit("ratio", 1, "×", MappingProxyType({"x": 1, "×": 1, "倍": 1})),
    "MiB": Unit("MiB", 2**20, "MiB", MappingProxyType(_BYTE_SCALES)),
    "GiB": Unit("GiB", 2**30, "GiB", MappingProxyType(_BYTE_SCALES)),
})

_KNOWN_SUFFIXES = frozenset(s for u in UNITS.values() for s in u.suffixes)
_NUMBER = re.compile(
    r"""(?P<sign>[+-]?)
        (?P<int>\d{1,3}(?:,\d{3})+|\d{1,3}(?:[ _']\d{3})+|\d*)
        (?:\.(?P<frac>\d*))?
        (?:e(?P<exp>[+-]?\d+)|\s*[x×*]\s*10\s*(?:\^|\*\*)\s*(?P<exp10>[+-]?\d+))?
        \s*(?P<suffix>.*)""",
    re.VERBOSE | re.IGNORECASE,
)


@dataclass(frozen=True)
class Parsed:
    """A typed number in base units; ``rounded`` when typed with a coarser scale than the stated unit."""

    value: Fraction
    rounded: bool


def _normalise(text: str) -> str:
    """Full-width forms to ASCII (NFKC), Chinese full stop to '.', all kinds of spaces to ' '."""
    text = unicodedata.normalize("NFKC", text).replace("。", ".")
    return " ".join(text.split())


def parse_number(text: str, unit: str = "count") -> Parsed:
    """The number a student typed, in base units of ``unit`` (a key of UNITS).

    Raises LabError ``quiz_empty``, ``quiz_not_number`` or ``quiz_bad_unit`` (all translated).
    """
    spec = UNITS[unit]
    text = _normalise(text)
    if not text:
        raise LabError("quiz_empty")
    if len(text) > MAX_CHARS:
        raise LabError("quiz_not_number")
    m = _NUMBER.fullmatch(text)
    if not m or not (m["int"] or m["frac"]):
        raise LabError("quiz_not_number")
    digits = re.sub(r"[, _']", "", m["int"]) + (m["frac"] or "")
    exp_text = m["exp"] or m["exp10"] or "0"
    exponent = int(exp_text) - len(m["frac"] or "")
    if abs(int(exp_text)) > MAX_EXPONENT:
        raise LabError("quiz_not_number")
    value = Fraction(int(digits)) * Fraction(10) ** exponent
    if m["sign"] == "-":
        value = -value
    suffix = m["suffix"].strip().casefold()
    if suffix == "":
        return Parsed(value * spec.scale, rounded=False)
    if suffix not in spec.suffixes:
        if suffix not in _KNOWN_SUFFIXES:
            raise LabError("quiz_not_number")
        raise LabError("quiz_bad_unit", allowed=spec.allowed())
    scale = spec.suffixes[suffix]
    return Parsed(value * scale, rounded=scale > spec.scale)


def answer_tolerance(expected: Fraction, scale: int, wrong: Iterable[Fraction] = ()) -> Fraction:
    """The absolute band (base units) around an answer: 0 when it is whole in the stated unit (``scale`` base units),
    else ROUNDED_REL_TOL of it, cut to a third of the distance to the nearest documented wrong answer."""
    if (expected / scale).denominator == 1:
        return Fraction(0)
    band = abs(expected) * ROUNDED_REL_TOL
    gaps = [abs(w - expected) for w in wrong if w != expected]
    return min([band, *(gap / 3 for gap in gaps)])


def matches(parsed: Parsed, expected: Fraction, tolerance: Fraction = Fraction(0)) -> bool:
    """Exact, or within ``tolerance`` (answer_tolerance) when the student rounded on purpose with a coarser scale.

    A rounded answer to a question that wants the exact number raises LabError("quiz_exact") (translated, grades
    nothing): the student typed a format, not a wrong number, and may type all the digits.
    """
    if parsed.value == expected:
        return True
    if parsed.rounded and not tolerance:
        raise LabError("quiz_exact")
    return parsed.rounded and abs(parsed.value - expected) <= tolerance


def canonical_number(value: Fraction) -> str:
    """One string per number, for storage and aggregation: '1048576', '0.125', '-3' (p/q if not decimal)."""
    if value.denominator == 1:
        return str(value.numerator)
    den = value.denominator
    while den % 2 == 0:
        den //= 2
    while den % 5 == 0:
        den //= 5
    if den != 1:
        return f"{value.numerator}/{value.denominator}"
    exact = Context(prec=200).divide(Decimal(value.numerator), Decimal(value.denominator))
    return format(exact.normalize(), "f")


def format_value(value: Fraction, unit: str) -> str:
    """A value in base units, written in the question's stated unit: '1,048,576', '512 MiB', '4×'."""
    spec = UNITS[unit]
    shown = value / spec.scale
    if shown.denominator == 1:
        text = f"{shown.numerator:,}"
    else:
        text = canonical_number(shown)
    if not spec.symbol:
        return text
    return f"{text}{spec.symbol}" if spec.symbol == "×" else f"{text} {spec.symbol}"

"""Numbers a person reads: parameter counts in K/M/B, bytes in KiB…GiB, FLOPs in K…P.

Language-independent on purpose: the same symbols are used in the zh and en pages.
Parameters and FLOPs use powers of 1000 (as papers do: "7B"); bytes use powers of 1024 (KiB, MiB …).
"""

from __future__ import annotations

from dataclasses import dataclass

PARAM_UNITS = ("", "K", "M", "B", "T")
BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")
FLOP_UNITS = ("", "K", "M", "G", "T", "P", "E")


@dataclass(frozen=True)
class Unit:
    """A unit to scale a value (or a chart axis) by: value / factor, then the symbol."""

    symbol: str
    factor: int


def pick_unit(value: float, base: int, symbols: tuple[str, ...]) -> Unit:
    """The smallest unit in which |value| shows with at most three digits before the point (< 1000)."""
    magnitude = abs(value)
    i = 0
    while i + 1 < len(symbols) and float(f"{magnitude / base**i:.3g}") >= 1000:
        i += 1
    return Unit(symbols[i], base**i)


def _parts(value: float, base: int, symbols: tuple[str, ...]) -> tuple[str, str]:
    """(number text, unit symbol): exact with thousands separators below ``base``, else 3 significant digits."""
    unit = pick_unit(value, base, symbols)
    scaled = value / unit.factor
    return (f"{scaled:,.0f}" if unit.factor == 1 else _three_digits(scaled)), unit.symbol


def _three_digits(x: float) -> str:
    """Three significant digits without scientific notation: 2.36, 28.3, 512."""
    rounded = abs(float(f"{x:.3g}"))
    digits = 3 if rounded < 1 else max(0, 3 - len(str(int(rounded))))
    return f"{x:.{digits}f}"


def format_params(n: float) -> str:
    """2362368 -> "2.36 M", 6738415616 -> "6.74 B", 512 -> "512"."""
    number, symbol = _parts(n, 1000, PARAM_UNITS)
    return f"{number} {symbol}".rstrip()


def format_bytes(n: float) -> str:
    """524288 -> "512 KiB", 2**30 -> "1.00 GiB", 100 -> "100 B", 1000 -> "0.977 KiB"."""
    number, symbol = _parts(n, 1024, BYTE_UNITS)
    return f"{number} {symbol}"


def format_flops(n: float) -> str:
    """FLOPs with SI prefixes: 3.2e9 -> "3.20 GFLOP", 640 -> "640 FLOP"."""
    number, symbol = _parts(n, 1000, FLOP_UNITS)
    return f"{number} {symbol}FLOP"


def params_unit(n: float) -> Unit:
    """The unit to put parameter counts up to n on a chart axis."""
    return pick_unit(n, 1000, PARAM_UNITS)


def bytes_unit(n: float) -> Unit:
    """The unit to put byte counts up to n on a chart axis."""
    return pick_unit(n, 1024, BYTE_UNITS)


def flops_unit(n: float) -> Unit:
    """The unit to put FLOP counts up to n on a chart axis."""
    return pick_unit(n, 1000, FLOP_UNITS)


def head_name(layer: int, head: int) -> str:
    """"L2·H5": one head of a multi-layer model, the same in every language and short enough for a phone."""
    return f"L{layer}·H{head}"

"""Horizontal bar charts as the app's canvas paints them (no Altair): each bar's name, value and colour, and the
value axis's ends and ticks (Vega's ``zero`` and ``nice``). Each function takes exactly its Altair builder's
arguments (``base.bar``, ``generate.next_token_bars``, ``real.pair_row``); the builders still make the downloads
and the table views. ``bar_axis`` is also the value axis of ``charts.plot``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mha_core.charts.matrix import CanvasChart, as_labels
from mha_core.charts.palette import NEUTRAL, NOUN_COLOURS, OTHER_COLOUR, head_colour


@dataclass(frozen=True)
class BarsCanvas(CanvasChart):
    """Horizontal bars as the canvas draws them: one per name, top to bottom in the given order, from 0 to its value
    on an axis over ``domain`` with gridlines at ``ticks``; a pointer over a bar names it and its value."""

    title: str
    names: tuple[str, ...]
    values: tuple[float | None, ...]  # 4 decimals, as Vega's data (None: not a number, no bar)
    colours: tuple[str, ...]
    value_title: str
    domain: tuple[float, float]
    ticks: tuple[float, ...]
    height: int                       # the plot's height, px (the bars share it)
    kind: str = "bars"


BAR_TICKS = 5  # about this many ticks on a bar chart's value axis


def tick_step(span: float, count: int = BAR_TICKS) -> float:
    """The round step (1, 2 or 5 × 10^k) that cuts ``span`` into about ``count`` parts, as d3's ticks (Vega's) do."""
    raw = span / count
    scale = 10.0 ** np.floor(np.log10(raw))
    error = raw / scale
    step = 10.0 if error >= 7.07 else 5.0 if error >= 3.16 else 2.0 if error >= 1.41 else 1.0
    return float(f"{step * scale:.12g}")


def bar_axis(values: np.ndarray, domain: tuple[float, float] | None = None,
             zero: bool = True) -> tuple[tuple[float, float], tuple[float, ...]]:
    """A value axis: ``domain`` as given, else the values' extremes (and 0, with ``zero``) rounded out to a tick
    (Vega's ``zero`` and ``nice``); and its ticks."""
    if domain is None:
        finite = values[np.isfinite(values)]
        lo, hi = float(finite.min(initial=0.0)), float(finite.max(initial=0.0))
        lo, hi = (min(0.0, lo), max(0.0, hi)) if zero or not finite.size else (lo, hi)
        if hi - lo <= 0:
            hi = 1.0
        step = tick_step(hi - lo)
        lo, hi = step * np.floor(lo / step + 1e-9), step * np.ceil(hi / step - 1e-9)
    else:
        lo, hi = domain
        step = tick_step(hi - lo)
    ticks = np.arange(np.ceil(lo / step - 1e-9), np.floor(hi / step + 1e-9) + 1) * step
    def tidy(x: float) -> float:
        return float(f"{x:.12g}") + 0.0  # 1.4, not 1.4000000000000001; 0.0, not -0.0

    return (tidy(lo), tidy(hi)), tuple(tidy(x) for x in ticks)


def _bars(values: Sequence[float] | np.ndarray, names: Sequence[str], colours: Sequence[str], *, title: str,
          value_title: str, height: int, domain: tuple[float, float] | None = None) -> BarsCanvas:
    v = np.round(np.asarray(values, dtype=float), 4)
    (lo, hi), ticks = bar_axis(v, domain)
    return BarsCanvas(title, as_labels(names), tuple(float(x) if np.isfinite(x) else None for x in v),
                      tuple(colours), value_title, (lo, hi), ticks, height)


def bar(values: Sequence[float], names: Sequence[str], *, title: str = "", value_title: str = "",
        colours: Sequence[str] | None = None, height: int = 200, step: int | None = None) -> BarsCanvas:
    """base.bar's chart: one bar per name in ``colours`` (default: head colours), ``step`` px per bar or the plot
    ``height`` shared."""
    shades = colours if colours is not None else [head_colour(i) for i in range(len(names))]
    return _bars(values, names, shades, title=title, value_title=value_title,
                 height=step * len(names) if step else height)


def next_token_bars(probs: np.ndarray, names: Sequence[str], *, top: int = 5, title: str = "",
                    value_title: str = "") -> BarsCanvas:
    """charts.generate.next_token_bars's chart: the ``top`` likeliest next tokens, grey, on 0..1."""
    p = np.asarray(probs, dtype=float)
    order = np.argsort(-p, kind="stable")[:top]
    return _bars(p[order], [names[i] for i in order], [NEUTRAL] * len(order), title=title,
                 value_title=value_title, height=24 * top, domain=(0.0, 1.0))


def pair_row(weights: np.ndarray, labels: Sequence[str], nouns: Sequence[Sequence[int]], *, title: str,
             value_title: str) -> BarsCanvas:
    """charts.real.pair_row's chart: the pronoun's weights on 0..1, each noun's pieces in that noun's colour."""
    colours = [OTHER_COLOUR] * len(labels)
    for k, ix in enumerate(nouns):
        for j in ix:
            colours[j] = NOUN_COLOURS[k]
    return _bars(weights, labels, colours, title=title, value_title=value_title, height=18 * len(labels),
                 domain=(0.0, 1.0))

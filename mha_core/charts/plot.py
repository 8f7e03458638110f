"""What the app's canvas paints of the line and bar charts over an x axis (no Altair): the cost lab's four charts and
``base.lines`` (why, myths). Each function takes exactly its Altair builder's arguments and gives the same points,
colours, dashes, axes and tooltips; the Altair builders still make the downloads and the table views."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mha_core.charts.bars import bar_axis
from mha_core.charts.matrix import CanvasChart, as_labels
from mha_core.charts.palette import BASE_COLOUR, COST_DASHES, OKABE_ITO, PICKED_COLOUR, head_colour
from mha_core.cost_model import FlopsPoint, HeadSplit, KvPoint
from mha_core.units import bytes_unit, flops_unit, format_bytes, format_flops, format_params, params_unit

SHAPES = ("circle", "square", "triangle-up", "cross", "diamond", "triangle-right", "triangle-down", "triangle-left")
VEGA_DASHES = ((1, 0), (4, 2), (2, 1), (1, 1), (1, 2, 4, 2))  # Vega-Lite's default strokeDash range (px)
HEIGHT = 260       # a cost chart's height, px, axes included (its canvas: the plot alone, 60 px less)
LINE_HEIGHT = 360  # ... with a legend above the plot as well (the plot: 140 px less)


@dataclass(frozen=True)
class Series:
    """One named series: its points (x as a number, or the index of a named x), how they are drawn, and what a
    pointer over each point says."""

    name: str
    colour: str
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    mark: str = "line"                 # "line" (with points when shape is set) or "bar"
    dash: tuple[float, ...] = ()       # a line's dash pattern in px (empty: solid)
    shape: str = "circle"              # each point's symbol (SHAPES; "": none)
    point_colours: tuple[str, ...] = ()  # each point's own colour (the picked h), else the series'
    labels: tuple[str, ...] = ()       # a text above each point or bar
    tips: tuple[str, ...] = ()         # each point's tooltip (lines joined by a newline)


@dataclass(frozen=True)
class PlotCanvas(CanvasChart):
    """A chart of series over an x axis, numeric (linear or log 2) or of named values in order."""

    title: str
    series: tuple[Series, ...]
    x_title: str
    y_title: str
    x_names: tuple[str, ...]           # the named x values in order (empty: a numeric x)
    x_domain: tuple[float, float]
    x_ticks: tuple[float, ...]
    x_log: bool
    y_domain: tuple[float, float]
    y_ticks: tuple[float, ...]
    height: int                        # the plot's height, px
    legend_top: bool = False           # the legend stacked above the plot (a phone's width), else in rows below
    kind: str = "plot"


def _num(v: float) -> str:
    """A number as Vega's tooltip shows a field without a format (up to 4 significant decimals)."""
    return f"{v:.4g}" if abs(v) < 1e4 else f"{v:,.0f}"


def log2_axis(xs: np.ndarray) -> tuple[tuple[float, float], tuple[float, ...]]:
    """A log-2 axis: from the power of 2 at or below the least x to the one at or above the largest, a tick at each."""
    lo, hi = 2.0 ** math.floor(math.log2(float(xs.min()))), 2.0 ** math.ceil(math.log2(float(xs.max())))
    return (lo, hi), tuple(2.0 ** k for k in range(int(math.log2(lo)), int(math.log2(hi)) + 1))


def _plot(title: str, series: Sequence[Series], *, x_title: str, y_title: str, height: int, x_names: Sequence[str] = (),
          x_zero: bool = True, x_log: bool = False, legend_top: bool = False) -> PlotCanvas:
    ys = np.array([y for s in series for y in s.ys], dtype=float)
    xs = np.array([x for s in series for x in s.xs], dtype=float)
    if x_names:
        x_domain, x_ticks = (-0.5, len(x_names) - 0.5), tuple(float(i) for i in range(len(x_names)))
    elif x_log:
        x_domain, x_ticks = log2_axis(xs)
    else:
        x_domain, x_ticks = bar_axis(xs, zero=x_zero)
    y_domain, y_ticks = bar_axis(ys)
    return PlotCanvas(title, tuple(series), x_title, y_title, as_labels(x_names), x_domain, x_ticks, x_log, y_domain,
                      y_ticks, height, legend_top)


def lines(x: Sequence[float], series: dict[str, Sequence[float]], *, title: str = "", x_title: str = "",
          y_title: str = "", log_x: bool = False, height: int = 240, points: bool = True) -> PlotCanvas:
    """base.lines's chart: one line per series in head colours, each with its dash and point shape (readable in
    grey), the legend below."""
    xs = tuple(float(v) for v in x)
    drawn = [Series(name, head_colour(i), xs, tuple(float(v) for v in ys), dash=VEGA_DASHES[i % len(VEGA_DASHES)],
                    shape=SHAPES[i % len(SHAPES)] if points else "",
                    tips=tuple(f"{name}\n{x_title or 'x'}: {_num(a)}\n{y_title or 'value'}: {b:.3f}"
                               for a, b in zip(xs, ys, strict=True)))
             for i, (name, ys) in enumerate(series.items())]
    return _plot(title, drawn, x_title=x_title, y_title=y_title, height=height, x_zero=False, x_log=log_x)


def _picked(points: Sequence[HeadSplit], current_h: int) -> tuple[str, ...]:
    return tuple(PICKED_COLOUR if p.n_heads == current_h else BASE_COLOUR for p in points)


def params_vs_heads(
    points: Sequence[HeadSplit], *, current_h: int, title: str = "", x_title: str, y_title: str, d_head_title: str,
    flops_title: str,
) -> PlotCanvas:
    """charts.cost.params_vs_heads: parameters per layer for every h, the picked h's point in its own colour."""
    unit = params_unit(max(p.params for p in points))
    tips = tuple(f"h: {p.n_heads}\n{d_head_title}: {p.d_head}\n{y_title}: {format_params(p.params)}\n"
                 f"{flops_title}: {format_flops(p.flops_per_token)}" for p in points)
    line = Series("", BASE_COLOUR, tuple(float(i) for i in range(len(points))),
                  tuple(p.params / unit.factor for p in points), point_colours=_picked(points, current_h), tips=tips)
    return _plot(title, [line], x_title=x_title, y_title=f"{y_title} ({unit.symbol})" if unit.symbol else y_title,
                 height=HEIGHT - 60, x_names=[str(p.n_heads) for p in points])


def d_head_vs_heads(
    points: Sequence[HeadSplit], *, current_h: int, title: str = "", x_title: str, y_title: str,
) -> PlotCanvas:
    """charts.cost.d_head_vs_heads: a bar per h of height d_head, labelled, the picked h's in its own colour."""
    bars = Series("", BASE_COLOUR, tuple(float(i) for i in range(len(points))), tuple(float(p.d_head) for p in points),
                  mark="bar", shape="", point_colours=_picked(points, current_h),
                  labels=tuple(str(p.d_head) for p in points),
                  tips=tuple(f"h: {p.n_heads}\n{y_title}: {p.d_head}" for p in points))
    return _plot(title, [bars], x_title=x_title, y_title=y_title, height=HEIGHT - 60,
                 x_names=[str(p.n_heads) for p in points])


def _curves(named: dict[str, list[tuple[int, float, str]]], colours: Sequence[str], *, x_title: str, y_title: str,
            series_title: str) -> list[Series]:
    return [Series(name, colours[i], tuple(float(n) for n, _, _ in pts), tuple(v for _, v, _ in pts),
                   dash=tuple(COST_DASHES[i]), tips=tuple(f"{series_title}: {name}\n{x_title}: {n:,}\n{y_title}: {text}"
                                                     for n, _, text in pts))
            for i, (name, pts) in enumerate(named.items())]


def kv_vs_seq_len(
    points: Sequence[KvPoint], *, title: str = "", x_title: str, y_title: str, series_title: str,
) -> PlotCanvas:
    """charts.cost.kv_vs_seq_len: the KV cache against the sequence length, a line per MHA / GQA / MQA."""
    unit = bytes_unit(max(p.bytes for p in points))
    named: dict[str, list[tuple[int, float, str]]] = {}
    for p in points:
        named.setdefault(f"{p.kind} (g = {p.n_kv_heads})", []).append(
            (p.seq_len, p.bytes / unit.factor, format_bytes(p.bytes)))
    drawn = _curves(named, OKABE_ITO, x_title=x_title, y_title=y_title, series_title=series_title)
    return _plot(title, drawn, x_title=x_title, y_title=f"{y_title} ({unit.symbol})", height=LINE_HEIGHT - 140,
                 legend_top=True)


def flops_vs_seq_len(
    points: Sequence[FlopsPoint], *, title: str = "", x_title: str, y_title: str, series_title: str,
    projections: str, attention: str,
) -> PlotCanvas:
    """charts.cost.flops_vs_seq_len: FLOPs per token of one layer, projections flat and attention rising."""
    unit = flops_unit(max(max(p.projections, p.attention) for p in points))
    named = {name: [(p.seq_len, getattr(p, field) / unit.factor, format_flops(getattr(p, field))) for p in points]
             for name, field in ((projections, "projections"), (attention, "attention"))}
    drawn = _curves(named, [OKABE_ITO[0], OKABE_ITO[5]], x_title=x_title, y_title=y_title, series_title=series_title)
    return _plot(title, drawn, x_title=x_title, y_title=f"{y_title} ({unit.symbol}FLOP)", height=LINE_HEIGHT - 140,
                 legend_top=True)

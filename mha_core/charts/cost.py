"""Altair charts of the cost lab: pure functions from count curves (mha_core.counts) to ``alt.Chart``.

Every title comes in already translated; the charts only add unit symbols (language-independent).
The chart title is optional: the page puts it above the chart as text, which wraps on a phone.
Colours follow mha_core.charts.base: Okabe–Ito for series, with a dash pattern too so lines stay apart
in greyscale and for colour-blind readers.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt

from mha_core.charts.base import OKABE_ITO
from mha_core.charts.palette import BASE_COLOUR, PICKED_COLOUR
from mha_core.charts.palette import COST_DASHES as DASHES
from mha_core.charts.plot import HEIGHT, LINE_HEIGHT
from mha_core.cost_model import FlopsPoint, HeadSplit, KvPoint
from mha_core.units import bytes_unit, flops_unit, format_bytes, format_flops, format_params, params_unit


def _legend() -> alt.Legend:
    """One legend for colour and dash together (same field, same legend: Vega-Lite merges them), its entries
    stacked above the plot so that they fit a phone's width."""
    return alt.Legend(orient="top", direction="vertical", title=None, labelLimit=0, symbolType="stroke",
                      symbolSize=400, symbolStrokeWidth=3)


def _size(title: str, height: int = HEIGHT) -> dict:
    """Full column width, a fixed height (axes and legend included), and the title only when there is one."""
    return {"width": "container", "height": height, **({"title": title} if title else {})}


def _base(rows: list[dict]) -> alt.Chart:
    """A chart on inline rows: cheaper to build and serialise than a DataFrame, and shared by its layers."""
    return alt.Chart(alt.Data(values=rows))


def params_vs_heads(
    points: Sequence[HeadSplit], *, current_h: int, title: str = "", x_title: str, y_title: str, d_head_title: str,
    flops_title: str,
) -> alt.Chart:
    """Parameters per layer for every h that divides d_model: a flat line (splitting costs nothing)."""
    unit = params_unit(max(p.params for p in points))
    base = _base([
        {"h": p.n_heads, "d_head": p.d_head, "value": p.params / unit.factor, "params": format_params(p.params),
         "flops": format_flops(p.flops_per_token), "_colour": PICKED_COLOUR if p.n_heads == current_h else BASE_COLOUR}
        for p in points
    ])
    x = alt.X("h:O", title=x_title, sort=None, axis=alt.Axis(labelAngle=0, labelOverlap=True))
    y = alt.Y("value:Q", title=f"{y_title} ({unit.symbol})" if unit.symbol else y_title,
              scale=alt.Scale(zero=True))
    tooltip = [alt.Tooltip("h:O", title="h"), alt.Tooltip("d_head:Q", title=d_head_title),
               alt.Tooltip("params:N", title=y_title), alt.Tooltip("flops:N", title=flops_title)]
    line = base.mark_line(color=BASE_COLOUR).encode(x=x, y=y)
    dots = base.mark_point(filled=True, size=90).encode(x=x, y=y, color=alt.Color("_colour:N", scale=None),
                                                         tooltip=tooltip)
    return (line + dots).properties(**_size(title))


def d_head_vs_heads(
    points: Sequence[HeadSplit], *, current_h: int, title: str = "", x_title: str, y_title: str,
) -> alt.Chart:
    """d_head = d_model / h as h grows: more heads, each one narrower."""
    base = _base([{"h": p.n_heads, "d_head": p.d_head,
                   "_colour": PICKED_COLOUR if p.n_heads == current_h else BASE_COLOUR} for p in points])
    x = alt.X("h:O", title=x_title, sort=None, axis=alt.Axis(labelAngle=0, labelOverlap=True))
    y = alt.Y("d_head:Q", title=y_title, scale=alt.Scale(zero=True))
    bars = base.mark_bar().encode(
        x=x, y=y, color=alt.Color("_colour:N", scale=None),
        tooltip=[alt.Tooltip("h:O", title="h"), alt.Tooltip("d_head:Q", title=y_title)],
    )
    labels = base.mark_text(dy=-6, fontSize=10).encode(x=x, y=y, text="d_head:Q")
    return (bars + labels).properties(**_size(title))


def kv_vs_seq_len(
    points: Sequence[KvPoint], *, title: str = "", x_title: str, y_title: str, series_title: str,
) -> alt.Chart:
    """KV cache against sequence length, one line per MHA / GQA / MQA version of the same model."""
    unit = bytes_unit(max(p.bytes for p in points))
    names = [f"{p.kind} (g = {p.n_kv_heads})" for p in points]
    order = list(dict.fromkeys(names))
    base = _base([{"series": name, "n": p.seq_len, "value": p.bytes / unit.factor, "bytes": format_bytes(p.bytes)}
                  for name, p in zip(names, points, strict=True)])
    return (
        base
        .mark_line(point=True)
        .encode(
            x=alt.X("n:Q", title=x_title, scale=alt.Scale(zero=True)),
            y=alt.Y("value:Q", title=f"{y_title} ({unit.symbol})"),
            color=alt.Color("series:N", title=series_title, sort=order,
                            scale=alt.Scale(domain=order, range=list(OKABE_ITO[:len(order)])),
                            legend=_legend()),
            strokeDash=alt.StrokeDash("series:N", sort=order, legend=_legend(),
                                      scale=alt.Scale(domain=order, range=[list(d) for d in DASHES[:len(order)]])),
            tooltip=[alt.Tooltip("series:N", title=series_title), alt.Tooltip("n:Q", title=x_title, format=","),
                     alt.Tooltip("bytes:N", title=y_title)],
        )
        .properties(**_size(title, LINE_HEIGHT))
    )


def flops_vs_seq_len(
    points: Sequence[FlopsPoint], *, title: str = "", x_title: str, y_title: str, series_title: str,
    projections: str, attention: str,
) -> alt.Chart:
    """FLOPs per token of one layer as the sequence grows: projections flat, attention rising like n."""
    unit = flops_unit(max(max(p.projections, p.attention) for p in points))
    rows = [(projections, p.seq_len, p.projections) for p in points] + \
           [(attention, p.seq_len, p.attention) for p in points]
    order = [projections, attention]
    base = _base([{"series": name, "n": n, "value": v / unit.factor, "flops": format_flops(v)} for name, n, v in rows])
    return (
        base
        .mark_line(point=True)
        .encode(
            x=alt.X("n:Q", title=x_title, scale=alt.Scale(zero=True)),
            y=alt.Y("value:Q", title=f"{y_title} ({unit.symbol}FLOP)"),
            color=alt.Color("series:N", title=series_title, sort=order,
                            scale=alt.Scale(domain=order, range=[OKABE_ITO[0], OKABE_ITO[5]]),
                            legend=_legend()),
            strokeDash=alt.StrokeDash("series:N", sort=order, legend=_legend(),
                                      scale=alt.Scale(domain=order, range=[list(d) for d in DASHES[:2]])),
            tooltip=[alt.Tooltip("series:N", title=series_title), alt.Tooltip("n:Q", title=x_title, format=","),
                     alt.Tooltip("flops:N", title=y_title)],
        )
        .properties(**_size(title, LINE_HEIGHT))
    )

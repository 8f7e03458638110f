"""Shared chart helpers: palettes, long-form frames, and the builders every lab uses (heatmap, bar, lines).

Builders are pure functions from arrays and (already translated) labels to ``alt.Chart``; pages draw them with
``render.chart(builder, *args, **kwargs)``, which caches on the builder and its arguments.

The spec the browser gets (``spec_and_data``) is made in ``charts.spec``, the palettes are in ``charts.palette``:
neither imports Altair. Palettes are colour-blind safe and keep their order in greyscale: viridis for weights
(0..1), blue-orange for signed values, Okabe–Ito for head identities.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd
from altair.utils import schemapi

from mha_core.charts import raster
from mha_core.charts.matrix import PIXEL_CELLS, heat_domain
from mha_core.charts.palette import OKABE_ITO, SIGNED_SCHEME, WEIGHT_SCHEME, head_colour, head_scale
from mha_core.charts.spec import as_table, for_browser, in_data_order, spec_and_data

# Altair validates every schema object as it is built (its "debug mode"), ~40% of building a heatmap.
# Our builders are fixed code: tests/test_charts.py validates each one's full spec against the Vega-Lite
# schema instead, once, so the server does not repeat it for every chart of every new setting.
schemapi.disable_debug_mode()

# Fill the container's width, but let `height` mean the plot itself (not plot + axes + legend).
FIT_WIDTH = alt.AutoSizeParams(type="fit-x", contains="padding")

# PIXEL_CELLS (charts.matrix): a heatmap of more cells is drawn by Vega as one image instead of a mark per cell.
AXIS_LABELS = 32  # labels on a pixel heatmap's axis at most (every k-th)


def pixel_axis(labels: Sequence[str], title: str, angle: int = 0, shown: bool = True,
               most: int = AXIS_LABELS) -> alt.Axis | None:
    """An axis over 0..len(labels) naming each cell's middle with its label (every k-th of more than ``most``), as
    the marks' did."""
    if not shown:
        return None
    n = len(labels)
    step = -(-n // most)
    names = json.dumps([str(x) for x in labels[::step]], ensure_ascii=True)  # a JSON array is a Vega array
    return alt.Axis(values=[k + 0.5 for k in range(0, n, step)], labelExpr=f"{names}[floor(datum.value / {step})]",
                    title=title, labelAngle=angle, labelLimit=70, labelFontSize=10, ticks=False, grid=False)


def pixel_scale(n: int, reverse: bool = False) -> alt.Scale:
    """A pixel heatmap's position scale: cell k spans k..k+1, as a band of the marks' version did."""
    return alt.Scale(domain=[0, n], nice=False, zero=False, reverse=reverse)


def with_pictures(df: pd.DataFrame, images: Sequence[str], rows: Sequence[str], cols: Sequence[str]) -> pd.DataFrame:
    """A matrix frame of len(images) equal blocks (one per picture, in order) with each block's picture on its first
    row, marked to be drawn (``_draw``: the browser gets only those rows), spanning the block's rows × cols."""
    image = np.full(len(df), None, dtype=object)
    image[::len(df) // len(images)] = list(images)
    return df.assign(_image=image, _left=0.0, _right=float(len(cols)), _top=0.0, _bottom=float(len(rows)),
                     _draw=pd.notna(image))


def pixel_channels(rows: Sequence[str], cols: Sequence[str], *, row_title: str, col_title: str,
                   show_col_labels: bool, colour: alt.Color) -> dict:
    """The encoding of a picture drawn by with_pictures: its cells' places and axes as the marks' had, and the colour
    scale its legend shows."""
    return {"x": alt.X("_left:Q", scale=pixel_scale(len(cols)), title=col_title,
                       axis=pixel_axis(cols, col_title, -60, show_col_labels)),
            "x2": "_right:Q",
            "y": alt.Y("_top:Q", scale=pixel_scale(len(rows), reverse=True), axis=pixel_axis(rows, row_title)),
            "y2": "_bottom:Q", "url": "_image:N", "color": colour}


def matrix_frame(m: np.ndarray, rows: Sequence[str], cols: Sequence[str], value: str = "value") -> pd.DataFrame:
    """Long-form table of a matrix: one row per cell, with row/column labels."""
    r, c = np.meshgrid(np.arange(m.shape[0]), np.arange(m.shape[1]), indexing="ij")
    return pd.DataFrame({
        "row": np.asarray(rows, dtype=object)[r.ravel()],
        "col": np.asarray(cols, dtype=object)[c.ravel()],
        value: np.round(m.ravel().astype(float), 4),
    })


def heatmap(
    m: np.ndarray,
    rows: Sequence[str],
    cols: Sequence[str],
    *,
    title: str = "",
    row_title: str = "",
    col_title: str = "",
    value_title: str = "value",
    signed: bool = False,
    domain: tuple[float, float] | None = None,
    size: int = 220,
    show_col_labels: bool = True,
    pixel_cells: int | None = PIXEL_CELLS,
) -> alt.Chart:
    """A matrix as coloured cells with tooltips (row, column, value); of more than ``pixel_cells`` cells (None:
    never), one image on the same colour scale (its numbers in the table view and the CSV)."""
    df = matrix_frame(m, rows, cols, "value")
    domain = heat_domain(m, signed, domain)
    scheme = SIGNED_SCHEME if signed else WEIGHT_SCHEME
    scale = alt.Scale(scheme=scheme, domain=list(domain))
    colour = alt.Color("value:Q", scale=scale, title=value_title, legend=alt.Legend(orient="bottom"))
    if pixel_cells is not None and m.size > pixel_cells:
        picture = raster.rgb_png_uri(raster.on_scale(m, domain, scheme))
        return (
            alt.Chart(with_pictures(df, [picture], rows, cols), title=title)
            .mark_image(aspect=False, smooth=False)
            .encode(**pixel_channels(rows, cols, row_title=row_title, col_title=col_title,
                                     show_col_labels=show_col_labels, colour=colour))
            .transform_filter("datum._image != null")
            .properties(width="container", height=size, autosize=FIT_WIDTH)
        )
    x_axis = alt.Axis(labelAngle=-60, labelLimit=70, labelFontSize=10) if show_col_labels else None
    return (
        alt.Chart(df, title=title)
        .mark_rect()
        .encode(
            x=alt.X("col:O", sort=list(cols), title=col_title, axis=x_axis),
            y=alt.Y("row:O", sort=list(rows), title=row_title, axis=alt.Axis(labelLimit=70, labelFontSize=10)),
            color=colour,
            tooltip=[alt.Tooltip("row:O", title=row_title or "row"), alt.Tooltip("col:O", title=col_title or "col"),
                     alt.Tooltip("value:Q", title=value_title, format=".3f")],
        )
        .properties(width="container", height=size, autosize=FIT_WIDTH)
    )


def bar(values: Sequence[float], names: Sequence[str], *, title: str = "", value_title: str = "",
        colours: Sequence[str] | None = None, height: int = 200, step: int | None = None) -> alt.Chart:
    """Horizontal bars, one per name, in the given colours (default: head colours); ``step`` px per bar instead of
    a fixed ``height`` (the spec then stays the same for any number of bars: the browser takes new rows into the
    chart it has instead of building a new one)."""
    scale = alt.Scale(domain=list(names), range=list(colours)) if colours is not None else alt.Scale(**head_scale())
    df = pd.DataFrame({"name": list(names), "value": np.round(np.asarray(values, dtype=float), 4)})
    return (
        alt.Chart(df, title=title)
        .mark_bar()
        .encode(
            y=alt.Y("name:N", sort=list(names), title=None),
            x=alt.X("value:Q", title=value_title, stack=None),  # one bar per name: no per-datum stack order
            color=alt.Color("name:N", sort=None, scale=scale, legend=None),  # head colours in the data's order
            tooltip=["name:N", alt.Tooltip("value:Q", format=".3f")],
        )
        .properties(width="container", height=alt.Step(step) if step else height, autosize=FIT_WIDTH)
    )


def lines(x: Sequence[float], series: dict[str, Sequence[float]], *, title: str = "", x_title: str = "",
          y_title: str = "", log_x: bool = False, height: int = 240, points: bool = True) -> alt.Chart:
    """One line per series over a shared x (Okabe–Ito colours and distinct point shapes: readable in grey)."""
    rows = [{"x": float(xv), "value": float(yv), "series": name}
            for name, ys in series.items() for xv, yv in zip(x, ys, strict=True)]
    names = list(series)
    palette = alt.Scale(domain=names, range=[head_colour(i) for i in range(len(names))])
    scale = alt.Scale(type="log", base=2) if log_x else alt.Scale(zero=False)
    return (
        alt.Chart(pd.DataFrame(rows), title=title)
        .mark_line(point=points)
        .encode(
            x=alt.X("x:Q", title=x_title, scale=scale),
            y=alt.Y("value:Q", title=y_title),
            color=alt.Color("series:N", scale=palette, legend=alt.Legend(orient="bottom", title=None, labelLimit=260)),
            shape=alt.Shape("series:N", legend=None),
            strokeDash=alt.StrokeDash("series:N", legend=None),
            tooltip=[alt.Tooltip("series:N"), alt.Tooltip("x:Q", title=x_title), alt.Tooltip("value:Q", format=".3f")],
        )
        .properties(width="container", height=height, autosize=FIT_WIDTH)
    )


__all__ = ["FIT_WIDTH", "OKABE_ITO", "SIGNED_SCHEME", "WEIGHT_SCHEME", "as_table", "bar", "for_browser", "head_colour",
           "heatmap", "in_data_order", "lines", "matrix_frame", "spec_and_data"]

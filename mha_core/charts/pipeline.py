"""Charts of the pipeline pages (split, attend, concat, myths): head blocks and the per-head grid."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from mha_core.charts import raster
from mha_core.charts.base import (
    FIT_WIDTH,
    PIXEL_CELLS,
    SIGNED_SCHEME,
    WEIGHT_SCHEME,
    matrix_frame,
    pixel_axis,
    pixel_channels,
    pixel_scale,
    with_pictures,
)
from mha_core.charts.matrix import PER_HEAD_COLUMNS, block_colours, column_subset, heat_domain
from mha_core.charts.palette import head_scale


def columns_by_head(
    m: np.ndarray, n_heads: int, rows: Sequence[str], *, title: str = "", head_label: str = "head",
    row_title: str = "", col_title: str = "", size: int = 220, per_head: int = PER_HEAD_COLUMNS,
    largest_title: str = "largest |value|",
) -> alt.Chart | alt.LayerChart:
    """(n, h·d) matrix drawn as column blocks, one colour per head, darker where |value| is larger.

    At most ``per_head`` columns of each head are drawn (see ``column_subset``); more than PIXEL_CELLS cells are
    drawn as pixels, with a tooltip per head (its ``largest_title``) instead of per cell.
    """
    n, width = m.shape
    d = width // n_heads
    keep = column_subset(width, n_heads, per_head)
    cols = [str(j) for j in keep]
    df = matrix_frame(m[:, keep], rows, cols, "value")
    df["head"] = [f"{head_label} {j // d}" for j in np.tile(keep, n)]
    df["strength"] = np.round(np.abs(df["value"]) / max(float(np.max(np.abs(m))), 1e-12), 4)
    if n * len(keep) > PIXEL_CELLS:
        return _blocks_as_pixels(df, n, keep // d, title=title, row_title=row_title, col_title=col_title,
                                 largest_title=largest_title, size=size)
    return (
        alt.Chart(df, title=title)
        .mark_rect()
        .encode(
            x=alt.X("col:O", sort=cols, title=col_title, axis=alt.Axis(labels=False, ticks=False)),
            y=alt.Y("row:O", sort=list(rows), title=row_title, axis=alt.Axis(labelLimit=70, labelFontSize=10)),
            color=alt.Color("head:N", sort=None, scale=alt.Scale(**head_scale()),  # heads in the data's order
                            legend=alt.Legend(orient="bottom", columns=8), title=None),
            opacity=alt.Opacity("strength:Q", scale=alt.Scale(domain=[0, 1], range=[0.12, 1]), legend=None),
            tooltip=["head:N", alt.Tooltip("row:O", title=row_title or "row"),
                     alt.Tooltip("col:O", title=col_title or "col"), alt.Tooltip("value:Q", format=".3f")],
        )
        .properties(width="container", height=size, autosize=FIT_WIDTH)
    )


def _blocks_as_pixels(df: pd.DataFrame, n: int, head_of_col: np.ndarray, *, title: str, row_title: str,
                      col_title: str, largest_title: str, size: int) -> alt.LayerChart:
    """columns_by_head's picture as one image (a cell a square of pixels) under one transparent band per head whose
    tooltip names the head and its largest |value|; the frame keeps every drawn cell for the table view and CSV.
    x runs 0..1 whatever h is, so a move of h sends new rows to the same spec (no new Vega view)."""
    c = len(head_of_col)
    strength = df["strength"].to_numpy().reshape(n, c)
    starts = np.flatnonzero(np.r_[True, np.diff(head_of_col) != 0])  # each head's first drawn column, on row 0
    ends = np.r_[starts[1:], c]
    size_of = np.abs(df["value"].to_numpy().reshape(n, c))
    x0, x1, largest, block = np.zeros(len(df)), np.zeros(len(df)), np.zeros(len(df)), np.zeros(len(df), dtype=bool)
    x0[starts], x1[starts], block[starts] = starts / c, ends / c, True
    largest[starts] = [float(size_of[:, a:b].max()) for a, b in zip(starts, ends, strict=True)]
    df = df.assign(_image=[raster.rgb_png_uri(block_colours(strength, head_of_col))] + [None] * (len(df) - 1),
                   _block=block, _draw=block, _x=x0, _x2=x1, _left=0.0, _right=1.0, _top=0.0, _bottom=float(n),
                   _largest=np.round(largest, 4))
    rows = df["row"].to_numpy()[::c].tolist()
    y = alt.Y("_top:Q", scale=pixel_scale(n, reverse=True), axis=pixel_axis(rows, row_title, most=16))  # W^Q: 4th
    x_scale = alt.Scale(domain=[0, 1], nice=False)
    x_axis = alt.Axis(labels=False, ticks=False, grid=False)
    rows_of = alt.Chart(df)  # both layers read the same rows: Altair hoists them to the top (one frame to send)
    picture = (rows_of.mark_image(aspect=False, smooth=False)
               .encode(x=alt.X("_left:Q", scale=x_scale, axis=x_axis, title=col_title), x2="_right:Q", y=y,
                       y2="_bottom:Q", url="_image:N")
               .transform_filter("datum._image != null"))
    bands = (rows_of.mark_rect(fillOpacity=0.01)
             .encode(x=alt.X("_x:Q", scale=x_scale, axis=x_axis, title=col_title), x2="_x2:Q", y=y, y2="_bottom:Q",
                     color=alt.Color("head:N", sort=None, scale=alt.Scale(**head_scale()), title=None,
                                     legend=alt.Legend(orient="bottom", columns=8, symbolOpacity=1)),
                     tooltip=["head:N", alt.Tooltip("_largest:Q", title=largest_title, format=".3f")])
             .transform_filter("datum._block"))
    return (alt.layer(picture, bands, title=title)
            .properties(width="container", height=size, autosize=FIT_WIDTH))


def head_grid(
    mats: np.ndarray, rows: Sequence[str], cols: Sequence[str], titles: Sequence[str], *, row_title: str = "",
    col_title: str = "", value_title: str = "value", signed: bool = False, show_col_labels: bool = True,
    per_row: int = 4, size: int = 170,
) -> alt.Chart:
    """(h, n, m) matrices as one heatmap per head, ``per_row`` panels to a row, all on one colour scale.

    One faceted chart instead of h charts: the browser builds one Vega view, not up to 16 (most of a slider
    move's cost). Weights share 0..1; signed values share ±(largest |value| of any head), so heads compare.
    """
    h, n, m = mats.shape
    heads = np.repeat(np.asarray(titles, dtype=object), n * m)
    df = pd.concat([matrix_frame(mats[i], rows, cols, "value") for i in range(h)], ignore_index=True)
    df.insert(0, "head", heads)
    domain = list(heat_domain(mats, signed, None if signed else (0.0, 1.0)))  # one scale for every head
    scheme = SIGNED_SCHEME if signed else WEIGHT_SCHEME
    scale = alt.Scale(scheme=scheme, domain=domain)
    facet = alt.Facet("head:N", sort=list(titles), title=None, columns=min(per_row, h),
                      header=alt.Header(labelFontSize=13, labelLimit=0))
    colour = alt.Color("value:Q", scale=scale, title=value_title, legend=alt.Legend(orient="bottom"))
    if mats.size > PIXEL_CELLS:  # one image per head (see matrix.PIXEL_CELLS); the frame keeps every cell
        pictures = [raster.rgb_png_uri(raster.on_scale(mats[i], domain, scheme)) for i in range(h)]
        return (
            alt.Chart(with_pictures(df, pictures, rows, cols))
            .mark_image(aspect=False, smooth=False)
            .encode(facet=facet, tooltip=[alt.Tooltip("head:N", title=None)],
                    **pixel_channels(rows, cols, row_title=row_title, col_title=col_title,
                                     show_col_labels=show_col_labels, colour=colour))
            .transform_filter("datum._image != null")
            .properties(width=size, height=size, spacing=12)
        )
    x_axis = alt.Axis(labelAngle=-60, labelLimit=70, labelFontSize=10) if show_col_labels else None
    return (
        alt.Chart(df)
        .mark_rect()
        .encode(
            facet=facet,
            x=alt.X("col:O", sort=list(cols), title=col_title, axis=x_axis),
            y=alt.Y("row:O", sort=list(rows), title=row_title, axis=alt.Axis(labelLimit=70, labelFontSize=10)),
            color=colour,
            tooltip=[alt.Tooltip("head:N", title=None), alt.Tooltip("row:O", title=row_title or "row"),
                     alt.Tooltip("col:O", title=col_title or "col"),
                     alt.Tooltip("value:Q", title=value_title, format=".3f")],
        )
        .properties(width=size, height=size, spacing=12)
    )

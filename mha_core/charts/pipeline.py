"""Charts of the pipeline pages (split, attend, concat, myths): head blocks and the per-head grid."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from mha_core.charts.base import FIT_WIDTH, SIGNED_SCHEME, WEIGHT_SCHEME, matrix_frame
from mha_core.charts.palette import head_scale, nice_limit

PER_HEAD_COLUMNS = 16  # columns of each head drawn by columns_by_head (see column_subset)


def column_subset(width: int, n_heads: int, per_head: int = PER_HEAD_COLUMNS) -> np.ndarray:
    """Indices of at most ``per_head`` leading columns of each head's block (all when narrow).

    A 1024-column heatmap is unreadable on a projector and heavy to send; charts say when they cut.
    """
    d = width // n_heads
    return np.concatenate([np.arange(i * d, i * d + min(d, per_head)) for i in range(n_heads)])


def columns_by_head(
    m: np.ndarray, n_heads: int, rows: Sequence[str], *, title: str = "", head_label: str = "head",
    row_title: str = "", col_title: str = "", size: int = 220, per_head: int = PER_HEAD_COLUMNS,
) -> alt.Chart:
    """(n, h·d) matrix drawn as column blocks, one colour per head, darker where |value| is larger.

    At most ``per_head`` columns of each head are drawn (see ``column_subset``).
    """
    n, width = m.shape
    d = width // n_heads
    keep = column_subset(width, n_heads, per_head)
    cols = [str(j) for j in keep]
    df = matrix_frame(m[:, keep], rows, cols, "value")
    df["head"] = [f"{head_label} {j // d}" for j in np.tile(keep, n)]
    df["strength"] = np.round(np.abs(df["value"]) / max(float(np.max(np.abs(m))), 1e-12), 4)
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
    finite = mats[np.isfinite(mats)]
    lim = nice_limit(float(np.max(np.abs(finite)))) if finite.size else 1.0  # a round end: see nice_limit
    domain = [-lim, lim] if signed else [0.0, 1.0]
    scale = alt.Scale(scheme=SIGNED_SCHEME if signed else WEIGHT_SCHEME, domain=domain)
    x_axis = alt.Axis(labelAngle=-60, labelLimit=70, labelFontSize=10) if show_col_labels else None
    return (
        alt.Chart(df)
        .mark_rect()
        .encode(
            facet=alt.Facet("head:N", sort=list(titles), title=None, columns=min(per_row, h),
                            header=alt.Header(labelFontSize=13, labelLimit=0)),
            x=alt.X("col:O", sort=list(cols), title=col_title, axis=x_axis),
            y=alt.Y("row:O", sort=list(rows), title=row_title, axis=alt.Axis(labelLimit=70, labelFontSize=10)),
            color=alt.Color("value:Q", scale=scale, title=value_title, legend=alt.Legend(orient="bottom")),
            tooltip=[alt.Tooltip("head:N", title=None), alt.Tooltip("row:O", title=row_title or "row"),
                     alt.Tooltip("col:O", title=col_title or "col"),
                     alt.Tooltip("value:Q", title=value_title, format=".3f")],
        )
        .properties(width=size, height=size, spacing=12)
    )

"""Charts of the cross-attention page: a weight matrix whose masked cells and ignored rows are drawn apart."""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np

from mha_core.charts.base import FIT_WIDTH, WEIGHT_SCHEME, matrix_frame
from mha_core.charts.palette import MASKED_FILL


def masked_map(
    m: np.ndarray, rows: Sequence[str], cols: Sequence[str], allowed: np.ndarray, *,
    ignored_rows: Sequence[bool] | None = None, states: tuple[str, str, str] = ("open", "masked", "ignored"),
    title: str = "", row_title: str = "", col_title: str = "", value_title: str = "value", size: int = 200,
) -> alt.Chart:
    """Weights (n, m) coloured 0..1 where ``allowed``; masked cells grey; rows in ``ignored_rows`` (padding queries)
    faded.

    ``states`` are the (translated) names of the three kinds of cell, shown in the tooltip.
    """
    df = matrix_frame(m, rows, cols, "value")
    allowed = np.broadcast_to(np.asarray(allowed, dtype=bool), m.shape).ravel()
    ignored = np.repeat(np.asarray(ignored_rows if ignored_rows is not None else [False] * m.shape[0], bool),
                        m.shape[1])
    masked = ~allowed                                                  # language-free flags, for the conditions
    df["masked"], df["ignored"] = masked.astype(int), ignored.astype(int)
    df["state"] = np.asarray(states, dtype=object)[np.where(ignored, 2, masked.astype(int))]
    colour = alt.condition("datum.masked === 1", alt.value(MASKED_FILL),
                           alt.Color("value:Q", scale=alt.Scale(scheme=WEIGHT_SCHEME, domain=[0.0, 1.0]),
                                     title=value_title, legend=alt.Legend(orient="bottom", gradientLength=120)))
    return (
        alt.Chart(df, title=title)
        .mark_rect(stroke="white", strokeWidth=0.5)  # charts.matrix.masked_map paints the same on the app's canvas
        .encode(
            x=alt.X("col:O", sort=list(cols), title=col_title,
                    axis=alt.Axis(labelAngle=-60, labelLimit=70, labelFontSize=10)),
            y=alt.Y("row:O", sort=list(rows), title=row_title, axis=alt.Axis(labelLimit=70, labelFontSize=10)),
            color=colour,
            opacity=alt.condition("datum.ignored === 1", alt.value(0.3), alt.value(1.0)),
            tooltip=[alt.Tooltip("row:O", title=row_title or "row"), alt.Tooltip("col:O", title=col_title or "col"),
                     alt.Tooltip("value:Q", title=value_title, format=".3f"), alt.Tooltip("state:N", title="")],
        )
        .properties(width="container", height=size, autosize=FIT_WIDTH)
    )

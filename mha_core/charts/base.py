"""Shared chart helpers: palettes, long-form frames, and the builders every lab uses (heatmap, bar, lines).

Builders are pure functions from arrays and (already translated) labels to ``alt.Chart``; pages draw them with
``render.chart(builder, *args, **kwargs)``, which caches on the builder and its arguments.

Palettes are colour-blind safe and keep their order in greyscale: viridis for weights
(0..1), blue-orange for signed values, Okabe–Ito for head identities.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd
from altair.utils import schemapi

# Altair validates every schema object as it is built (its "debug mode"), ~40% of building a heatmap.
# Our builders are fixed code: tests/test_charts.py validates each one's full spec against the Vega-Lite
# schema instead, once, so the server does not repeat it for every chart of every new setting.
schemapi.disable_debug_mode()

# Okabe & Ito (2008), the usual colour-blind-safe qualitative palette (black moved last).
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
WEIGHT_SCHEME = "viridis"
# Fill the container's width, but let `height` mean the plot itself (not plot + axes + legend).
FIT_WIDTH = alt.AutoSizeParams(type="fit-x", contains="padding")
SIGNED_SCHEME = "blueorange"


def head_colour(i: int) -> str:
    """The colour of head i everywhere in the app."""
    return OKABE_ITO[i % len(OKABE_ITO)]


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
) -> alt.Chart:
    """A matrix as coloured cells with tooltips (row, column, value)."""
    df = matrix_frame(m, rows, cols, "value")
    if domain is None:
        lim = float(np.max(np.abs(m))) if m.size and np.isfinite(m).any() else 1.0
        domain = (-lim, lim) if signed else (0.0, max(lim, 1e-9))
    scale = alt.Scale(scheme=SIGNED_SCHEME if signed else WEIGHT_SCHEME, domain=list(domain))
    x_axis = alt.Axis(labelAngle=-60, labelLimit=70, labelFontSize=10) if show_col_labels else None
    return (
        alt.Chart(df, title=title)
        .mark_rect()
        .encode(
            x=alt.X("col:O", sort=list(cols), title=col_title, axis=x_axis),
            y=alt.Y("row:O", sort=list(rows), title=row_title, axis=alt.Axis(labelLimit=70, labelFontSize=10)),
            color=alt.Color("value:Q", scale=scale, title=value_title, legend=alt.Legend(orient="bottom")),
            tooltip=[alt.Tooltip("row:O", title=row_title or "row"), alt.Tooltip("col:O", title=col_title or "col"),
                     alt.Tooltip("value:Q", title=value_title, format=".3f")],
        )
        .properties(width="container", height=size, autosize=FIT_WIDTH)
    )


def bar(values: Sequence[float], names: Sequence[str], *, title: str = "", value_title: str = "",
        colours: Sequence[str] | None = None, height: int = 200) -> alt.Chart:
    """Horizontal bars, one per name, in the given colours (default: head colours)."""
    colours = list(colours) if colours is not None else [head_colour(i) for i in range(len(names))]
    df = pd.DataFrame({"name": list(names), "value": np.round(np.asarray(values, dtype=float), 4)})
    return (
        alt.Chart(df, title=title)
        .mark_bar()
        .encode(
            y=alt.Y("name:N", sort=list(names), title=None),
            x=alt.X("value:Q", title=value_title, stack=None),  # one bar per name: no per-datum stack order
            color=alt.Color("name:N", scale=alt.Scale(domain=list(names), range=colours), legend=None),
            tooltip=["name:N", alt.Tooltip("value:Q", format=".3f")],
        )
        .properties(width="container", height=height, autosize=FIT_WIDTH)
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


def spec_and_data(chart: alt.TopLevelMixin | dict) -> tuple[dict, pd.DataFrame | None]:
    """A chart as (Vega-Lite spec without its data, the data frame): the spec can be cached and the
    data sent as Arrow, instead of Altair walking every row into JSON on each rerun. Layered charts
    (small) keep their data inline and return None. (Streamlit attaches such a frame to the top-level view
    only: a chart of panels must facet by an encoding channel, as ``pipeline.head_grid`` does, not by
    ``.facet()``, whose panels would be drawn empty.) A builder may also return a finished spec (a dict) whose
    data sets are inline, as ``lines.token_lines`` does."""
    if isinstance(chart, dict):
        return for_browser(chart), None
    if isinstance(chart, alt.Chart) and isinstance(chart.data, pd.DataFrame):
        bare = chart.copy(deep=False)
        bare.data = alt.Undefined
        spec = bare.to_dict(validate=False)
        spec.pop("data", None)       # Altair's empty placeholder; Streamlit attaches the frame
        spec.pop("datasets", None)
        return for_browser(in_data_order(spec, chart.data)), chart.data
    return for_browser(chart.to_dict(validate=False)), None


def in_data_order(spec: dict, data: pd.DataFrame) -> dict:
    """Drop each explicit sort list that only repeats the data's own order: the browser then draws the same chart
    with no per-datum sort formula.

    Vega-Lite compiles ``sort: [a, b, …]`` into a formula ``datum.col === a ? 0 : datum.col === b ? 1 : …`` that
    Streamlit's CSP-safe Vega interpreter evaluates for every cell (a 128-column heatmap: 1,024 cells × up to 128
    comparisons, on every slider move); ``sort: null`` keeps the order of first appearance, which our long-form
    frames already have. A sort is kept when the data has a missing value (it could filter a first appearance
    away). Vega-Lite's "is this a valid number" check is left as it is: ``invalid: null`` only moves it from the
    data into every mark's encoding, at the same per-datum cost.
    """
    if data.isna().to_numpy().any():
        return spec
    for channel in spec.get("encoding", {}).values():
        if isinstance(channel, dict) and isinstance(channel.get("sort"), list) and channel.get("field") in data:
            seen = [str(v) for v in dict.fromkeys(data[channel["field"]].tolist())]
            if seen == [str(v) for v in channel["sort"]]:
                channel["sort"] = None
    return spec


def for_browser(spec: dict) -> dict:
    """Draw on a canvas, without an ARIA label per mark: the browser's cost of a chart, not what it shows.

    vega-embed's default renderer is SVG (one DOM element per mark, restyled on every redraw; Streamlit switches to
    canvas only above 2,000 marks), and Vega-Lite's default gives every mark a ``description`` ("row: …; value: …")
    computed per datum by Vega's CSP-safe expression interpreter, which Streamlit runs. Tooltips work the same on a
    canvas; screen readers get the numbers from the table view (sidebar switch), not from hundreds of cell labels.
    """
    spec["usermeta"] = {**spec.get("usermeta", {}), "embedOptions": {"renderer": "canvas"}}
    spec["config"] = {**spec.get("config", {}), "aria": False}
    return spec


def as_table(df: pd.DataFrame) -> pd.DataFrame:
    """A heatmap's long-form frame back as a matrix (rows × columns, in drawing order)."""
    rows = list(dict.fromkeys(df["row"]))
    cols = list(dict.fromkeys(df["col"]))
    return df.pivot(index="row", columns="col", values="value").reindex(index=rows, columns=cols)

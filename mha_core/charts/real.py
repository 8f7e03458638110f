"""Charts of the real-model lab: every head at once, a layer × head score map, and a minimal pair's pronoun row.

Pure functions from arrays and already-translated labels to Altair charts; the page draws them with
``render.chart(builder, *args)``, which caches on the builder and its arguments. The model view, the score maps,
the head view and the similarity map are painted on the app's canvas by their namesakes in ``charts.matrix`` (same
arguments); the Altair charts here make their SVG and PNG downloads and their table views.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from mha_core.charts import raster
from mha_core.charts.base import FIT_WIDTH, WEIGHT_SCHEME, bar, heatmap
from mha_core.charts.matrix import (
    HEAD_VIEW_CELLS,
    MODEL_VIEW_CELLS,
    MODEL_VIEW_ROW,
    head_view_height,
    head_view_pixels,
    pool,
    pooled,
)
from mha_core.charts.palette import NOUN_COLOURS, OTHER_COLOUR

__all__ = ["MODEL_VIEW_CELLS", "NOUN_COLOURS", "OTHER_COLOUR", "head_heatmap", "model_view", "pair_row", "pool",
           "PIXEL_CELLS", "drawn_as_pixels", "head_pixels", "score_map", "similarity_map"]

PIXEL_CELLS = HEAD_VIEW_CELLS  # Vega draws a larger head view as pixels: a mark per cell costs the browser too much
AXIS_LABELS = 48  # token labels on a pixel heatmap's axis at most (every k-th token; a row's tooltip names each)
GAP = 1 / 12  # the empty band between two heads and between two layers, as a share of a head's square


def model_view(attn: np.ndarray, labels: Sequence[str], *, layer_title: str, head_title: str, query_title: str,
               key_title: str, weight_title: str) -> alt.Chart:
    """Every layer × head of ``attn`` (L, H, n, n) as a small heatmap drawn as pixels (one image mark per head, on
    Vega's viridis: see ``raster``), in one chart that fits the container's width; a head's tooltip names its
    strongest query → key pair. More than MODEL_VIEW_CELLS tokens are pooled into blocks (see ``pool``)."""
    attn, labels = pooled(attn, labels)  # long inputs: blocks of consecutive tokens, labelled by their range
    n_layers, n_heads, n, _ = attn.shape
    layer, head = (a.ravel() for a in np.meshgrid(np.arange(n_layers), np.arange(n_heads), indexing="ij"))
    flat = attn.reshape(n_layers * n_heads, n * n)
    strongest = flat.argmax(1)
    df = pd.DataFrame({
        "layer": layer, "head": head,
        "strongest": [f"{labels[k // n]} → {labels[k % n]}" for k in strongest],
        "weight": np.round(flat[np.arange(len(flat)), strongest], 3),
        "_x": head.astype(float), "_x2": head + 1 - GAP, "_y": layer.astype(float), "_y2": layer + 1 - GAP,
        "_image": [raster.png_uri(attn[lay, h]) for lay, h in zip(layer, head, strict=True)],
    })

    def axis(count: int, prefix: str) -> alt.Axis:
        return alt.Axis(values=[k + (1 - GAP) / 2 for k in range(count)], labelExpr=f"'{prefix}' + floor(datum.value)",
                        grid=False, ticks=False, domain=False, labelFontSize=10)

    return (
        alt.Chart(df).mark_image(aspect=False)
        .encode(
            x=alt.X("_x:Q", axis=axis(n_heads, "H"), title=head_title, scale=alt.Scale(domain=[0, n_heads - GAP])),
            x2="_x2:Q",
            y=alt.Y("_y:Q", axis=axis(n_layers, "L"), title=layer_title,
                    scale=alt.Scale(domain=[0, n_layers - GAP], reverse=True)),
            y2="_y2:Q",
            url="_image:N",
            color=alt.Color("weight:Q", scale=alt.Scale(scheme=WEIGHT_SCHEME, domain=[0, 1]),
                            title=weight_title, legend=alt.Legend(orient="bottom")),  # the images' colour key
            tooltip=[alt.Tooltip("layer:Q", title=layer_title), alt.Tooltip("head:Q", title=head_title),
                     alt.Tooltip("strongest:N", title=f"{query_title} → {key_title}"),
                     alt.Tooltip("weight:Q", title=weight_title, format=".3f")],
        )
        .properties(width="container", height=min(560, MODEL_VIEW_ROW * n_layers + 40), autosize=FIT_WIDTH)
    )


def score_map(score: np.ndarray, *, title: str, layer_title: str, head_title: str, value_title: str) -> alt.Chart:
    """An (L, H) score as a layer × head heatmap (rows L0…, columns H0…)."""
    rows = [f"L{i}" for i in range(score.shape[0])]
    cols = [f"H{j}" for j in range(score.shape[1])]
    return heatmap(score, rows, cols, pixel_cells=None, title=title, row_title=layer_title, col_title=head_title,
                   value_title=value_title, size=26 * len(rows))


def head_heatmap(m: np.ndarray, labels: Sequence[str], *, title: str, row_title: str, col_title: str,
                 value_title: str) -> alt.Chart | alt.LayerChart:
    """One head's (n, n) weights; a long input keeps every cell but thins its axis labels (Vega drops those that
    would overlap, so a phone shows fewer than a projector) and caps the height. Above PIXEL_CELLS cells it is
    drawn as pixels (``head_pixels``)."""
    n = len(labels)
    if drawn_as_pixels(n):
        return head_pixels(m, labels, title=title, row_title=row_title, col_title=col_title, value_title=value_title)
    chart = heatmap(m, labels, labels, domain=(0.0, 1.0), pixel_cells=None, title=title, row_title=row_title,
                    col_title=col_title, value_title=value_title, size=head_view_height(n))
    if n <= MODEL_VIEW_CELLS:
        return chart
    return chart.encode(
        x=alt.X("col:O", sort=list(labels), title=col_title,
                axis=alt.Axis(labelAngle=-60, labelLimit=70, labelFontSize=9, labelOverlap="parity", ticks=False)),
        y=alt.Y("row:O", sort=list(labels), title=row_title,
                axis=alt.Axis(labelLimit=70, labelFontSize=9, labelOverlap="parity", ticks=False)))


def drawn_as_pixels(n: int) -> bool:
    """Whether an n-token head view is drawn as pixels (more than PIXEL_CELLS cells) — the chart and its caption."""
    return head_view_pixels(n)


def head_pixels(m: np.ndarray, labels: Sequence[str], *, title: str, row_title: str, col_title: str,
                value_title: str) -> alt.LayerChart:
    """One head's (n, n) weights as one image, one pixel (or square of pixels) per query → key pair on Vega's
    viridis (``raster``), under one transparent band per query whose tooltip names the query, the key it gives the
    most weight and that weight. Its table view is that row summary; the CSV has every weight.

    A 512-piece input is 262,144 cells: as Vega marks (BertViz draws SVG lines) the browser gives up; as pixels it
    is one image and n bands.
    """
    n = len(labels)
    w = np.asarray(m, dtype=float)
    strongest = w.argmax(1)
    rows = np.arange(n)
    df = pd.DataFrame({
        "i": rows, "query": list(labels), "strongest": [labels[k] for k in strongest],
        "weight": np.round(w[rows, strongest], 3),
        "_y": rows.astype(float), "_y2": rows + 1.0, "_x": 0.0, "_x2": float(n), "_top": 0.0, "_bottom": float(n),
        "_image": [raster.png_uri(w)] + [None] * (n - 1),  # the picture once, on the first row
    })
    step = -(-n // AXIS_LABELS)
    shown = json.dumps([str(x) for x in labels[::step]], ensure_ascii=True)  # a JSON array is a Vega array

    def axis(title_: str, angle: int) -> alt.Axis:
        return alt.Axis(values=[k + 0.5 for k in range(0, n, step)], labelExpr=f"{shown}[floor(datum.value / {step})]",
                        title=title_, labelAngle=angle, labelLimit=70, labelFontSize=9, ticks=False, grid=False)

    x = alt.X("_x:Q", scale=alt.Scale(domain=[0, n], nice=False), axis=axis(col_title, -60))
    y_scale = alt.Scale(domain=[0, n], nice=False, reverse=True)
    rows_of = alt.Chart(df)  # both layers read the same rows: Altair hoists them to the top (one frame to send)
    picture = (rows_of.mark_image(aspect=False)
               .encode(x=x, x2="_x2:Q", y=alt.Y("_top:Q", scale=y_scale, axis=axis(row_title, 0)), y2="_bottom:Q",
                       url="_image:N",
                       color=alt.Color("weight:Q", scale=alt.Scale(scheme=WEIGHT_SCHEME, domain=[0, 1]),
                                       title=value_title, legend=alt.Legend(orient="bottom")))  # the colour key
               .transform_filter("datum.i == 0"))
    bands = rows_of.mark_rect(fill="#ffffff", fillOpacity=0.01).encode(
        x=x, x2="_x2:Q", y=alt.Y("_y:Q", scale=y_scale, axis=axis(row_title, 0)), y2="_y2:Q",
        tooltip=[alt.Tooltip("query:N", title=row_title), alt.Tooltip("strongest:N", title=col_title),
                 alt.Tooltip("weight:Q", title=value_title, format=".3f")])
    return (alt.layer(picture, bands, title=title)
            .properties(width="container", height=head_view_height(n), autosize=FIT_WIDTH))


def similarity_map(dist: np.ndarray, names: Sequence[str], order: Sequence[int], *, title: str, value_title: str,
                   max_value: float) -> alt.Chart:
    """Distances between heads (H, H), rows and columns in ``order`` (alike heads side by side), on a fixed
    0..``max_value`` scale, dark = alike; labels thin out on a narrow screen."""
    o = list(order)
    shown = [names[i] for i in o]
    chart = heatmap(dist[np.ix_(o, o)], shown, shown, domain=(0.0, max_value), pixel_cells=None, title=title,
                    value_title=value_title, size=min(8 * len(o), 600))
    axis = {"labelFontSize": 9, "labelOverlap": "parity", "ticks": False, "labelLimit": 60}
    return chart.encode(x=alt.X("col:O", sort=shown, title=None, axis=alt.Axis(labelAngle=-90, **axis)),
                        y=alt.Y("row:O", sort=shown, title=None, axis=alt.Axis(**axis)))


def pair_row(weights: np.ndarray, labels: Sequence[str], nouns: Sequence[Sequence[int]], *, title: str,
             value_title: str) -> alt.Chart:
    """The pronoun's attention ``weights`` (n,) over the sentence for one head, as bars on a fixed 0..1 axis (so the
    two sentences compare), the pieces of each noun in ``nouns`` in that noun's colour."""
    colours = [OTHER_COLOUR] * len(labels)
    for k, ix in enumerate(nouns):
        for j in ix:
            colours[j] = NOUN_COLOURS[k]
    chart = bar(weights, labels, title=title, value_title=value_title, colours=colours, height=18 * len(labels))
    return chart.encode(x=alt.X("value:Q", title=value_title, scale=alt.Scale(domain=[0, 1])))

"""Altair builders for the generation page: the KV cache as a growing grid, the newest query's attention over the
cached keys, the next-token distribution, and which query heads share a K/V head.

Pure functions from numbers and (already translated) labels to charts. A K/V head has one colour everywhere on the
page (Okabe–Ito, ``base.head_colour``), so the query heads that read it can be picked out in every figure.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from mha_core.charts.base import FIT_WIDTH, WEIGHT_SCHEME, head_colour
from mha_core.charts.matrix import CACHE_CELL as CELL
from mha_core.charts.matrix import FREE, NEW
from mha_core.charts.palette import NEUTRAL

__all__ = ["cache_grid", "next_token_bars", "query_attention", "sharing_diagram"]

# NEW (the row the last step appended, the newest key), FREE (a position the cache has not reached yet) and CELL
# (px per cache row) are charts.matrix's, which paints cache_grid and query_attention on the app's canvas.


def _kv_scale(names: Sequence[str]) -> alt.Scale:
    return alt.Scale(domain=list(names), range=[head_colour(i) for i in range(len(names))])


def cache_grid(rows: np.ndarray, n_ctx: int, tokens: Sequence[str], *, row_names: Sequence[str],
               kv_names: Sequence[str], title: str = "", position_title: str = "", kv_title: str = "",
               token_title: str = "") -> alt.Chart:
    """The cache of one model: a row per (layer, K/V head) as ``rows`` (layers, g) says how many positions it
    holds, a column per position of the context; the newest position is outlined, positions not reached are grey.
    Each cell stands for one key and one value of d_head numbers."""
    layers, g = rows.shape
    names = list(row_names)
    r, p = np.meshgrid(np.arange(layers * g), np.arange(n_ctx), indexing="ij")
    held = rows.reshape(-1)[r.ravel()]
    pos = p.ravel()
    state = np.where(pos >= held, "free", np.where(pos == held - 1, "new", "cached"))
    kv = r.ravel() % g
    df = pd.DataFrame({
        "row": np.asarray(names, dtype=object)[r.ravel()],
        "kv": np.asarray(kv_names, dtype=object)[kv],
        "position": pos,
        "token": [tokens[i] if i < len(tokens) else "" for i in pos],
        "state": state,
        # colours as data, drawn with scale=None: conditions would cost Altair a schema validation per chart
        "fill": np.where(state == "free", FREE, np.array([head_colour(int(j)) for j in range(g)], dtype=object)[kv]),
        "edge": np.where(state == "new", NEW, "white"),
        "alpha": np.where(state == "new", 1.0, 0.55),
    })
    return (
        alt.Chart(df, title=title)
        .mark_rect(strokeWidth=2)
        .encode(
            x=alt.X("position:O", title=position_title,
                    axis=alt.Axis(labelAngle=0, labelFontSize=9, labelExpr="datum.value % 4 == 0 ? datum.value : ''")),
            y=alt.Y("row:O", sort=names, title=None,
                    axis=alt.Axis(labelFontSize=10, labelLimit=90, labelOverlap=False)),
            color=alt.Color("fill:N", scale=None, legend=None),
            opacity=alt.Opacity("alpha:Q", scale=None, legend=None),
            stroke=alt.Stroke("edge:N", scale=None, legend=None),
            tooltip=[alt.Tooltip("row:O", title=kv_title), alt.Tooltip("position:O", title=position_title),
                     alt.Tooltip("token:N", title=token_title)],
        )
        .properties(width="container", height=CELL * layers * g, autosize=FIT_WIDTH)
    )


def query_attention(attn: np.ndarray, positions: Sequence[str], row_names: Sequence[str], groups: Sequence[int], *,
                    title: str = "", row_title: str = "", col_title: str = "", value_title: str = "") -> alt.Chart:
    """The newest token's query in every layer and head (rows, ``attn`` (layers*h, t)) over every cached key
    (columns); the newest key is outlined and each row's label has the colour of the K/V head it reads."""
    n_rows, t = attn.shape
    names, cols = list(row_names), list(positions)
    r, c = np.meshgrid(np.arange(n_rows), np.arange(t), indexing="ij")
    df = pd.DataFrame({"row": np.asarray(names, dtype=object)[r.ravel()],
                       "col": np.asarray(cols, dtype=object)[c.ravel()],
                       "value": np.round(attn.ravel().astype(float), 4), "newest": c.ravel() == t - 1})
    df["edge"] = np.where(df["newest"], NEW, "transparent")
    colour = "'gray'"
    for name, group in reversed(list(zip(names, groups, strict=True))):  # label -> its K/V head's colour
        colour = f"datum.label == '{name}' ? '{head_colour(int(group))}' : {colour}"
    return (
        alt.Chart(df, title=title)
        .mark_rect(strokeWidth=2)
        .encode(
            x=alt.X("col:O", sort=cols, title=col_title, axis=alt.Axis(labelAngle=-60, labelFontSize=10)),
            y=alt.Y("row:O", sort=names, title=row_title,
                    axis=alt.Axis(labelFontSize=11, labelFontWeight="bold", labelOverlap=False,
                                  labelColor=alt.expr(colour))),
            color=alt.Color("value:Q", title=value_title, legend=alt.Legend(orient="bottom", gradientLength=120),
                            scale=alt.Scale(scheme=WEIGHT_SCHEME, domain=[0.0, 1.0])),
            stroke=alt.Stroke("edge:N", scale=None, legend=None),
            tooltip=[alt.Tooltip("row:O", title=row_title or "row"), alt.Tooltip("col:O", title=col_title or "col"),
                     alt.Tooltip("value:Q", title=value_title, format=".3f")],
        )
        .properties(width="container", height=22 * n_rows, autosize=FIT_WIDTH)
    )


def next_token_bars(probs: np.ndarray, names: Sequence[str], *, top: int = 5, title: str = "",
                    value_title: str = "") -> alt.Chart:
    """The ``top`` most likely next tokens and their probabilities (after temperature and top-k)."""
    order = np.argsort(-np.asarray(probs), kind="stable")[:top]
    shown = [names[i] for i in order]
    df = pd.DataFrame({"token": shown, "p": np.round(np.asarray(probs, dtype=float)[order], 4)})
    return (
        alt.Chart(df, title=title)
        .mark_bar(color=NEUTRAL)  # not a head's colour: these bars are tokens, not K/V heads
        .encode(
            y=alt.Y("token:N", sort=shown, title=None, axis=alt.Axis(labelFontSize=12, labelOverlap=False)),
            x=alt.X("p:Q", title=value_title, scale=alt.Scale(domain=[0, 1])),
            tooltip=[alt.Tooltip("token:N"), alt.Tooltip("p:Q", title=value_title, format=".3f")],
        )
        .properties(width="container", height=24 * top, autosize=FIT_WIDTH)
    )


def sharing_diagram(n_heads: int, n_kv_heads: int, *, query_names: Sequence[str], kv_names: Sequence[str],
                    title: str = "") -> alt.LayerChart:
    """Query heads on top, K/V heads below, a line from each query head to the K/V head it reads (consecutive
    groups of n_heads // n_kv_heads), coloured by K/V head."""
    r = n_heads // n_kv_heads
    q_x = np.arange(n_heads) + 0.5
    kv_x = np.array([q_x[j * r:(j + 1) * r].mean() for j in range(n_kv_heads)])
    groups = np.arange(n_heads) // r
    nodes = pd.DataFrame({
        "x": np.concatenate([q_x, kv_x]), "y": [1.0] * n_heads + [0.0] * n_kv_heads,
        "name": [*query_names, *kv_names], "kv": [kv_names[j] for j in groups] + list(kv_names),
    })
    links = pd.DataFrame({"x": q_x, "y": 1.0, "x2": kv_x[groups], "y2": 0.0, "kv": [kv_names[j] for j in groups]})
    x = alt.X("x:Q", scale=alt.Scale(domain=[0, n_heads]), axis=None)
    y = alt.Y("y:Q", scale=alt.Scale(domain=[-0.35, 1.35]), axis=None)
    colour = alt.Color("kv:N", scale=_kv_scale(kv_names), legend=None)
    lines = alt.Chart(links).mark_rule(strokeWidth=2).encode(x=x, y=y, x2="x2:Q", y2="y2:Q", color=colour)
    dots = alt.Chart(nodes).mark_square(size=650, opacity=1).encode(x=x, y=y, color=colour,
                                                                     tooltip=["name:N", "kv:N"])
    text = alt.Chart(nodes).mark_text(fontSize=10, fontWeight="bold", color="white").encode(x=x, y=y, text="name:N")
    return (lines + dots + text).properties(title=title, width="container", height=110, autosize=FIT_WIDTH)

"""Token lines (the "head view"): queries on the left, keys on the right, one line per (head, query, key) whose
opacity is the attention weight. Hover or tap a token to keep only its lines; tap a head in the legend to keep
only that head (tap more to add them). Everything happens in the browser (Vega-Lite params): no server run.

Long inputs keep only each query's ``top_k`` strongest keys, so the lines drawn stay within ``LINE_BUDGET``
(``charts.matrix``, which also paints these lines on the app's canvas; this spec makes the SVG and PNG downloads and
the table view).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence

import altair as alt
import numpy as np

from mha_core.charts.base import FIT_WIDTH, OKABE_ITO
from mha_core.charts.matrix import LINE_BUDGET, shown_share, top_k_for
from mha_core.charts.matrix import kept_lines as _keep
from mha_core.charts.palette import head_scale

__all__ = ["HEADS", "HOVER", "LINES", "LINE_BUDGET", "PICK", "TITLES", "TOKENS", "X_KEY", "X_QUERY", "shown_share",
           "token_lines", "top_k_for"]

MAX_DASHED = 64               # heads the dash scale covers (the app draws at most 16)
X_QUERY, X_KEY = 0.32, 0.68   # where the lines start and end, as a share of the width (labels sit outside them)
HOVER, PICK, HEADS = "tok_hover", "tok_pick", "heads"  # the chart's params (Vega-Lite selections)
LINES, TOKENS, TITLES = "lines", "tokens", "titles"     # its named data sets: one row per line, token, column title
_ON_TOKEN = "[event.item && event.item.datum && event.item.datum.tok]"  # only a token (not a line, not blank)


def _active(param: str) -> str:
    return f"length(data('{param}_store'))"


def _hit(param: str) -> str:
    """The line starts or ends at a token of the selection (its store holds token ids, "q3" or "k5")."""
    return (f"(vlSelectionTest('{param}_store', {{tok: 'q' + datum.q}}) || "
            f"vlSelectionTest('{param}_store', {{tok: 'k' + datum.k}}))")


def line_test(with_heads: bool) -> str:
    """Vega expression: is this line shown? Its head is on (none picked = all), and it touches the hovered token
    (while one is hovered), else the tapped token (while one is tapped), else it is shown."""
    tokens = f"({_active(HOVER)} ? {_hit(HOVER)} : {_active(PICK)} ? {_hit(PICK)} : true)"
    if not with_heads:
        return tokens
    return f"(!{_active(HEADS)} || vlSelectionTest('{HEADS}_store', datum)) && {tokens}"


def token_test() -> str:
    """Vega expression: is this token the one hovered or tapped (drawn bold)?"""
    return f"vlSelectionTest('{HOVER}_store', datum) || vlSelectionTest('{PICK}_store', datum)"


def token_lines(weights: np.ndarray, labels: Sequence[str], head_names: Sequence[str], *,
                top_k: int | None = None, title: str = "", query_title: str = "", key_title: str = "",
                weight_title: str = "", head_title: str = "", key_labels: Sequence[str] | None = None,
                step: int | None = None) -> dict:
    """Lines from every query (left) to every key (right) of ``weights`` (h, n, m), one colour per head
    (``head_colour``), opacity = weight; ``top_k`` keeps each query's strongest keys only.

    A Vega-Lite spec with its data as named data sets: the layout, made by Altair, depends on the sizes and titles
    only and is built once for them (``_layout``); the rows are plain lists, since Altair walking every row into
    JSON and copying six layers per chart was a class's largest cost on the real-model page (bench_real.py)."""
    w = np.asarray(weights, dtype=float)
    h, n, m = w.shape
    keys = [str(x) for x in (key_labels if key_labels is not None else labels)]
    queries = [str(x) for x in labels]
    names = [str(x) for x in head_names]
    head, q, k = np.nonzero(_keep(w, top_k))
    rows = max(n, m)
    step = step or (20 if rows <= 16 else 16 if rows <= 32 else 12)
    spec = json.loads(_layout(h, rows, step, title, query_title, key_title, weight_title, head_title))
    weight = np.round(w[head, q, k], 4).tolist()
    spec["datasets"] = {
        LINES: [{"head": names[a], "q": b, "k": c, "query": queries[b], "key": keys[c], "weight": v}
                for a, b, c, v in zip(head.tolist(), q.tolist(), k.tolist(), weight, strict=True)],
        TOKENS: [{"tok": f"{side}{i}", "i": i, "label": label, "side": side, "x0": x0, "x1": x1, "lo": i - 0.5,
                  "hi": i + 0.5}
                 for side, texts, x0, x1 in (("q", queries, 0.0, X_QUERY), ("k", keys, X_KEY, 1.0))
                 for i, label in enumerate(texts)],
        TITLES: [{"label": query_title, "side": "q"}, {"label": key_title, "side": "k"}],
    }
    return spec


@functools.lru_cache(maxsize=64)
def _layout(h: int, rows: int, step: int, title: str, query_title: str,
            key_title: str, weight_title: str, head_title: str) -> str:
    """The chart without its rows, as JSON (a fresh copy per chart is one json.loads)."""
    font = 12 if step >= 16 else 10
    y = alt.Scale(domain=[-1.5, rows - 0.5], reverse=True)  # row -1 holds the column titles
    x = alt.Scale(domain=[0, 1])
    hover = alt.selection_point(name=HOVER, fields=["tok"], on=f"mouseover{_ON_TOKEN}", clear="mouseout")
    pick = alt.selection_point(name=PICK, fields=["tok"], on=f"click{_ON_TOKEN}",
                               clear="click[!(event.item && event.item.datum && event.item.datum.tok)]")
    many = h > 1
    legend = alt.Legend(orient="bottom", columns=2, labelLimit=260, symbolType="stroke",
                        symbolStrokeWidth=3) if many else None
    colour = alt.Color("head:N", title=head_title, sort=None, scale=alt.Scale(**head_scale()),  # the data's order
                       legend=legend)
    # channel objects, not alt.condition / alt.value dicts: Altair resolves a dict against the whole schema (slow)
    opacity = alt.Opacity("weight:Q", scale=alt.Scale(domain=[0, 1], range=[0, 1]), legend=None,
                          condition={"test": f"!({line_test(many)})", "value": 0})
    silent = alt.TooltipValue(None)  # tokens and titles: no tooltip
    rule = (
        alt.Chart(alt.NamedData(LINES)).mark_rule(strokeWidth=2)
        .encode(
            x=alt.XDatum(X_QUERY, scale=x, axis=None), x2=alt.X2Datum(X_KEY),
            y=alt.Y("q:Q", scale=y, axis=None), y2="k:Q", color=colour,
            opacity=opacity,
            tooltip=[alt.Tooltip("head:N", title=head_title), alt.Tooltip("query:N", title=query_title),
                     alt.Tooltip("key:N", title=key_title), alt.Tooltip("weight:Q", title=weight_title, format=".3f")],
        )
    )
    if h > len(OKABE_ITO):  # colours come round again after 8 heads: the later ones are dashed
        dashes = [[1, 0] if i < len(OKABE_ITO) else [5, 3] for i in range(MAX_DASHED)]
        rule = rule.encode(strokeDash=alt.StrokeDash("head:N", title=head_title, legend=legend, sort=None,
                                                     scale=alt.Scale(range=dashes)))
    if many:
        rule = rule.add_params(alt.selection_point(name=HEADS, fields=["head"], bind="legend", toggle="true"))
    # the whole row beside the lines is the token's target (a finger is wider than a word)
    targets = alt.Chart(alt.NamedData(TOKENS)).mark_rect(fill="#ffffff", fillOpacity=0.01).encode(
        x=alt.X("x0:Q", scale=x, axis=None), x2="x1:Q", y=alt.Y("lo:Q", scale=y, axis=None), y2="hi:Q",
        tooltip=silent)
    text = alt.Chart(alt.NamedData(TOKENS)).encode(
        y=alt.Y("i:Q", scale=y, axis=None), text="label:N", tooltip=silent,
        color=alt.ColorValue("#333333", condition=[  # the picked token black, the others faded while one is picked
            {"test": token_test(), "value": "#000000"},
            {"test": f"{_active(HOVER)} || {_active(PICK)}", "value": "#8C8C8C"}]))  # 3.3 : 1 on white
    left = (text.mark_text(align="right", dx=-6, fontSize=font, limit=110).encode(x=alt.XDatum(X_QUERY, scale=x))
            .transform_filter("datum.side == 'q'").add_params(hover, pick))
    right = (text.mark_text(align="left", dx=6, fontSize=font, limit=110).encode(x=alt.XDatum(X_KEY, scale=x))
             .transform_filter("datum.side == 'k'"))
    title_text = alt.Chart(alt.NamedData(TITLES)).encode(y=alt.YDatum(-1, scale=y), text="label:N", tooltip=silent)
    query_head = (title_text.mark_text(align="right", dx=-6, fontWeight="bold", fontSize=font, limit=160)
                  .encode(x=alt.XDatum(X_QUERY, scale=x)).transform_filter("datum.side == 'q'"))
    key_head = (title_text.mark_text(align="left", dx=6, fontWeight="bold", fontSize=font, limit=160)
                .encode(x=alt.XDatum(X_KEY, scale=x)).transform_filter("datum.side == 'k'"))
    chart = (
        alt.layer(targets, rule, left, right, query_head, key_head, title=title)
        .properties(width="container", height=step * (rows + 1), autosize=FIT_WIDTH)
        .configure_view(strokeWidth=0)
    )
    return json.dumps(chart.to_dict(validate=False))

"""Altair builders for the heads page: training curves, importance matrix, pruning curve, heads vs accuracy.

Pure functions from numbers and (already translated) labels to charts; colours from mha_core.charts.base
(viridis for magnitudes, Okabe–Ito for the curves), so they read in greyscale and for
colour-blind students.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from mha_core.charts.base import FIT_WIDTH, OKABE_ITO, WEIGHT_SCHEME, matrix_frame

LOSS_FLOOR = 1e-4   # an easy task's loss reaches ~1e-6; rounded to 0 it would fall off the log axis
MARK = OKABE_ITO[5]  # vermillion: the repeat, and where an induction head should look


def attention_map(m: np.ndarray, labels: Sequence[str], targets: np.ndarray, *, title: str = "",
                  row_title: str = "", col_title: str = "", value_title: str = "", size: int = 200) -> alt.Chart:
    """One head's (n, n) weights; cells in ``targets`` (the token after an earlier copy) are outlined, and
    labels ending in * (repeated tokens) are bold and coloured. One chart, so table view still works."""
    df = matrix_frame(m, labels, labels, "value")
    df["target"] = np.asarray(targets, dtype=bool).ravel()
    repeated = "indexof(datum.label, '*') >= 0"
    axis = {"labelFontWeight": alt.expr(f"{repeated} ? 'bold' : 'normal'"),
            "labelColor": alt.expr(f"{repeated} ? '{MARK}' : 'gray'"), "labelFontSize": 9, "labelLimit": 70}
    return (
        alt.Chart(df, title=title)
        .mark_rect(strokeWidth=1.5)
        .encode(
            x=alt.X("col:O", sort=list(labels), title=col_title, axis=alt.Axis(labelAngle=-60, **axis)),
            y=alt.Y("row:O", sort=list(labels), title=row_title, axis=alt.Axis(**axis)),
            color=alt.Color("value:Q", title=value_title, legend=alt.Legend(orient="bottom", gradientLength=100),
                            scale=alt.Scale(scheme=WEIGHT_SCHEME, domain=[0.0, 1.0])),
            stroke=alt.condition("datum.target", alt.value(MARK), alt.value(None)),
            tooltip=[alt.Tooltip("row:O", title=row_title or "row"), alt.Tooltip("col:O", title=col_title or "col"),
                     alt.Tooltip("value:Q", title=value_title, format=".3f")],
        )
        .properties(width="container", height=size, autosize=FIT_WIDTH)
    )

__all__ = ["attention_map", "loss_curve", "expected_curves", "importance_matrix", "pruning_chart", "heads_accuracy"]


def _steps_axis(title: str, max_step: int) -> alt.X:
    return alt.X("step:Q", title=title, scale=alt.Scale(domain=[0, max_step], nice=False))


def loss_curve(steps: Sequence[int], loss: Sequence[float], *, max_step: int, title: str = "", x_title: str = "",
               y_title: str = "", height: int = 200) -> alt.Chart:
    """Training loss per step on a log axis (it falls from ln 64 ≈ 4.2 towards 0; drawn down to LOSS_FLOOR)."""
    df = pd.DataFrame({"step": np.asarray(steps, dtype=int),
                       "loss": np.round(np.maximum(np.asarray(loss, dtype=float), LOSS_FLOOR), 4)})
    return (
        alt.Chart(df, title=title)
        .mark_line(color=OKABE_ITO[0], strokeWidth=1.5, clip=True)
        .encode(x=_steps_axis(x_title, max_step),
                y=alt.Y("loss:Q", title=y_title, scale=alt.Scale(type="log")),
                tooltip=[alt.Tooltip("step:Q", title=x_title), alt.Tooltip("loss:Q", title=y_title, format=".3f")])
        .properties(width="container", height=height, autosize=FIT_WIDTH)
    )


def expected_curves(steps: Sequence[int], values: Sequence[Sequence[float]], *, max_step: int, names: Sequence[str],
                    thresholds: Sequence[float], title: str = "", x_title: str = "", y_title: str = "",
                    height: int = 200) -> alt.LayerChart:
    """Several 0..1 curves per step (a task's held-out accuracy and its expected heads' best scores), each with its
    target or threshold as a dashed rule in the same colour."""
    names = list(names)
    df = pd.DataFrame({
        "step": np.tile(np.asarray(steps, dtype=int), len(names)),
        "score": np.round(np.concatenate([np.asarray(v, dtype=float) for v in values]), 4),
        "kind": [name for name in names for _ in steps],
    })
    rules = pd.DataFrame({"score": list(thresholds), "kind": names})
    colour = alt.Color("kind:N", title=None, scale=alt.Scale(domain=names, range=list(OKABE_ITO[:len(names)])),
                       legend=alt.Legend(orient="bottom", columns=1, labelLimit=0))
    lines = alt.Chart(df).mark_line(point=True).encode(
        x=_steps_axis(x_title, max_step), y=alt.Y("score:Q", title=y_title, scale=alt.Scale(domain=[0, 1])),
        color=colour, tooltip=["kind:N", alt.Tooltip("step:Q", title=x_title), alt.Tooltip("score:Q", format=".2f")],
    )
    dashed = alt.Chart(rules).mark_rule(strokeDash=[4, 4]).encode(y="score:Q", color=colour)
    return (lines + dashed).properties(title=title, width="container", height=height, autosize=FIT_WIDTH)


def importance_matrix(m: np.ndarray, rows: Sequence[str], cols: Sequence[str], *, title: str = "",
                      value_title: str = "", height: int = 160, top: float | None = None) -> alt.LayerChart:
    """(layers, heads) values (loss increases, pattern scores) as coloured cells with the number written in each;
    the colour scale ends at ``top`` (default: the largest value), e.g. 1.0 for scores, so 0.49 does not look full."""
    r, c = np.meshgrid(np.arange(m.shape[0]), np.arange(m.shape[1]), indexing="ij")
    df = pd.DataFrame({"row": np.asarray(rows, dtype=object)[r.ravel()],
                       "col": np.asarray(cols, dtype=object)[c.ravel()], "value": np.round(m.ravel().astype(float), 3)})
    top = max(float(np.max(m)), 1e-9) if top is None else top
    df["dark"] = df["value"] < top / 2  # viridis is dark at the bottom: write white there
    base = alt.Chart(df).encode(x=alt.X("col:O", sort=list(cols), title=None, axis=alt.Axis(labelAngle=0)),
                                y=alt.Y("row:O", sort=list(rows), title=None))
    cells = base.mark_rect().encode(
        color=alt.Color("value:Q", title=value_title, legend=alt.Legend(orient="bottom"),
                        scale=alt.Scale(scheme=WEIGHT_SCHEME, domain=[min(0.0, float(np.min(m))), top])),
        tooltip=["row:O", "col:O", alt.Tooltip("value:Q", title=value_title, format=".3f")],
    )
    text = base.mark_text(fontSize=12).encode(
        text=alt.Text("value:Q", format=".2f"),
        color=alt.condition("datum.dark", alt.value("white"), alt.value("black")),
    )
    return (cells + text).properties(title=title, width="container", height=height, autosize=FIT_WIDTH)


def pruning_chart(n_removed: Sequence[int], accuracy: Sequence[float], removed: Sequence[str], *, floor: float,
                  title: str = "", x_title: str = "", y_title: str = "", head_title: str = "",
                  height: int = 220) -> alt.LayerChart:
    """Accuracy as heads are removed (least important first); the dashed rule is "no real harm" (``floor``)."""
    df = pd.DataFrame({"n": np.asarray(n_removed, dtype=int), "accuracy": np.round(np.asarray(accuracy, float), 4),
                       "head": list(removed)})
    x = alt.X("n:Q", title=x_title, axis=alt.Axis(tickMinStep=1), scale=alt.Scale(domain=[0, int(df["n"].max())]))
    line = alt.Chart(df).mark_line(point=True, color=OKABE_ITO[0]).encode(
        x=x, y=alt.Y("accuracy:Q", title=y_title, scale=alt.Scale(domain=[0, 1])),
        tooltip=[alt.Tooltip("n:Q", title=x_title), alt.Tooltip("head:N", title=head_title),
                 alt.Tooltip("accuracy:Q", title=y_title, format=".3f")],
    )
    rule = alt.Chart(pd.DataFrame({"accuracy": [floor]})).mark_rule(strokeDash=[4, 4], color=OKABE_ITO[5]).encode(
        y="accuracy:Q")
    return (line + rule).properties(title=title, width="container", height=height, autosize=FIT_WIDTH)


def heads_accuracy(heads: Sequence[int], d_heads: Sequence[int], seeds: Sequence[int], accuracy: Sequence[float], *,
                   title: str = "", x_title: str = "", y_title: str = "", seed_title: str = "",
                   height: int = 240) -> alt.LayerChart:
    """One dot per trained run (h, seed) and a line through the mean accuracy of each h."""
    df = pd.DataFrame({"h": np.asarray(heads, dtype=int), "d_head": np.asarray(d_heads, dtype=int),
                       "seed": np.asarray(seeds, dtype=int), "accuracy": np.round(np.asarray(accuracy, float), 4)})
    mean = df.groupby("h", as_index=False).agg(accuracy=("accuracy", "mean"), d_head=("d_head", "first"))
    mean["accuracy"] = mean["accuracy"].round(4)
    order = sorted(df["h"].unique().tolist())
    x = alt.X("h:O", title=x_title, sort=order, axis=alt.Axis(labelAngle=0))
    y = alt.Y("accuracy:Q", title=y_title, scale=alt.Scale(zero=False))
    dots = alt.Chart(df).mark_circle(size=60, opacity=0.6, color=OKABE_ITO[0]).encode(
        x=x, y=y, tooltip=["h:O", "d_head:Q", alt.Tooltip("seed:Q", title=seed_title),
                           alt.Tooltip("accuracy:Q", title=y_title, format=".3f")])
    line = alt.Chart(mean).mark_line(point=alt.OverlayMarkDef(size=80), color=OKABE_ITO[5]).encode(
        x=x, y=y, tooltip=["h:O", "d_head:Q", alt.Tooltip("accuracy:Q", title=y_title, format=".3f")])
    return (dots + line).properties(title=title, width="container", height=height, autosize=FIT_WIDTH)

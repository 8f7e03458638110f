"""The app's own chart: a Streamlit component (st.components.v2, its JavaScript in the page, no iframe) that paints a
``charts.matrix.MatrixCanvas`` or ``LinesCanvas``, a ``charts.bars.BarsCanvas`` or a ``charts.plot.PlotCanvas`` on a
canvas (assets/charts/canvas/*.js)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st

from mha_core.ui.i18n import t

# The component's JavaScript, one ES module joined from a file per kind of chart (shared helpers and matrices first,
# the entry Streamlit calls last).
PARTS = tuple(Path(__file__).resolve().parents[2] / "assets" / "charts" / "canvas" / f"{name}.js"
              for name in ("matrix", "lines", "bars", "plot", "mount"))
NAME = "mha_matrix"  # the component's name: one per app (Streamlit warns when a name is registered again)


@st.cache_resource(show_spinner=False)
def _component() -> Callable[..., object]:
    """The component, registered once per process. Its elements live in the page's own DOM (no shadow root), so the
    page's font and colours apply and a finished paint is a DOM change the speed benchmark sees."""
    js = "\n".join(p.read_text(encoding="utf-8") for p in PARTS)
    return st.components.v2.component(NAME, js=js, isolate_styles=False)


def label(payload: dict, tables: str) -> str:
    """What a screen reader says of the chart: what it is, its size, and where its numbers are."""
    if payload.get("kind") == "lines":
        return t("common.canvas_lines", lines=len(payload["line_head"]), heads=len(payload["heads"]),
                 queries=len(payload["queries"]), keys=len(payload["keys"]), tables=tables)
    if payload.get("kind") == "plot":
        return t("common.canvas_plot", title=payload["title"] or t("common.canvas_untitled"),
                 n=len(payload["series"]), x=payload["x_title"] or "x", tables=tables)
    if payload.get("kind") == "bars":
        return t("common.canvas_bars", title=payload["title"] or t("common.canvas_untitled"),
                 n=len(payload["names"]), tables=tables)
    first = payload["panels"][0]
    size = {"rows": first["n_rows"], "cols": first["n_cols"], "tables": tables}
    if len(payload["panels"]) > 1:
        return t("common.canvas_grid", n=len(payload["panels"]), **size)
    return t("common.canvas_one", title=payload["title"] or t("common.canvas_untitled"), **size)


def matrix(payload: dict, key: str, tables: str) -> None:
    """Draw one chart (a ``MatrixCanvas``, ``LinesCanvas``, ``BarsCanvas`` or ``PlotCanvas`` payload) under the
    widget key ``key``: the same key in every run, so the browser keeps its canvas and repaints it instead of building
    a new one."""
    words = [t(f"common.cell_{w}") for w in ("row", "col", "value", "head")]  # a tooltip's names for untitled parts
    _component()(data={**payload, "label": label(payload, tables), "words": words}, key=key, width="stretch")

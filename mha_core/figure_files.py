"""Figures that leave the app: a chart as SVG or PNG, its numbers as CSV, under a file name that says the page and
the settings (``attend_h8_dh16_head3.svg``). Pure (no Streamlit); nothing is fetched: vl-convert carries Vega and
Vega-Lite inside its wheel, and the Chinese font is the Noto Sans CJK that a pip package ships (also the handout's).
"""

from __future__ import annotations

import csv
import functools
import importlib.resources
import io
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import vl_convert as vlc

from mha_core.attention import Trace
from mha_core.errors import LabError

if TYPE_CHECKING:
    import altair as alt  # a chart's type only: this module is on every page's path, Altair is not (0.27 s)

__all__ = ["EXPORT_FONT", "EXPORT_WIDTH", "PNG_SCALE", "chart_png", "chart_svg", "file_name", "heads_csv",
           "matrix_csv", "spec_png", "spec_svg", "table_csv", "weights_csv"]

EXPORT_FONT = "Noto Sans CJK SC"  # every exported figure's text: one face for both languages
PNG_SCALE = 2                     # a PNG at twice the chart's size, sharp on a slide or a handout
EXPORT_WIDTH = 480                # a chart that fits its container's width in the app is this wide in a file
_SAFE = re.compile(r"[^A-Za-z0-9.-]+")


@functools.cache
def _fonts() -> None:
    """Let vl-convert find the shipped CJK font (once per process; a machine's own fonts stay available)."""
    vlc.register_font_directory(str(importlib.resources.files("noto_cjk_sans_otc")))


def _spec(chart: alt.TopLevelMixin) -> dict:
    _fonts()
    spec = chart.to_dict()
    spec.setdefault("config", {})["font"] = EXPORT_FONT
    return spec


def _standalone(spec: Mapping, rows: Sequence[Mapping] | None) -> dict:
    """A spec as the app caches it (data apart, width of its container) as one self-contained spec."""
    _fonts()
    out = dict(spec)
    if rows is not None:
        out["data"] = {"values": list(rows)}
    if out.get("width") == "container":
        out["width"] = EXPORT_WIDTH
    out["config"] = {**out.get("config", {}), "font": EXPORT_FONT}
    return out


def spec_svg(spec: Mapping, rows: Sequence[Mapping] | None = None) -> bytes:
    """A Vega-Lite spec (with ``rows`` as its data when they are kept apart) as a standalone SVG document."""
    return vlc.vegalite_to_svg(_standalone(spec, rows)).encode("utf-8")


def spec_png(spec: Mapping, rows: Sequence[Mapping] | None = None, scale: int = PNG_SCALE) -> bytes:
    """A Vega-Lite spec (with ``rows`` as its data when they are kept apart) as a PNG at ``scale`` times its size."""
    return vlc.vegalite_to_png(_standalone(spec, rows), scale=scale)


def chart_svg(chart: alt.TopLevelMixin) -> bytes:
    """The chart as a standalone SVG document (UTF-8)."""
    return vlc.vegalite_to_svg(_spec(chart)).encode("utf-8")


def chart_png(chart: alt.TopLevelMixin, scale: int = PNG_SCALE) -> bytes:
    """The chart as a PNG image at ``scale`` times its size."""
    return vlc.vegalite_to_png(_spec(chart), scale=scale)


def table_csv(columns: Mapping[str, Sequence]) -> bytes:
    """Columns (header -> values, all of one length) as CSV; UTF-8 with a BOM, so spreadsheets read Chinese."""
    lengths = {len(v) for v in columns.values()}
    if len(lengths) > 1:
        raise LabError("csv_ragged", lengths=sorted(lengths))
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(columns)
    w.writerows(zip(*columns.values(), strict=True))
    return out.getvalue().encode("utf-8-sig")


def matrix_csv(matrix: np.ndarray, rows: Sequence[str], cols: Sequence[str], corner: str) -> bytes:
    """A matrix with a label per row and per column (``corner`` heads the label column); numbers in full precision."""
    m = np.asarray(matrix)
    if m.shape != (len(rows), len(cols)):
        raise LabError("csv_shape", shape=tuple(m.shape), rows=len(rows), cols=len(cols))
    columns: dict[str, Sequence] = {corner: list(rows)}
    for j, c in enumerate(cols):
        columns[c if c not in columns else f"{c} ({j})"] = [repr(float(x)) for x in m[:, j]]
    return table_csv(columns)


def weights_csv(trace: Trace, head: int, queries: Sequence[str], corner: str,
                keys: Sequence[str] | None = None) -> bytes:
    """One head's attention weights: a row per query, a column per key (``keys``: the other sequence's tokens in
    cross-attention; by default the queries' own), each row summing to 1."""
    if not 0 <= head < trace.n_heads:
        raise LabError("head_range", head=head, h=trace.n_heads)
    return matrix_csv(trace.weights[head], queries, queries if keys is None else keys, corner)


def heads_csv(mats: np.ndarray, heads: Sequence[str], rows: Sequence[str], cols: Sequence[str],
              names: Sequence[str]) -> bytes:
    """A stack of per-head matrices (h × rows × cols) in long form, one line per cell: ``names`` heads the four
    columns (head, row, column, value); numbers in full precision."""
    m = np.asarray(mats)
    if m.shape != (len(heads), len(rows), len(cols)):
        raise LabError("csv_shape", shape=tuple(m.shape), rows=len(rows), cols=len(cols))
    h, r, c = (a.ravel() for a in np.indices(m.shape))
    head, row, col, value = names
    return table_csv({head: [heads[i] for i in h], row: [rows[i] for i in r], col: [cols[i] for i in c],
                      value: [repr(float(x)) for x in m.ravel()]})


def file_name(page: str, ext: str, **settings: object) -> str:
    """``page_key1value1_key2value2.ext`` in the order given (``attend_h8_dh16_head3.svg``), safe on any system."""
    parts = [_SAFE.sub("-", str(page)).strip("-") or "figure"]
    parts += [_SAFE.sub("-", f"{k}{v}").strip("-") for k, v in settings.items()]
    return "_".join(p for p in parts if p) + "." + _SAFE.sub("", ext)

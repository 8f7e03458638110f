"""Helpers for AppTest-driven page tests: open a page in a language, collect what it shows."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from mha_core.ui.canvas import NAME as CANVAS
from mha_core.ui.render import FRAME

ROOT = Path(__file__).resolve().parents[1]
TEXT_ELEMENTS = ("title", "header", "subheader", "markdown", "caption", "info", "success", "warning", "error",
                 "latex", "code")


def open_page(script: str, lang: str = "zh", query: dict[str, str] | None = None, **state: object) -> AppTest:
    """Run app.py (at a URL with ``query``), then switch to ``script`` as a student clicking it in the sidebar."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["lang"] = lang
    for key, value in (query or {}).items():
        at.query_params[key] = value
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    at.switch_page(script)
    at.run()
    return at


def shown_text(at: AppTest) -> str:
    """Everything the page shows as text, including widget labels and metric values."""
    parts: list[str] = []
    for kind in TEXT_ELEMENTS:
        parts += [str(e.value) for e in getattr(at, kind)]
    for m in at.metric:
        parts += [str(m.label), str(m.value)]
    for kind in ("slider", "select_slider", "selectbox", "radio", "toggle", "text_area", "text_input",
                 "number_input", "button", "checkbox"):
        parts += [str(w.label) for w in getattr(at, kind)]
    return "\n".join(parts)


def visible_strings(lang: str) -> list[tuple[str, str]]:
    """Every visible string of one language: the i18n catalog and the quiz texts (citations written out)."""
    import tomllib

    from mha_core.i18n import catalog, cite_style
    from mha_core.sources import render_citations

    def flatten(table: dict, prefix: str = ""):
        for key, value in table.items():
            if isinstance(value, dict):
                yield from flatten(value, f"{prefix}{key}.")
            elif isinstance(value, str):
                yield f"{prefix}{key}", value

    with (ROOT / "assets" / "quiz" / f"{lang}.toml").open("rb") as f:
        quiz = [(f"quiz:{k}", render_citations(v, cite_style(lang))) for k, v in flatten(tomllib.load(f))]
    return sorted(catalog(lang).items()) + quiz


_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_UNESCAPE = re.compile(r"\\(.)")


def tables(at: AppTest) -> list[list[dict[str, str]]]:
    """The page's tables (render.table draws them as markdown), each as rows of {header: cell text as shown}."""
    out = []
    for element in at.markdown:
        lines = str(element.value).split("\n")
        if len(lines) < 2 or not lines[0].startswith("|") or not set(lines[1]) <= set("|:-"):
            continue
        cells = [[_UNESCAPE.sub(r"\1", c).strip() for c in _CELL_SPLIT.split(line.strip().strip("|"))]
                 for line in lines if line.startswith("|")]
        head, rows = cells[0], cells[2:]
        out.append([dict(zip(head, row, strict=True)) for row in rows])
    return out


def chart_frame(chart: object) -> bytes:
    """A drawn chart's frame as Arrow bytes (render.chart sends it as the data set named render.FRAME); b"" if it
    has none (a layered chart keeps its rows in its own data sets)."""
    return next((d.data.data for d in chart.proto.datasets if d.name == FRAME), b"")


def chart_bytes(chart: object) -> bytes:
    """A drawn chart as sent: its spec and every data set (Streamlit sends the data apart from the spec)."""
    proto = chart.proto
    return proto.spec.encode() + proto.data.SerializeToString(deterministic=True) + b"".join(
        d.SerializeToString(deterministic=True) for d in proto.datasets)


def canvas_protos(at: AppTest) -> list[object]:
    """The element (component proto) of every chart the page painted on the app's canvas (ui.canvas)."""
    return [e.proto for e in at.get("bidi_component") if e.proto.component_name == CANVAS]


def painted(at: AppTest) -> list[dict]:
    """Every chart the page painted on the app's canvas (ui.canvas), each as the data the browser got."""
    return [json.loads(p.bytes) for p in canvas_protos(at)]


def canvases(at: AppTest) -> list[dict]:
    """The matrix charts the page painted on the app's canvas (charts.matrix.MatrixCanvas)."""
    return [c for c in painted(at) if "kind" not in c]


def line_canvases(at: AppTest) -> list[dict]:
    """The token lines the page painted on the app's canvas (charts.matrix.LinesCanvas)."""
    return [c for c in painted(at) if c.get("kind") == "lines"]


def bar_canvases(at: AppTest) -> list[dict]:
    """The bar charts the page painted on the app's canvas (charts.bars.BarsCanvas)."""
    return [c for c in painted(at) if c.get("kind") == "bars"]


def charts(at: AppTest) -> list[object]:
    """Every chart the page drew, by Vega or on the app's canvas, in no particular order."""
    return list(at.get("vega_lite_chart")) + [e for e in at.get("bidi_component") if e.proto.component_name == CANVAS]


def chart_titles(at: AppTest) -> list[str]:
    """The title of every chart the page drew, by Vega or on the app's canvas."""
    return [json.loads(e.proto.spec).get("title") for e in at.get("vega_lite_chart")] + [
        c["title"] for c in painted(at)]


def canvas_titled(at: AppTest, title: str) -> dict:
    """The one canvas chart with this title, as the browser got it."""
    found = [c for c in canvases(at) if c["title"] == title]
    assert len(found) == 1, [c["title"] for c in canvases(at)]
    return found[0]


def panel_values(panel: dict) -> np.ndarray:
    """A canvas panel's values as the browser decodes them: (rows, cols) float32."""
    flat = np.frombuffer(base64.b64decode(panel["values"]), dtype="<f4")
    return flat.reshape(panel["n_rows"], panel["n_cols"])


def panel_colours(panel: dict) -> np.ndarray:
    """A canvas panel's cell colours as the browser decodes them: (rows, cols, 4) uint8 RGBA."""
    return np.frombuffer(base64.b64decode(panel["rgba"]), dtype=np.uint8).reshape(panel["n_rows"], panel["n_cols"], 4)

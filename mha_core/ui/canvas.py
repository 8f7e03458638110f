"""The app's own chart: a Streamlit component (st.components.v2, its JavaScript in the page, no iframe) that paints a
``charts.matrix.MatrixCanvas`` or ``LinesCanvas``, a ``charts.bars.BarsCanvas`` or a ``charts.plot.PlotCanvas`` on a
canvas (assets/charts/canvas/*.js)."""

from __future__ import annotations

import json
from pathlib import Path

import streamlit as st
from streamlit import runtime
from streamlit.components.v2.bidi_component.constants import INTERNAL_COMPONENT_NAME
from streamlit.elements.lib.form_utils import current_form_id
from streamlit.elements.lib.layout_utils import LayoutConfig
from streamlit.elements.lib.utils import compute_and_register_element_id
from streamlit.proto.BidiComponent_pb2 import BidiComponent as BidiComponentProto
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from mha_core.ui.i18n import t

# The component's JavaScript, one ES module joined from a file per kind of chart (shared helpers and matrices first,
# the entry Streamlit calls last).
PARTS = tuple(Path(__file__).resolve().parents[2] / "assets" / "charts" / "canvas" / f"{name}.js"
              for name in ("matrix", "lines", "bars", "plot", "mount"))
NAME = "mha_matrix"  # the component's name in the browser (one per app)
MODULE_MIME = "application/javascript"  # a JavaScript type, which a browser needs to import it (and a .js URL)

# What Streamlit sends with every chart: a loader that imports the module above from the server once per page (its
# URL is in the chart's data) and hands it the chart. Streamlit puts a component's JavaScript into every one of its
# elements, so the module inline made each chart's message 30 kB heavier on every run: 90-150 kB of a lesson page's
# 130-190 kB a move, and as much for every student following a live lesson.
LOADER = """\
const loaded = (window.__mhaCanvas ??= new Map());
const utf8 = new TextDecoder();
export default function (raw) {
  const args = { ...raw, data: JSON.parse(utf8.decode(raw.data)) };  // the chart as JSON bytes (see ``matrix``)
  const url = args.data.module;
  const mod = loaded.get(url);
  if (mod && mod.default) return mod.default(args);
  const next = mod || import(new URL(url, window.location.href).href).catch((e) => { loaded.delete(url); throw e; });
  loaded.set(url, next);
  return next.then((m) => { loaded.set(url, m); return m.default(args); });
}
"""


@st.cache_resource(show_spinner=False)
def module_source() -> bytes:
    """The charts' module (assets/charts/canvas/*.js joined), read once per process."""
    return "\n".join(p.read_text(encoding="utf-8") for p in PARTS).encode("utf-8")


def _module_url(key: str) -> str:
    """The module's URL for this run's chart ``key``: Streamlit's media store serves it (same origin, by its content's
    hash, so every session and every run has the same URL and a browser imports it once a page) and keeps it while a
    run of any session still names it."""
    url = runtime.get_instance().media_file_mgr.add(module_source(), MODULE_MIME, f"mha_canvas.{key}")
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}{url}" if base else url


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
    a new one. The chart goes as JSON bytes: given a dict, Streamlit serialises it twice (for the message and, sorted,
    for the element's identity) and looks through it for data frames; bytes it copies and hashes once. Attend's five
    charts took 3.1-3.4 ms a run as dicts, 1.0 ms as bytes (AppTest), which a live lesson pays for every follower."""
    words = [t(f"common.cell_{w}") for w in ("row", "col", "value", "head")]  # a tooltip's names for untitled parts
    chart = {**payload, "label": label(payload, tables), "words": words, "module": _module_url(key)}
    _mount(json.dumps(chart, separators=(",", ":")).encode("utf-8"), key)


def _mount(data: bytes, key: str) -> None:
    """Put the chart on the page as the very message ``st.components.v2.component(NAME, js=LOADER,
    isolate_styles=False)`` would send (tests/test_canvas_module.py), without the two widgets Streamlit's mount
    registers for a component's state and events, which the canvas never sends: registering them, and showing them in
    every later widget's view of the session's state, was 0.13 ms of the 0.19 a chart took to mount (AppTest), paid
    on every run of every follower. Its elements live in the page's own DOM (no shadow root), so the page's font and
    colours apply and a finished paint is a DOM change the speed benchmark sees."""
    if get_script_run_ctx() is None:
        return
    proto = BidiComponentProto(component_name=NAME, isolate_styles=False, js_content=LOADER, js_source_path="",
                               html_content="", css_content="", css_source_path="", bytes=data)
    main = st._main  # noqa: SLF001 - no public way to mount without the widgets
    proto.form_id = current_form_id(main)
    proto.id = compute_and_register_element_id("bidi_component", user_key=key, key_as_main_identity=True, dg=main)
    layout = LayoutConfig(width="stretch", height="content")
    main._enqueue(INTERNAL_COMPONENT_NAME, proto, layout_config=layout)  # noqa: SLF001

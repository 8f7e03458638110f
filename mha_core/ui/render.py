"""Shared renderers every page uses: header, errors, shapes, source, tables, charts.

Nothing here imports Altair or pandas: a fresh server's first page draws no Altair chart, and importing the two
cost its cold start 0.5 s (tests/test_imports.py keeps it so). A page that draws a chart imports its builder's
module, which brings them.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import inspect
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import streamlit as st
from streamlit.dataframe_util import convert_anything_to_arrow_bytes

from mha_core.charts.canvases import CANVASES
from mha_core.charts.spec import DRAW, IMAGE, arguments_digest, as_table, spec_and_data
from mha_core.errors import LabError
from mha_core.figure_files import matrix_csv, spec_png, spec_svg, table_csv
from mha_core.inputs import MAX_TOKENS
from mha_core.lru import MIB, ByteLRU, nbytes
from mha_core.markdown import escape_params, prose_columns, table_markdown
from mha_core.quiz import load_questions
from mha_core.settings import TABLES
from mha_core.ui import canvas, chart_downloads, compute
from mha_core.ui import frame as page_frame
from mha_core.ui.i18n import lang, t
from mha_core.ui.nav import PAGES, spec
from mha_core.ui.state import Settings
from mha_core.walkthrough import Walkthrough

if TYPE_CHECKING:
    import pandas as pd  # a chart's frame; never imported here (0.26 s of a first page that draws no chart)

CHARTS_PACKAGE = "mha_core.charts"  # where every chart builder lives (see chart)
MAX_IMAGE_ROWS = 50_000  # a chart of more marks offers its CSV only: an SVG of it would be too big to be useful
PANELS = "panels"  # key prefix of the box around a chart of panels (see chart)
_PANELS_CSS = f'<style>[class*="st-key-{PANELS}_"] {{ overflow-x: auto; }}</style>'
# A table wider than a phone (the glossary's four columns) scrolls sideways in place instead of being cut off.
_TABLE_CSS = '<style>[data-testid="stMarkdownContainer"] table { display: block; overflow-x: auto; }</style>'
FRAME = "frame"  # the name a chart's frame is drawn under (see _figure_of)
TABLE = "table"  # key prefix of the box around a table with prose columns (see table)
PROSE_WIDTH = "min(18em, 75vw)"  # a prose column's least width: about 40 Latin or 18 Chinese characters a line
SHAPES_PROSE_WIDTH = "min(11em, 33vw)"  # the shapes table's "what it is", beside a name and a shape kept whole


def page_header(key: str) -> None:
    """Title and one-line lead of a page (``<key>.title`` / ``<key>.lead``); a page's first call, so it first makes
    sure the page runs inside app.py's frame (see mha_core/ui/frame.py)."""
    page_frame.ensure()
    st.title(t(f"{key}.title"))
    st.caption(t(f"{key}.lead"))


def flash(key: str, err: LabError) -> None:
    """Leave a message under ``key`` for the next run (callbacks cannot draw)."""
    st.session_state[key] = err


def show_flash(key: str) -> None:
    """Show the message a callback left under ``key``, once."""
    err = st.session_state.pop(key, None)
    if err is not None:
        show_error(err)


def show_error(err: LabError) -> None:
    """A translated, student-readable message instead of a traceback (user text in it escaped)."""
    st.error(t(f"errors.{err.key}", **escape_params(err.params)), icon=":material/error:")


def walkthrough_or_stop(s: Settings) -> Walkthrough:
    """The trace for the settings; on bad input show why and stop the page (no traceback)."""
    try:
        wt = compute.walkthrough(s)
    except LabError as err:
        show_error(err)
        st.stop()
    if wt.tokens.dropped:
        st.info(t("common.truncated", max=MAX_TOKENS, dropped=wt.tokens.dropped), icon=":material/content_cut:")
    return wt


def shapes(rows: Sequence[tuple[str, tuple[int, ...], str]]) -> None:
    """A table of tensors: name, live shape, and what it is (i18n key)."""
    body = "\n".join(f"| `{name}` | `{' × '.join(map(str, shape))}` | {t(meaning)} |" for name, shape, meaning in rows)
    _draw_table(f"| {t('common.tensor')} | {t('common.shape')} | {t('common.meaning')} |\n|---|---|---|\n{body}",
                {3: SHAPES_PROSE_WIDTH}, whole=(2,))


def source(*objs: Callable) -> None:
    """The core functions' own source, as it ran: what the page shows is what this code computed.

    Drawn only while the expander is open (opening it reruns the page): highlighted code is a page's largest share
    of DOM nodes, redrawn on every move though nobody reads it, and its highlighter the largest script a first
    page would load (benchmarks/bench_speed.py).
    """
    with st.expander(t("common.code_that_ran"), icon=":material/code:", key=source_key(*objs),
                     on_change="rerun") as box:
        if box.open:
            for obj in objs:
                st.caption(f"`{_qualified(obj)}`")
                st.code(inspect.getsource(obj), language="python")


def _qualified(obj: Callable) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


def source_key(*objs: Callable) -> str:
    """The widget key of ``source(*objs)``'s expander (its open state): one per set of functions shown."""
    return "source_" + hashlib.blake2b(" ".join(map(_qualified, objs)).encode(), digest_size=6).hexdigest()


def head_title(wt: Walkthrough, i: int) -> str:
    """"head i · what it was built for" (illustrative) or "head i" (random)."""
    kinds = wt.weights.head_kinds
    if kinds:
        return t("common.head_title_kind", i=i, kind=t(f"kinds.{kinds[i]}"))
    return t("common.head_title", i=i)


def svg_diagram(svg: str, key: str, alt: str) -> None:
    """A diagram drawn on the server as an SVG document, shown as an image described by ``alt`` (what a screen reader
    says instead), with a download button of the same file.

    The browser only decodes an image: no layout engine runs there (Streamlit's graphviz chart loads Graphviz as
    WebAssembly, lays the graph out on every change and morphs the old drawing into the new one, which cost a
    slider move on the overview several times the floor of a bare page, most on slow phones).
    """
    st.image(svg, width="content", alt=alt)
    chart_downloads.diagram_button(key, functools.partial(str, svg), name=key)


def table(columns: dict[str, Sequence], decimals: int = 3) -> None:
    """A small static table, numbers to ``decimals`` and right-aligned, as markdown: drawn with the page's text, with
    no data grid's scripts to load and no pandas to import (a first page's cold start). Prose columns (the
    glossary's definitions) keep a reading width on a phone, and the table scrolls sideways."""
    _draw_table(table_markdown(columns, decimals), dict.fromkeys(prose_columns(columns), PROSE_WIDTH))


def _draw_table(text: str, prose: dict[int, str], whole: Sequence[int] = ()) -> None:
    """A markdown table that scrolls sideways on a narrow screen, its ``prose`` columns (1-based) at least their
    width, its ``whole`` columns' code never broken across lines ("7 × 64")."""
    if not prose and not whole:
        st.html(_TABLE_CSS)  # static style only; no user text
        st.markdown(text)
        return
    key = f"{TABLE}_{hashlib.blake2b(text.encode(), digest_size=6).hexdigest()}"
    rules = [f".st-key-{key} table {{ display: block; overflow-x: auto; }}"]  # as _TABLE_CSS: one style element
    rules += [f".st-key-{key} td:nth-child({i}) {{ min-width: {width}; }}" for i, width in prose.items()]
    rules += [f".st-key-{key} td:nth-child({i}) code {{ white-space: nowrap; }}" for i in whole]
    with st.container(key=key):
        st.html(f"<style>{' '.join(rules)}</style>")  # positions, widths and a hash only: no user text
        st.markdown(text)


def page_link(key: str, label: str | None = None, icon: str | None = None) -> None:
    """A link to the page ``key`` (by default titled and marked as in the navigation)."""
    st.page_link(page_frame.page(key, lang()), label=label or t(f"nav.{key}"), icon=icon or spec(key).icon)


def next_steps(*keys: str) -> None:
    """Links to the pages that continue the lesson."""
    present = {p.key: p for p in PAGES}
    links = [present[k] for k in keys if k in present]
    if not links:
        return
    st.divider()
    st.markdown(f"**{t('common.next')}**")
    for p in links:
        page_link(p.key)


def builder_name(builder: Callable[..., object]) -> str:
    """``module.name`` of a chart builder, after checking it is a plain module-level function in mha_core.charts.

    The name is what the cache keys on (st.cache_data hashes a function by its bare name only), so a lambda,
    closure or method (whose output could depend on more than its arguments) is refused.
    """
    module, name = getattr(builder, "__module__", ""), getattr(builder, "__qualname__", "")
    if not (inspect.isfunction(builder) and module.startswith(f"{CHARTS_PACKAGE}.") and "." not in name
            and "<" not in name and builder.__closure__ is None
            and getattr(sys.modules.get(module), name, None) is builder):
        raise TypeError(f"render.chart needs a module-level function of {CHARTS_PACKAGE}, got {builder!r}")
    return f"{module}.{name}"


@dataclass(frozen=True)
class Figure:
    """One chart as built once per distinct input and shared, read-only, by every session that draws it."""

    spec: dict               # the Vega-Lite spec without its frame; inline data sets (a layered chart's) as rows
    data: pa.Table | None    # the frame (the table view, the CSV, the images); drawn holds its bytes
    drawn: dict              # the spec as st.vega_lite_chart gets it: every data set, the frame too, as Arrow IPC bytes
                             # (empty when the app's canvas draws the chart)
    panels: str | None       # the field a chart of panels splits its data by (None: a single chart)
    canvas: dict | None      # a matrix chart as the app's canvas draws it (charts.matrix), instead of Vega; else None


def _figure_bytes(f: Figure) -> int:
    """What a Figure costs the cache: its specs and its frame's Arrow buffers."""
    return nbytes(f.spec) + nbytes(f.drawn) + nbytes(f.canvas) + (0 if f.data is None else f.data.nbytes)


FIGURES = ByteLRU(128 * MIB, size=_figure_bytes)  # every chart drawn, once per distinct input, for the process
PAINTS = ByteLRU(64 * MIB, size=nbytes)  # what the app's canvas draws of a chart, once per distinct input


def _paint_of(name: str, args: tuple, kwargs: dict, digest: bytes) -> dict:
    """What the app's canvas draws of the chart ``name`` builds from these arguments, without building its Altair
    figure: that is needed only for the table view and the downloads, and took most of a generation step's charts
    (23 of 25 ms a step for its seven charts, each a new input)."""
    return PAINTS.get((name, digest), lambda: CANVASES[name](*args, **kwargs).payload())


def _figure_of(builder: Callable[..., object], name: str, args: tuple, kwargs: dict, digest: bytes) -> Figure:
    """``builder(*args, **kwargs)`` as a Figure, keyed on the builder's name and the digest of every argument
    (``charts.spec.arguments_digest``): built once per distinct input, never for another input.

    Shared, not copied: st.cache_data hashed the key with Streamlit's hasher and unpickled a copy of the spec and
    frame for every chart of every run, and Streamlit turned each data set into Arrow bytes on every run — together
    most of a follower's redraw of a chart (benchmarks/bench_fanout.py). So the frame is drawn as a named data set
    of bytes made once (Streamlit sends bytes as they are, and its frontend swaps a named set's rows in place, as it
    does the frame's). Nothing changes a Figure: Streamlit copies a spec's top level before it takes the sets out."""
    def build() -> Figure:
        spec, frame = spec_and_data(builder(*args, **kwargs))
        data = None if frame is None else pa.Table.from_pandas(frame, preserve_index=False)
        if data is None and "values" in spec.get("data", {}):  # inline rows (the cost lab's): its table and CSV
            data = pa.Table.from_pylist(spec["data"]["values"])
        if name in CANVASES:  # the app's canvas draws it: the spec and frame make the downloads and the table view
            return Figure(spec, data, {}, _panel_field(spec), _paint_of(name, args, kwargs, digest))
        drawn = copy.deepcopy({k: v for k, v in spec.items() if k != "datasets"})  # Streamlit patches a few titles
        sets = {k: convert_anything_to_arrow_bytes(rows) for k, rows in spec.get("datasets", {}).items()}
        if data is not None:
            drawn["data"] = {"name": FRAME}
            sets[FRAME] = convert_anything_to_arrow_bytes(rows_to_draw(data))
        if sets:
            drawn["datasets"] = sets
        return Figure(spec, data, drawn, _panel_field(spec), None)
    return FIGURES.get((name, digest), build)


def figure(builder: Callable[..., object], *args: object, **kwargs: object) -> tuple[dict, pa.Table | None]:
    """The cached (spec, data) that ``render.chart`` draws (tests read it to compare two inputs)."""
    f = _figure_of(builder, builder_name(builder), args, kwargs, arguments_digest(args, kwargs))
    return f.spec, f.data


def chart(builder: Callable[..., object], *args: object, export: chart_downloads.Export | None = None,
          **kwargs: object) -> None:
    """Draw the chart ``builder(*args, **kwargs)`` builds (a pure function in mha_core.charts), cached on the builder
    and its actual arguments, so no input can be left out of the key; under it, downloads of it as SVG, PNG and
    CSV (``export`` names the files and can give the CSV's exact numbers; see mha_core/ui/chart_downloads.py).

    In table view (sidebar switch) the chart is shown as the table of its numbers instead (a heatmap as its
    matrix, a grid of heatmaps as one matrix per panel), with its CSV.
    """
    name = builder_name(builder)
    digest = arguments_digest(args, kwargs)
    key = chart_downloads.widget_key(name, export)  # the same in every run, whatever the data
    painted = name in CANVASES
    tables_on = bool(st.session_state.get(TABLES.key))
    # a chart on the app's canvas needs its figure only for the table view (and its menu, once opened)
    f = _figure_of(builder, name, args, kwargs, digest) if tables_on or not painted else None
    tables = f is not None and tables_on and f.data is not None
    if tables:
        _as_tables(f.spec, f.data.to_pandas())
    elif painted:
        canvas.matrix(_paint_of(name, args, kwargs, digest), f"{key}_canvas", t(TABLES.label))
    elif f.panels is None:
        st.vega_lite_chart(None, f.drawn, width="stretch")
    else:
        # Panels have a fixed size (Vega-Lite cannot fit a faceted chart to its container): on a narrow screen the
        # grid scrolls sideways inside its own box instead of being cut off at the column's edge. The box's key is
        # the chart's, not its data's: a new key would be a new box, and the browser would build the chart anew.
        with st.container(key=f"{PANELS}_{key}"):
            st.html(_PANELS_CSS)  # static style only; no user text
            st.vega_lite_chart(None, f.drawn, width="content")
    if f is not None and not tables and not painted and drawn_as_pixels(f.data):
        st.caption(t("common.pixels_note", cells=f.data.num_rows, tables=t(TABLES.label)))
    _downloads(builder, name, args, kwargs, digest, export, key, images=None if f is None else not tables and (
        f.data is None or f.data.num_rows <= MAX_IMAGE_ROWS))


def rows_to_draw(data: pa.Table) -> pa.Table:
    """The rows of a chart's frame the browser needs: a chart drawn as pixels marks them (``_draw``: its images and
    tooltip bands) and keeps every cell only for the table view and the CSV, which the server makes. The browser
    turns every row it gets into an object (9,216 cells of a head grid: ~50 ms of a move at 1x)."""
    return data.filter(data.column(DRAW)) if DRAW in data.column_names else data


def drawn_as_pixels(data: pa.Table | None) -> bool:
    """A matrix chart drawn as one image (charts.matrix.PIXEL_CELLS) whose frame still has every cell (row, col, value):
    its numbers are in the table view and the CSV, which the page says under it."""
    return data is not None and {"row", "col", "value", IMAGE} <= set(data.column_names)


def _downloads(builder: Callable[..., object], name: str, args: tuple, kwargs: dict, digest: bytes,
               ex: chart_downloads.Export | None, key: str, images: bool | None) -> None:
    """The chart's download buttons (widget ``key``); every file is built on click (the images cached on the
    chart's digest). ``images`` None: offered if the chart's figure is small enough, asked only once the menu is
    open (a chart on the app's canvas has no figure built until then)."""
    def exts() -> tuple[str, ...]:
        fits = images if images is not None else _fits_an_image(builder, name, args, kwargs, digest)
        return ("svg", "png", "csv") if fits else ("csv",)

    def files() -> dict[str, Callable[[], bytes]]:
        out: dict[str, Callable[[], bytes]] = {
            ext: functools.partial(_image, builder, name, args, kwargs, digest, ext) for ext in exts() if ext != "csv"}
        out["csv"] = ex.csv if ex is not None and ex.csv is not None else functools.partial(
            _data_csv, builder, name, args, kwargs, digest)
        return out

    chart_downloads.buttons(key, lambda: chart_downloads.file_names(name, ex, exts()), files)


def _fits_an_image(builder: Callable[..., object], name: str, args: tuple, kwargs: dict, digest: bytes) -> bool:
    """Whether the chart's figure is small enough to download as an image (its frame at most MAX_IMAGE_ROWS)."""
    f = _figure_of(builder, name, args, kwargs, digest)
    return f.data is None or f.data.num_rows <= MAX_IMAGE_ROWS


@st.cache_data(max_entries=64, show_spinner=False)
def _image(_builder: Callable[..., object], name: str, _args: tuple, _kwargs: dict, digest: bytes, ext: str) -> bytes:
    """The chart as an SVG or PNG file, made from its cached (spec, data) once per chart (``digest``) and format."""
    f = _figure_of(_builder, name, _args, _kwargs, digest)
    spec, rows = f.spec, None if f.data is None else f.data.to_pylist()
    return spec_svg(spec, rows) if ext == "svg" else spec_png(spec, rows)


def _data_csv(_builder: Callable[..., object], name: str, args: tuple, kwargs: dict, digest: bytes) -> bytes:
    """The chart's own numbers as CSV (as drawn): a heatmap as its labelled matrix, any other chart as its table."""
    f = _figure_of(_builder, name, args, kwargs, digest)
    spec, data = f.spec, f.data
    if data is None:  # a layered chart keeps its data inline: its first data set
        rows = next(iter(spec.get("datasets", {}).values()), [])
        return table_csv({c: [r.get(c) for r in rows] for c in (rows[0] if rows else {})})
    frame = data.to_pandas()
    frame = frame.drop(columns=[c for c in frame.columns if str(c).startswith("_")])  # drawing only: place, pixels
    if {"row", "col", "value"} == set(frame.columns):
        m = as_table(frame)
        enc = spec.get("encoding", {})
        corner = " \\ ".join(str(enc.get(a, {}).get("title") or "") for a in ("y", "x")).strip(" \\")
        return matrix_csv(m.to_numpy(), [str(r) for r in m.index], [str(c) for c in m.columns],
                                 corner or t("export.corner"))
    return table_csv({c: frame[c].tolist() for c in frame.columns})


def _panel_field(spec: dict) -> str | None:
    """The field a chart of panels (a facet channel) splits its data by; None for a single chart."""
    return spec.get("encoding", {}).get("facet", {}).get("field")


def _as_tables(spec: dict, frame: pd.DataFrame) -> None:
    """A chart's numbers as tables: one per facet panel (with its title), a heatmap as its matrix."""
    title = spec.get("title")
    if title:
        st.markdown(f"**{title}**")
    panel = _panel_field(spec)
    groups = frame.groupby(panel, sort=False) if panel else [(None, frame)]
    for name, part in groups:
        if name is not None:
            st.markdown(f"**{name}**")
        part = part.drop(columns=[panel]) if panel else part
        part = part.drop(columns=[c for c in part.columns if str(c).startswith("_")])  # drawing only: place, pixels
        heat = {"row", "col", "value"} <= set(part.columns)
        st.dataframe(as_table(part) if heat else part, width="stretch", hide_index=not heat)


def check_yourself(page_key: str, sections: Sequence[str] = ()) -> None:
    """The quiz questions that test this page's point (or these bank sections), and a link to them."""
    quiz = next((p for p in PAGES if p.key == "quiz"), None)
    questions = [q for q in load_questions(lang()) if q.teaches == page_key or q.section in sections]
    if quiz is None or not questions:
        return
    with st.container(border=True):
        st.markdown(f"**{t('common.check_yourself')}**")
        st.markdown("\n".join(f"- {q.title}" for q in questions))
        page_link(quiz.key, t("common.go_quiz", n=len(questions)))

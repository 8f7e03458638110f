"""The floor pages of the speed benchmarks (benchmarks.bench_speed, benchmarks.bench_fanout): a bare Streamlit app
(one slider, one line) that can also draw a page's worth of charts, paragraphs, widgets and navigation links, and
the query that makes it draw as much as a given page. Here, not in benchmarks/, so a test can check what it draws."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

# The element kinds the bare page can draw as themselves (its KINDS): widgets, metrics and page links, which cost
# more than a paragraph; headings, alerts, captions and styles are drawn as paragraphs.
HEAVY_KINDS = frozenset({"slider", "radio", "checkbox", "selectbox", "text_area", "button", "button_group", "metric",
                         "page_link"})

BARE_APP = textwrap.dedent("""\
    import streamlit as st

    HEATMAP = {  # the floor of a chart: an 8 x 8 heatmap whose data follows h (the spec stays, so Streamlit swaps
        "mark": "rect", "width": "container", "height": 220,  # the data in place, as on most of the app's charts)
        "encoding": {"x": {"field": "col", "type": "ordinal"}, "y": {"field": "row", "type": "ordinal"},
                     "color": {"field": "value", "type": "quantitative", "scale": {"domain": [0, 1]}},
                     "tooltip": [{"field": "row"}, {"field": "col"}, {"field": "value", "format": ".3f"}]},
        "usermeta": {"embedOptions": {"renderer": "canvas"}}, "config": {"aria": False}}


    @st.cache_resource(show_spinner=False)
    def cells(h: int, k: int, n_rows: int = 8, n_cols: int = 8):
        \"\"\"Chart k's rows at h, as Arrow, built once (the app builds each chart's data once per input, too).\"\"\"
        import pyarrow as pa
        rows = [(r, c, ((r * 7 + c * 3 + h + k) % 11) / 10) for r in range(n_rows) for c in range(n_cols)]
        return pa.table({name: [row[i] for row in rows] for i, name in enumerate(("row", "col", "value"))})


    # A lead for issue 26 (?canvas=1): the charts' cells drawn on a canvas by a component of the page's own
    # (st.components.v2: its JavaScript runs in the page, no iframe) from the values each run sends, with row labels
    # and a hover tooltip, instead of by Vega; benchmarks.bench_canvas times both.
    CANVAS_JS = \"\"\"
    export default function ({ data, parentElement }) {
      const host = parentElement.host || parentElement;
      let c = parentElement.querySelector("canvas");
      if (!c) {
        c = document.createElement("canvas");
        c.style.width = "100%"; c.style.height = "220px"; c.setAttribute("role", "img");
        parentElement.appendChild(c);
      }
      const w = host.clientWidth || 600, h = 220, dpr = window.devicePixelRatio || 1;
      c.width = w * dpr; c.height = h * dpr; c.setAttribute("aria-label", data.label);
      const g = c.getContext("2d"); g.scale(dpr, dpr); g.clearRect(0, 0, w, h);
      const R = data.rows, C = data.cols, v = data.values, x0 = 30, cw = (w - x0) / C, ch = (h - 20) / R;
      g.font = "10px sans-serif"; g.fillStyle = getComputedStyle(host).color;
      for (let r = 0; r < R; r++) g.fillText(String(r), 10, r * ch + ch / 2 + 3);
      for (let r = 0; r < R; r++) for (let k = 0; k < C; k++) {
        const x = v[r * C + k]; g.fillStyle = `rgb(${255 - 200 * x},${255 - 120 * x},${255 - 40 * x})`;
        g.fillRect(x0 + k * cw, r * ch, cw + 0.5, ch + 0.5);
      }
      c.onmousemove = (e) => {
        const k = Math.floor((e.offsetX - x0) / cw), r = Math.floor(e.offsetY / ch);
        c.title = r >= 0 && r < R && k >= 0 && k < C ? `row ${r}, col ${k}: ${v[r * C + k].toFixed(3)}` : "";
      };
    }
    \"\"\"


    @st.cache_resource(show_spinner=False)
    def canvas_component():
        \"\"\"The component, registered once per process (a name registered again is logged as a warning).\"\"\"
        return st.components.v2.component("floor_canvas", js=CANVAS_JS)


    def chart(h: int, k: int, n_rows: int, n_cols: int, canvas: bool) -> None:
        \"\"\"Chart k at h: Vega's heatmap of the rows, or the same values on the page's own canvas.\"\"\"
        data = cells(h, k, n_rows, n_cols)
        if not canvas:
            st.vega_lite_chart(data, HEATMAP, width="stretch")
            return
        values = data.column("value").to_pylist()
        canvas_component()(data={"rows": n_rows, "cols": n_cols, "values": values, "label": f"chart {k}"},
                           key=f"canvas{k}")


    def paragraph(i: int) -> None:
        st.markdown(f"**Paragraph {i}.** The same text on every run, as most of a lesson page is.")


    # The floor of an element of a kind heavier than a paragraph: one of that kind, its label and options fixed
    # (?kinds=radio,metric,...: one each, in order; a kind not listed here is drawn as a paragraph).
    KINDS = {
        "slider": lambda i: st.slider(f"Slider {i}", 0, 10, 5, key=f"k{i}"),
        "radio": lambda i: st.radio(f"Radio {i}", ["one", "two", "three"], horizontal=True, key=f"k{i}"),
        "checkbox": lambda i: st.toggle(f"Toggle {i}", key=f"k{i}"),
        "selectbox": lambda i: st.selectbox(f"Select {i}", ["one", "two", "three"], key=f"k{i}"),
        "text_area": lambda i: st.text_area(f"Text {i}", "The cat chased the ball.", key=f"k{i}"),
        "button": lambda i: st.button(f"Button {i}", key=f"k{i}"),
        "button_group": lambda i: st.segmented_control(f"Pick {i}", ["one", "two"], key=f"k{i}"),
        "metric": lambda i: st.metric(f"Metric {i}", f"{4096 + i:,}"),
        "page_link": lambda i: st.page_link(PAGES[1 + i % (len(PAGES) - 1)]) if len(PAGES) > 1 else paragraph(i),
    }


    def page() -> None:
        h = st.slider("h", 1, 16, 4, key="h")
        st.write(h)
        n_rows = int(st.query_params.get("rows", 8))  # ?rows=10&cols=64: each chart a lesson chart's 640 cells
        n_cols = int(st.query_params.get("cols", 8))
        for k in range(int(st.query_params.get("charts", st.query_params.get("chart", 0)))):  # ?chart=1 for one
            chart(h, k, n_rows, n_cols, st.query_params.get("canvas") == "1")
        for i, kind in enumerate(filter(None, st.query_params.get("kinds", "").split(","))):
            KINDS.get(kind, paragraph)(i)
        for i in range(int(st.query_params.get("elements", 0))):  # the floor of a page's size: unchanged paragraphs
            paragraph(i)


    def other() -> None:
        st.write("another page")


    links = int(st.query_params.get("pages", 0))  # the floor of a multipage app: its navigation, redrawn every run
    PAGES = [st.Page(page, title="Page 0", default=True),
             *(st.Page(other, title=f"Page {i}", url_path=f"p{i}") for i in range(1, links))] if links else []
    if links:
        st.navigation(PAGES).run()
    else:
        page()
    """)


def floor_query(census: tuple[int, int, int], kinds: Sequence[str] = ()) -> dict[str, str]:
    """The bare page's query for a census (elements, charts, links): the slider and its line are two elements;
    ``kinds``, the page's elements by kind (Streamlit's element types, in order), makes the floor draw each widget,
    metric and link as one of its kind instead of a paragraph (the rest stay paragraphs)."""
    elements, charts, links = census
    if not kinds:
        return {"charts": str(charts), "elements": str(max(elements - charts - 2, 0)), "pages": str(links)}
    rest = [k for k in kinds if k != "vega_lite_chart"]
    # The bare page's own slider and line stand for two of the page's elements: its slider and a paragraph; on a page
    # without a slider (cross) a widget of another kind, and on one without a paragraph, any element.
    for own, widget in (("slider", True), ("markdown", False)):
        alike = [k for k in rest if (k in HEAVY_KINDS) == widget]
        stand_in = own if own in rest else (alike or rest or [None])[0]
        if stand_in is not None:
            rest.remove(stand_in)
    heavy = [k for k in rest if k in HEAVY_KINDS]
    return {"charts": str(charts), "kinds": ",".join(heavy), "elements": str(len(rest) - len(heavy)),
            "pages": str(links)}


def frame_query(links: int) -> dict[str, str]:
    """The bare page's query for the least frame the design card asks of a lesson page: a navigation of ``links``
    pages, a second slider (h and d_head), a widget for the language, a live parameter count (a metric), a title and a
    lead (two paragraphs) and one chart. The app's own sidebar draws more (toggles, a sentence box, the counts as a
    table), so this bounds a page from below; it does not stand for the app's frame."""
    return {"pages": str(links), "kinds": "slider,button_group,metric", "elements": "2", "charts": "1"}

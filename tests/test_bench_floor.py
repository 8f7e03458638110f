"""The benchmarks' floor page draws what it stands for: a page's census (elements, charts, links) with each widget,
metric and page link as one of its kind (harness.floor.floor_query; both benchmarks also check the census
at run time, this checks the kinds, which they do not)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from harness.floor import BARE_APP, HEAVY_KINDS, floor_query, frame_query

# attend's elements by kind, as harness.websocket_client saw them (the sidebar's included), in a shorter page
KINDS = ["markdown", "heading", "slider", "radio", "checkbox", "slider", "markdown", "vega_lite_chart", "metric",
         "metric", "page_link", "text_area", "selectbox", "button", "button_group", "alert", "html", "radio"]


def test_the_kinds_floor_draws_each_heavy_element_as_its_kind_and_as_many_elements():
    census = (len(KINDS), KINDS.count("vega_lite_chart"), 3)
    query = floor_query(census, KINDS)
    heavy = [k for k in KINDS if k in HEAVY_KINDS]
    heavy.remove("slider")  # the bare page's own slider
    assert query["kinds"].split(",") == heavy
    # the page's own slider and line, the charts, the kinds and the paragraphs: as many elements as the page
    assert 2 + int(query["charts"]) + len(heavy) + int(query["elements"]) == census[0]
    assert floor_query(census) == {"charts": "1", "elements": str(len(KINDS) - 3), "pages": "3"}

    at = AppTest.from_string(BARE_APP, default_timeout=60)
    at.query_params.update(query)
    at.run()
    assert not at.exception
    assert len(at.slider) == 2 and len(at.radio) == 2 and len(at.toggle) == 1 and len(at.selectbox) == 1
    assert len(at.text_area) == 1 and len(at.button) == 1 and len(at.metric) == 2
    assert [len(at.get(kind)) for kind in ("page_link", "button_group", "vega_lite_chart")] == [1, 1, 1]


def test_a_page_without_a_slider_gets_as_many_elements_its_own_slider_standing_for_one_of_its_widgets():
    """cross has no slider (its control is a radio): the floor drew one element more than the page (bench_speed
    refused it: 'drew (56, 6, 16), not (55, 6, 16)')."""
    kinds = [k for k in KINDS if k != "slider"]
    census = (len(kinds), kinds.count("vega_lite_chart"), 3)
    query = floor_query(census, kinds)
    heavy = [k for k in kinds if k in HEAVY_KINDS]
    assert query["kinds"].split(",") == heavy[1:]  # the first widget (a radio) is the bare page's own slider
    assert 2 + int(query["charts"]) + len(heavy) - 1 + int(query["elements"]) == census[0]

    at = AppTest.from_string(BARE_APP, default_timeout=60)
    at.query_params.update(query)
    at.run()
    assert not at.exception
    drawn = len(at.get("slider")) + len(at.get("markdown")) + len(at.get("vega_lite_chart")) + sum(
        len(at.get(kind)) for kind in ("radio", "toggle", "selectbox", "text_area", "button", "button_group",
                                       "metric", "page_link"))
    assert drawn == census[0]


def test_the_frame_floor_draws_what_every_lesson_page_draws_before_its_own_content():
    """bench_speed's bare+frame, the least frame the design card asks of a lesson page: the app's navigation, two
    sliders (h, d_head), a language widget, a live count, a title and a lead, one chart."""
    from mha_core.ui.nav import PAGES

    at = AppTest.from_string(BARE_APP, default_timeout=60)
    at.query_params.update(frame_query(len(PAGES)))
    at.run()
    assert not at.exception
    assert len(at.slider) == 2 and len(at.get("button_group")) == 1 and len(at.metric) == 1
    assert len(at.get("vega_lite_chart")) == 1 and len(at.markdown) == 3  # the bare page's line, a title, a lead


def test_the_canvas_lead_draws_the_same_cells_by_vega_and_by_the_pages_own_component():
    """benchmarks.bench_canvas times three 10 x 64 heatmaps drawn by Vega against the same values drawn by a
    st.components.v2 canvas: both pages must draw three charts of 640 cells each, and only their way differs."""
    import json

    import pyarrow as pa

    drawn = {}
    for canvas in ("0", "1"):
        at = AppTest.from_string(BARE_APP, default_timeout=60)
        at.query_params.update({"charts": "3", "rows": "10", "cols": "64", "canvas": canvas})
        at.run()
        assert not at.exception
        drawn[canvas] = (at.get("vega_lite_chart"), at.get("bidi_component"))
    vega, none = drawn["0"]
    assert len(vega) == 3 and len(none) == 0
    assert [pa.ipc.open_stream(c.proto.data.data).read_all().num_rows for c in vega] == [640] * 3
    none, canvas = drawn["1"]
    assert len(none) == 0 and len(canvas) == 3
    data = [json.loads(c.proto.json) for c in canvas]
    assert [(d["rows"], d["cols"], len(d["values"])) for d in data] == [(10, 64, 640)] * 3
    assert data[0]["values"] != data[1]["values"]  # each chart its own values, as the Vega page's

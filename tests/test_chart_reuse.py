"""A move keeps what the browser already built (issue 26): Streamlit's frontend rebuilds a chart's Vega view when
the chart's spec changes (or its box is new) and otherwise only swaps in the new rows, several times cheaper on a
phone. So a move of h changes a chart's spec at most in its colour scale's end (a round value that follows the
data: ``charts.palette.nice_limit``) and a box of panels keeps its key (a generation step: test_generate_page)."""

from __future__ import annotations

import json

import pytest

from apphelpers import open_page
from mha_core.settings import H
from mha_core.ui.nav import spec
from mha_core.ui.render import FRAME, PANELS


def specs(at) -> list[dict]:  # noqa: ANN001 - an AppTest
    """Every chart's spec as the browser gets it, in page order."""
    return [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]


def without_colour_end(s: dict) -> dict:
    """The spec with its colour scale's domain left out (the one part a move of h may change)."""
    s = json.loads(json.dumps(s))
    s.get("encoding", {}).get("color", {}).get("scale", {}).pop("domain", None)
    return s


def panel_boxes(at) -> list[str]:  # noqa: ANN001 - an AppTest
    """The keys of the boxes around charts of panels, in page order."""
    out: list[str] = []

    def walk(node) -> None:  # noqa: ANN001 - an AppTest node
        proto = getattr(node, "proto", None)
        key = getattr(proto, "id", "") if proto is not None and type(node).__name__ == "Block" else ""
        if PANELS in key:
            out.append(key)
        for child in getattr(node, "children", {}).values():
            walk(child)
    walk(at.main)
    return out


@pytest.mark.parametrize("page", ["split", "attend", "concat", "why", "myths", "prereq"])
def test_a_move_of_h_changes_no_chart_spec_but_a_colour_scale_end_and_keeps_every_box(page):
    at = open_page(spec(page).script, "en", query={"fixed": "0"})
    before, boxes, painted = specs(at), panel_boxes(at), canvas_ids(at)
    at.sidebar.slider(key=H.key).set_value(at.sidebar.slider(key=H.key).value + 1).run()
    assert not at.exception, at.exception
    after = specs(at)
    assert len(after) == len(before) and (after or painted or page in ("prereq", "why"))
    assert [without_colour_end(s) for s in after] == [without_colour_end(s) for s in before]
    assert panel_boxes(at) == boxes
    assert canvas_ids(at) == painted  # the browser keeps each canvas and repaints it


def canvas_ids(at) -> list[str]:  # noqa: ANN001 - an AppTest
    """The element ids of the charts painted on the app's canvas, in page order (a new id would be a new canvas)."""
    return [e.proto.id for e in at.get("bidi_component")]



def test_a_chart_frame_is_sent_as_bytes_made_once_per_figure():
    """Every run of every follower sends each chart's rows: render.chart hands Streamlit the frame's Arrow bytes, made
    when the figure was built (a named data set, which Streamlit passes through and its frontend swaps in place),
    not a table Streamlit would serialise again on every run."""
    at = open_page(spec("heads").script, "en")  # the lesson pages' and the cost lab's charts are the canvas's now
    charts = at.get("vega_lite_chart")
    assert len(charts) == 8 and all(not c.proto.data.data for c in charts)
    framed = [c for c in charts if any(d.name == FRAME for d in c.proto.datasets)]
    assert len(framed) == len(charts)
    assert all(json.loads(c.proto.spec)["data"] == {"name": FRAME} for c in framed)

"""Figures leave the app (issue 17 item 1, UI): the pages' download buttons serve valid SVG, PNG and CSV files of
the chart they sit under, named after the page and its settings; the CSV holds the Trace's weights exactly; the
pipeline diagram downloads as an SVG naming its live shapes. The files are built only on click."""

from __future__ import annotations

import csv
import io
import struct

import numpy as np
import pytest
from defusedxml import ElementTree
from streamlit.runtime.media_file_manager import MediaFileManager

from apphelpers import charts, open_page
from mha_core.diagrams import pipeline_svg
from mha_core.i18n import translate
from mha_core.settings import CAUSAL, D_HEAD, D_MODEL, FIXED, H_DIV, SEED, SENTENCE, WEIGHT_MODE, H, resolve
from mha_core.ui import render
from mha_core.ui.chart_downloads import chart_key, menu_key
from mha_core.walkthrough import build_walkthrough

SVG = "{http://www.w3.org/2000/svg}svg"
# The attend page's charts: (builder, figure name) in drawing order.
ATTEND = (("pipeline.head_grid", "heads"), ("base.heatmap", "scores"), ("base.heatmap", ""),
          ("base.heatmap", "unscaled"))


def _open_menus(at, page: str, charts) -> None:
    """Open every chart's download menu, as a student clicking each "Download" (the buttons are drawn then)."""
    for builder, name in charts:
        at.session_state[menu_key(chart_key(page, f"mha_core.charts.{builder}", name))] = True
    at.run()


@pytest.fixture
def served(monkeypatch):
    """file name -> the callable a download button would run on a click (recorded as the page registers it)."""
    files: dict[str, object] = {}
    real = MediaFileManager.add_deferred

    def record(self, data_callable, mimetype, coordinates, file_name=None, **kw):
        files[file_name] = data_callable
        return real(self, data_callable, mimetype, coordinates, file_name, **kw)

    monkeypatch.setattr(MediaFileManager, "add_deferred", record)
    return files


def _walkthrough(at, lang: str):
    """The page's trace, recomputed from its settings (not the page's cached one)."""
    keys = (CAUSAL, D_HEAD, D_MODEL, FIXED, H, H_DIV, SEED, SENTENCE, WEIGHT_MODE)
    return build_walkthrough(resolve({k.key: at.session_state[k.key] for k in keys}, lang))


def _texts(svg: bytes) -> set[str]:
    root = ElementTree.fromstring(svg)
    assert root.tag == SVG
    return {"".join(e.itertext()).strip() for e in root.iter() if e.tag.endswith("text")}


def _rows(data: bytes) -> list[list[str]]:
    assert data.startswith(b"\xef\xbb\xbf")
    return list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_attend_downloads_are_the_charts_files(served, lang):
    at = open_page("pages/attend.py", lang, fixed=False, h=8, d_head=16, head=3)
    assert not at.exception and not at.get("download_button")  # closed menus: no buttons, nothing registered
    _open_menus(at, "attend", ATTEND)
    buttons = at.get("download_button")
    assert len(buttons) == 12 and all(b.proto.deferred_file_id for b in buttons)  # 4 charts × 3, none built yet
    assert {"attend_h8_dh16_head3.svg", "attend_h8_dh16_head3.png", "attend_h8_dh16_head3.csv",
            "attend_h8_dh16_heads.csv", "attend_h8_dh16_head3_scores.csv"} <= set(served)

    wt = _walkthrough(at, lang)
    rows = _rows(served["attend_h8_dh16_head3.csv"]())
    assert [r[0] for r in rows[1:]] == wt.labels and rows[0][1:] == wt.labels
    np.testing.assert_array_equal(np.array([[float(v) for v in r[1:]] for r in rows[1:]]), wt.trace.weights[3])

    texts = _texts(served["attend_h8_dh16_head3.svg"]())  # its title, axis titles and tokens, in the language
    assert {translate(lang, "attend.after"), translate(lang, "common.query"), *wt.labels} <= texts

    png = served["attend_h8_dh16_head3.png"]()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    assert 400 < width < 3000 and 400 < height < 3000

    grid = _rows(served["attend_h8_dh16_heads.csv"]())
    assert len(grid) == 1 + 8 * len(wt.labels) ** 2
    np.testing.assert_array_equal(np.array([float(r[3]) for r in grid[1:]]), wt.trace.weights.ravel())


def test_a_charts_menu_keeps_its_key_when_the_settings_change(served):
    """The key depends on the page and the chart, not its data: an open menu stays open when the head (or, in a
    live lesson, the teacher) changes, and its files are then named after the new settings."""
    at = open_page("pages/attend.py", "en", fixed=False, h=8, d_head=16, head=3)
    weights = menu_key(chart_key("attend", "mha_core.charts.base.heatmap", ""))
    at.session_state[weights] = True
    at.run()
    at.session_state["head"] = 5
    at.run()
    assert not at.exception and at.session_state[weights]
    assert [b.proto.label for b in at.get("download_button")] == ["SVG", "PNG", "CSV"]
    assert "attend_h8_dh16_head5.csv" in served
    rows = _rows(served["attend_h8_dh16_head5.csv"]())
    np.testing.assert_array_equal(np.array([[float(v) for v in r[1:]] for r in rows[1:]]),
                                  _walkthrough(at, "en").trace.weights[5])


def test_table_view_offers_the_csv(served):
    at = open_page("pages/attend.py", "en", tables=True)
    _open_menus(at, "attend", ATTEND)
    names = [b.proto.label for b in at.get("download_button")]
    assert names and all(n == "CSV" for n in names)
    assert not any(n.startswith("attend") and n.endswith((".svg", ".png")) for n in served)


def test_the_pipeline_diagram_downloads_as_svg(served):
    at = open_page("pages/overview.py", "zh", fixed=False, h=12, d_head=64)
    at.session_state[menu_key("export_pipeline")] = True
    at.run()
    assert not at.exception
    svg = served["overview_h12_dh64_pipeline.svg"]()
    texts = _texts(svg)
    n = len(_walkthrough(at, "zh").labels)
    assert {f"头 0  {n} × 64", f"头 11  {n} × 64", "⋯", f"{n} × 768", "× W^O  768 × 768"} <= texts
    assert not any("头 5 " in x for x in texts)  # the middle heads fold into ⋯


def test_the_svg_pipeline_draws_every_head_of_a_small_model():
    labels = {"input": "in", "concat": "cat", "wo": "wo", "output": "out", "head": "head {i}"}
    texts = _texts(pipeline_svg(3, 5, 12, 4, ["prev", "next"], labels, title="<pipe & line>").encode())
    assert {"head 0  5 × 4", "prev", "next", "head 2  5 × 4", "X  5 × 12", "5 × 12"} <= texts
    assert "⋯" not in texts


@pytest.mark.parametrize("page", ["pages/split.py", "pages/concat.py", "pages/why.py"])
def test_every_chart_of_a_page_has_its_downloads(page):
    """Fails if a page's charts lose their downloads: one menu per chart drawn, labelled in the language."""
    at = open_page(page, "en")
    assert not at.exception
    drawn = len(charts(at))
    menus = [m.proto.popover.label for m in at.get("popover")]
    assert drawn and menus == ["Download"] * drawn


def test_a_canvas_chart_builds_its_figure_only_when_its_menu_opens(monkeypatch):
    """A chart on the app's canvas is drawn from its canvas data alone: its Altair figure, which only the table view
    and the downloads need, is built once its menu opens (it took 23 of a generation step's 25 ms of charts)."""
    built: list[str] = []
    real = render._figure_of  # noqa: SLF001 - counted, then called as it is

    def counted(builder, name, *rest):
        built.append(name)
        return real(builder, name, *rest)

    monkeypatch.setattr(render, "_figure_of", counted)
    at = open_page("pages/attend.py", "en", fixed=False, h=8, d_head=16, head=3)
    assert not at.exception and built == [] and at.get("bidi_component")
    _open_menus(at, "attend", ATTEND[:1])
    assert set(built) == {"mha_core.charts.pipeline.head_grid"}
    assert len(at.get("download_button")) == 3  # SVG, PNG and CSV, as before

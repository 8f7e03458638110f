"""Figures that leave the app (issue 17 item 1, core): SVG and PNG of a chart are valid files of their type that
show the chart's text and size, CSV holds the Trace's numbers exactly, file names say the page and the settings."""

from __future__ import annotations

import csv
import io
import struct

import numpy as np
import pytest
from defusedxml import ElementTree

from mha_core import LabError, multi_head_attention
from mha_core.charts import base
from mha_core.figure_files import chart_png, chart_svg, file_name, matrix_csv, table_csv, weights_csv

LABELS = ["猫", "追", "球", "because", "it"]


@pytest.fixture(scope="module")
def trace():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 8))
    w = [rng.standard_normal((8, 8)) for _ in range(4)]
    return multi_head_attention(x, *w, 2, causal=True)


@pytest.fixture(scope="module")
def chart(trace):
    return base.heatmap(trace.weights[1], LABELS, LABELS, domain=(0.0, 1.0), title="注意力 weights")


def test_the_svg_is_an_svg_document_with_the_charts_words(chart):
    svg = chart_svg(chart)
    root = ElementTree.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    texts = {"".join(e.itertext()).strip() for e in root.iter() if e.tag.endswith("text")}
    assert "注意力 weights" in texts and {"猫", "because"} <= texts
    assert float(root.get("width")) > 100 and float(root.get("height")) > 100


def test_the_png_is_a_png_at_twice_the_svgs_size(chart):
    png = chart_png(chart)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    root = ElementTree.fromstring(chart_svg(chart))
    assert (width, height) == (round(2 * float(root.get("width"))), round(2 * float(root.get("height"))))
    assert struct.unpack(">II", chart_png(chart, scale=1)[16:24]) == (width // 2, height // 2)


def test_the_csv_holds_the_traces_weights_exactly(trace):
    data = weights_csv(trace, 1, LABELS, corner="query \\ key")
    assert data.startswith(b"\xef\xbb\xbf")  # a BOM: spreadsheets read the Chinese labels
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    assert rows[0] == ["query \\ key", *LABELS]
    assert [r[0] for r in rows[1:]] == LABELS
    got = np.array([[float(v) for v in r[1:]] for r in rows[1:]])
    np.testing.assert_array_equal(got, trace.weights[1])       # repr() keeps every bit of a float64
    np.testing.assert_allclose(got.sum(1), 1.0)


def test_a_cross_attention_csv_has_the_other_sequences_keys():
    rng = np.random.default_rng(1)
    x, x_kv = rng.standard_normal((2, 4)), rng.standard_normal((3, 4))
    t = multi_head_attention(x, *(rng.standard_normal((4, 4)) for _ in range(4)), 2, x_kv=x_kv)
    rows = list(csv.reader(io.StringIO(weights_csv(t, 0, ["the", "cat"], "q", keys=["小", "猫", "。"])
                                       .decode("utf-8-sig"))))
    assert rows[0] == ["q", "小", "猫", "。"] and len(rows) == 3


def test_tables_and_names():
    assert table_csv({"h": [1, 2], "d_head": [64, 32]}).decode("utf-8-sig") == "h,d_head\n1,64\n2,32\n"
    assert file_name("attend", "svg", h=8, dh=16, head=3) == "attend_h8_dh16_head3.svg"
    assert file_name("real", "csv", layer=2, head="1", s="it was / tired?") == "real_layer2_head1_sit-was-tired.csv"


@pytest.mark.parametrize("call,key", [
    (lambda t: table_csv({"a": [1], "b": [1, 2]}), "csv_ragged"),
    (lambda t: matrix_csv(np.zeros((2, 2)), ["a"], ["b", "c"], "x"), "csv_shape"),
    (lambda t: weights_csv(t, 2, LABELS, "x"), "head_range"),
])
def test_bad_exports_are_translated_lab_errors(trace, call, key):
    with pytest.raises(LabError) as info:
        call(trace)
    assert info.value.key == key

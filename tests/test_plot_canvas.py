"""The app's canvas line and bar plots (mha_core/charts/plot.py): the same points as the Vega chart they stand in
for — the cost lab's four and base.lines (why, myths) — with its colours, dashes, point shapes, axes and tooltips."""

from __future__ import annotations

import numpy as np
import pytest

from mha_core.charts import base, palette, plot
from mha_core.charts import cost as cost_charts
from mha_core.charts.spec import spec_and_data
from mha_core.cost_model import flops_curve, heads_sweep, kv_curves, seq_grid
from mha_core.presets import preset
from mha_core.units import format_bytes, format_flops, format_params

SHAPE = preset("llama2_70b").shape  # GQA: three lines on the KV chart
SWEEP = heads_sweep(SHAPE.d_model, seq_len=512)
GRID = seq_grid(512)
LABELS = {"title": "", "x_title": "x", "y_title": "y"}


def _rows(chart) -> list[dict]:  # noqa: ANN001 - an Altair chart on inline rows
    return chart.to_dict()["data"]["values"]


def _axis_holds(c: plot.PlotCanvas) -> None:
    ys = [y for s in c.series for y in s.ys]
    lo, hi = c.y_domain
    assert lo <= min(0.0, *ys) and hi >= max(ys) and c.y_ticks[0] == lo and c.y_ticks[-1] == hi  # zero, nice


def test_parameters_per_h_are_the_vega_chart_s_points_the_picked_h_in_its_colour():
    kw = {"current_h": SHAPE.n_heads, "d_head_title": "d", "flops_title": "f", **LABELS}
    c = plot.params_vs_heads(SWEEP, **kw)
    rows = _rows(cost_charts.params_vs_heads(SWEEP, **kw))
    (line,) = c.series
    assert c.x_names == tuple(str(r["h"]) for r in rows) and line.xs == tuple(float(i) for i in range(len(rows)))
    assert line.ys == tuple(r["value"] for r in rows) and line.point_colours == tuple(r["_colour"] for r in rows)
    assert line.point_colours.count(palette.PICKED_COLOUR) == 1
    assert line.tips == tuple(f"h: {p.n_heads}\nd: {p.d_head}\ny: {format_params(p.params)}\n"
                              f"f: {format_flops(p.flops_per_token)}" for p in SWEEP)
    _axis_holds(c)


def test_d_head_per_h_is_a_labelled_bar_per_h():
    c = plot.d_head_vs_heads(SWEEP, current_h=SHAPE.n_heads, **LABELS)
    rows = _rows(cost_charts.d_head_vs_heads(SWEEP, current_h=SHAPE.n_heads, **LABELS))
    (bars,) = c.series
    assert bars.mark == "bar" and bars.ys == tuple(float(r["d_head"]) for r in rows)
    assert bars.labels == tuple(str(r["d_head"]) for r in rows)
    assert bars.point_colours == tuple(r["_colour"] for r in rows)
    _axis_holds(c)


def test_the_kv_cache_is_a_line_per_family_member_in_its_colour_and_dash():
    points = kv_curves(SHAPE, GRID)
    c = plot.kv_vs_seq_len(points, series_title="s", **LABELS)
    spec = cost_charts.kv_vs_seq_len(points, series_title="s", **LABELS).to_dict()
    order = spec["encoding"]["color"]["scale"]["domain"]
    assert [s.name for s in c.series] == order and len(order) == 3
    assert [s.colour for s in c.series] == spec["encoding"]["color"]["scale"]["range"]
    assert [list(s.dash) for s in c.series] == spec["encoding"]["strokeDash"]["scale"]["range"]
    for s in c.series:
        rows = [r for r in spec["data"]["values"] if r["series"] == s.name]
        assert s.xs == tuple(float(r["n"]) for r in rows) and s.ys == tuple(r["value"] for r in rows)
        assert s.tips[-1] == f"s: {s.name}\nx: {rows[-1]['n']:,}\ny: {rows[-1]['bytes']}"
    assert c.legend_top and c.x_domain[0] == 0 and not c.x_names
    assert c.series[0].tips[0].endswith(format_bytes(points[0].bytes))
    _axis_holds(c)


def test_flops_are_projections_flat_and_attention_rising():
    points = flops_curve(SHAPE, GRID)
    kw = {"series_title": "s", "projections": "p", "attention": "a", **LABELS}
    c = plot.flops_vs_seq_len(points, **kw)
    spec = cost_charts.flops_vs_seq_len(points, **kw).to_dict()
    assert [s.name for s in c.series] == ["p", "a"]
    assert [s.colour for s in c.series] == spec["encoding"]["color"]["scale"]["range"]
    for s in c.series:
        assert s.ys == tuple(r["value"] for r in spec["data"]["values"] if r["series"] == s.name)
    assert len(set(c.series[0].ys)) == 1 and np.all(np.diff(c.series[1].ys) > 0)
    _axis_holds(c)


@pytest.mark.parametrize("log_x", [False, True])
def test_lines_are_base_lines_points_with_distinct_colours_dashes_and_shapes(log_x):
    x = [1, 2, 4, 8, 16] if log_x else [0, 1, 2, 3, 4]
    series = {"one": [0.1, 0.9, 0.2, 0.0, 0.3], "two": [3.0, 2.0, 1.5, 1.0, 0.5]}
    c = plot.lines(x, series, title="T", x_title="h", y_title="w", log_x=log_x)
    spec, frame = spec_and_data(base.lines(x, series, title="T", x_title="h", y_title="w", log_x=log_x))
    for s in c.series:
        rows = frame[frame["series"] == s.name]
        assert s.xs == tuple(rows["x"]) and s.ys == tuple(rows["value"])
    assert [s.colour for s in c.series] == spec["encoding"]["color"]["scale"]["range"]
    assert len({s.dash for s in c.series}) == len({s.shape for s in c.series}) == 2  # apart in grey too
    assert c.series[1].tips[0] == "two\nh: 1\nw: 3.000" if log_x else "two\nh: 0\nw: 3.000"
    if log_x:
        assert c.x_log and c.x_domain == (1.0, 16.0) and c.x_ticks == (1.0, 2.0, 4.0, 8.0, 16.0)
    else:
        assert c.x_domain == (0.0, 4.0) and not c.x_log  # zero=False: the data's extent, nice
    _axis_holds(c)
    assert c.payload()["kind"] == "plot"

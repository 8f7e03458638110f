"""The app's canvas matrix charts (mha_core/charts/matrix.py): the same chart as the Vega builder they stand in for,
cell for cell — each cell's value and its colour on Vega's scheme — with the same labels and legend."""

from __future__ import annotations

import base64
import importlib
import inspect
import io

import numpy as np
import pytest
from PIL import Image

from apphelpers import panel_colours, panel_values
from mha_core.charts import base, cross, generate, matrix, palette, pipeline, raster
from mha_core.charts.spec import spec_and_data

RNG = np.random.default_rng(7)
ROWS = [f"t{i}" for i in range(6)]


@pytest.mark.parametrize("name", sorted(matrix.CANVASES))
def test_each_canvas_takes_exactly_its_builder_s_arguments(name):
    """render.chart calls both with the same arguments: a parameter of one the other lacks (or a different default)
    would draw a different chart, or fail, for some page."""
    module, func = name.rsplit(".", 1)
    builder = getattr(importlib.import_module(module), func)
    def params(f):  # noqa: ANN001, ANN202
        return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]
    assert params(matrix.CANVASES[name]) == params(builder)


def _domain(spec: dict) -> list[float]:
    return spec["encoding"]["color"]["scale"]["domain"]


@pytest.mark.parametrize("kwargs", [{}, {"signed": True}, {"domain": (0.0, 1.0)}, {"signed": True, "domain": (-2, 2)}])
def test_a_heatmap_paints_every_value_on_the_vega_chart_s_scale(kwargs):
    m = RNG.normal(size=(6, 9)) * 3
    if not kwargs.get("signed"):
        m = np.abs(m)
    m[1, 2] = np.nan
    cols = [str(j) for j in range(9)]
    c = matrix.heatmap(m, ROWS, cols, title="T", row_title="r", col_title="c", value_title="v", **kwargs)
    spec, _ = spec_and_data(base.heatmap(m, ROWS, cols, title="T", row_title="r", col_title="c", value_title="v",
                                         **kwargs))
    lo, hi = _domain(spec)
    assert c.legend.domain == (lo, hi) and c.legend.title == "v"
    p = c.payload()["panels"][0]
    values, colours = panel_values(p), panel_colours(p)
    np.testing.assert_array_equal(values, m.astype(np.float32))  # NaN where NaN
    scheme = raster.scheme(palette.SIGNED_SCHEME if kwargs.get("signed") else palette.WEIGHT_SCHEME)
    for r, k in [(0, 0), (3, 4), (5, 8)]:  # Vega's scheme at the value's step of 256 over the spec's domain
        step = round(min(max((m[r, k] - lo) / (hi - lo), 0), 1) * 255)
        assert tuple(colours[r, k]) == (*scheme[step], 255)
    assert colours[1, 2, 3] == 0  # a missing value is transparent, as Vega leaves it
    assert (c.rows, c.cols, c.title, c.row_title, c.col_title) == (tuple(ROWS), tuple(cols), "T", "r", "c")


def test_a_legend_ramp_runs_through_the_scheme_from_its_first_to_its_last_colour():
    ramp, table = matrix.ramp("viridis"), raster.scheme("viridis")
    assert len(ramp) == matrix.LEGEND_STOPS
    assert ramp[0] == "#{:02x}{:02x}{:02x}".format(*table[0]) and ramp[-1] == "#{:02x}{:02x}{:02x}".format(*table[-1])


def test_a_head_grid_is_one_panel_per_head_in_order_on_one_scale():
    weights = RNG.dirichlet(np.ones(5), size=(3, 5))
    titles = ["head 0", "head 1", "head 2"]
    c = matrix.head_grid(weights, ROWS[:5], ROWS[:5], titles, value_title="w")
    assert [p.title for p in c.panels] == titles and c.per_row == 4
    spec, _ = spec_and_data(pipeline.head_grid(weights, ROWS[:5], ROWS[:5], titles, value_title="w"))
    assert list(c.legend.domain) == _domain(spec) == [0.0, 1.0]
    for i, p in enumerate(c.payload()["panels"]):
        np.testing.assert_allclose(panel_values(p), weights[i], rtol=1e-6)
    signed = RNG.normal(size=(2, 4, 4))
    spec, _ = spec_and_data(pipeline.head_grid(signed, ROWS[:4], ROWS[:4], titles[:2], signed=True))
    assert list(matrix.head_grid(signed, ROWS[:4], ROWS[:4], titles[:2], signed=True).legend.domain) == _domain(spec)


def _picture(uri: str) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))).convert("RGB"))


def test_column_blocks_paint_the_colours_of_the_vega_picture_and_name_each_cell_s_head():
    """At 64 columns the Vega builder draws a picture (each cell a square of pixels): the canvas paints the same
    colour in each cell, the cells of the drawn columns only, and each column's tooltip names its head."""
    m = RNG.normal(size=(40, 64))
    c = matrix.columns_by_head(m, 4, [str(i) for i in range(40)], head_label="head")
    _, frame = spec_and_data(pipeline.columns_by_head(m, 4, [str(i) for i in range(40)], head_label="head"))
    picture = _picture(frame["_image"].dropna().iloc[0])
    kept = pipeline.column_subset(64, 4)
    colours = panel_colours(c.payload()["panels"][0])
    assert colours.shape == (40, len(kept), 4)
    step = picture.shape[0] // 40
    cells = picture[step // 2::step, step // 2::step][:40, :len(kept)]  # its strengths rounded to 4 decimals
    np.testing.assert_allclose(colours[..., :3], cells, atol=1)
    np.testing.assert_array_equal(panel_values(c.payload()["panels"][0]), m[:, kept].astype(np.float32))
    assert c.cols == tuple(str(j) for j in kept)
    assert c.col_heads == tuple(f"head {j // 16}" for j in kept) and c.head_starts == (0, 16, 32, 48)
    assert c.legend.swatches == tuple((f"head {i}", palette.head_colour(i)) for i in range(4))


def test_the_digest_follows_every_value_and_label_and_nothing_else():
    m = RNG.normal(size=(4, 4))
    one = matrix.heatmap(m, ROWS[:4], ROWS[:4]).payload()
    assert matrix.heatmap(m.copy(), list(ROWS[:4]), ROWS[:4]).payload() == one
    nudged = m.copy()
    nudged[3, 3] += 1e-6
    assert matrix.heatmap(nudged, ROWS[:4], ROWS[:4]).payload()["digest"] != one["digest"]
    assert matrix.heatmap(m, ROWS[:4], ["a", "b", "c", "e"]).payload()["digest"] != one["digest"]


def test_a_masked_map_greys_what_its_vega_chart_greys_and_names_each_cell_s_state():
    """The colour of a masked cell and the opacity of an ignored row are read from the Vega chart's own spec."""
    m = RNG.dirichlet(np.ones(4), size=3)
    allowed = np.array([[True, True, False, False], [True, True, True, False], [True, True, True, True]])
    states = ("open", "masked", "ignored")
    args = (m, ["a", "b", "c"], ["w", "x", "y", "z"], allowed)
    kwargs = {"ignored_rows": (False, False, True), "states": states, "value_title": "weight"}
    spec, _ = spec_and_data(cross.masked_map(*args, **kwargs))
    grey = spec["encoding"]["color"]["condition"]["value"]
    faded = spec["encoding"]["opacity"]["condition"]["value"]
    p = matrix.masked_map(*args, **kwargs).payload()["panels"][0]
    colours = panel_colours(p)
    hex_of = lambda c: "#{:02x}{:02x}{:02x}".format(*c[:3])  # noqa: E731
    assert hex_of(colours[0, 2]) == grey.lower() and hex_of(colours[1, 3]) == grey.lower()
    viridis = raster.scheme("viridis")
    assert tuple(colours[0, 0, :3]) == tuple(viridis[round(m[0, 0] * 255)])
    assert set(colours[:2, :, 3].ravel()) == {255} and set(colours[2, :, 3].ravel()) == {round(faded * 255)}
    notes = np.frombuffer(base64.b64decode(p["note_of"]), dtype=np.uint8).reshape(3, 4)
    assert [[states[k] for k in row] for row in notes.tolist()] == [
        ["open", "open", "masked", "masked"], ["open", "open", "open", "masked"], ["ignored"] * 4]


def test_a_cache_grid_paints_each_slot_as_its_vega_chart_fills_it_and_outlines_the_newest():
    """The Vega chart's frame carries each cell's fill, opacity and edge as data: the canvas paints the same."""
    held = np.array([[5, 5], [5, 5], [5, 5]])  # 3 layers × 2 K/V heads, 5 positions of 8 held
    names = [f"L{la} · K/V{j}" for la in range(3) for j in range(2)]
    args = (held, 8, tuple("abcde"))
    kwargs = {"row_names": names, "kv_names": ("K/V0", "K/V1"), "title": "cache", "position_title": "position",
              "kv_title": "K/V head", "token_title": "token"}
    _, frame = spec_and_data(generate.cache_grid(*args, **kwargs))
    c = matrix.cache_grid(*args, **kwargs)
    colours = panel_colours(c.payload()["panels"][0])
    r, k = frame["row"].map(names.index).to_numpy(), frame["position"].to_numpy()
    hexes = ["#{:02x}{:02x}{:02x}".format(*colours[i, j, :3]) for i, j in zip(r, k, strict=True)]
    assert hexes == [f.lower() for f in frame["fill"]]
    np.testing.assert_array_equal(colours[r, k, 3], np.rint(frame["alpha"].to_numpy() * 255))
    edge = frame["edge"] == generate.NEW
    assert set(c.outline) == set(zip(r[edge].tolist(), k[edge].tolist(), strict=True))
    assert c.outline_colour == generate.NEW
    assert c.col_notes == ("a", "b", "c", "d", "e", "", "", "") and c.col_note_title == "token"
    assert (c.row_title, c.row_axis_title, c.show_values, c.height) == ("K/V head", False, False, generate.CELL * 6)


def test_a_query_chart_paints_the_weights_outlines_the_newest_key_and_colours_each_row_by_its_kv_head():
    attn = RNG.dirichlet(np.ones(5), size=4)
    args = (attn, tuple("01234"), ("q0", "q1", "q2", "q3"), (0, 0, 1, 1))
    _, frame = spec_and_data(generate.query_attention(*args, value_title="w"))
    c = matrix.query_attention(*args, value_title="w")
    np.testing.assert_allclose(panel_values(c.payload()["panels"][0]).ravel(), frame["value"], atol=1e-4)
    newest = frame["newest"].to_numpy().reshape(4, 5)
    assert set(c.outline) == {tuple(map(int, x)) for x in np.argwhere(newest)}
    assert c.row_colours == tuple(palette.head_colour(j) for j in (0, 0, 1, 1)) and c.legend.domain == (0.0, 1.0)

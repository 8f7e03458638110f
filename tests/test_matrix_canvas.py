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
from mha_core.charts import bars, base, cross, generate, lines, matrix, palette, pipeline, raster, real
from mha_core.charts.canvases import CANVASES
from mha_core.charts.spec import spec_and_data

RNG = np.random.default_rng(7)
ROWS = [f"t{i}" for i in range(6)]


@pytest.mark.parametrize("name", sorted(CANVASES))
def test_each_canvas_takes_exactly_its_builder_s_arguments(name):
    """render.chart calls both with the same arguments: a parameter of one the other lacks (or a different default)
    would draw a different chart, or fail, for some page."""
    module, func = name.rsplit(".", 1)
    builder = getattr(importlib.import_module(module), func)
    def params(f):  # noqa: ANN001, ANN202
        return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]
    assert params(CANVASES[name]) == params(builder)


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


# --- the real model's charts (issue 26, target 3: a new sentence settled in 500 ms) ---

def _heat_domain_and_height(chart: object) -> tuple[list[float], int]:
    spec, _ = spec_and_data(chart)
    return _domain(spec), spec["height"]


def test_a_score_map_paints_the_vega_chart_s_scale_rows_and_height():
    score = RNG.random((6, 12)) * 0.7
    kw = {"title": "T", "layer_title": "layer", "head_title": "head", "value_title": "score"}
    c = matrix.score_map(score, **kw)
    domain, height = _heat_domain_and_height(real.score_map(score, **kw))
    assert c.legend.domain == tuple(domain) and c.height == height == 26 * 6
    assert c.rows == tuple(f"L{i}" for i in range(6)) and c.cols == tuple(f"H{j}" for j in range(12))
    assert (c.row_title, c.col_title, c.value_title) == ("layer", "head", "score")
    np.testing.assert_array_equal(panel_values(c.payload()["panels"][0]), score.astype(np.float32))


@pytest.mark.parametrize("n", [16, 100, 101, 512])
def test_a_head_view_paints_every_cell_on_viridis_0_to_1_at_the_vega_chart_s_height(n):
    """Up to 100 tokens Vega draws a mark per cell, above it one picture; the canvas paints every cell either way,
    its height the Vega chart's."""
    w = RNG.dirichlet(np.ones(n), size=n)
    labels = [f"{i} t" for i in range(n)]
    kw = {"title": "T", "row_title": "query", "col_title": "key", "value_title": "weight"}
    c = matrix.head_heatmap(w, labels, **kw)
    spec, _ = spec_and_data(real.head_heatmap(w, labels, **kw))
    assert c.height == spec["height"] == min(max(300, (2 if n * n > real.PIXEL_CELLS else 22) * n), 640)
    assert c.legend.domain == (0.0, 1.0) and c.rows == c.cols == tuple(labels)
    p = c.payload()["panels"][0]
    np.testing.assert_array_equal(panel_values(p), w.astype(np.float32))
    np.testing.assert_array_equal(panel_colours(p)[..., :3], raster.colours(w))  # the picture Vega draws above 100


def test_a_similarity_map_paints_the_heads_in_the_grouping_s_order_on_its_fixed_scale():
    dist = RNG.random((5, 5))
    dist = (dist + dist.T) / 2
    names, order = [f"L0·H{i}" for i in range(5)], [3, 0, 4, 1, 2]
    kw = {"title": "T", "value_title": "JS", "max_value": 0.69}
    c = matrix.similarity_map(dist, names, order, **kw)
    domain, height = _heat_domain_and_height(real.similarity_map(dist, names, order, **kw))
    assert c.legend.domain == tuple(domain) == (0.0, 0.69) and c.height == height
    assert c.rows == c.cols == tuple(names[i] for i in order)
    np.testing.assert_array_equal(panel_values(c.payload()["panels"][0]), dist[np.ix_(order, order)].astype(np.float32))


@pytest.mark.parametrize("n", [7, 32, 33, 512])
def test_the_model_view_is_a_lattice_of_layers_by_heads_pooled_as_its_vega_chart(n):
    """One panel per (layer, head), layers as rows; above 32 tokens both pool the same blocks of tokens, and every
    pooled row still sums to 1."""
    attn = RNG.dirichlet(np.ones(n), size=(2, 3, n))
    labels = [f"w{i}" for i in range(n)]
    kw = {"layer_title": "layer", "head_title": "head", "query_title": "q", "key_title": "k", "weight_title": "w"}
    c = matrix.model_view(attn, labels, **kw)
    _, frame = spec_and_data(real.model_view(attn, labels, **kw))
    pooled, shown = matrix.pooled(attn, labels)
    assert c.lattice == (2, 3) and c.lattice_rows == ("L0", "L1") and c.lattice_cols == ("H0", "H1", "H2")
    assert [p.title for p in c.panels] == [f"L{i}·H{j}" for i in range(2) for j in range(3)]
    assert c.rows == c.cols == tuple(shown) and len(shown) == min(n, -(-n // -(-n // matrix.MODEL_VIEW_CELLS)))
    assert (c.lattice_row_title, c.lattice_col_title, c.row_title, c.col_title) == ("layer", "head", "q", "k")
    payload = c.payload()
    for i, j in [(0, 0), (1, 2)]:
        p = payload["panels"][3 * i + j]
        np.testing.assert_allclose(panel_values(p), pooled[i, j], rtol=1e-6)
        np.testing.assert_array_equal(panel_colours(p)[..., :3], raster.colours(pooled[i, j]))
        np.testing.assert_allclose(panel_values(p).sum(1), 1.0, atol=1e-5)
        # the Vega chart's tooltip names the head's strongest pair; the canvas holds the same weight
        row = frame[(frame["layer"] == i) & (frame["head"] == j)].iloc[0]
        assert row["weight"] == pytest.approx(float(pooled[i, j].max()), abs=5e-4)


# --- token lines (attend, real): the canvas draws the lines the Vega spec holds ---

@pytest.mark.parametrize(("h", "n", "top_k"), [(4, 6, None), (10, 12, 3), (1, 40, None)])
def test_token_lines_are_the_vega_chart_s_lines_in_each_head_s_colour(h, n, top_k):
    w = RNG.dirichlet(np.ones(n), size=(h, n))
    w[0, 1, 2] = 0.0  # a masked weight draws no line
    labels, names = [f"{i} w" for i in range(n)], [f"head {i}" for i in range(h)]
    kw = {"top_k": top_k, "query_title": "q", "key_title": "k", "weight_title": "w", "head_title": "heads"}
    c = matrix.token_lines(w, labels, names, **kw)
    rows = lines.token_lines(w, labels, names, **kw)["datasets"][lines.LINES]
    assert [(names[a], b, k, v) for a, b, k, v in zip(c.line_head, c.line_q, c.line_k, c.weights, strict=True)] == [
        (r["head"], r["q"], r["k"], r["weight"]) for r in rows]
    assert c.colours == tuple(palette.head_colour(i) for i in range(h))
    assert c.dashed == tuple(i >= len(palette.OKABE_ITO) for i in range(h))  # as the Vega chart's dash scale
    assert c.queries == c.keys == tuple(labels) and c.step == (20 if n <= 16 else 16 if n <= 32 else 12)
    assert (c.query_title, c.key_title, c.weight_title, c.head_title) == ("q", "k", "w", "heads")
    assert c.payload()["kind"] == "lines"


# --- bars (prereq, concat, why, generate, real): the canvas draws the bars the Vega spec holds ---

def _bar_rows(spec: dict, frame) -> list[tuple[str, float]]:  # noqa: ANN001
    name, value = spec["encoding"]["y"]["field"], spec["encoding"]["x"]["field"]
    return list(zip(frame[name], frame[value], strict=True))


@pytest.mark.parametrize("kwargs", [{}, {"step": 22}, {"colours": ["#111111", "#222222", "#333333", "#444444"]}])
def test_bars_are_the_vega_chart_s_bars_in_its_order_colours_and_height(kwargs):
    values, names = [0.25, -1.5, 3.0, float("nan")], ["a", "b", "c", "d"]
    c = bars.bar(values, names, title="T", value_title="score", **kwargs)
    spec, frame = spec_and_data(base.bar(values, names, title="T", value_title="score", **kwargs))
    rows = _bar_rows(spec, frame)
    assert c.names == tuple(n for n, _ in rows) == tuple(spec["encoding"]["y"]["sort"])
    assert c.values[:3] == tuple(v for _, v in rows[:3]) and c.values[3] is None  # NaN: no bar, as Vega draws none
    assert c.colours == tuple(kwargs.get("colours") or (palette.head_colour(i) for i in range(4)))
    assert c.height == (22 * 4 if "step" in kwargs else spec["height"])
    assert (c.title, c.value_title, c.kind) == ("T", "score", "bars")
    lo, hi = c.domain  # Vega's zero and nice: 0 and every bar inside, ends on a tick
    assert lo <= min(0, -1.5) and hi >= 3.0 and c.ticks[0] == lo and c.ticks[-1] == hi and 0.0 in c.ticks


def test_next_token_bars_are_the_likeliest_tokens_grey_on_0_to_1():
    probs, names = np.array([0.1, 0.5, 0.05, 0.3, 0.05]), ["a", "b", "c", "d", "e"]
    c = bars.next_token_bars(probs, names, top=3, title="next", value_title="p")
    spec, frame = spec_and_data(generate.next_token_bars(probs, names, top=3, title="next", value_title="p"))
    assert list(zip(c.names, c.values, strict=True)) == _bar_rows(spec, frame) == [("b", 0.5), ("d", 0.3), ("a", 0.1)]
    assert c.colours == (palette.NEUTRAL,) * 3 and spec["mark"]["color"] == palette.NEUTRAL
    assert c.domain == tuple(spec["encoding"]["x"]["scale"]["domain"]) == (0.0, 1.0)
    assert c.height == spec["height"] == 24 * 3


def test_a_minimal_pair_row_colours_each_noun_s_pieces_on_0_to_1():
    w, labels = np.array([0.1, 0.6, 0.05, 0.25]), ["the", "cat", "it", "mat"]
    c = bars.pair_row(w, labels, [[1], [3]], title="t", value_title="w")
    spec, frame = spec_and_data(real.pair_row(w, labels, [[1], [3]], title="t", value_title="w"))
    assert list(zip(c.names, c.values, strict=True)) == _bar_rows(spec, frame)
    assert c.colours == tuple(spec["encoding"]["color"]["scale"]["range"])
    assert c.colours == (palette.OTHER_COLOUR, palette.NOUN_COLOURS[0], palette.OTHER_COLOUR, palette.NOUN_COLOURS[1])
    assert c.domain == tuple(spec["encoding"]["x"]["scale"]["domain"]) == (0.0, 1.0)
    assert c.height == spec["height"]


@pytest.mark.parametrize(("span", "step"), [(1.0, 0.2), (0.43, 0.1), (5.0, 1.0), (0.07, 0.01), (30.0, 5.0)])
def test_a_bar_axis_ticks_at_d3_s_round_steps(span, step):
    """d3's ticks (Vega's): the 1, 2 or 5 × 10^k step nearest a fifth of the span."""
    assert bars.tick_step(span) == step

"""Chart builders: valid Vega-Lite, the numbers they carry, what they cut, and how render.chart caches them."""

from __future__ import annotations

import ast
import functools
import inspect
import json
import re
from pathlib import Path
from unittest import mock

import altair as alt
import numpy as np
import pyarrow as pa
import pytest
import vl_convert as vlc

from apphelpers import canvases, open_page
from mha_core.charts import base, palette, pipeline, raster, toy
from mha_core.figure_files import spec_svg
from mha_core.ui import render

RNG = np.random.default_rng(0)
LABELS = ["the", "cat", "sat", "on", "a", "mat"]


def _builders() -> dict[str, alt.TopLevelMixin]:
    m = RNG.normal(size=(6, 6))
    return {
        "heatmap": base.heatmap(m, LABELS, LABELS, title="t", value_title="v"),
        "heatmap_signed": base.heatmap(m, LABELS, LABELS, signed=True, show_col_labels=False),
        "columns_by_head": pipeline.columns_by_head(RNG.normal(size=(6, 64)), 2, LABELS, title="blocks"),
        "columns_by_head_pixels": pipeline.columns_by_head(RNG.normal(size=(64, 64)), 4, [str(i) for i in range(64)]),
        "bar": base.bar([0.1, 0.5, 0.2], ["a", "b", "c"], title="bars"),
        "lines": base.lines([1, 2, 4], {"x": [1, 2, 3], "y": [3, 2, 1]}, log_x=True),
        "attention_map": toy.attention_map(np.abs(m) / np.abs(m).sum(1, keepdims=True), LABELS,
                                           np.eye(6, dtype=bool)),
        "head_grid": pipeline.head_grid(RNG.random(size=(3, 6, 6)), LABELS, LABELS, ["h0", "h1", "h2"]),
        "head_grid_signed": pipeline.head_grid(RNG.normal(size=(2, 6, 4)), LABELS, LABELS[:4], ["a", "b"],
                                               signed=True, show_col_labels=False),
    }  # the cost lab's charts are validated in tests/test_cost_page.py, the heads page's in test_heads_page.py


@pytest.mark.parametrize("name", list(_builders()))
def test_every_builder_makes_a_valid_vega_lite_spec(name):
    """Construction-time validation is off (see mha_core/charts/base.py); the full spec is validated here."""
    spec = _builders()[name].to_dict(validate=True)
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")


@pytest.mark.parametrize("name", list(_builders()))
def test_every_chart_is_drawn_on_a_canvas_without_a_label_per_mark(name):
    """SVG (vega-embed's default below 2,000 marks) makes a DOM element per mark, and Vega-Lite's per-mark ARIA
    description is a per-datum expression in Streamlit's slow CSP-safe interpreter: both cost every slider move."""
    spec, _ = base.spec_and_data(_builders()[name])
    assert spec["usermeta"]["embedOptions"]["renderer"] == "canvas"
    assert spec["config"]["aria"] is False
    assert "usermeta" not in _builders()[name].to_dict(validate=True)  # the builders stay pure Vega-Lite for exports


def test_construction_time_validation_is_off_but_to_dict_still_validates():
    from altair.utils import schemapi

    assert schemapi.DEBUG_MODE is False
    scale = alt.Scale(type="not-a-scale")  # built without complaint: no construction-time validation
    bad = alt.Chart(base.matrix_frame(np.eye(2), ["a", "b"], ["a", "b"])).mark_rect().encode(
        x="row:O", color=alt.Color("value:Q", scale=scale))
    with pytest.raises(schemapi.SchemaValidationError):
        bad.to_dict(validate=True)


def test_heatmap_carries_every_cell_and_the_table_view_gives_the_matrix_back():
    m = RNG.normal(size=(4, 3))
    spec, data = base.spec_and_data(base.heatmap(m, LABELS[:4], LABELS[:3]))
    assert "data" not in spec and "datasets" not in spec  # the frame travels separately (as Arrow)
    assert len(data) == 12
    table = base.as_table(data)
    assert list(table.index) == LABELS[:4] and list(table.columns) == LABELS[:3]
    np.testing.assert_allclose(table.to_numpy(), m, atol=1e-4)


def test_columns_by_head_draws_at_most_per_head_columns_of_each_head():
    m = RNG.normal(size=(5, 4 * 40))  # 4 heads of 40 columns
    _, data = base.spec_and_data(pipeline.columns_by_head(m, 4, LABELS[:5]))
    assert data["col"].nunique() == 4 * pipeline.PER_HEAD_COLUMNS
    assert set(data["head"]) == {f"head {i}" for i in range(4)}
    kept = pipeline.column_subset(160, 4)
    np.testing.assert_array_equal(kept[:3], [0, 1, 2])
    assert kept[pipeline.PER_HEAD_COLUMNS] == 40  # head 1 starts at its own block


def _png_pixels_rgba(uri: str) -> np.ndarray:
    import base64
    import io

    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))).convert("RGBA"))


def _png_pixels(uri: str) -> np.ndarray:
    import base64
    import io

    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))).convert("RGB"))


def test_large_column_blocks_are_one_image_and_a_band_per_head():
    """Myths' 64 × 64 W^Q was 4,096 Vega marks (~75 ms of the browser's main thread per move of h, issue 26): above
    PIXEL_CELLS it is one image, each cell its head's colour at the marks' opacity over white, with one tooltip band
    per head; the frame still holds every drawn cell (the table view and CSV)."""
    m = RNG.normal(size=(64, 4 * 16))
    rows = [str(i) for i in range(64)]
    spec, data = base.spec_and_data(pipeline.columns_by_head(m, 4, rows, largest_title="largest"))
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["image", "rect"]
    assert len(data) == 64 * 64 and data["_image"].notna().sum() == 1 and data["_block"].sum() == 4
    assert data.loc[data["_block"], "_largest"].tolist() == pytest.approx(
        [np.abs(m[:, 16 * i:16 * i + 16]).max() for i in range(4)], abs=1e-4)
    picture = _png_pixels(data["_image"].dropna().iloc[0])
    scale = picture.shape[0] // 64
    assert picture.shape == (64 * scale, 64 * scale, 3)
    strongest = np.unravel_index(np.abs(m).argmax(), m.shape)  # opacity 1: the head's own colour
    head = strongest[1] // 16
    assert picture[strongest[0] * scale, strongest[1] * scale].tolist() == [
        int(base.head_colour(head)[k:k + 2], 16) for k in (1, 3, 5)]
    r, c = 3, 20  # head 1: opacity 0.12 + 0.88 · |m| / max|m| over white
    alpha = 0.12 + 0.88 * round(abs(m[r, c]) / np.abs(m).max(), 4)
    want = [round(alpha * int(base.head_colour(1)[k:k + 2], 16) + (1 - alpha) * 255) for k in (1, 3, 5)]
    assert np.abs(picture[r * scale, c * scale].astype(int) - want).max() <= 1
    small = base.spec_and_data(pipeline.columns_by_head(m[:8], 4, rows[:8]))[0]
    assert small["mark"]["type"] == "rect" and "tooltip" in small["encoding"]  # 512 cells: a mark per cell


def test_a_large_heatmap_is_one_image_on_the_marks_colour_scale():
    """Above PIXEL_CELLS a heatmap is one image: each cell the colour Vega's scale gives its value (blue-orange
    over ±the nice end for signed values), a missing value transparent as Vega leaves it; the frame has every cell."""
    m = RNG.normal(size=(24, 128))
    m[2, 5] = np.nan
    rows, cols = [f"t{i}" for i in range(24)], [str(j) for j in range(128)]
    spec, data = base.spec_and_data(base.heatmap(m, rows, cols, signed=True, value_title="v"))
    assert spec["mark"]["type"] == "image" and len(data) == 24 * 128
    assert spec["encoding"]["color"]["scale"]["domain"] == [-palette.nice_limit(np.nanmax(np.abs(m))),
                                                             palette.nice_limit(np.nanmax(np.abs(m)))]
    assert render.drawn_as_pixels(pa.Table.from_pandas(data))
    picture = _png_pixels_rgba(data["_image"].dropna().iloc[0])
    scale = picture.shape[1] // 128
    lim = spec["encoding"]["color"]["scale"]["domain"][1]
    for r, c in ((0, 0), (10, 77), (23, 127)):
        want = raster.scheme(base.SIGNED_SCHEME)[round((m[r, c] + lim) / (2 * lim) * 255)]
        assert picture[r * scale, c * scale].tolist() == [*want.tolist(), 255]
    assert picture[2 * scale, 5 * scale, 3] == 0  # NaN: not drawn
    small = base.spec_and_data(base.heatmap(m[:8, :8], rows[:8], cols[:8]))[0]
    assert small["mark"]["type"] == "rect" and not render.drawn_as_pixels(None)


def test_the_real_pages_heatmaps_keep_their_own_pixel_rule():
    """The real page draws a head as pixels above its own 10,000 cells (charts.real.PIXEL_CELLS) and re-encodes the
    axes of its marks' heatmaps: base.heatmap's pixels must not reach them (60 tokens are 3,600 cells)."""
    from mha_core.charts import real

    labels = [f"t{i}" for i in range(60)]
    head = base.spec_and_data(real.head_heatmap(np.eye(60), labels, title="", row_title="q", col_title="k",
                                                value_title="w"))[0]
    alike = base.spec_and_data(real.similarity_map(RNG.random((72, 72)), [f"h{i}" for i in range(72)], range(72),
                                                   title="", value_title="d", max_value=1.0))[0]
    for spec in (head, alike):
        assert spec["mark"]["type"] == "rect" and spec["encoding"]["x"]["field"] == "col"


def test_a_large_head_grid_is_one_image_per_head_in_the_same_panels():
    """16 heads × 24 × 24 weights (attend at h = 16 with 24 tokens): one image per head panel, still faceted by head
    (the table view splits it the same way), each image the head's own weights on viridis 0..1."""
    w = RNG.random(size=(16, 24, 24))
    w /= w.sum(-1, keepdims=True)
    labels = [f"t{i}" for i in range(24)]
    titles = [f"head {i}" for i in range(16)]
    spec, data = base.spec_and_data(pipeline.head_grid(w, labels, labels, titles))
    assert spec["mark"]["type"] == "image" and spec["encoding"]["facet"]["field"] == "head"
    images = data.dropna(subset=["_image"])
    assert images["head"].tolist() == titles and len(data) == 16 * 24 * 24
    picture = _png_pixels_rgba(images["_image"].iloc[7])
    scale = picture.shape[0] // 24
    assert picture[3 * scale, 9 * scale, :3].tolist() == raster.colours(np.array(w[7, 3, 9])).tolist()


@pytest.mark.parametrize("kind", ["heatmap", "head_grid", "columns_by_head"])
def test_a_vega_pixel_chart_would_send_only_the_rows_it_draws_and_the_canvas_sends_no_frame(kind):
    """The frame of a chart drawn by Vega as pixels keeps every cell for the table view and the CSV, but Vega would
    get only its image rows (and a band per head): it turns every row it gets into an object (~50 ms of a move for
    a 9,216-cell head grid at 1x, issue 26). These three are painted by the app's canvas: no Vega data at all."""
    from mha_core.charts.spec import arguments_digest

    labels = [f"t{i}" for i in range(24)]
    builder, args, drawn = {
        "heatmap": (base.heatmap, (RNG.random(size=(24, 128)), labels, [str(j) for j in range(128)]), 1),
        "head_grid": (pipeline.head_grid, (RNG.random(size=(16, 24, 24)), labels, labels,
                                           [f"h{i}" for i in range(16)]), 16),
        "columns_by_head": (pipeline.columns_by_head, (RNG.normal(size=(64, 64)), 4, [str(i) for i in range(64)]), 4),
    }[kind]
    f = render._figure_of(builder, render.builder_name(builder), args, {}, arguments_digest(args, {}))
    assert f.canvas is not None and f.drawn == {}
    sent = render.rows_to_draw(f.data)
    assert sent.num_rows == drawn and f.data.num_rows == int(np.prod(args[0].shape[:2] if kind != "head_grid"
                                                                      else args[0].shape))
    small = base.heatmap(RNG.random(size=(4, 4)), labels[:4], labels[:4])
    assert render.rows_to_draw(pa.Table.from_pandas(base.spec_and_data(small)[1])).num_rows == 16  # marks: all


def test_a_chart_csv_leaves_out_what_only_draws_it():
    """The CSV of column blocks drawn as pixels has the cells' numbers, as the marks' version had, and not the
    picture (a base64 PNG) or the bands' places."""
    from mha_core.charts.spec import arguments_digest

    args = (RNG.normal(size=(64, 64)), 4, [str(i) for i in range(64)])
    csv = render._data_csv(pipeline.columns_by_head, render.builder_name(pipeline.columns_by_head), args, {},
                           arguments_digest(args, {})).decode("utf-8-sig")
    lines = csv.splitlines()
    assert lines[0] == "row,col,value,head,strength" and len(lines) == 1 + 64 * 64
    assert "base64" not in csv


def test_column_blocks_as_pixels_keep_their_spec_when_h_moves():
    """x runs 0..1 whatever h is, so a move of h sends new rows to the same Vega view instead of a new one."""
    rows = [str(i) for i in range(64)]
    specs = [base.spec_and_data(pipeline.columns_by_head(RNG.normal(size=(64, 128)), h, rows))[0]
             for h in (4, 8, 32)]  # 64, 128 and 128 columns drawn
    assert specs[0] == specs[1] == specs[2]


def test_head_colours_are_okabe_ito_and_distinct_for_eight_heads():
    colours = [base.head_colour(i) for i in range(8)]
    assert len(set(colours)) == 8 and colours[0] == "#0072B2"
    assert base.head_colour(8) == colours[0]


# ---- the per-head grid ---------------------------------------------------------------------------


def test_head_grid_is_one_chart_with_every_head_on_one_colour_scale():
    mats = RNG.normal(size=(5, 4, 3))
    titles = [f"head {i}" for i in range(5)]
    spec, data = base.spec_and_data(pipeline.head_grid(mats, LABELS[:4], LABELS[:3], titles, signed=True))
    facet = spec["encoding"]["facet"]  # a facet channel: Streamlit's separately sent data reaches every panel
    assert facet["field"] == "head" and facet["columns"] == 4
    assert facet["sort"] is None and list(dict.fromkeys(data["head"])) == titles  # panels in the data's order
    assert len(data) == 5 * 4 * 3
    lim = float(np.max(np.abs(mats)))
    end = spec["encoding"]["color"]["scale"]["domain"][1]  # a round end (palette.nice_limit) at or just above lim
    assert spec["encoding"]["color"]["scale"]["domain"] == [-end, end] and lim <= end <= lim / 0.75
    tips = [tip["field"] for tip in spec["encoding"]["tooltip"]]
    assert tips == ["head", "row", "col", "value"]
    for i, title in enumerate(titles):  # each panel carries exactly its head's matrix (the table view's source)
        np.testing.assert_allclose(base.as_table(data[data["head"] == title].drop(columns="head")).to_numpy(),
                                   mats[i], atol=1e-4)


# ---- render.chart: the builder and its actual arguments are the cache key -----------------------


def _figure(builder, *args, **kwargs):
    spec, data = render.figure(builder, *args, **kwargs)
    return spec, None if data is None else data.to_pandas()


def test_inputs_that_differ_in_one_argument_never_share_a_cache_entry():
    m = RNG.random(size=(4, 4))
    m2 = m.copy()
    m2[3, 3] += 0.5  # one cell
    kw = {"title": "t", "value_title": "v"}
    variants = {
        "base": ((m, LABELS[:4], LABELS[:4]), kw),
        "one cell": ((m2, LABELS[:4], LABELS[:4]), kw),
        "one label": ((m, [*LABELS[:3], "dog"], LABELS[:4]), kw),
        "title (language)": ((m, LABELS[:4], LABELS[:4]), {**kw, "title": "标题"}),
        "signed": ((m, LABELS[:4], LABELS[:4]), {**kw, "signed": True}),
        "size": ((m, LABELS[:4], LABELS[:4]), {**kw, "size": 100}),
    }
    seen = {}
    for name, (args, kwargs) in variants.items():
        spec, data = _figure(base.heatmap, *args, **kwargs)
        seen[name] = (repr(spec), data.to_json())
    assert len(set(seen.values())) == len(variants), seen.keys()
    # and each is what its own builder call gives, not another entry's
    for name, (args, kwargs) in variants.items():
        spec, data = base.spec_and_data(base.heatmap(*args, **kwargs))
        assert seen[name] == (repr(spec), data.to_json()), name


def test_equal_inputs_are_built_once_then_served_from_the_cache():
    m = RNG.random(size=(3, 3))
    with mock.patch.object(base, "matrix_frame", wraps=base.matrix_frame) as built:
        first = _figure(base.heatmap, m, LABELS[:3], LABELS[:3], title="once")
        again = _figure(base.heatmap, m.copy(), list(LABELS[:3]), LABELS[:3], title="once")
        assert built.call_count == 1
        _figure(base.heatmap, m, LABELS[:3], LABELS[:3], title="twice")
        assert built.call_count == 2
    assert repr(first[0]) == repr(again[0]) and first[1].equals(again[1])


def test_a_large_array_is_keyed_on_every_cell_not_a_sample():
    """st.cache_data hashes arrays of 500k+ cells from a sample; render.chart keys on all of them."""
    m = RNG.normal(size=(1000, 600))  # 600k cells; one head, of which the chart draws 16 columns
    changed = m.copy()
    changed[999, 5] += 1.0  # a drawn cell the sample misses
    rows = [str(i) for i in range(1000)]
    _, a = _figure(pipeline.columns_by_head, m, 1, rows)
    _, b = _figure(pipeline.columns_by_head, changed, 1, rows)
    assert a["value"].iloc[-16 + 5] != b["value"].iloc[-16 + 5]


def test_the_same_arguments_to_two_builders_are_two_entries():
    assert _figure(base.heatmap, np.eye(2), ["a", "b"], ["a", "b"])[0]["mark"] != \
        _figure(toy.attention_map, np.eye(2), ["a", "b"], np.eye(2, dtype=bool))[0]["mark"]
    assert render.builder_name(base.heatmap) == "mha_core.charts.base.heatmap"
    assert render.builder_name(toy.attention_map) == "mha_core.charts.toy.attention_map"


def _closure_builder():
    title = "captured"

    def build(m):
        return base.heatmap(m, ["a"], ["a"], title=title)
    return build


@pytest.mark.parametrize("builder", [
    lambda m: base.heatmap(m, ["a"], ["a"]),                     # a lambda: its body is not part of any key
    _closure_builder(),                                          # a closure: captured values are not either
    functools.partial(base.heatmap, rows=["a"], cols=["a"]),     # hidden arguments
    np.mean,                                                     # not a chart builder of mha_core.charts
    inspect.getsource,                                           # a plain function, but not in mha_core.charts
], ids=["lambda", "closure", "partial", "builtin", "elsewhere"])
def test_a_builder_must_be_a_plain_function_of_mha_core_charts(builder):
    with pytest.raises(TypeError, match="mha_core.charts"):
        render.figure(builder, np.eye(1))


def test_every_chart_call_names_its_builder_and_passes_its_arguments():
    """No call site hands render.chart a lambda (whose captured inputs the cache could not see)."""
    root = Path(__file__).resolve().parents[1]
    bad = []
    for path in [*root.glob("pages/*.py"), *root.glob("mha_core/ui/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in {"render.chart", "chart"} and node.args:
                if not isinstance(node.args[0], (ast.Attribute, ast.Name)):  # a builder, not a lambda or call
                    bad.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not bad, bad


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_two_settings_on_a_page_draw_two_different_grids(lang):
    """The attend page's per-head grid under two settings (causal mask off / on): different data each time,
    and back to the first when the setting goes back (no stale entry served)."""
    def grid(at):
        (chart,) = [c for c in canvases(at) if len(c["panels"]) > 1]
        return chart

    at = open_page("pages/attend.py", lang)
    off = grid(at)
    at.toggle(key="causal").set_value(True).run()
    on = grid(at)
    at.toggle(key="causal").set_value(False).run()
    assert off["panels"] != on["panels"] and off["digest"] != on["digest"]
    assert grid(at) == off


def _vega(spec: dict, rows: list[dict]) -> dict:
    vg = vlc.vegalite_to_vega({**spec, "data": {"values": rows}})
    return json.loads(vg) if isinstance(vg, str) else vg


@pytest.mark.parametrize("name", list(_builders()))
def test_no_chart_sorts_its_cells_by_a_per_datum_formula(name):
    """An explicit sort list compiles to a per-cell ternary chain that Streamlit's CSP-safe Vega interpreter
    evaluates on every slider move (split's 128-column heatmap: 1,024 cells x up to 128 comparisons)."""
    spec, data = base.spec_and_data(_builders()[name])
    rows = [] if data is None else data.to_dict("records")
    per_datum = [tr["expr"] for d in _vega(spec, rows)["data"] for tr in d.get("transform", [])
                 if tr["type"] in ("formula", "filter")]
    formulas = [e for e in per_datum if "indexof(" in e or "===" in e]
    assert formulas == []


@pytest.mark.parametrize("name", list(_builders()))
def test_data_order_draws_the_same_picture_as_the_explicit_sort(name):
    """Vega keeps the order of first appearance: the drawing is the explicit sort's, pixel for pixel (as SVG)."""
    chart = _builders()[name]
    spec, data = base.spec_and_data(chart)
    explicit = base.for_browser(chart.copy(deep=False).to_dict(validate=False))
    explicit.pop("data", None)
    explicit.pop("datasets", None)
    rows = None if data is None else data.to_dict("records")

    def drawn(s: dict) -> str:  # vl-convert numbers its gradients process-wide
        return re.sub(r"gradient_\d+", "gradient", spec_svg(s, rows).decode())

    assert drawn(spec) == drawn(explicit)


def test_a_sort_the_data_does_not_already_follow_is_kept():
    """Only a sort list equal to the data's own order (and no missing value) is dropped."""
    m = RNG.random(size=(3, 3))
    spec, _ = base.spec_and_data(base.heatmap(m, ["a", "b", "c"], ["x", "y", "z"]))
    assert spec["encoding"]["y"]["sort"] is None
    flipped = base.heatmap(m, ["a", "b", "c"], ["x", "y", "z"])
    flipped = flipped.encode(y=alt.Y("row:O", sort=["c", "b", "a"]))
    assert base.spec_and_data(flipped)[0]["encoding"]["y"]["sort"] == ["c", "b", "a"]
    m[0, 0] = np.nan
    assert base.spec_and_data(base.heatmap(m, ["a", "b", "c"], ["x", "y", "z"]))[0]["encoding"]["y"]["sort"] == [
        "a", "b", "c"]


@pytest.mark.parametrize("scheme", [base.WEIGHT_SCHEME, base.SIGNED_SCHEME])
def test_the_pixel_heatmaps_colours_are_vega_s_own(scheme):
    """raster's 256 steps (assets/charts/<scheme>.json) are what Vega itself fills at each value: a picture drawn
    as pixels reads like one drawn as marks, and the shared legend is true for both."""
    values = [i / 255 for i in range(256)]
    spec = {"data": {"values": [{"i": i, "v": v} for i, v in enumerate(values)]}, "mark": "rect",
            "width": 1024, "height": 10, "config": {"view": {"stroke": None}},
            "encoding": {"x": {"field": "i", "type": "ordinal", "axis": None},
                         "color": {"field": "v", "type": "quantitative", "legend": None,
                                   "scale": {"scheme": scheme, "domain": [0, 1]}}}}
    fills = re.findall(r'fill="rgb\((\d+), (\d+), (\d+)\)"', vlc.vegalite_to_svg(spec))
    np.testing.assert_array_equal(np.array(fills, dtype=int), raster.scheme(scheme).astype(int))
    np.testing.assert_array_equal(raster.colours(np.array([0.0, 1.0, np.nan, 2.0])),
                                  raster.scheme("viridis")[[0, 255, 0, 255]])


def test_the_cache_key_sees_every_cell_label_and_field_and_refuses_what_it_cannot_read():
    from dataclasses import dataclass

    from mha_core.charts.spec import arguments_digest

    @dataclass(frozen=True)
    class Split:
        h: int
        d_head: int

    m = RNG.random(size=(3, 4))
    base_key = arguments_digest((m, ("a", "b", "c")), {"title": "t", "signed": True})
    assert arguments_digest((m.copy(), ["a", "b", "c"]), {"signed": True, "title": "t"}) == base_key  # list = tuple
    changed = m.copy()
    changed[2, 3] += 1e-12
    others = [
        ((changed, ("a", "b", "c")), {"title": "t", "signed": True}),
        ((m.astype(np.float32), ("a", "b", "c")), {"title": "t", "signed": True}),
        ((m.reshape(4, 3), ("a", "b", "c")), {"title": "t", "signed": True}),
        ((m, ("ab", "c", "")), {"title": "t", "signed": True}),      # the same letters, cut elsewhere
        ((m, ("a", "b", "c")), {"title": "t", "signed": 1}),         # True and 1 are not taken for each other
        ((m, ("a", "b", "c")), {"title": "t"}),
        ((m, ("a", "b", "c"), Split(2, 32)), {"title": "t", "signed": True}),
        ((m, ("a", "b", "c"), Split(4, 16)), {"title": "t", "signed": True}),
    ]
    keys = {arguments_digest(a, k) for a, k in others}
    assert len(keys) == len(others) and base_key not in keys
    with pytest.raises(TypeError):
        arguments_digest((object(),), {})


# ---- specs that stay the same when only the numbers change ------------------------------------------------------
# Streamlit rebuilds a chart's Vega view in the browser whenever its spec changes and only swaps the rows when the
# spec is the same (about a third of the browser's cost per chart in bench_speed's bare page). A move of h must not
# change a spec through names of heads, hashes of rows or a scale's exact end.


def test_head_colours_in_the_data_order_draw_what_an_explicit_head_domain_draws():
    """Ten heads (the palette comes round after eight): the k-th head in the data gets head_colour(k), pixel for
    pixel as with the explicit domain and range it replaces."""
    m = RNG.normal(size=(4, 10 * 3))
    spec, data = base.spec_and_data(pipeline.columns_by_head(m, 10, LABELS[:4], head_label="head"))
    heads = list(dict.fromkeys(data["head"]))
    assert heads == [f"head {i}" for i in range(10)] and spec["encoding"]["color"]["sort"] is None
    explicit = json.loads(json.dumps(spec))
    explicit["encoding"]["color"]["scale"] = {"domain": heads, "range": [base.head_colour(i) for i in range(10)]}
    rows = data.to_dict("records")
    drawn = [re.sub(r"gradient_\d+", "gradient", spec_svg(s, rows).decode()) for s in (spec, explicit)]
    assert drawn[0] == drawn[1]
    assert base.head_colour(9).lower() in drawn[0].lower()


def test_a_move_of_h_keeps_the_spec_of_head_blocks_bars_and_token_lines():
    from mha_core.charts import lines
    for build in (lambda h: pipeline.columns_by_head(RNG.normal(size=(6, 4 * h)), h, LABELS),
                  lambda h: base.bar(RNG.random(h), [f"head {i}" for i in range(h)]),
                  lambda h: lines.token_lines(RNG.dirichlet(np.ones(6), size=(h, 6)), LABELS,
                                              [f"head {i}" for i in range(h)])):
        specs = [base.spec_and_data(build(h))[0] for h in (3, 5)]
        for s in specs:
            s.pop("datasets", None)  # Streamlit sends named data sets apart from the spec
        assert specs[0] == specs[1]


def test_layered_charts_name_their_data_by_position_not_by_a_hash_of_the_rows():
    from mha_core.charts import generate
    specs = [base.spec_and_data(generate.sharing_diagram(8, kv, query_names=[f"q{i}" for i in range(8)],
                                                          kv_names=[f"kv{j}" for j in range(kv)]))[0] for kv in (2, 4)]
    assert all(set(s["datasets"]) == {"data_0", "data_1"} for s in specs)  # links, nodes: two data sets each
    assert specs[0]["datasets"] != specs[1]["datasets"] and "data-" not in json.dumps(specs)
    assert [lay["data"] for lay in specs[0]["layer"]] == [lay["data"] for lay in specs[1]["layer"]]


def test_layers_that_share_one_frame_send_it_as_the_chart_s_data_not_inline():
    m = RNG.random(size=(2, 3))
    drawn = [base.spec_and_data(toy.importance_matrix(x, ["a", "b"], ["c", "d", "e"])) for x in (m, m[::-1])]
    assert all(data is not None and len(data) == 6 for _, data in drawn)  # Streamlit sends it as Arrow, apart
    assert drawn[0][0] == drawn[1][0] and "datasets" not in drawn[0][0]  # same extremes, other rows: same spec
    assert all("data" not in lay for lay in drawn[0][0]["layer"])  # every layer reads the chart's frame
    rows = drawn[0][1].to_dict("records")
    assert spec_svg(drawn[0][0], rows).decode().count("<text") >= 6  # each cell's number is written in it


def test_a_scale_end_is_rounded_up_by_at_most_a_third():
    from mha_core.charts.palette import nice_limit
    assert [nice_limit(x) for x in (16, 12.8, 0.434, 0.433, 1.0, 7.9, 8.1, 0, float("nan"))] == [
        20, 15, 0.5, 0.5, 1.0, 8.0, 10.0, 1.0, 1.0]
    for x in np.geomspace(1e-4, 1e4, 997):
        assert x <= nice_limit(x) <= x * 4 / 3 * (1 + 1e-9)

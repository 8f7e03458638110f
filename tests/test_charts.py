"""Chart builders: valid Vega-Lite, the numbers they carry, and what they cut."""

from __future__ import annotations

import altair as alt
import numpy as np
import pytest

from mha_core import charts, toy_charts

RNG = np.random.default_rng(0)
LABELS = ["the", "cat", "sat", "on", "a", "mat"]


def _builders() -> dict[str, alt.TopLevelMixin]:
    m = RNG.normal(size=(6, 6))
    return {
        "heatmap": charts.heatmap(m, LABELS, LABELS, title="t", value_title="v"),
        "heatmap_signed": charts.heatmap(m, LABELS, LABELS, signed=True, show_col_labels=False),
        "columns_by_head": charts.columns_by_head(RNG.normal(size=(6, 64)), 2, LABELS, title="blocks"),
        "bar": charts.bar([0.1, 0.5, 0.2], ["a", "b", "c"], title="bars"),
        "lines": charts.lines([1, 2, 4], {"x": [1, 2, 3], "y": [3, 2, 1]}, log_x=True),
        "attention_map": toy_charts.attention_map(np.abs(m) / np.abs(m).sum(1, keepdims=True), LABELS,
                                                  np.eye(6, dtype=bool)),
    }  # the cost lab's charts are validated in tests/test_cost_page.py, the heads page's in test_heads_page.py


@pytest.mark.parametrize("name", list(_builders()))
def test_every_builder_makes_a_valid_vega_lite_spec(name):
    """Construction-time validation is off (see mha_core/charts.py); the full spec is validated here."""
    spec = _builders()[name].to_dict(validate=True)
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")


def test_construction_time_validation_is_off_but_to_dict_still_validates():
    from altair.utils import schemapi

    assert schemapi.DEBUG_MODE is False
    scale = alt.Scale(type="not-a-scale")  # built without complaint: no construction-time validation
    bad = alt.Chart(charts.matrix_frame(np.eye(2), ["a", "b"], ["a", "b"])).mark_rect().encode(
        x="row:O", color=alt.Color("value:Q", scale=scale))
    with pytest.raises(schemapi.SchemaValidationError):
        bad.to_dict(validate=True)


def test_heatmap_carries_every_cell_and_the_table_view_gives_the_matrix_back():
    m = RNG.normal(size=(4, 3))
    spec, data = charts.spec_and_data(charts.heatmap(m, LABELS[:4], LABELS[:3]))
    assert "data" not in spec and "datasets" not in spec  # the frame travels separately (as Arrow)
    assert len(data) == 12
    table = charts.as_table(data)
    assert list(table.index) == LABELS[:4] and list(table.columns) == LABELS[:3]
    np.testing.assert_allclose(table.to_numpy(), m, atol=1e-4)


def test_columns_by_head_draws_at_most_per_head_columns_of_each_head():
    m = RNG.normal(size=(5, 4 * 40))  # 4 heads of 40 columns
    _, data = charts.spec_and_data(charts.columns_by_head(m, 4, LABELS[:5]))
    assert data["col"].nunique() == 4 * charts.PER_HEAD_COLUMNS
    assert set(data["head"]) == {f"head {i}" for i in range(4)}
    kept = charts.column_subset(160, 4)
    np.testing.assert_array_equal(kept[:3], [0, 1, 2])
    assert kept[charts.PER_HEAD_COLUMNS] == 40  # head 1 starts at its own block


def test_head_colours_are_okabe_ito_and_distinct_for_eight_heads():
    colours = [charts.head_colour(i) for i in range(8)]
    assert len(set(colours)) == 8 and colours[0] == "#0072B2"
    assert charts.head_colour(8) == colours[0]

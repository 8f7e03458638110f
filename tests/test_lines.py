"""Token lines (issue 17 item 2): the spec is valid and compiles, one line per (head, query, key) whose opacity is
the weight, top-k for long inputs, and the selections do what the page says — drawn by Vega itself (vl-convert,
offline) with a param's value set as a tap or a legend click would set it."""

from __future__ import annotations

import re

import altair as alt
import numpy as np
import pandas as pd
import pytest
import vl_convert as vlc

from mha_core.attention import causal_mask, softmax
from mha_core.charts import lines
from mha_core.charts.palette import OKABE_ITO

LABELS = [f"{i} w" for i in range(5)]
HEADS = ["h0", "h1", "h2"]
LINE = re.compile(r'<line aria-label="q: (\d+); k: (\d+); head: (\w+);[^>]*?opacity="([\d.e-]+)"')


def _weights(h=3, n=5, causal=False, seed=0):
    s = np.random.default_rng(seed).standard_normal((h, n, n)) * 2
    return softmax(np.where(causal_mask(n), s, -np.inf) if causal else s)


def _chart(w, names=HEADS, **kw):
    return lines.token_lines(w, LABELS[:w.shape[1]], names, query_title="query", key_title="key", weight_title="w",
                         head_title="head", **kw)


def _lines(spec):
    return pd.DataFrame(spec["datasets"][lines.LINES])  # the rule layer's rows (layer 1 of six)


def _valid(spec: dict) -> dict:
    """The spec after Altair checked it against the Vega-Lite JSON schema."""
    return alt.LayerChart.from_dict(spec, validate=True).to_dict(validate=True)


def _drawn(spec: dict, **values) -> set[tuple[int, int, str]]:
    """(query, key, head) of every line Vega draws with opacity > 0, the params set to ``values`` first."""
    for p in spec["params"]:
        if p["name"] in values:
            p["value"] = values[p["name"]]
    svg = vlc.vegalite_to_svg(spec)
    return {(int(q), int(k), h) for q, k, h, o in LINE.findall(svg) if float(o) > 0}


def test_the_spec_validates_and_compiles_to_vega():
    spec = _valid(_chart(_weights()))
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
    vega = vlc.vegalite_to_vega(spec)  # Vega-Lite's own compiler: catches what the JSON schema cannot
    assert {f"{p}_store" for p in (lines.HOVER, lines.PICK, lines.HEADS)} <= {d["name"] for d in vega["data"]}


def test_one_line_per_head_query_key_with_the_weight_as_its_opacity():
    w = _weights()
    chart = _chart(w)
    df = _lines(chart)
    assert len(df) == w.size
    heads = df["head"].map(HEADS.index).to_numpy()
    np.testing.assert_allclose(df["weight"], w[heads, df["q"], df["k"]], atol=5e-5)
    rule = chart["layer"][1]
    assert rule["mark"]["type"] == "rule"
    opacity = rule["encoding"]["opacity"]
    assert opacity["field"] == "weight" and opacity["scale"] == {"domain": [0, 1], "range": [0, 1]}
    drawn = _drawn(chart)
    assert drawn == {(q, k, h) for h in HEADS for q in range(5) for k in range(5)}


def test_masked_weights_draw_no_line():
    w = _weights(causal=True)
    df = _lines(_chart(w))
    assert len(df) == 3 * 5 * 6 // 2 and (df["k"] <= df["q"]).all()


def test_top_k_keeps_each_query_s_strongest_keys_and_says_what_share_they_carry():
    w = _weights(h=2, n=5)
    df = _lines(_chart(w, names=HEADS[:2], top_k=2))
    assert len(df) == 2 * 5 * 2
    for (head, q), part in df.groupby(["head", "q"]):
        row = w[HEADS.index(head), q]
        assert set(part["k"]) == set(np.argsort(-row)[:2])
    expected = np.mean([np.sort(w[h, q])[-2:].sum() for h in range(2) for q in range(5)])
    assert lines.shown_share(w, 2) == pytest.approx(expected)
    assert lines.shown_share(w, None) == pytest.approx(1.0)


def test_the_line_budget():
    assert lines.top_k_for(8, 10) is None                      # 800 lines: all of them
    assert lines.top_k_for(1, 128) == lines.LINE_BUDGET // 128     # the real model's longest input
    assert 1 * 128 * lines.top_k_for(1, 128) <= lines.LINE_BUDGET
    assert lines.top_k_for(16, 200) == 1


def test_selection_params_exist_on_the_tokens_and_the_legend():
    spec = _chart(_weights())
    params = {p["name"]: p for p in spec["params"]}
    assert params[lines.HOVER]["select"]["on"].startswith("mouseover")
    assert params[lines.PICK]["select"]["on"].startswith("click")
    assert params[lines.HEADS]["bind"] == "legend" and params[lines.HEADS]["select"]["toggle"] == "true"
    assert params[lines.HEADS]["select"]["fields"] == ["head"]
    one = _chart(_weights(h=1), names=["L3·H5"])
    assert [p["name"] for p in one["params"]] == [lines.HOVER, lines.PICK]  # one head: no legend, no head toggle
    assert one["layer"][1]["encoding"]["color"]["legend"] is None


def test_a_tapped_query_keeps_only_its_lines_and_a_tapped_key_only_the_lines_into_it():
    spec = _chart(_weights())
    assert _drawn(spec, tok_pick=[{"tok": "q2"}]) == {(2, k, h) for h in HEADS for k in range(5)}
    assert _drawn(_chart(_weights()), tok_pick=[{"tok": "k4"}]) == {(q, 4, h) for h in HEADS
                                                                              for q in range(5)}


def test_hover_wins_over_the_tapped_token_while_it_lasts():
    spec = _chart(_weights())
    assert _drawn(spec, tok_pick=[{"tok": "q2"}], tok_hover=[{"tok": "q0"}]) == {(0, k, h) for h in HEADS
                                                                               for k in range(5)}


def test_the_head_toggle_keeps_the_heads_picked_in_the_legend():
    spec = _chart(_weights())
    assert {h for *_, h in _drawn(spec, heads=[{"head": "h1"}])} == {"h1"}
    spec = _chart(_weights())
    both = _drawn(spec, heads=[{"head": "h0"}, {"head": "h2"}], tok_pick=[{"tok": "q1"}])
    assert both == {(1, k, h) for h in ("h0", "h2") for k in range(5)}


def test_after_eight_heads_the_colours_come_round_dashed():
    names = [f"h{i}" for i in range(10)]
    spec = _valid(lines.token_lines(_weights(h=10), LABELS, names))
    dash = spec["layer"][1]["encoding"]["strokeDash"]["scale"]
    channel = spec["layer"][1]["encoding"]["strokeDash"]  # heads in the data's order: the k-th gets range[k]
    assert channel["sort"] is None and "domain" not in dash
    assert list(dict.fromkeys(r["head"] for r in spec["datasets"][lines.LINES])) == names
    assert dash["range"][:8] == [[1, 0]] * 8 and dash["range"][8] != [1, 0]
    colours = spec["layer"][1]["encoding"]["color"]["scale"]["range"]
    assert colours == list(OKABE_ITO)  # an ordinal scale cycles its range: head 8 takes head 0's colour and its dash
    assert "strokeDash" not in _chart(_weights())["layer"][1]["encoding"]


def test_each_chart_is_a_fresh_spec_a_change_to_one_never_reaches_the_next():
    first = _chart(_weights())
    first["params"].clear()
    first["layer"][1]["encoding"]["opacity"]["scale"]["range"] = [0, 0]
    again = _chart(_weights())
    assert again["params"] and again["layer"][1]["encoding"]["opacity"]["scale"]["range"] == [0, 1]


def test_on_the_page_the_lines_are_drawn_on_a_canvas_without_a_label_per_line():
    from mha_core.charts.base import spec_and_data

    spec, data = spec_and_data(_chart(_weights()))
    assert data is None and spec["datasets"][lines.LINES]  # its rows travel inside the spec
    assert spec["usermeta"]["embedOptions"]["renderer"] == "canvas" and spec["config"]["aria"] is False

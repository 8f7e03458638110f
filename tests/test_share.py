"""Shareable links: settings round-trip through the URL; odd or hostile values never crash."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from apphelpers import ROOT, shown_text
from mha_core.i18n import translate
from mha_core.share import parse_query, to_query


def test_round_trip():
    state = {"lang": "en", "h": 6, "d_head": 16, "fixed": True, "d_model": 256, "h_div": 8,
             "sentence": "小猫 & the <b>cat</b>", "weight_mode": "random", "seed": 7, "causal": True, "head": 3}
    parsed = parse_query(to_query(state))
    assert parsed.values == state and parsed.adjusted == ()
    free = {**state, "fixed": False}  # the URL carries either mode
    assert parse_query(to_query(free)).values == free


@pytest.mark.parametrize("query, fixed", [
    ({"h": "8", "dh": "16"}, False),             # a link that only sets h and d_head means the free mode
    ({"dh": "16"}, False),
    ({"dm": "128", "hd": "8"}, True),
    ({"h": "8", "dh": "16", "fixed": "1"}, True),  # an explicit mode always wins
    ({"dm": "128", "fixed": "0"}, False),
    ({"s": "hello"}, None),                       # nothing about the shape: the default stays
])
def test_the_mode_a_link_implies(query, fixed):
    parsed = parse_query(query)
    assert parsed.values.get("fixed") == fixed and parsed.adjusted == ()


@pytest.mark.parametrize(
    "query,key,value",
    [
        ({"h": "99"}, "h", 16), ({"h": "-3"}, "h", 1), ({"h": "2.0"}, "h", 2), ({"dh": "7"}, "d_head", 8),
        ({"h": "3.7"}, "h", 4), ({"h": "1_2"}, "h", 12), ({"h": " 4"}, "h", 4), ({"dm": "256.0"}, "d_model", 256),
        ({"dh": "1000"}, "d_head", 64), ({"dm": "300"}, "d_model", 256), ({"head": "40"}, "head", 15),
        ({"seed": "1e12"}, "seed", None), ({"h": "nan"}, "h", None), ({"h": "abc"}, "h", None),
        ({"lang": "fr"}, "lang", None), ({"w": "trained'; DROP TABLE"}, "weight_mode", None),
        ({"fixed": "yes"}, "fixed", None), ({"s": "   "}, "sentence", None),
        ({"s": "x" * 5000}, "sentence", "x" * 400), ({"s": "a\x00b\x1bc"}, "sentence", "abc"),
    ],
)
def test_bad_values_are_clamped_or_ignored_and_reported(query, key, value):
    parsed = parse_query(query)
    assert parsed.values.get(key) == value
    if query != {"s": "   "}:  # blank text is no request; every coerced number ("2.0", "3.7", "1_2") is reported
        assert parsed.adjusted == tuple(query)


def _app(query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def test_a_link_opens_exactly_that_view():
    at = _app({"lang": "en", "h": "8", "dh": "16", "s": "one two three", "w": "random", "seed": "5"})
    assert not at.exception
    assert at.sidebar.slider(key="h").value == 8 and at.sidebar.slider(key="d_head").value == 16
    assert at.sidebar.radio(key="weight_mode").value == "random"
    assert at.title[0].value == translate("en", "overview.title")
    assert translate("en", "controls.shape_line", h=8, d_head=16, d_model=128) in shown_text(at)
    assert at.query_params["h"] == "8" and at.query_params["s"] == "one two three"


def test_hostile_links_get_a_notice_not_a_crash():
    at = _app({"h": "1e400", "dh": "<script>", "dm": "-1", "lang": "xx", "head": "999", "fixed": "1"})
    assert not at.exception and not at.error
    assert any("h" in str(toast.value) for toast in at.toast)
    assert at.sidebar.select_slider(key="d_model").value == 64


def test_the_url_follows_the_sliders():
    at = _app({})
    at.sidebar.select_slider(key="h_div").set_value(8).run()
    assert at.query_params["fixed"] == "1" and at.query_params["hd"] == "8" and at.query_params["dm"] == "64"
    at.sidebar.toggle(key="fixed").set_value(False).run()
    at.sidebar.slider(key="h").set_value(12).run()
    assert at.query_params["fixed"] == "0" and at.query_params["h"] == "12"


def test_d_model_is_kept_fixed_by_default_and_a_link_keeps_either_mode():
    """Default: moving h keeps the budget. A link made in either mode opens in that mode."""
    at = _app({"lang": "en"})
    assert at.sidebar.toggle(key="fixed").value is True
    for h in (1, 2, 4, 8, 16):
        at.sidebar.select_slider(key="h_div").set_value(h).run()
        table = next(m.value for m in at.sidebar.markdown if "W_Q" in m.value)
        assert f"| h = {h} |" in table and f"| {4 * 64 * 64:,} | {4 * 64 * 64:,} |" in table  # the same budget
    fixed_link = _app({"lang": "en", "fixed": "1", "dm": "128", "hd": "8"})
    assert fixed_link.sidebar.select_slider(key="h_div").value == 8
    assert translate("en", "controls.shape_line", h=8, d_head=16, d_model=128) in shown_text(fixed_link)
    free_link = _app({"lang": "en", "fixed": "0", "h": "3", "dh": "20"})
    assert free_link.sidebar.toggle(key="fixed").value is False
    assert translate("en", "controls.shape_line", h=3, d_head=20, d_model=60) in shown_text(free_link)


def test_switching_the_mode_keeps_the_shape_on_screen():
    at = _app({"lang": "en"})
    at.sidebar.select_slider(key="h_div").set_value(8).run()       # 8 heads of 8 = 64
    at.sidebar.toggle(key="fixed").set_value(False).run()
    assert (at.sidebar.slider(key="h").value, at.sidebar.slider(key="d_head").value) == (8, 8)
    at.sidebar.slider(key="d_head").set_value(16).run()            # 8 × 16 = 128
    at.sidebar.toggle(key="fixed").set_value(True).run()
    assert (at.sidebar.select_slider(key="d_model").value, at.sidebar.select_slider(key="h_div").value) == (128, 8)


@pytest.mark.parametrize("value, options, fallback, expected", [
    (8, (16, 8, 4, 2, 1), None, 8),                  # already valid
    (3, (16, 8, 4, 2, 1), None, 4),                  # a tie goes to the earlier option
    (3, (1, 2, 4, 8, 16), None, 2),
    (96, (64, 128, 256, 512), None, 64),
    (300, (64, 128, 256, 512), None, 256),
    (99, (16, 8, 4, 2, 1), None, 16),
    ("8 · MHA (own K/V per query head)", (16, 8, 4, 2, 1), None, 8),  # an old label handed back by a select box
    ("abc", (16, 8, 4, 2, 1), 2, 2),                 # no number: the fallback
    ("abc", (16, 8, 4, 2, 1), None, 16),             # … or the first option
    (True, (16, 8), None, 16),                       # a bool is no number
    ("stale", ("local", "previous"), "previous", "previous"),
])
def test_snap_is_the_one_rule_for_a_value_that_is_no_longer_offered(value, options, fallback, expected):
    from mha_core.settings import snap

    assert snap(value, options, fallback) == expected


def test_every_setting_is_declared_once_and_the_rest_derives_from_it():
    """Each declaration's range, options and default hold together, and the links carry exactly the declared keys."""
    from mha_core.settings import LINKED, SETTINGS
    from mha_core.ui import sidebar

    keys = [s.key for s in SETTINGS]
    queries = [s.query for s in LINKED]
    assert len(set(keys)) == len(keys) and len(set(queries)) == len(queries)
    assert sidebar.KEPT == {s.key: s.default for s in SETTINGS}
    for s in SETTINGS:
        if s.default is not None:
            assert isinstance(s.default, s.kind)
            if s.bounds:
                assert s.bounds[0] <= s.default <= s.bounds[1] and (s.default - s.bounds[0]) % s.step == 0
            if s.options:
                assert s.default in s.options
        if s.query and s.default is not None:  # the default survives a link unchanged
            assert parse_query(to_query({s.key: s.default})).values[s.key] == s.default
    assert set(to_query({k: v for k, v in sidebar.KEPT.items() if v is not None})) == set(queries) - {"lang", "s"}


def test_a_shape_carried_between_the_modes_stays_as_near_as_the_ranges_allow():
    from mha_core.settings import carried_shape, resolve

    free = {"fixed": True, "h": 6, "d_head": 16, "d_model": 64, "h_div": 4}   # just switched on: 6 × 16 = 96
    assert carried_shape(free) == {"d_model": 64, "h_div": 4}                # 96 is as near 64 as 128: the smaller
    fixed = {"fixed": False, "h": 4, "d_head": 16, "d_model": 512, "h_div": 3}  # 3 does not divide 512
    assert carried_shape(fixed) == {"h": 2, "d_head": 64}                    # nearest divisor 2 (tie 2/4), 256 → 64
    values = {**fixed, "fixed": True, "sentence": "a b", "weight_mode": "random", "seed": 1, "causal": False}
    s = resolve(values, "en")
    assert (s.n_heads, s.d_head, s.d_model) == (2, 256, 512) and hash(s) == hash(resolve(values, "en"))


def test_the_cost_lab_carries_its_shape_by_the_sidebars_rule():
    """The cost page's "keep d_model fixed" uses settings.carried_shape with its own controls (ui.cost.SHAPE): all
    divisors of d_model, wider ranges. Failed before: the page had its own copy of the rule (no SHAPE)."""
    from mha_core.settings import carried_shape
    from mha_core.ui import cost

    k = cost
    free = {k.FIXED_KEY: True, k.H_KEY: 12, k.D_HEAD_KEY: 128, k.D_MODEL_KEY: 512, k.H_DIV_KEY: 8}
    assert carried_shape(free, cost.SHAPE) == {k.D_MODEL_KEY: 1536, k.H_DIV_KEY: 12}  # 12 divides 1536: kept
    fixed = {**free, k.FIXED_KEY: False, k.D_MODEL_KEY: 1536, k.H_DIV_KEY: 12}
    assert carried_shape(fixed, cost.SHAPE) == {k.H_KEY: 12, k.D_HEAD_KEY: 128}       # and back
    wide = {**fixed, k.D_MODEL_KEY: 65536, k.H_DIV_KEY: 65536}                            # one head of 1 per column
    assert carried_shape(wide, cost.SHAPE) == {k.H_KEY: 1024, k.D_HEAD_KEY: 64}       # h within its own range
    forged = {**free, k.H_KEY: float("nan")}                                              # a forged value: the default
    assert carried_shape(forged, cost.SHAPE)[k.D_MODEL_KEY] == cost.H.default * 128

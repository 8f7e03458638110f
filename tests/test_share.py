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
    at.sidebar.slider(key="h").set_value(12).run()
    assert at.query_params["h"] == "12"

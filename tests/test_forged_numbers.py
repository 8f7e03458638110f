"""Forged numbers from a client (issue 28 item 9): a browser can send any value for any widget. A temperature of
1e-320, a top-k of -5 or NaN, a seed of NaN, infinity or 1e30 are clamped by the rule a shared link's values follow
(mha_core.settings.clamp), never an exception on the sender's page; the same for every number input of the cost
lab, the heads page's training form and the sidebar's seed."""

from __future__ import annotations

import math

import pytest
import torch

from apphelpers import open_page
from mha_core.i18n import translate
from mha_core.settings import GEN_SEED, GEN_TEMPERATURE, GEN_TOP_K, SEED, clamp
from mha_core.share import to_query
from mha_core.toy.generation import draw
from mha_core.ui import cost as cost_ui
from mha_core.ui import generate as gen_ui
from mha_core.ui import heads as heads_ui
from mha_core.ui.nav import spec

NAN, INF = float("nan"), float("inf")


# --- the rule ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("setting,forged,clean", [
    (GEN_TEMPERATURE, 1e-320, 0.0), (GEN_TEMPERATURE, NAN, 1.0), (GEN_TEMPERATURE, INF, 1.0),
    (GEN_TEMPERATURE, -3.0, 0.0), (GEN_TEMPERATURE, 7, 2.0), (GEN_TEMPERATURE, 0.25, 0.2), (GEN_TEMPERATURE, "x", 1.0),
    (GEN_TOP_K, -5, 1), (GEN_TOP_K, NAN, 64), (GEN_TOP_K, 7, 5), (GEN_TOP_K, 10**400, 64), (GEN_TOP_K, True, 64),
    (GEN_SEED, NAN, 0), (GEN_SEED, INF, 0), (GEN_SEED, -INF, 0), (GEN_SEED, 1e30, 9999), (GEN_SEED, -4, 0),
    (GEN_SEED, 2.6, 3), (GEN_SEED, None, 0),
])
def test_a_forged_value_is_clamped_like_a_link_value(setting, forged, clean):
    value, changed = clamp(setting, forged)
    assert value == clean and type(value) is setting.kind and changed


@pytest.mark.parametrize("setting,value", [(GEN_TEMPERATURE, 0.3), (GEN_TEMPERATURE, 0.0), (GEN_TOP_K, 5),
                                           (GEN_SEED, 9999), (GEN_SEED, 7.0)])
def test_a_valid_value_is_left_alone(setting, value):
    assert clamp(setting, value) == (value, False)


def test_a_number_inputs_float_seed_goes_into_a_link_as_a_whole_number():
    assert to_query({SEED.key: 5.0})["seed"] == "5"


@pytest.mark.parametrize("temperature", [1e-320, 1e-45, 5e-324])
def test_a_vanishing_temperature_is_greedy_decoding(temperature):
    logits = torch.linspace(-3, 3, 64)
    probs, token = draw(logits, temperature, None, 0)
    assert token == 63 and probs[63] == 1.0 and all(map(math.isfinite, probs))


# --- the generation page -------------------------------------------------------------------------------------

def _generation():
    return open_page(spec("generate").script, "en", **{gen_ui.TAB_KEY: translate("en", "generate.tab_steps")})


def _next(at):
    next(b for b in at.button if b.label == translate("en", "generate.next")).click().run()
    assert not at.exception, at.exception


@pytest.mark.parametrize("kind,key,forged,clean", [
    ("slider", gen_ui.TEMP_KEY, 1e-320, 0.0),
    ("number_input", gen_ui.SEED_KEY, NAN, 0), ("number_input", gen_ui.SEED_KEY, INF, 0),
    ("number_input", gen_ui.SEED_KEY, 1e30, 0),
])
def test_forged_widget_values_on_the_generation_page(kind, key, forged, clean):
    """As a forged websocket message delivers them: the widget's value itself."""
    at = _generation()
    getattr(at, kind)(key=key).set_value(forged).run()
    assert not at.exception, at.exception
    assert at.session_state[key] == clean
    _next(at)
    assert at.session_state[gen_ui.DEMO_KEY].steps == 1


@pytest.mark.parametrize("setting,forged", [
    (GEN_TEMPERATURE, 1e-320), (GEN_TOP_K, -5), (GEN_TOP_K, NAN), (GEN_SEED, 10**30), (GEN_TEMPERATURE, NAN),
    (GEN_SEED, NAN),
])
def test_forged_session_values_on_the_generation_page(setting, forged):
    """Through session state (Streamlit's own checks reset some of them first: any valid value will do)."""
    at = _generation()
    at.session_state[setting.key] = forged
    at.run()
    assert not at.exception, at.exception
    value = at.session_state[setting.key]
    assert clamp(setting, value) == (value, False)
    _next(at)


def test_a_clamped_temperature_is_said():
    at = _generation()
    at.slider(key=gen_ui.TEMP_KEY).set_value(1e-320).run()
    names = translate("en", "generate.temperature")
    assert translate("en", "generate.clamped", names=names) in [i.value for i in at.info]


# --- the other pages' number inputs --------------------------------------------------------------------------

@pytest.mark.parametrize("setting", [cost_ui.D_MODEL, cost_ui.LAYERS, cost_ui.SEQ, cost_ui.BATCH])
@pytest.mark.parametrize("forged", [NAN, INF, -INF, 1e30])
def test_forged_numbers_on_the_cost_page(setting, forged):
    at = open_page(spec("cost").script, "en")
    at.number_input(key=setting.key).set_value(forged).run()
    assert not at.exception, at.exception
    lo, hi = setting.bounds
    assert lo <= at.session_state[setting.key] <= hi and at.metric


@pytest.mark.parametrize("forged", [NAN, INF])
def test_forged_numbers_on_the_cost_pages_free_shape(forged):
    at = open_page(spec("cost").script, "en", **{cost_ui.FIXED_KEY: False})
    for setting in (cost_ui.H, cost_ui.D_HEAD):
        at.number_input(key=setting.key).set_value(forged).run()
        assert not at.exception, at.exception


def test_the_widest_free_shape_switched_to_fixed_is_clamped():
    """1024 heads of 1024 carried over to the fixed mode: d_model 1,048,576 is beyond its input's range."""
    at = open_page(spec("cost").script, "en", **{cost_ui.FIXED_KEY: False, cost_ui.H_KEY: 1024,
                                                  cost_ui.D_HEAD_KEY: 1024})
    at.toggle(key=cost_ui.FIXED_KEY).set_value(True).run()
    assert not at.exception, at.exception
    assert at.session_state[cost_ui.D_MODEL_KEY] == cost_ui.D_MODEL.bounds[1]


@pytest.mark.parametrize("forged", [NAN, INF, 1e30])
def test_a_forged_seed_in_the_heads_pages_training_form(forged):
    at = open_page(spec("heads").script, "en", **{heads_ui.TAB_KEY: translate("en", "heads.tab_train")})
    at.number_input(key=heads_ui.SEED_KEY).set_value(forged).run()
    assert not at.exception, at.exception
    assert 0 <= at.session_state[heads_ui.SEED_KEY] <= 9999


@pytest.mark.parametrize("forged", [NAN, INF])
def test_a_forged_seed_in_the_sidebar(forged):
    at = open_page(spec("attend").script, "en", **{"weight_mode": "random"})
    at.number_input(key=SEED.key).set_value(forged).run()
    assert not at.exception, at.exception
    at.number_input(key=SEED.key).set_value(5).run()
    assert not at.exception and at.query_params.get("seed") in ("5", ["5"])

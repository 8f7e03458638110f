"""The cost lab page through Streamlit's AppTest, from the app's entry point, in both languages."""

from __future__ import annotations

import json
import re
import string
import tomllib
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from apphelpers import open_page, painted, shown_text
from mha_core.charts import cost as cost_charts
from mha_core.cost_model import flops_curve, heads_sweep, kv_curves, seq_grid
from mha_core.i18n import catalog, translate
from mha_core.presets import PRESETS, preset
from mha_core.ui.nav import spec

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = spec("cost").script
PAGE = ROOT / SCRIPT
MISSING = "⟦"


def flat_keys(table: dict, prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in table.items():
        if isinstance(v, dict):
            out.update(flat_keys(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def cost_catalog(lang: str) -> dict[str, str]:
    with (ROOT / "assets" / "i18n" / lang / "cost.toml").open("rb") as f:
        return flat_keys(tomllib.load(f))


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


# ---- catalogs -----------------------------------------------------------------------------------

def test_catalogs_have_the_same_keys_and_placeholders() -> None:
    zh, en = cost_catalog("zh"), cost_catalog("en")
    assert zh.keys() == en.keys()
    for key in zh:
        assert fields(zh[key]) == fields(en[key]), key
        assert zh[key].strip() and en[key].strip(), key


def test_every_key_the_page_uses_exists_in_both_languages() -> None:
    source = PAGE.read_text(encoding="utf-8")
    literal = set(re.findall(r"""(?:t|bound_t)\(\s*"([a-z_]+\.[a-z_0-9]+)\"""", source))
    dynamic = {f"cost.kv_{k}" for k in ("mha", "gqa", "mqa")} | {f"cost.dtype_{k}" for k in ("fp32", "bf16", "int8")}
    dynamic |= {p.note for p in PRESETS if p.note}
    assert len(literal) > 40
    for lang in ("zh", "en"):
        missing = sorted(k for k in literal | dynamic if k not in catalog(lang))
        assert not missing, (lang, missing)


# ---- the page -----------------------------------------------------------------------------------

def open_cost(lang: str) -> AppTest:
    """app.py first, then the cost page, as a student clicking it in the sidebar."""
    at = open_page(SCRIPT, lang)
    assert not at.exception, [e.value for e in at.exception]
    assert at.sidebar.radio(key="lang").value == lang  # ran inside app.py's frame, not alone
    return at


def visible_texts(at: AppTest) -> list[str]:
    """Every string the page shows: text elements, metrics, widget labels, options and help, chart specs."""
    texts: list[str] = [shown_text(at)]
    for kind in ("title", "subheader", "markdown", "caption", "info", "warning", "error", "success"):
        texts += [e.value for e in at.get(kind)]
    for m in at.metric:
        texts += [m.label, m.value, m.proto.delta, m.proto.help]
    for kind in ("selectbox", "select_slider", "radio"):
        for w in at.get(kind):
            texts += [w.label, w.help or "", *map(str, w.options)]
    for kind in ("number_input", "toggle"):
        texts += [x for w in at.get(kind) for x in (w.label, w.help or "")]
    texts += [json.dumps(c) for c in painted(at)]
    return texts


def charts(at: AppTest) -> list[dict]:
    """Each chart as the app's canvas got it (series, axes, tooltips)."""
    return painted(at)


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_page_runs_and_every_text_comes_from_the_catalog(lang: str) -> None:
    at = open_cost(lang)
    texts = visible_texts(at)
    assert not [s for s in texts if MISSING in s]
    assert at.title[0].value == catalog(lang)["cost.title"]
    assert len(at.metric) == 12 and len(painted(at)) == 4 and not at.get("vega_lite_chart")
    assert not at.error


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_picking_a_preset_fills_the_controls_and_changes_the_figures(lang: str) -> None:
    at = open_cost(lang)
    before, charts_before = metrics(at), charts(at)
    at.selectbox(key="cost_preset").select("llama3_8b").run()
    assert not at.exception
    after, charts_after = metrics(at), charts(at)
    assert after != before
    assert all(a != b for a, b in zip(charts_before, charts_after, strict=True))  # no stale cached chart
    ss = at.session_state
    assert (ss["cost_d_model"], ss["cost_h_div"], ss["cost_kv"], ss["cost_layers"], ss["cost_seq"]) == \
        (4096, 32, 8, 32, 8192)
    # Llama-3-8B in bf16: 2 × 32 layers × 8 K/V heads × 128 × 2 bytes = 131,072 bytes = 128 KiB per token.
    help_texts = [m.proto.help for m in at.metric]
    assert any("131,072" in h for h in help_texts)
    assert "128 KiB" in after.values()
    assert any(p.source in c.value for c in at.caption for p in PRESETS if p.key == "llama3_8b")
    assert not [s for s in visible_texts(at) if MISSING in s]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_sharing_kv_heads_shows_as_a_reduction(lang: str) -> None:
    """Streamlit draws a down arrow only for a delta that starts with "-": Llama-2-70B (8 of 64 K/V heads)
    must show its cache and parameters going down against MHA, in either language."""
    at = open_cost(lang)
    assert not [m for m in at.metric if m.proto.delta]  # Transformer base is MHA: nothing to compare
    at.selectbox(key="cost_preset").select("llama2_70b").run()
    deltas = [m.proto.delta for m in at.metric if m.proto.delta]
    assert len(deltas) == 4  # whole-model parameters and the three KV-cache figures
    assert all(d.startswith("-") for d in deltas)
    assert sum(d.startswith("-88%") for d in deltas) == 3  # 8 / 64 of the MHA cache: 87.5% less


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_page_shows_where_the_cache_outweighs_the_weights(lang: str) -> None:
    """Llama-2-70B: 68,976,648,192 parameters (its model card) against 2 × 80 layers × 8 K/V heads × 128 values
    per token: the cache needs 421,001 tokens to weigh as much as the weights, whatever the value type."""
    at = open_cost(lang)
    at.selectbox(key="cost_preset").select("llama2_70b").run()
    cross = -(-68_976_648_192 // (2 * 80 * 8 * 128))
    shown = metrics(at)
    assert shown[translate(lang, "cost.crossover")] == translate(lang, "cost.tokens", n=f"{cross:,}")
    assert shown[translate(lang, "cost.weights", dtype=translate(lang, "cost.dtype_bf16"))] == "128 GiB"
    assert shown[translate(lang, "cost.cache_share")] == "0.973%"  # 1.25 GiB of cache at 4,096 tokens
    assert any(f"**{cross:,}**" in c.value for c in at.caption)
    at.number_input(key="cost_batch").set_value(128).run()  # 128 × 4,096 tokens: past the crossover
    assert shown != metrics(at)
    assert metrics(at)[translate(lang, "cost.cache_share")] == f"{100 * 128 * 4096 * 163_840 / 68_976_648_192:,.0f}%"
    at.radio(key="cost_dtype").set_value("fp32").run()  # the crossover does not depend on the value type
    assert metrics(at)[translate(lang, "cost.crossover")] == translate(lang, "cost.tokens", n=f"{cross:,}")
    at.selectbox(key="cost_kv").select(1).run()  # a custom shape: no published config to count the weights
    assert translate(lang, "cost.crossover_custom") in [c.value for c in at.caption]
    assert translate(lang, "cost.crossover") not in metrics(at)


def test_falcon_offers_only_mha_or_mqa() -> None:
    at = open_cost("en")
    at.selectbox(key="cost_preset").select("falcon_7b").run()
    kv = at.selectbox(key="cost_kv")
    assert kv.value == 1 and len(kv.options) == 2
    assert "MHA" in kv.options[0] and "MQA" in kv.options[1]
    assert at.info  # its note (71 is prime) is shown


def test_changing_the_shape_leaves_the_preset_and_moves_the_cache() -> None:
    at = open_cost("en")
    at.selectbox(key="cost_preset").select("llama2_7b").run()
    kv_before = metrics(at)
    at.selectbox(key="cost_kv").select(1).run()
    assert not at.exception
    assert at.session_state["cost_preset"] == "custom"
    # MQA on Llama-2-7B's shape: 2 × 32 × 1 × 128 × 2 bytes = 16 KiB per token, 1/32 of 512 KiB.
    assert "16.0 KiB" in metrics(at).values() and "512 KiB" in kv_before.values()


def test_controls_only_offer_shapes_that_can_exist() -> None:
    at = open_cost("en")
    at.selectbox(key="cost_preset").select("bert_base").run()
    assert at.select_slider(key="cost_h_div").options == [str(d) for d in range(1, 769) if 768 % d == 0]
    assert [int(o.split(" ")[0]) for o in at.selectbox(key="cost_kv").options] == [12, 6, 4, 3, 2, 1]



def test_a_kv_choice_that_stops_dividing_h_moves_to_one_that_does() -> None:
    at = open_cost("en")
    at.toggle(key="cost_fixed").set_value(False).run()
    at.number_input(key="cost_h").set_value(12).run()
    at.selectbox(key="cost_kv").select(4).run()
    at.number_input(key="cost_h").set_value(10).run()  # 4 does not divide 10: the nearest divisor is 5
    assert not at.exception and not at.error
    assert at.selectbox(key="cost_kv").value == 5
    assert "GQA" in at.selectbox(key="cost_kv").options[1]


def test_free_mode_builds_d_model_from_h_and_d_head() -> None:
    at = open_cost("en")
    at.toggle(key="cost_fixed").set_value(False).run()
    at.number_input(key="cost_h").set_value(7).run()
    at.number_input(key="cost_d_head").set_value(10).run()
    assert not at.exception and not at.error
    # d_model = 70: W_Q is 70 × 70 = 4,900 parameters.
    assert any("| W_Q | 70 × 70 | 4.90 K (4,900) |" in m.value for m in at.markdown)
    assert [int(o.split(" ")[0]) for o in at.selectbox(key="cost_kv").options] == [7, 1]


def test_settings_survive_a_visit_to_another_page() -> None:
    at = open_cost("zh")
    at.selectbox(key="cost_preset").select("mistral_7b").run()
    at.number_input(key="cost_batch").set_value(4).run()
    at.selectbox(key="cost_kv").select(1).run()
    at.switch_page(spec("overview").script)
    at.run()
    at.switch_page(SCRIPT)
    at.run()
    assert not at.exception
    ss = at.session_state
    assert (ss["cost_preset"], ss["cost_d_model"], ss["cost_kv"], ss["cost_batch"]) == ("custom", 4096, 1, 4)
    assert not [s for s in visible_texts(at) if MISSING in s]


def test_sidebar_counts_use_the_same_function() -> None:
    """The walkthrough sidebar's live count: default d_model = 64 kept fixed, h = 4 (d_head = 16): W_Q, W_K, W_V,
    W_O hold 4 × 64 × 64 = 16,384 weights, as torch counts them."""
    nn = pytest.importorskip("torch.nn")
    expected = sum(p.numel() for p in nn.MultiheadAttention(64, 4, bias=False).parameters())
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=30)
    at.session_state["lang"] = "en"
    at.run()
    assert not at.exception
    assert any(f"| {expected:,} |" in m.value for m in at.sidebar.markdown)


# ---- charts -------------------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["transformer_base", "llama2_70b", "falcon_7b"])
def test_charts_are_valid_vega_lite(key: str) -> None:
    """The page skips Altair's schema check for speed; here every chart goes through it."""
    shape = preset(key).shape
    sweep = heads_sweep(shape.d_model, seq_len=512)
    grid = seq_grid(512)
    labels = {"title": "t", "x_title": "x", "y_title": "y"}
    charts = [
        cost_charts.params_vs_heads(sweep, current_h=shape.n_heads, d_head_title="d", flops_title="f", **labels),
        cost_charts.d_head_vs_heads(sweep, current_h=shape.n_heads, **labels),
        cost_charts.kv_vs_seq_len(kv_curves(shape, grid), series_title="s", **labels),
        cost_charts.flops_vs_seq_len(flops_curve(shape, grid), series_title="s", projections="p", attention="a",
                                     **labels),
    ]
    for chart in charts:
        spec = chart.to_dict()  # validates against the Vega-Lite schema
        assert spec["width"] == "container"
    kv_rows = charts[2].to_dict()["data"]["values"]
    assert {r["series"] for r in kv_rows} == {f"{p.kind} (g = {p.n_kv_heads})" for p in kv_curves(shape, grid)}


def test_the_table_view_and_each_csv_hold_every_point_of_the_four_charts() -> None:
    """The cost lab's charts keep their rows inline (charts.cost._base): the table view and the CSV download read
    them there (the CSV was empty, and the table view showed the chart, before)."""
    from mha_core.charts.spec import arguments_digest
    from mha_core.ui import render

    at = open_cost("en")
    drawn = painted(at)
    at.sidebar.toggle(key="tables").set_value(True).run()
    assert not at.exception and not painted(at)
    frames = [d.value for d in at.dataframe]
    assert len(frames) == 4 and not any(str(c).startswith("_") for f in frames for c in f.columns)
    for chart, frame in zip(drawn, frames, strict=True):
        assert len(frame) == sum(len(s["xs"]) for s in chart["series"])  # a row per point or bar
    shape = preset("transformer_base").shape
    points, kw = kv_curves(shape, seq_grid(512)), {"x_title": "n", "y_title": "KV", "series_title": "s"}
    csv = render._data_csv(cost_charts.kv_vs_seq_len, render.builder_name(cost_charts.kv_vs_seq_len), (points,), kw,
                           arguments_digest((points,), kw)).decode()
    assert len(csv.strip().splitlines()) == 1 + len(points) and "series" in csv.splitlines()[0]

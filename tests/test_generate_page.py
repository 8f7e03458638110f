"""The generation page through AppTest (issue 17 items 3 and 4): it renders in both languages, a step grows every
model's cache by one row per layer and K/V head with the bytes mha_core.counts gives, the sharing it draws is the
models' own, top-k = 1 writes what greedy decoding writes, a bad prompt is a translated message."""

from __future__ import annotations

import numpy as np
import pytest

from apphelpers import canvases, open_page, panel_colours, shown_text, tables
from apphelpers import charts as drawn_charts
from mha_core.charts import generate as charts
from mha_core.charts.palette import head_colour
from mha_core.counts import kv_cache_bytes
from mha_core.i18n import LANGS, translate
from mha_core.markdown import escape_params
from mha_core.toy import generate, load_model
from mha_core.toy import generation as gen_core
from mha_core.ui import generate as ui
from mha_core.ui.nav import spec
from mha_core.units import format_bytes

SCRIPT = spec("generate").script
MODELS = [load_model(gen_core.variant_weights(g)) for g in gen_core.VARIANTS]


def open_tab(tab: str, lang: str = "en", **state: object):
    """The page with ``tab`` ("steps" or "share") open (the tabs rerun on change and only the open one is drawn)."""
    return open_page(SCRIPT, lang, **{ui.TAB_KEY: translate(lang, f"generate.tab_{tab}")}, **state)


def cache_grids(at) -> list[tuple[dict, int]]:
    """Each cache grid the page painted (charts.matrix.cache_grid) and how many positions its rows hold, after
    checking that every row holds as many, the newest outlined and the rest grey."""
    out = []
    for c in canvases(at):
        if c["title"] != translate("en", "generate.cache_title"):
            continue
        newest = {k for _, k in c["outline"]}
        assert len(newest) == 1 and len(c["outline"]) == len(c["rows"])   # one newest slot per row, the same
        n = newest.pop() + 1
        free = panel_colours(c["panels"][0])[..., :3] == np.array([0xEE, 0xEE, 0xEE])
        assert free.all(axis=-1)[:, n:].all() and not free.all(axis=-1)[:, :n].any()
        out.append((c, n))
    return out


def press(at, lang: str, key: str):
    next(b for b in at.button if b.label == translate(lang, f"generate.{key}")).click().run()
    assert not at.exception, at.exception


@pytest.mark.parametrize("lang", LANGS)
def test_both_tabs_render_translated_after_a_few_steps(lang):
    at = open_tab("steps", lang)
    for _ in range(3):
        press(at, lang, "next")
    text = shown_text(at)
    assert not at.error and "⟦" not in text
    assert translate(lang, "generate.status", step=3, prompt=8, n=11, n_ctx=24) in text
    at = open_tab("share", lang)
    assert not at.exception and not at.error and "⟦" not in shown_text(at)
    assert translate(lang, "generate.differ_title") in shown_text(at)


def test_a_step_appends_one_row_per_layer_and_kv_head_with_the_counted_bytes():
    at = open_tab("steps")
    prompt = gen_core.prompt_ids(gen_core.DEFAULT_PROMPT, 24)
    lengths = []
    for _ in range(2):
        demo = at.session_state[ui.DEMO_KEY] if ui.DEMO_KEY in at.session_state else None
        grids = cache_grids(at)
        assert len(grids) == len(MODELS)
        held = []
        for i, (m, (grid, n), metric) in enumerate(zip(MODELS, grids, at.metric, strict=True)):
            cfg = m.config
            assert len(grid["rows"]) == cfg.n_layers * cfg.kv_heads                  # every layer and K/V head
            counted = kv_cache_bytes(n_layers=cfg.n_layers, n_kv_heads=cfg.kv_heads, d_head=cfg.d_head, seq_len=n,
                                     bytes_per_value=4)
            tokens = demo.tokens(i) if demo else prompt
            nbytes = gen_core.read(m, tokens).cache.nbytes  # the tensors, recomputed here from the tokens shown
            assert len(tokens) == n and metric.value == format_bytes(counted) and nbytes == counted
            assert f"{counted:,} bytes" in metric.help and f"occupy {nbytes:,} bytes" in metric.help
            held.append(n)
        lengths.append(held)
        press(at, "en", "next")
    assert lengths[0] == [8, 8, 8] and lengths[1] == [9, 9, 9]
    press(at, "en", "reset")
    assert ui.DEMO_KEY not in at.session_state  # losing the demo only restarts it
    assert [n for _, n in cache_grids(at)] == [8, 8, 8]


def test_the_grouping_shown_is_the_models_own():
    """Query head i reads K/V head i // (h / g): in the row labels of the newest query's chart and in the sharing
    diagrams (a line from each query head to its K/V head's x)."""
    at = open_tab("steps")
    for view, m in enumerate(MODELS):
        at.radio(key=ui.VIEW_KEY).set_value(view).run()
        cfg = m.config
        (query,) = [c for c in canvases(at) if c["rows"] and " → " in c["rows"][0]]
        group = [h // (cfg.n_heads // cfg.kv_heads) for la in range(cfg.n_layers) for h in range(cfg.n_heads)]
        want = [f"L{la}·H{h} → K/V{group[h]}" for la in range(cfg.n_layers) for h in range(cfg.n_heads)]
        assert query["rows"] == want
        assert query["row_colours"] == [head_colour(j) for j in group]  # each row in its K/V head's colour
        r = cfg.n_heads // cfg.kv_heads  # MHA's heads share nothing: its caption must not say they do
        caption = translate("en", "generate.query_shared", g=cfg.kv_heads, r=r) if r > 1 else \
            translate("en", "generate.query_own", g=cfg.kv_heads, r=r)
        assert caption in shown_text(at)
    for m in MODELS:
        cfg = m.config
        layers = charts.sharing_diagram(cfg.n_heads, cfg.kv_heads, query_names=[f"H{h}" for h in range(4)],
                                        kv_names=ui.kv_names(m)).to_dict()
        links = next(d for d in layers["datasets"].values() if "x2" in d[0])
        r = cfg.n_heads // cfg.kv_heads
        for h, link in enumerate(links):
            assert link["kv"] == f"K/V{h // r}" and link["x2"] == pytest.approx(np.mean(np.arange(r) + h // r * r) + .5)


def test_top_k_one_writes_what_greedy_decoding_writes():
    at = open_tab("steps", **{ui.TOPK_KEY: 1, ui.TEMP_KEY: 2.0, ui.SEED_KEY: 7})
    press(at, "en", "run_all")
    demo = at.session_state[ui.DEMO_KEY]
    prompt = gen_core.prompt_ids(gen_core.DEFAULT_PROMPT, 24)
    assert len(demo.tokens(0)) == 24 and demo.prompt == prompt
    for i, m in enumerate(MODELS):
        greedy = generate(m, prompt, new_tokens=24 - len(prompt), temperature=0)
        assert demo.tokens(i) == greedy.tokens
    assert all(b.disabled for b in at.button if b.label in (translate("en", "generate.next"),
                                                            translate("en", "generate.run_all")))


@pytest.mark.parametrize("lang", LANGS)
def test_a_bad_prompt_shows_the_translated_message(lang):
    at = open_tab("steps", lang, **{ui.PROMPT_KEY: "a b ?"})
    assert not at.exception
    assert [e.value for e in at.error] == [translate(lang, "errors.toy_seq_symbol", **escape_params({"symbol": "?"}))]
    assert not drawn_charts(at)


def test_every_builder_makes_a_valid_vega_lite_spec():
    """Construction-time validation is off (mha_core/charts/base.py); the page's builders are validated here."""
    rows = np.array([[5, 5], [5, 5]])
    built = [
        charts.cache_grid(rows, 8, list("abcde"), row_names=["L0 · K/V0", "L0 · K/V1", "L1 · K/V0", "L1 · K/V1"],
                          kv_names=["K/V0", "K/V1"], title="cache"),
        charts.query_attention(np.full((4, 5), 0.2), [f"{i} x" for i in range(5)], ["a", "b", "c", "d"], [0, 0, 1, 1]),
        charts.next_token_bars(np.array([0.1, 0.6, 0.3]), ["a", "b", "c"], top=2),
        charts.sharing_diagram(4, 2, query_names=["H0", "H1", "H2", "H3"], kv_names=["K/V0", "K/V1"]),
    ]
    for chart in built:
        assert chart.to_dict(validate=True)["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
    bars = built[2].data
    assert list(bars["token"]) == ["b", "c"] and list(bars["p"]) == [0.6, 0.3]  # the most likely first


def test_the_comparison_is_the_models_own_numbers():
    """Same budget: attention parameters counted by mha_core.counts equal the models' own W_Q..W_O, the loss and
    accuracy are the held-out repeat metrics, the cache is counts' bytes at the full context."""
    from mha_core.toy import held_out_batch, repeat_metrics
    from mha_core.units import format_params

    at = open_tab("share")
    shown = [list(row.values()) for row in tables(at)[0]]  # the comparison (the second: one layer's head scores)
    for i, m in enumerate(MODELS):
        cfg = m.config
        own = sum(p.numel() for n, p in m.named_parameters() if ".attn." in n)
        assert shown[i][1] == format_params(own)
        metrics = repeat_metrics(m, held_out_batch(cfg))
        assert float(shown[i][2]) == pytest.approx(metrics.loss, abs=1e-3)
        assert shown[i][3] == f"{metrics.accuracy:.1%}"
        assert shown[i][4] == format_bytes(2 * cfg.n_layers * cfg.kv_heads * cfg.d_head * cfg.n_ctx * 4)
    assert len({m.config.d_model for m in MODELS}) == 1 and [m.config.kv_heads for m in MODELS] == [4, 2, 1]


def test_a_generation_step_keeps_every_chart_and_says_the_query_s_token_above_its_chart():
    at = open_tab("steps")
    press(at, "en", "next")
    painted = [c.proto.id for c in at.get("bidi_component")]
    press(at, "en", "next")
    assert not at.get("vega_lite_chart")  # the caches, the next tokens and the query: all on the app's canvas
    assert [c.proto.id for c in at.get("bidi_component")] == painted and len(painted) == 7  # the same, repainted
    assert any("over the cached keys" in m.value for m in at.markdown)

"""The heads page through AppTest in both languages, its helpers (mha_core.toy), the training cache and charts.

Every figure the page shows is recomputed here straight from mha_core.toy and compared.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import threading
import time
import types

import numpy as np
import pytest
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

from apphelpers import chart_frame, open_page, shown_text
from mha_core import toy
from mha_core.charts import toy as toy_charts
from mha_core.errors import LabError
from mha_core.i18n import LANGS, translate
from mha_core.markdown import escape_params
from mha_core.toy import (
    held_out_batch,
    importance,
    inspect_sequence,
    load_default,
    mask_without,
    pruning_curve,
    repeat_metrics,
    score_attention,
    score_model,
    train_recipe,
)
from mha_core.ui import heads as ui
from mha_core.ui.heads import RunCache, toggle_key
from mha_core.ui.nav import ROOT, spec

SCRIPT = spec("heads").script
TABS = ("model", "train", "ablate", "count")
TINY = toy.TrainSettings(d_model=16, n_heads=2, n_layers=1, steps=25, seed=3)


@pytest.fixture(scope="module")
def model():
    return load_default()


@pytest.fixture(scope="module")
def batch(model):
    return held_out_batch(model.config)


@pytest.fixture(scope="module")
def imp(model, batch):
    return importance(model, batch)


@pytest.fixture(scope="module")
def curve(model, batch, imp):
    return pruning_curve(model, batch, imp)


def open_tab(tab: str, lang: str = "en", **state: object):
    """The heads page with ``tab`` selected (the tabs rerun on change and only the open one is drawn)."""
    return open_page(SCRIPT, lang, **{ui.TAB_KEY: translate(lang, f"heads.tab_{tab}")}, **state)


def charts(at) -> list[tuple[str, object]]:
    """(title, data frame) of every Vega-Lite chart on the page (a layered chart: its first data set)."""
    out = []
    for c in at.get("vega_lite_chart"):
        arrow = chart_frame(c) or (c.proto.datasets[0].data.data if c.proto.datasets else b"")
        title = json.loads(c.proto.spec).get("title")
        out.append((title, convert_arrow_bytes_to_pandas_df(arrow) if arrow else None))
    return out


# ---- the page ----------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("tab", TABS)
def test_every_tab_renders_translated(tab, lang):
    at = open_tab(tab, lang)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    text = shown_text(at)
    assert "⟦" not in text, re.findall(r"⟦[^⟧]*⟧", text)
    assert at.title[0].value == translate(lang, "heads.title")
    assert translate(lang, f"heads.tab_{tab}") in [t.label for t in at.tabs]


def test_model_view_shows_every_head_with_its_label(model, batch):
    at = open_tab("model")
    table = score_model(model, batch)
    titles = [title for title, _ in charts(at)]
    assert len(titles) == model.config.n_layers * model.config.n_heads
    for s in table.heads:
        want = translate("en", "heads.head_title", head=f"L{s.layer}·H{s.head}",
                         label=translate("en", f"heads.label_{s.label}"))
        assert want in titles
    assert [s.label for s in table.heads].count("induction") == 4  # the measured fact the page teaches
    # the formulas and the thresholds are on the page
    assert len(at.latex) >= 4
    assert translate("en", "heads.thresholds", ind=0.5, prev=0.4, first=0.5, self=0.5, broad=0.8) in shown_text(at)


def test_typing_a_sequence_changes_heatmaps_and_scores(model):
    at = open_tab("model")
    before_maps = [d for _, d in charts(at)]
    before_table = at.dataframe[0].value.copy()
    text = "x y a b c d e f Q R a b c d e f"
    at.text_input(key="heads_seq").set_value(text).run()
    assert not at.exception and not at.error
    ids = toy.parse_sequence(text)
    view = inspect_sequence(model, ids)
    scores = score_attention(view.attn[:, :, None], ids[None])
    shown = at.dataframe[0].value
    assert not shown.equals(before_table)
    np.testing.assert_allclose(shown["induction"].to_numpy(), np.round(scores.matrix("induction").ravel(), 3))
    np.testing.assert_allclose(shown["previous token"].to_numpy(),
                               np.round(scores.matrix("previous_token").ravel(), 3))
    after_maps = [d for _, d in charts(at)]
    assert len(after_maps[0]) == len(ids) ** 2 != len(before_maps[0])
    # layer 1 head 2's map holds exactly the model's weights; repeated tokens carry a * and target cells are marked
    l1h2 = after_maps[model.config.n_heads + 2]
    np.testing.assert_allclose(l1h2["value"].to_numpy(), np.round(view.attn[1, 2].ravel(), 4))
    assert "10 a*" in set(l1h2["row"]) and "2 a" in set(l1h2["row"])
    assert l1h2.loc[(l1h2["row"] == "10 a*") & (l1h2["col"] == "3 b"), "target"].item()
    # the induction heads copy the repeat: every copyable position is predicted right
    right = (view.predicted[:-1] == ids[1:]) & toy.copyable(ids)[:-1]
    assert at.metric[0].value == f"{right.sum()} / {toy.copyable(ids).sum()}" == "5 / 5"


def test_held_out_scores_on_request(model, batch):
    at = open_tab("model")
    at.radio(key=ui.SRC_KEY).set_value("held_out").run()
    table = score_model(model, batch)
    np.testing.assert_allclose(at.dataframe[0].value["induction"].to_numpy(),
                               np.round(table.matrix("induction").ravel(), 3))


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("text,key,params", [
    ("   ", "toy_seq_empty", {}),
    ("a", "toy_seq_short", {}),
    (" ".join("abcdefghijklmnopqrstuvwxyz"), "toy_seq_long", {"n": 26, "max": 24}),
    ("a b ! c", "toy_seq_symbol", {"symbol": "!"}),
    ("1 2 99", "toy_seq_id", {"value": 99, "top": 63}),
])
def test_bad_sequences_show_the_translated_message(lang, text, key, params):
    at = open_tab("model", lang)
    at.text_input(key="heads_seq").set_value(text).run()
    assert not at.exception
    assert [e.value for e in at.error] == [translate(lang, f"errors.{key}", **escape_params(params))]
    assert not at.get("vega_lite_chart")


def test_generate_puts_a_seeded_sequence_with_a_repeat():
    at = open_tab("model")
    at.button[0].click().run()
    text = at.text_input(key=ui.SEQ_KEY).value
    ids = toy.generate_sequence(1)
    assert text == toy.format_sequence(ids) and toy.repeated(ids).any()
    assert len(charts(at)[0][1]) == len(ids) ** 2


def test_switching_heads_off_changes_the_shown_loss(model, batch):
    at = open_tab("ablate")
    base = repeat_metrics(model, batch)
    assert at.metric[0].value == f"{base.loss:.3f}"
    at.toggle(key=toggle_key(0, 2)).set_value(False).run()
    m = repeat_metrics(model, batch, mask_without(model, [(0, 2)]))
    assert at.metric[0].value == f"{m.loss:.3f}" != f"{base.loss:.3f}"
    assert at.metric[1].value == f"{m.accuracy:.1%}"
    # the preset: every induction head off at once costs far more than any one alone
    at.button[1].click().run()
    induction = score_model(model, batch).labelled("induction")
    assert [not at.toggle(key=toggle_key(*h)).value for h in induction] == [True] * 4
    group = repeat_metrics(model, batch, mask_without(model, induction))
    assert at.metric[0].value == f"{group.loss:.3f}"
    assert group.loss / base.loss > 20


def test_the_page_s_choices_survive_a_visit_to_another_page():
    at = open_tab("ablate")
    at.toggle(key=toggle_key(1, 3)).set_value(False).run()
    at.switch_page(spec("overview").script)
    at.run()
    at.switch_page(SCRIPT)
    at.run()
    assert at.toggle(key=toggle_key(1, 3)).value is False
    assert at.toggle(key=toggle_key(0, 0)).value is True


def test_the_kept_defaults_match_the_shipped_model_and_the_training_form(model):
    assert model.config == toy.DEFAULT_RECIPE.config  # KEPT's ablation switches are the shipped model's heads
    cfg, form = model.config, toy.TrainSettings()
    assert {k for k in ui.KEPT if k.startswith("heads_on_")} == {
        toggle_key(la, h) for la in range(cfg.n_layers) for h in range(cfg.n_heads)}
    assert (ui.KEPT[ui.DM_KEY], ui.KEPT[ui.H_KEY], ui.KEPT[ui.LAYERS_KEY], ui.KEPT[ui.STEPS_KEY],
            ui.KEPT[ui.SEED_KEY]) == (form.d_model, form.n_heads, form.n_layers, form.steps, form.seed)


def test_app_py_imports_no_lab_and_no_torch():
    """app.py runs on every page: it imports no lab module (each page registers its KEPT, state.keep), and what it
    imports loads no torch (~2.5 s): torch waits for the heads page. Failed before: app.py imported 11 ui modules."""
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    modules = [f"{n.module}.{a.name}" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module
               for a in n.names] + [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    labs = {"classroom", "cost", "cross", "generate", "heads", "pipeline", "quiz", "real", "teacher"}
    assert not [m for m in modules if m.rsplit(".", 1)[-1] in labs]
    source = (ROOT / "app.py").read_text(encoding="utf-8")
    lines = "; ".join(ast.get_source_segment(source, n) for n in tree.body
                      if isinstance(n, ast.Import | ast.ImportFrom))
    code = f"import sys; {lines}; print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_the_toy_package_is_the_one_public_surface():
    assert not hasattr(sys.modules[toy.sequence_report.__module__], "__all__")  # lab.py keeps no list of its own
    for name in toy.__all__:
        assert getattr(toy, name) is not None
    assert toy.lab.TrainSettings is toy.TrainSettings and toy.ToyConfig is toy.model.ToyConfig
    assert type(toy) is types.ModuleType and callable(toy.train)  # an ordinary package; ``train`` the function
    with pytest.raises(AttributeError):
        toy.no_such_name  # noqa: B018


def test_importance_and_pruning_agree_with_the_core(imp, curve):
    at = open_tab("ablate")
    (_, matrix), (_, pruned) = charts(at)
    np.testing.assert_allclose(matrix["value"].to_numpy(), np.round(imp.loss_increase.ravel(), 3))
    np.testing.assert_allclose(pruned["accuracy"].to_numpy(), np.round(curve.accuracy, 4))
    k = toy.removable(curve)
    assert 0 < k < len(curve.order)
    assert f"{curve.accuracy[k]:.1%}" in shown_text(at)
    assert curve.accuracy[k] >= curve.accuracy[0] - toy.PRUNE_TOLERANCE > curve.accuracy[k + 1]


def test_count_tab_shows_the_shipped_sweep():
    at = open_tab("count", "zh")
    res = json.loads(toy.HEADS_RESULT.read_text())
    text = shown_text(at)
    for h, acc in res["mean_accuracy"].items():
        assert f"| {h} | {64 // int(h)} | {acc:.1%} |" in text
    assert res["command"] in [c.value for c in at.code]


def test_tiny_training_run_from_the_button_shows_its_loss():
    state = {ui.DM_KEY: TINY.d_model, ui.H_KEY: TINY.n_heads, ui.LAYERS_KEY: TINY.n_layers,
             ui.STEPS_KEY: TINY.steps, ui.SEED_KEY: TINY.seed}
    at = open_tab("train", **state)
    assert translate("en", "heads.train_hint") in shown_text(at) or translate("en", "heads.cached") in shown_text(at)
    at.button[0].click().run()
    assert not at.exception and not at.error
    model, _ = train_recipe(TINY.recipe())
    metrics = repeat_metrics(model, held_out_batch(model.config))
    assert at.metric[0].value == f"{metrics.loss:.3f}"
    assert at.metric[1].value == f"{metrics.accuracy:.1%}"
    assert len(charts(at)) >= 2 + 4  # loss, scores, snapshots
    # a second student with the same settings gets the run without training
    again = open_tab("train", "zh", **state)
    assert translate("zh", "heads.cached") in shown_text(again)
    assert again.metric[0].value == f"{metrics.loss:.3f}"


def test_head_choices_follow_d_model():
    at = open_tab("train", **{ui.DM_KEY: 16, ui.H_KEY: 16})
    assert not at.exception
    assert [int(o) for o in at.select_slider(key=ui.H_KEY).options] == [1, 2, 4]
    assert at.select_slider(key=ui.H_KEY).value == 4


# ---- mha_core.toy (lab) ----------------------------------------------------------------------------

def test_symbols_map_ids_one_to_one_and_round_trip():
    assert len(set(toy.SYMBOLS)) == 64
    assert list(toy.parse_sequence("0 9 a z A Z # @")) == [0, 9, 10, 35, 36, 61, 62, 63]
    assert list(toy.parse_sequence("12, 63，c")) == [12, 63, 12]  # a digit group is one id; c is id 12
    assert list(toy.parse_sequence("hello")) == [17, 14, 21, 21, 24]
    ids = toy.generate_sequence(5)
    assert np.array_equal(toy.parse_sequence(toy.format_sequence(ids)), ids)


def test_copyable_and_labels_mark_the_repeat():
    ids = toy.parse_sequence("a b c x a b c")
    assert list(toy.repeated(ids)) == [False] * 4 + [True] * 3
    assert list(toy.copyable(ids)) == [False] * 4 + [True, True, False]
    assert toy.position_labels(ids)[4] == "4 a*"


def test_sequence_without_repeat_has_no_induction_score(model):
    rep = toy.sequence_report(model, toy.parse_sequence("a b c d e f"))
    assert not rep.has_repeat and rep.total == 0
    assert np.isnan(rep.scores.matrix("induction")).all()
    assert rep.scores.matrix("previous_token")[0, 0] > 0.4


def test_settings_are_capped():
    with pytest.raises(LabError) as err:
        toy.TrainSettings(steps=toy.MAX_STEPS + 1)
    assert err.value.key == "toy_limit"
    with pytest.raises(LabError):
        toy.TrainSettings(d_model=256)
    with pytest.raises(LabError) as err:
        toy.TrainSettings(d_model=16, n_heads=3).recipe()
    assert err.value.key == "h_divides"


def test_snapshot_steps_are_seen_by_the_callback():
    assert toy.snapshot_steps(300) == (1, 75, 150, 300)
    assert toy.snapshot_steps(25) == (1, 25)
    run = toy.train_run(TINY)
    assert [s.step for s in run.snapshots] == [1, 25]
    assert [p.step for p in run.points] == [1, 25]
    assert run.snapshots[0].attn.shape == (1, 2, 24, 24)


def test_run_cache_trains_each_setting_once_even_when_asked_twice_at_once(monkeypatch):
    calls: list[toy.TrainSettings] = []

    def fake_train(settings, on_point):
        calls.append(settings)
        time.sleep(0.2)
        return f"run {settings.seed}"

    monkeypatch.setattr(toy, "train_run", fake_train)
    cache = RunCache(size=2)
    results, waits = [], []
    threads = [threading.Thread(target=lambda: results.append(cache.run(TINY, print, lambda: waits.append(1))))
               for _ in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert calls == [TINY] and results == ["run 3"] * 3
    # different settings queue behind the single training slot; the oldest run is dropped past `size`
    for seed in (4, 5):
        cache.run(toy.TrainSettings(seed=seed), print, lambda: None)
    assert cache.get(TINY) is None and cache.get(toy.TrainSettings(seed=5)) == "run 5"


def test_heads_result_loads_and_missing_file_is_a_lab_error(tmp_path):
    res = toy.load_heads_result()
    assert res.heads == (1, 2, 4, 8, 16) and len(res.runs) == 15
    assert res.task == "registers" and res.mean_accuracy[1] < res.mean_accuracy[2] < res.mean_accuracy[4]
    with pytest.raises(LabError) as err:
        toy.load_heads_result(tmp_path / "nope.json")
    assert err.value.key == "toy_result_missing"


# ---- charts ----------------------------------------------------------------------------------------

def test_charts_are_valid_vega_lite(model, imp, curve):
    ids = toy.generate_sequence(0)
    view = inspect_sequence(model, ids)
    res = toy.load_heads_result()
    built = [
        toy_charts.attention_map(view.attn[1, 0], toy.position_labels(ids), toy.induction_keys(ids[None])[0]),
        toy_charts.loss_curve([1, 2, 3], [4.1, 3.0, 1.0], max_step=3),
        toy_charts.expected_curves([1, 25], [[0.0, 0.9], [0.1, 0.5], [0.0, 0.9]], max_step=25,
                                   names=("accuracy", "p", "i"), thresholds=(0.9, 0.4, 0.5)),
        toy_charts.importance_matrix(imp.loss_increase, ["L0", "L1"], ["H0", "H1", "H2", "H3"]),
        toy_charts.pruning_chart(curve.n_removed, curve.accuracy, ["", *map(str, curve.order)], floor=0.98),
        toy_charts.heads_accuracy([r.n_heads for r in res.runs], [r.d_head for r in res.runs],
                                  [r.seed for r in res.runs], [r.accuracy for r in res.runs]),
    ]
    for chart in built:
        chart.to_dict(validate=True)


# ---- choosing the task -----------------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_a_chosen_task_takes_its_recipe_trains_and_says_what_emerged(lang):
    from mha_core.toy.evaluate import task_metrics
    from mha_core.toy.tasks import SPAN, source_keys
    from mha_core.toy.train import train

    at = open_tab("train", lang)
    at.radio(key=ui.TASK_KEY).set_value("reverse").run()
    task = toy.get_task("reverse")
    assert (at.select_slider(key=ui.H_KEY).value, at.select_slider(key=ui.LAYERS_KEY).value,
            at.slider(key=ui.STEPS_KEY).value) == (task.n_heads, task.n_layers, task.steps)
    assert translate(lang, "heads.task_reverse_desc", span=SPAN, n=toy.tasks.PREVIOUS_LEN) in shown_text(at)
    ex = toy.task_example("reverse")
    lines = [c.value for c in at.code][0].splitlines()  # pairs of lines, 12 positions each, a blank line between
    assert " ".join(lines[0::3]) == toy.format_sequence(ex.tokens[0])
    assert " ".join(lines[1::3]).split()[SPAN:2 * SPAN] == [toy.symbol(int(i)) for i in ex.targets[0, SPAN:2 * SPAN]]
    at.slider(key=ui.STEPS_KEY).set_value(25).run()
    at.button[0].click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    # recomputed without the page: the same recipe trained directly, every head's mirror score on held-out data
    cfg = task.config(task.d_model, task.n_heads, task.n_layers, seed=0)
    model, _ = train(cfg, steps=25, batch=task.batch, lr=task.lr, seed=0, task=task)
    held = toy.task_held_out(task)
    keys, queries = source_keys(held)
    scores = toy.pattern_score(toy.attention(model, held.tokens), keys, queries)  # (layers, heads)
    matrix = next(df for _, df in charts(at) if df is not None and "dark" in df.columns)
    np.testing.assert_allclose(matrix["value"].to_numpy(), np.round(scores.ravel(), 3))
    assert at.metric[1].value == f"{task_metrics(model, held).accuracy:.1%}"
    passing = [(0, h) for h in np.argsort(-scores[0]) if scores[0, h] >= 0.5]
    if passing:
        heads = translate(lang, "heads.list_sep").join(
            translate(lang, "heads.head_score", head=f"L0·H{h}", score=round(float(scores[0, h]), 3))
            for _, h in passing)
        want = translate(lang, "heads.emerged_yes", where=translate(lang, "heads.where_any"), heads=heads,
                         threshold=0.5)
    else:
        best = int(np.argmax(scores[0]))
        want = translate(lang, "heads.emerged_no", where=translate(lang, "heads.where_any"), threshold=0.5,
                         head=f"L0·H{best}", score=round(float(scores[0, best]), 3))
    assert want in shown_text(at)
    # review finding: the repeat's "*" (a repeated token) marked every output of reverse; only repeat marks repeats
    labels = {str(v) for _, df in charts(at) if df is not None and "row" in df.columns for v in df["row"]}
    assert labels and not any(v.endswith("*") for v in labels)

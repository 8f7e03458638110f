"""The "How many heads?" task (registers): its generator, the shipped sweep, a short real training, the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from apphelpers import chart_titles, open_page, shown_text
from mha_core import counts, toy
from mha_core.errors import LabError
from mha_core.i18n import LANGS, translate
from mha_core.toy import __main__ as cli
from mha_core.toy.data import data_rng
from mha_core.toy.experiment import COMMAND, HEADS, SEEDS, HeadsResult, RunResult
from mha_core.toy.model import ToyTransformer
from mha_core.toy.registers import (
    DEFAULT_TASK,
    RegisterTask,
    answer_class,
    answer_values,
    chance_accuracy,
    format_registers,
    head_register_weights,
    label_registers,
    make_register_batch,
    register_metrics,
    train_registers,
)
from mha_core.ui.nav import spec
from mha_core.ui.pipeline import MYTHS_TAB_KEY

TASK = DEFAULT_TASK


def brute_force_answers(tokens: list[int], task: RegisterTask) -> list[int | None]:
    """An independent oracle: replay the assignments as a dict and read it at every ``?``."""
    state: dict[int, int] = {}
    out: list[int | None] = []
    for tok in tokens:
        if tok == task.question:
            done = len(state) == task.n_registers
            digits = [state[r] for r in range(task.n_registers)] if done else []
            out.append(int(np.polyval(digits, task.n_values)) if done else None)
        else:
            state[tok // task.n_values] = tok % task.n_values
            out.append(None)
    return out


@pytest.fixture(scope="module")
def batch():
    return make_register_batch(data_rng(7, 0), 200, TASK)


@pytest.fixture(scope="module")
def shipped() -> HeadsResult:
    return toy.load_heads_result()


# ---- the generator -----------------------------------------------------------------------------------

def test_answers_match_an_independent_replay(batch):
    for row in range(len(batch.tokens)):
        expected = brute_force_answers(batch.tokens[row].tolist(), TASK)
        got = [int(a) if m else None for a, m in zip(batch.answers[row], batch.mask[row], strict=True)]
        assert got == expected
    assert batch.mask.sum() > 500  # plenty of asked positions


def test_answer_class_round_trip_and_vocab():
    values = np.array([[0, 0, 0], [3, 2, 1], [1, 0, 3]])
    assert answer_class(values, 4).tolist() == [0, 3 * 16 + 2 * 4 + 1, 16 + 3]
    assert np.array_equal(answer_values(answer_class(values, 4), TASK), values)
    assert TASK.n_answers == 64 and TASK.vocab_size == 64 and TASK.question == 12
    assert chance_accuracy(TASK) == pytest.approx(1 / 64)
    with pytest.raises(LabError) as err:
        RegisterTask(n_registers=0)
    assert err.value.key == "toy_registers"


def test_the_answer_depends_on_each_registers_latest_assignment_and_on_nothing_else(batch):
    """Changing the latest assignment of register r changes digit r; changing any other step changes nothing."""
    checked = 0
    for row, i in zip(*np.nonzero(batch.mask), strict=True):
        if checked >= 60:
            break
        tokens = batch.tokens[row].copy()
        for r, src in enumerate(batch.sources[row, i]):
            changed = tokens.copy()
            new_value = (tokens[src] % TASK.n_values + 1) % TASK.n_values
            changed[src] = r * TASK.n_values + new_value
            got = answer_values(label_registers(changed, TASK).answers[0, i], TASK)
            want = batch.latest[row, i].copy()
            want[r] = new_value
            assert np.array_equal(got, want)
        others = [j for j in range(i) if j not in set(batch.sources[row, i]) and tokens[j] != TASK.question]
        for j in others:  # an older assignment (or a later register's step) with another value: same answer
            changed = tokens.copy()
            changed[j] = (tokens[j] // TASK.n_values) * TASK.n_values + (tokens[j] + 1) % TASK.n_values
            assert label_registers(changed, TASK).answers[0, i] == batch.answers[row, i]
        checked += 1
    assert checked == 60


def test_the_places_to_read_are_chosen_by_content_not_by_a_fixed_offset(batch):
    """Across asked positions the distance back to each register's latest assignment varies widely,
    and the R places are different positions: no fixed-offset (positional) head can read them."""
    rows, cols = np.nonzero(batch.mask)
    src = batch.sources[rows, cols]                  # (m, R)
    distance = cols[:, None] - src
    for r in range(TASK.n_registers):
        assert len(np.unique(distance[:, r])) >= 10
    assert all(len(set(s)) == TASK.n_registers for s in src.tolist())


def test_format_registers_reads_like_assignments():
    assert format_registers(np.array([0, 7, 12, 9]), TASK) == ["a=0", "b=3", "?", "c=1"]
    steps = toy.register_example(0)
    assert len(steps) == TASK.n_ctx and any(s.startswith("?→a=") for s in steps)


def test_head_register_weights_measures_attention_on_the_latest_assignments(batch):
    model = ToyTransformer(TASK.model_config(d_model=16, n_heads=2))
    weights = head_register_weights(model, batch)
    assert weights.shape == (2, TASK.n_registers)
    with torch.no_grad():
        out = model(torch.from_numpy(batch.tokens), return_attn=True).attn[:, 0].numpy()
    assert 0 < weights.min() and weights.max() < 1
    rows, cols = np.nonzero(batch.mask)  # by hand: head 1, register c, over every asked position
    by_hand = np.mean([out[b, 1, q, batch.sources[b, q, 2]] for b, q in zip(rows, cols, strict=True)])
    assert weights[1, 2] == pytest.approx(by_hand, rel=1e-5)


# ---- the shipped sweep -----------------------------------------------------------------------------

def expected_params(d_model: int, n_heads: int, task: RegisterTask) -> int:
    """Embeddings + one attention layer (mha_core.counts) + unembedding, counted independently of torch."""
    cfg = task.model_config(d_model, n_heads)
    attention = counts.param_counts(d_model, n_heads)["total"]
    return cfg.vocab_size * d_model + cfg.n_ctx * d_model + attention * cfg.n_layers + d_model * cfg.vocab_size


def test_shipped_file_has_the_whole_curve_with_equal_parameter_counts(shipped):
    assert shipped.command == COMMAND and shipped.task == "registers"
    assert shipped.heads == HEADS and shipped.seeds == SEEDS and shipped.n_layers == 1
    assert (shipped.n_registers, shipped.n_values, shipped.n_ctx) == (TASK.n_registers, TASK.n_values, TASK.n_ctx)
    assert sorted((r.n_heads, r.seed) for r in shipped.runs) == sorted((h, s) for h in HEADS for s in SEEDS)
    want = expected_params(shipped.d_model, 1, TASK)
    for h in HEADS:
        built = ToyTransformer(TASK.model_config(shipped.d_model, h))
        assert sum(p.numel() for p in built.parameters()) == want == expected_params(shipped.d_model, h, TASK)
    assert {r.n_params for r in shipped.runs} == {want}
    for r in shipped.runs:
        assert r.d_head * r.n_heads == shipped.d_model
        assert np.asarray(r.register_weight).shape == (r.n_heads, shipped.n_registers)
    stats = shipped.stats()
    for h in HEADS:
        accs = [r.accuracy for r in shipped.runs if r.n_heads == h]
        assert shipped.mean_accuracy[h] == pytest.approx(np.mean(accs)) == pytest.approx(stats[h].mean)
        assert stats[h].std == pytest.approx(np.std(accs, ddof=1))
        assert (stats[h].low, stats[h].high) == (min(accs), max(accs))
    assert shipped.chance == pytest.approx(chance_accuracy(TASK))


def test_json_written_by_the_experiment_matches_its_stats():
    data = json.loads(toy.HEADS_RESULT.read_text())
    for h, s in data["stats"].items():
        accs = [r["accuracy"] for r in data["runs"] if r["n_heads"] == int(h)]
        assert s["mean"] == pytest.approx(np.mean(accs)) == pytest.approx(data["mean_accuracy"][h])


def test_the_page_reading_holds_for_the_shipped_numbers(shipped):
    """What the page says in words (count_reading) is true of the file it reads."""
    mean = shipped.mean_accuracy
    enough = shipped.first_within()
    assert mean[1] < mean[2] < mean[enough]                  # one head < two heads < enough heads
    assert enough > 2 and enough >= shipped.n_registers - 1   # it takes about one head per register
    assert max(r.accuracy for r in shipped.runs if r.n_heads == 1) < min(
        r.accuracy for r in shipped.runs if r.n_heads == enough)  # no seed overlap: the gap is not noise
    one = np.asarray(next(r for r in shipped.runs if r.n_heads == 1).register_weight)
    assert one.max() < 0.5  # the single head spreads its row: no register gets most of its weight


# ---- a short real training -------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1])
def test_short_training_four_heads_beat_one_head_on_the_same_budget(seed):
    """d_model = 32, 200 steps of 32 sequences: same parameters, only h differs (gap 0.17-0.46 over seeds 0-3)."""
    held = make_register_batch(data_rng(99, 1), 128, TASK)
    one = train_registers(TASK, 32, 1, steps=200, batch=32, seed=seed, held_out=held)
    four = train_registers(TASK, 32, 4, steps=200, batch=32, seed=seed, held_out=held)
    assert sum(p.numel() for p in one.model.parameters()) == sum(p.numel() for p in four.model.parameters())
    assert four.metrics.accuracy > one.metrics.accuracy + 0.1
    assert one.metrics == register_metrics(one.model, held)


# ---- the command line ------------------------------------------------------------------------------

def test_cli_experiment_writes_the_task_file(tmp_path, monkeypatch, capsys):
    fake = HeadsResult(command=COMMAND, d_model=8, heads=(1, 2), seeds=(0,), steps=1, batch=1, lr=0.1,
                       runs=(RunResult(1, 8, 0, 0.5, 1.0, 10, 0.1), RunResult(2, 4, 0, 0.75, 0.5, 10, 0.1)),
                       mean_accuracy={1: 0.5, 2: 0.75}, torch_version="x", machine="y", task="registers")
    asked: list[str] = []
    monkeypatch.setattr(cli, "heads_vs_accuracy", lambda task: asked.append(task) or fake)
    monkeypatch.setitem(cli.EXPERIMENT_OUT, "copy", tmp_path / "copy.json")
    assert cli.main(["experiment", "--out", str(tmp_path / "r.json")]) == 0
    assert cli.main(["experiment", "--task", "copy"]) == 0
    assert asked == ["registers", "copy"]
    again = toy.load_heads_result(tmp_path / "r.json")
    assert again.mean_accuracy == {1: 0.5, 2: 0.75} and again.stats()[2].mean == 0.75
    assert (tmp_path / "copy.json").is_file()
    assert cli.EXPERIMENT_OUT["registers"] == toy.HEADS_RESULT
    capsys.readouterr()


# ---- the page --------------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_count_tab_renders_the_whole_curve_from_the_file(lang, shipped):
    at = open_page(spec("heads").script, lang, heads_tab=translate(lang, "heads.tab_count"))
    assert not at.exception and not at.error
    text = shown_text(at)
    for h, s in shipped.stats().items():  # every h: mean, standard deviation and range over the seeds
        assert f"| {h} | {s.d_head} | {s.mean:.1%} | {100 * s.std:.1f} | {s.low:.1%} – {s.high:.1%} |" in text
    enough = shipped.first_within()
    assert f"{shipped.mean_accuracy[1]:.1%}" in text and f"{shipped.mean_accuracy[enough]:.1%}" in text
    assert "{" not in text  # every placeholder filled
    codes = [c.value for c in at.code]
    assert shipped.command in codes
    assert " ".join(toy.register_example(0)) in [" ".join(c.split()) for c in codes]
    titles = [json.loads(c.proto.spec).get("title") for c in at.get("vega_lite_chart")]
    for h in (1, 2, enough):
        assert translate(lang, "heads.count_heads_h", h=h, d_head=shipped.d_model // h) in titles
    assert len(at.get("vega_lite_chart")) == 4  # the curve and three head-weight matrices


def test_head_weights_shown_support_the_reading(shipped):
    """count_reading: two heads (shown seed) = one head on one variable + one shared; enough heads: one per variable."""
    weights = {r.n_heads: np.asarray(r.register_weight) for r in shipped.runs if r.seed == shipped.seeds[0]}
    two = weights[2]
    assert sorted(two.max(axis=1))[-1] > 0.9 and sorted(two.max(axis=1))[0] < 0.5
    for r in shipped.runs:
        if r.n_heads == shipped.first_within():
            assert (np.asarray(r.register_weight).max(axis=0) > 0.9).all()  # every variable has its own head


@pytest.mark.parametrize("lang", LANGS)
def test_myths_page_reads_the_same_file(lang, shipped):
    at = open_page("pages/myths.py", lang, **{MYTHS_TAB_KEY: translate(lang, "myths.tab2")})
    assert not at.exception
    caption = translate(lang, "myths.m2_acc_caption", command=shipped.command, seeds=len(shipped.seeds),
                        tab=translate(lang, "heads.tab_count"), page=translate(lang, "nav.heads"))
    assert caption in [c.value for c in at.caption]
    title = translate(lang, "myths.m2_acc_title", d_model=shipped.d_model, steps=shipped.steps,
                      registers=shipped.n_registers)
    assert title in chart_titles(at)

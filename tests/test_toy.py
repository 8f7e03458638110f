"""The toy transformer of "Heads at work": data, training, scores, ablation, shipped weights."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
import torch

from mha_core import LabError, multi_head_attention
from mha_core.toy import (
    DEFAULT_RECIPE,
    DEFAULT_WEIGHTS,
    ToyConfig,
    ToyTransformer,
    ablate,
    data_rng,
    full_head_mask,
    held_out_batch,
    importance,
    inspect_sequence,
    layer_weights,
    load_default,
    load_model,
    make_batch,
    mask_without,
    pruning_curve,
    repeat_metrics,
    save_model,
    score_model,
    train,
)
from mha_core.toy import scores as sc
from mha_core.toy import weights as toy_weights
from mha_core.toy.experiment import COMMAND, HEADS
from mha_core.toy.weights import ASSETS

SMALL = ToyConfig(vocab_size=24, n_ctx=16, d_model=32, n_heads=2, n_layers=2, min_repeat=3, max_repeat=6)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Two threads on a shared 2-core box are much slower than one for models this small."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def shipped() -> ToyTransformer:
    return load_default()


@pytest.fixture(scope="module")
def held_out(shipped):
    return held_out_batch(shipped.config)


# --- data -----------------------------------------------------------------------------------------

def test_data_copies_segment_and_marks_predictable_positions():
    b = make_batch(data_rng(7, 0), 200, 24, 64, 4, 10)
    for row in range(200):
        f, s, n = b.first[row], b.second[row], b.length[row]
        assert s >= f + n, "second copy overlaps the first"
        np.testing.assert_array_equal(b.tokens[row, s:s + n], b.tokens[row, f:f + n])
        expected = np.zeros(24, dtype=bool)
        expected[s:s + n - 1] = True
        np.testing.assert_array_equal(b.repeat_mask[row], expected)
        # distinct tokens: the only repeated ids are the copied segment
        values, counts = np.unique(b.tokens[row], return_counts=True)
        assert set(values[counts > 1]) == set(b.tokens[row, f:f + n]) and counts.max() == 2
    # at every marked position the next token is the one after the earlier copy
    rows, cols = np.nonzero(b.repeat_mask)
    np.testing.assert_array_equal(b.tokens[rows, cols + 1], b.tokens[rows, cols + 1 - b.offset[rows]])


def test_data_offset_and_position_vary():
    b = make_batch(data_rng(3, 0), 500, 24, 64, 4, 10)
    assert len(np.unique(b.offset)) >= 8
    assert len(np.unique(b.second)) >= 8
    for n in np.unique(b.length):  # at a fixed segment length the offset still varies
        if (b.length == n).sum() >= 20:
            assert len(np.unique(b.offset[b.length == n])) >= 2


def test_data_is_deterministic_per_seed_and_stream():
    a = make_batch(data_rng(5, 0), 8, 24, 64, 4, 10)
    b = make_batch(data_rng(5, 0), 8, 24, 64, 4, 10)
    c = make_batch(data_rng(5, 1), 8, 24, 64, 4, 10)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    assert not np.array_equal(a.tokens, c.tokens)


def test_data_with_replacement_and_bad_shapes():
    b = make_batch(data_rng(0, 0), 50, 16, 4, 3, 5, distinct=False)
    assert b.tokens.max() < 4
    with pytest.raises(LabError):
        make_batch(data_rng(0, 0), 4, 10, 64, 4, 6)  # two copies of 6 do not fit in 10
    with pytest.raises(LabError):
        make_batch(data_rng(0, 0), 4, 24, 16, 4, 6)  # 16 distinct ids cannot fill 24 positions


# --- model ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("layer", [0, 1])
def test_attention_matches_numpy_core(shipped, held_out, layer):
    view = inspect_sequence(shipped, held_out.tokens[3])
    w = layer_weights(shipped, layer)
    x = view.layer_inputs[layer].astype(np.float32)
    trace = multi_head_attention(x, w.w_q, w.w_k, w.w_v, w.w_o, w.n_heads, causal=True)
    assert np.max(np.abs(trace.weights - view.attn[layer])) < 1e-5
    # no MLP, no LN: the next layer's input is this layer's input plus the attention output
    if layer + 1 < shipped.config.n_layers:
        delta = view.layer_inputs[layer + 1] - view.layer_inputs[layer]
        assert np.max(np.abs(trace.output - delta)) < 1e-4


def test_attention_matches_numpy_core_with_mlp():
    model = ToyTransformer(ToyConfig(mlp=True, n_heads=8, seed=3))
    tokens = held_out_batch(model.config, 1).tokens[0]
    view = inspect_sequence(model, tokens)
    for layer in range(2):
        w = layer_weights(model, layer)
        trace = multi_head_attention(view.layer_inputs[layer].astype(np.float32), w.w_q, w.w_k, w.w_v, w.w_o,
                                     w.n_heads, causal=True)
        assert np.max(np.abs(trace.weights - view.attn[layer])) < 1e-5


def test_heads_off_stop_information_flow():
    model = ToyTransformer(SMALL)
    ids = torch.from_numpy(held_out_batch(SMALL, 1).tokens)
    changed = ids.clone()
    changed[0, 0] = (changed[0, 0] + 1) % SMALL.vocab_size
    off = np.zeros((SMALL.n_layers, SMALL.n_heads), dtype=np.float32)
    with torch.no_grad():
        a, b = model(ids, head_mask=off).logits, model(changed, head_mask=off).logits
        c, d = model(ids).logits, model(changed).logits
    assert torch.allclose(a[0, 1:], b[0, 1:])           # no head on: position 0 cannot reach later ones
    assert not torch.allclose(c[0, 1:], d[0, 1:])       # heads on: it does
    with torch.no_grad():
        assert torch.equal(model(ids, head_mask=full_head_mask(SMALL)).logits, c)


def test_model_rejects_bad_inputs():
    model = ToyTransformer(SMALL)
    with pytest.raises(LabError):
        model(torch.zeros(1, SMALL.n_ctx + 1, dtype=torch.long))
    with pytest.raises(LabError):
        model(torch.zeros(1, 4, dtype=torch.long), head_mask=np.ones((3, 3)))
    with pytest.raises(LabError):
        model(torch.full((1, 4), SMALL.vocab_size, dtype=torch.long))
    with pytest.raises(LabError):
        layer_weights(model, SMALL.n_layers)
    with pytest.raises(LabError):
        ToyConfig(d_model=30, n_heads=4)


# --- training -------------------------------------------------------------------------------------

def test_training_lowers_the_loss_and_calls_back():
    calls = []
    model, history = train(SMALL, steps=60, batch=32, lr=1e-2, seed=0,
                           callback=lambda s, loss, m: calls.append((s, loss, m.training)), every=20)
    assert [c[0] for c in calls] == [1, 20, 40, 60]
    assert all(not training for *_, training in calls)
    assert len(history.loss) == 60
    assert np.mean(history.loss[-10:]) < np.mean(history.loss[:5]) - 0.3
    batch = held_out_batch(SMALL, 128)
    untrained = ToyTransformer(SMALL)
    assert repeat_metrics(model, batch).loss < repeat_metrics(untrained, batch).loss - 0.3


def test_training_is_deterministic_with_a_seed():
    a, ha = train(SMALL, steps=15, batch=16, seed=4)
    b, hb = train(SMALL, steps=15, batch=16, seed=4)
    c, _ = train(SMALL, steps=15, batch=16, seed=5)
    assert ha.loss == hb.loss
    for k, v in a.state_dict().items():
        assert torch.equal(v, b.state_dict()[k])
    assert any(not torch.equal(v, c.state_dict()[k]) for k, v in a.state_dict().items())


def test_training_rejects_bad_budget():
    with pytest.raises(LabError):
        train(SMALL, steps=0)


# --- scores on hand-made patterns -----------------------------------------------------------------

def _uniform(n: int) -> np.ndarray:
    return np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]


def _previous_token(n: int) -> np.ndarray:
    a = np.zeros((n, n))
    a[0, 0] = 1.0
    a[np.arange(1, n), np.arange(n - 1)] = 1.0
    return a


def test_pure_previous_token_pattern():
    a = _previous_token(10)[None]
    assert sc.previous_token_score(a) == pytest.approx(1.0)
    assert sc.self_score(a) == pytest.approx(0.0)
    assert sc.entropy_score(a) == pytest.approx(0.0)
    assert sc.label_head(sc.previous_token_score(a), 0.0, sc.first_token_score(a), sc.self_score(a),
                         sc.entropy_score(a, normalized=True)) == "previous_token"


@pytest.mark.parametrize("n", [2, 5, 24])
def test_uniform_pattern_matches_the_formula(n):
    a = _uniform(n)[None]
    harmonic = sum(Fraction(1, k) for k in range(1, n + 1))
    expected = float((harmonic - 1) / (n - 1))  # mean over i = 1..n-1 of 1/(i+1)
    assert sc.previous_token_score(a) == pytest.approx(expected, abs=1e-12)
    assert sc.first_token_score(a) == pytest.approx(expected, abs=1e-12)
    assert sc.self_score(a) == pytest.approx(expected, abs=1e-12)
    assert sc.entropy_score(a, normalized=True) == pytest.approx(1.0)
    expected_nats = float(np.mean([np.log(i + 1) for i in range(1, n)]))
    assert sc.entropy_score(a) == pytest.approx(expected_nats)


def test_induction_pattern_and_labels():
    tokens = np.array([[5, 3, 9, 1, 7, 5, 3, 9, 1, 7]])
    ind = np.eye(10)
    for i in range(5, 10):        # query i (token tok[i]) looks right after its earlier copy, at i - 4
        ind[i] = 0
        ind[i, i - 4] = 1.0
    assert sc.induction_score(ind[None], tokens) == pytest.approx(1.0)
    assert sc.induction_score(_previous_token(10)[None], tokens) == pytest.approx(0.0)
    assert sc.induction_score(_uniform(10)[None], tokens) == pytest.approx(np.mean([1 / (i + 1) for i in range(5, 10)]))
    with pytest.raises(ValueError):
        sc.induction_score(ind[None], np.arange(10)[None])  # no token repeats: undefined
    table = sc.score_attention(np.stack([ind, _previous_token(10), np.eye(10), _uniform(10)])[None, :, None],
                               tokens)
    assert [h.label for h in table.heads] == ["induction", "previous_token", "self", "broad"]
    first = np.zeros((10, 10))
    first[:, 0] = 1.0
    assert sc.score_attention(first[None, None, None], tokens).heads[0].label == "first_token"
    assert table.matrix("induction").shape == (1, 4)
    assert table.labelled("self") == [(0, 2)]


def test_induction_keys_cover_every_earlier_occurrence():
    keys = sc.induction_keys(np.array([[1, 2, 1, 3, 1]]))[0]
    assert set(np.flatnonzero(keys[4])) == {1, 3}   # token 1 occurred at 0 and 2
    assert not keys[:2].any() and not keys[3].any()


# --- the shipped model ----------------------------------------------------------------------------

def test_shipped_weights_are_small_and_match_the_recipe(shipped):
    assert DEFAULT_WEIGHTS.stat().st_size < 5 * 1024 * 1024
    assert shipped.config == DEFAULT_RECIPE.config
    payload = torch.load(DEFAULT_WEIGHTS, weights_only=True)
    assert payload["recipe"]["steps"] == DEFAULT_RECIPE.steps and payload["recipe"]["seed"] == DEFAULT_RECIPE.seed


def test_shipped_model_has_previous_token_and_induction_heads(shipped, held_out):
    table = score_model(shipped, held_out)
    assert table.best("previous_token", layer=0).previous_token >= 0.4
    assert table.best("induction", layer=1).induction >= 0.8
    assert table.labelled("previous_token") and table.labelled("induction")


def test_switching_off_induction_heads_breaks_copying(shipped, held_out):
    heads = score_model(shipped, held_out).labelled("induction")
    result = ablate(shipped, held_out, heads)
    assert result.loss_factor >= 10
    assert result.ablated.accuracy < result.base.accuracy - 0.5


def test_importance_and_pruning_curve(shipped, held_out):
    imp = importance(shipped, held_out)
    curve = pruning_curve(shipped, held_out, imp)
    n = shipped.config.n_layers * shipped.config.n_heads
    assert sorted(curve.order) == [(layer, head) for layer in range(2) for head in range(4)]
    assert len(curve.accuracy) == n + 1 and curve.accuracy[0] == pytest.approx(imp.base.accuracy)
    all_off = repeat_metrics(shipped, held_out, np.zeros((2, 4), dtype=np.float32))
    assert curve.accuracy[-1] == pytest.approx(all_off.accuracy)
    first = curve.order[0]
    single = repeat_metrics(shipped, held_out, mask_without(shipped, [first]))
    assert imp.loss_increase[first] == pytest.approx(single.loss - imp.base.loss)
    assert imp.loss_increase[first] == imp.loss_increase.min()


def test_save_load_round_trip(tmp_path):
    model = ToyTransformer(SMALL)
    save_model(model, tmp_path / "m.pt")
    again = load_model(tmp_path / "m.pt")
    ids = torch.from_numpy(held_out_batch(SMALL, 2).tokens)
    with torch.no_grad():
        assert torch.equal(model(ids).logits, again(ids).logits)


def test_missing_or_corrupt_weights_raise_lab_error(tmp_path, monkeypatch):
    monkeypatch.setattr(toy_weights, "DEFAULT_WEIGHTS", tmp_path / "absent.pt")
    with pytest.raises(LabError) as err:
        load_default()
    assert err.value.key == "toy_weights_missing"
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(LabError) as err:
        load_model(bad)
    assert err.value.key == "toy_weights_corrupt"
    wrong = tmp_path / "wrong.pt"
    torch.save({"config": SMALL.to_dict(), "state_dict": {}}, wrong)
    with pytest.raises(LabError) as err:
        load_model(wrong)
    assert err.value.key == "toy_weights_corrupt"


def test_heads_vs_accuracy_result_file():
    data = json.loads((ASSETS / "heads_vs_accuracy.json").read_text())
    assert data["command"] == COMMAND
    assert data["heads"] == list(HEADS)
    assert {r["n_heads"] for r in data["runs"]} == set(HEADS)
    assert len({r["n_params"] for r in data["runs"]}) == 1  # fixed d_model: same parameter count for every h
    for h in HEADS:
        accs = [r["accuracy"] for r in data["runs"] if r["n_heads"] == h]
        assert data["mean_accuracy"][str(h)] == pytest.approx(np.mean(accs))
        assert all(r["d_head"] * h == data["d_model"] for r in data["runs"] if r["n_heads"] == h)


# --- grouped-query attention in the toy model (issue 17 item 3) ------------------------------------

@pytest.mark.parametrize("g", [1, 2, 4])
def test_a_gqa_toy_model_is_the_numpy_cores_gqa(g):
    """n_kv_heads = g: W_K and W_V are g heads wide and each serves n_heads // g consecutive query heads, exactly
    as mha_core.multi_head_attention(n_kv_heads=g) computes it."""
    model = ToyTransformer(ToyConfig(n_heads=4, n_kv_heads=g, seed=5))
    cfg = model.config
    view = inspect_sequence(model, held_out_batch(cfg, 1).tokens[0])
    for layer in range(cfg.n_layers):
        w = layer_weights(model, layer)
        assert w.w_k.shape == w.w_v.shape == (cfg.d_model, g * cfg.d_head) and w.n_kv_heads == g
        trace = multi_head_attention(view.layer_inputs[layer].astype(np.float32), w.w_q, w.w_k, w.w_v, w.w_o,
                                     w.n_heads, n_kv_heads=w.n_kv_heads, causal=True)
        assert np.max(np.abs(trace.weights - view.attn[layer])) < 1e-5
    shared = {k: v for k, v in model.state_dict().items() if "c_attn" in k}
    assert all(v.shape == (cfg.d_model + 2 * g * cfg.d_head, cfg.d_model) for v in shared.values())


def test_the_default_toy_model_keeps_its_shape_and_a_bad_kv_count_is_refused():
    assert ToyConfig().kv_heads == ToyConfig().n_heads
    assert ToyTransformer(ToyConfig()).blocks[0].attn.c_attn.weight.shape == (3 * 64, 64)  # the shipped file loads
    for g in (0, 3):
        with pytest.raises(LabError) as info:
            ToyConfig(n_heads=4, n_kv_heads=g)
        assert info.value.key == "kv_divides"


def test_the_cli_trains_a_gqa_model_and_says_its_kv_cache(tmp_path, capsys):
    from mha_core.counts import kv_cache_bytes
    from mha_core.toy.__main__ import default_out, main

    out = tmp_path / "kv2.pt"
    assert main(["train", "--n-kv-heads", "2", "--out", str(out)]) == 0
    said = json.loads(capsys.readouterr().out)
    cfg = toy_weights.load_model(out).config
    assert cfg.kv_heads == said["n_kv_heads"] == 2 and said["n_heads"] == cfg.n_heads and said["attention"] == "GQA"
    mha = kv_cache_bytes(n_layers=cfg.n_layers, n_kv_heads=cfg.n_heads, d_head=cfg.d_head, seq_len=cfg.n_ctx,
                         bytes_per_value=4)
    assert said["kv_cache_bytes_full_context"] * cfg.n_heads // 2 == mha
    assert said["final_loss"] < 2.0  # it learned (chance is ln 64 = 4.2)
    assert default_out(None) == toy_weights.DEFAULT_WEIGHTS and default_out(2).name == "kv2.pt"
    assert main(["train", "--n-kv-heads", "3", "--out", str(tmp_path / "no.pt")]) == 2
    assert "n_kv_heads = 3" in capsys.readouterr().err and not (tmp_path / "no.pt").exists()

"""Generation with a KV cache (issue 17 item 4, core): the cached step equals a full recomputation, the cache grows
one row per token and K/V head, its bytes are mha_core.counts', sampling follows temperature and top-k."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
import torch

from mha_core import LabError
from mha_core.counts import kv_cache_bytes
from mha_core.toy import DEFAULT_RECIPE, ToyConfig, ToyTransformer, decode_step, generate, load_default, load_model
from mha_core.toy import generation as gen_core
from mha_core.toy.generation import BYTES_PER_VALUE

TOL = 1e-6


def _double(cfg: ToyConfig) -> ToyTransformer:
    return ToyTransformer(cfg).double().eval()


@pytest.mark.parametrize("g", [4, 2, 1])
@pytest.mark.parametrize("mlp", [False, True])
def test_each_cached_step_equals_the_full_recomputation(g, mlp):
    """float64: the logits and attention of position t from the cache = the model run on tokens 0..t."""
    model = _double(ToyConfig(n_heads=4, n_kv_heads=g, mlp=mlp, seed=7))
    gen = generate(model, [3, 9, 27], new_tokens=12, temperature=1.0, seed=1)
    tokens = gen.tokens
    assert len(tokens) == 15
    cache = None
    for t, step in enumerate(gen.steps):
        logits, cache, attn = decode_step(model, tokens[t], cache)
        with torch.no_grad():
            full = model(torch.tensor([tokens[: t + 1]]), return_attn=True)
        assert torch.max(torch.abs(logits - full.logits[0, -1])).item() < TOL
        np.testing.assert_allclose(attn, full.attn[0, :, :, -1, : t + 1].numpy(), atol=TOL)
        np.testing.assert_allclose(step.attn, attn, atol=TOL)
        assert step.token == tokens[t] and cache.length == t + 1
        assert all(k.shape == (g, t + 1, model.config.d_head) for k in cache.k + cache.v)


def test_the_cache_bytes_are_the_counts_and_shrink_with_fewer_kv_heads():
    for g in (4, 2, 1):
        model = _double(ToyConfig(n_heads=4, n_kv_heads=g))
        gen = generate(model, [1, 2], new_tokens=5, temperature=0)
        cfg = model.config
        for step in gen.steps:
            assert step.cache_bytes == kv_cache_bytes(n_layers=cfg.n_layers, n_kv_heads=g, d_head=cfg.d_head,
                                                      seq_len=step.cache_tokens, bytes_per_value=BYTES_PER_VALUE)
            assert step.cache_bytes == 2 * cfg.n_layers * g * cfg.d_head * step.cache_tokens * 4  # by hand


def test_the_shipped_model_continues_a_repeat_greedily():
    """The trained toy model's induction heads: after 'a b c d e a b', greedy decoding writes 'c d e'."""
    model = load_default()
    prompt = [10, 11, 12, 13, 14, 10, 11]
    gen = generate(model, prompt, new_tokens=3, temperature=0)
    assert gen.tokens[len(prompt):] == (12, 13, 14)


def test_temperature_top_k_and_seed():
    model = _double(ToyConfig(seed=2))
    a = generate(model, [5], new_tokens=10, temperature=1.0, seed=3)
    assert a.tokens == generate(model, [5], new_tokens=10, temperature=1.0, seed=3).tokens  # same seed
    top = generate(model, [5], new_tokens=10, temperature=1.0, top_k=2, seed=3)
    for step in top.steps:
        assert np.count_nonzero(step.probs) <= 2 and step.probs[step.next_token] > 0
        assert step.probs.sum() == pytest.approx(1.0)
    greedy = generate(model, [5], new_tokens=4, temperature=0)
    for step in greedy.steps:
        assert step.probs.max() == 1.0 and step.next_token == int(np.argmax(step.probs))
    hot, cold = (generate(model, [5], new_tokens=1, temperature=t).steps[0].probs for t in (5.0, 0.2))
    assert hot.max() < cold.max()  # a higher temperature flattens the distribution


@pytest.mark.parametrize("kwargs,key", [
    (dict(prompt=[], new_tokens=2), "toy_prompt_empty"),
    (dict(prompt=[1], new_tokens=0), "count_positive"),
    (dict(prompt=[1] * 20, new_tokens=5), "toy_context_full"),
    (dict(prompt=[1], new_tokens=2, temperature=-1.0), "toy_temperature"),
    (dict(prompt=[1], new_tokens=2, temperature=float("nan")), "toy_temperature"),
    (dict(prompt=[1], new_tokens=2, top_k=0), "count_positive"),
    (dict(prompt=[99], new_tokens=2), "toy_vocab_range"),
])
def test_bad_generation_requests_raise_translated_lab_errors(kwargs, key):
    model = ToyTransformer(ToyConfig())
    with pytest.raises(LabError) as info:
        generate(model, **kwargs)
    assert info.value.key == key


# --- the shipped GQA / MQA models and the page's stepping (issue 17 items 3 and 4) ------------------------

@pytest.mark.parametrize("g", [2, 1])
def test_the_shipped_gqa_and_mqa_weights_are_the_default_recipe_with_g_kv_heads(g):
    """assets/toy/kv2.pt and kv1.pt: small, and what ``python -m mha_core.toy train --n-kv-heads G`` writes."""
    from mha_core.toy.__main__ import default_out

    path = gen_core.variant_weights(g)
    assert path == default_out(g) and path.stat().st_size < 1024 * 1024
    model = load_model(path)
    assert model.config == replace(DEFAULT_RECIPE.config, n_kv_heads=g) and model.config.kv_heads == g
    payload = torch.load(path, weights_only=True)
    assert payload["recipe"]["steps"] == DEFAULT_RECIPE.steps and payload["recipe"]["seed"] == DEFAULT_RECIPE.seed
    assert model.blocks[0].attn.c_attn.weight.shape == (64 + 2 * g * 16, 64)  # W_K, W_V: g heads of 16


@pytest.mark.parametrize("g", [4, 2, 1])
def test_a_step_appends_one_row_per_layer_and_kv_head_and_its_bytes_are_the_counts(g):
    model = ToyTransformer(ToyConfig(n_heads=4, n_kv_heads=g, seed=3)).eval()
    cfg = model.config
    state = gen_core.read(model, [1, 2, 3])
    for t in range(4, 8):
        before = gen_core.cache_rows(state.cache)
        state = gen_core.extend(model, state, t)
        rows = gen_core.cache_rows(state.cache)
        assert rows.shape == (cfg.n_layers, g) and (rows == before + 1).all() and (rows == t).all()
        counted = kv_cache_bytes(n_layers=cfg.n_layers, n_kv_heads=g, d_head=cfg.d_head, seq_len=t,
                                 bytes_per_value=BYTES_PER_VALUE)
        measured = sum(x.numel() * x.element_size() for x in state.cache.k + state.cache.v)
        assert gen_core.cache_bytes(model, t) == counted == measured == state.cache.nbytes
        assert state.attn.shape == (cfg.n_layers, cfg.n_heads, t) and state.tokens[-1] == t
        np.testing.assert_allclose(state.attn.sum(-1), 1.0, atol=1e-6)


def test_reading_step_by_step_equals_generate_and_the_full_model():
    model = _double(ToyConfig(n_heads=4, n_kv_heads=2, seed=4))
    tokens = [5, 9, 2, 7, 5, 9]
    state = gen_core.read(model, tokens)
    with torch.no_grad():
        full = model(torch.tensor([tokens]), return_attn=True)
    assert torch.max(torch.abs(state.logits - full.logits[0, -1])).item() < TOL
    np.testing.assert_allclose(state.attn, full.attn[0, :, :, -1].numpy(), atol=TOL)


def test_query_head_i_reads_kv_head_i_over_h_by_g():
    """The grouping the page draws is the model's: a query head's weights equal those computed by hand from
    its own query and the K of K/V head i // (h / g)."""
    model = _double(ToyConfig(n_heads=4, n_kv_heads=2, seed=6))
    cfg = model.config
    assert [gen_core.kv_group(h, 4, 2) for h in range(4)] == [0, 0, 1, 1]
    assert [gen_core.kv_group(h, 4, 1) for h in range(4)] == [0] * 4
    assert [gen_core.kv_group(h, 4, 4) for h in range(4)] == [0, 1, 2, 3]
    state = gen_core.read(model, [3, 1, 4, 1, 5])
    x = model.wte.weight[[3, 1, 4, 1, 5]] + model.wpe.weight[:5]  # layer 0 reads the embeddings
    q, k, _ = model.blocks[0].attn.c_attn(x).detach().split(model.blocks[0].attn.split_sizes, dim=1)
    for h in range(cfg.n_heads):
        j = gen_core.kv_group(h, cfg.n_heads, cfg.kv_heads)
        qh, kj = q[-1, h * 16:(h + 1) * 16], k[:, j * 16:(j + 1) * 16]
        np.testing.assert_allclose(state.attn[0, h], torch.softmax(kj @ qh / 4.0, dim=0).numpy(), atol=TOL)


def test_top_k_one_is_argmax_and_temperature_zero_too():
    model = ToyTransformer(ToyConfig(seed=5)).eval()
    logits = gen_core.read(model, [7, 8, 9]).logits
    best = int(torch.argmax(logits))
    for seed in range(20):
        probs, token = gen_core.draw(logits, 1.5, 1, gen_core.step_seed(seed, 0))
        assert token == best and probs[best] == 1.0
    assert gen_core.draw(logits, 0.0, None, 1)[1] == best
    a, b = (gen_core.draw(logits, 1.0, None, gen_core.step_seed(3, s))[1] for s in (0, 0))
    assert a == b  # the same step of the same seed draws the same token


@pytest.mark.parametrize("text,key", [("", "toy_seq_empty"), ("a", "toy_seq_short"), ("a ?", "toy_seq_symbol"),
                                      ("99 1", "toy_seq_id"), ("a b " * 12, "toy_prompt_long")])
def test_a_bad_prompt_raises_a_translated_lab_error(text, key):
    with pytest.raises(LabError) as info:
        gen_core.prompt_ids(text, 24)
    assert info.value.key == key
    assert gen_core.prompt_ids(gen_core.DEFAULT_PROMPT, 24) == (20, 26, 22, 31, 27, 33, 20, 26)


def _perturbed(model: ToyTransformer, scale: float) -> ToyTransformer:
    """A copy of ``model`` with every weight moved by up to ``scale`` (seeded): a retrain on another CPU."""
    other = load_model(gen_core.variant_weights(model.config.n_kv_heads))
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in other.parameters():
            p.add_((torch.rand(p.shape, generator=gen) * 2 - 1) * scale)
    return other


@pytest.mark.parametrize("g", [2, 1])
def test_check_accepts_a_retrain_that_differs_in_the_last_bits(g, monkeypatch, capsys):
    """``train --check`` on another CPU: weights 2.2e-4 apart (measured: AVX-512 vs AVX2 kernels), the same
    behaviour: exit 0 and the JSON says so. Failed before: exit 1 on any weight difference."""
    import json

    import mha_core.toy.__main__ as cli

    shipped = load_model(cli.default_out(g))
    monkeypatch.setattr(cli, "train_recipe", lambda recipe: (_perturbed(shipped, 2.2e-4), _History()))
    monkeypatch.setattr(cli.torch, "set_num_threads", lambda n: None)  # main() sets 1 for its own process
    code = cli.main(["train", "--check", "--n-kv-heads", str(g)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["same"] and not out["identical"] and 0 < out["max_abs_diff"] <= 2.2e-4


def test_check_refuses_a_model_that_behaves_otherwise(monkeypatch, capsys):
    import json

    import mha_core.toy.__main__ as cli

    shipped = load_model(cli.default_out(2))
    monkeypatch.setattr(cli, "train_recipe", lambda recipe: (_perturbed(shipped, 5e-2), _History()))
    monkeypatch.setattr(cli.torch, "set_num_threads", lambda n: None)
    code = cli.main(["train", "--check", "--n-kv-heads", "2"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and not out["same"]


class _History:
    seconds, loss = 1.0, [0.5]

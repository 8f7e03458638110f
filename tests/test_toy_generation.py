"""Generation with a KV cache (issue 17 item 4, core): the cached step equals a full recomputation, the cache grows
one row per token and K/V head, its bytes are mha_core.counts', sampling follows temperature and top-k."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from mha_core import LabError
from mha_core.counts import kv_cache_bytes
from mha_core.toy import ToyConfig, ToyTransformer, decode_step, generate, load_default
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

"""The numpy core against PyTorch's own attention, in float64, on many shapes."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from mha_core import LabError, merge_heads, multi_head_attention, split_heads

TOL = 1e-6


def _weights(rng, n, d_model, n_heads, d_head, n_kv_heads):
    x = rng.standard_normal((n, d_model))
    w_q = rng.standard_normal((d_model, n_heads * d_head)) / np.sqrt(d_model)
    w_k = rng.standard_normal((d_model, n_kv_heads * d_head)) / np.sqrt(d_model)
    w_v = rng.standard_normal((d_model, n_kv_heads * d_head)) / np.sqrt(d_model)
    w_o = rng.standard_normal((n_heads * d_head, d_model)) / np.sqrt(n_heads * d_head)
    return x, w_q, w_k, w_v, w_o


MHA_SHAPES = [(1, 4, 1), (5, 8, 2), (7, 16, 4), (12, 64, 8), (3, 96, 12), (20, 30, 5), (9, 512, 8)]


@pytest.mark.parametrize("n,d_model,n_heads", MHA_SHAPES)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_matches_torch_multihead_attention(n, d_model, n_heads, causal, bias):
    rng = np.random.default_rng(n * 1000 + d_model + n_heads)
    x, w_q, w_k, w_v, w_o = _weights(rng, n, d_model, n_heads, d_model // n_heads, n_heads)
    module = torch.nn.MultiheadAttention(d_model, n_heads, bias=bias, batch_first=True, dtype=torch.float64)
    biases = {}
    with torch.no_grad():
        # torch stores Linear weights as (out, in): the transpose of the row-vector convention.
        module.in_proj_weight.copy_(torch.from_numpy(np.concatenate([w_q.T, w_k.T, w_v.T])))
        module.out_proj.weight.copy_(torch.from_numpy(w_o.T))
        if bias:
            b = rng.standard_normal(3 * d_model)
            b_o = rng.standard_normal(d_model)
            module.in_proj_bias.copy_(torch.from_numpy(b))
            module.out_proj.bias.copy_(torch.from_numpy(b_o))
            biases = dict(b_q=b[:d_model], b_k=b[d_model:2 * d_model], b_v=b[2 * d_model:], b_o=b_o)
        xt = torch.from_numpy(x)[None]
        mask = torch.ones(n, n, dtype=torch.bool).triu(1) if causal else None  # True = may NOT attend
        out, weights = module(xt, xt, xt, attn_mask=mask, need_weights=True, average_attn_weights=False)
    trace = multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, causal=causal, **biases)
    assert np.max(np.abs(trace.output - out[0].numpy())) < TOL
    assert np.max(np.abs(trace.weights - weights[0].numpy())) < TOL
    assert trace.output.dtype == np.float64


GQA_SHAPES = [(6, 32, 4, 8, 2), (10, 64, 8, 8, 1), (4, 48, 6, 8, 3), (11, 128, 16, 8, 4), (8, 40, 4, 16, 4)]


@pytest.mark.parametrize("n,d_model,n_heads,d_head,n_kv_heads", GQA_SHAPES)
@pytest.mark.parametrize("causal", [False, True])
def test_matches_torch_sdpa_with_gqa(n, d_model, n_heads, d_head, n_kv_heads, causal):
    """d_head is free (h·d_head ≠ d_model here for some shapes), and K/V heads are shared."""
    rng = np.random.default_rng(n + d_model + n_heads + n_kv_heads)
    x, w_q, w_k, w_v, w_o = _weights(rng, n, d_model, n_heads, d_head, n_kv_heads)
    trace = multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, n_kv_heads=n_kv_heads, causal=causal)

    def heads(a, h):  # (n, h*d) -> (1, h, n, d), written independently of split_heads
        return torch.from_numpy(a).view(n, h, d_head).permute(1, 0, 2)[None]

    xt = torch.from_numpy(x)
    q = heads((xt @ torch.from_numpy(w_q)).numpy(), n_heads)
    k = heads((xt @ torch.from_numpy(w_k)).numpy(), n_kv_heads)
    v = heads((xt @ torch.from_numpy(w_v)).numpy(), n_kv_heads)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    concat = out[0].permute(1, 0, 2).reshape(n, n_heads * d_head)
    expected = (concat @ torch.from_numpy(w_o)).numpy()
    assert np.max(np.abs(trace.concat - concat.numpy())) < TOL
    assert np.max(np.abs(trace.output - expected)) < TOL
    # the weights, recomputed in torch with repeat_interleave for the K/V groups
    kk = k.repeat_interleave(n_heads // n_kv_heads, dim=1)
    s = (q @ kk.transpose(-1, -2)) / d_head**0.5
    if causal:
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    assert np.max(np.abs(trace.weights - torch.softmax(s, -1)[0].numpy())) < TOL


def test_trace_exposes_every_intermediate_with_consistent_shapes():
    rng = np.random.default_rng(0)
    n, d_model, h, d, g = 5, 24, 6, 4, 3
    trace = multi_head_attention(*_weights(rng, n, d_model, h, d, g), h, n_kv_heads=g, causal=True)
    assert trace.q.shape == (n, h * d) and trace.k.shape == (n, g * d) and trace.v.shape == (n, g * d)
    assert trace.q_heads.shape == (h, n, d) and trace.k_heads.shape == (g, n, d)
    assert trace.scores.shape == trace.weights.shape == (h, n, n)
    assert trace.head_outputs.shape == (h, n, d) and trace.concat.shape == (n, h * d)
    assert trace.output.shape == (n, d_model)
    np.testing.assert_allclose(trace.weights.sum(-1), 1.0)
    assert np.all(trace.weights[:, np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] == 0)
    np.testing.assert_allclose(trace.scores, trace.raw_scores / np.sqrt(d))
    assert trace.kv_head_of(5) == 2 and trace.group_size == 2
    with pytest.raises(AttributeError):
        trace.output = None  # frozen


def test_split_and_merge_are_inverses():
    rng = np.random.default_rng(1)
    t = rng.standard_normal((7, 12))
    for h in (1, 2, 3, 4, 6, 12):
        heads = split_heads(t, h)
        assert heads.shape == (h, 7, 12 // h)
        np.testing.assert_array_equal(heads[1 % h], t[:, (1 % h) * (12 // h):(1 % h + 1) * (12 // h)])
        np.testing.assert_array_equal(merge_heads(heads), t)


def _ok():
    return _weights(np.random.default_rng(2), 4, 8, 2, 4, 2)


@pytest.mark.parametrize(
    "change,key",
    [
        (lambda a: {**a, "n_heads": 3}, "q_divides"),
        (lambda a: {**a, "n_kv_heads": 3, "n_heads": 2}, "kv_divides"),
        (lambda a: {**a, "x": a["x"][:, :7]}, "w_rows"),
        (lambda a: {**a, "w_k": a["w_k"][:, :6]}, "kv_width"),
        (lambda a: {**a, "w_o": a["w_o"][:6]}, "o_rows"),
        (lambda a: {**a, "w_o": a["w_o"][:, :5]}, "o_cols"),
        (lambda a: {**a, "x": a["x"][0]}, "x_ndim"),
        (lambda a: {**a, "x": np.where(np.eye(4, 8, dtype=bool), np.nan, a["x"])}, "not_finite"),
        (lambda a: {**a, "w_v": np.full_like(a["w_v"], np.inf)}, "not_finite"),
        (lambda a: {**a, "x": a["x"][:0]}, "x_empty"),
        (lambda a: {**a, "n_heads": 0}, "heads_positive"),
    ],
)
def test_bad_shapes_raise_a_readable_value_error(change, key):
    x, w_q, w_k, w_v, w_o = _ok()
    args = change(dict(x=x, w_q=w_q, w_k=w_k, w_v=w_v, w_o=w_o, n_heads=2, n_kv_heads=None))
    with pytest.raises(ValueError) as info:
        multi_head_attention(args.pop("x"), args.pop("w_q"), args.pop("w_k"), args.pop("w_v"), args.pop("w_o"),
                             args.pop("n_heads"), n_kv_heads=args.pop("n_kv_heads"))
    assert isinstance(info.value, LabError) and info.value.key == key
    assert "broadcast" not in str(info.value) and len(str(info.value)) > 20


def test_bad_bias_is_explained():
    x, w_q, w_k, w_v, w_o = _ok()
    with pytest.raises(LabError, match="b_q"):
        multi_head_attention(x, w_q, w_k, w_v, w_o, 2, b_q=np.zeros(3))

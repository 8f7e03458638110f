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
    assert trace.group_size == 2
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


# --- cross-attention: queries from x, keys and values from x_kv ---

CROSS_SHAPES = [(1, 3, 4, 1, 4), (5, 7, 8, 2, 8), (4, 9, 16, 4, 12), (12, 5, 64, 8, 64), (3, 11, 30, 5, 20)]


@pytest.mark.parametrize("n,m,d_model,n_heads,d_kv", CROSS_SHAPES)
@pytest.mark.parametrize("bias", [False, True])
def test_cross_attention_matches_torch_multihead_attention(n, m, d_model, n_heads, d_kv, bias):
    """MultiheadAttention(query, key, value) with query ≠ key = value; d_kv ≠ d_model is torch's kdim/vdim."""
    rng = np.random.default_rng(n * 100 + m * 10 + d_kv)
    d_head = d_model // n_heads
    x, w_q, _, _, w_o = _weights(rng, n, d_model, n_heads, d_head, n_heads)
    x_kv = rng.standard_normal((m, d_kv))
    w_k = rng.standard_normal((d_kv, d_model)) / np.sqrt(d_kv)
    w_v = rng.standard_normal((d_kv, d_model)) / np.sqrt(d_kv)
    module = torch.nn.MultiheadAttention(d_model, n_heads, bias=bias, kdim=d_kv, vdim=d_kv, batch_first=True,
                                         dtype=torch.float64)
    biases = {}
    with torch.no_grad():
        if d_kv == d_model:  # torch keeps one packed in_proj_weight when kdim = vdim = embed_dim
            module.in_proj_weight.copy_(torch.from_numpy(np.concatenate([w_q.T, w_k.T, w_v.T])))
        else:
            module.q_proj_weight.copy_(torch.from_numpy(w_q.T))
            module.k_proj_weight.copy_(torch.from_numpy(w_k.T))
            module.v_proj_weight.copy_(torch.from_numpy(w_v.T))
        module.out_proj.weight.copy_(torch.from_numpy(w_o.T))
        if bias:
            b, b_o = rng.standard_normal(3 * d_model), rng.standard_normal(d_model)
            module.in_proj_bias.copy_(torch.from_numpy(b))
            module.out_proj.bias.copy_(torch.from_numpy(b_o))
            biases = dict(b_q=b[:d_model], b_k=b[d_model:2 * d_model], b_v=b[2 * d_model:], b_o=b_o)
        kv = torch.from_numpy(x_kv)[None]
        out, weights = module(torch.from_numpy(x)[None], kv, kv, need_weights=True, average_attn_weights=False)
    trace = multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, x_kv=x_kv, **biases)
    assert trace.cross and trace.weights.shape == (n_heads, n, m) and trace.k_heads.shape == (n_heads, m, d_head)
    assert np.max(np.abs(trace.output - out[0].numpy())) < TOL
    assert np.max(np.abs(trace.weights - weights[0].numpy())) < TOL


@pytest.mark.parametrize("n,m,d_model,n_heads,d_head,n_kv_heads", [(6, 4, 32, 4, 8, 2), (3, 10, 64, 8, 8, 1),
                                                                  (7, 7, 48, 6, 8, 3)])
def test_cross_attention_with_gqa_matches_torch_sdpa(n, m, d_model, n_heads, d_head, n_kv_heads):
    rng = np.random.default_rng(n + m + n_kv_heads)
    x, w_q, w_k, w_v, w_o = _weights(rng, n, d_model, n_heads, d_head, n_kv_heads)
    x_kv = rng.standard_normal((m, d_model))
    trace = multi_head_attention(x, w_q, w_k, w_v, w_o, n_heads, n_kv_heads=n_kv_heads, x_kv=x_kv)

    def heads(a, rows, h):  # (rows, h*d) -> (1, h, rows, d), written independently of split_heads
        return torch.from_numpy(a).view(rows, h, d_head).permute(1, 0, 2)[None]

    q = heads(x @ w_q, n, n_heads)
    k, v = heads(x_kv @ w_k, m, n_kv_heads), heads(x_kv @ w_v, m, n_kv_heads)
    out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    expected = out[0].permute(1, 0, 2).reshape(n, n_heads * d_head).numpy() @ w_o
    assert np.max(np.abs(trace.output - expected)) < TOL
    s = (q @ k.repeat_interleave(n_heads // n_kv_heads, dim=1).transpose(-1, -2)) / d_head**0.5
    assert np.max(np.abs(trace.weights - torch.softmax(s, -1)[0].numpy())) < TOL


def test_self_attention_is_cross_attention_of_x_with_itself_and_none_keeps_it():
    rng = np.random.default_rng(3)
    x, w_q, w_k, w_v, w_o = _weights(rng, 5, 16, 4, 4, 2)
    plain = multi_head_attention(x, w_q, w_k, w_v, w_o, 4, n_kv_heads=2)
    assert plain.x_kv is None and not plain.cross
    np.testing.assert_array_equal(multi_head_attention(x, w_q, w_k, w_v, w_o, 4, n_kv_heads=2, x_kv=None).output,
                                  plain.output)
    same = multi_head_attention(x, w_q, w_k, w_v, w_o, 4, n_kv_heads=2, x_kv=x.copy())
    np.testing.assert_array_equal(same.output, plain.output)
    np.testing.assert_array_equal(same.weights, plain.weights)


@pytest.mark.parametrize(
    "x_kv,w_k_rows,causal,key",
    [
        (np.zeros(8), None, False, "x_kv_ndim"),
        (np.zeros((0, 8)), None, False, "x_kv_empty"),
        (np.full((3, 8), np.nan), None, False, "not_finite"),
        (np.zeros((3, 8)), None, True, "causal_cross"),
        (np.zeros((3, 6)), None, False, "kv_rows"),
        (np.zeros((3, 8)), 5, False, "kv_rows"),
    ],
)
def test_bad_cross_attention_inputs_raise_a_readable_lab_error(x_kv, w_k_rows, causal, key):
    x, w_q, w_k, w_v, w_o = _ok()
    if w_k_rows is not None:
        w_k = w_k[:w_k_rows]
    with pytest.raises(LabError) as info:
        multi_head_attention(x, w_q, w_k, w_v, w_o, 2, causal=causal, x_kv=x_kv)
    assert info.value.key == key and len(str(info.value)) > 20

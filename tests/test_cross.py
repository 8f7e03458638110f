"""The cross-attention lesson's core (mha_core.cross): shapes, the alignment heads, the masks, padding, and
agreement with torch.nn.MultiheadAttention(query=target, key=source, value=source)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from mha_core import cross
from mha_core.attention import multi_head_attention
from mha_core.charts.cross import MASKED_FILL, masked_map
from mha_core.errors import LabError
from mha_core.inputs import embed, random_weights

TOL = 1e-6
DEFAULT = cross.PAIRS[0]


def _torch_mha(lesson_or_weights, n_heads: int, d_model: int) -> torch.nn.MultiheadAttention:
    """A float64 MultiheadAttention holding the same W_Q, W_K, W_V, W_O (torch stores their transposes)."""
    w = lesson_or_weights
    module = torch.nn.MultiheadAttention(d_model, n_heads, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        module.in_proj_weight.copy_(torch.from_numpy(np.concatenate([w.w_q.T, w.w_k.T, w.w_v.T])))
        module.out_proj.weight.copy_(torch.from_numpy(w.w_o.T))
    return module


@pytest.mark.parametrize("pair", cross.PAIRS, ids=[p.target for p in cross.PAIRS])
@pytest.mark.parametrize("n_heads", cross.HEAD_CHOICES)
def test_weights_are_n_tgt_by_n_src_rows_sum_to_one_and_equal_torch(pair, n_heads):
    lesson = cross.build_lesson(pair.source, pair.target, n_heads)
    n, m = lesson.n_tgt, lesson.n_src
    tr = lesson.trace
    assert tr.cross and tr.weights.shape == (n_heads, n, m) and tr.output.shape == (n, cross.D_MODEL)
    assert tr.q.shape == (n, cross.D_MODEL) and tr.k.shape == tr.v.shape == (m, cross.D_MODEL)
    assert np.allclose(tr.weights.sum(axis=-1), 1.0)
    module = _torch_mha(lesson.weights, n_heads, cross.D_MODEL)
    with torch.no_grad():
        query, kv = torch.from_numpy(lesson.x_tgt)[None], torch.from_numpy(lesson.x_src)[None]
        out, weights = module(query, kv, kv, need_weights=True, average_attn_weights=False)
    assert np.max(np.abs(tr.output - out[0].numpy())) < TOL
    assert np.max(np.abs(tr.weights - weights[0].numpy())) < TOL


def test_the_default_pair_is_not_square_and_not_one_to_one():
    lesson = cross.build_lesson(DEFAULT.source, DEFAULT.target, 4)
    assert lesson.n_tgt != lesson.n_src
    assert any(len(row) > 1 for row in lesson.links), "one target word draws on several source words"
    assert any(not row for row in lesson.links), "a target word with no counterpart (an article)"
    firsts = [row[0] for row in lesson.links if row]
    assert firsts != sorted(firsts) or any(len(row) > 1 for row in lesson.links)


@pytest.mark.parametrize("pair", cross.PAIRS, ids=[p.target for p in cross.PAIRS])
def test_alignment_heads_put_their_largest_weight_on_the_aligned_source_word(pair):
    lesson = cross.build_lesson(pair.source, pair.target, 8)
    kinds = lesson.weights.head_kinds
    heads = [i for i, k in enumerate(kinds) if k == "align"]
    assert len(heads) == 2
    for head in heads:
        w = lesson.trace.weights[head]
        for i, row in enumerate(lesson.links):
            if row:
                assert int(w[i].argmax()) in row
                assert w[i, list(row)].sum() > 0.99                     # all of it on the aligned words
                assert np.allclose(w[i, list(row)], 1 / len(row), atol=1e-3)   # shared evenly among them
            else:
                assert np.allclose(w[i], 1 / lesson.n_src)               # no counterpart: spread evenly


def test_order_differs_so_the_position_head_misses_where_the_align_head_hits():
    pair = cross.PAIRS[1]  # 他明天要去北京。 -> He will go to Beijing tomorrow.
    lesson = cross.build_lesson(pair.source, pair.target, 4)
    t = lesson.target.tokens.index("tomorrow")
    s = lesson.source.tokens.index("明天")
    align, position = (lesson.weights.head_kinds.index(k) for k in ("align", "position"))
    assert int(lesson.trace.weights[align, t].argmax()) == s
    assert int(lesson.trace.weights[position, t].argmax()) != s


def test_broad_and_end_heads():
    lesson = cross.build_lesson(DEFAULT.source, DEFAULT.target, 4)
    kinds = lesson.weights.head_kinds
    assert np.allclose(lesson.trace.weights[kinds.index("broad")], 1 / lesson.n_src)
    end = lesson.source.tokens.index("。")
    assert (lesson.trace.weights[kinds.index("end")].argmax(axis=1) == end).all()


def test_a_pair_with_no_dictionary_word_falls_back_to_random_weights():
    lesson = cross.build_lesson("你好", "hello", 4)
    assert lesson.weights.mode == "random" and lesson.weights.head_kinds is None and lesson.found == 0
    assert lesson.trace.weights.shape == (4, 1, 1)


def test_edited_pairs_use_the_dictionary_and_case_does_not_matter():
    lesson = cross.build_lesson("狗坐在椅子上。", "THE DOG SAT ON THE CHAIR.", 2)
    assert lesson.weights.mode == "illustrative" and lesson.found == 5
    w = lesson.trace.weights[0]
    assert lesson.source.tokens[int(w[lesson.target.tokens.index("DOG")].argmax())] == "狗"


@pytest.mark.parametrize(("source", "target", "key"), [("", "The cat.", "cross_source_empty"),
                                                       ("猫。", "   ", "cross_target_empty")])
def test_an_empty_sentence_is_a_translated_error(source, target, key):
    with pytest.raises(LabError) as err:
        cross.build_lesson(source, target, 4)
    assert err.value.key == key


def test_heads_must_divide_d_model():
    with pytest.raises(LabError) as err:
        cross.build_lesson(DEFAULT.source, DEFAULT.target, 3)
    assert err.value.key == "h_divides"


def test_long_sentences_are_cut_to_the_token_limit():
    lesson = cross.build_lesson("猫" * 3, " ".join(["cat"] * 40), 4)
    assert lesson.target.dropped == 40 - lesson.n_tgt and lesson.trace.weights.shape[1] == lesson.n_tgt


# --- masks ---------------------------------------------------------------------------------------------------------

def test_causal_self_has_zeros_above_the_diagonal_and_cross_and_encoder_have_no_structural_zeros():
    lesson = cross.build_lesson(DEFAULT.source, DEFAULT.target, 4)
    views = cross.mask_views(lesson)
    n, m = lesson.n_tgt, lesson.n_src
    dec = views.decoder_self.weights
    assert dec.shape == (4, n, n)
    assert (dec[:, ~np.tril(np.ones((n, n), bool))] == 0).all()
    assert (dec[:, np.tril(np.ones((n, n), bool))] > 0).all()
    assert views.cross.weights.shape == (4, n, m) and (views.cross.weights > 0).all()
    assert views.encoder_self.weights.shape == (4, m, m) and (views.encoder_self.weights > 0).all()
    assert views.cross.mask is None and views.encoder_self.mask is None


def test_the_core_refuses_a_causal_mask_on_cross_attention():
    lesson = cross.build_lesson(DEFAULT.source, DEFAULT.target, 4)
    assert cross.causal_cross_refusal(lesson).key == "causal_cross"


def test_padding_mask_marks_the_real_tokens():
    assert cross.padding_mask([3, 1], 4).tolist() == [[True, True, True, False], [True, False, False, False]]


def test_padding_keys_get_weight_zero_and_real_rows_are_unchanged():
    lesson = cross.build_lesson(DEFAULT.source, DEFAULT.target, 4)
    pad = cross.padding_demo(lesson, DEFAULT.source)
    b = pad.padded
    keys = pad.key_valid[b]
    assert (~keys).any() and (~pad.query_valid[b]).any(), "the padded pair has padding on both sides"
    assert (pad.encoder_self[b][..., ~keys] == 0).all() and (pad.cross[b][..., ~keys] == 0).all()
    assert (pad.cross[b][..., keys] > 0).all()
    assert np.allclose(pad.cross.sum(axis=-1), 1.0)
    # the padded pair's real rows equal cross-attention on the unpadded sentences (same random weights)
    w = cross.demo_weights(cross.D_MODEL, 4)
    src, tgt = pad.sources[b].tokens, pad.targets[b].tokens
    alone = multi_head_attention(embed(tgt, cross.D_MODEL), w.w_q, w.w_k, w.w_v, w.w_o, 4,
                                 x_kv=embed(src, cross.D_MODEL))
    assert np.allclose(pad.cross[b][:, : len(tgt), : len(src)], alone.weights, atol=TOL)
    assert 0 < pad.unmasked_pad_share < 1


def test_padded_attention_equals_torch_with_key_padding_mask():
    rng = np.random.default_rng(3)
    d, h = 16, 4
    w = random_weights(d, h, d // h, 5)
    lengths_src, lengths_tgt = [5, 3], [4, 2]
    x_src = cross.pad_rows([rng.standard_normal((k, d)) for k in lengths_src], 5)
    x_tgt = cross.pad_rows([rng.standard_normal((k, d)) for k in lengths_tgt], 4)
    keys = cross.padding_mask(lengths_src, 5)
    weights, out = cross.padded_attention(x_tgt, w, h, keys, x_kv=x_src)
    enc_w, enc_out = cross.padded_attention(x_src, w, h, keys)
    module = _torch_mha(w, h, d)
    with torch.no_grad():
        kv, pad = torch.from_numpy(x_src), torch.from_numpy(~keys)       # torch: True = do not attend
        t_out, t_w = module(torch.from_numpy(x_tgt), kv, kv, key_padding_mask=pad, average_attn_weights=False)
        e_out, e_w = module(kv, kv, kv, key_padding_mask=pad, average_attn_weights=False)
    assert np.max(np.abs(weights - t_w.numpy())) < TOL and np.max(np.abs(out - t_out.numpy())) < TOL
    assert np.max(np.abs(enc_w - e_w.numpy())) < TOL and np.max(np.abs(enc_out - e_out.numpy())) < TOL
    loose, _ = cross.padded_attention(x_tgt, w, h, keys, x_kv=x_src, masked=False)
    assert (loose[1][..., ~keys[1]] > 0).all()                            # without the mask the pads take weight


def test_the_companion_pads_both_sides_of_every_example():
    for pair in cross.PAIRS:
        lesson = cross.build_lesson(pair.source, pair.target, 2)
        pad = cross.padding_demo(lesson, pair.source)
        b = pad.padded
        assert (~pad.key_valid[b]).any() and (~pad.query_valid[b]).any()
        assert pad.texts[0] == pair.source


def test_model_families_match_the_papers():
    fam = {name: (enc, dec, x) for name, enc, dec, x in cross.MODEL_FAMILIES}
    assert fam == {"encdec": (True, True, True), "dec": (False, True, False), "enc": (True, False, False)}


def test_masked_map_greys_masked_cells_and_fades_ignored_rows():
    m = np.array([[1.0, 0.0], [0.5, 0.5], [0.3, 0.7]])
    chart = masked_map(m, ["a", "b", "c"], ["x", "y"], np.array([[True, False], [True, True], [True, True]]),
                       ignored_rows=[False, False, True], states=("o", "m", "i"))
    spec = chart.to_dict(validate=True)
    assert spec["encoding"]["color"]["condition"]["value"] == MASKED_FILL
    df = chart.data
    assert df["state"].tolist() == ["o", "m", "o", "o", "i", "i"] and df["masked"].tolist() == [0, 1, 0, 0, 0, 0]
    assert df["ignored"].tolist() == [0, 0, 0, 0, 1, 1]

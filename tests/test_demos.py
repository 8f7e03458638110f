"""The lesson pages' demonstrations: each claim asserted from numbers the core computes."""

from __future__ import annotations

import numpy as np
import pytest

from mha_core import LabError
from mha_core.demos import emergence, ensemble_check, one_head, score_ranks, single_head, two_targets


@pytest.mark.parametrize("d_model,h", [(32, 4), (64, 8), (48, 3), (64, 1)])
def test_a_heads_q_is_a_column_block_of_one_projection(d_model, h):
    check = ensemble_check("the cat sat on the mat", d_model, h)
    assert len(check.max_diff_per_head) == h and max(check.max_diff_per_head) < 1e-12
    assert check.inputs_identical and check.params_multi == check.params_single == 4 * d_model * d_model


@pytest.mark.parametrize("d_model,n", [(64, 24), (128, 40), (32, 10)])
def test_score_matrix_rank_is_limited_by_d_head(d_model, n):
    points = score_ranks(d_model, n)
    assert [p.n_heads for p in points] == [h for h in range(1, min(d_model, 64) + 1) if d_model % h == 0]
    for p in points:
        assert p.d_head * p.n_heads == d_model
        assert p.rank <= p.d_head and p.rank <= n
        assert p.rank == min(n, p.d_head)          # random weights reach the bound
    assert any(p.rank < n for p in points)         # too many heads: some patterns become impossible


@pytest.mark.parametrize("sentence", ["The cat that chased the dog was tired .", "小猫追着球跑，因为它很开心。"])
def test_one_softmax_row_cannot_hold_two_targets_but_two_heads_can(sentence):
    demo = two_targets(sentence)
    a, b = demo.targets
    assert demo.one_head[a] < 0.7 and demo.one_head[b] < 0.7      # the single head splits its weight
    assert demo.one_head[a] + demo.one_head[b] > 0.7
    assert demo.two_heads[0, a] > 0.8 and demo.two_heads[1, b] > 0.8
    assert demo.recover_two < 0.1 < demo.recover_one


def test_short_sentences_are_explained():
    with pytest.raises(LabError) as info:
        two_targets("hi there")
    assert info.value.key == "why_short"


def test_one_head_steps_match_the_formula():
    head = single_head("the cat sat on the mat", "previous")
    step = one_head(head.q, head.k, head.v, query=3)
    d = head.q.shape[1]
    expected = np.exp(head.k @ head.q[3] / np.sqrt(d))
    expected /= expected.sum()
    np.testing.assert_allclose(step.weights, expected)
    np.testing.assert_allclose(step.output, expected @ head.v)
    assert int(np.argmax(step.weights)) == 2                     # the previous-word head looks one back
    sharper = one_head(head.q, head.k, head.v, query=3, temperature=0.25)
    assert sharper.weights.max() > step.weights.max()


def test_roles_emerge_from_random_initialisation():
    shots = emergence(steps=200, every=50, n_seqs=32)
    first, last = shots[0], shots[-1]
    assert first.induction[-1].max() < 0.3 and first.previous_token[0].max() < 0.3
    assert last.induction[-1].max() > 0.8 and last.previous_token[0].max() > 0.4
    assert last.loss < first.loss / 10

"""Head similarity (issue 17 item 6, core): Jensen–Shannon distances between heads checked against a direct
computation from the definition (KL divergences to the midpoint), the grouping, the entropy, bad inputs."""

from __future__ import annotations

import numpy as np
import pytest

from mha_core import LabError
from mha_core.attention import causal_mask, softmax
from mha_core.head_similarity import JS_MAX, group_heads, head_entropy, js_distances


def _kl(p: np.ndarray, q: np.ndarray) -> float:
    keep = p > 0
    return float(np.sum(p[keep] * np.log(p[keep] / q[keep])))


def _js_by_definition(a: np.ndarray, b: np.ndarray) -> float:
    """mean over queries of sqrt(½ KL(p‖m) + ½ KL(q‖m)), m = (p + q)/2: written from the definition, loop by loop."""
    out = []
    for p, q in zip(a, b, strict=True):
        m = (p + q) / 2
        out.append(np.sqrt(max(0.0, 0.5 * _kl(p, m) + 0.5 * _kl(q, m))))
    return float(np.mean(out))


def _random_heads(rng, h=6, n=7, causal=True):
    s = rng.standard_normal((h, n, n)) * 3
    return softmax(np.where(causal_mask(n), s, -np.inf) if causal else s)


def test_distances_equal_the_definition_and_are_a_symmetric_table():
    attn = _random_heads(np.random.default_rng(0))
    d = js_distances(attn)
    for i in range(attn.shape[0]):
        for j in range(attn.shape[0]):
            assert d[i, j] == pytest.approx(_js_by_definition(attn[i], attn[j]) if i != j else 0.0, abs=1e-12)
    np.testing.assert_array_equal(d, d.T)
    assert np.all(d >= 0) and np.all(d <= JS_MAX + 1e-12)


def test_identical_heads_are_at_0_and_disjoint_ones_at_the_maximum():
    n = 5
    itself = np.eye(n)
    next_one = np.roll(np.eye(n), 1, axis=1)  # row i looks at key i+1 (mod n): no row shares a key with itself
    d = js_distances(np.stack([itself, itself, next_one]))
    assert d[0, 1] == 0.0
    assert d[0, 2] == pytest.approx(_js_by_definition(itself, next_one))
    assert d[0, 2] == pytest.approx(JS_MAX)


def test_heads_that_behave_alike_are_grouped_and_ordered_side_by_side():
    n, rng = 8, np.random.default_rng(1)
    prev = np.eye(n, k=-1)
    prev[0, 0] = 1.0
    uniform = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    noisy = [softmax(np.log(base + 1e-9) + 0.05 * rng.standard_normal((n, n))) for base in (prev, uniform, prev,
                                                                                            uniform)]
    attn = np.stack(noisy)  # heads 0 and 2 look back one token, 1 and 3 spread over the past
    g = group_heads(js_distances(attn), threshold=0.2)
    assert set(g.groups) == {(0, 2), (1, 3)}
    order = list(g.order)
    assert abs(order.index(0) - order.index(2)) == 1 and abs(order.index(1) - order.index(3)) == 1
    assert sorted(order) == [0, 1, 2, 3]
    assert group_heads(js_distances(attn), threshold=1.0).groups == ((0, 1, 2, 3),)
    assert len(group_heads(js_distances(attn), threshold=0.0).groups) == 4


def test_entropy_is_0_for_a_one_hot_head_and_ln_n_for_a_uniform_one():
    n = 6
    one_hot = np.eye(n)
    uniform = np.full((n, n), 1 / n)
    np.testing.assert_allclose(head_entropy(np.stack([one_hot, uniform])), [0.0, np.log(n)])


@pytest.mark.parametrize("attn,key", [
    (np.ones((3, 3)) / 3, "attn_shape"),
    (np.ones((2, 3, 3)), "attn_rows"),
    (np.full((1, 2, 2), np.nan), "attn_rows"),
])
def test_bad_attention_is_a_translated_lab_error(attn, key):
    with pytest.raises(LabError) as info:
        js_distances(attn)
    assert info.value.key == key


def test_a_bad_distance_table_is_a_translated_lab_error():
    with pytest.raises(LabError) as info:
        group_heads(np.zeros((2, 3)), 0.1)
    assert info.value.key == "dist_shape"


def test_single_precision_and_query_blocks_stay_within_1e4_of_the_definition():
    """n > QUERY_BLOCK, so several blocks of queries add up; float32 is what the real-model page uses (faster)."""
    from mha_core.head_similarity import QUERY_BLOCK

    n = QUERY_BLOCK * 2 + 3
    attn = _random_heads(np.random.default_rng(2), h=5, n=n, causal=False)
    attn[4] = softmax(np.log(attn[0]) + 1e-3 * np.random.default_rng(3).standard_normal((n, n)))  # nearly head 0
    exact = js_distances(attn)
    fast = js_distances(attn, np.float32)
    for i, j in [(0, 1), (2, 3), (0, 4)]:
        assert exact[i, j] == pytest.approx(_js_by_definition(attn[i], attn[j]), abs=1e-12)
        assert fast[i, j] == pytest.approx(exact[i, j], abs=1e-4)
    np.testing.assert_array_equal(fast, fast.T)
    assert np.all(np.diag(fast) == 0.0)

"""Item analysis and normalized gain against independent computations: pandas' corr/var, exact fractions by hand,
and the published figures they should reproduce."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from mha_core.quiz.analysis import (
    Flag,
    cronbach_alpha,
    distractor_counts,
    item_analysis,
    matched_gains,
    normalized_gain,
    response_times,
)

RNG = np.random.default_rng(27)
# 40 students × 6 items, 0/1 and partial credit, from a logistic model so items correlate as a real test's do
ABILITY = RNG.normal(0, 1, 40)
DIFFICULTY = np.array([-1.5, -0.5, 0.0, 0.3, 1.0, 2.0])
SCORES = (RNG.random((40, 6)) < 1 / (1 + np.exp(-(ABILITY[:, None] - DIFFICULTY)))).astype(float)
SCORES[:, 5] = np.round(SCORES[:, 5] * RNG.choice([0.5, 1.0], 40), 2)  # one partially credited item


def test_facility_discrimination_and_alpha_equal_pandas():
    df = pd.DataFrame(SCORES)
    got = item_analysis(SCORES)
    total = df.sum(axis=1)
    for j in range(6):
        assert got.facility[j] == pytest.approx(df[j].mean())
        assert got.discrimination[j] == pytest.approx(df[j].corr(total - df[j]))  # item against the rest
    k = df.shape[1]
    alpha = k / (k - 1) * (1 - df.var(ddof=1).sum() / total.var(ddof=1))
    assert got.alpha == pytest.approx(alpha)
    assert got.n_students == 40


def test_discrimination_leaves_the_item_out_of_the_total():
    with_item = [np.corrcoef(SCORES[:, j], SCORES.sum(axis=1))[0, 1] for j in range(6)]
    got = item_analysis(SCORES).discrimination
    assert all(g < w for g, w in zip(got, with_item, strict=True))  # the item inflates its own correlation


def test_a_hand_worked_example_in_exact_fractions():
    # 5 students × 3 items; every statistic computed below with Fractions, independently of numpy
    rows = [(1, 1, 1), (1, 1, 0), (1, 0, 0), (0, 1, 0), (0, 0, 0)]
    k = 3

    def var(xs):
        m = Fraction(sum(xs), len(xs))
        return sum((Fraction(x) - m) ** 2 for x in xs) / len(xs)

    cols = list(zip(*rows, strict=True))
    totals = [sum(r) for r in rows]
    alpha = Fraction(k, k - 1) * (1 - sum(var(c) for c in cols) / var(totals))
    assert alpha == Fraction(15, 26)  # by hand: item variances 6/25 + 6/25 + 4/25, totals (3,2,1,1,0) variance 26/25
    got = item_analysis(rows)
    assert got.alpha == pytest.approx(float(alpha))
    assert got.facility == pytest.approx((0.6, 0.6, 0.2))
    # item 1 (1,1,1,0,0) against the rest (2,1,0,1,0): Σdxdy = 0.6, Σdx² = 1.2, Σdy² = 2.8, so r² = 3/28 by hand
    assert got.discrimination[0] == pytest.approx(math.sqrt(3 / 28))


def test_flags_mark_facility_outside_30_70_and_weak_or_undefined_discrimination():
    rows = [(1, 1, 1, 0), (1, 1, 0, 0), (1, 0, 1, 0), (0, 0, 0, 0), (1, 1, 1, 0), (1, 0, 0, 0)]
    got = item_analysis(rows)
    assert Flag.EASY in got.flags[0]                       # 5/6 right
    assert Flag.HARD in got.flags[3] and Flag.UNDEFINED in got.flags[3]  # nobody right: r undefined
    assert math.isnan(got.discrimination[3])
    assert not ({Flag.EASY, Flag.HARD} & got.flags[1])      # 3/6 = 0.5


def test_one_student_constant_items_and_no_students():
    one = item_analysis([[1, 0, 0.5]])
    assert one.facility == (1.0, 0.0, 0.5)
    assert all(math.isnan(d) for d in one.discrimination) and math.isnan(one.alpha)
    const = item_analysis([[1, 1], [1, 0], [1, 1]])
    assert math.isnan(const.discrimination[0]) and math.isnan(const.discrimination[1])  # rest of item 1 is item 0
    none = item_analysis(np.zeros((0, 3)))
    assert none.n_students == 0 and all(math.isnan(f) for f in none.facility) and none.flags == (frozenset(),) * 3
    assert math.isnan(cronbach_alpha([[1], [0]]))  # one item: no internal consistency


@pytest.mark.parametrize("bad", [[[1.2, 0]], [[float("nan"), 1]], [1, 0, 1], [[-0.1, 1]]])
def test_scores_must_be_a_matrix_of_fractions(bad):
    with pytest.raises(ValueError):
        item_analysis(bad)


def test_normalized_gain_is_hakes_formula_on_class_means():
    # Hake (1998): interactive-engagement courses averaged <g> = 0.48, traditional ones 0.23; a class from 40 % to
    # 68.8 % has gained 0.48 of what it could, one from 40 % to 53.8 % 0.23
    assert normalized_gain(0.40, 0.688) == pytest.approx(0.48)
    assert normalized_gain(0.40, 0.538) == pytest.approx(0.23)
    assert normalized_gain(0.5, 0.5) == 0
    assert normalized_gain(0.6, 0.4) == pytest.approx(-0.5)   # a class that did worse
    assert normalized_gain(0.0, 1.0) == 1
    assert normalized_gain(1.0, 1.0) is None and normalized_gain(1.0, 0.9) is None  # nothing left to gain
    with pytest.raises(ValueError):
        normalized_gain(45, 70)  # percentages, not fractions


def test_matched_gains_report_students_who_missed_a_test():
    pre = {"a": 0.25, "b": 0.5, "c": 1.0, "d": 0.1}
    post = {"a": 0.75, "b": 0.5, "c": 1.0, "e": 0.9}
    got = matched_gains(pre, post)
    assert got.gains == {"a": pytest.approx(2 / 3), "b": 0.0, "c": None}
    assert got.only_pre == ("d",) and got.only_post == ("e",)
    assert got.pre_mean == pytest.approx((0.25 + 0.5 + 1) / 3) and got.post_mean == pytest.approx(2.25 / 3)
    assert got.class_gain == pytest.approx((2.25 / 3 - 1.75 / 3) / (1 - 1.75 / 3))
    assert got.mean_of_gains == pytest.approx(1 / 3) and got.median_of_gains == pytest.approx(1 / 3)
    empty = matched_gains({"a": 0.5}, {})
    assert empty.class_gain is None and math.isnan(empty.mean_of_gains) and empty.only_pre == ("a",)


def test_distractor_counts_list_every_option_and_blanks():
    got = distractor_counts(["a", "b", "a", None, "a"], ["a", "b", "c", "d"])
    assert got == {"a": 3, "b": 1, "c": 0, "d": 0, None: 1}
    assert None not in distractor_counts(["a"], ["a", "b"])
    with pytest.raises(ValueError):
        distractor_counts(["z"], ["a", "b"])


def test_response_times_median_and_p90_equal_pandas():
    times = RNG.exponential(20, 31)
    got = response_times(times)
    s = pd.Series(times)
    assert (got.n, got.median, got.p90) == (31, pytest.approx(s.median()), pytest.approx(s.quantile(0.9)))
    assert response_times([]).n == 0 and math.isnan(response_times([]).median)
    assert response_times([7.0]).p90 == 7.0


def test_gain_bands_follow_hakes_thresholds():
    from mha_core.quiz.analysis import Band, band, gain_bands

    assert [band(g) for g in (-0.1, 0.0, 0.29, 0.3, 0.69, 0.7, 1.0, None)] == [
        Band.LOSS, Band.LOW, Band.LOW, Band.MEDIUM, Band.MEDIUM, Band.HIGH, Band.HIGH, Band.UNDEFINED]
    got = gain_bands([0.5, 0.8, None, 0.1, 0.4])
    assert list(got) == list(Band) and got == {Band.LOSS: 0, Band.LOW: 1, Band.MEDIUM: 2, Band.HIGH: 1,
                                               Band.UNDEFINED: 1}

"""A simulated class through the real store: 36 students of known ability answer the pre- and post-test by a Rasch
(logistic) model, seeded; the class's gains, item statistics, choices and response times must equal a computation
done here from what the students were made to answer, with nothing lost or counted twice.

Response model: P(right) = 1 / (1 + exp(−(θ − b_item))), θ evenly spread over [−2, 2] before the lesson and
θ + 1.2 after it; a wrong answer picks one of the item's distractors uniformly; response times are log-normal.
Two students miss the post-test and one the pre-test; one student reloads every item and tries to answer twice.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from dbhelpers import BACKENDS, empty_database

from mha_core.classroom import Storage
from mha_core.classroom.prepost import PrePostStore, class_results
from mha_core.quiz import concept

N_STUDENTS = 36
LEARNING = 1.2
ITEMS = [i.id for i in concept.items()]
DIFFICULTY = dict(zip(ITEMS, np.linspace(-1.5, 1.5, len(ITEMS)), strict=True))
NO_POST = {3, 20}
NO_PRE = {7}
RELOADER = 11


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture(params=BACKENDS)
def store(request, tmp_path) -> Iterator[Storage]:
    with empty_database(request.param, tmp_path) as u:
        s = Storage.open(u)
        yield s
        s.dispose()


def _simulate(store: Storage):
    """Run the class; what each student was made to answer: (student_id, test) → {item: (choice, score, seconds)}."""
    rng = random.Random(2709)
    clock = Clock()
    pp = PrePostStore(store, clock)
    info = store.create_class()
    members = [store.join(info.code, f"{i:032x}", f"sim {i:02d}") for i in range(N_STUDENTS)]
    theta = np.linspace(-2, 2, N_STUDENTS)
    truth: dict[tuple[int, str], dict[str, tuple[str, float, float]]] = {}
    for test, shift in (("pre", 0.0), ("post", LEARNING)):
        pp.set_open_test(info.id, test)
        for k, m in enumerate(members):
            if (test == "pre" and k in NO_PRE) or (test == "post" and k in NO_POST):
                continue
            given = truth.setdefault((m.student_id, test), {})
            for item_id in ITEMS:
                it = concept.item(item_id)
                pp.open_item(m, test, item_id)
                if k == RELOADER:
                    clock.now += timedelta(seconds=5)
                    pp.open_item(m, test, item_id)  # a reload: the clock keeps running from the first opening
                seconds = round(rng.lognormvariate(3.0, 0.5), 3)
                clock.now += timedelta(seconds=seconds)
                p = 1 / (1 + np.exp(-(theta[k] + shift - DIFFICULTY[item_id])))
                right = rng.random() < p
                choice = it.correct if right else rng.choice(it.options[1:])
                assert pp.answer(m, test, item_id, choice)
                if k == RELOADER:
                    assert not pp.answer(m, test, item_id, it.options[1])  # a second answer is refused
                    seconds += 5
                given[item_id] = (choice, float(right), seconds)
                clock.now += timedelta(seconds=1)
    return info, members, theta, truth


def _matrix(truth, test):
    sids = [s for (s, t) in truth if t == test]
    return sids, np.array([[truth[s, test][i][1] for i in ITEMS] for s in sids])


def _expected_stats(x: np.ndarray):
    """Facility, discrimination (np.corrcoef of item and rest), α (sample variances), computed independently."""
    fac = x.mean(axis=0)
    disc = [np.corrcoef(x[:, j], x.sum(axis=1) - x[:, j])[0, 1] for j in range(x.shape[1])]
    k = x.shape[1]
    alpha = k / (k - 1) * (1 - x.var(axis=0, ddof=1).sum() / x.sum(axis=1).var(ddof=1))
    return fac, disc, alpha


def test_a_simulated_class_gives_the_statistics_computed_independently(store):
    info, members, theta, truth = _simulate(store)
    pp = PrePostStore(store)
    rows = pp.rows(info.id)
    # nothing lost, nothing counted twice
    answered = [r for r in rows if r.choice is not None]
    assert len(rows) == len(answered) == sum(len(v) for v in truth.values()) == (2 * N_STUDENTS - 3) * len(ITEMS)
    assert len({(r.student_id, r.test, r.item_id) for r in rows}) == len(rows)
    for r in rows:
        choice, score, seconds = truth[r.student_id, r.test][r.item_id]
        assert (r.choice, r.score) == (choice, score)
        assert r.response_s == pytest.approx(seconds, abs=1e-3)

    res = class_results(rows, store.students(info.id))
    ids = [m.student_id for m in members]
    assert set(res.matched.only_post) == {ids[k] for k in NO_PRE}
    assert set(res.matched.only_pre) == {ids[k] for k in NO_POST}
    assert res.took_neither == ()

    for test, report in (("pre", res.pre), ("post", res.post)):
        sids, x = _matrix(truth, test)
        assert set(report.student_ids) == set(sids)
        x = x[[sids.index(s) for s in report.student_ids]]  # same row order as the report
        fac, disc, alpha = _expected_stats(x)
        assert report.analysis.facility == pytest.approx(tuple(fac))
        assert report.analysis.discrimination == pytest.approx(tuple(disc), nan_ok=True)
        assert report.analysis.alpha == pytest.approx(alpha)
        for item_id in ITEMS:
            it = concept.item(item_id)
            counts = Counter(truth[s, test][item_id][0] for s in sids)
            assert report.choices[item_id] == {o: counts.get(o, 0) for o in it.options}
            times = [truth[s, test][item_id][2] for s in sids]
            assert report.timing[item_id].median == pytest.approx(np.median(times), abs=1e-3)
            assert report.timing[item_id].p90 == pytest.approx(np.percentile(times, 90), abs=1e-3)

    both = [s for s in ids if (s, "pre") in truth and (s, "post") in truth]
    pre = np.array([np.mean([truth[s, "pre"][i][1] for i in ITEMS]) for s in both])
    post = np.array([np.mean([truth[s, "post"][i][1] for i in ITEMS]) for s in both])
    assert res.matched.class_gain == pytest.approx((post.mean() - pre.mean()) / (1 - pre.mean()))
    for g in res.items:
        a = np.mean([truth[s, "pre"][g.item_id][1] for s in both])
        b = np.mean([truth[s, "post"][g.item_id][1] for s in both])
        assert (g.pre, g.post) == (pytest.approx(a), pytest.approx(b))
        assert g.gain == (None if a == 1 else pytest.approx((b - a) / (1 - a)))
    # the model did what it says: abler students score higher, and the class gained
    k_both = [k for k in range(N_STUDENTS) if k not in NO_PRE | NO_POST]
    assert np.corrcoef(theta[k_both], pre)[0, 1] > 0.5
    assert 0.2 < res.matched.class_gain < 0.9
    # forms: everyone who took both met both forms
    forms = {(r.student_id, r.test): r.form for r in rows}
    assert all(forms[s, "pre"] != forms[s, "post"] for s in both)

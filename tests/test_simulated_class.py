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
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from mha_core.classroom import Storage
from mha_core.classroom.prepost import PrePostStore, class_results
from mha_core.errors import LabError
from mha_core.lesson import FOLLOW_UP_ROUND, LiveState, Move, VoteState, flips, follow_up_share, shift, vote_key
from mha_core.lesson.pi import moved
from mha_core.lesson.store import publish_live
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



def _simulate(store: Storage, lesson: Callable[[Storage, object, list, np.ndarray, random.Random], None] | None = None):
    """Run the class (``lesson`` taught between the two tests); what each student was made to answer:
    (student_id, test) → {item: (choice, score, seconds)}."""
    rng = random.Random(2709)
    clock = Clock()
    pp = PrePostStore(store, clock)
    info = store.create_class()
    members = [store.join(info.code, f"{i:032x}", f"sim {i:02d}") for i in range(N_STUDENTS)]
    theta = np.linspace(-2, 2, N_STUDENTS)
    truth: dict[tuple[int, str], dict[str, tuple[str, float, float]]] = {}
    for test, learned in (("pre", 0.0), ("post", LEARNING)):
        if test == "post" and lesson is not None:
            lesson(store, info, members, theta, rng)
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
                p = 1 / (1 + np.exp(-(theta[k] + learned - DIFFICULTY[item_id])))
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


# --- a whole lesson: pre-test, two Peer Instruction cycles with follow-ups, post-test -------------------------------

CYCLES = (  # (page, vote key, options, answer; the follow-up's bank question, options, answer)
    ("concat", vote_key("concat", "concat-4-8", (4, 8)), 3, 1, ("wo-without", 4, 0)),
    ("why", vote_key("why", "why-many-heads", ()), 4, 2, ("why-many-heads", 4, 1)),
)
DISCUSSION_FIX = 0.6   # a wrong student who discusses answers right in round 2 with this probability …
DISCUSSION_SLIP = 0.05  # … and a right one answers wrong with this one
QUESTION_B = 0.0       # each vote question's difficulty on the Rasch scale
ABSENT_FROM_VOTES = 5  # this student never votes (on a phone that lost the network)


def _teach(cast: dict) -> Callable[[Storage, object, list, np.ndarray, random.Random], None]:
    """The lesson between the tests: each cycle's round 1 alone (Rasch), closed unseen, round 2 after discussing
    (DISCUSSION_FIX / DISCUSSION_SLIP), revealed, then its follow-up (Rasch at the post-lesson ability); every ballot
    the simulation casts is recorded in ``cast`` as {(key, round): {student_id: choice}}."""

    def lesson(store: Storage, info, members: list, theta: np.ndarray, rng: random.Random) -> None:
        for step, (page, key, n, answer, (follow_q, follow_n, follow_answer)) in enumerate(CYCLES):
            def publish(v: VoteState, step: int = step, page: str = page) -> None:
                publish_live(store, info.id, LiveState(step=step, page=page, settings=(), vote=v))

            def ballot(m, k: int, rnd: int, right: bool, n_opts: int, ans: int, key: str = key) -> None:
                choice = ans if right else rng.choice([o for o in range(n_opts) if o != ans])
                store.cast_vote(m, key, rnd, choice, choice == ans)
                cast.setdefault((key, rnd), {})[m.student_id] = choice

            vote = VoteState(key, 1, "open", answer, n)
            publish(vote)
            first = {}
            for k, m in enumerate(members):
                if k == ABSENT_FROM_VOTES:
                    continue
                first[k] = rng.random() < 1 / (1 + np.exp(-(theta[k] - QUESTION_B)))
                ballot(m, k, 1, first[k], n, answer)
            vote = moved(vote, Move.CLOSE, 0.0)  # closed without showing the counts
            publish(vote)
            late = store.join(info.code, f"{0:032x}", "sim 00")  # a reload after the close: no vote goes in
            with pytest.raises(LabError) as refused:
                store.cast_vote(late, key, 1, answer, True)
            assert refused.value.key == "vote_closed"
            vote = moved(vote, Move.REVOTE, 0.0)
            publish(vote)
            for k, m in enumerate(members):
                if k == ABSENT_FROM_VOTES:
                    continue
                right = rng.random() < (1 - DISCUSSION_SLIP if first[k] else DISCUSSION_FIX)
                ballot(m, k, 2, right, n, answer)
            vote = moved(moved(vote, Move.CLOSE, 0.0), Move.REVEAL, 0.0)
            publish(vote)
            vote = moved(vote, Move.FOLLOW_UP, 0.0, follow_up=(follow_q, follow_answer, follow_n))
            publish(vote)
            for k, m in enumerate(members):
                if k != ABSENT_FROM_VOTES:
                    right = rng.random() < 1 / (1 + np.exp(-(theta[k] + LEARNING - QUESTION_B)))
                    ballot(m, k, FOLLOW_UP_ROUND, right, follow_n, follow_answer)
            publish(moved(vote, Move.CLOSE, 0.0))
            with pytest.raises(LabError) as refused:
                store.cast_vote(late, key, FOLLOW_UP_ROUND, follow_answer, True)
            assert refused.value.key == "vote_closed"

    return lesson


def test_a_whole_lesson_pre_test_two_cycles_with_follow_ups_post_test(store):
    cast: dict = {}
    info, members, _, truth = _simulate(store, _teach(cast))
    rows = store.votes(info.id)
    # every ballot the simulation cast is stored once, as cast; nothing after a close
    assert len(rows) == sum(len(v) for v in cast.values()) == len(CYCLES) * 3 * (N_STUDENTS - 1)
    assert {((r.vote_key, r.round), r.student_id, r.choice) for r in rows} == {
        (kr, sid, c) for kr, by in cast.items() for sid, c in by.items()}
    for _, key, n, answer, (_, _, follow_answer) in CYCLES:
        r1, r2 = cast[key, 1], cast[key, 2]
        sh = shift(rows, key, n, answer)
        assert sh.before == tuple(sum(c == o for c in r1.values()) for o in range(n))
        assert sh.after == tuple(sum(c == o for c in r2.values()) for o in range(n))
        assert sh.moved == tuple(tuple(sum(r1[s] == i and r2[s] == j for s in r1) for j in range(n))
                                 for i in range(n))
        wrong_to_right = sum(r1[s] != answer and r2[s] == answer for s in r1)
        right_to_wrong = sum(r1[s] == answer and r2[s] != answer for s in r1)
        assert flips(sh, answer) == (wrong_to_right, right_to_wrong)
        assert sh.right_before == pytest.approx(sum(c == answer for c in r1.values()) / len(r1))
        assert sh.right_after == pytest.approx(sum(c == answer for c in r2.values()) / len(r2))
        follow = cast[key, FOLLOW_UP_ROUND]
        assert follow_up_share(rows, key) == (len(follow), pytest.approx(
            sum(c == follow_answer for c in follow.values()) / len(follow)))
        assert wrong_to_right > right_to_wrong  # the response model's discussion helps, as the studies found
    # and the tests around the lesson still measure the class
    res = class_results(PrePostStore(store).rows(info.id), store.students(info.id))
    assert 0.2 < res.matched.class_gain < 0.9
    assert len(truth) == 2 * N_STUDENTS - 3

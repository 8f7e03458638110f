"""The live lesson's pure core: the plan (JSON, edits, the default 45 minutes), its timer, the state students
follow (JSON, followed settings, stable vote keys) and the vote figures (tallies, the shift between rounds)."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime

import pytest

from mha_core.classroom import VoteRow
from mha_core.errors import LabError
from mha_core.lesson import (
    FOLLOWED,
    LESSON_PAGES,
    MAX_STEPS,
    PHASES,
    Drawn,
    LiveState,
    Plan,
    Step,
    VoteState,
    browser_shows,
    default_plan,
    dropped,
    moved,
    plan_from_json,
    plan_to_json,
    retimed,
    shift,
    snapshot,
    tally,
    timer,
    vote_key,
)
from mha_core.lesson.plan import DEFAULT_CHECK
from mha_core.quiz import load_questions
from mha_core.quiz.model import Kind
from mha_core.settings import SETTINGS
from mha_core.ui.nav import PAGES

DEFAULT_PAGES = ["overview", "prereq", "split", "attend", "concat", "why", "myths", "quiz"]


def _plan(*pages_minutes: tuple[str, float]) -> Plan:
    return Plan(tuple(Step(p, m) for p, m in pages_minutes))


def _raw(steps: list[object]) -> str:
    return json.dumps({"steps": steps})


# --- the plan ---

def test_lesson_pages_are_the_navigation_pages_but_the_class_page():
    assert set(LESSON_PAGES) == {p.key for p in PAGES} - {"classroom"}
    assert len(set(LESSON_PAGES)) == len(LESSON_PAGES)


def test_the_default_plan_is_45_minutes_over_the_walkthrough_then_a_check_of_4_bank_questions():
    plan = default_plan()
    assert plan.total_minutes() == 45
    assert [s.page for s in plan.steps] == DEFAULT_PAGES
    assert all(0 < s.minutes <= 10 for s in plan.steps)
    nav_keys = {p.key for p in PAGES}
    assert all(s.page in LESSON_PAGES and s.page in nav_keys for s in plan.steps)
    check = plan.steps[-1].questions
    assert check == DEFAULT_CHECK and len(check) == len(set(check)) == 4
    assert all(not s.questions for s in plan.steps[:-1])
    for lang in ("zh", "en"):
        bank = {q.id: q for q in load_questions(lang)}
        assert set(check) <= set(bank)
        assert all(bank[q].kind in (Kind.SINGLE, Kind.MULTIPLE, Kind.NUMERIC) for q in check)


def test_a_plan_survives_json():
    plan = Plan((Step("split", 2.5), Step("quiz", 7, ("d-head", "wo-can")), Step("glossary", 120)))
    text = plan_to_json(plan)
    assert plan_from_json(text) == plan
    assert plan_from_json(plan_to_json(default_plan())) == default_plan()
    assert json.loads(text)["steps"][1] == {"page": "quiz", "minutes": 7, "questions": ["d-head", "wo-can"],
                                            "kind": "teach"}


def test_a_plan_of_the_longest_length_and_step_is_accepted():
    plan = plan_from_json(_raw([{"page": "attend", "minutes": 120}] * MAX_STEPS))
    assert len(plan.steps) == 30 and plan.total_minutes() == 3600
    assert plan_from_json(_raw([{"page": "quiz", "minutes": 1}])).steps == (Step("quiz", 1.0),)


@pytest.mark.parametrize("text", [
    "not json", "", "[]", "null", '{"steps": []}', '{"steps": "overview"}', '{"stages": []}',
    _raw([{"page": "overview", "minutes": 3}] * (MAX_STEPS + 1)),
    _raw([{"page": "nowhere", "minutes": 3}]),
    _raw([{"page": "classroom", "minutes": 3}]),
    _raw([{"minutes": 3}]),
    _raw([{"page": "overview"}]),
    _raw([{"page": "overview", "minutes": 0}]),
    _raw([{"page": "overview", "minutes": -2}]),
    _raw([{"page": "overview", "minutes": 120.5}]),
    _raw([{"page": "overview", "minutes": "5"}]),
    _raw([{"page": "overview", "minutes": True}]),
    _raw([{"page": "overview", "minutes": None}]),
    '{"steps": [{"page": "overview", "minutes": NaN}]}',
    '{"steps": [{"page": "overview", "minutes": Infinity}]}',
    _raw([{"page": "split", "minutes": 3, "questions": ["d-head"]}]),
    _raw([{"page": "quiz", "minutes": 3, "questions": ["no-such-question"]}]),
    _raw([{"page": "quiz", "minutes": 3, "questions": ["d-head", "d-head"]}]),
    _raw([{"page": "quiz", "minutes": 3, "questions": "d-head"}]),
    _raw([{"page": "quiz", "minutes": 3, "questions": [7]}]),
    _raw([{"page": "quiz", "minutes": 3, "extra": 1}]),
    _raw(["overview"]),
], ids=lambda text: text[:60])
def test_a_bad_plan_is_refused_with_a_translated_error(text):
    with pytest.raises(LabError) as err:
        plan_from_json(text)
    assert err.value.key == "lesson_plan_bad"
    assert "30" in str(err.value) and "120" in str(err.value)


def test_steps_move_within_the_plan_and_clamp_at_its_ends():
    plan = _plan(("overview", 1), ("split", 2), ("attend", 3), ("quiz", 4))
    assert [s.page for s in moved(plan, 0, 2).steps] == ["split", "attend", "overview", "quiz"]
    assert [s.page for s in moved(plan, 3, -1).steps] == ["overview", "split", "quiz", "attend"]
    assert moved(plan, 0, -5) == plan and moved(plan, 3, 9) == plan
    assert [s.page for s in moved(plan, 1, 99).steps] == ["overview", "attend", "quiz", "split"]
    assert [s.page for s in moved(plan, 2, -99).steps] == ["attend", "overview", "split", "quiz"]
    assert moved(plan, 1, 0) == plan
    with pytest.raises(IndexError):
        moved(plan, 4, 1)


def test_steps_are_dropped_but_never_the_last_one():
    plan = _plan(("overview", 1), ("split", 2))
    assert dropped(plan, 0) == _plan(("split", 2))
    assert dropped(plan, 1) == _plan(("overview", 1))
    with pytest.raises(LabError) as err:
        dropped(_plan(("split", 2)), 0)
    assert err.value.key == "lesson_plan_empty"
    with pytest.raises(IndexError):
        dropped(plan, -1)


def test_steps_are_retimed_within_0_and_120_minutes():
    plan = _plan(("overview", 1), ("split", 2))
    assert retimed(plan, 1, 7.5) == _plan(("overview", 1), ("split", 7.5))
    assert retimed(plan, 0, 120).total_minutes() == 122
    for bad in (0, -1, 120.01, float("nan"), float("inf")):
        with pytest.raises(LabError) as err:
            retimed(plan, 0, bad)
        assert err.value.key == "lesson_minutes_bad" and "120" in str(err.value)


def test_the_timer_counts_late_and_early_against_the_plan():
    plan = _plan(("overview", 3), ("prereq", 5), ("split", 6), ("quiz", 10))
    start = 1_000.0
    # step 2 started 10 min into the lesson although the plan had it at 8: two minutes late
    late = timer(plan, 2, start + 600, start, start + 720)
    assert (late.step_elapsed_s, late.step_planned_s, late.lesson_elapsed_s) == (120, 360, 720)
    assert (late.planned_by_now_s, late.lesson_planned_s) == (480, 24 * 60)
    assert late.behind_s == 120 and not late.step_over
    # step 2 started at 7 min: one minute early, still so one minute into the step
    early = timer(plan, 2, start + 420, start, start + 480)
    assert early.behind_s == -60 and not early.step_over
    # the step overran by 40 s: the overrun counts as late (elapsed 7:00 + 6:40 against 8:00 + 6:00)
    over = timer(plan, 2, start + 420, start, start + 820)
    assert over.step_over and over.behind_s == 820 - (480 + 360)
    # the first step, on time
    first = timer(plan, 0, start, start, start + 90)
    assert first.planned_by_now_s == 0 and first.behind_s == 0


def test_the_timer_clamps_the_step_and_never_counts_negative_time():
    plan = _plan(("overview", 3), ("quiz", 10))
    beyond = timer(plan, 7, 100.0, 0.0, 160.0)
    assert beyond.step_planned_s == 600 and beyond.planned_by_now_s == 180
    skewed = timer(plan, 0, 1_000.0, 1_000.0, 990.0)  # another replica's clock is 10 s behind
    assert skewed.step_elapsed_s == 0 == skewed.lesson_elapsed_s


# --- the live state ---

def test_the_followed_settings_are_the_shared_ones_but_language_and_tables():
    keys = {s.key for s in FOLLOWED}
    assert keys == {s.key for s in SETTINGS} - {"lang", "tables"}
    assert keys == {"h", "d_head", "fixed", "d_model", "h_div", "sentence", "weight_mode", "seed", "causal", "head"}


def test_a_snapshot_holds_the_followed_settings_sorted_and_typed():
    values = {"lang": "zh", "tables": True, "h": 8, "d_head": 8.0, "fixed": 1, "sentence": "猫坐在垫子上",
              "causal": False, "head": 2, "other": 5, "weight_mode": None}
    assert snapshot(values) == (("causal", False), ("d_head", 8), ("fixed", True), ("h", 8), ("head", 2),
                                ("sentence", "猫坐在垫子上"))
    assert isinstance(dict(snapshot(values))["d_head"], int)


def _state(vote: VoteState | None = None) -> LiveState:
    settings = snapshot({"h": 2, "d_head": 8, "fixed": False, "sentence": "the cat sat", "causal": True})
    return LiveState(step=3, page="attend", settings=settings, vote=vote, questions=("d-head",),
                     step_started_at=1_700_000_100.5, lesson_started_at=1_700_000_000.0)


def test_the_live_state_survives_json_with_and_without_a_vote():
    vote = VoteState(key=vote_key("attend", "row", (2, 8)), round=2, phase="histogram", answer=1, n_options=4)
    for state in (_state(), _state(vote)):
        assert LiveState.from_json(state.to_json()) == state
    assert json.loads(_state(vote).to_json())["vote"]["phase"] == "histogram"
    assert PHASES == ("open", "closed", "histogram", "revealed")


def test_settings_this_version_does_not_follow_are_dropped():
    data = json.loads(_state().to_json())
    data["settings"].append(["lang", "en"])
    data["settings"].append(["future_setting", 3])
    assert LiveState.from_json(json.dumps(data)) == _state()


def _spoiled(change) -> str:  # noqa: ANN001 - a function that edits the state's JSON
    data = json.loads(_state(VoteState("attend.row.0123456789", 1, "open", 0, 3)).to_json())
    change(data)
    return json.dumps(data)


@pytest.mark.parametrize("text", [
    "", "{", "[]", "null",
    _spoiled(lambda d: d.pop("page")),
    _spoiled(lambda d: d.update(page="classroom")),
    _spoiled(lambda d: d.update(step=-1)),
    _spoiled(lambda d: d.update(step="1")),
    _spoiled(lambda d: d.update(settings={"h": 2})),
    _spoiled(lambda d: d.update(settings=[["h", "2"]])),
    _spoiled(lambda d: d.update(settings=[["h", True]])),
    _spoiled(lambda d: d.update(settings=[["causal", 1]])),
    _spoiled(lambda d: d.update(settings=[["h"]])),
    _spoiled(lambda d: d["vote"].update(phase="ajar")),
    _spoiled(lambda d: d["vote"].update(round=3)),
    _spoiled(lambda d: d["vote"].update(answer=3)),
    _spoiled(lambda d: d["vote"].update(key="")),
    _spoiled(lambda d: d["vote"].pop("n_options")),
    _spoiled(lambda d: d.update(questions="d-head")),
    _spoiled(lambda d: d.update(step_started_at="soon")),
], ids=lambda text: text[:40])
def test_a_bad_live_state_is_refused_with_a_translated_error(text):
    with pytest.raises(LabError) as err:
        LiveState.from_json(text)
    assert err.value.key == "lesson_state_bad"


def test_vote_keys_are_stable_and_language_free():
    parts = (4, 16, "The cat sat", False)
    # a fixed value: a change of algorithm (or Python's per-process hash()) fails here
    assert vote_key("attend", "row_sum", parts) == "attend.row_sum.7d740e68c3"
    assert vote_key("attend", "row_sum", parts) == \
        "attend.row_sum." + hashlib.sha1(repr(parts).encode()).hexdigest()[:10]
    assert vote_key("split", "shape") == "split.shape." + hashlib.sha1(b"()").hexdigest()[:10]
    assert vote_key("attend", "row_sum", list(parts)) == vote_key("attend", "row_sum", parts)
    assert vote_key("attend", "row_sum", (4, 16, "The cat sat", True)) != vote_key("attend", "row_sum", parts)
    assert vote_key("attend", "row_sum", parts) != vote_key("attend", "row_max", parts)


# --- the votes' figures ---

def _vote(student: int, round_: int, choice: int, key: str = "attend.row.x", answer: int = 2) -> VoteRow:
    return VoteRow(student, f"s{student}", key, round_, choice, choice == answer, datetime(2025, 1, 1))


ROWS = [
    _vote(1, 1, 0), _vote(2, 1, 0), _vote(3, 1, 2), _vote(4, 1, 1), _vote(5, 1, 0),   # round 1 (5 only here)
    _vote(1, 2, 2), _vote(2, 2, 0), _vote(3, 2, 2), _vote(4, 2, 2), _vote(6, 2, 1),   # round 2 (6 only here)
    _vote(7, 1, 1, key="split.shape.y"), _vote(8, 1, 7),                            # other vote; out of range
]


def test_tally_counts_one_choice_per_student_in_one_vote_and_round():
    assert tally(ROWS, "attend.row.x", 1, 3) == (3, 1, 1)
    assert tally(ROWS, "attend.row.x", 2, 3) == (1, 1, 3)
    assert tally(ROWS, "split.shape.y", 1, 2) == (0, 1)
    assert tally(ROWS, "attend.row.x", 1, 4) == (3, 1, 1, 0)
    assert tally([], "attend.row.x", 1, 3) == (0, 0, 0)


def test_shift_shows_how_answers_moved_between_rounds():
    s = shift(ROWS, "attend.row.x", 3, answer=2)
    assert (s.before, s.after) == ((3, 1, 1), (1, 1, 3))
    # students 1: 0 -> 2, 2: 0 -> 0, 3: 2 -> 2, 4: 1 -> 2 (5 and 6 voted once)
    assert s.moved == ((1, 0, 1), (0, 0, 1), (0, 0, 1))
    assert s.right_before == pytest.approx(1 / 5) and s.right_after == pytest.approx(3 / 5)
    empty = shift(ROWS, "nobody.voted.z", 3, answer=0)
    assert empty.right_before is None and empty.right_after is None and empty.moved == ((0,) * 3,) * 3


def test_a_follower_shows_a_version_once_its_run_ended_and_its_browser_says_so():
    """Streamlit can drop the end of a full run that just ended (a fragment's timer tick starts a new ScriptRunner
    and the old one's queued messages are ignored): bench_live found students stuck on the old h although the
    server had drawn the new one. The browser's address is the proof; without it the session asks once more."""
    grace = 2.0

    def drawn(applied, acked, at=100.0, run_s=0.1, reasks=0):  # noqa: ANN001, ANN202
        return Drawn(applied=applied, applied_at=at, run_s=run_s, acked=acked, reasks=reasks)

    def shows(d, now):  # noqa: ANN001, ANN202
        return browser_shows(5, d, now=now, grace_s=grace, max_reasks=3)

    assert not shows(drawn(4, "4"), 101.0)                          # not drawn yet
    assert not shows(drawn(None, None, at=0.0), 101.0)
    assert shows(drawn(5, "5"), 500.0)                              # drawn, and the browser says so
    assert shows(drawn(5, "4"), 101.0)                              # its messages still on the way
    assert not shows(drawn(5, "4"), 102.5)                          # lost: ask again
    assert not shows(drawn(5, None), 102.5)
    assert shows(drawn(5, "4", run_s=3.0), 108.0)                   # a loaded server: wait longer
    assert not shows(drawn(5, "4", run_s=3.0), 109.5)
    assert not shows(drawn(5, "4", reasks=2), 102.5)                # asked again twice: once more
    assert shows(drawn(5, "4", reasks=3), 500.0)                    # three times: no storm


# --- a ballot's value, and answers the database did not take ---

@pytest.mark.parametrize("value", [-1, 3, 2**31, 10**30, True, False, 1.0, float("nan"), "1", None, [1]])
def test_a_ballot_that_is_no_option_is_a_clear_error(value):
    from mha_core.lesson import ballot
    with pytest.raises(LabError) as err:
        ballot(value, 3)
    assert err.value.key == "vote_choice_bad"


def test_a_ballot_on_an_option_is_its_index():
    from mha_core.lesson import ballot
    assert [ballot(i, 3) for i in range(3)] == [0, 1, 2]


def test_unsent_answers_are_kept_per_student_bounded_and_forgotten_once_sent():
    from mha_core.quiz.progress_store import Unsent
    u = Unsent(max_students=2, max_each=2)
    u.keep("a", "quiz:q1", 1)
    u.keep("a", "quiz:q1", 2)                       # a newer answer for the same thing replaces it
    u.keep("a", "vote:1:k:1", 0)
    assert u.of("a") == {"quiz:q1": 2, "vote:1:k:1": 0}
    u.keep("a", "quiz:q2", 3)                       # at most 2 each: the oldest goes
    assert list(u.of("a")) == ["vote:1:k:1", "quiz:q2"]
    u.keep("b", "quiz:q1", 1)
    u.keep("c", "quiz:q1", 1)                       # at most 2 students: the least recently touched goes
    assert u.of("a") == {} and u.of("b") and u.of("c")
    u.sent("b", "quiz:q1")
    assert u.of("b") == {}
    u.keep("c", "vote:1:k:1", 1)
    u.forget("c", "quiz:")
    assert u.of("c") == {"vote:1:k:1": 1}

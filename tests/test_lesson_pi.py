"""Peer Instruction by the book, pure (issue 27 §1): the kinds of question in a plan and the minutes they need, the
default 45-minute plan and every shipped plan, plans stored before kinds, the coach's thresholds, the presenter's
moves through a full cycle and a prediction, the countdown, the follow-up and the moves between rounds."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from mha_core.classroom import VoteRow
from mha_core.errors import LabError
from mha_core.lesson import (
    CONCEPTEST,
    FOLLOW_UP_ROUND,
    FOLLOW_UPS,
    HIGH_SHARE,
    LOW_SHARE,
    PREDICTION,
    TEACH,
    VOTE_PAGES,
    Advice,
    LiveState,
    Move,
    Plan,
    Step,
    VoteState,
    coach,
    default_plan,
    flips,
    follow_up_share,
    moves,
    needed_minutes,
    plan_from_json,
    plan_to_json,
    problems,
    rekinded,
    remaining,
    shift,
)
from mha_core.lesson.pi import coach_percent, moved
from mha_core.lesson.plan import (
    CHECK_ITEM_MINUTES,
    CONTENT_MINUTES,
    CYCLE_MINUTES,
    DEFAULT_CHECK,
    LESSON_PAGES,
    MAX_CYCLES,
    PREDICTION_MINUTES,
)
from mha_core.quiz import load_questions
from mha_core.quiz.model import Kind

ROOT = Path(__file__).resolve().parents[1]
KEY = "concat.concat-4-8.0123456789"
# Every plan the app ships (a test checks each against Peer Instruction's timing).
SHIPPED = {"default": default_plan}
# The default plan as stored before steps had a kind and plans had homework (the JSON of the commit before).
OLD_DEFAULT = json.dumps({"steps": [
    {"page": p, "minutes": m, "questions": q} for p, m, q in (
        ("overview", 3.0, []), ("prereq", 5.0, []), ("split", 6.0, []), ("attend", 7.0, []), ("concat", 6.0, []),
        ("why", 5.0, []), ("myths", 5.0, []), ("real", 4.0, []),
        ("quiz", 4.0, ["d-head", "head-output-shape", "wo-can", "budget-fixed", "why-many-heads",
                       "myth-more-heads"]))]})


def _vote(round_: int = 1, phase: str = "open", kind: str = CONCEPTEST) -> VoteState:
    return VoteState(KEY, round_, phase, 0, 2, kind)


def _row(student: int, round_: int, choice: int, correct: bool | None = None) -> VoteRow:
    return VoteRow(student, f"s{student}", KEY, round_, choice, choice == 0 if correct is None else correct,
                   datetime(2026, 1, 1, tzinfo=UTC))


# --- the plan's kinds and minutes ---

@pytest.mark.parametrize("name", list(SHIPPED))
def test_every_shipped_plan_holds_its_content_and_votes(name):
    plan = SHIPPED[name]()
    assert problems(plan) == ()
    for s in plan.steps:
        assert s.minutes >= needed_minutes(s), s
        assert s.kind == TEACH or s.page in VOTE_PAGES
    assert plan_from_json(plan_to_json(plan)) == plan


def test_the_default_plan_is_45_minutes_with_two_predictions_then_two_full_cycles_and_homework():
    plan = default_plan()
    assert plan.total_minutes() == 45
    kinds = [(s.page, s.kind) for s in plan.steps if s.kind != TEACH]
    assert kinds == [("overview", PREDICTION), ("split", PREDICTION), ("concat", CONCEPTEST), ("why", CONCEPTEST)]
    assert sum(s.kind == CONCEPTEST for s in plan.steps) <= MAX_CYCLES == 3
    assert "myths" in [s.page for s in plan.steps]                      # one misconception
    assert 3 <= len(plan.steps[-1].questions) == len(DEFAULT_CHECK) <= 4  # a 3–4 item check, last
    assert {"real", "heads", "generate", "cost"} <= set(plan.homework)     # the real model and the labs
    assert not set(plan.homework) & {s.page for s in plan.steps}


def test_a_step_needs_its_content_plus_5_minutes_per_cycle_and_1_5_per_prediction():
    assert (CYCLE_MINUTES, PREDICTION_MINUTES) == (5.0, 1.5)
    assert set(CONTENT_MINUTES) == set(LESSON_PAGES)
    assert needed_minutes(Step("concat", 9, kind=CONCEPTEST)) == CONTENT_MINUTES["concat"] + 5
    assert needed_minutes(Step("split", 9, kind=PREDICTION)) == CONTENT_MINUTES["split"] + 1.5
    assert needed_minutes(Step("myths", 9)) == CONTENT_MINUTES["myths"]
    assert needed_minutes(Step("quiz", 9, ("d-head", "wo-can"))) == 2 * CHECK_ITEM_MINUTES


def test_problems_name_a_short_step_an_early_cycle_too_many_cycles_and_taught_homework():
    plan = Plan((Step("why", 8, kind=CONCEPTEST), Step("concat", 8.9, kind=CONCEPTEST),
                 Step("attend", 20, kind=CONCEPTEST), Step("cross", 20, kind=CONCEPTEST), Step("real", 5)),
                homework=("real", "cost"))
    assert [(p.key, dict(p.params)) for p in problems(plan)] == [
        ("plan_cycle_first", {"step": 1}),
        ("plan_short", {"step": 2, "minutes": "9"}),
        ("plan_cycles", {"n": 4, "max": 3}),
        ("plan_homework_taught", {"step": 5}),
    ]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_problem_and_kind_has_its_text(lang):
    from mha_core.i18n import catalog

    texts = catalog(lang)
    for key in ("plan_short", "plan_cycle_first", "plan_cycles", "plan_homework_taught", "kind_teach",
                "kind_prediction", "kind_conceptest", "alone", "discuss", "coach_revisit", "coach_discuss",
                "coach_explain"):
        assert f"pi.{key}" in texts


def test_vote_pages_are_the_pages_that_ask_a_prediction():
    asks = {p.stem for p in (ROOT / "pages").glob("*.py") if re.search(r"prediction\.predict\(", p.read_text())}
    assert set(VOTE_PAGES) == asks


def test_a_plan_stored_before_kinds_still_loads_its_vote_pages_as_full_cycles():
    plan = plan_from_json(OLD_DEFAULT)
    assert [s.page for s in plan.steps][-2:] == ["real", "quiz"] and plan.homework == ()
    assert {s.page: s.kind for s in plan.steps} == {
        "overview": CONCEPTEST, "prereq": TEACH, "split": CONCEPTEST, "attend": CONCEPTEST, "concat": CONCEPTEST,
        "why": CONCEPTEST, "myths": TEACH, "real": TEACH, "quiz": TEACH}
    assert any(p.key == "plan_cycles" for p in problems(plan))  # loads, and the editor says what to change
    assert plan_from_json(plan_to_json(plan)) == plan


@pytest.mark.parametrize("raw", [
    {"steps": [{"page": "prereq", "minutes": 5, "kind": PREDICTION}]},   # no prediction on that page
    {"steps": [{"page": "split", "minutes": 5, "kind": "lecture"}]},     # no such kind
    {"steps": [{"page": "split", "minutes": 5, "kind": 1}]},
    {"steps": [{"page": "split", "minutes": 5}], "homework": ["split", "split"]},
    {"steps": [{"page": "split", "minutes": 5}], "homework": ["nowhere"]},
    {"steps": [{"page": "split", "minutes": 5}], "homework": "real"},
], ids=["vote-page", "kind", "kind-int", "homework-twice", "homework-page", "homework-str"])
def test_a_plan_with_a_bad_kind_or_homework_is_refused(raw):
    with pytest.raises(LabError) as err:
        plan_from_json(json.dumps(raw))
    assert err.value.key == "lesson_plan_bad"


def test_a_step_changes_kind_only_to_a_vote_its_page_can_hold():
    plan = default_plan()
    assert rekinded(plan, 0, CONCEPTEST).steps[0].kind == CONCEPTEST
    assert rekinded(plan, 0, CONCEPTEST).homework == plan.homework
    for i, kind in ((1, PREDICTION), (0, "lecture")):
        with pytest.raises(LabError) as err:
            rekinded(plan, i, kind)
        assert err.value.key == "lesson_kind_bad"


# --- the coach ---

@pytest.mark.parametrize("share, advice", [
    (0.0, Advice.REVISIT), (0.3499, Advice.REVISIT), (LOW_SHARE, Advice.DISCUSS), (0.5, Advice.DISCUSS),
    (HIGH_SHARE, Advice.DISCUSS), (0.7001, Advice.EXPLAIN), (1.0, Advice.EXPLAIN), (None, None),
])
def test_the_coach_reads_round_one_at_35_and_70_percent(share, advice):
    assert (LOW_SHARE, HIGH_SHARE) == (0.35, 0.70)
    assert coach(share) == advice


def test_the_coach_on_real_counts_at_the_bounds():
    # 7 of 20 right is exactly 35 %: discuss; 14 of 20 exactly 70 %: discuss; 15 of 20: explain
    for right, advice in ((6, Advice.REVISIT), (7, Advice.DISCUSS), (14, Advice.DISCUSS), (15, Advice.EXPLAIN)):
        rows = [_row(i, 1, 0 if i < right else 1) for i in range(20)]
        assert coach(shift(rows, KEY, 2, 0).right_before) == advice


def test_the_coachs_percent_never_contradicts_its_band():
    # "35% right in round 1, under 35%" (8 of 23 rounded) is what a teacher must never read
    from mha_core.i18n import translate

    for n in range(1, 201):
        for right in range(n + 1):
            share = right / n
            shown, advice = coach_percent(share), coach(share)
            assert abs(shown - 100 * share) < 1, (right, n)
            assert {Advice.REVISIT: shown < 35, Advice.DISCUSS: 35 <= shown <= 70,
                    Advice.EXPLAIN: shown > 70}[advice], (right, n, shown, advice)
    assert (coach_percent(8 / 23), coach_percent(19 / 27), coach_percent(7 / 20)) == (34, 71, 35)
    assert translate("en", "pi.coach_revisit", share="34%").startswith("34% right in round 1, under 35%:")


# --- the presenter's moves ---

def test_a_full_cycle_closes_round_one_unseen_then_revotes_shows_both_rounds_explains_and_follows_up():
    v = _vote()
    assert moves(v) == (Move.CLOSE,)
    v = moved(v, Move.CLOSE, 100.0)
    assert (v.round, v.phase) == (1, "closed")                              # the default shows nothing
    assert moves(v) == (Move.REVOTE, Move.SHOW, Move.REVEAL)
    v = moved(v, Move.REVOTE, 100.0, countdown_s=60)
    assert (v.round, v.phase, v.deadline) == (2, "open", 160.0)
    v = moved(v, Move.CLOSE, 170.0)
    assert (v.phase, v.deadline) == ("histogram", None)                     # both rounds, side by side
    assert moves(v) == (Move.REVEAL,)
    v = moved(v, Move.REVEAL, 180.0)
    assert moves(v) == (Move.FOLLOW_UP,)
    v = moved(v, Move.FOLLOW_UP, 200.0, follow_up=("wo-without", 0, 4))
    assert (v.round, v.phase, v.follow_up, v.answer, v.n_options, v.deadline) == (
        FOLLOW_UP_ROUND, "open", "wo-without", 0, 4, None)
    v = moved(v, Move.CLOSE, 210.0)
    assert v.phase == "revealed" and moves(v) == ()


def test_round_one_can_be_shown_on_purpose_and_an_easy_question_explained_at_once():
    v = moved(moved(_vote(), Move.CLOSE, 0.0), Move.SHOW, 0.0)
    assert v.phase == "histogram" and moves(v) == (Move.REVOTE, Move.REVEAL)
    easy = moved(moved(_vote(), Move.CLOSE, 0.0), Move.REVEAL, 0.0)
    assert (easy.round, easy.phase) == (1, "revealed") and moves(easy) == (Move.FOLLOW_UP,)


def test_a_prediction_is_one_round_shown_then_revealed_with_no_discussion():
    v = moved(_vote(kind=PREDICTION), Move.CLOSE, 0.0)
    assert v.phase == "histogram" and moves(v) == (Move.REVEAL,)
    v = moved(v, Move.REVEAL, 0.0)
    assert moves(v) == ()
    with pytest.raises(ValueError):
        moved(_vote(kind=PREDICTION, phase="closed"), Move.REVOTE, 0.0)


def test_a_stale_move_is_refused():
    with pytest.raises(ValueError):
        moved(_vote(), Move.REVOTE, 0.0)          # round 1 still open
    with pytest.raises(ValueError):
        moved(_vote(2, "histogram"), Move.CLOSE, 0.0)


def test_the_countdown_runs_only_while_its_round_is_open():
    v = VoteState(KEY, 1, "open", 0, 2, deadline=130.0)
    assert remaining(v, 100.0) == 30.0 and remaining(v, 131.0) == 0.0
    assert remaining(VoteState(KEY, 1, "closed", 0, 2, deadline=130.0), 100.0) is None
    assert remaining(_vote(), 100.0) is None and remaining(None, 100.0) is None


# --- the state students follow ---

def test_kind_countdown_and_follow_up_survive_json_and_an_old_vote_still_loads():
    vote = VoteState(KEY, FOLLOW_UP_ROUND, "open", 1, 4, PREDICTION, 1.7e9, "wo-without")
    state = LiveState(step=4, page="concat", settings=(), vote=vote)
    assert LiveState.from_json(state.to_json()) == state
    old = json.loads(LiveState(step=4, page="concat", settings=(), vote=_vote()).to_json())
    for field in ("kind", "deadline", "follow_up"):
        del old["vote"][field]
    assert LiveState.from_json(json.dumps(old)).vote == _vote()  # a vote published before: a full cycle


@pytest.mark.parametrize("change", [
    {"kind": TEACH}, {"kind": "x"}, {"deadline": "soon"}, {"deadline": float("inf")}, {"round": 3},
    {"follow_up": "wo-without"}, {"round": 4, "follow_up": "wo-without"}, {"follow_up": 3},
], ids=["teach", "kind", "deadline-str", "deadline-inf", "round-3-no-question", "question-in-round-1", "round-4",
        "question-int"])
def test_a_malformed_vote_is_refused(change):
    data = json.loads(LiveState(step=4, page="concat", settings=(), vote=_vote()).to_json())
    data["vote"].update(change)
    with pytest.raises(LabError) as err:
        LiveState.from_json(json.dumps(data))
    assert err.value.key == "lesson_state_bad"


# --- the rounds side by side, the follow-up ---

def test_flips_count_wrong_to_right_and_right_to_wrong():
    rows = [_row(1, 1, 1), _row(1, 2, 0), _row(2, 1, 1), _row(2, 2, 0), _row(3, 1, 0), _row(3, 2, 1),
            _row(4, 1, 0), _row(4, 2, 0), _row(5, 2, 0)]  # 5 voted in round 2 only: no move
    assert flips(shift(rows, KEY, 2, 0), 0) == (2, 1)


def test_the_follow_up_share_counts_each_students_last_answer_as_graded():
    rows = [_row(1, FOLLOW_UP_ROUND, 2, True), _row(2, FOLLOW_UP_ROUND, 0, False), _row(2, FOLLOW_UP_ROUND, 1, True),
            _row(3, FOLLOW_UP_ROUND, 3, False), _row(4, 2, 0, True)]
    assert follow_up_share(rows, KEY) == (3, pytest.approx(2 / 3))
    assert follow_up_share(rows, "other.key.0") == (0, None)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_follow_up_is_a_single_choice_question_the_check_does_not_repeat(lang):
    bank = {q.id: q for q in load_questions(lang)}
    assert set(FOLLOW_UPS) == set(VOTE_PAGES)
    for question in FOLLOW_UPS.values():
        assert bank[question].kind == Kind.SINGLE and len(bank[question].options) >= 2
    assert not set(FOLLOW_UPS[p] for p in ("concat", "why")) & set(DEFAULT_CHECK)

"""A lesson plan: the pages a teacher shows, in order, each with its planned minutes and the kind of question it
asks; the pages left as homework; and the timer against it.

Pure (no Streamlit): the plan is stored with the class as JSON (``plan_to_json`` / ``plan_from_json``; a plan
stored before steps had a kind still loads), edited by ``moved`` / ``dropped`` / ``retimed`` (each returns a new
plan), checked against Peer Instruction's timing by ``problems`` (Crouch & Mazur 2001), and timed by ``timer`` from
wall-clock epochs that every replica shares.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from types import MappingProxyType

from mha_core.errors import LabError
from mha_core.quiz.bank import structure

# Every page key a lesson step may show: mha_core.ui.nav.PAGES without the class page itself (the presenter
# runs the lesson from there; students never follow onto it). Kept here because importing mha_core.ui loads
# Streamlit; tests/test_lesson.py checks it against nav.PAGES.
LESSON_PAGES: tuple[str, ...] = ("overview", "prereq", "split", "attend", "concat", "why", "myths", "cross", "cost",
                                 "heads", "generate", "real", "quiz", "map", "glossary")
QUIZ_PAGE = "quiz"        # the step that runs a short check of bank questions
MAX_MINUTES = 120         # a step's planned minutes lie in (0, MAX_MINUTES]
MAX_STEPS = 30            # a plan holds 1 … MAX_STEPS steps

# What a step asks the class (Peer Instruction, Crouch & Mazur 2001): nothing (it teaches), a prediction (one
# round, no discussion: asked before the idea is taught) or a ConcepTest (think alone, vote, discuss, vote again,
# explain: asked after it is taught).
TEACH, PREDICTION, CONCEPTEST = "teach", "prediction", "conceptest"
KINDS: tuple[str, ...] = (TEACH, PREDICTION, CONCEPTEST)
# The pages whose walkthrough asks a prediction (prediction.predict), the only ones a vote can run on;
# tests/test_lesson_pi.py checks it against pages/*.py.
VOTE_PAGES: tuple[str, ...] = ("overview", "split", "attend", "concat", "why", "cross")
# The default check: 4 bank questions, one per core point; the follow-ups (lesson.pi.FOLLOW_UPS) are not repeated.
DEFAULT_CHECK: tuple[str, ...] = (
    "d-head",             # the split: d_head = d_model / h (numeric, numbers drawn per student)
    "wo-can",             # W^O fuses the heads (weights and mixes them)
    "budget-fixed",       # d_model fixed: parameters unchanged when h varies
    "myth-more-heads",    # a misconception: more heads is always better
)
# (page, minutes, kind) of the default 45-minute lesson, in teaching order: predictions before the idea (overview,
# split), two full cycles after it (concat + W^O, why many heads), one misconception, the check. Each step's minutes
# hold its content and its votes (``needed_minutes``).
_DEFAULT_STEPS: tuple[tuple[str, float, str], ...] = (
    ("overview", 3.5, PREDICTION), ("prereq", 4, TEACH), ("split", 5.5, PREDICTION), ("attend", 5, TEACH),
    ("concat", 9, CONCEPTEST), ("why", 8, CONCEPTEST), ("myths", 4, TEACH), (QUIZ_PAGE, 6, TEACH),
)
# The real model and the labs: homework, not in the timed lesson.
DEFAULT_HOMEWORK: tuple[str, ...] = ("real", "heads", "generate", "cost")

# What a step's minutes must hold (``needed_minutes``): the page's content, plus its vote, plus the check's items.
CYCLE_MINUTES = 5.0        # a full cycle: think alone, vote, discuss, vote again, explain (Crouch & Mazur 2001)
PREDICTION_MINUTES = 1.5   # a prediction: one vote, then the answer
CHECK_ITEM_MINUTES = 1.25  # one check question, answered on the phone
MAX_CYCLES = 3             # full cycles one lesson holds (the rest of the time teaches)
# Minutes to teach each page's content, without its vote (the quiz step's content is its items).
CONTENT_MINUTES = MappingProxyType({
    "overview": 2.0, "prereq": 4.0, "split": 4.0, "attend": 5.0, "concat": 4.0, "why": 3.0, "myths": 4.0,
    "cross": 4.0, "cost": 4.0, "heads": 4.0, "generate": 3.0, "real": 4.0, QUIZ_PAGE: 0.0, "map": 2.0,
    "glossary": 1.0,
})
VOTE_MINUTES = MappingProxyType({TEACH: 0.0, PREDICTION: PREDICTION_MINUTES, CONCEPTEST: CYCLE_MINUTES})


@dataclass(frozen=True)
class Step:
    """One step of a lesson: the page shown, its planned minutes and, on the quiz step, the check's questions."""

    page: str
    minutes: float
    questions: tuple[str, ...] = ()
    kind: str = TEACH  # what the step asks the class: TEACH, PREDICTION or CONCEPTEST


@dataclass(frozen=True)
class Plan:
    """A lesson: its steps in order, and the pages left for homework (listed for the class, never timed)."""

    steps: tuple[Step, ...]
    homework: tuple[str, ...] = ()

    def total_minutes(self) -> float:
        """The planned length of the whole lesson."""
        return float(sum(s.minutes for s in self.steps))


def default_plan() -> Plan:
    """The 45-minute lesson: the walkthrough with two predictions and two full Peer Instruction cycles, one
    misconception, a check of four bank questions; the real model and the labs as homework."""
    return Plan(tuple(Step(page, float(minutes), DEFAULT_CHECK if page == QUIZ_PAGE else (), kind)
                      for page, minutes, kind in _DEFAULT_STEPS), DEFAULT_HOMEWORK)


def legacy_kind(page: str) -> str:
    """The kind of a step stored before steps had one: a vote page could run a full cycle then, so it still can."""
    return CONCEPTEST if page in VOTE_PAGES else TEACH


def question_ids() -> frozenset[str]:
    """Every bank question id (language-free)."""
    return frozenset(e.id for e in structure()[1])


def plan_to_json(plan: Plan) -> str:
    """The plan as JSON (what the database stores with the class)."""
    return json.dumps({"steps": [{"page": s.page, "minutes": s.minutes, "questions": list(s.questions),
                                  "kind": s.kind} for s in plan.steps],
                       "homework": list(plan.homework)}, ensure_ascii=False, sort_keys=True)


def _minutes_ok(minutes: object) -> bool:
    """A real number of minutes in (0, MAX_MINUTES] (bools and NaN are not numbers here)."""
    return (isinstance(minutes, int | float) and not isinstance(minutes, bool) and math.isfinite(minutes)
            and 0 < minutes <= MAX_MINUTES)


def _step(raw: object, known: frozenset[str]) -> Step:
    """One step read from JSON, checked; LabError lesson_plan_bad when anything is wrong."""
    if not isinstance(raw, dict) or not set(raw) <= {"page", "minutes", "questions", "kind"}:
        raise LabError("lesson_plan_bad", max_steps=MAX_STEPS, max_minutes=MAX_MINUTES)
    page, minutes, questions = raw.get("page"), raw.get("minutes"), raw.get("questions", [])
    if page not in LESSON_PAGES or not _minutes_ok(minutes) or not isinstance(questions, list):
        raise LabError("lesson_plan_bad", max_steps=MAX_STEPS, max_minutes=MAX_MINUTES)
    kind = raw.get("kind", legacy_kind(str(page)))
    if kind not in KINDS or (kind != TEACH and page not in VOTE_PAGES):
        raise LabError("lesson_plan_bad", max_steps=MAX_STEPS, max_minutes=MAX_MINUTES)
    if questions and (page != QUIZ_PAGE or len(set(map(str, questions))) != len(questions)
                      or not all(isinstance(q, str) and q in known for q in questions)):
        raise LabError("lesson_plan_bad", max_steps=MAX_STEPS, max_minutes=MAX_MINUTES)
    return Step(page, float(minutes), tuple(questions), str(kind))


def _homework(raw: object) -> tuple[str, ...]:
    """The homework pages read from JSON: distinct lesson pages; LabError lesson_plan_bad otherwise."""
    if not isinstance(raw, list) or len(set(map(str, raw))) != len(raw) or not all(p in LESSON_PAGES for p in raw):
        raise LabError("lesson_plan_bad", max_steps=MAX_STEPS, max_minutes=MAX_MINUTES)
    return tuple(raw)


def plan_from_json(text: str) -> Plan:
    """The plan stored as JSON; LabError lesson_plan_bad when it is malformed, empty, longer than MAX_STEPS, or a
    step names an unknown page, kind or question, puts questions on a non-quiz step, a vote on a page without
    one, or has minutes outside (0, 120]. A step without a kind (stored before kinds) gets ``legacy_kind``."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        raise LabError("lesson_plan_bad", max_steps=MAX_STEPS, max_minutes=MAX_MINUTES) from None
    steps = data.get("steps") if isinstance(data, dict) else None
    if not isinstance(steps, list) or not 1 <= len(steps) <= MAX_STEPS:
        raise LabError("lesson_plan_bad", max_steps=MAX_STEPS, max_minutes=MAX_MINUTES)
    known = question_ids()
    return Plan(tuple(_step(s, known) for s in steps), _homework(data.get("homework", [])))


def _index(plan: Plan, i: int) -> int:
    """``i`` checked against the plan (a caller's mistake is an IndexError, not a lesson error)."""
    if not 0 <= i < len(plan.steps):
        raise IndexError(f"step {i} is not in a plan of {len(plan.steps)} steps")
    return i


def moved(plan: Plan, i: int, delta: int) -> Plan:
    """Step ``i`` moved by ``delta`` places (negative: earlier), clamped to the plan's ends."""
    steps = list(plan.steps)
    step = steps.pop(_index(plan, i))
    steps.insert(max(0, min(len(steps), i + delta)), step)
    return replace(plan, steps=tuple(steps))


def dropped(plan: Plan, i: int) -> Plan:
    """The plan without step ``i``; LabError lesson_plan_empty when it is the last step left."""
    _index(plan, i)
    if len(plan.steps) == 1:
        raise LabError("lesson_plan_empty")
    return replace(plan, steps=plan.steps[:i] + plan.steps[i + 1:])


def retimed(plan: Plan, i: int, minutes: float) -> Plan:
    """Step ``i`` planned for ``minutes``; LabError lesson_minutes_bad outside (0, MAX_MINUTES]."""
    _index(plan, i)
    if not _minutes_ok(minutes):
        raise LabError("lesson_minutes_bad", max_minutes=MAX_MINUTES)
    steps = list(plan.steps)
    steps[i] = replace(steps[i], minutes=float(minutes))
    return replace(plan, steps=tuple(steps))


def rekinded(plan: Plan, i: int, kind: str) -> Plan:
    """Step ``i`` asking ``kind``; LabError lesson_kind_bad for an unknown kind or a vote on a page without one."""
    _index(plan, i)
    if kind not in KINDS or (kind != TEACH and plan.steps[i].page not in VOTE_PAGES):
        raise LabError("lesson_kind_bad")
    steps = list(plan.steps)
    steps[i] = replace(steps[i], kind=kind)
    return replace(plan, steps=tuple(steps))


def needed_minutes(step: Step) -> float:
    """The minutes a step needs: its page's content, its vote (~5 per full cycle, ~1.5 per prediction) and, on the
    quiz step, its check questions."""
    return CONTENT_MINUTES[step.page] + VOTE_MINUTES[step.kind] + CHECK_ITEM_MINUTES * len(step.questions)


@dataclass(frozen=True)
class Problem:
    """Something in a plan a Peer Instruction teacher would change: a catalog key (``live.<key>``) and its
    parameters."""

    key: str
    params: tuple[tuple[str, object], ...] = ()


def problems(plan: Plan) -> tuple[Problem, ...]:
    """What does not hold in the plan, in step order: a step too short for its content and votes, a full cycle
    before anything was taught (the first step), more than MAX_CYCLES full cycles, a homework page also taught."""
    found = []
    for i, s in enumerate(plan.steps):
        need = needed_minutes(s)
        if s.minutes + 1e-9 < need:
            found.append(Problem("plan_short", (("step", i + 1), ("minutes", f"{need:g}"))))
        if s.kind == CONCEPTEST and i == 0:
            found.append(Problem("plan_cycle_first", (("step", i + 1),)))
    cycles = sum(s.kind == CONCEPTEST for s in plan.steps)
    if cycles > MAX_CYCLES:
        found.append(Problem("plan_cycles", (("n", cycles), ("max", MAX_CYCLES))))
    pages = [s.page for s in plan.steps]
    found.extend(Problem("plan_homework_taught", (("step", pages.index(p) + 1),)) for p in plan.homework
                 if p in pages)
    return tuple(found)


@dataclass(frozen=True)
class Timer:
    """Where the lesson stands against its plan, in seconds."""

    step_elapsed_s: float
    step_planned_s: float
    lesson_elapsed_s: float
    lesson_planned_s: float
    planned_by_now_s: float  # planned seconds of the steps before this one

    @property
    def step_over(self) -> bool:
        """This step has run longer than planned."""
        return self.step_elapsed_s > self.step_planned_s

    @property
    def behind_s(self) -> float:
        """Seconds the lesson is late (> 0) or early (< 0): elapsed against what the plan would have used by now."""
        return self.lesson_elapsed_s - (self.planned_by_now_s + min(self.step_elapsed_s, self.step_planned_s))


def timer(plan: Plan, step: int, step_started_at: float, lesson_started_at: float, now: float) -> Timer:
    """The timer at ``now`` (epoch seconds) for step ``step`` (clamped into the plan); a clock that runs behind
    the start (another replica's) counts as zero elapsed, never negative."""
    step = max(0, min(len(plan.steps) - 1, step))
    return Timer(
        step_elapsed_s=max(0.0, now - step_started_at),
        step_planned_s=plan.steps[step].minutes * 60.0,
        lesson_elapsed_s=max(0.0, now - lesson_started_at),
        lesson_planned_s=plan.total_minutes() * 60.0,
        planned_by_now_s=sum(s.minutes for s in plan.steps[:step]) * 60.0,
    )

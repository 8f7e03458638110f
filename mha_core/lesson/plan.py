"""A lesson plan: the pages a teacher shows, in order, each with its planned minutes; and the timer against it.

Pure (no Streamlit): the plan is stored with the class as JSON (``plan_to_json`` / ``plan_from_json``), edited by
``moved`` / ``dropped`` / ``retimed`` (each returns a new plan), and timed by ``timer`` from wall-clock epochs
that every replica shares.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace

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

# The default check: one bank question per core point of the lesson.
DEFAULT_CHECK: tuple[str, ...] = (
    "d-head",             # the split: d_head = d_model / h (numeric, numbers drawn per student)
    "head-output-shape",  # one head: its n × n softmax weights vs its n × d_head output
    "wo-can",             # W^O fuses the heads (weights and mixes them)
    "budget-fixed",       # d_model fixed: parameters unchanged when h varies
    "why-many-heads",     # why several heads: one softmax distribution each
    "myth-more-heads",    # a misconception: more heads is always better
)
# (page, minutes) of the default 45-minute lesson, in teaching order.
_DEFAULT_STEPS: tuple[tuple[str, float], ...] = (
    ("overview", 3), ("prereq", 5), ("split", 6), ("attend", 7), ("concat", 6), ("why", 5), ("myths", 5),
    ("real", 4), (QUIZ_PAGE, 4),
)


@dataclass(frozen=True)
class Step:
    """One step of a lesson: the page shown, its planned minutes and, on the quiz step, the check's questions."""

    page: str
    minutes: float
    questions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    """A lesson: its steps in order."""

    steps: tuple[Step, ...]

    def total_minutes(self) -> float:
        """The planned length of the whole lesson."""
        return float(sum(s.minutes for s in self.steps))


def default_plan() -> Plan:
    """The 45-minute lesson: the walkthrough's pages, a look at real heads, then a check of six bank questions."""
    return Plan(tuple(Step(page, float(minutes), DEFAULT_CHECK if page == QUIZ_PAGE else ())
                      for page, minutes in _DEFAULT_STEPS))


def question_ids() -> frozenset[str]:
    """Every bank question id (language-free)."""
    return frozenset(e.id for e in structure()[1])


def plan_to_json(plan: Plan) -> str:
    """The plan as JSON (what the database stores with the class)."""
    return json.dumps({"steps": [{"page": s.page, "minutes": s.minutes, "questions": list(s.questions)}
                                 for s in plan.steps]}, ensure_ascii=False, sort_keys=True)


def _minutes_ok(minutes: object) -> bool:
    """A real number of minutes in (0, MAX_MINUTES] (bools and NaN are not numbers here)."""
    return (isinstance(minutes, int | float) and not isinstance(minutes, bool) and math.isfinite(minutes)
            and 0 < minutes <= MAX_MINUTES)


def _step(raw: object, known: frozenset[str]) -> Step:
    """One step read from JSON, checked; LabError lesson_plan_bad when anything is wrong."""
    if not isinstance(raw, dict) or not set(raw) <= {"page", "minutes", "questions"}:
        raise LabError("lesson_plan_bad", max_steps=MAX_STEPS, max_minutes=MAX_MINUTES)
    page, minutes, questions = raw.get("page"), raw.get("minutes"), raw.get("questions", [])
    if page not in LESSON_PAGES or not _minutes_ok(minutes) or not isinstance(questions, list):
        raise LabError("lesson_plan_bad", max_steps=MAX_STEPS, max_minutes=MAX_MINUTES)
    if questions and (page != QUIZ_PAGE or len(set(map(str, questions))) != len(questions)
                      or not all(isinstance(q, str) and q in known for q in questions)):
        raise LabError("lesson_plan_bad", max_steps=MAX_STEPS, max_minutes=MAX_MINUTES)
    return Step(page, float(minutes), tuple(questions))


def plan_from_json(text: str) -> Plan:
    """The plan stored as JSON; LabError lesson_plan_bad when it is malformed, empty, longer than MAX_STEPS, or a
    step names an unknown page or question, puts questions on a non-quiz step, or has minutes outside (0, 120]."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        raise LabError("lesson_plan_bad", max_steps=MAX_STEPS, max_minutes=MAX_MINUTES) from None
    steps = data.get("steps") if isinstance(data, dict) else None
    if not isinstance(steps, list) or not 1 <= len(steps) <= MAX_STEPS:
        raise LabError("lesson_plan_bad", max_steps=MAX_STEPS, max_minutes=MAX_MINUTES)
    known = question_ids()
    return Plan(tuple(_step(s, known) for s in steps))


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
    return Plan(tuple(steps))


def dropped(plan: Plan, i: int) -> Plan:
    """The plan without step ``i``; LabError lesson_plan_empty when it is the last step left."""
    _index(plan, i)
    if len(plan.steps) == 1:
        raise LabError("lesson_plan_empty")
    return Plan(plan.steps[:i] + plan.steps[i + 1:])


def retimed(plan: Plan, i: int, minutes: float) -> Plan:
    """Step ``i`` planned for ``minutes``; LabError lesson_minutes_bad outside (0, MAX_MINUTES]."""
    _index(plan, i)
    if not _minutes_ok(minutes):
        raise LabError("lesson_minutes_bad", max_minutes=MAX_MINUTES)
    steps = list(plan.steps)
    steps[i] = replace(steps[i], minutes=float(minutes))
    return Plan(tuple(steps))


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

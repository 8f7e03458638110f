"""The presenter's moves: start, resume, step, take over, end, and publishing the class's one ``LiveState`` row
(compare-and-set on the version this window saw) whenever the step, page, followed settings or vote change."""

from __future__ import annotations

import time
from dataclasses import replace

import streamlit as st

from mha_core.errors import LabError
from mha_core.lesson import LESSON_PAGES, LiveState, Plan, default_plan, snapshot
from mha_core.ui import present
from mha_core.ui.classdb import storage
from mha_core.ui.live.keys import CONFLICT_KEY, GOTO_KEY, LESSON_QUERY, PLAN_KEY, PRESENTER_KEY, PUBLISHED_KEY
from mha_core.ui.live.session import Lesson, flash, published


def publish(lesson: Lesson, state: LiveState, fresh: bool = False) -> bool:
    """Write the state for every follower; remember what was written. Compare-and-set on the version this window
    last saw (unless ``fresh``: a new lesson), so a stale window never moves the class back: False when another
    window presented since (this window then shows the class's state and publishes nothing until "take over")."""
    ss = st.session_state
    if ss.get(CONFLICT_KEY) and not fresh:
        return False
    seen = None if fresh or PUBLISHED_KEY not in ss else ss[PUBLISHED_KEY][0]
    version = storage().publish_live(lesson.class_id, state, seen)
    if version is None:
        conflict(lesson)
        return False
    ss[PUBLISHED_KEY] = (version, state)
    return True


def conflict(lesson: Lesson) -> None:
    """Another window presents this lesson: show the class's state (its page next) and say so; an ended lesson
    ends here too."""
    ss = st.session_state
    version, state = storage().read_live(lesson.class_id)
    if state is None:
        stop()
        return
    ss[PUBLISHED_KEY] = (version, state)
    ss[CONFLICT_KEY] = True
    ss[GOTO_KEY] = state.page


def on_take_over() -> None:
    """"Take over": present from this window again, from where the class is (its step, page and settings)."""
    ss = st.session_state
    lesson = ss.get(PRESENTER_KEY)
    if not isinstance(lesson, Lesson):
        return
    try:
        version, state = storage().read_live(lesson.class_id)
    except LabError as err:
        flash(err)
        return
    if state is None:
        stop()
        return
    for key, value in state.settings:  # a callback: before the sidebar's widgets are drawn
        ss[key] = value
    ss[PUBLISHED_KEY] = (version, state)
    ss[GOTO_KEY] = state.page
    ss.pop(CONFLICT_KEY, None)


def step_state(plan: Plan, step: int, last: LiveState | None, now: float) -> LiveState:
    """The state of step ``step`` just begun (settings and lesson start carried over)."""
    s = plan.steps[step]
    return LiveState(step=step, page=s.page, settings=snapshot(st.session_state), vote=None, questions=s.questions,
                     step_started_at=now, lesson_started_at=last.lesson_started_at if last else now)


def begin(lesson: Lesson, plan: Plan, state: LiveState) -> None:
    """This session presents ``lesson`` from ``state`` on: presentation mode, and its page next."""
    ss = st.session_state
    ss[PRESENTER_KEY], ss[PLAN_KEY] = lesson, plan
    ss[GOTO_KEY] = state.page
    ss.pop(CONFLICT_KEY, None)
    present.on_start()
    st.query_params[LESSON_QUERY] = lesson.code


def start(lesson: Lesson, plan: Plan) -> None:
    """"Teach live": ``plan`` is saved with the class (so every student and replica counts the same steps) and step
    0 is published."""
    try:
        storage().save_plan(lesson.class_id, plan)
        state = step_state(plan, 0, None, time.time())
        publish(lesson, state, fresh=True)
    except LabError as err:
        flash(err)
        return
    begin(lesson, plan, state)


def on_resume(lesson: Lesson) -> None:
    """Take over the lesson that is running (e.g. after the teacher's browser reloaded), at its step."""
    try:
        version, state = storage().read_live(lesson.class_id)
        plan = storage().load_plan(lesson.class_id) or default_plan()
    except LabError as err:
        flash(err)
        return
    if state is None:
        return
    for key, value in state.settings:  # where the class is: a fresh session (a restart) must not reset h, the sentence
        st.session_state[key] = value
    st.session_state[PUBLISHED_KEY] = (version, state)
    begin(lesson, plan, state)


def on_step(delta: int) -> None:
    """Previous / next step: publish the step's page (its clock starts now) and go there."""
    ss = st.session_state
    plan, last = ss[PLAN_KEY], published()
    step = max(0, min(len(plan.steps) - 1, last.step + delta))
    if step == last.step:
        return
    state = step_state(plan, step, last, time.time())
    try:
        if not publish(ss[PRESENTER_KEY], state):
            return  # another window presents: this one now shows where the class is
    except LabError as err:
        flash(err)
        return
    ss[GOTO_KEY] = state.page


def on_end() -> None:
    """End the lesson: students stop following; this session stops presenting."""
    ss = st.session_state
    lesson = ss.get(PRESENTER_KEY)
    try:
        if isinstance(lesson, Lesson):
            storage().end_live(lesson.class_id)
    except LabError as err:
        flash(err)
        return
    stop()


def stop() -> None:
    """This session stops presenting."""
    for key in (PRESENTER_KEY, PLAN_KEY, PUBLISHED_KEY, GOTO_KEY, CONFLICT_KEY):
        st.session_state.pop(key, None)
    st.query_params.pop(LESSON_QUERY, None)
    present.stop()


def _step_of(plan: Plan, page: str, step: int) -> int:
    """The step that shows ``page``: this one, else the next one that does, else the first; else unchanged."""
    order = [*range(step, len(plan.steps)), *range(0, step)]
    return next((i for i in order if plan.steps[i].page == page), step)


def sync(current_key: str) -> None:
    """Publish when the page (the teacher navigated) or a followed setting changed; a vote ends with its page."""
    ss = st.session_state
    if ss.get(CONFLICT_KEY):  # another window presents: this one changes nothing until it takes over
        return
    lesson, plan, last = ss[PRESENTER_KEY], ss[PLAN_KEY], published()
    new = last
    if current_key != last.page and current_key in LESSON_PAGES:
        step = _step_of(plan, current_key, last.step)
        questions = plan.steps[step].questions if plan.steps[step].page == current_key else ()
        new = replace(new, step=step, page=current_key, vote=None, questions=questions,
                      step_started_at=time.time() if step != last.step else last.step_started_at)
    settings = snapshot(ss)
    if settings != new.settings:
        new = replace(new, settings=settings)
    if new != last:
        publish(lesson, new)


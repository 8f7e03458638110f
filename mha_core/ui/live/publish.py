"""The presenter's moves: start, resume, step, take over, end, and publishing the class's one ``LiveState`` row
(compare-and-set on the version this window saw) whenever the step, page, followed settings or vote change."""

from __future__ import annotations

import time

import streamlit as st

from mha_core.errors import LabError
from mha_core.lesson import LiveState, Plan, default_plan, snapshot
from mha_core.lesson.presenter import Lesson, Presenter, moved_step, step_state, synced
from mha_core.lesson.store import load_plan, publish_live, read_live, save_plan
from mha_core.ui import present
from mha_core.ui.class_services import storage
from mha_core.ui.live.keys import LESSON_QUERY, PRESENTER_KEY
from mha_core.ui.live.session import flash, presenter


def _keep(p: Presenter) -> None:
    st.session_state[PRESENTER_KEY] = p


def publish(state: LiveState) -> bool:
    """Write the state for every follower; remember what was written. Compare-and-set on the version this window
    last saw, so a stale window never moves the class back: False when another window presented since (this window
    then shows the class's state and publishes nothing until "take over")."""
    p = presenter()
    if p is None or p.conflict:
        return False
    for _ in range(2):  # again only after taking back this window's own write whose record was lost
        _keep(p.publishing(state))  # before the write: the record after it may never happen (Presenter.own)
        version = publish_live(storage(), p.class_id, state, p.version)
        if version is not None:
            _keep(p.published(version, state))
            return True
        latest, current = read_live(storage(), p.class_id)
        if not p.own(latest, current):
            break
        p = p.published(latest, current)
        if current == state:
            _keep(p)
            return True
    conflict(p)
    return False


def conflict(p: Presenter) -> None:
    """Another window presents this lesson: show the class's state (its page next) and say so; an ended lesson
    ends here too. A version that is this window's own lost write is taken back, not a conflict."""
    version, state = read_live(storage(), p.class_id)
    if state is None:
        stop()
        return
    _keep(p.published(version, state) if p.own(version, state) else p.outrun(version, state))


def on_take_over() -> None:
    """"Take over": present from this window again, from where the class is (its step, page and settings)."""
    p = presenter()
    if p is None:
        return
    try:
        version, state = read_live(storage(), p.class_id)
    except LabError as err:
        flash(err)
        return
    if state is None:
        stop()
        return
    for key, value in state.settings:  # a callback: before the sidebar's widgets are drawn
        st.session_state[key] = value
    _keep(p.taken_over(version, state))


def begin(p: Presenter) -> None:
    """This session presents from ``p`` on: presentation mode, and its page next."""
    _keep(p)
    present.on_start()
    st.query_params[LESSON_QUERY] = p.code


def start(lesson: Lesson, plan: Plan) -> None:
    """"Teach live": ``plan`` is saved with the class (so every student and replica counts the same steps) and step
    0 is published (a new lesson: no compare-and-set)."""
    try:
        save_plan(storage(), lesson.class_id, plan)
        state = step_state(plan, 0, None, snapshot(st.session_state), time.time())
        version = publish_live(storage(), lesson.class_id, state, None)
    except LabError as err:
        flash(err)
        return
    begin(Presenter.begin(lesson, plan, version, state))


def on_resume(lesson: Lesson) -> None:
    """Take over the lesson that is running (e.g. after the teacher's browser reloaded), at its step."""
    try:
        version, state = read_live(storage(), lesson.class_id)
        plan = load_plan(storage(), lesson.class_id) or default_plan()
    except LabError as err:
        flash(err)
        return
    if state is None:
        return
    for key, value in state.settings:  # where the class is: a fresh session (a restart) must not reset h, the sentence
        st.session_state[key] = value
    begin(Presenter.begin(lesson, plan, version, state))


def on_step(delta: int, drawn_at: int) -> None:
    """Previous / next step from the step the bar was drawn at: publish the step's page (its clock starts now) and
    go there."""
    p = presenter()
    if p is None:
        return
    step = moved_step(p.plan, p.state, delta, drawn_at)
    if step == p.state.step:
        return
    state = step_state(p.plan, step, p.state, snapshot(st.session_state), time.time())
    try:
        if not publish(state):
            return  # another window presents: this one now shows where the class is
    except LabError as err:
        flash(err)
        return
    _keep(presenter().going(state.page))


def on_end() -> None:
    """End the lesson: students stop following; this session stops presenting."""
    p = presenter()
    try:
        if p is not None:
            storage().end_live(p.class_id)
    except LabError as err:
        flash(err)
        return
    stop()


def stop() -> None:
    """This session stops presenting."""
    st.session_state.pop(PRESENTER_KEY, None)
    st.query_params.pop(LESSON_QUERY, None)
    present.stop()


def sync(current_key: str) -> None:
    """Publish when the page (the teacher navigated) or a followed setting changed; a vote ends with its page."""
    p = presenter()
    if p is None or p.conflict:  # another window presents: this one changes nothing until it takes over
        return
    new = synced(p.plan, p.state, current_key, snapshot(st.session_state), time.time())
    if new != p.state:
        publish(new)

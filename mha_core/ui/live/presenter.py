"""The presenter's bar: step, timer against the plan, previous / next, who follows and the join code; and the
warning with "take over" when another window presents."""

from __future__ import annotations

import time

import streamlit as st

from mha_core.classroom import pretty
from mha_core.errors import LabError
from mha_core.lesson import LiveState, Plan, timer
from mha_core.lesson.presenter import Lesson
from mha_core.lesson.store import read_live
from mha_core.ui import render
from mha_core.ui.class_services import storage
from mha_core.ui.i18n import t
from mha_core.ui.join import join_link, qr_png, turnout
from mha_core.ui.live.keys import BAR_KEY, END_KEY, FLASH_KEY, NEXT_KEY, PRESENTER_KEY, PREV_KEY, TAKE_OVER_KEY
from mha_core.ui.live.publish import conflict, on_end, on_step, on_take_over, sync
from mha_core.ui.live.session import go, presenter

COUNT_POLL_S = 1.0    # the presenter's live count of votes and its clock
ON_TIME_S = 60.0      # within a minute of the plan counts as on time


def _clock(seconds: float) -> str:
    """m:ss (minutes may exceed 59)."""
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 60}:{seconds % 60:02d}"


def presenter_bar(current_key: str) -> None:
    """The presenter's run: switch to the page its last move named, publish what changed, draw the bar."""
    p = presenter()
    st.session_state[PRESENTER_KEY] = p.going(None)
    if p.goto is not None and p.goto != current_key:
        go(p.goto)
    try:
        sync(current_key)
    except LabError as err:
        render.show_error(err)
    p = presenter()
    if p is None:  # the lesson ended in another window
        st.rerun()
    if p.goto not in (None, current_key):  # another window moved the class: show its page
        st.rerun()
    render.show_flash(FLASH_KEY)
    lesson, plan, state, stale = p.lesson, p.plan, p.state, p.conflict
    with st.container(border=True, key=BAR_KEY):
        if stale:
            _other_window(plan, state)
        _presenter_clock(lesson, current_key)
        turnout(lesson.class_id)  # joined and voted: a flood of fake students shows on the projector
        cols = st.columns([1, 1, 1, 1])
        cols[0].button(t("live.prev"), key=PREV_KEY, icon=":material/skip_previous:", on_click=on_step,
                       args=(-1, state.step), disabled=stale or state.step == 0, width="stretch")
        last_step = state.step >= len(plan.steps) - 1
        cols[1].button(t("live.next"), key=NEXT_KEY, icon=":material/skip_next:", type="primary", on_click=on_step,
                       args=(1, state.step), disabled=stale or last_step, width="stretch")
        with cols[2].popover(t("live.join_button"), icon=":material/qr_code_2:", width="stretch"):
            join_card(lesson, qr_width=260)
        cols[3].button(t("live.end"), key=END_KEY, icon=":material/stop_circle:", on_click=on_end,
                       width="stretch")
    if state.step == 0:  # while students arrive
        with st.container(border=True):
            join_card(lesson, qr_width=300)


def _other_window(plan: Plan, state: LiveState) -> None:
    """Another window presents: where the class is, and the explicit "take over"."""
    left, right = st.columns([3, 1], vertical_alignment="center")
    left.warning(t("live.other_window", i=state.step + 1, n=len(plan.steps), page=t(f"nav.{state.page}")),
                 icon=":material/devices:")
    right.button(t("live.take_over"), key=TAKE_OVER_KEY, type="primary", icon=":material/swap_horiz:",
                 on_click=on_take_over, width="stretch", help=t("live.take_over_help"))


def join_card(lesson: Lesson, qr_width: int) -> None:
    """The join code and QR code (teacher's helpers), side by side."""

    link = join_link(lesson.code)
    left, right = st.columns([3, 2], vertical_alignment="center")
    with left:
        st.caption(t("classroom.join_code"))
        st.header(pretty(lesson.code), anchor=False)
        st.code(link, language=None)
    right.image(qr_png(link), width=qr_width)


@st.fragment(run_every=COUNT_POLL_S)
def _presenter_clock(lesson: Lesson, current_key: str) -> None:
    """Step, timer against the plan and who follows; ticks every second (and publishes a late setting change)."""
    p = presenter()
    if p is None:
        return
    stale = p.conflict
    try:
        sync(current_key)
        p = presenter()
        if p is not None and not p.conflict and read_live(storage(), p.class_id)[0] != p.version:
            conflict(p)  # another window presented since: say so now, not at the next click
        following_n, present_n = storage().presence(lesson.class_id)
    except LabError as err:
        render.show_error(err)
        following_n = present_n = None
    p = presenter()
    if p is None or p.conflict != stale:
        st.rerun(scope="app")  # the whole bar and page change: ended, or another window presents
    plan, state = p.plan, p.state
    step = min(state.step, len(plan.steps) - 1)
    clock = timer(plan, step, state.step_started_at, state.lesson_started_at, time.time())
    cols = st.columns([3, 3, 2], vertical_alignment="center")
    cols[0].markdown(t("live.step_of", i=step + 1, n=len(plan.steps), page=t(f"nav.{plan.steps[step].page}")))
    if state.page != plan.steps[step].page:
        cols[0].caption(t("live.off_plan", page=t(f"nav.{state.page}")))
    step_line = t("live.timer_step", elapsed=_clock(clock.step_elapsed_s), planned=_clock(clock.step_planned_s))
    lesson_line = t("live.timer_lesson", elapsed=_clock(clock.lesson_elapsed_s),
                    planned=_clock(clock.lesson_planned_s))
    cols[1].markdown(f"{step_line}  \n{lesson_line}")
    behind = clock.behind_s
    if behind > ON_TIME_S:
        cols[1].markdown(f":orange[{t('live.behind', minutes=round(behind / 60))}]")
    elif behind < -ON_TIME_S:
        cols[1].markdown(f":blue[{t('live.ahead', minutes=round(-behind / 60))}]")
    else:
        cols[1].markdown(f":green[{t('live.on_time')}]")
    if present_n is not None:
        cols[2].metric(t("live.following_label"), t("live.following", x=following_n, y=present_n))

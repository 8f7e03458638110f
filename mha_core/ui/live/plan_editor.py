"""The teacher's lesson plan on the class page: reorder, drop, retime, add, reset, save, and "Teach live"."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from mha_core.errors import LabError
from mha_core.lesson import (
    KINDS,
    LESSON_PAGES,
    MAX_MINUTES,
    MAX_STEPS,
    PREDICTION,
    TEACH,
    VOTE_PAGES,
    Plan,
    Step,
    default_plan,
    dropped,
    moved,
    problems,
    rekinded,
    retimed,
)
from mha_core.lesson.plan import QUIZ_PAGE
from mha_core.lesson.presenter import Lesson
from mha_core.lesson.store import load_plan, read_live, save_plan
from mha_core.ui import render
from mha_core.ui.class_services import storage
from mha_core.ui.i18n import bound_t, t
from mha_core.ui.live.keys import (
    ADD_KEY,
    ADD_PAGE_KEY,
    EDIT_KEY,
    FLASH_KEY,
    RESET_KEY,
    RESUME_KEY,
    SAVE_KEY,
    START_KEY,
    kind_key,
    minutes_key,
    step_button_key,
)
from mha_core.ui.live.publish import on_resume, start
from mha_core.ui.live.session import flash, presenting
from mha_core.ui.nav import PAGES

# Widget values that survive switching pages (state.keep, by the class page that draws the plan editor): the page
# chosen for a new step.
KEPT: dict[str, object] = {ADD_PAGE_KEY: LESSON_PAGES[0]}

NEW_STEP_MINUTES = 5.0


def _minutes(value: float) -> str:
    """Minutes as written in the plan: 5, 2.5."""
    return f"{value:g}"


def _edited(class_id: int) -> Plan:
    """The plan in the editor for this class: as edited in this session, else the saved one, else the default."""
    ss = st.session_state
    edit = ss.get(EDIT_KEY)
    if edit and edit[0] == class_id:
        return edit[1]
    try:
        plan = load_plan(storage(), class_id) or default_plan()
    except LabError as err:
        flash(err)
        plan = default_plan()
    ss[EDIT_KEY] = (class_id, plan)
    return plan


def _set_edited(class_id: int, plan: Plan) -> None:
    st.session_state[EDIT_KEY] = (class_id, plan)


def _on_move(class_id: int, i: int, delta: int) -> None:
    _set_edited(class_id, moved(_edited(class_id), i, delta))


def _on_drop(class_id: int, i: int) -> None:
    try:
        _set_edited(class_id, dropped(_edited(class_id), i))
    except LabError as err:
        flash(err)


def _on_retime(class_id: int, i: int) -> None:
    try:
        _set_edited(class_id, retimed(_edited(class_id), i, float(st.session_state[minutes_key(i)])))
    except (LabError, TypeError, ValueError) as err:
        flash(err if isinstance(err, LabError) else LabError("lesson_minutes_bad", max_minutes=MAX_MINUTES))


def _on_add(class_id: int) -> None:
    plan = _edited(class_id)
    page = st.session_state.get(ADD_PAGE_KEY) or LESSON_PAGES[0]
    if len(plan.steps) >= MAX_STEPS:
        return
    check = next((s.questions for s in default_plan().steps if s.page == QUIZ_PAGE), ()) if page == QUIZ_PAGE else ()
    kind = PREDICTION if page in VOTE_PAGES else TEACH
    _set_edited(class_id, replace(plan, steps=(*plan.steps, Step(page, NEW_STEP_MINUTES, check, kind))))


def _on_kind(class_id: int, i: int) -> None:
    try:
        _set_edited(class_id, rekinded(_edited(class_id), i, str(st.session_state[kind_key(i)])))
    except LabError as err:
        flash(err)


def _on_reset(class_id: int) -> None:
    _set_edited(class_id, default_plan())


def _on_start(lesson: Lesson) -> None:
    """"Teach live" with the plan being edited (read at the click: a retime in the same rerun counts)."""
    start(lesson, _edited(lesson.class_id))


def _on_save(class_id: int) -> None:
    try:
        save_plan(storage(), class_id, _edited(class_id))
    except LabError as err:
        flash(err)
        return
    st.toast(t("live.plan_saved"), icon=":material/save:")


def plan_card(class_id: int, code: str) -> None:
    """For the teacher's view: the class's lesson plan (reorder, drop, retime, add, reset, save) and Teach live."""
    ss = st.session_state
    plan = _edited(class_id)
    lesson = Lesson(class_id, code)
    bound = bound_t()
    shown = [p.key for p in PAGES if p.key in LESSON_PAGES]
    with st.container(border=True, key="live_plan"):
        st.subheader(t("live.plan_title"), anchor=False)
        st.caption(t("live.plan_lead"))
        n = len(plan.steps)
        for i, s in enumerate(plan.steps):
            cols = st.columns([0.5, 3, 2.4, 1.6, 0.7, 0.7, 0.7], vertical_alignment="center")
            cols[0].markdown(f"**{i + 1}**")
            name = t(f"nav.{s.page}")
            if s.questions:
                name = t("live.check_step", page=name, n=len(s.questions))
            cols[1].markdown(name)
            ss[minutes_key(i)] = float(s.minutes)
            if s.page in VOTE_PAGES:
                ss[kind_key(i)] = s.kind
                cols[2].selectbox(t("pi.kind_label"), KINDS, key=kind_key(i), on_change=_on_kind, args=(class_id, i),
                                  format_func=lambda k: bound(f"pi.kind_{k}"), label_visibility="collapsed")
            else:
                cols[2].caption(t("pi.kind_teach"))
            cols[3].number_input(t("live.minutes"), min_value=0.5, max_value=float(MAX_MINUTES), step=0.5,
                                 key=minutes_key(i), on_change=_on_retime, args=(class_id, i),
                                 label_visibility="collapsed", format="%g")
            cols[4].button("", key=step_button_key("up", i), icon=":material/arrow_upward:", disabled=i == 0,
                           on_click=_on_move, args=(class_id, i, -1), help=t("live.up"))
            cols[5].button("", key=step_button_key("down", i), icon=":material/arrow_downward:",
                           disabled=i == n - 1, on_click=_on_move, args=(class_id, i, 1), help=t("live.down"))
            cols[6].button("", key=step_button_key("drop", i), icon=":material/delete:", disabled=n == 1,
                           on_click=_on_drop, args=(class_id, i), help=t("live.drop"))
        st.markdown(t("live.plan_total", minutes=_minutes(plan.total_minutes()), n=n))
        for problem in problems(plan):  # Peer Instruction's timing (lesson.plan.problems)
            st.warning(t(f"pi.{problem.key}", **dict(problem.params)), icon=":material/schedule:")
        if plan.homework:
            st.caption(f"**{t('pi.homework_title')}** · "
                       + t("pi.homework_lead", pages=t("pi.list_sep").join(t(f"nav.{p}") for p in plan.homework)))
        add = st.columns([3, 2], vertical_alignment="bottom")
        if ss.get(ADD_PAGE_KEY) not in shown:
            ss[ADD_PAGE_KEY] = shown[0]
        add[0].selectbox(t("live.add_page"), shown, key=ADD_PAGE_KEY, format_func=lambda k: bound(f"nav.{k}"))
        add[1].button(t("live.add"), key=ADD_KEY, icon=":material/add:", on_click=_on_add, args=(class_id,),
                      disabled=n >= MAX_STEPS, width="stretch")
        row = st.columns(3)
        row[0].button(t("live.save"), key=SAVE_KEY, icon=":material/save:", on_click=_on_save, args=(class_id,),
                      width="stretch")
        row[1].button(t("live.reset"), key=RESET_KEY, icon=":material/restart_alt:", on_click=_on_reset,
                      args=(class_id,), width="stretch")
        row[2].button(t("live.start"), key=START_KEY, type="primary", icon=":material/cast_for_education:",
                      on_click=_on_start, args=(lesson,), width="stretch", help=t("live.start_help"))
        try:
            running = read_live(storage(), class_id)[1]
        except LabError:
            running = None
        if running is not None and not presenting():
            st.info(t("live.running", step=running.step + 1, page=t(f"nav.{running.page}")), icon=":material/cast:")
            st.button(t("live.resume"), key=RESUME_KEY, icon=":material/play_arrow:", on_click=on_resume,
                      args=(lesson,))
        render.show_flash(FLASH_KEY)

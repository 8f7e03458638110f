"""The projector (presentation mode) of a live lesson this session no longer presents (a reload or a restart lost
the session): it says the lesson runs and offers to resume it."""

from __future__ import annotations

import streamlit as st

from mha_core.classroom import pretty
from mha_core.errors import LabError
from mha_core.lesson import LiveState
from mha_core.lesson.presenter import Lesson
from mha_core.lesson.store import read_live
from mha_core.ui import present, render
from mha_core.ui.class_services import storage
from mha_core.ui.i18n import t
from mha_core.ui.live.keys import (
    FLASH_KEY,
    LESSON_QUERY,
    PROJECTOR_LOGIN_KEY,
    PROJECTOR_RESUME_KEY,
    ROLE_KEY,
    TEACH_CODE_KEY,
    TEACHER_KEY,
)
from mha_core.ui.live.publish import on_resume
from mha_core.ui.live.session import go


def _projector_class() -> tuple[Lesson, LiveState] | None:
    """The class whose live lesson this projector window presented (its address, else the logged-in teacher's
    class) when that lesson still runs."""
    ss = st.session_state
    code = st.query_params.get(LESSON_QUERY) or (ss.get(TEACH_CODE_KEY) if ss.get(TEACHER_KEY) else None)
    if not code:
        return None
    try:
        info = storage().find_class(str(code))
        state = read_live(storage(), info.id)[1]
    except LabError:  # a stale or mistyped address, or no database: nothing to resume here
        return None
    return None if state is None else (Lesson(info.id, info.code), state)


def projector() -> None:
    """The projector (presentation mode) while its class's live lesson runs but this session does not present it
    (a reload or a restart lost the session): say so, since its Next would move only this screen, and offer to
    resume (the logged-in teacher at once; else log in on the class page, whose plan offers to take over)."""
    found = _projector_class()
    if found is None:
        return
    lesson, state = found
    with st.container(border=True):
        st.warning(t("live.projector_running", code=pretty(lesson.code), i=state.step + 1,
                     page=t(f"nav.{state.page}")), icon=":material/cast:")
        if st.session_state.get(TEACHER_KEY):
            st.button(t("live.projector_resume"), key=PROJECTOR_RESUME_KEY, type="primary",
                      icon=":material/play_arrow:", on_click=on_resume, args=(lesson,))
        elif st.button(t("live.projector_login"), key=PROJECTOR_LOGIN_KEY, type="primary", icon=":material/key:",
                       help=t("live.projector_login_help")):
            ss = st.session_state
            ss[ROLE_KEY], ss[TEACH_CODE_KEY] = "teacher", lesson.code
            present.stop()
            go("classroom")
        render.show_flash(FLASH_KEY)

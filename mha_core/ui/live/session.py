"""Who this session is in a live lesson (presenter, following member, neither) and the wing's small shared helpers."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from mha_core.classroom import Member
from mha_core.errors import LabError
from mha_core.lesson import LiveState
from mha_core.lesson.plan import QUIZ_PAGE
from mha_core.ui import render, student
from mha_core.ui.live.keys import FLASH_KEY, FOLLOW_KEY, PAGE_KEY, PRESENTER_KEY, PUBLISHED_KEY, SEEN_KEY
from mha_core.ui.nav import spec


@dataclass(frozen=True)
class Lesson:
    """The class a presenter teaches live."""

    class_id: int
    code: str


@dataclass(frozen=True)
class Seen:
    """A member's last read of their class's live state."""

    class_id: int
    version: int
    state: LiveState | None


def flash(err: LabError) -> None:
    render.flash(FLASH_KEY, err)


def _script(page: str) -> str:
    return spec(page).script


def go(page: str) -> None:
    """Switch to ``page``, keeping the address's parameters (the class, the student, presenting)."""
    st.switch_page(_script(page), query_params=st.query_params.to_dict())


# --- who this session is in a live lesson ---

def presenting() -> bool:
    """This session presents a live lesson (app.py keeps its sidebar: the settings are what students follow)."""
    return isinstance(st.session_state.get(PRESENTER_KEY), Lesson)


def member() -> Member | None:
    m = st.session_state.get(student.MEMBER_KEY)
    return m if isinstance(m, Member) else None


def following() -> bool:
    """This member follows the teacher (not exploring on their own)."""
    return bool(st.session_state.get(FOLLOW_KEY, True))


def live_seen() -> LiveState | None:
    """The live state of the member's class as last read, when this session is still in that class."""
    seen, m = st.session_state.get(SEEN_KEY), member()
    if not isinstance(seen, Seen) or m is None or seen.class_id != m.class_id:
        return None
    return seen.state


def published() -> LiveState | None:
    pub = st.session_state.get(PUBLISHED_KEY)
    return pub[1] if pub else None


def active_vote_role() -> str | None:
    """"teacher" for the presenter, "student" for a following member of a live class, else None (render.predict
    then asks as usual)."""
    if presenting() and published() is not None:
        return "teacher"
    if member() is not None and following() and live_seen() is not None:
        return "student"
    return None


def current_page() -> str:
    """The page this run shows (set by ``frame``)."""
    return str(st.session_state.get(PAGE_KEY, ""))


def check_questions() -> tuple[str, ...]:
    """On the lesson's check step, the question ids the quiz shows (for the presenter and following students)."""
    if presenting():
        state = published()
    elif member() is not None and following():
        state = live_seen()
    else:
        state = None
    if state is None or state.page != QUIZ_PAGE:
        return ()
    return state.questions

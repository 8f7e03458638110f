"""Who this session is in a live lesson (presenter, following member, neither), its one ``Presenter`` or
``Follower`` value, and the wing's small shared helpers."""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from mha_core.classroom import Member
from mha_core.errors import LabError
from mha_core.lesson import LiveState
from mha_core.lesson.follow import Follower
from mha_core.lesson.plan import QUIZ_PAGE
from mha_core.lesson.presenter import Lesson as Lesson  # re-exported: cycle.py reads it from here
from mha_core.lesson.presenter import Presenter
from mha_core.ui import render, shared_body, student
from mha_core.ui.live.keys import FLASH_KEY, FOLLOWER_KEY, PAGE_KEY, PRESENTER_KEY
from mha_core.ui.nav import spec


def flash(err: LabError) -> None:
    """Leave ``err`` for the next run to show once (callbacks cannot draw)."""
    render.flash(FLASH_KEY, err)


def _script(page: str) -> str:
    """The script file of a page key."""
    return spec(page).script


def go(page: str) -> None:
    """Switch to ``page``, keeping the address's parameters (the class, the student, presenting)."""
    st.switch_page(_script(page), query_params=st.query_params.to_dict())


def fragment_run() -> bool:
    """This run is a fragment's own (a poll, a ballot's choice or send), not the page's."""
    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.fragment_ids_this_run)


def presenter() -> Presenter | None:
    """The lesson this session presents (None: it presents none)."""
    p = st.session_state.get(PRESENTER_KEY)
    return p if isinstance(p, Presenter) else None


def presenting() -> bool:
    """This session presents a live lesson (app.py keeps its sidebar: the settings are what students follow)."""
    return presenter() is not None


def member() -> Member | None:
    """The class member this session is (None: not in a class)."""
    m = st.session_state.get(student.MEMBER_KEY)
    return m if isinstance(m, Member) else None


def follower() -> Follower:
    """What this session knows of following its class's live lesson (a fresh one before the first poll)."""
    f = st.session_state.get(FOLLOWER_KEY)
    return f if isinstance(f, Follower) else Follower()


def set_follower(f: Follower) -> None:
    """Keep the session's new ``Follower``."""
    st.session_state[FOLLOWER_KEY] = f


def following() -> bool:
    """This member follows the teacher (not exploring on their own)."""
    return follower().following


def live_seen() -> LiveState | None:
    """The live state of the member's class as last read, when this session is still in that class."""
    m = member()
    return None if m is None else follower().live(m.class_id)


def published() -> LiveState | None:
    """The live state this presenter published (or read) last; None when it presents nothing."""
    p = presenter()
    return None if p is None else p.state


def active_vote_role() -> str | None:
    """"teacher" for the presenter, "student" for a following member of a live class, else None (render.predict
    then asks as usual)."""
    if presenting() and published() is not None:
        return "teacher"
    if member() is not None and following() and live_seen() is not None:
        return "student"
    return None


def class_view() -> shared_body.View | None:
    """For app.py: a following member's class and the live state this run shows (what may be shared with every
    classmate whose session holds the same), or None (presenting, exploring, not in a live class)."""
    m = member()
    if m is None or presenting() or not following():
        return None
    state = live_seen()
    return None if state is None else shared_body.View(m.class_id, state,
                                                       frozenset({student.MEMBER_KEY, FOLLOWER_KEY}))


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

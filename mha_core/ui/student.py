"""The student, as both the quiz and the class page know them: their id (computed here only), their quiz progress
in the database, their class membership, and the hooks the quiz calls in a class (the banner, whether
explanations show, why the class refused an answer).

Display names are user text: they are only ever drawn with ``st.text`` or inside a dataframe, never as markdown or
HTML, and without bidirectional overrides.
"""

from __future__ import annotations

import math
import time

import streamlit as st

from mha_core.classroom import ClassInfo, Member, SaveOutcome, clean_name, normalize_code, pretty, shown_name
from mha_core.errors import LabError
from mha_core.quiz.progress_store import ProgressStore, new_student_id, valid_student_id
from mha_core.ui import render
from mha_core.ui.class_services import join_limiter, source_address, storage
from mha_core.ui.i18n import t
from mha_core.ui.shared_reads import shared

STUDENT_KEY = "quiz_student"      # session: this student's id (the key to their progress and membership)
MEMBER_KEY = "classroom_member"   # session: Member once joined
JOINED_KEY = "classroom_joined"   # session: class codes this session joined (only they may rename)
REVEAL_KEY = "classroom_reveal"   # session: whether this student's class shows explanations
FLASH_KEY = "classroom_flash"     # session: a LabError a class callback left, to show once
TOLD_REMOVED_KEY = "classroom_told_removed"  # session: (class, time) of a removal just shown (not twice a run)
TOLD_FOR_S = 2.0
STUDENT_PARAM = "student"         # URL: ?student=<id> brings the progress back after a reload
CLASS_PARAM = "class"             # URL: ?class=<code> opens the class page's join form (and restores membership)


def student_id() -> str:
    """This session's student id: the session's, else a valid one from the URL, else a new one."""
    ss = st.session_state
    if not valid_student_id(ss.get(STUDENT_KEY)):
        from_url = st.query_params.get(STUDENT_PARAM)
        ss[STUDENT_KEY] = from_url if valid_student_id(from_url) else new_student_id()
    return ss[STUDENT_KEY]


def progress_store() -> ProgressStore:
    """Every student's progress, in the class database (survives reloads, restarts, replicas and cache clears)."""
    return ProgressStore(storage())


def flash(err: LabError) -> None:
    """Leave the student's message for the next run (callbacks cannot draw)."""
    render.flash(FLASH_KEY, err)


def show_flash() -> None:
    """Show the student's message a callback left, once."""
    render.show_flash(FLASH_KEY)


# --- membership ---

SHARED_S = 0.3  # a process's following students share one read of their class's removed keys for this long


def _removed_in(class_id: int, window: int) -> frozenset[str]:
    """The class's removed keys as read once in this time window (shared by the process's students)."""
    return shared(("removed", class_id), window, lambda: storage().removed_keys(class_id))


def member(shared: bool = False) -> Member | None:
    """The class this session belongs to: from the session, else restored from ?class=…&student=… after a reload.
    A student the teacher removed is told so here (on whatever page they are, the live lesson's too) and is no
    longer a member: one indexed read per full run, none in the live lesson's polls. ``shared`` (a student following
    a live lesson, redrawn with the class at each move): the class's removed keys read once per SHARED_S for all the
    process's students, instead of one read per student with the class's turn held."""
    ss = st.session_state
    if isinstance(ss.get(MEMBER_KEY), Member):
        m = ss[MEMBER_KEY]
        try:
            removed = (m.key in _removed_in(m.class_id, int(time.time() / SHARED_S)) if shared
                       else storage().was_removed(m.class_id, m.key))
        except LabError:  # the database cannot say: keep the membership (its own calls report the trouble)
            return m
        if not removed:
            return m
        for key in (MEMBER_KEY, REVEAL_KEY):
            ss.pop(key, None)
        render.show_error(LabError("class_removed", code=m.code))
        ss[TOLD_REMOVED_KEY] = (m.code, time.time())
        return None
    code, key = st.query_params.get(CLASS_PARAM), st.query_params.get(STUDENT_PARAM)
    if not code or not key or normalize_code(code) is None:
        return None
    try:
        found = storage().member(code, key)
    except LabError:
        return None
    if found is not None:
        ss[MEMBER_KEY] = found
    return found


def join(code_text: str, name_text: str) -> Member:
    """Join a class under this student's id; answers graded before joining count for the class too. A name
    changes only for the session that joined with this key (not for whoever has the link). A new student takes a
    token from the class's and this address's join limits (coming back takes none). LabError if refused."""
    ss = st.session_state
    joined = ss.setdefault(JOINED_KEY, set())
    info = storage().find_class(code_text)
    if info.anonymous:
        name_text = ""  # an anonymous class takes no name: what was typed never reaches the store
    else:
        clean_name(name_text)  # a name that cannot be one costs no join
    if not storage().is_member(info.id, student_id()):
        if info.closed:  # said before any token is taken (Storage.join checks both again, atomically)
            raise LabError("class_closed", code=info.code)
        if info.locked:
            raise LabError("class_locked", code=info.code)
        wait = join_limiter().take(info.id, source_address())
        if wait > 0:
            raise LabError("class_join_wait", seconds=math.ceil(wait))
    m = storage().join(code_text, student_id(), name_text, rename=normalize_code(code_text) in joined)
    ss[MEMBER_KEY] = m
    joined.add(m.code)
    for g in progress_store().get(m.key).grades:  # a stored answer is never changed
        storage().record(m, g.question_id, g.canonical, g.correct, replace=False)
    return m


def leave() -> None:
    """Leave the class (the quiz id and its progress stay)."""
    for key in (MEMBER_KEY, REVEAL_KEY):
        st.session_state.pop(key, None)
    st.query_params.pop(CLASS_PARAM, None)


def keep_class_in_url(m: Member) -> None:
    """Write ?class=CODE&student=ID so that a reload finds the class and this student again (without the id a
    reload of the class page made a new student, whose own name was then taken)."""
    if st.query_params.get(CLASS_PARAM) != m.code:
        st.query_params[CLASS_PARAM] = m.code
    if st.query_params.get(STUDENT_PARAM) != m.key:
        st.query_params[STUDENT_PARAM] = m.key


def gone_link() -> LabError | None:
    """Why a link's class cannot be restored (after a reload or a restart): the class is no longer in the database
    (class_gone), or the teacher removed this student from it (class_removed); None otherwise."""
    code, key = st.query_params.get(CLASS_PARAM), st.query_params.get(STUDENT_PARAM)
    if not code or normalize_code(code) is None or not valid_student_id(key):
        return None
    try:
        info = storage().find_class(code)
        removed = storage().was_removed(info.id, key)
    except LabError as err:
        return LabError("class_gone", code=normalize_code(code)) if err.key == "class_code_unknown" else None
    return LabError("class_removed", code=info.code) if removed else None


def show_gone_link() -> None:
    """Say so when the link names a class that is no longer in the database, or one this student was removed
    from."""
    gone = gone_link()
    code, at = st.session_state.pop(TOLD_REMOVED_KEY, (None, 0.0))
    told = code is not None and code == gone.params.get("code") if gone is not None else False
    if gone is not None and not (gone.key == "class_removed" and told and time.time() - at < TOLD_FOR_S):
        render.show_error(gone)


def class_now(m: Member) -> ClassInfo | None:
    """The member's class as stored now; shows why when it is gone (or the database cannot say)."""
    try:
        info = storage().class_of(m)
        removed = info is None and storage().was_removed(m.class_id, m.key)
    except LabError as err:
        render.show_error(err)
        return None
    if info is None:
        render.show_error(LabError("class_removed", code=m.code) if removed else LabError("class_gone", code=m.code))
    return info


# --- the quiz's hooks ---

def quiz_banner() -> None:
    """At the top of the quiz: which class and name (or that the class is gone), any message."""
    m = member()
    if m is None:
        show_gone_link()
        return
    keep_class_in_url(m)
    info = class_now(m)
    st.session_state[REVEAL_KEY] = bool(info and info.reveal)
    with st.container(border=True):
        if (info.anonymous if info is not None else not m.name):
            st.caption(t("classroom.in_class_anonymous", code=pretty(m.code)))
        else:
            st.caption(t("classroom.in_class", code=pretty(m.code)))
            st.text(shown_name(m.name))
    show_flash()


def explanations_visible() -> bool:
    """Outside a class always; in a class only once the teacher revealed them."""
    if not isinstance(st.session_state.get(MEMBER_KEY), Member):
        return True
    return bool(st.session_state.get(REVEAL_KEY))


def refusal(outcome: SaveOutcome) -> LabError | None:
    """After saving an answer: why the class did not take it (closed, gone), None when it did."""
    m = st.session_state.get(MEMBER_KEY)
    code = m.code if isinstance(m, Member) else ""
    if outcome is SaveOutcome.CLASS_CLOSED:
        return LabError("class_closed", code=code)
    if outcome is SaveOutcome.CLASS_GONE:
        return LabError("class_gone", code=code)
    return None

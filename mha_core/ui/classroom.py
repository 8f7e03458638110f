"""The class page's Streamlit layer: the student / teacher switch and the student's side (join form, the class
joined, the way to the quiz, their own stored answers). The teacher's side is mha_core.ui.teacher, the student's
identity and membership mha_core.ui.student, the projector mha_core.ui.present; logic is in mha_core.classroom.

Display names are user text: they are only ever drawn with ``st.text`` or inside a dataframe, never as markdown
or HTML, and without bidirectional overrides.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from mha_core.classroom import ClassInfo, Member, normalize_code, pretty, shown_name
from mha_core.classroom.names import MAX_NAME
from mha_core.errors import LabError
from mha_core.quiz.bank import load_questions
from mha_core.ui import prepost, quiz, render, student
from mha_core.ui.class_services import storage
from mha_core.ui.i18n import bound_t, lang, t

ROLES = ("student", "teacher")
ROLE_KEY = "classroom_role"         # widget: the student's or the teacher's view
CODE_IN_KEY = "classroom_code_in"   # widget: the class code typed (or taken from ?class=)
NAME_IN_KEY = "classroom_name_in"   # widget: the display name typed
DROPPED_KEY = "classroom_name_dropped"  # session: a name typed for an anonymous class was not used (say so once)
JOIN_FORM = "classroom_join"
LEAVE_KEY = "classroom_leave"       # button

KEPT: dict[str, object] = {ROLE_KEY: ROLES[0]}  # widget values that survive switching pages (state.keep)


def role() -> str:
    """Student or teacher view (the student's unless chosen)."""
    bound = bound_t()
    st.session_state.setdefault(ROLE_KEY, ROLES[0])
    choice = st.segmented_control(t("classroom.role"), ROLES, key=ROLE_KEY,
                                  format_func=lambda r: bound(f"classroom.role_{r}"))
    return choice or ROLES[0]


def _on_join() -> None:
    ss = st.session_state
    try:
        m = student.join(ss.get(CODE_IN_KEY) or "", ss.get(NAME_IN_KEY) or "")
    except LabError as err:
        student.flash(err)
        return
    if not m.name and (ss.get(NAME_IN_KEY) or "").strip():  # typed, but the class turned out anonymous
        ss[DROPPED_KEY] = True
        ss.pop(NAME_IN_KEY, None)


def _on_leave() -> None:
    student.leave()


def student_view() -> None:
    """Join form, or (once joined) the class, the way to the quiz and the student's own stored answers."""
    m = student.member()
    if m is None:
        student.show_gone_link()
        _join_form()
        return
    student.keep_class_in_url(m)
    info = student.class_now(m)
    if info is not None:
        st.success(t("classroom.joined", code=pretty(m.code)), icon=":material/how_to_reg:")
    if (info.anonymous if info is not None else not m.name):
        st.info(t("classroom.anonymous_you"), icon=":material/visibility_off:")
        if st.session_state.pop(DROPPED_KEY, False):
            st.caption(t("classroom.anonymous_dropped"))
    else:
        st.caption(t("classroom.your_name"))
        st.text(shown_name(m.name))
    _unsaved()
    student.show_flash()
    prepost.student_panel(m)
    render.page_link("quiz", t("classroom.go_quiz"))
    _own_answers(m)
    st.button(t("classroom.leave"), key=LEAVE_KEY, icon=":material/logout:", on_click=_on_leave)


def _form_class() -> ClassInfo | None:
    """The class the join form's code names (from the link, or the last try), if it is one."""
    code = st.session_state.get(CODE_IN_KEY) or ""
    if normalize_code(code) is None:
        return None
    try:
        return storage().find_class(code)
    except LabError:  # unknown code or no database: the Join button says why
        return None


def _join_form() -> None:
    ss = st.session_state
    from_url = st.query_params.get(student.CLASS_PARAM)
    if CODE_IN_KEY not in ss and from_url:
        ss[CODE_IN_KEY] = from_url.upper()
    known = _form_class()
    with st.form(JOIN_FORM):
        st.subheader(t("classroom.join_title"))
        st.text_input(t("classroom.code"), key=CODE_IN_KEY, max_chars=12,
                      placeholder=t("classroom.code_placeholder"))
        if known is not None and known.anonymous:  # no name asked: the class was made anonymous
            st.info(t("classroom.join_anonymous"), icon=":material/visibility_off:")
        else:
            st.text_input(t("classroom.name"), key=NAME_IN_KEY, max_chars=MAX_NAME,
                          help=t("classroom.name_help", max=MAX_NAME))
        st.form_submit_button(t("classroom.join"), type="primary", icon=":material/login:", on_click=_on_join)
    student.show_flash()


def _unsaved() -> None:
    """The quiz's unsaved answers, if any (they are the quiz's; the warning and the button are the same)."""
    quiz.pending_box(student.student_id(), {q.id: q.title for q in load_questions(lang())})


def _own_answers(m: Member) -> None:
    """Only this student's rows: the query filters by their own student id."""
    try:
        rows = storage().answers(m.class_id, student_id=m.student_id)
    except LabError as err:
        render.show_error(err)
        return
    st.subheader(t("classroom.your_answers", n=len(rows)))
    if not rows:
        st.caption(t("classroom.no_answers_yet"))
        return
    titles = {q.id: q.title for q in load_questions(lang())}
    bound = bound_t()
    st.dataframe(pd.DataFrame({
        bound("classroom.col_question"): [titles.get(r.question_id, r.question_id) for r in rows],
        bound("classroom.col_right"): [r.correct for r in rows],
    }), hide_index=True, width="stretch")

"""The teacher's side of the class page: the password gate (with the wrong-password limiter), the class picker,
the join card with its QR code, the class's switches and the live dashboard (a fragment that refreshes itself).

Display names are user text: the dashboard shows them only inside a dataframe, never as markdown or HTML.
"""

from __future__ import annotations

import os
import secrets

import pandas as pd
import streamlit as st

from mha_core.classroom import (
    ClassInfo,
    StudentRow,
    VoteStat,
    answers_csv,
    configured_password,
    dashboard,
    password_matches,
    pretty,
    shown_name,
)
from mha_core.classroom.auth import PASSWORD_ENV
from mha_core.classroom.charts import share_chart
from mha_core.errors import LabError
from mha_core.markdown import escape
from mha_core.quiz.bank import load_questions
from mha_core.quiz.grading import describe
from mha_core.quiz.model import Question
from mha_core.ui import live as lesson
from mha_core.ui import prepost, present, render, state, teacher_downloads
from mha_core.ui.class_services import limiter, source_address, storage, streamlit_secrets
from mha_core.ui.i18n import bound_t, lang, t
from mha_core.ui.join import join_link, qr_png
from mha_core.ui.nav import PAGES

TEACHER_KEY = "classroom_teacher"        # session: True after the right password
TEACH_CODE_KEY = "classroom_teach_code"  # widget: the class the teacher is looking at
SESSION_ID_KEY = "classroom_sid"         # session: random id for the per-session rate limit
FLASH_KEY = "classroom_teacher_flash"    # session: a LabError a teacher's callback left, to show once
PASSWORD_IN_KEY = "classroom_pw_in"      # widget: the password typed (popped at once by the callback)
LOGIN_FORM = "classroom_login"
NEW_KEY, PRESENT_BUTTON_KEY = "classroom_new", "classroom_present"      # buttons
NEW_ANONYMOUS_KEY = "classroom_new_anonymous"                           # button: a class without names
LOGOUT_KEY, CSV_KEY = "classroom_logout", "classroom_csv"             # buttons
REMOVE_PICK_KEY = "classroom_remove_pick"   # widget: the student to remove
REMOVE_KEY, REMOVE_YES_KEY, REMOVE_NO_KEY = "classroom_remove", "classroom_remove_yes", "classroom_remove_no"
REMOVING_KEY = "classroom_removing"         # session: (class id, student id, name) waiting for the confirmation
REMOVED_KEY = "classroom_removed_name"      # session: the name just removed, to say so once
REFRESH_SECONDS = 3

KEPT: dict[str, object] = {TEACH_CODE_KEY: None}  # None: the newest class (state.keep keeps the choice)


def switch_key(kind: str, class_id: int) -> str:
    """Widget key of a class's switch: "closed", "locked", "reveal" or "anonymous"."""
    return f"classroom_{kind}_{class_id}"


def _flash(err: LabError) -> None:
    render.flash(FLASH_KEY, err)


def _show_flash() -> None:
    render.show_flash(FLASH_KEY)


# --- the gate ---

def _session_id() -> str:
    return st.session_state.setdefault(SESSION_ID_KEY, secrets.token_hex(16))


def limiter_keys() -> tuple[str, str]:
    """(source key, session key) of this browser for the wrong-password limiter."""
    return f"ip:{source_address()}", f"session:{_session_id()}"


def _on_login(expected: str) -> None:
    ss = st.session_state
    given = ss.pop(PASSWORD_IN_KEY, "") or ""
    source, session = limiter_keys()
    try:
        tried = limiter().attempt(lambda: password_matches(given, expected), source, session)
    except LabError as err:  # no database, no check: the limiter cannot be skipped
        _flash(err)
        return
    if tried.ok:
        ss[TEACHER_KEY] = True
    elif tried.wait > 0:
        _flash(LabError("class_rate_limited", seconds=int(tried.wait) + 1))
    else:
        _flash(LabError("class_password_wrong"))


def view() -> None:
    """Password gate, then the class's code and QR, its switches and the live dashboard."""
    expected = configured_password(os.environ, streamlit_secrets())
    if expected is None:
        st.warning(t("classroom.no_password", env=PASSWORD_ENV), icon=":material/lock:")
        st.code(f'{PASSWORD_ENV}="…" streamlit run app.py\n\n# .streamlit/secrets.toml\nteacher_password = "…"',
                language="bash")
        return
    if not st.session_state.get(TEACHER_KEY):
        with st.form(LOGIN_FORM):
            st.text_input(t("classroom.password"), key=PASSWORD_IN_KEY, type="password")
            st.form_submit_button(t("classroom.login"), type="primary", icon=":material/key:",
                                  on_click=_on_login, args=(expected,))
        _show_flash()
        return
    try:
        info = _teacher_class()
    except LabError as err:
        render.show_error(err)
        return
    _show_flash()
    if info is None:
        return
    _join_card(info)
    _switches(info)
    _remove(info)
    prepost.teacher_panel(info)
    lesson.plan_card(info.id, info.code)
    _downloads()
    live(info.id, info.code, info.anonymous)


def _downloads() -> None:
    """For the lesson: the handout of the settings on screen (what students follow) and the quiz for the LMS."""
    with st.container(border=True):
        st.subheader(t("handout.teacher_title"), anchor=False)
        cols = st.columns(2)
        with cols[0]:
            teacher_downloads.handout_button(state.current(), key=teacher_downloads.TEACHER_HANDOUT_KEY)
        with cols[1]:
            teacher_downloads.moodle_button(key=teacher_downloads.TEACHER_MOODLE_KEY)


# --- the class ---

def _on_new_class(anonymous: bool = False) -> None:
    try:
        st.session_state[TEACH_CODE_KEY] = storage().create_class(anonymous=anonymous).code
    except LabError as err:
        _flash(err)


def _teacher_class() -> ClassInfo | None:
    """The class picker (most recent first) and the button that opens a new class."""
    ss = st.session_state
    known = {c.code: c for c in storage().list_classes()}
    top = st.columns([3, 2, 2], vertical_alignment="bottom")
    top[1].button(t("classroom.new_class"), key=NEW_KEY, type="primary", icon=":material/add:",
                  on_click=_on_new_class, width="stretch")
    top[2].button(t("classroom.new_anonymous"), key=NEW_ANONYMOUS_KEY, icon=":material/visibility_off:",
                  on_click=_on_new_class, args=(True,), width="stretch", help=t("classroom.new_anonymous_help"))
    if not known:
        st.info(t("classroom.no_classes"), icon=":material/info:")
        return None
    if ss.get(TEACH_CODE_KEY) not in known:
        ss[TEACH_CODE_KEY] = next(iter(known))
    bound = bound_t()
    def state_of(c: ClassInfo) -> str:
        shown = bound("classroom.closed" if c.closed else "classroom.open")
        return bound("classroom.state_anonymous", state=shown) if c.anonymous else shown

    code = top[0].selectbox(t("classroom.pick_class"), list(known), key=TEACH_CODE_KEY, format_func=lambda c: bound(
        "classroom.class_option", code=pretty(c), state=state_of(known[c]),
        time=known[c].created_at.strftime("%Y-%m-%d %H:%M")))
    return known[code]


def _join_card(info: ClassInfo) -> None:
    link = join_link(info.code)
    with st.container(border=True):
        cols = st.columns([3, 2])
        with cols[0]:
            st.caption(t("classroom.join_code"))
            st.title(pretty(info.code), anchor=False)
            st.caption(t("classroom.join_how"))
            st.code(link, language=None)
            if info.closed:
                st.warning(t("classroom.closed_note"), icon=":material/lock:")
            elif info.locked:
                st.info(t("classroom.locked_note"), icon=":material/person_off:")
            _anonymity(info)
        with cols[1]:
            st.image(qr_png(link), caption=t("classroom.qr_caption"), width=320)


def _anonymity(info: ClassInfo) -> None:
    """Whether students join without a name: chosen when the class is opened, switchable until someone joins."""
    try:
        joined = storage().turnout(info.id).joined
    except LabError as err:
        render.show_error(err)
        return
    st.session_state[switch_key("anonymous", info.id)] = info.anonymous
    st.toggle(t("classroom.anonymous"), key=switch_key("anonymous", info.id), on_change=_on_switch,
              args=("anonymous", info.id), disabled=joined > 0, help=t("classroom.anonymous_help"))
    if info.anonymous:
        st.info(t("classroom.anonymous_note"), icon=":material/visibility_off:")
    if joined:
        st.caption(t("classroom.anonymous_fixed", n=joined))


def _on_switch(kind: str, class_id: int) -> None:
    try:
        value = bool(st.session_state.get(switch_key(kind, class_id)))
        if kind == "closed":
            storage().set_closed(class_id, value)
        elif kind == "anonymous":
            storage().set_anonymous(class_id, value)
        elif kind == "locked":
            storage().set_locked(class_id, value)
        else:
            storage().set_reveal(class_id, value)
    except LabError as err:
        _flash(err)


def _on_logout() -> None:
    st.session_state[TEACHER_KEY] = False


def _switches(info: ClassInfo) -> None:
    ss = st.session_state
    ss[switch_key("closed", info.id)], ss[switch_key("reveal", info.id)] = info.closed, info.reveal
    ss[switch_key("locked", info.id)] = info.locked
    cols = st.columns(3)
    cols[0].toggle(t("classroom.close"), key=switch_key("closed", info.id), on_change=_on_switch,
                   args=("closed", info.id), help=t("classroom.close_help"))
    cols[1].toggle(t("classroom.lock"), key=switch_key("locked", info.id), on_change=_on_switch,
                   args=("locked", info.id), help=t("classroom.lock_help"))
    cols[2].toggle(t("classroom.reveal"), key=switch_key("reveal", info.id), on_change=_on_switch,
                   args=("reveal", info.id), help=t("classroom.reveal_help"))
    cols = st.columns(3)
    cols[0].button(t("classroom.present"), key=PRESENT_BUTTON_KEY, icon=":material/slideshow:",
                   on_click=present.on_start, help=t("classroom.present_help"))
    cols[1].button(t("classroom.logout"), key=LOGOUT_KEY, icon=":material/logout:", on_click=_on_logout)


# --- removing a student (a fake one, a name that should not be there) ---

def _on_remove_ask(class_id: int, by_id: dict[int, str]) -> None:
    sid = st.session_state.get(REMOVE_PICK_KEY)
    if sid in by_id:
        st.session_state[REMOVING_KEY] = (class_id, sid, by_id[sid])


def _on_remove_yes() -> None:
    ss = st.session_state
    class_id, sid, name = ss.pop(REMOVING_KEY, (None, None, None))
    if class_id is None:
        return
    try:
        storage().remove_student(class_id, sid)
    except LabError as err:
        _flash(err)
        return
    ss[REMOVED_KEY] = name
    ss.pop(REMOVE_PICK_KEY, None)


def _on_remove_no() -> None:
    st.session_state.pop(REMOVING_KEY, None)


def _remove(info: ClassInfo) -> None:
    """Remove a student with their answers and votes, after a confirmation (their session is told)."""
    ss = st.session_state
    done = ss.pop(REMOVED_KEY, None)
    pending = ss.get(REMOVING_KEY)
    with st.expander(t("classroom.remove_title"), icon=":material/person_remove:",
                     expanded=bool(done or (pending and pending[0] == info.id))):
        if done is not None:
            st.success(t("classroom.remove_done", name=escape(shown_name(done))), icon=":material/check:")
        try:
            people: tuple[StudentRow, ...] = storage().students(info.id)
            ids = storage().pseudonyms(info.id) if info.anonymous else {}
        except LabError as err:
            render.show_error(err)
            return
        if not people:
            st.caption(t("classroom.remove_none"))
            return
        if info.anonymous:  # opaque ids only: the list shows when they joined, the confirmation just the id
            called = {p.id: ids.get(p.id, "?") for p in people}
            by_id = {p.id: t("classroom.anonymous_option", id=called[p.id], time=p.joined_at.strftime("%H:%M"))
                     for p in people}
            st.caption(t("classroom.remove_anonymous"))
        else:
            by_id = called = {p.id: shown_name(p.name) for p in people}
        if pending and pending[0] == info.id and pending[1] in by_id:
            st.warning(t("classroom.remove_confirm", name=escape(pending[2])), icon=":material/warning:")
            cols = st.columns(2)
            cols[0].button(t("classroom.remove_yes"), key=REMOVE_YES_KEY, type="primary",
                           icon=":material/person_remove:", on_click=_on_remove_yes, width="stretch")
            cols[1].button(t("classroom.remove_no"), key=REMOVE_NO_KEY, on_click=_on_remove_no, width="stretch")
            return
        if ss.get(REMOVE_PICK_KEY) not in by_id:
            ss.pop(REMOVE_PICK_KEY, None)
        cols = st.columns([3, 1], vertical_alignment="bottom")
        cols[0].selectbox(t("classroom.remove_pick"), list(by_id), key=REMOVE_PICK_KEY, index=None,
                          format_func=by_id.__getitem__, placeholder=t("classroom.remove_placeholder"))
        cols[1].button(t("classroom.remove_button"), key=REMOVE_KEY, icon=":material/person_remove:",
                       on_click=_on_remove_ask, args=(info.id, called), disabled=ss.get(REMOVE_PICK_KEY) is None,
                       width="stretch")


# --- the dashboard ---

@st.fragment(run_every=REFRESH_SECONDS)
def live(class_id: int, code: str, anonymous: bool = False) -> None:
    """The dashboard, refreshed every few seconds without reloading the page; an anonymous class's shows only the
    class's figures, and its CSV opaque ids."""
    try:
        students, rows = storage().students(class_id), storage().answers(class_id)
        votes, turnout = storage().votes(class_id), storage().turnout(class_id)
        ids = storage().pseudonyms(class_id) if anonymous else None
    except LabError as err:
        render.show_error(err)
        return
    questions = load_questions(lang())
    by_id = {q.id: q for q in questions}
    titles = {q.id: q.title for q in questions}
    board = dashboard(students, rows, [q.id for q in questions], votes=votes)
    bound = bound_t()
    m = st.columns(4)
    m[0].metric(t("classroom.m_students"), len(board.students))
    m[1].metric(t("classroom.m_voted"), "–" if turnout.voted is None else turnout.voted,
                help=None if turnout.voted is not None else t("classroom.no_open_vote"))
    m[2].metric(t("classroom.m_answers"), board.answers)
    m[3].metric(t("classroom.m_right"), f"{board.right / board.answers:.0%}" if board.answers else "–")
    st.subheader(t("classroom.share_title"))
    st.altair_chart(share_chart(board.questions, titles, x_title=t("classroom.share_axis"),
                                y_title=t("classroom.col_question"), n_title=t("classroom.col_answered")),
                    width="stretch")
    with st.expander(t("classroom.per_question"), icon=":material/table:"):
        st.dataframe(pd.DataFrame({
            bound("classroom.col_question"): [titles.get(s.question_id, s.question_id) for s in board.questions],
            bound("classroom.col_answered"): [s.answered for s in board.questions],
            bound("classroom.col_right_n"): [s.right for s in board.questions],
        }), hide_index=True, width="stretch")
    st.subheader(t("classroom.wrong_title"))
    if board.wrong:
        st.dataframe(pd.DataFrame({
            bound("classroom.col_question"): [titles.get(w.question_id, w.question_id) for w in board.wrong],
            bound("classroom.col_answer"): [_described(by_id.get(w.question_id), w.canonical) for w in board.wrong],
            bound("classroom.col_count"): [w.count for w in board.wrong],
        }), hide_index=True, width="stretch")
    else:
        st.caption(t("classroom.no_wrong"))
    st.subheader(t("classroom.students_title"))
    if anonymous:
        st.caption(t("classroom.students_anonymous"))
    else:
        st.dataframe(pd.DataFrame({
            bound("classroom.col_name"): [s.name for s in board.students],  # bidi overrides neutralised (shown_name)
            bound("classroom.col_answered"): [s.answered for s in board.students],
            bound("classroom.col_right_n"): [s.right for s in board.students],
        }), hide_index=True, width="stretch")
    _votes(board.votes)
    titles |= {v.vote_key: vote_title(v.vote_key) for v in votes}
    st.download_button(t("classroom.csv"), answers_csv(code, rows, titles, votes=votes, ids=ids),
                       file_name=f"class-{code}.csv", mime="text/csv", icon=":material/download:", key=CSV_KEY,
                       on_click="ignore")


def vote_title(key: str) -> str:
    """A vote as the teacher knows it: its page's name and the question's key (the key's hash left out)."""
    page, _, rest = key.partition(".")
    question = rest.rpartition(".")[0] or rest
    return f"{t(f'nav.{page}')} · {question}" if page in {p.key for p in PAGES} else key


def _votes(stats: tuple[VoteStat, ...]) -> None:
    """The live lesson's class votes: per vote and round, how many voted and the share right."""
    st.subheader(t("live.votes_title"))
    if not stats:
        st.caption(t("live.no_votes"))
        return
    bound = bound_t()
    st.dataframe(pd.DataFrame({
        bound("live.col_vote"): [vote_title(v.vote_key) for v in stats],
        bound("live.col_round"): [v.round for v in stats],
        bound("classroom.col_answered"): [v.answered for v in stats],
        bound("live.col_share"): [f"{v.share:.0%}" for v in stats],
    }), hide_index=True, width="stretch")


def _described(q: Question | None, canonical: str) -> str:
    """A wrong answer as the students saw it (option texts, the number with its unit); else as stored."""
    if q is None:
        return canonical
    try:
        return describe(q, canonical) or canonical
    except (KeyError, ValueError, ArithmeticError):
        return canonical

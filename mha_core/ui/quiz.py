"""The quiz page's Streamlit layer: the teacher's sidebar choice, question cards with feedback, the running score
and the summary. The student (id, progress store, class membership and the class's hooks) is mha_core.ui.student.

Answers are graded in button callbacks, before the script runs, so the score drawn at the top of the
page already counts the answer just given. Every graded answer goes through ``grade`` into the store, which is
the class database (never a cache: any browser can clear those for every session). In a class, the progress and
the class's answer row are written in one transaction, so the quiz never shows an answer the teacher lacks.
When the database is busy or down, the graded answer stays in this session (``PENDING_KEY``) and in this
process under the student's id (``UNSENT``, bounded: a reload is a new session, and the address keeps the id), the
card stays open, and a warning at the top says how many answers are unsaved, with a button to send them again; a
reload finds them and sends them again at once. A restart of the app loses them, and the warning says so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import streamlit as st

from mha_core.classroom import DatabaseError
from mha_core.errors import LabError
from mha_core.markdown import escape
from mha_core.quiz.bank import load_questions
from mha_core.quiz.grading import SELF_RIGHT, describe, grade
from mha_core.quiz.model import Grade, Kind, Question, SelfMark
from mha_core.quiz.progress import Progress, presented_order
from mha_core.quiz.progress_store import Unsent, student_seed
from mha_core.quiz.short import MAX_SHORT
from mha_core.ui import live, present, render, student
from mha_core.ui.i18n import lang, t
from mha_core.ui.nav import PAGES

MODES = ("one", "all")
MODE_KEY = "quiz_mode"            # sidebar widget: one question at a time or all at once (None: not chosen yet)
MODE_PARAM = "mode"               # URL: ?mode=one|all, the mode a link opens with
FLASH_KEY = "quiz_flash"          # session: question id -> LabError to show once under that question
PENDING_KEY = "quiz_pending"      # session: question id -> Grade not saved yet (database busy or down)
RESTORED_KEY = "_quiz_restored"   # session: the student id whose unsent answers this session took back
POSITION_KEY = "quiz_position"    # session: the question shown one at a time (also stored, for a reload)
PAGE_FLASH = ""                   # FLASH_KEY entry shown at the top of the page rather than under a question
REVEALED_KEY = "quiz_revealed"    # session: free-text questions whose model answer is showing
RESTART_KEY, RESEND_KEY, RETRY_KEY = "quiz_restart", "quiz_resend", "quiz_retry"  # buttons
PREV_KEY, NEXT_KEY = "quiz_prev", "quiz_next"                                      # buttons
MAX_TEXT = 600

# Widget values that survive switching pages (registered by state.keep, re-assigned by state.init_state on every
# run). The mode's default is None (keep writes no default): until the student chooses, the quiz takes a link's
# ?mode= on the first visit.
KEPT: dict[str, object] = {MODE_KEY: None}

# The process's unsent quiz answers by student id (bounded, thread-safe; see
# mha_core.quiz.progress_store.Unsent): what a
# reload finds when the database did not take an answer. Process-wide on purpose: a session ends with a reload.
UNSENT = Unsent()
_QUIZ = "quiz:"  # UNSENT key prefix: quiz:<question id>


def answer_key(question_id: str, option_id: str | None = None) -> str:
    """Widget key of a question's answer (one checkbox per option for multiple choice)."""
    return f"quiz_a_{question_id}" if option_id is None else f"quiz_a_{question_id}_{option_id}"


def button_key(action: str, question_id: str) -> str:
    """Widget key of a question's button: check, reveal, self_right, self_wrong."""
    return f"quiz_{action}_{question_id}"


@dataclass(frozen=True)
class QuizView:
    """What one run of the page shows: whose quiz, in which mode, the questions and the progress."""

    sid: str  # the student's id
    seed: int
    mode: str
    questions: tuple[Question, ...]
    progress: Progress


def open_quiz() -> QuizView:
    """Identify the student (session, else URL, else new), draw the sidebar, load bank and progress."""
    sid = _student_id()
    _take_back_unsent(sid)
    mode = _sidebar(sid)
    student.quiz_banner()  # in a class: the class and the name (or why the class is gone)
    seed = student_seed(sid)
    questions = load_questions(lang(), seed)
    check = live.check_questions()  # the live lesson's check step: only its questions
    if check:
        questions = tuple(q for q in questions if q.id in check)
        st.caption(t("live.check_caption", n=len(questions)))
    try:
        progress = student.progress_store().get(sid)
    except LabError as err:  # database down: say so; answers given now are kept to send again
        render.show_error(err)
        progress = Progress()
    pending_box(sid, {q.id: q.title for q in questions})
    err = st.session_state.get(FLASH_KEY, {}).pop(PAGE_FLASH, None)
    if err is not None:
        render.show_error(err)
    return QuizView(sid, seed, mode, questions, progress)


def _student_id() -> str:
    """The student's id, kept in the URL so that a reload finds their progress (never on the projector: the id
    is the key to it)."""
    sid = student.student_id()
    if present.presenting():
        st.query_params.pop(student.STUDENT_PARAM, None)
    elif st.query_params.get(student.STUDENT_PARAM) != sid:
        st.query_params[student.STUDENT_PARAM] = sid
    return sid


def _take_back_unsent(sid: str) -> None:
    """Once per session and student id (a reload is a new session): the answers this process keeps unsent for
    the student come back to the page, and are sent again at once (before the progress is read)."""
    ss = st.session_state
    if ss.get(RESTORED_KEY) == sid:
        return
    ss[RESTORED_KEY] = sid
    kept = {k.removeprefix(_QUIZ): g for k, g in UNSENT.of(sid).items() if k.startswith(_QUIZ)}
    if not kept:
        return
    pending = ss.setdefault(PENDING_KEY, {})
    for qid, g in kept.items():
        pending.setdefault(qid, g)
    _on_resend(sid)


def _sidebar(sid: str) -> str:
    ss = st.session_state
    if ss.get(MODE_KEY) not in MODES:  # not chosen yet: the link's, else the first
        from_url = st.query_params.get(MODE_PARAM)
        ss[MODE_KEY] = from_url if from_url in MODES else MODES[0]
    labels = {m: t(f"quiz.mode_{m}") for m in MODES}
    st.sidebar.subheader(t("quiz.sidebar_title"))
    mode = st.sidebar.radio(t("quiz.mode"), MODES, key=MODE_KEY, format_func=labels.__getitem__,
                            help=t("quiz.mode_help"))
    if st.query_params.get(MODE_PARAM) != mode:
        st.query_params[MODE_PARAM] = mode
    st.sidebar.button(t("quiz.restart"), key=RESTART_KEY, help=t("quiz.restart_help"),
                      icon=":material/restart_alt:", on_click=_on_restart, args=(sid,))
    return mode


# --- callbacks: run before the script, so the page draws the new state ---

def _flash(question_id: str, err: LabError) -> None:
    st.session_state.setdefault(FLASH_KEY, {})[question_id] = err


def _submit(sid: str, q: Question, answer: object) -> None:
    """Grade and save; bad input or a second answer shows a message and records nothing."""
    try:
        g = grade(q, answer)
    except LabError as err:
        _flash(q.id, err)
        return
    _save(sid, g)


def _save(sid: str, g: Grade) -> bool:
    """Store a grade (and, in a class, the class's answer with it); on database trouble keep it to send again.
    True when stored."""
    pending = st.session_state.setdefault(PENDING_KEY, {})
    try:
        _, outcome = student.progress_store().record(sid, g, student.member())
    except DatabaseError as err:
        pending[g.question_id] = g
        UNSENT.keep(sid, _QUIZ + g.question_id, g)
        _flash(g.question_id, err)
        return False
    except LabError as err:  # graded already (another tab, an earlier session): the stored answer stands
        pending.pop(g.question_id, None)
        UNSENT.sent(sid, _QUIZ + g.question_id)
        _flash(g.question_id, err)
        return False
    pending.pop(g.question_id, None)
    UNSENT.sent(sid, _QUIZ + g.question_id)
    refused = student.refusal(outcome)
    if refused is not None:
        _flash(g.question_id, refused)
    return True


def _on_resend(sid: str) -> None:
    """Send the unsaved answers again, in order; stop at the first that the database still refuses."""
    for g in list(st.session_state.get(PENDING_KEY, {}).values()):
        if not _save(sid, g) and g.question_id in st.session_state.get(PENDING_KEY, {}):
            return


def pending_box(sid: str, titles: Mapping[str, str]) -> None:
    """The unsaved answers (count and titles), where they are kept, and the button that sends them again."""
    _take_back_unsent(sid)  # the class page shows this box too
    pending = st.session_state.get(PENDING_KEY, {})
    if not pending:
        return
    names = "; ".join(titles.get(qid, qid) for qid in pending)
    st.warning(t("quiz.unsaved", n=len(pending), titles=names), icon=":material/cloud_off:")
    st.button(t("quiz.resend"), key=RESEND_KEY, type="primary", icon=":material/cloud_upload:",
              on_click=_on_resend, args=(sid,))


def _change(sid: str, change: Callable[[Progress], Progress], quiet: bool = False) -> Progress | None:
    """Store a change of position or round (the new progress); database trouble is shown at the top of the
    page unless ``quiet``."""
    try:
        return student.progress_store().update(sid, change)[0]
    except LabError as err:
        if not quiet:
            _flash(PAGE_FLASH, err)
        return None


def _read_answer(q: Question) -> object:
    ss = st.session_state
    if q.kind is Kind.MULTIPLE:
        return [o for o in q.option_ids if ss.get(answer_key(q.id, o))]
    if q.kind is Kind.ORDERING:
        return list(ss.get(answer_key(q.id)) or [])
    if q.kind in (Kind.NUMERIC, Kind.SHORT):
        return ss.get(answer_key(q.id)) or ""
    return ss.get(answer_key(q.id))


def _on_check(sid: str, q: Question) -> None:
    _submit(sid, q, _read_answer(q))


def _on_reveal(q: Question) -> None:
    if not (st.session_state.get(answer_key(q.id)) or "").strip():
        _flash(q.id, LabError("quiz_empty"))
        return
    st.session_state.setdefault(REVEALED_KEY, set()).add(q.id)


def _on_self_mark(sid: str, q: Question, correct: bool) -> None:
    _submit(sid, q, SelfMark(st.session_state.get(answer_key(q.id)) or "", correct))


def _on_move(sid: str, position: int, count: int) -> None:
    """Move in this session at once; store it for a reload when the database takes it (no message if not)."""
    st.session_state[POSITION_KEY] = max(0, min(position, count - 1))
    _change(sid, lambda p: p.moved(position, count), quiet=True)


def _on_retry(sid: str, questions: tuple[Question, ...]) -> None:
    new = _change(sid, lambda p: p.retry_wrong(questions))  # the student's choice: wrong answers may change
    if new is not None:
        st.session_state[POSITION_KEY] = new.position
    st.session_state[REVEALED_KEY] = set()


def _on_restart(sid: str) -> None:
    st.session_state[REVEALED_KEY] = set()
    st.session_state[FLASH_KEY] = {}
    st.session_state[PENDING_KEY] = {}
    UNSENT.forget(sid, _QUIZ)
    st.session_state.pop(POSITION_KEY, None)
    try:
        student.progress_store().reset(sid)
    except LabError as err:
        _flash(PAGE_FLASH, err)


# --- drawing ---

def scoreboard(view: QuizView) -> None:
    """The running score and how far the student is."""
    s = view.progress.score(view.questions)
    st.markdown(t("quiz.score", right=s.right, total=s.total))
    st.progress(s.answered / s.total, text=t("quiz.progress", answered=s.answered, total=s.total))


def questions(view: QuizView) -> None:
    """All question cards, or one with previous / next (the teacher's choice)."""
    n = len(view.questions)
    if view.mode == "all":
        for i in range(n):
            _card(view, i)
        return
    pos = max(0, min(st.session_state.get(POSITION_KEY, view.progress.position), n - 1))
    _card(view, pos)
    prev_col, next_col = st.columns(2)
    prev_col.button(t("quiz.prev"), key=PREV_KEY, disabled=pos == 0, icon=":material/arrow_back:",
                    on_click=_on_move, args=(view.sid, pos - 1, n), width="stretch")
    next_col.button(t("quiz.next"), key=NEXT_KEY, disabled=pos == n - 1, icon=":material/arrow_forward:",
                    on_click=_on_move, args=(view.sid, pos + 1, n), width="stretch")


def _card(view: QuizView, i: int) -> None:
    q = view.questions[i]
    g = view.progress.grade_of(q.id)
    with st.container(border=True):
        st.caption(t("quiz.question_n", i=i + 1, n=len(view.questions), section=t(f"quiz.sections.{q.section}")))
        st.markdown(q.prompt)
        if g is None:
            if q.id in st.session_state.get(PENDING_KEY, {}):
                st.caption(t("quiz.unsaved_card"))
            _INPUTS[q.kind](view, q)
        else:
            _feedback(q, g)
        err = st.session_state.get(FLASH_KEY, {}).pop(q.id, None)
        if err is not None:
            render.show_error(err)


def _check_button(view: QuizView, q: Question) -> None:
    st.button(t("quiz.check"), key=button_key("check", q.id), type="primary", icon=":material/check:",
              on_click=_on_check, args=(view.sid, q))


def _single(view: QuizView, q: Question) -> None:
    texts = {o.id: o.text for o in q.options}
    st.radio(t("quiz.your_answer"), presented_order(q, view.seed), index=None, key=answer_key(q.id),
             format_func=texts.__getitem__, label_visibility="collapsed")
    _check_button(view, q)


def _multiple(view: QuizView, q: Question) -> None:
    texts = {o.id: o.text for o in q.options}
    st.caption(t("quiz.hint_multiple"))
    for o in presented_order(q, view.seed):
        st.checkbox(texts[o], key=answer_key(q.id, o))
    _check_button(view, q)


def _numeric(view: QuizView, q: Question) -> None:
    st.text_input(t("quiz.your_answer"), key=answer_key(q.id), max_chars=60,
                  placeholder=t(f"quiz.placeholder_{q.unit}"))
    st.caption(t(f"quiz.hint_{q.unit}"))
    _check_button(view, q)


def _short(view: QuizView, q: Question) -> None:
    st.text_input(t("quiz.your_answer"), key=answer_key(q.id), max_chars=MAX_SHORT,
                  placeholder=t("quiz.placeholder_short"))
    st.caption(t("quiz.hint_short"))
    _check_button(view, q)


def _ordering(view: QuizView, q: Question) -> None:
    texts = {o.id: o.text for o in q.options}
    st.multiselect(t("quiz.order_label"), presented_order(q, view.seed), key=answer_key(q.id),
                   format_func=texts.__getitem__, placeholder=t("quiz.order_placeholder"))
    _check_button(view, q)


def _text(view: QuizView, q: Question) -> None:
    revealed = q.id in st.session_state.get(REVEALED_KEY, set())
    st.text_area(t("quiz.your_answer"), key=answer_key(q.id), max_chars=MAX_TEXT, height=100)
    if not revealed:
        st.button(t("quiz.reveal"), key=button_key("reveal", q.id), icon=":material/visibility:",
                  on_click=_on_reveal, args=(q,))
        return
    st.info(t("quiz.model_answer", text=q.model_answer), icon=":material/school:")
    st.markdown(t("quiz.self_mark"))
    right_col, wrong_col = st.columns(2)
    right_col.button(t("quiz.self_right"), key=button_key("self_right", q.id), icon=":material/thumb_up:",
                     on_click=_on_self_mark, args=(view.sid, q, True), width="stretch")
    wrong_col.button(t("quiz.self_wrong"), key=button_key("self_wrong", q.id), icon=":material/thumb_down:",
                     on_click=_on_self_mark, args=(view.sid, q, False), width="stretch")


_INPUTS: Mapping[Kind, Callable[[QuizView, Question], None]] = MappingProxyType({
    Kind.SINGLE: _single, Kind.MULTIPLE: _multiple, Kind.NUMERIC: _numeric,
    Kind.ORDERING: _ordering, Kind.TEXT: _text, Kind.SHORT: _short,
})


def _feedback(q: Question, g: Grade) -> None:
    """Right or wrong, the answer given, the right one, why, and where the point is taught."""
    if g.correct:
        st.success(t("quiz.right"), icon=":material/check_circle:")
    else:
        st.error(t("quiz.wrong"), icon=":material/cancel:")
    if q.kind is Kind.TEXT:
        st.markdown(t("quiz.self_marked_right" if g.canonical == SELF_RIGHT else "quiz.self_marked_wrong"))
        st.markdown(t("quiz.model_answer", text=q.model_answer))
    else:
        shown = escape if q.kind is Kind.SHORT else str  # a short answer is the student's own text
        st.markdown(t("quiz.given", answer=shown(describe(q, g.canonical))))
        if not g.correct:
            st.markdown(t("quiz.expected", answer=shown(describe(q, g.expected))))
    if student.explanations_visible():
        st.markdown(q.explanation)
    else:
        st.caption(t("classroom.explanation_hidden"))
    _page_link(q.teaches, t("quiz.learn_more"))


def _page_link(key: str, caption: str) -> bool:
    """A link to the page that teaches ``key``, if ``key`` names a page."""
    spec = next((p for p in PAGES if p.key == key), None)
    if spec is None:
        return False
    st.caption(caption)
    render.page_link(key)
    return True


def summary(view: QuizView) -> None:
    """When every question has a grade: what was right, what to revisit (by page), retry the wrong ones."""
    qs = view.questions
    s = view.progress.score(qs)
    if not s.complete:
        return
    sm = view.progress.summary(qs)
    st.divider()
    st.subheader(t("quiz.summary_title"))
    st.markdown(t("quiz.summary_score", right=s.right, total=s.total))
    if not sm.wrong:
        st.success(t("quiz.all_right"), icon=":material/celebration:")
    else:
        st.markdown(f"**{t('quiz.revisit')}**")
        for page, wrong in sm.revisit:
            with st.container(border=True):
                if not _page_link(page, t("quiz.revisit_page")):
                    st.markdown(f"**{t(f'nav.{page}')}**")
                st.markdown("\n".join(f"- {q.title}" for q in wrong))
        st.button(t("quiz.retry", n=len(sm.wrong)), key=RETRY_KEY, type="primary", icon=":material/replay:",
                  on_click=_on_retry, args=(view.sid, qs))
    if sm.right:
        with st.expander(t("quiz.right_list", n=len(sm.right)), icon=":material/task_alt:"):
            st.markdown("\n".join(f"- {q.title}" for q in sm.right))

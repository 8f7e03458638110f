"""Class mode's Streamlit layer: the storage, the wrong-password limiter, the student's membership, the hooks the
quiz page calls, the teacher's dashboard (a live fragment) and the projector's presentation mode.

Logic lives in ``mha_core.classroom``; here only session state and widgets. Everything a class shares (classes,
members, answers, quiz progress, the limiter's counts, the class's switches) is in the database, so any replica
can serve any request and no client can reset it: the only cached object is the engine (a cache clear opens a
new one). Display names are user text: they are only ever drawn with ``st.text`` or inside a dataframe, never as
markdown or HTML, and without bidirectional overrides.
"""

from __future__ import annotations

import io
import os
import secrets
from collections.abc import Mapping
from urllib.parse import urlencode, urlsplit, urlunsplit

import pandas as pd
import segno
import streamlit as st

from mha_core.classroom import (
    ClassInfo,
    Member,
    RateLimiter,
    SaveOutcome,
    Storage,
    answers_csv,
    configured_password,
    dashboard,
    database_url,
    normalize_code,
    password_matches,
    pretty,
    shown_name,
)
from mha_core.classroom.auth import PASSWORD_ENV
from mha_core.classroom.charts import share_chart
from mha_core.classroom.names import MAX_NAME
from mha_core.errors import LabError
from mha_core.quiz.bank import load_questions
from mha_core.quiz.grading import describe
from mha_core.quiz.model import Question
from mha_core.ui import render
from mha_core.ui.i18n import bound_t, lang, t
from mha_core.ui.nav import available_pages, spec

MEMBER_KEY = "classroom_member"      # session: Member once joined
JOINED_KEY = "classroom_joined"      # session: class codes this session joined (only they may rename)
FLASH_KEY = "classroom_flash"        # session: a LabError to show once
REVEAL_KEY = "classroom_reveal"      # session: whether this student's class shows explanations
TEACHER_KEY = "classroom_teacher"    # session: True after the right password
TEACH_CODE_KEY = "classroom_teach_code"  # session: the class the teacher is looking at
SESSION_ID_KEY = "classroom_sid"     # session: random id for the per-session rate limit
PROXIES_ENV = "MHA_TRUSTED_PROXIES"  # comma-separated addresses of load balancers whose X-Real-IP is believed
ROLE_KEY = "classroom_role"
PRESENT_KEY = "present"              # session flag and ?present=1
CLASS_PARAM = "class"
REFRESH_SECONDS = 3

# --- shared resources ---

def _secrets() -> Mapping[str, object]:
    """Streamlit secrets, or nothing when there is no secrets file (never an exception)."""
    try:
        return dict(st.secrets)
    except Exception:  # noqa: BLE001 - a missing or unreadable secrets file means "no secrets"
        return {}


@st.cache_resource(show_spinner=False, on_release=Storage.dispose)
def _storage(url: str) -> Storage:
    """The engine (a connection pool) per URL: the only cached object, and it holds no data."""
    return Storage.open(url)


def storage() -> Storage:
    """The class store for the configured URL, schema created or migrated on first use (DatabaseError if down)."""
    return _storage(database_url(os.environ, _secrets()))


def limiter() -> RateLimiter:
    """Wrong-password back-off per source, in the database (shared by every session and replica)."""
    return RateLimiter(storage())


def _flash(err: LabError) -> None:
    st.session_state[FLASH_KEY] = err


def show_flash() -> None:
    """Show the message a callback left, once."""
    err = st.session_state.pop(FLASH_KEY, None)
    if err is not None:
        render.show_error(err)


# --- the student ---

def _quiz_key() -> str:
    """This session's quiz student id (the quiz page's), created if the student has none yet."""
    from mha_core.quiz.store import new_student_id, valid_student_id
    from mha_core.ui.quiz import STUDENT_KEY

    ss = st.session_state
    if not valid_student_id(ss.get(STUDENT_KEY)):
        from_url = st.query_params.get("student")
        ss[STUDENT_KEY] = from_url if valid_student_id(from_url) else new_student_id()
    return ss[STUDENT_KEY]


def member() -> Member | None:
    """The class this session belongs to: from the session, else restored from ?class=…&student=… after a reload."""
    ss = st.session_state
    if isinstance(ss.get(MEMBER_KEY), Member):
        return ss[MEMBER_KEY]
    code, key = st.query_params.get(CLASS_PARAM), st.query_params.get("student")
    if not code or not key or normalize_code(code) is None:
        return None
    try:
        found = storage().member(code, key)
    except LabError:
        return None
    if found is not None:
        ss[MEMBER_KEY] = found
    return found


def refusal(outcome: SaveOutcome) -> LabError | None:
    """Quiz hook, after saving: why the class did not take the answer (closed, gone), None when it did."""
    m = st.session_state.get(MEMBER_KEY)
    code = m.code if isinstance(m, Member) else ""
    if outcome is SaveOutcome.CLASS_CLOSED:
        return LabError("class_closed", "Class {code} is closed.", code=code)
    if outcome is SaveOutcome.CLASS_GONE:
        return LabError("class_gone", "Class {code} is no longer in the database.", code=code)
    return None


def _gone_link() -> str | None:
    """The class code of a link whose class is no longer in the database (after a reload or a restart)."""
    from mha_core.quiz.store import valid_student_id

    code, key = st.query_params.get(CLASS_PARAM), st.query_params.get("student")
    if not code or normalize_code(code) is None or not valid_student_id(key):
        return None
    try:
        storage().find_class(code)
    except LabError as err:
        return normalize_code(code) if err.key == "class_code_unknown" else None
    return None


def _class_now(m: Member) -> ClassInfo | None:
    """The member's class as stored now; shows why when it is gone (or the database cannot say)."""
    try:
        info = storage().class_of(m)
    except LabError as err:
        render.show_error(err)
        return None
    if info is None:
        render.show_error(LabError("class_gone", "Class {code} is no longer in the database.", code=m.code))
    return info


def quiz_banner() -> None:
    """Quiz hook, at the top: which class and name (or that the class is gone), any message."""
    m = member()
    if m is None:
        gone = _gone_link()
        if gone is not None:
            render.show_error(LabError("class_gone", "Class {code} is no longer in the database.", code=gone))
        return
    if st.query_params.get(CLASS_PARAM) != m.code:
        st.query_params[CLASS_PARAM] = m.code
    info = _class_now(m)
    st.session_state[REVEAL_KEY] = bool(info and info.reveal)
    with st.container(border=True):
        st.caption(t("classroom.in_class", code=pretty(m.code)))
        st.text(shown_name(m.name))
    show_flash()


def explanations_visible() -> bool:
    """Quiz hook: outside a class always; in a class only once the teacher revealed them."""
    if not isinstance(st.session_state.get(MEMBER_KEY), Member):
        return True
    return bool(st.session_state.get(REVEAL_KEY))


def _on_join() -> None:
    ss = st.session_state
    code = normalize_code(ss.get("classroom_code_in") or "")
    joined = ss.setdefault(JOINED_KEY, set())
    try:  # a name changes only for the session that joined with this key (not for whoever has the link)
        m = storage().join(ss.get("classroom_code_in") or "", _quiz_key(), ss.get("classroom_name_in") or "",
                           rename=code in joined)
        ss[MEMBER_KEY] = m
        joined.add(m.code)
        _upload_earlier(m)
    except LabError as err:
        _flash(err)


def _upload_earlier(m: Member) -> None:
    """Answers graded before joining (same quiz id) count for the class too; a stored one is never changed."""
    from mha_core.ui.quiz import store

    for g in store().get(m.key).grades:
        storage().record(m, g.question_id, g.canonical, g.correct, replace=False)


def _on_leave() -> None:
    for key in (MEMBER_KEY, REVEAL_KEY):
        st.session_state.pop(key, None)
    st.query_params.pop(CLASS_PARAM, None)


def student() -> None:
    """Join form, or (once joined) the class, the way to the quiz and the student's own stored answers."""
    m = member()
    if m is None:
        gone = _gone_link()
        if gone is not None:
            render.show_error(LabError("class_gone", "Class {code} is no longer in the database.", code=gone))
        _join_form()
        return
    if st.query_params.get(CLASS_PARAM) != m.code:
        st.query_params[CLASS_PARAM] = m.code
    if _class_now(m) is not None:
        st.success(t("classroom.joined", code=pretty(m.code)), icon=":material/how_to_reg:")
    st.caption(t("classroom.your_name"))
    st.text(shown_name(m.name))
    _unsaved()
    show_flash()
    quiz = spec("quiz")
    if quiz in available_pages():
        st.page_link(quiz.script, label=t("classroom.go_quiz"), icon=quiz.icon)
    _own_answers(m)
    st.button(t("classroom.leave"), key="classroom_leave", icon=":material/logout:", on_click=_on_leave)


def _join_form() -> None:
    ss = st.session_state
    from_url = st.query_params.get(CLASS_PARAM)
    if "classroom_code_in" not in ss and from_url:
        ss["classroom_code_in"] = from_url.upper()
    with st.form("classroom_join"):
        st.subheader(t("classroom.join_title"))
        st.text_input(t("classroom.code"), key="classroom_code_in", max_chars=12,
                      placeholder=t("classroom.code_placeholder"))
        st.text_input(t("classroom.name"), key="classroom_name_in", max_chars=MAX_NAME,
                      help=t("classroom.name_help", max=MAX_NAME))
        st.form_submit_button(t("classroom.join"), type="primary", icon=":material/login:", on_click=_on_join)
    show_flash()


def _unsaved() -> None:
    """The quiz's unsaved answers, if any (they are the quiz's; the warning and the button are the same)."""
    from mha_core.ui.quiz import pending_box

    pending_box(_quiz_key(), {q.id: q.title for q in load_questions(lang())})


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
    tr = bound_t()
    st.dataframe(pd.DataFrame({
        tr("classroom.col_question"): [titles.get(r.question_id, r.question_id) for r in rows],
        tr("classroom.col_right"): [r.correct for r in rows],
    }), hide_index=True, width="stretch")


# --- the teacher ---

def _session_id() -> str:
    return st.session_state.setdefault(SESSION_ID_KEY, secrets.token_hex(16))


def source_address() -> str:
    """Where the request comes from: the peer's address, or the load balancer's X-Real-IP when the peer is one
    of ``MHA_TRUSTED_PROXIES`` (only then: anyone else could write that header)."""
    try:
        peer, forwarded = st.context.ip_address, st.context.headers.get("X-Real-IP")
    except Exception:  # noqa: BLE001 - no browser context
        peer, forwarded = None, None
    peer = peer.strip()[:64] if isinstance(peer, str) else ""            # AppTest gives no address
    forwarded = forwarded.strip()[:64] if isinstance(forwarded, str) else ""
    trusted = {p.strip() for p in os.environ.get(PROXIES_ENV, "").split(",") if p.strip()}
    if forwarded and peer in trusted:
        return forwarded
    return peer or "unknown"


def limiter_keys() -> tuple[str, str]:
    """(source key, session key) of this browser for the wrong-password limiter."""
    return f"ip:{source_address()}", f"session:{_session_id()}"


def _on_login(expected: str) -> None:
    ss = st.session_state
    given = ss.pop("classroom_pw_in", "") or ""
    source, session = limiter_keys()
    try:
        lim = limiter()
        wait = lim.wait(source, session)
        if wait > 0:  # refused unchecked: it costs nothing and tells nothing
            _flash(LabError("class_rate_limited", "Too many wrong passwords: wait {seconds} s.",
                            seconds=int(wait) + 1))
            return
        if password_matches(given, expected):
            lim.succeeded(session)
            ss[TEACHER_KEY] = True
            return
        lim.failed(session)
        lim.failed(source)
    except LabError as err:  # no database, no check: the limiter cannot be skipped
        _flash(err)
        return
    _flash(LabError("class_password_wrong", "Wrong password."))


def teacher() -> None:
    """Password gate, then the class's code and QR, its switches and the live dashboard."""
    expected = configured_password(os.environ, _secrets())
    if expected is None:
        st.warning(t("classroom.no_password", env=PASSWORD_ENV), icon=":material/lock:")
        st.code(f'{PASSWORD_ENV}="…" streamlit run app.py\n\n# .streamlit/secrets.toml\nteacher_password = "…"',
                language="bash")
        return
    if not st.session_state.get(TEACHER_KEY):
        with st.form("classroom_login"):
            st.text_input(t("classroom.password"), key="classroom_pw_in", type="password")
            st.form_submit_button(t("classroom.login"), type="primary", icon=":material/key:",
                                  on_click=_on_login, args=(expected,))
        show_flash()
        return
    try:
        info = _teacher_class()
    except LabError as err:
        render.show_error(err)
        return
    show_flash()
    if info is None:
        return
    _join_card(info)
    _switches(info)
    live(info.id, info.code)


def _on_new_class() -> None:
    try:
        st.session_state[TEACH_CODE_KEY] = storage().create_class().code
    except LabError as err:
        _flash(err)


def _teacher_class() -> ClassInfo | None:
    """The class picker (most recent first) and the button that opens a new class."""
    ss = st.session_state
    known = {c.code: c for c in storage().list_classes()}
    top = st.columns([3, 2], vertical_alignment="bottom")
    top[1].button(t("classroom.new_class"), key="classroom_new", type="primary", icon=":material/add:",
                  on_click=_on_new_class, width="stretch")
    if not known:
        st.info(t("classroom.no_classes"), icon=":material/info:")
        return None
    if ss.get(TEACH_CODE_KEY) not in known:
        ss[TEACH_CODE_KEY] = next(iter(known))
    tr = bound_t()
    code = top[0].selectbox(t("classroom.pick_class"), list(known), key=TEACH_CODE_KEY, format_func=lambda c: tr(
        "classroom.class_option", code=pretty(c), state=tr("classroom.closed" if known[c].closed else "classroom.open"),
        time=known[c].created_at.strftime("%Y-%m-%d %H:%M")))
    return known[code]


def join_link(code: str) -> str:
    """The classroom page's address with ?class=CODE (relative when the page's own URL is unknown)."""
    try:
        here = st.context.url or ""
    except Exception:  # noqa: BLE001 - no browser context (tests)
        here = ""
    parts = urlsplit(here)
    if not parts.scheme:
        return f"/{spec('classroom').key}?{urlencode({CLASS_PARAM: code})}"
    path = parts.path.rstrip("/")
    if not path.endswith(f"/{spec('classroom').key}"):
        path = f"{path}/{spec('classroom').key}"
    return urlunsplit((parts.scheme, parts.netloc, path, urlencode({CLASS_PARAM: code}), ""))


def qr_png(link: str) -> bytes:
    """The join link as a QR code (PNG, large modules for the back row)."""
    out = io.BytesIO()
    segno.make(link, error="m").save(out, kind="png", scale=12, border=2)
    return out.getvalue()


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
        with cols[1]:
            st.image(qr_png(link), caption=t("classroom.qr_caption"), width=320)


def _on_switch(kind: str, class_id: int, key: str) -> None:
    try:
        value = bool(st.session_state.get(key))
        if kind == "closed":
            storage().set_closed(class_id, value)
        else:
            storage().set_reveal(class_id, value)
    except LabError as err:
        _flash(err)


def _on_present() -> None:
    st.session_state[PRESENT_KEY] = True
    st.query_params[PRESENT_KEY] = "1"


def _on_logout() -> None:
    st.session_state[TEACHER_KEY] = False


def _switches(info: ClassInfo) -> None:
    ss = st.session_state
    closed_key, reveal_key = f"classroom_closed_{info.id}", f"classroom_reveal_{info.id}"
    ss[closed_key], ss[reveal_key] = info.closed, info.reveal
    cols = st.columns(4)
    cols[0].toggle(t("classroom.close"), key=closed_key, on_change=_on_switch, args=("closed", info.id, closed_key),
                   help=t("classroom.close_help"))
    cols[1].toggle(t("classroom.reveal"), key=reveal_key, on_change=_on_switch, args=("reveal", info.id, reveal_key),
                   help=t("classroom.reveal_help"))
    cols[2].button(t("classroom.present"), key="classroom_present", icon=":material/slideshow:", on_click=_on_present,
                   help=t("classroom.present_help"))
    cols[3].button(t("classroom.logout"), key="classroom_logout", icon=":material/logout:", on_click=_on_logout)


@st.fragment(run_every=REFRESH_SECONDS)
def live(class_id: int, code: str) -> None:
    """The dashboard, refreshed every few seconds without reloading the page."""
    try:
        students, rows = storage().students(class_id), storage().answers(class_id)
    except LabError as err:
        render.show_error(err)
        return
    questions = load_questions(lang())
    by_id = {q.id: q for q in questions}
    titles = {q.id: q.title for q in questions}
    board = dashboard(students, rows, [q.id for q in questions])
    tr = bound_t()
    m = st.columns(3)
    m[0].metric(t("classroom.m_students"), len(board.students))
    m[1].metric(t("classroom.m_answers"), board.answers)
    m[2].metric(t("classroom.m_right"), f"{board.right / board.answers:.0%}" if board.answers else "–")
    st.subheader(t("classroom.share_title"))
    st.altair_chart(share_chart(board.questions, titles, x_title=t("classroom.share_axis"),
                                y_title=t("classroom.col_question"), n_title=t("classroom.col_answered")),
                    width="stretch")
    with st.expander(t("classroom.per_question"), icon=":material/table:"):
        st.dataframe(pd.DataFrame({
            tr("classroom.col_question"): [titles.get(s.question_id, s.question_id) for s in board.questions],
            tr("classroom.col_answered"): [s.answered for s in board.questions],
            tr("classroom.col_right_n"): [s.right for s in board.questions],
        }), hide_index=True, width="stretch")
    st.subheader(t("classroom.wrong_title"))
    if board.wrong:
        st.dataframe(pd.DataFrame({
            tr("classroom.col_question"): [titles.get(w.question_id, w.question_id) for w in board.wrong],
            tr("classroom.col_answer"): [_described(by_id.get(w.question_id), w.canonical) for w in board.wrong],
            tr("classroom.col_count"): [w.count for w in board.wrong],
        }), hide_index=True, width="stretch")
    else:
        st.caption(t("classroom.no_wrong"))
    st.subheader(t("classroom.students_title"))
    st.dataframe(pd.DataFrame({
        tr("classroom.col_name"): [s.name for s in board.students],  # bidi overrides neutralised (shown_name)
        tr("classroom.col_answered"): [s.answered for s in board.students],
        tr("classroom.col_right_n"): [s.right for s in board.students],
    }), hide_index=True, width="stretch")
    st.download_button(t("classroom.csv"), answers_csv(code, rows, titles), file_name=f"class-{code}.csv",
                       mime="text/csv", icon=":material/download:", key="classroom_csv", on_click="ignore")


def _described(q: Question | None, canonical: str) -> str:
    """A wrong answer as the students saw it (option texts, the number with its unit); else as stored."""
    if q is None:
        return canonical
    try:
        return describe(q, canonical) or canonical
    except (KeyError, ValueError, ArithmeticError):
        return canonical


# --- the projector ---

def pipeline_keys() -> tuple[str, ...]:
    """The pipeline pages that exist, in teaching order (the order of mha_core.ui.nav.PAGES)."""
    return tuple(p.key for p in available_pages() if p.pipeline)


def presenting() -> bool:
    """Presentation mode: switched on from the teacher's view, or by ?present=1 in a link."""
    ss = st.session_state
    if st.query_params.get(PRESENT_KEY) == "1":
        ss[PRESENT_KEY] = True
    return bool(ss.get(PRESENT_KEY))


def _on_exit_present() -> None:
    st.session_state[PRESENT_KEY] = False
    st.query_params.pop(PRESENT_KEY, None)


_PRESENT_CSS = """<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], [data-testid="stExpandSidebarButton"],
[data-testid="stSidebarNav"] {display: none !important;}
[data-testid="stMain"] {font-size: 1.45rem;}
[data-testid="stMain"] p, [data-testid="stMain"] li, [data-testid="stMain"] td {font-size: 1.45rem;}
[data-testid="stMain"] h1 {font-size: 3.4rem;}
[data-testid="stMain"] h2 {font-size: 2.4rem;}
[data-testid="stMainBlockContainer"] {max-width: 100%; padding-top: 1.5rem;}
</style>"""


def presentation(current: str) -> bool:
    """For app.py: in presentation mode, large type, no sidebar, and previous / next through the pipeline
    pages in teaching order (plus exit). True when presenting, so app.py skips the sidebar controls."""
    if not presenting():
        return False
    st.html(_PRESENT_CSS)  # static style only; no user text
    keys = pipeline_keys()
    i = keys.index(current) if current in keys else -1
    cols = st.columns([1, 1, 1])
    prev_key = keys[i - 1] if i > 0 else None
    next_key = keys[i + 1] if 0 <= i < len(keys) - 1 else (keys[0] if i < 0 else None)
    if cols[0].button(t("classroom.prev_page"), key="present_prev", icon=":material/arrow_back:",
                      disabled=prev_key is None, width="stretch"):
        st.switch_page(spec(prev_key).script)
    cols[1].button(t("classroom.exit_present"), key="present_exit", icon=":material/close_fullscreen:",
                   on_click=_on_exit_present, width="stretch")
    if cols[2].button(t("classroom.next_page"), key="present_next", icon=":material/arrow_forward:",
                      disabled=next_key is None, width="stretch"):
        st.switch_page(spec(next_key).script)
    return True


def role() -> str:
    """Student or teacher view (a link with ?class= opens the student's)."""
    tr = bound_t()
    st.session_state.setdefault(ROLE_KEY, "student")
    choice = st.segmented_control(t("classroom.role"), ("student", "teacher"), key=ROLE_KEY,
                                  format_func=lambda r: tr(f"classroom.role_{r}"))
    return choice or "student"

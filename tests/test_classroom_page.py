"""The class page through AppTest, in both languages: the teacher's password gate (unset, wrong, rate limited),
opening a class and seeing students live; a student joining by link, answering on the quiz page, explanations
held back until revealed; wrong codes, closed classes, a locked and an unreachable database."""

from __future__ import annotations

import socket
import sqlite3

import pytest
from streamlit.testing.v1 import AppTest
from test_quiz_page import answer

from apphelpers import open_page, shown_text
from mha_core.classroom import Storage, pretty, sqlite_url
from mha_core.i18n import LANGS, translate
from mha_core.quiz import load_questions, student_seed
from mha_core.ui import classroom as ui
from mha_core.ui.nav import spec

PAGE, QUIZ = spec("classroom").script, spec("quiz").script
PASSWORD = "s3cret 教室"
NAME = "<script>x</script>🦊\"O'N\"; DROP TABLE x"


@pytest.fixture
def db(tmp_path, monkeypatch) -> str:
    """A fresh SQLite file for this test (never the user's data/), and a teacher password."""
    url = sqlite_url(tmp_path / "data" / "class.sqlite3")
    monkeypatch.setenv("MHA_DATABASE_URL", url)
    monkeypatch.setenv("MHA_TEACHER_PASSWORD", PASSWORD)
    ui.limiter.clear()
    yield url
    ui.limiter.clear()


def open_class_page(lang: str, **params: str) -> AppTest:
    at = open_page(PAGE, lang, query=params)
    assert not at.exception, at.exception
    return at


def as_teacher(at: AppTest, password: str = PASSWORD) -> AppTest:
    if at.segmented_control(key=ui.ROLE_KEY).value != "teacher":
        at.segmented_control(key=ui.ROLE_KEY).set_value("teacher").run()
    at.text_input(key="classroom_pw_in").input(password)
    next(b for b in at.button if b.key and b.key.startswith("FormSubmitter:classroom_login")).click().run()
    assert not at.exception, at.exception
    return at


def join(at: AppTest, name: str, code: str | None = None) -> AppTest:
    if code is not None:
        at.text_input(key="classroom_code_in").input(code)
    at.text_input(key="classroom_name_in").input(name)
    next(b for b in at.button if b.key and b.key.startswith("FormSubmitter:classroom_join")).click().run()
    assert not at.exception, at.exception
    return at


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


@pytest.mark.parametrize("lang", LANGS)
def test_without_a_password_the_dashboard_says_how_and_shows_nothing(db, monkeypatch, lang):
    monkeypatch.delenv("MHA_TEACHER_PASSWORD")
    at = open_class_page(lang)
    at.segmented_control(key=ui.ROLE_KEY).set_value("teacher").run()
    assert translate(lang, "classroom.no_password", env="MHA_TEACHER_PASSWORD") in [w.value for w in at.warning]
    assert not [b for b in at.button if b.key == "classroom_new"] and not at.text_input


@pytest.mark.parametrize("lang", LANGS)
def test_a_wrong_password_gets_nothing_and_is_rate_limited(db, lang):
    at = open_class_page(lang)
    for _ in range(4):
        as_teacher(at, "guess")
        assert translate(lang, "errors.class_password_wrong") in errors(at)
        assert not [b for b in at.button if b.key == "classroom_new"]
    as_teacher(at)  # even the right password waits out the back-off
    assert any(e.startswith(translate(lang, "errors.class_rate_limited", seconds=2)[:6]) for e in errors(at))
    assert not [b for b in at.button if b.key == "classroom_new"]


@pytest.mark.parametrize("lang", LANGS)
def test_teacher_opens_a_class_and_sees_the_students(db, lang):
    at = as_teacher(open_class_page(lang))
    assert translate(lang, "classroom.no_classes") in [i.value for i in at.info]
    at.button(key="classroom_new").click().run()
    store = Storage.open(db)
    (info,) = store.list_classes()
    assert pretty(info.code) in [t.value for t in at.title]
    qid = load_questions(lang)[0].id
    for i, name in enumerate([NAME, "学生 🐼", "שלום"]):
        store.record(store.join(info.code, f"{i:08x}", name), qid, "64" if i else "65", bool(i))
    at.run()
    assert not at.exception, at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics[translate(lang, "classroom.m_students")] == "3"
    assert metrics[translate(lang, "classroom.m_answers")] == "3"
    names = at.dataframe[-1].value[translate(lang, "classroom.col_name")].tolist()
    assert names == [NAME, "学生 🐼", "שלום"]                # verbatim, as table cells
    assert NAME not in shown_text(at)                          # never as markdown
    at.toggle(key=f"classroom_closed_{info.id}").set_value(True).run()
    assert store.find_class(info.code).closed
    store.dispose()


@pytest.mark.parametrize("lang", LANGS)
def test_a_student_joins_by_link_and_their_quiz_answers_are_recorded(db, lang):
    store = Storage.open(db)
    info = store.create_class()
    at = open_class_page(lang, **{"class": info.code.lower()})
    assert at.text_input(key="classroom_code_in").value == info.code
    join(at, f" {NAME} ")  # 40 characters with the spaces: the widget's own limit
    assert translate(lang, "classroom.joined", code=pretty(info.code)) in [s.value for s in at.success]
    assert NAME in [t.value for t in at.text] and NAME not in shown_text(at)
    key = at.session_state["quiz_student"]
    at.switch_page(QUIZ)
    at.run()
    q = load_questions(lang, student_seed(key))[0]
    answer(at, q, student_seed(key), right=True)
    assert not at.exception, at.exception
    (row,) = store.answers(info.id)
    assert (row.name, row.question_id, row.correct) == (NAME, q.id, True)
    assert translate(lang, "classroom.explanation_hidden") in [c.value for c in at.caption]
    store.set_reveal(info.id, True)
    at.run()
    assert q.explanation in [m.value for m in at.markdown]
    store.dispose()


@pytest.mark.parametrize("lang", LANGS)
def test_wrong_codes_closed_classes_and_bad_names_get_clear_messages(db, lang):
    store = Storage.open(db)
    info = store.create_class()
    at = open_class_page(lang)
    join(at, "Ann", "ZZZZ-ZZZZ")
    assert translate(lang, "errors.class_code_unknown", code="ZZZZZZZZ") in errors(at)
    join(at, "Ann", "nope")
    assert translate(lang, "errors.class_code_malformed") in errors(at)
    join(at, "   ", info.code)
    assert translate(lang, "errors.class_name_empty") in errors(at)
    store.set_closed(info.id, True)
    join(at, "Ann", info.code)
    assert translate(lang, "errors.class_closed", code=info.code) in errors(at)
    assert store.students(info.id) == ()
    store.dispose()


def test_a_locked_database_keeps_the_answer_to_resubmit(db, tmp_path):
    store = Storage.open(db)
    info = store.create_class()
    at = join(open_class_page("en", **{"class": info.code}), "Ann")
    key = at.session_state["quiz_student"]
    at.switch_page(QUIZ)
    at.run()
    q = load_questions("en", student_seed(key))[0]
    holder = sqlite3.connect(tmp_path / "data" / "class.sqlite3", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        answer(at, q, student_seed(key), right=True)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert not at.exception, at.exception
    assert translate("en", "errors.class_db_busy") in errors(at)
    assert translate("en", "classroom.pending", n=1) in [w.value for w in at.warning]
    assert store.answers(info.id) == ()
    at.button(key="classroom_resubmit").click().run()
    assert [r.question_id for r in store.answers(info.id)] == [q.id]
    assert not at.warning
    store.dispose()


def test_an_unreachable_database_gets_a_translated_message(monkeypatch):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("MHA_DATABASE_URL", f"postgresql+psycopg://nobody:x@127.0.0.1:{port}/none")
    at = join(open_class_page("zh"), "小明", "K7QX-2MPA")
    assert translate("zh", "errors.class_db_unavailable") in errors(at)


def test_presentation_mode_steps_through_the_pipeline():
    assert ui.pipeline_keys()[:1] == ("overview",) and "concat" in ui.pipeline_keys()
    def script():
        import streamlit as st

        from mha_core.ui import classroom

        st.session_state.setdefault("lang", "en")
        st.session_state["presenting"] = classroom.presentation(st.session_state.get("page", "overview"))

    at = AppTest.from_function(script)
    at.run()
    assert at.session_state["presenting"] is False and not at.button
    at.query_params["present"] = "1"
    at.run()
    assert at.session_state["presenting"] is True
    assert at.button(key="present_prev").disabled and not at.button(key="present_next").disabled
    at.session_state["page"] = ui.pipeline_keys()[-1]
    at.run()
    assert not at.button(key="present_prev").disabled and at.button(key="present_next").disabled
    at.button(key="present_exit").click().run()
    assert at.session_state["presenting"] is False

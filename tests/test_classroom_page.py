"""The class page through AppTest, in both languages: the teacher's password gate (unset, wrong, rate limited),
opening a class and seeing students live; a student joining by link, answering on the quiz page, explanations
held back until revealed; wrong codes, closed classes, a locked and an unreachable database."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path
from types import SimpleNamespace

import pytest
from streamlit.runtime import caching
from streamlit.testing.v1 import AppTest

from apphelpers import ROOT, open_page, shown_text
from mha_core.classroom import SOURCE, Storage, pretty, sqlite_url
from mha_core.i18n import LANGS, translate
from mha_core.quiz import load_questions, student_seed, valid_student_id
from mha_core.ui import classroom, present, student, teacher
from mha_core.ui.nav import spec
from mha_core.ui.quiz import button_key
from quizhelpers import answer

PAGE, QUIZ = spec("classroom").script, spec("quiz").script
PASSWORD = "s3cret 教室"
NAME = "<script>x</script>🦊\"O'N\"; DROP TABLE x"


@pytest.fixture
def db(tmp_path, monkeypatch) -> str:
    """A fresh SQLite file for this test (never the user's data/), and a teacher password."""
    url = sqlite_url(tmp_path / "data" / "class.sqlite3")
    monkeypatch.setenv("MHA_DATABASE_URL", url)
    monkeypatch.setenv("MHA_TEACHER_PASSWORD", PASSWORD)
    return url


def clear_cache() -> None:
    """What the server does for any browser's ``clear_cache`` back-message (AppSession._handle_clear_cache_request
    in the pinned Streamlit): both caches cleared for every session."""
    caching.cache_data.clear()
    caching.cache_resource.clear()


def open_class_page(lang: str, **params: str) -> AppTest:
    at = open_page(PAGE, lang, query=params)
    assert not at.exception, at.exception
    return at


def as_teacher(at: AppTest, password: str = PASSWORD) -> AppTest:
    if at.segmented_control(key=classroom.ROLE_KEY).value != "teacher":
        at.segmented_control(key=classroom.ROLE_KEY).set_value("teacher").run()
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
    at.segmented_control(key=classroom.ROLE_KEY).set_value("teacher").run()
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


def test_the_teachers_view_and_class_survive_a_visit_to_the_projector(db):
    """The role and the class picked are kept widget values (classroom.KEPT, teacher.KEPT): after presenting the
    pipeline and coming back, the teacher sees the same class (before: the student's join form)."""
    store = Storage.open(db)
    older = store.create_class()
    store.create_class()  # the newest is the picker's first option
    at = as_teacher(open_class_page("en"))
    at.selectbox(key=teacher.TEACH_CODE_KEY).set_value(older.code).run()
    at.button(key=teacher.PRESENT_BUTTON_KEY).click().run()
    assert at.query_params[present.PRESENT_PARAM] == "1" and at.session_state[present.PRESENT_KEY] is True
    at.button(key=present.NEXT_KEY).click().run()     # to the first pipeline page
    at.button(key=present.EXIT_KEY).click().run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    assert at.segmented_control(key=classroom.ROLE_KEY).value == "teacher"
    assert at.selectbox(key=teacher.TEACH_CODE_KEY).value == older.code
    assert pretty(older.code) in [t.value for t in at.title]
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
    key = at.session_state[student.STUDENT_KEY]
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


def student_on_quiz(code: str, lang: str = "en", name: str = "Ann") -> tuple[AppTest, str]:
    """A student who joined by link and went to the quiz page: (the session, their quiz id)."""
    at = join(open_class_page(lang, **{"class": code}), name)
    key = at.session_state[student.STUDENT_KEY]
    at.switch_page(QUIZ)
    at.run()
    assert not at.exception, at.exception
    return at, key


def reload(at: AppTest, lang: str = "en") -> AppTest:
    """The same URL in a new session (a reload, or a reconnect after a restart)."""
    again = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    again.session_state["lang"] = lang
    again.query_params.update({k: v for k, v in at.query_params.items() if k != "lang"})
    again.run().switch_page(QUIZ).run()
    assert not again.exception, again.exception
    return again


def answered(at: AppTest, lang: str = "en") -> int:
    n = len(load_questions(lang))
    return next(i for i in range(n + 1) if translate(lang, "quiz.progress", answered=i, total=n)
                in [p.proto.text for p in at.get("progress")])


@pytest.mark.usefixtures("short_busy_timeout")
def test_an_unsaved_answer_is_announced_and_a_reload_never_pretends_it_was_saved(db, tmp_path):
    """Broken 2: the database busy, the answer is graded but not saved. The page says plainly, before the
    student leaves, how many answers are unsaved (with a button to send them again); a reload finds the unsent
    answer, sends it again and then shows exactly what the database holds."""
    store = Storage.open(db)
    info = store.create_class()
    at, key = student_on_quiz(info.code)
    qs = load_questions("en", student_seed(key))
    answer(at, qs[0], student_seed(key), right=True)
    holder = sqlite3.connect(tmp_path / "data" / "class.sqlite3", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        at.button(key="quiz_next").click().run()
        answer(at, qs[1], student_seed(key), right=True)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert not at.exception, at.exception
    assert translate("en", "errors.class_db_busy") in errors(at)
    assert translate("en", "quiz.unsaved", n=1, titles=qs[1].title) in [w.value for w in at.warning]
    assert answered(at) == 1 and len(store.answers(info.id)) == 1     # the quiz shows what is stored
    assert answered(reload(at)) == len(store.answers(info.id)) == 2   # a reload sends the kept answer again
    at.button(key="quiz_resend").click().run()                        # this tab's send again: stored already
    assert [r.question_id for r in store.answers(info.id)] == [qs[0].id, qs[1].id]
    assert answered(at) == 2 and not at.warning
    store.dispose()


@pytest.mark.usefixtures("short_busy_timeout")
@pytest.mark.parametrize("lang", LANGS)
def test_a_busy_database_at_join_or_login_does_not_talk_of_answers(db, tmp_path, lang):
    store = Storage.open(db)
    info = store.create_class()
    holder = sqlite3.connect(tmp_path / "data" / "class.sqlite3", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        at = join(open_class_page(lang, **{"class": info.code}), "Ann")
        teacher = as_teacher(open_class_page(lang), "guess")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    busy = translate(lang, "errors.class_db_busy")
    assert busy in errors(at) and busy in errors(teacher)
    assert not any(word in busy for word in ("answer", "回答", "kept", "保存在这里"))
    store.dispose()


def test_a_clear_cache_message_mid_class_resets_neither_limiter_nor_progress(db, monkeypatch):
    """Broken 1: any browser's clear_cache cleared the limiter and everyone's progress. Now a hostile client
    sends wrong passwords from fresh sessions (3 each), clearing the caches after every one: only the
    source's free tries (+1) are checked, the 4 after them from new sessions are refused (clock frozen: no back-off
    expires), and the class's progress stays."""
    monkeypatch.setattr("mha_core.classroom.auth.time", SimpleNamespace(time=lambda: 1_000_000.0))
    store = Storage.open(db)
    info = store.create_class()
    at, key = student_on_quiz(info.code)
    qs = load_questions("en", student_seed(key))
    for q in qs[:2]:
        answer(at, q, student_seed(key), right=True)
        at.button(key="quiz_next").click().run()
    free = int(SOURCE.free) + 1  # the free tries, and the one whose failure starts the back-off
    tries = free + 4             # the 4 refused span two fresh sessions (30 tries checked nothing more)
    checked = refused = 0
    attacker = open_class_page("en")
    for i in range(tries):
        if i % 3 == 0:
            attacker = open_class_page("en")
        as_teacher(attacker, f"guess {i}")
        checked += translate("en", "errors.class_password_wrong") in errors(attacker)
        refused += any(e.startswith(translate("en", "errors.class_rate_limited", seconds=0)[:20])
                       for e in errors(attacker))
        clear_cache()
    assert (checked, refused) == (free, tries - free)
    at.run()
    assert answered(at) == 2 and answered(reload(at)) == 2 and len(store.answers(info.id)) == 2
    store.dispose()


def test_after_a_restart_progress_comes_back_and_a_stored_answer_is_not_overwritten(db):
    """Broken 5: a restart (the server's caches gone, the browser reconnecting with a new session) showed 0/35,
    and answering again overwrote the stored row. Now the progress is read from the database: the question
    shows its grade, no Check button, and the row is unchanged; a retry (the student's choice) may change it."""
    store = Storage.open(db)
    info = store.create_class()
    at, key = student_on_quiz(info.code)
    seed = student_seed(key)
    q = load_questions("en", seed)[0]
    answer(at, q, seed, right=False)
    clear_cache()
    back = reload(at)
    assert answered(back) == 1 and translate("en", "quiz.wrong") in errors(back)
    assert button_key("check", q.id) not in [b.key for b in back.button]
    (row,) = store.answers(info.id)
    assert (row.correct, row.attempts) == (False, 1)
    store.dispose()


@pytest.mark.parametrize("lang", LANGS)
def test_a_deleted_database_file_is_reported_to_teacher_and_students(db, tmp_path, lang):
    """Broken 3: the SQLite file deleted under the running app. The teacher's dashboard and the student's quiz
    say so (nothing is "stored" into the unlinked file); after a restart the student is told the class is gone
    instead of silently dropping out."""
    teacher = as_teacher(open_class_page(lang))
    teacher.button(key="classroom_new").click().run()
    store = Storage.open(db)
    (info,) = store.list_classes()
    store.dispose()
    at, key = student_on_quiz(info.code, lang)
    qs = load_questions(lang, student_seed(key))
    answer(at, qs[0], student_seed(key), right=True)
    path = tmp_path / "data" / "class.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    lost = translate(lang, "errors.class_db_lost")
    teacher.run()
    assert lost in errors(teacher)
    at.button(key="quiz_next").click().run()
    answer(at, qs[1], student_seed(key), right=True)
    assert lost in errors(at)
    assert translate(lang, "quiz.unsaved", n=1, titles=qs[1].title) in [w.value for w in at.warning]
    clear_cache()  # what a restart does to the process: a new engine, a new (empty) file
    back = reload(at, lang)
    assert translate(lang, "errors.class_gone", code=info.code) in errors(back)


def test_a_students_link_cannot_rename_them_and_their_id_is_128_bits(db):
    store = Storage.open(db)
    info = store.create_class()
    at, key = student_on_quiz(info.code, name="Ann")
    assert valid_student_id(key) and len(key) == 32
    other = open_page(PAGE, "en", query={"class": info.code, "student": key})  # someone who saw the link
    assert "Ann" in [t.value for t in other.text]
    other.button(key="classroom_leave").click().run()
    join(other, "Mallory", info.code)
    assert [s.name for s in store.students(info.id)] == ["Ann"]
    at.switch_page(PAGE).run()                                                # the student's own session
    at.button(key="classroom_leave").click().run()
    join(at, "Ann B.", info.code)
    assert [s.name for s in store.students(info.id)] == ["Ann B."]
    store.dispose()


def test_invisible_names_are_refused(db):
    store = Storage.open(db)
    info = store.create_class()
    at = join(open_class_page("zh", **{"class": info.code}), "\u200b\u200d\u2060")
    assert translate("zh", "errors.class_name_invisible") in errors(at)
    assert store.students(info.id) == ()
    store.dispose()


def test_an_unreachable_database_gets_a_translated_message(monkeypatch):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("MHA_DATABASE_URL", f"postgresql+psycopg://nobody:x@127.0.0.1:{port}/none")
    at = join(open_class_page("zh"), "小明", "K7QX-2MPA")
    assert translate("zh", "errors.class_db_unavailable") in errors(at)


def test_presentation_mode_steps_through_the_pipeline():
    assert present.pipeline_keys()[:1] == ("overview",) and "concat" in present.pipeline_keys()
    def script():
        import streamlit as st

        from mha_core.ui import present

        st.session_state.setdefault("lang", "en")
        st.session_state["presenting"] = present.presentation(st.session_state.get("page", "overview"))

    at = AppTest.from_function(script)
    at.run()
    assert at.session_state["presenting"] is False and not at.button
    at.query_params["present"] = "1"
    at.run()
    assert at.session_state["presenting"] is True
    assert at.button(key="present_prev").disabled and not at.button(key="present_next").disabled
    at.session_state["page"] = present.pipeline_keys()[-1]
    at.run()
    assert not at.button(key="present_prev").disabled and at.button(key="present_next").disabled
    at.button(key="present_exit").click().run()
    assert at.session_state["presenting"] is False


def test_the_class_store_is_found_without_reading_secrets_when_the_environment_names_it(monkeypatch):
    """Every follower's redraw looks the store up several times: the secrets are read only when needed."""
    from mha_core.classroom.config import database_url
    from mha_core.ui import class_services

    reads = []
    monkeypatch.setattr(class_services, "streamlit_secrets",
                        lambda: reads.append(1) or {"database_url": "sqlite:///from-secrets.db"})
    assert database_url({"MHA_DATABASE_URL": "sqlite:///env.db"}, class_services.LazySecrets()) == "sqlite:///env.db"
    assert reads == []
    secrets = class_services.LazySecrets()
    assert database_url({}, secrets) == "sqlite:///from-secrets.db" and dict(secrets) == {
        "database_url": "sqlite:///from-secrets.db"} and reads == [1]

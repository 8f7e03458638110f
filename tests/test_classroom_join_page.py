"""Issue 28 item 2 through AppTest (each session its own AppTest against one SQLite file): a taken name refused
while its owner still gets back in, joins limited per address, the dashboard's lock and its remove-with-confirm,
the removed student told so, and the joined / voted counts on the dashboard and the presenter's bar."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from apphelpers import open_page
from mha_core.classroom import Storage, sqlite_url
from mha_core.i18n import LANGS, translate
from mha_core.quiz import load_questions
from mha_core.ui import classroom, live, student, teacher
from mha_core.ui.nav import spec

PAGE = spec("classroom").script
PASSWORD = "join 课堂"


@pytest.fixture
def db(tmp_path, monkeypatch) -> str:
    """A fresh SQLite file for this test and a teacher password."""
    url = sqlite_url(tmp_path / "data" / "class.sqlite3")
    monkeypatch.setenv("MHA_DATABASE_URL", url)
    monkeypatch.setenv("MHA_TEACHER_PASSWORD", PASSWORD)
    return url


@pytest.fixture
def store(db):
    s = Storage.open(db)
    yield s
    s.dispose()


def ok(at: AppTest) -> AppTest:
    assert not at.exception, at.exception
    return at


def teacher_with_a_class(lang: str) -> AppTest:
    at = ok(open_page(PAGE, lang))
    ok(at.segmented_control(key=classroom.ROLE_KEY).set_value("teacher").run())
    at.text_input(key="classroom_pw_in").input(PASSWORD)
    ok(next(b for b in at.button if b.key and b.key.startswith("FormSubmitter:classroom_login")).click().run())
    return ok(at.button(key="classroom_new").click().run())


def joined(code: str, name: str, lang: str = "en", **query: str) -> AppTest:
    """A student who opened the class link (with ``query`` added) and pressed Join under ``name``."""
    at = ok(open_page(PAGE, lang, query={"class": code, **query}))
    at.text_input(key=classroom.NAME_IN_KEY).input(name)
    return ok(next(b for b in at.button if b.key and b.key.startswith("FormSubmitter:classroom_join")).click().run())


def rejoin(at: AppTest, name: str) -> AppTest:
    """The same session leaves the class (when still in it) and joins it again (same student id)."""
    if any(b.key == classroom.LEAVE_KEY for b in at.button):
        ok(at.button(key=classroom.LEAVE_KEY).click().run())
    at.text_input(key=classroom.NAME_IN_KEY).input(name)
    return ok(next(b for b in at.button if b.key and b.key.startswith("FormSubmitter:classroom_join")).click().run())


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def key_of(at: AppTest) -> str:
    return at.session_state[student.STUDENT_KEY]


@pytest.mark.parametrize("lang", LANGS)
def test_a_taken_name_is_refused_and_its_owner_still_gets_back_in(store, lang):
    info = store.create_class()
    ann = joined(info.code, "Ann Lee", lang)
    assert store.students(info.id)[0].name == "Ann Lee"
    other = joined(info.code, "  ANN   lee ", lang)
    assert translate(lang, "errors.class_name_taken") in errors(other)
    assert student.MEMBER_KEY not in other.session_state and len(store.students(info.id)) == 1
    assert ann.query_params[student.STUDENT_PARAM] == key_of(ann)    # the class page's address keeps her id …
    back = ok(open_page(PAGE, lang, query={"class": info.code, "student": ann.query_params["student"]}))
    assert back.session_state[student.MEMBER_KEY].name == "Ann Lee" and not errors(back)  # … so a reload finds her
    again = rejoin(ann, "ann lee")                                    # or the join form once more, same id
    assert not errors(again) and len(store.students(info.id)) == 1


def test_joins_from_one_address_are_limited_but_coming_back_is_free(store, monkeypatch):
    monkeypatch.setenv("MHA_JOIN_LIMITS", "3/1,100/100")  # 3 at once from an address, then one a minute
    info = store.create_class()
    first = [joined(info.code, f"Student {i}") for i in range(3)]
    assert all(not errors(s) for s in first)
    fourth = joined(info.code, "Student 3")
    assert any(e.startswith(translate("en", "errors.class_join_wait", seconds=60)[:30]) for e in errors(fourth))
    assert len(store.students(info.id)) == 3
    back = rejoin(first[0], "Student 0")                              # an existing student takes no token
    assert not errors(back) and back.session_state[student.MEMBER_KEY].key == key_of(first[0])


@pytest.mark.parametrize("lang", LANGS)
def test_the_teacher_locks_the_class_to_new_students(store, lang):
    at = teacher_with_a_class(lang)
    (info,) = store.list_classes()
    ann = joined(info.code, "Ann", lang)
    ok(at.toggle(key=teacher.switch_key("locked", info.id)).set_value(True).run())
    assert store.find_class(info.code).locked
    assert translate(lang, "classroom.locked_note") in [i.value for i in at.info]
    bo = joined(info.code, "Bo", lang)
    assert translate(lang, "errors.class_locked", code=info.code) in errors(bo)
    back = ok(open_page(PAGE, lang, query={"class": info.code, "student": key_of(ann)}))
    assert back.session_state[student.MEMBER_KEY].name == "Ann"        # who joined before comes back
    ok(at.toggle(key=teacher.switch_key("locked", info.id)).set_value(False).run())
    assert not errors(joined(info.code, "Bo", lang))


@pytest.mark.parametrize("lang", LANGS)
def test_the_teacher_removes_a_student_after_confirming_and_the_student_is_told(store, lang):
    at = teacher_with_a_class(lang)
    (info,) = store.list_classes()
    fake, real = joined(info.code, "**Ann**", lang), joined(info.code, "Bo", lang)
    qid = load_questions(lang)[0].id
    for s in (fake, real):
        store.record(s.session_state[student.MEMBER_KEY], qid, "a", True)
    ok(at.run())
    fake_id = fake.session_state[student.MEMBER_KEY].student_id
    ok(at.selectbox(key=teacher.REMOVE_PICK_KEY).select(fake_id).run())
    ok(at.button(key=teacher.REMOVE_KEY).click().run())
    assert len(store.students(info.id)) == 2                           # nothing yet: asked first
    ok(at.button(key=teacher.REMOVE_NO_KEY).click().run())
    assert len(store.students(info.id)) == 2
    ok(at.selectbox(key=teacher.REMOVE_PICK_KEY).select(fake_id).run())
    ok(at.button(key=teacher.REMOVE_KEY).click().run())
    assert any(w.value.startswith(translate(lang, "classroom.remove_confirm", name="\\*\\*Ann\\*\\*")[:12])
               for w in at.warning)
    ok(at.button(key=teacher.REMOVE_YES_KEY).click().run())
    assert [s.name for s in store.students(info.id)] == ["Bo"] and [a.name for a in store.answers(info.id)] == ["Bo"]
    done = translate(lang, "classroom.remove_done", name="\\*\\*Ann\\*\\*")
    assert done in [s.value for s in at.success]                      # the name escaped, never bold
    ok(fake.run())
    assert errors(fake).count(translate(lang, "errors.class_removed", code=info.code)) == 1
    reload = ok(open_page(PAGE, lang, query={"class": info.code, "student": key_of(fake)}))
    assert translate(lang, "errors.class_removed", code=info.code) in errors(reload)
    assert translate(lang, "errors.class_removed", code=info.code) in errors(rejoin(fake, "Ann again"))


@pytest.mark.parametrize("lang", LANGS)
def test_the_dashboard_and_the_presenter_show_joined_and_voted(store, monkeypatch, lang):
    monkeypatch.setattr(live.follow, "SHARED_READ_S", 1e-6)
    at = teacher_with_a_class(lang)
    (info,) = store.list_classes()
    for name in ("Ann", "Bo", "Cy"):
        joined(info.code, name, lang)
    ok(at.run())
    metrics = {m.label: m.value for m in at.metric}
    assert metrics[translate(lang, "classroom.m_students")] == "3"
    assert metrics[translate(lang, "classroom.m_voted")] == "–"       # no vote open
    ok(at.button(key=live.START_KEY).click().run())
    at.switch_page(spec(at.session_state[live.PAGE_KEY]).script)
    ok(at.run())
    shown = [m.value for m in at.markdown]
    assert any(translate(lang, "classroom.turnout_no_vote", joined=3) in m for m in shown), shown


def test_a_student_removed_while_on_a_lesson_page_is_told_there(store):
    info = store.create_class()
    bo = joined(info.code, "Bo")
    ok(bo.switch_page(spec("overview").script).run())
    assert not errors(bo)
    store.remove_student(info.id, bo.session_state[student.MEMBER_KEY].student_id)
    ok(bo.run())
    assert translate("en", "errors.class_removed", code=info.code) in errors(bo)
    assert student.MEMBER_KEY not in bo.session_state                 # no longer following, heartbeating, voting


def test_the_join_limit_is_per_source_address_behind_trusted_proxies_only(store, monkeypatch):
    """The address the join limiter counts is the password limiter's: the peer, or X-Real-IP when the peer is one
    of MHA_TRUSTED_PROXIES (anyone else could write that header)."""
    from types import SimpleNamespace

    from mha_core.ui import class_services

    def seen(peer: str, real: str | None, trusted: str) -> str:
        headers = {} if real is None else {"X-Real-IP": real}
        monkeypatch.setattr(class_services, "st",
                            SimpleNamespace(context=SimpleNamespace(ip_address=peer, headers=headers)))
        monkeypatch.setenv("MHA_TRUSTED_PROXIES", trusted)
        return class_services.source_address()

    assert seen("127.0.0.1", "203.0.113.9", "127.0.0.1") == "203.0.113.9"
    assert seen("198.51.100.7", "203.0.113.9", "127.0.0.1") == "198.51.100.7"  # a forged header is ignored
    assert seen("198.51.100.7", None, "") == "198.51.100.7"
    monkeypatch.undo()

    monkeypatch.setenv("MHA_DATABASE_URL", store.engine.url.render_as_string(hide_password=False))
    monkeypatch.setenv("MHA_TEACHER_PASSWORD", PASSWORD)
    monkeypatch.setenv("MHA_JOIN_LIMITS", "2/1,100/100")
    info = store.create_class()
    monkeypatch.setattr(student, "source_address", lambda: "192.0.2.1")
    assert not errors(joined(info.code, "A1")) and not errors(joined(info.code, "A2"))
    wait = translate("en", "errors.class_join_wait", seconds=60)[:30]
    assert any(e.startswith(wait) for e in errors(joined(info.code, "A3")))  # this address's burst is spent
    monkeypatch.setattr(student, "source_address", lambda: "192.0.2.2")
    assert not errors(joined(info.code, "B1"))                           # another address is not
    assert [s.name for s in store.students(info.id)] == ["A1", "A2", "B1"]

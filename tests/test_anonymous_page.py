"""Anonymous classes through AppTest (issue 27 §2, issue 28 item 2): the teacher opens one, the join form asks no
name, a name typed or forged is never stored or shown, the dashboard and the pre/post panel show no name, the CSV
carries opaque ids, and the join limit, the lock and the removal still work."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from apphelpers import open_page, shown_text
from mha_core.classroom import Storage, sqlite_url
from mha_core.classroom.prepost import PrePostStore
from mha_core.i18n import LANGS, translate
from mha_core.quiz import concept, load_questions
from mha_core.ui import classroom, prepost, student, teacher
from mha_core.ui.nav import spec

PAGE = spec("classroom").script
PASSWORD = "anon 课堂"
NAMES = ("Zebediah Quux", "Xanthippe Vole", "葛优瑶")


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A fresh SQLite file for this test, a teacher password, and the store on it."""
    url = sqlite_url(tmp_path / "data" / "class.sqlite3")
    monkeypatch.setenv("MHA_DATABASE_URL", url)
    monkeypatch.setenv("MHA_TEACHER_PASSWORD", PASSWORD)
    s = Storage.open(url)
    yield s
    s.dispose()


def ok(at: AppTest) -> AppTest:
    assert not at.exception, at.exception
    return at


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def teacher_page(lang: str) -> AppTest:
    at = ok(open_page(PAGE, lang))
    ok(at.segmented_control(key=classroom.ROLE_KEY).set_value("teacher").run())
    at.text_input(key="classroom_pw_in").input(PASSWORD)
    return ok(next(b for b in at.button if b.key and b.key.startswith("FormSubmitter:classroom_login")).click().run())


def press_join(at: AppTest) -> AppTest:
    return ok(next(b for b in at.button if b.key and b.key.startswith("FormSubmitter:classroom_join")).click().run())


def by_link(code: str, lang: str = "en", forged_name: str | None = None) -> AppTest:
    """A student who opened the class link and pressed Join (``forged_name``: a name pushed into the session as if
    a name field had been there)."""
    at = ok(open_page(PAGE, lang, query={"class": code}))
    assert not [w for w in at.text_input if w.key == classroom.NAME_IN_KEY]  # the form asks no name
    assert translate(lang, "classroom.join_anonymous") in [i.value for i in at.info]
    if forged_name is not None:
        at.session_state[classroom.NAME_IN_KEY] = forged_name
    return press_join(at)


def everything_shown(at: AppTest) -> str:
    """What the page shows: its texts, widget labels and options, and every cell of every table."""
    parts = [shown_text(at)]
    parts += [str(o) for w in at.selectbox for o in w.options]
    for df in at.dataframe:
        parts += [str(c) for c in df.value.columns] + [str(v) for v in df.value.to_numpy().ravel()]
    return "\n".join(parts)


@pytest.mark.parametrize("lang", LANGS)
def test_an_anonymous_class_asks_no_name_and_the_teacher_sees_none(store, monkeypatch, lang):
    csvs: list[str] = []
    for module, name in ((teacher, "answers_csv"), (prepost, "results_csv")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _real=real, **k: csvs.append(_real(*a, **k)) or csvs[-1])
    at = teacher_page(lang)
    ok(at.button(key=teacher.NEW_ANONYMOUS_KEY).click().run())
    (info,) = store.list_classes()
    assert info.anonymous
    assert translate(lang, "classroom.anonymous_note") in [i.value for i in at.info]
    first = by_link(info.code, lang, forged_name=NAMES[0])               # a forged name field changes nothing
    typed = ok(open_page(PAGE, lang))                                  # the code typed by hand: a name is asked …
    typed.text_input(key=classroom.CODE_IN_KEY).input(info.code)
    typed.text_input(key=classroom.NAME_IN_KEY).input(NAMES[1])
    second = press_join(typed)
    assert translate(lang, "classroom.anonymous_dropped") in [c.value for c in second.caption]  # … and dropped
    third = by_link(info.code, lang)
    members = [s.session_state[student.MEMBER_KEY] for s in (first, second, third)]
    assert [m.name for m in members] == ["", "", ""] and [s.name for s in store.students(info.id)] == ["", "", ""]
    assert all(translate(lang, "classroom.anonymous_you") in [i.value for i in s.info] for s in (first, second))
    pp, item = PrePostStore(store), concept.items()[0]
    for m in members:
        store.record(m, load_questions(lang)[0].id, "a", True)
        pp.open_item(m, "pre", item.id)
        pp.answer(m, "pre", item.id, item.correct)
    ok(at.run())
    shown = everything_shown(at)
    assert not any(n in shown for n in NAMES)
    assert translate(lang, "classroom.students_anonymous") in [c.value for c in at.caption]
    assert not any(translate(lang, "classroom.col_name") in df.value.columns for df in at.dataframe)
    assert not any(translate(lang, "prepost.col_name") in df.value.columns for df in at.dataframe)
    ids = store.pseudonyms(info.id)
    assert all(any(i in o for o in at.selectbox(key=teacher.REMOVE_PICK_KEY).options) for i in ids.values())
    assert csvs and all(not any(n in c for n in NAMES) for c in csvs)  # the dashboard's and the pre/post CSV
    assert all(f",{i}," in csvs[-1] and f",{i}," in csvs[-2] for i in ids.values())


def test_the_join_limit_and_the_lock_still_apply_to_an_anonymous_class(store, monkeypatch):
    monkeypatch.setenv("MHA_JOIN_LIMITS", "3/1,100/100")  # 3 at once from an address, then one a minute
    at = teacher_page("en")
    ok(at.button(key=teacher.NEW_ANONYMOUS_KEY).click().run())
    (info,) = store.list_classes()
    first = [by_link(info.code) for _ in range(3)]
    assert all(not errors(s) for s in first) and len(store.students(info.id)) == 3
    wait = translate("en", "errors.class_join_wait", seconds=60)[:30]
    assert any(e.startswith(wait) for e in errors(by_link(info.code)))  # no name: still one token per new id
    assert len(store.students(info.id)) == 3
    monkeypatch.setenv("MHA_JOIN_LIMITS", "100/100,100/100")
    ok(at.run())
    ok(at.toggle(key=teacher.switch_key("locked", info.id)).set_value(True).run())
    assert translate("en", "errors.class_locked", code=info.code) in errors(by_link(info.code))
    key = first[0].session_state[student.STUDENT_KEY]
    back = ok(open_page(PAGE, "en", query={"class": info.code, "student": key}))
    assert back.session_state[student.MEMBER_KEY].key == key            # who joined before comes back
    assert len(store.students(info.id)) == 3


@pytest.mark.parametrize("lang", LANGS)
def test_the_teacher_removes_an_anonymous_student_by_opaque_id(store, lang):
    at = teacher_page(lang)
    ok(at.button(key=teacher.NEW_ANONYMOUS_KEY).click().run())
    (info,) = store.list_classes()
    fake, real = by_link(info.code, lang), by_link(info.code, lang)
    fake_id = fake.session_state[student.MEMBER_KEY].student_id
    ok(at.run())
    pseudo = store.pseudonyms(info.id)[fake_id]
    ok(at.selectbox(key=teacher.REMOVE_PICK_KEY).select(fake_id).run())
    ok(at.button(key=teacher.REMOVE_KEY).click().run())
    assert translate(lang, "classroom.remove_confirm", name=pseudo) in [w.value for w in at.warning]
    ok(at.button(key=teacher.REMOVE_YES_KEY).click().run())
    assert translate(lang, "classroom.remove_done", name=pseudo) in [s.value for s in at.success]
    assert [s.id for s in store.students(info.id)] == [real.session_state[student.MEMBER_KEY].student_id]
    ok(fake.run())
    assert translate(lang, "errors.class_removed", code=info.code) in errors(fake)


def test_the_anonymous_switch_works_until_someone_joins(store):
    at = teacher_page("en")
    ok(at.button(key=teacher.NEW_KEY).click().run())
    (info,) = store.list_classes()
    assert not info.anonymous
    ok(at.toggle(key=teacher.switch_key("anonymous", info.id)).set_value(True).run())
    assert store.find_class(info.code).anonymous
    by_link(info.code)
    ok(at.run())
    assert at.toggle(key=teacher.switch_key("anonymous", info.id)).disabled
    assert translate("en", "classroom.anonymous_fixed", n=1) in [c.value for c in at.caption]


def test_the_quiz_banner_of_an_anonymous_class_says_so_and_shows_no_name(store):
    info = store.create_class(anonymous=True)
    at = by_link(info.code)
    ok(at.switch_page(spec("quiz").script).run())
    assert translate("en", "classroom.in_class_anonymous", code=f"{info.code[:4]}-{info.code[4:]}") in [
        c.value for c in at.caption]
    assert not errors(at)

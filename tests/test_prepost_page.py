"""The pre/post test on the class page through AppTest, both languages: the teacher opens a test and reads ⟨g⟩ and
the missing students; a joined student takes the open test one question at a time."""

from __future__ import annotations

import pytest
from streamlit.runtime import caching
from streamlit.testing.v1 import AppTest

from apphelpers import open_page
from mha_core.classroom import Storage, sqlite_url
from mha_core.classroom.prepost import PrePostStore, class_results
from mha_core.i18n import LANGS, translate
from mha_core.quiz import concept
from mha_core.ui import classroom, prepost, student
from mha_core.ui.nav import spec

PASSWORD = "s3cret 教室"
PAGE = spec("classroom").script


@pytest.fixture
def db(tmp_path, monkeypatch) -> str:
    """A fresh SQLite file for this test and a teacher password."""
    url = sqlite_url(tmp_path / "data" / "class.sqlite3")
    monkeypatch.setenv("MHA_DATABASE_URL", url)
    monkeypatch.setenv("MHA_TEACHER_PASSWORD", PASSWORD)
    caching.cache_resource.clear()  # the engine of another test's URL
    return url


def open_class_page(lang: str, **params: str) -> AppTest:
    at = open_page(PAGE, lang, query=params)
    assert not at.exception, at.exception
    return at


def as_teacher(at: AppTest) -> AppTest:
    at.segmented_control(key=classroom.ROLE_KEY).set_value("teacher").run()
    at.text_input(key="classroom_pw_in").input(PASSWORD)
    next(b for b in at.button if b.key and b.key.startswith("FormSubmitter:classroom_login")).click().run()
    assert not at.exception, at.exception
    return at


def join(at: AppTest, name: str) -> AppTest:
    at.text_input(key="classroom_name_in").input(name)
    next(b for b in at.button if b.key and b.key.startswith("FormSubmitter:classroom_join")).click().run()
    assert not at.exception, at.exception
    return at


def _teacher_with_class(lang: str) -> AppTest:
    at = as_teacher(open_class_page(lang))
    next(b for b in at.button if b.key == "classroom_new").click().run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("lang", LANGS)
def test_the_teacher_opens_a_test_and_reads_the_gain(db, lang):
    at = _teacher_with_class(lang)
    s = Storage.open(db)
    info = s.list_classes()[0]
    at.segmented_control(key=prepost.OPEN_KEY).set_value("pre").run()
    assert not at.exception, at.exception
    pp = PrePostStore(s)
    assert pp.open_test(info.id) == "pre"
    a, b, c = (s.join(info.code, f"{i:032x}", f"s{i}") for i in range(3))
    for m, test, right in ((a, "pre", 6), (a, "post", 12), (b, "pre", 3), (b, "post", 6), (c, "pre", 9)):
        for k, it in enumerate(concept.items()):
            pp.answer(m, test, it.id, it.correct if k < right else it.options[1])
    at.run()
    assert not at.exception, at.exception
    res = class_results(pp.rows(info.id), s.students(info.id))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics[translate(lang, "prepost.m_gain")] == f"{res.matched.class_gain:.2f}" == "0.60"
    assert metrics[translate(lang, "prepost.m_matched")] == "2"
    bands = translate(lang, "prepost.bands", high=1, medium=1, low=0, loss=0, undefined=0)  # g = 1 and 1/3
    assert bands in [c.value for c in at.caption]
    assert translate(lang, "prepost.missing_title", n=1) in [h.value for h in at.subheader]
    assert any(b.key == prepost.CSV_KEY for b in at.get("download_button"))
    s.dispose()


@pytest.mark.parametrize("lang", LANGS)
def test_a_student_takes_the_open_test_one_question_at_a_time(db, lang):
    s = Storage.open(db)
    info = s.create_class()
    at = join(open_class_page(lang, **{"class": info.code}), "Ann")
    assert not [r for r in at.radio if r.key and r.key.startswith("prepost_pick")]  # no test open: nothing shown
    pp = PrePostStore(s)
    pp.set_open_test(info.id, "pre")
    at.run()
    first = concept.items()[0]
    form = concept.form_for(info.code, at.session_state[student.STUDENT_KEY], "pre")
    assert concept.question(first.id, form, lang).stem in [md.value for md in at.markdown]  # the student's form
    key = f"prepost_pick_pre_{first.id}"
    submit = next(b for b in at.button if b.key == f"prepost_submit_pre_{first.id}")
    submit.click().run()  # nothing chosen
    assert translate(lang, "errors.prepost_pick_first") in [e.value for e in at.error]
    at.radio(key=key).set_value(first.options[1]).run()
    next(b for b in at.button if b.key == f"prepost_submit_pre_{first.id}").click().run()
    assert not at.exception, at.exception
    rows = pp.rows(info.id)
    assert [(r.item_id, r.choice, r.score) for r in rows if r.choice] == [(first.id, first.options[1], 0.0)]
    assert rows[0].response_s is not None and rows[0].response_s >= 0  # timed from when it was shown
    second = concept.items()[1]
    assert any(r.key == f"prepost_pick_pre_{second.id}" for r in at.radio)
    assert translate(lang, "prepost.progress", i=2, n=len(concept.items())) in str(at.get("progress")[0].proto)
    s.dispose()

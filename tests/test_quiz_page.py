"""The quiz page through AppTest: whole walks in both languages (all right, all wrong), the score, the
summary and retry, bad input, progress across page switches and reloads, and per-student shuffling."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from apphelpers import ROOT, shown_text
from mha_core.classroom import sqlite_url
from mha_core.i18n import translate
from mha_core.markdown import escape
from mha_core.quiz import Kind, Question, load_questions, presented_order, student_seed
from mha_core.ui.nav import PAGES, spec
from mha_core.ui.quiz import answer_key, button_key
from quizhelpers import answer, numeric_text, short_text

QUIZ = spec("quiz").script
TEACHING = {p.key for p in PAGES}


@pytest.fixture(autouse=True)
def db(tmp_path, monkeypatch) -> str:
    """Progress lives in the class database: a fresh SQLite file per test (never the user's data/)."""
    url = sqlite_url(tmp_path / "data" / "quiz.sqlite3")
    monkeypatch.setenv("MHA_DATABASE_URL", url)
    return url


def start(lang: str, student: str, mode: str = "one") -> AppTest:
    """Open the app at a quiz URL (?student=…&mode=…) and go to the quiz page."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["lang"] = lang
    at.query_params["student"] = student
    at.query_params["mode"] = mode
    at.run()
    at.switch_page(QUIZ)
    at.run()
    assert not at.exception, at.exception
    return at


def texts(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown]


def score_shown(at: AppTest, lang: str, right: int, total: int) -> bool:
    return translate(lang, "quiz.score", right=right, total=total) in texts(at)


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def walk(at: AppTest, lang: str, student: str, mode: str, right: bool) -> tuple[Question, ...]:
    """Answer every question in order, checking the running score after each one."""
    seed = student_seed(student)
    qs = load_questions(lang, seed)
    for i, q in enumerate(qs):
        answer(at, q, seed, right)
        assert not at.exception, at.exception
        assert score_shown(at, lang, i + 1 if right else 0, len(qs)), (q.id, texts(at)[:1])
        assert translate(lang, "quiz.progress", answered=i + 1, total=len(qs)) in [p.proto.text for p in
                                                                                    at.get("progress")]
        if mode == "one" and i < len(qs) - 1:
            at.button(key="quiz_next").click().run()
    return qs


@pytest.mark.parametrize("lang, mode", [("en", "one"), ("zh", "all")])
def test_whole_quiz_all_right(lang, mode):
    student = "0000a11f000000000000000000000000" if lang == "en" else "0000a12f000000000000000000000000"
    at = start(lang, student, mode)
    qs = walk(at, lang, student, mode, right=True)
    assert score_shown(at, lang, len(qs), len(qs))
    assert translate(lang, "quiz.summary_score", right=len(qs), total=len(qs)) in texts(at)
    assert translate(lang, "quiz.all_right") in [s.value for s in at.success]
    assert not errors(at) and "⟦" not in shown_text(at)
    assert not [b for b in at.button if b.key == "quiz_retry"]
    if mode == "all":  # every card shows feedback and a link to its page, when that page exists
        assert [s.value for s in at.success].count(translate(lang, "quiz.right")) == len(qs)
        links = [link.value for link in at.get("page_link")]
        assert links == [translate(lang, f"nav.{q.teaches}") for q in qs if q.teaches in TEACHING]


@pytest.mark.parametrize("lang, mode", [("en", "all"), ("zh", "one")])
def test_whole_quiz_all_wrong_then_retry(lang, mode):
    student = "0000b01f000000000000000000000000" if lang == "en" else "0000b02f000000000000000000000000"
    at = start(lang, student, mode)
    qs = walk(at, lang, student, mode, right=False)
    assert score_shown(at, lang, 0, len(qs))
    assert translate(lang, "quiz.summary_score", right=0, total=len(qs)) in texts(at)
    if mode == "all":
        assert errors(at).count(translate(lang, "quiz.wrong")) == len(qs)
        expected_lines = [m for m in texts(at) if m.startswith(translate(lang, "quiz.expected", answer="")[:8])]
        assert len(expected_lines) == len([q for q in qs if q.kind is not Kind.TEXT])
    # what to revisit: every wrong question's title, and a link to each teaching page that exists
    summary = "\n".join(texts(at))
    assert all(f"- {q.title}" in summary for q in qs)
    revisit = list(dict.fromkeys(q.teaches for q in qs if q.teaches in TEACHING))
    links = [link.value for link in at.get("page_link")]
    cards = qs if mode == "all" else qs[-1:]  # one at a time: the last question is still showing
    on_cards = [translate(lang, f"nav.{q.teaches}") for q in cards if q.teaches in TEACHING]
    assert links == on_cards + [translate(lang, f"nav.{k}") for k in revisit]
    retry = at.button(key="quiz_retry")
    assert retry.label == translate(lang, "quiz.retry", n=len(qs))
    retry.click().run()
    assert score_shown(at, lang, 0, len(qs))
    assert translate(lang, "quiz.progress", answered=0, total=len(qs)) in [p.proto.text for p in at.get("progress")]
    seed = student_seed(student)
    answer(at, qs[0], seed, right=True)
    assert score_shown(at, lang, 1, len(qs))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bad_input_gets_a_message_and_costs_nothing(lang):
    student = "0000c0de000000000000000000000000" if lang == "en" else "0000c0df000000000000000000000000"
    at = start(lang, student, "all")
    qs = {q.id: q for q in load_questions(lang, student_seed(student))}
    n = len(qs)

    at.text_input(key=answer_key("self-test-1a")).input("sixty-four")
    at.button(key=button_key("check", "self-test-1a")).click().run()
    assert errors(at) == [translate(lang, "errors.quiz_not_number")]

    at.button(key=button_key("check", "self-test-1b")).click().run()  # nothing chosen
    assert errors(at) == [translate(lang, "errors.quiz_empty")]

    at.multiselect(key=answer_key("pipeline-order")).set_value(["split", "attend"])
    at.button(key=button_key("check", "pipeline-order")).click().run()
    assert errors(at) == [translate(lang, "errors.quiz_order_incomplete", n=4)]

    at.button(key=button_key("reveal", "self-test-2")).click().run()  # nothing written
    assert errors(at) == [translate(lang, "errors.quiz_empty")]
    assert not [b for b in at.button if b.key == button_key("self_right", "self-test-2")]

    kv = qs["kv-mha"]
    at.text_input(key=answer_key("kv-mha")).input(numeric_text(kv, True) + " M")
    at.button(key=button_key("check", "kv-mha")).click().run()
    assert errors(at) == [translate(lang, "errors.quiz_bad_unit", allowed="B, KiB, MiB, GiB")]

    assert score_shown(at, lang, 0, n)
    assert translate(lang, "quiz.progress", answered=0, total=n) in [p.proto.text for p in at.get("progress")]
    at.text_input(key=answer_key("self-test-1a")).input("6.4e1")  # fixing the answer: it counts in full
    at.button(key=button_key("check", "self-test-1a")).click().run()
    assert score_shown(at, lang, 1, n) and not errors(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_short_answers_are_typed_checked_and_explained(lang):
    """The new kind's card: a text box with its hint, Check; right and wrong feedback like a numeric answer's,
    the student's own text echoed literally (never as markdown); an empty answer costs nothing."""
    student = "0000d0a1000000000000000000000000" if lang == "en" else "0000d0a2000000000000000000000000"
    at = start(lang, student, "all")
    shorts = [q for q in load_questions(lang, student_seed(student)) if q.kind is Kind.SHORT]
    n = len(load_questions(lang))
    assert len(shorts) >= 3
    for q in shorts:
        box = at.text_input(key=answer_key(q.id))
        assert box.placeholder == translate(lang, "quiz.placeholder_short") and box.max_chars
    assert [c.value for c in at.caption].count(translate(lang, "quiz.hint_short")) == len(shorts)

    softmax, wo, mqa = (next(q for q in shorts if q.correct[0] == a) for a in ("softmax", "W^O", "MQA"))
    at.text_input(key=answer_key(softmax.id)).input("   ")
    at.button(key=button_key("check", softmax.id)).click().run()
    assert errors(at) == [translate(lang, "errors.quiz_empty")] and score_shown(at, lang, 0, n)

    at.text_input(key=answer_key(wo.id)).input("  ｗ＿ｏ ")  # full width, lower case, blanks: still W^O
    at.button(key=button_key("check", wo.id)).click().run()
    assert score_shown(at, lang, 1, n) and not errors(at)
    assert translate(lang, "quiz.given", answer=escape(wo.accepted[0])) in texts(at)

    forged = "**GQA** ![i](http://127.0.0.1:9/x.png)"
    at.text_input(key=answer_key(mqa.id)).input(forged)
    at.button(key=button_key("check", mqa.id)).click().run()
    assert score_shown(at, lang, 1, n) and translate(lang, "quiz.wrong") in errors(at)
    assert translate(lang, "quiz.given", answer=escape(forged)) in texts(at)
    assert translate(lang, "quiz.expected", answer=escape(mqa.accepted[0])) in texts(at)
    assert "\\*\\*GQA\\*\\*" in escape(forged) and "](" not in escape(forged)

    at.text_input(key=answer_key(softmax.id)).input(short_text(softmax, True))
    at.button(key=button_key("check", softmax.id)).click().run()
    assert score_shown(at, lang, 2, n) and not at.exception


def test_an_answer_to_a_graded_question_is_refused():
    """Two tabs of the same student: the second, stale tab cannot change the first answer."""
    student = "0000d00d000000000000000000000000"
    first, stale = start("en", student, "all"), start("en", student, "all")
    at_q = "self-test-1b"
    first.radio(key=answer_key(at_q)).set_value("same")
    first.button(key=button_key("check", at_q)).click().run()
    stale.radio(key=answer_key(at_q)).set_value("h_times")
    stale.button(key=button_key("check", at_q)).click().run()
    assert translate("en", "errors.quiz_already_graded") in errors(stale)
    assert score_shown(stale, "en", 1, len(load_questions("en")))
    assert translate("en", "quiz.right") in [s.value for s in stale.success]


def test_progress_survives_switching_pages_and_reloading():
    student = "0000e0e0000000000000000000000000"
    at = start("en", student, "one")
    qs = load_questions("en", student_seed(student))
    for q in qs[:2]:
        answer(at, q, student_seed(student), right=True)
        at.button(key="quiz_next").click().run()
    at.sidebar.radio(key="quiz_mode").set_value("all").run()
    at.switch_page(spec("overview").script).run()
    assert not at.exception
    del at.query_params["mode"]  # the other page's address has no ?mode=: the session alone keeps it (quiz.KEPT)
    at.switch_page(QUIZ).run()
    assert score_shown(at, "en", 2, len(qs))
    assert at.sidebar.radio(key="quiz_mode").value == "all"

    reloaded = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    reloaded.session_state["lang"] = "zh"
    # the same URL in a new session, with the language part changed (a link's lang would win)
    reloaded.query_params.update({k: v for k, v in at.query_params.items() if k != "lang"})
    reloaded.run().switch_page(QUIZ).run()
    assert score_shown(reloaded, "zh", 2, len(qs))
    assert reloaded.sidebar.radio(key="quiz_mode").value == "all"
    assert reloaded.query_params["student"] == student

    stranger = start("en", "0000e0e1000000000000000000000000")
    assert score_shown(stranger, "en", 0, len(qs))


def test_one_at_a_time_remembers_the_position():
    student = "0000f00f000000000000000000000000"
    at = start("en", student, "one")
    qs = load_questions("en", student_seed(student))
    at.button(key="quiz_next").click().run()
    at.button(key="quiz_next").click().run()
    section = translate("en", f"quiz.sections.{qs[2].section}")
    assert translate("en", "quiz.question_n", i=3, n=len(qs), section=section) in [c.value for c in at.caption]
    assert at.button(key="quiz_prev").disabled is False
    again = start("en", student, "one")
    assert qs[2].prompt in texts(again)


def test_a_new_student_gets_an_id_in_the_url():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run().switch_page(QUIZ).run()
    assert re.fullmatch(r"[0-9a-f]{32}", at.query_params["student"])
    assert at.query_params["mode"] == "one"


def test_options_are_shuffled_per_student():
    a, b = "00000001000000000000000000000000", "00000002000000000000000000000000"
    single = [q for q in load_questions("en") if q.kind is Kind.SINGLE]
    assert any(presented_order(q, student_seed(a)) != presented_order(q, student_seed(b)) for q in single)
    shown = {}
    for student in (a, b):
        at = start("en", student, "all")
        shown[student] = {r.key: r.options for r in at.radio if r.key.startswith("quiz_a_")}
        for q in load_questions("en", student_seed(student)):
            if q.kind is Kind.SINGLE:
                by_id = {o.id: o.text for o in q.options}
                order = presented_order(q, student_seed(student))
                assert shown[student][answer_key(q.id)] == [by_id[o] for o in order]
    assert shown[a] != shown[b]


def test_switching_language_keeps_the_answers():
    student = "0000aa11000000000000000000000000"
    at = start("en", student, "all")
    q = load_questions("en", student_seed(student))[1]
    at.radio(key=answer_key(q.id)).set_value(q.correct[0])
    at.button(key=button_key("check", q.id)).click().run()
    at.sidebar.radio(key="lang").set_value("zh").run()
    assert score_shown(at, "zh", 1, len(load_questions("zh")))
    assert translate("zh", "quiz.right") in [s.value for s in at.success]


def test_start_over_clears_the_answers_but_keeps_the_numbers():
    student = "0000bb22000000000000000000000000"
    at = start("en", student, "one")
    qs = load_questions("en", student_seed(student))
    answer(at, qs[0], student_seed(student), right=True)
    assert score_shown(at, "en", 1, len(qs))
    at.sidebar.button(key="quiz_restart").click().run()
    assert score_shown(at, "en", 0, len(qs))
    assert qs[0].prompt in texts(at) and at.query_params["student"] == student


def test_a_forged_choice_is_echoed_as_text_never_as_markdown():
    """A client can send any value for a radio; the error that names it must not fetch an image or bold."""
    def script():
        import streamlit as st

        from mha_core.quiz import Kind, load_questions
        from mha_core.ui import quiz, render

        st.session_state.setdefault("lang", "en")
        q = next(q for q in load_questions("en") if q.kind is Kind.SINGLE)
        quiz._submit("a" * 32, q, "![i](http://127.0.0.1:9/x.png) **b**")
        render.show_error(st.session_state[quiz.FLASH_KEY].pop(q.id))

    at = AppTest.from_function(script)
    at.run()
    (shown,) = errors(at)
    assert "\\!\\[i\\]\\(http" in shown and "\\*\\*b\\*\\*" in shown and "](" not in shown


def test_the_student_id_stays_off_the_projector():
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params["present"] = "1"
    at.run().switch_page(QUIZ).run()
    assert not at.exception and "student" not in at.query_params



def reload_quiz(at: AppTest, lang: str) -> AppTest:
    """The same address in a new session (a reload, or a reconnect)."""
    again = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    again.session_state["lang"] = lang
    again.query_params.update({k: v for k, v in at.query_params.items() if k != "lang"})
    again.run().switch_page(QUIZ).run()
    assert not again.exception, again.exception
    return again


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_unsaved_answer_survives_a_reload_and_is_sent_once_the_database_answers(db, tmp_path, lang,
                                                                                   short_busy_timeout):
    import sqlite3

    from mha_core.ui import quiz

    student = "0000f00d000000000000000000000000" if lang == "en" else "0000f00e000000000000000000000000"
    at = start(lang, student, "one")
    qs = load_questions(lang, student_seed(student))
    answer(at, qs[0], student_seed(student), right=True)
    at.button(key="quiz_next").click().run()
    holder = sqlite3.connect(tmp_path / "data" / "quiz.sqlite3", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")                          # the database busy: the answer is not saved
    try:
        answer(at, qs[1], student_seed(student), right=True)
        unsaved = translate(lang, "quiz.unsaved", n=1, titles=qs[1].title)
        assert unsaved in [w.value for w in at.warning]
        again = reload_quiz(at, lang)                          # a reload while it is still busy: still kept, said
        assert unsaved in [w.value for w in again.warning]
        assert again.button(key="quiz_resend")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    back = reload_quiz(again, lang)                            # the next reload sends it: stored, no warning
    assert score_shown(back, lang, 2, len(qs)) and not back.warning
    assert quiz.UNSENT.of(student) == {}
    assert score_shown(reload_quiz(back, lang), lang, 2, len(qs))

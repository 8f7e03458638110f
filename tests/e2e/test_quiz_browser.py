"""The quiz can be completed by clicking (and typing numbers and short answers) in a real browser, in both languages."""

from __future__ import annotations

import pytest

from harness.server import wait_ready
from mha_core.i18n import LANGS, translate
from mha_core.quiz import load_questions
from mha_core.quiz.model import Kind
from mha_core.quiz.progress_store import student_seed
from mha_core.ui.quiz import answer_key, button_key
from quizhelpers import STATED, short_text, torch_expected

pytestmark = pytest.mark.e2e
LOCALES = {"zh": "zh-CN", "en": "en-US"}


def _click_check(page, qid: str) -> None:
    page.locator(f".st-key-{button_key('check', qid)} button").click()
    wait_ready(page)


@pytest.mark.parametrize("lang", LANGS)
def test_whole_quiz_by_clicking(browser, server, shots, lang):
    student = "00c0ffee000000000000000000000000" if lang == "en" else "00beef00000000000000000000000000"
    questions = load_questions(lang, student_seed(student))
    ctx = browser.new_context(viewport={"width": 1280, "height": 1000}, locale=LOCALES[lang])
    page = ctx.new_page()
    try:
        page.goto(f"{server}/quiz?student={student}&mode=all&lang={lang}")
        wait_ready(page)
        for q in questions:
            box = page.locator(f".st-key-{answer_key(q.id)}")
            texts = {o.id: o.text for o in q.options}
            if q.kind is Kind.SINGLE:
                box.get_by_text(texts[q.correct[0]], exact=True).click()
            elif q.kind is Kind.MULTIPLE:
                for o in q.correct:
                    page.locator(f".st-key-{answer_key(q.id, o)}").get_by_text(texts[o], exact=True).click()
            elif q.kind is Kind.ORDERING:
                for o in q.correct:  # type to filter, Enter to pick: the order picked is the answer
                    box.locator("input").fill(texts[o])
                    page.get_by_role("option", name=texts[o], exact=True).wait_for(timeout=10_000)
                    box.locator("input").press("Enter")
                    wait_ready(page)  # each pick reruns the script; type the next one after it
                box.locator("input").press("Escape")
            elif q.kind is Kind.NUMERIC:
                value = torch_expected(q) / STATED[q.unit]
                box.locator("input").fill(f"{value.numerator:,}")
                box.locator("input").press("Enter")
            elif q.kind is Kind.SHORT:
                box.locator("input").fill(short_text(q, True))
                box.locator("input").press("Enter")
            if q.kind is Kind.TEXT:
                box.locator("textarea").fill("W^O learns how to fuse the heads.")
                page.locator(f".st-key-{button_key('reveal', q.id)} button").click()
                wait_ready(page)
                page.locator(f".st-key-{button_key('self_right', q.id)} button").click()
                wait_ready(page)
            else:
                wait_ready(page)
                _click_check(page, q.id)
        text = page.locator('[data-testid="stMain"]').inner_text()
        total = len(questions)
        assert translate(lang, "quiz.score", right=total, total=total).replace("**", "") in text
        assert page.locator('[data-testid="stException"]').count() == 0
        page.screenshot(path=str(shots / f"quiz-done-{lang}.png"))
    finally:
        ctx.close()

"""Class mode in a real browser: one teacher and two students (three contexts, one run, one server with its own
temporary database). The students join by the QR link, answer on the quiz page, and the teacher's live
dashboard counts them without a reload. Screenshots at 1280 and 390 px."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

import pytest
from classhelpers import teacher_opens_a_class

pytestmark = pytest.mark.e2e
PASSWORD = "e2e-teacher"


@pytest.fixture(scope="module")
def class_server(browser, tmp_path_factory) -> Iterator[str]:  # noqa: ARG001 - browser: checks Chromium first
    """A server of its own: a fresh SQLite file and a teacher password in its environment."""
    from benchmarks.harness import start_server, stop_server

    db = tmp_path_factory.mktemp("classdb") / "class.sqlite3"
    saved = {k: os.environ.get(k) for k in ("MHA_DATABASE_URL", "MHA_TEACHER_PASSWORD")}
    os.environ.update(MHA_DATABASE_URL=f"sqlite:///{db}", MHA_TEACHER_PASSWORD=PASSWORD)
    try:
        proc, base = start_server()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    yield base
    stop_server(proc)


def _metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label)
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def test_teacher_sees_two_students_answers_live(browser, class_server, shots):
    from benchmarks.harness import wait_ready

    teacher_ctx = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="en-US")
    teacher = teacher_ctx.new_page()
    code = teacher_opens_a_class(teacher, f"{class_server}/classroom", PASSWORD)
    assert _metric(teacher, "Students joined") == "0"

    students = []
    for i, (name, width, locale) in enumerate([("Ann <b>🦊</b>", 390, "en-US"), ("学生 \"二\"", 1280, "zh-CN")]):
        ctx = browser.new_context(viewport={"width": width, "height": 900}, locale=locale)
        page = ctx.new_page()
        page.goto(f"{class_server}/classroom?class={code}")
        wait_ready(page)
        page.locator(".st-key-classroom_name_in input").fill(name)
        page.locator('[data-testid="stFormSubmitButton"] button').click()
        wait_ready(page)
        assert page.locator('[data-testid="stException"]').count() == 0
        assert page.get_by_text(name, exact=True).count() >= 1       # shown as text, tags and all
        page.screenshot(path=str(shots / f"classroom-student-{i}-{width}.png"), full_page=True)
        page.locator('[data-testid="stPageLink"] a').filter(has_text=re.compile("quiz|测验")).first.click()
        wait_ready(page)
        page.locator('[data-testid="stMain"] input[type="text"]').first.fill("64")
        page.locator('[class*="st-key-quiz_check_"] button').first.click()
        wait_ready(page)
        students.append(ctx)

    teacher.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="stMetric"]')]
                 .some(m => m.innerText.includes('Answers') && m.innerText.trim().endsWith('2'))""",
        timeout=20_000,
    )  # the fragment refreshes by itself: no reload
    assert _metric(teacher, "Students joined") == "2"
    teacher.screenshot(path=str(shots / "classroom-teacher-1280.png"), full_page=True)
    teacher.set_viewport_size({"width": 390, "height": 900})
    teacher.wait_for_timeout(500)
    teacher.screenshot(path=str(shots / "classroom-teacher-390.png"), full_page=True)
    for ctx in (*students, teacher_ctx):
        ctx.close()

"""What every class-mode browser test does first: the teacher logs in on the class page and opens a new class."""

from __future__ import annotations

import re

CODE = re.compile(r"^[A-Z2-9]{4}-[A-Z2-9]{4}$")  # a join code as the teacher's card shows it


def teacher_opens_a_class(teacher, url: str, password: str) -> str:  # noqa: ANN001 - a Playwright page
    """Open ``url`` (the class page), switch to the teacher's view, log in, open a new class; its code (no dash)."""
    from harness.server import wait_ready

    teacher.goto(url)
    wait_ready(teacher)
    teacher.locator(".st-key-classroom_role button").filter(has_text="the teacher").click()
    wait_ready(teacher)
    teacher.get_by_label("Teacher password").fill(password)
    teacher.get_by_role("button", name="Open the dashboard").click()
    wait_ready(teacher)
    teacher.get_by_role("button", name="Open a new class").click()
    wait_ready(teacher)
    code = teacher.locator('[data-testid="stMain"] h1').filter(has_text=CODE)
    return code.first.inner_text().strip().replace("-", "")


def student_joins(browser, base: str, code: str, name: str, width: int, locale: str,  # noqa: ANN001, ANN201
                  wait: bool = True):
    """A student's browser (context, page) that opened the class link at ``width`` px in ``locale`` and joined
    under ``name`` (with ``wait``, after the join's run finished)."""
    from harness.server import wait_ready

    ctx = browser.new_context(viewport={"width": width, "height": 900}, locale=locale)
    page = ctx.new_page()
    page.goto(f"{base}/classroom?class={code}")
    wait_ready(page)
    page.locator(".st-key-classroom_name_in input").fill(name)
    page.locator('[data-testid="stFormSubmitButton"] button').click()
    if wait:
        wait_ready(page)
    return ctx, page

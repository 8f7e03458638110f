"""Class mode in a real browser: one teacher and two students (three contexts, one run, one server with its own
temporary database). The students join by the QR link, answer on the quiz page, and the teacher's live
dashboard counts them without a reload. Screenshots at 1280 and 390 px."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from classhelpers import student_joins, teacher_opens_a_class

pytestmark = pytest.mark.e2e
PASSWORD = "e2e-teacher"


@pytest.fixture(scope="module")
def class_server(browser, tmp_path_factory) -> Iterator[str]:  # noqa: ARG001 - browser: checks Chromium first
    """A server of its own: a fresh SQLite file and a teacher password in its environment."""
    from harness.server import start_server, stop_server

    db = tmp_path_factory.mktemp("classdb") / "class.sqlite3"
    proc, base = start_server(env={"MHA_DATABASE_URL": f"sqlite:///{db}", "MHA_TEACHER_PASSWORD": PASSWORD})
    yield base
    stop_server(proc)


def _metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label)
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def test_teacher_sees_two_students_answers_live(browser, class_server, shots):
    from harness.server import wait_ready

    teacher_ctx = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="en-US")
    teacher = teacher_ctx.new_page()
    code = teacher_opens_a_class(teacher, f"{class_server}/classroom", PASSWORD)
    assert _metric(teacher, "Students joined") == "0"

    students = []
    for i, (name, width, locale) in enumerate([("Ann <b>🦊</b>", 390, "en-US"), ("学生 \"二\"", 1280, "zh-CN")]):
        ctx, page = student_joins(browser, class_server, code, name, width, locale)
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


@pytest.fixture(scope="module")
def guarded_server(tmp_path_factory) -> Iterator[tuple[str, str]]:
    """(base URL, database URL) of a server of its own with the default join limits."""
    from harness.server import start_server, stop_server

    db = f"sqlite:///{tmp_path_factory.mktemp('joindb') / 'class.sqlite3'}"
    proc, base = start_server(env={"MHA_DATABASE_URL": db, "MHA_TEACHER_PASSWORD": PASSWORD, "MHA_JOIN_LIMITS": None})
    yield base, db
    stop_server(proc)


FLOOD = 40


def test_a_script_cannot_stuff_the_class(guarded_server):
    """Issue 28 item 2 end to end, over Streamlit's own websocket protocol from one address (what a script
    does): a taken name is refused, a locked class refuses a newcomer but not a returning student, and of 40
    joins sent at once only the address's burst (and what refilled meanwhile) get in."""
    import asyncio
    import concurrent.futures
    import time

    from harness.websocket_client import Student
    from mha_core.classroom import JoinLimits, Storage
    from mha_core.i18n import translate
    from mha_core.quiz.progress_store import new_student_id

    base, db = guarded_server
    store = Storage.open(db)
    info = store.create_class()

    async def opened(query: dict[str, str]) -> tuple[Student, object]:
        s = Student(base, "direct", {"class": info.code, **query})
        await s.connect()
        return s, await s.run("classroom", timeout=30)

    async def join(s: Student, form, name: str):  # noqa: ANN001, ANN202 - websocket_client.Run
        submit = next(k for k in form.widgets if k.startswith("FormSubmitter:classroom_join"))
        return await s.run("classroom", {form.widget_id("classroom_name_in"): ("string_value", name),
                                         form.widget_id(submit): ("trigger_value", True)}, timeout=30)

    def said(run, key: str, **params: object) -> bool:  # noqa: ANN001 - websocket_client.Run
        text = translate("en", f"errors.{key}", **params)
        return any(t.startswith(text[:25]) for t in run.texts)

    ann_key = new_student_id()

    async def scenario() -> tuple[int, int, float]:
        ann, form = await opened({"student": ann_key})  # her link, as the quiz page writes it
        first = await join(ann, form, "Ann Lee")
        assert not first.exceptions and "Ann Lee" in first.texts
        twin, form = await opened({})
        assert said(await join(twin, form, "  ann   LEE"), "class_name_taken")
        store.set_locked(info.id, True)
        newcomer, form = await opened({})
        assert said(await join(newcomer, form, "Bo"), "class_locked", code=info.code)
        back, again = await opened({"student": ann_key})  # Ann's reload of her own link: still in
        assert "Ann Lee" in again.texts and not said(again, "class_locked", code=info.code)
        store.set_locked(info.id, False)
        bots = await asyncio.gather(*(opened({}) for _ in range(FLOOD)))
        t0 = time.perf_counter()
        runs = await asyncio.gather(*(join(s, f, f"Bot {i}") for i, (s, f) in enumerate(bots)))
        elapsed = time.perf_counter() - t0
        assert not any(r.exceptions for r in runs)
        admitted = sum(f"Bot {i}" in r.texts for i, r in enumerate(runs))
        refused = sum(said(r, "class_join_wait", seconds=1) for r in runs)
        for s, _ in (*bots, (ann, None), (twin, None), (newcomer, None), (back, None)):
            await s.close()
        return admitted, refused, elapsed

    # a thread of its own: Playwright's sync API keeps an event loop running in this one
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        admitted, refused, elapsed = pool.submit(lambda: asyncio.run(asyncio.wait_for(scenario(), 55))).result()
    limit = JoinLimits().address
    print(f"{FLOOD} joins from one address in {elapsed:.1f} s: {admitted} admitted, {refused} told to wait")
    assert admitted + refused == FLOOD and refused > 0
    assert admitted <= limit.burst - 1 + limit.rate * elapsed + 1  # Ann took one token before
    assert len(store.students(info.id)) == 1 + admitted
    store.dispose()

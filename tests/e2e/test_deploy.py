"""The replicated deployment, for real: Debian's nginx running the shipped deploy/nginx/mha-lab.conf (ports
rewritten to loopback test ports) in front of two `streamlit run app.py` replicas sharing one PostgreSQL.

A class runs through the balancer: a teacher and one student in Chromium, five students over Streamlit's own
websocket protocol (what a browser sends). Route cookies are chosen so that both replicas serve students and
the teacher sits on the replica that survives. Mid-class one replica is killed (SIGKILL). Its students reconnect
through the balancer — the Chromium page by itself, the protocol students by opening a new websocket with the same
cookie — land on the other replica, and go on answering. Then: every answer the app confirmed is one row in
PostgreSQL with what was sent (nothing lost, nothing twice, nothing overwritten), each moved student's quiz shows
the progress it had, and the teacher's live dashboard counts exactly the rows.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from classhelpers import teacher_opens_a_class

pytestmark = pytest.mark.e2e
PASSWORD = "deploy-teacher"
PORTS = (18000, 18099)        # this test's loopback port range
PG_ENV = "MHA_TEST_DATABASE_URL"
PROTOCOL_STUDENTS = 5         # 3 on the replica that dies, 2 on the one that survives
BEFORE, AFTER = 2, 2          # answers per protocol student before and after the kill


def _need(ok: bool, what: str) -> None:
    if not ok:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the replicated deployment test, but {what}")
        pytest.skip(f"replicated deployment test: {what}")


@dataclass
class Deployment:
    balancer: object            # cluster.Balancer
    replicas: list              # subprocess.Popen per replica
    addresses: list[str]        # "127.0.0.1:port" per replica, as nginx logs them
    url: str                    # the shared PostgreSQL


@pytest.fixture(scope="module")
def deployment(browser, tmp_path_factory) -> Iterator[Deployment]:  # noqa: ARG001 - browser: Chromium checked first
    from harness.cluster import (
        NGINX,
        free_port,
        replica_log,
        start_balancer,
        start_replicas,
        stop_balancer,
        stop_replicas,
    )

    _need(Path(NGINX).exists(), f"{NGINX} is missing (apt-get install nginx; .ci/run installs it)")
    url = os.environ.get(PG_ENV)
    _need(bool(url), f"{PG_ENV} is unset (source tests/ci_postgres.sh starts PostgreSQL)")
    lb = free_port(*PORTS)
    a = free_port(*PORTS, taken=(lb,))
    b = free_port(*PORTS, taken=(lb, a))
    logs = tmp_path_factory.mktemp("replicas")
    try:
        procs = start_replicas([a, b], {"MHA_DATABASE_URL": url, "MHA_TEACHER_PASSWORD": PASSWORD}, logs)
    except RuntimeError as err:
        pytest.fail(str(err))
    try:
        bal = start_balancer(tmp_path_factory.mktemp("nginx"), lb, [a, b])
    except RuntimeError as err:
        stop_replicas(procs)
        pytest.fail(str(err))
    try:
        yield Deployment(bal, procs, [f"127.0.0.1:{a}", f"127.0.0.1:{b}"], url)
    finally:
        stop_balancer(bal)
        stop_replicas(procs)
        for port in (a, b):  # shown with a failure: the server side of what went wrong
            text = replica_log(logs, port).read_text(errors="replace")
            if "Traceback" in text:
                print(f"--- replica {port} ---\n{text[-4000:]}")


class Loop:
    """An asyncio loop on its own thread, so the websocket students live beside Playwright's sync API."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro, timeout: float = 180):  # noqa: ANN001, ANN201 - any coroutine and its result
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        if not self.thread.is_alive():
            self.loop.close()


async def _gather(*coros, return_exceptions: bool = False) -> list:  # noqa: ANN002 - coroutines
    """asyncio.gather, as a coroutine made on the students' own loop."""
    return await asyncio.gather(*coros, return_exceptions=return_exceptions)


def _routes(bal, wanted: dict[str, int]) -> dict[str, list[str]]:  # noqa: ANN001 - cluster.Balancer
    """Random route cookies until each replica address has as many as wanted (the balancer decides, we ask it)."""
    from harness.cluster import route_of

    got: dict[str, list[str]] = {addr: [] for addr in wanted}
    for _ in range(400):
        if all(len(got[a]) >= n for a, n in wanted.items()):
            return got
        cookie = secrets.token_hex(16)
        addr = route_of(bal, cookie)
        if len(got.setdefault(addr, [])) < wanted.get(addr, 0):
            got[addr].append(cookie)
    raise AssertionError(f"400 cookies did not spread over the replicas: {got}")


def _singles(key: str):  # noqa: ANN202 - tuple of Question
    from mha_core.quiz import load_questions
    from mha_core.quiz.model import Kind
    from mha_core.quiz.progress_store import student_seed

    return tuple(q for q in load_questions("en", student_seed(key)) if q.kind is Kind.SINGLE)


def _progress_text(answered: int) -> str:
    from mha_core.i18n import translate
    from mha_core.quiz import load_questions

    return translate("en", "quiz.progress", answered=answered, total=len(load_questions("en")))


async def _answer(s, run, q, right: bool):  # noqa: ANN001, ANN202 - websocket_client.Student, websocket_client.Run, Question
    """Pick an option (the right one or a wrong one) and press Check; the next run and (canonical, correct)."""
    from mha_core.quiz.grading import grade
    from mha_core.ui.quiz import answer_key, button_key

    option = q.correct[0] if right else next(o for o in q.option_ids if o != q.correct[0])
    texts = {o.id: o.text for o in q.options}
    after = await s.run("quiz", {run.widget_id(answer_key(q.id)): ("string_value", texts[option]),
                                 run.widget_id(button_key("check", q.id)): ("trigger_value", True)})
    assert not after.exceptions, after.exceptions
    g = grade(q, option)
    return after, (g.canonical, g.correct)


async def _join(s, code: str, name: str) -> None:  # noqa: ANN001 - websocket_client.Student
    await s.connect()
    form = await s.run("classroom")
    submit = next(k for k in form.widgets if k.startswith("FormSubmitter:classroom_join"))
    joined = await s.run("classroom", {form.widget_id("classroom_code_in"): ("string_value", code),
                                       form.widget_id("classroom_name_in"): ("string_value", name),
                                       form.widget_id(submit): ("trigger_value", True)})
    assert not joined.exceptions and name in joined.texts, joined.texts


async def _phase(s, key: str, questions, expected: dict, answered: int) -> None:  # noqa: ANN001
    """Open the quiz (all questions), check the progress shown, answer ``questions`` (alternately right/wrong)."""
    from mha_core.ui.quiz import answer_key

    run = await s.run("quiz")
    assert not run.exceptions, run.exceptions
    assert _progress_text(answered) in run.texts, f"{key}: expected '{_progress_text(answered)}' in the quiz"
    for qid in expected:  # graded questions show feedback, not an input that would overwrite the stored answer
        assert answer_key(qid) not in run.widgets, f"{key}: question {qid} is open again after the reconnect"
    for i, q in enumerate(questions):
        run, expected[q.id] = await _answer(s, run, q, right=(answered + i) % 2 == 0)
        assert _progress_text(answered + i + 1) in run.texts


async def _dropped(s) -> bool:  # noqa: ANN001 - websocket_client.Student
    """Whether this student's websocket was closed under them (waits up to 10 s)."""
    import websockets

    try:
        async with asyncio.timeout(10):
            while True:  # messages still in flight (a status change after the last run) come first
                await s.receive()
    except websockets.ConnectionClosed:
        return True
    except TimeoutError:
        return False


# Set window.__mhaLost once the Streamlit app leaves the CONNECTED state (its websocket went away).
WATCH_CONNECTION = """() => { const app = document.querySelector('[data-testid="stApp"]'); window.__mhaLost = false;
  new MutationObserver(() => { if (app.getAttribute('data-test-connection-state') !== 'CONNECTED')
    window.__mhaLost = true; }).observe(app, {attributes: true, attributeFilter: ['data-test-connection-state']}); }"""


def _metric(page, label: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=label)
    return box.locator('[data-testid="stMetricValue"]').inner_text().strip()


def _click_single(page, q, right: bool) -> tuple[str, bool]:  # noqa: ANN001 - Page, Question
    from harness.server import wait_ready
    from mha_core.quiz.grading import grade
    from mha_core.ui.quiz import answer_key, button_key

    option = q.correct[0] if right else next(o for o in q.option_ids if o != q.correct[0])
    page.locator(f".st-key-{answer_key(q.id)}").get_by_text({o.id: o.text for o in q.options}[option],
                                                            exact=True).click()
    wait_ready(page)
    page.locator(f".st-key-{button_key('check', q.id)} button").click()
    wait_ready(page)
    g = grade(q, option)
    return g.canonical, g.correct


def _redrawn_after_reconnect(page, shots: Path) -> None:  # noqa: ANN001 - Page
    """Wait for the reconnected page to be drawn by the survivor. Once in CI (1 run of ~10, never here, also not
    under two busy cores) the reconnected page stayed without a title for 60 s: Streamlit's client did not redraw
    it. What this test checks is the class's data across the failover, so such a page is recorded (a screenshot,
    its text and states, a warning in the report) and reloaded, as a student would; the data checks stay strict."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    from harness.server import wait_ready

    try:
        wait_ready(page)
        return
    except PlaywrightTimeout:
        page.screenshot(path=str(shots / "deploy-student-reconnect-blank.png"))
        app = page.locator('[data-testid="stApp"]')
        states = (app.get_attribute("data-test-connection-state"), app.get_attribute("data-test-script-state"))
        text = page.locator("body").inner_text()[:500]
        warnings.warn(f"the reconnected page was not redrawn within 60 s (connection, script: {states}); "
                      f"reloaded. Its text: {text!r}", stacklevel=2)
    page.reload()
    wait_ready(page)


def test_a_class_survives_losing_a_replica(browser, deployment, shots):

    from sqlalchemy import select

    from harness.cluster import ROUTE_COOKIE
    from harness.server import wait_ready
    from harness.websocket_client import Student
    from mha_core.classroom import Storage
    from mha_core.classroom.schema import answers, students
    from mha_core.quiz.progress_store import new_student_id
    from mha_core.ui.quiz import answer_key

    bal = deployment.balancer
    doomed, survivor = deployment.addresses
    routes = _routes(bal, {doomed: 4, survivor: 3})  # doomed: 3 protocol + 1 Chromium; survivor: teacher + 2
    lb = bal.base

    def context(route: str):  # noqa: ANN202 - a Playwright BrowserContext with its route cookie
        ctx = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="en-US")
        ctx.add_cookies([{"name": ROUTE_COOKIE, "value": route, "url": lb}])
        return ctx

    # the teacher, on the replica that survives, opens a class
    teacher_ctx = context(routes[survivor][0])
    teacher = teacher_ctx.new_page()
    code = teacher_opens_a_class(teacher, f"{lb}/classroom?lang=en", PASSWORD)

    # five protocol students (three on the doomed replica) join and answer BEFORE questions each
    loop = Loop()
    plan = [(doomed, r) for r in routes[doomed][:3]] + [(survivor, r) for r in routes[survivor][1:3]]
    keys = [new_student_id() for _ in plan]
    expected: dict[str, dict[str, tuple[str, bool]]] = {k: {} for k in keys}
    names = {k: f"Student {i} ({'moves' if addr == doomed else 'stays'})" for i, (k, (addr, _)) in
             enumerate(zip(keys, plan, strict=True))}
    studs = [Student(lb, route, {"class": code, "student": k, "lang": "en", "mode": "all"})
             for k, (_, route) in zip(keys, plan, strict=True)]
    chromium_key = new_student_id()
    expected[chromium_key] = {}
    names[chromium_key] = "Chromium student (moves)"

    async def before() -> None:
        await asyncio.gather(*(_join(s, code, names[k]) for s, k in zip(studs, keys, strict=True)))
        await asyncio.gather(*(_phase(s, k, _singles(k)[:BEFORE], expected[k], 0)
                               for s, k in zip(studs, keys, strict=True)))

    pupil_ctx = context(routes[doomed][3])
    try:
        loop.run(before())

        # the Chromium student, on the doomed replica, joins and answers one question
        pupil = pupil_ctx.new_page()
        pupil.goto(f"{lb}/classroom?class={code}&student={chromium_key}&lang=en")
        wait_ready(pupil)
        pupil.locator(".st-key-classroom_name_in input").fill(names[chromium_key])
        pupil.locator('[data-testid="stFormSubmitButton"] button').click()
        wait_ready(pupil)
        pupil.goto(f"{lb}/quiz?class={code}&student={chromium_key}&mode=all&lang=en")
        wait_ready(pupil)
        q1, q2 = _singles(chromium_key)[:2]
        canonical, correct = _click_single(pupil, q1, right=True)
        expected[chromium_key][q1.id] = (canonical, correct)
        pupil.get_by_text(_progress_text(1), exact=True).wait_for(timeout=20_000)

        # kill the replica that serves the Chromium student and three protocol students
        pupil.evaluate(WATCH_CONNECTION)
        victim = deployment.replicas[deployment.addresses.index(doomed)]
        victim.kill()
        victim.wait(timeout=10)
        dropped = loop.run(_gather(*(_dropped(s) for s in studs[:3])))
        assert all(dropped), f"the kill did not close the doomed replica's websockets: {dropped}"

        async def after() -> None:
            for s in studs[:3]:  # the students of the dead replica open a new websocket, same route cookie
                await s.close()
            await asyncio.gather(*(s.connect() for s in studs[:3]))
            await asyncio.gather(*(_phase(s, k, _singles(k)[BEFORE:BEFORE + AFTER], expected[k], BEFORE)
                                   for s, k in zip(studs, keys, strict=True)))

        loop.run(after())

        # the Chromium page lost its connection, reconnects by itself (through the balancer, to the survivor), shows
        # its progress from the database (question 1 graded, not open again) and goes on
        pupil.wait_for_function("() => window.__mhaLost === true", timeout=30_000)
        pupil.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]', timeout=60_000)
        _redrawn_after_reconnect(pupil, shots)
        pupil.get_by_text(_progress_text(1), exact=True).wait_for(timeout=30_000)
        assert pupil.locator(f".st-key-{answer_key(q1.id)}").count() == 0, "question 1 is open again"
        canonical, correct = _click_single(pupil, q2, right=False)
        expected[chromium_key][q2.id] = (canonical, correct)
        pupil.get_by_text(_progress_text(2), exact=True).wait_for(timeout=20_000)
        pupil.screenshot(path=str(shots / "deploy-student-after-failover.png"))
        assert pupil.locator('[data-testid="stException"]').count() == 0
    finally:
        loop.run(_gather(*(s.close() for s in studs), return_exceptions=True))
        loop.close()
        pupil_ctx.close()

    # the database holds exactly what the students were told was stored
    store = Storage.open(deployment.url)
    try:
        info = store.find_class(code)
        with store.engine.connect() as conn:
            rows = conn.execute(select(students.c.key, answers.c.question_id, answers.c.canonical,
                                       answers.c.correct, answers.c.attempts)
                                .join(students, students.c.id == answers.c.student_id)
                                .where(answers.c.class_id == info.id)).all()
        members = {s.name for s in store.students(info.id)}
    finally:
        store.dispose()
    sent = {(k, qid, can, ok) for k, qs in expected.items() for qid, (can, ok) in qs.items()}
    written = {(r.key, r.question_id, r.canonical, r.correct) for r in rows}
    n_sent = len(sent)
    assert n_sent == PROTOCOL_STUDENTS * (BEFORE + AFTER) + 2
    assert len(rows) == n_sent, f"rows expected {n_sent}, written {len(rows)}"
    assert written == sent, f"lost {sorted(sent - written)}; unexpected {sorted(written - sent)}"
    assert all(r.attempts == 1 for r in rows), "a stored answer was overwritten after the failover"
    assert members == set(names.values())

    # the teacher's live dashboard (never disconnected) counts exactly those rows
    right = sum(ok for _, _, _, ok in sent)
    teacher.wait_for_function(
        """n => [...document.querySelectorAll('[data-testid="stMetric"]')]
                 .some(m => m.innerText.includes('Answers') && m.innerText.trim().endsWith(String(n)))""",
        arg=n_sent, timeout=30_000)
    assert _metric(teacher, "Students joined") == str(len(names))
    assert _metric(teacher, "Answers") == str(n_sent)
    assert _metric(teacher, "Right overall") == f"{right / n_sent:.0%}"
    assert teacher.locator('[data-testid="stException"]').count() == 0
    teacher.screenshot(path=str(shots / "deploy-teacher-after-failover.png"), full_page=True)
    teacher_ctx.close()

    # the balancer's own log: before the kill the movers were served by the doomed replica, after it by the other
    streams = [(route, ups) for route, ups, _status, req in bal.log() if "/_stcore/stream" in req]
    for route in [r for _, r in plan[:3]] + [routes[doomed][3]]:
        served = [ups.split(",")[-1].strip() for r, ups in streams if r == route]
        assert served[:1] == [doomed] and served[-1] == survivor, f"route {route[:8]}…: {served}"
    for _, route in plan[3:]:
        served = {ups for r, ups in streams if r == route}
        assert served == {survivor}, f"a survivor's student was moved: {served}"

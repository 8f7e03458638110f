"""One full Peer Instruction cycle in a real browser (issue 27 §3): a teacher (1280 px, English) and three students
(a 390 px phone in Chinese, a 390 px phone in English, a 1280 px laptop in English). Round 1 with "answer on your own
first" and a countdown on every screen, closed without showing the result, Mazur's discussion prompt, the coach on
the presenter's screen only, the vote again, both rounds side by side with the moves, the follow-up question and its
share next to the two rounds; a reload after the close cannot add a vote. Every wait is on a condition (no sleeps).
Screenshots pi-*.png of the presenter and the phones at 1280 / 390 px, zh / en."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from classhelpers import teacher_opens_a_class
from livehelpers import FOLLOW_MS, PASSWORD, VOTE_BOX, join_following, serve
from livehelpers import click as _click
from livehelpers import shows as _shows
from livehelpers import vote as _vote
from livehelpers import wait_following as _wait_following
from livehelpers import wait_metric as _wait_metric

from mha_core.lesson.store import read_live

pytestmark = pytest.mark.e2e
STUDENTS = (("小明", 390, "zh-CN"), ("Ann", 390, "en-US"), ("Bo", 1280, "en-US"))
ALONE = {"zh": "先独立作答，暂时不要讨论", "en": "Answer on your own first — no talking yet"}
DISCUSS = {"zh": "找一位答案和你不同的同学，说服对方", "en": "Find someone who answered differently and convince them"}


@pytest.fixture(scope="module")
def live_server(browser, tmp_path_factory) -> Iterator[tuple[str, str]]:  # noqa: ARG001 - browser: Chromium first
    """(base URL, database URL): a server of this module's own (livehelpers.serve)."""
    yield from serve(tmp_path_factory)


def _live_vote(db_url: str, code: str):  # noqa: ANN202 - (VoteState, rows)
    from mha_core.classroom.storage import Storage

    store = Storage.open(db_url)
    try:
        class_id = store.find_class(code).id
        return read_live(store, class_id)[1].vote, store.votes(class_id)
    finally:
        store.dispose()


def _shot(page, shots, name: str) -> None:
    """A screenshot with the vote box in view (Streamlit's main area scrolls on its own)."""
    page.locator(VOTE_BOX).first.scroll_into_view_if_needed()
    page.screenshot(path=str(shots / f"pi-{name}.png"))


def _wait_text(page, selector: str, text: str) -> None:
    page.locator(selector).filter(has_text=text).first.wait_for(timeout=FOLLOW_MS)


def test_a_teacher_and_three_students_run_one_full_cycle(browser, live_server, shots):
    from harness.server import wait_ready

    base, db_url = live_server
    teacher_ctx = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="en-US")
    teacher = teacher_ctx.new_page()
    code = teacher_opens_a_class(teacher, f"{base}/classroom", PASSWORD)
    for _ in range(3):  # drop prereq, split, attend: step 2 is concat + W^O, a ConcepTest in the default plan
        _click(teacher, ".st-key-live_plan_drop_1")
    assert "ConcepTest" in teacher.locator(".st-key-live_plan").inner_text()
    _click(teacher, ".st-key-live_start")
    teacher.locator(".st-key-live_bar").wait_for(timeout=FOLLOW_MS)
    students = []
    for name, width, locale in STUDENTS:
        ctx, page = join_following(browser, base, code, name, width, locale)
        students.append((ctx, page, locale[:2], f"{width}-{locale[:2]}"))
    _click(teacher, ".st-key-live_next")
    _wait_following(teacher, "concat")
    for _, page, _, _ in students:
        _wait_following(page, "concat")

    # --- round 1: alone, with a 60 s countdown on every screen
    try:  # failed once in a full CI run (30 s without the button; 11 runs alone or beside other tests passed)
        teacher.locator(".st-key-live_vote_countdown button").filter(has_text="60 s").click()
    except Exception as err:  # noqa: BLE001 - say what the teacher's page showed instead
        raise AssertionError(f"no 60 s countdown on the teacher's page: {_shows(teacher)}") from err
    wait_ready(teacher)
    _click(teacher, ".st-key-live_vote_open")
    _wait_text(teacher, VOTE_BOX, ALONE["en"])    # the round is open (a click's run may start after wait_ready)
    vote, _ = _live_vote(db_url, code)
    answer, wrong = vote.answer, 1 - vote.answer  # concat's question: yes / no
    for _, page, lang, _ in students:
        _wait_text(page, VOTE_BOX, ALONE[lang])
        page.locator(f"{VOTE_BOX} .mha-countdown").first.wait_for(timeout=FOLLOW_MS)
    teacher.locator(f"{VOTE_BOX} .mha-countdown").first.wait_for(timeout=FOLLOW_MS)
    _shot(teacher, shots, "round1-presenter-1280-en")
    for (_, page, _, _), choice in zip(students, (wrong, answer, wrong), strict=True):  # 1 of 3 right
        _vote(page, choice)
    _shot(students[0][1], shots, f"round1-{students[0][3]}")
    _wait_metric(teacher, "Votes", "3 of 3 voted")

    # --- closed without showing: the discussion prompt everywhere, the coach for the presenter only
    _click(teacher, ".st-key-live_vote_close")
    _wait_text(teacher, VOTE_BOX, DISCUSS["en"])
    assert teacher.locator(f"{VOTE_BOX} [data-testid='stVegaLiteChart']").count() == 0
    teacher.locator(".st-key-live_coach button").first.click()
    coach = teacher.locator('[data-testid="stPopoverBody"]').first
    coach.wait_for(timeout=FOLLOW_MS)
    assert "33% right in round 1, under 35%" in coach.inner_text()
    _shot(teacher, shots, "discuss-presenter-coach-1280-en")
    teacher.keyboard.press("Escape")
    for _, page, lang, tag in students:
        _wait_text(page, VOTE_BOX, DISCUSS[lang])
        body = page.locator('[data-testid="stMain"]').inner_text()
        assert "Coach" not in body and "教练" not in body and "33%" not in body
        assert page.locator(f"{VOTE_BOX} [data-testid='stVegaLiteChart']").count() == 0
        _shot(page, shots, f"discuss-{tag}")
    reloaded = students[2][1]                     # a reload after the close: no ballot to send
    reloaded.reload()
    _wait_text(reloaded, VOTE_BOX, DISCUSS["en"])
    assert reloaded.locator(".st-key-live_vote_send").count() == 0

    # --- the vote again: both rounds side by side, with the moves
    _click(teacher, ".st-key-live_vote_again")
    for (_, page, _, _), choice in zip(students, (answer, answer, wrong), strict=True):  # 小明 convinced
        _vote(page, choice)
    _wait_metric(teacher, "Votes", "3 of 3 voted")
    _click(teacher, ".st-key-live_vote_close")
    _click(teacher, ".st-key-live_vote_reveal")
    _wait_metric(teacher, "Correct, round 1 → round 2", "33% → 67%")
    _wait_metric(teacher, "Wrong → right", "1")
    _wait_metric(teacher, "Right → wrong", "0")
    assert teacher.locator(f"{VOTE_BOX} [data-testid='stVegaLiteChart']").count() == 1
    _shot(teacher, shots, "both-rounds-presenter-1280-en")

    # --- the follow-up: the same idea, another question, in each student's language
    _click(teacher, ".st-key-live_vote_follow_up")
    _wait_text(teacher, VOTE_BOX, "Follow-up: the same idea")
    follow, _ = _live_vote(db_url, code)
    assert follow.round == 3 and follow.follow_up == "wo-without"
    titles = {"zh": "跟进题", "en": "Follow-up"}
    for (_, page, lang, _), right in zip(students, (True, True, False), strict=True):
        _wait_text(page, VOTE_BOX, titles[lang])
        _vote(page, follow.answer if right else (follow.answer + 1) % follow.n_options)
    _shot(students[0][1], shots, f"follow-up-{students[0][3]}")
    _click(teacher, ".st-key-live_vote_close")
    _wait_metric(teacher, "Follow-up", "67%")
    _wait_metric(teacher, "Round 1", "33%")
    _wait_metric(teacher, "Round 2", "67%")
    _shot(teacher, shots, "follow-up-presenter-1280-en")
    teacher.locator(".st-key-lang label").filter(has_text="中文").click()   # the presenter in Chinese
    _wait_text(teacher, VOTE_BOX, "跟进题")
    wait_ready(teacher)
    _shot(teacher, shots, "follow-up-presenter-1280-zh")
    teacher.set_viewport_size({"width": 390, "height": 900})
    wait_ready(teacher)
    _shot(teacher, shots, "follow-up-presenter-390-zh")
    for (_, page, _, tag), right in zip(students, (True, True, False), strict=True):
        kind = "Success" if right else "Warning"
        page.locator(f"{VOTE_BOX} [data-testid='stAlertContent{kind}']").first.wait_for(timeout=FOLLOW_MS)
        _shot(page, shots, f"follow-up-result-{tag}")

    _, rows = _live_vote(db_url, code)
    assert len(rows) == len({(r.student_id, r.round) for r in rows}) == 9   # one vote per student per round
    for ctx, page, _, _ in students:
        assert page.locator('[data-testid="stException"]').count() == 0
        ctx.close()
    assert teacher.locator('[data-testid="stException"]').count() == 0
    teacher_ctx.close()

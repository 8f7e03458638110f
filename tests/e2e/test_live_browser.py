"""The live lesson in a real browser: one server with its own temporary database, one teacher and two students
(a 390 px phone in Chinese, a 1280 px laptop in English). The teacher trims the plan and teaches live; the students
join by the link and follow: (a) the teacher's next step, h and causal mask reach both students' pages; (b) a class
vote with a second round and a reveal, checked on every screen and row by row in the database; (c) a student
explores on their own, does not follow, and comes back to the teacher with one tap. No timed assertions: every
wait is a generous timeout on something that must happen. Screenshots (live-*.png) at both widths and languages."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from classhelpers import teacher_opens_a_class
from livehelpers import FOLLOW_MS, PASSWORD, VOTE_BOX, join_following, serve
from livehelpers import click as _click
from livehelpers import page_key as _page_key
from livehelpers import vote as _vote
from livehelpers import wait_following as _wait_following
from livehelpers import wait_metric as _wait_metric

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def live_server(browser, tmp_path_factory) -> Iterator[tuple[str, str]]:  # noqa: ARG001 - browser: Chromium first
    """(base URL, database URL): a server of its own with a fresh SQLite file and a teacher password."""
    yield from serve(tmp_path_factory)


def test_students_follow_vote_and_come_back(browser, live_server, shots):
    from harness.server import wait_ready
    from mha_core.classroom.storage import Storage
    from mha_core.lesson import shift

    base, db_url = live_server
    # --- the teacher: dashboard, a new class, the plan trimmed to overview -> attend -> concat ..., Teach live
    teacher_ctx = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="en-US")
    teacher = teacher_ctx.new_page()
    code = teacher_opens_a_class(teacher, f"{base}/classroom", PASSWORD)
    for _ in range(2):  # drop "prereq", then "split": step 2 becomes the attend page (its causal mask, its vote)
        _click(teacher, ".st-key-live_plan_drop_1")
    plan_text = teacher.locator(".st-key-live_plan").inner_text()
    assert "Steps: 6" in plan_text, plan_text
    _click(teacher, ".st-key-live_start")
    _wait_following(teacher, "overview")
    teacher.locator(".st-key-live_bar").wait_for(timeout=FOLLOW_MS)

    # --- two students join by the link and follow the teacher to step 1
    students = []
    for name, width, locale in (("小明", 390, "zh-CN"), ("Ann", 1280, "en-US")):
        ctx, page = join_following(browser, base, code, name, width, locale)
        page.locator(".st-key-live_banner").wait_for(timeout=FOLLOW_MS)
        assert page.locator('[data-testid="stException"]').count() == 0
        students.append((ctx, page, f"{width}-{locale[:2]}"))
    (_, phone, phone_tag), (_, laptop, laptop_tag) = students
    assert "1/6" in phone.locator(".st-key-live_banner").inner_text()          # zh: 第 1/6 步
    assert "step 1/6" in laptop.locator(".st-key-live_banner").inner_text()
    _wait_metric(teacher, "Following", "2 of 2")

    # --- (a) next step, h and the causal mask: both students show the teacher's page and settings
    _click(teacher, ".st-key-live_next")
    _wait_following(teacher, "attend")
    teacher.locator(".st-key-h_div input[type='range']").first.focus()
    teacher.keyboard.press("ArrowRight")   # h: 4 -> 8 (d_model stays 64)
    _wait_following(teacher, "attend", hd="8")
    wait_ready(teacher)
    teacher.locator(".st-key-causal label").first.click()
    _wait_following(teacher, "attend", hd="8", causal="1")
    wait_ready(teacher)
    for page, tag in ((phone, phone_tag), (laptop, laptop_tag)):
        _wait_following(page, "attend", hd="8", causal="1")
        wait_ready(page)
        assert page.locator(".st-key-causal input[type='checkbox']").is_checked()   # the toggle drawn as set
        assert "2/6" in page.locator(".st-key-live_banner").inner_text()
        assert page.locator('[data-testid="stException"]').count() == 0
        page.screenshot(path=str(shots / f"live-student-{tag}.png"), full_page=True)
    teacher.screenshot(path=str(shots / "live-presenter-1280-en.png"), full_page=True)

    # --- (b) a vote round, a second round, the reveal
    _click(teacher, ".st-key-live_vote_open")
    options = [t.strip() for t in teacher.locator(f"{VOTE_BOX} ol li").all_inner_texts()]
    assert len(options) >= 2, options
    _vote(phone, 0)
    _vote(laptop, 1)
    _wait_metric(teacher, "Votes", "2 of 2 voted")
    _click(teacher, ".st-key-live_vote_close")    # closed unseen (Peer Instruction's default) ...
    _click(teacher, ".st-key-live_vote_show")     # ... and shown on purpose
    teacher.locator(f"{VOTE_BOX} [data-testid='stVegaLiteChart']").first.wait_for(timeout=FOLLOW_MS)
    assert "Round 1 · votes: 2" in teacher.locator(VOTE_BOX).first.inner_text()
    teacher.screenshot(path=str(shots / "live-vote-histogram-1280-en.png"), full_page=True)
    phone.locator(f"{VOTE_BOX} [data-testid='stAlert']").first.wait_for(timeout=FOLLOW_MS)  # "the vote is closed"
    _click(teacher, ".st-key-live_vote_again")
    _vote(phone, 1)     # the phone changes its answer to the laptop's
    _vote(laptop, 1)    # the laptop keeps its answer
    _wait_metric(teacher, "Votes", "2 of 2 voted")
    _click(teacher, ".st-key-live_vote_close")
    _click(teacher, ".st-key-live_vote_reveal")
    shown = teacher.locator(VOTE_BOX).first.inner_text()
    answer = next(i for i, o in enumerate(options) if f"The answer: {o}" in shown)

    store = Storage.open(db_url)
    try:
        class_id = store.find_class(code).id
        rows = store.votes(class_id)
    finally:
        store.dispose()
    by_name = sorted((r.name, r.round, r.choice, r.correct) for r in rows)
    assert by_name == [("Ann", 1, 1, answer == 1), ("Ann", 2, 1, answer == 1),
                       ("小明", 1, 0, answer == 0), ("小明", 2, 1, answer == 1)]
    # one vote key, the same for both languages: the attend page's question at h 8 x d_head 8 with the mask
    assert len({r.vote_key for r in rows}) == 1 and rows[0].vote_key.startswith("attend.attend-8-8-illustrative-0-1-")
    moved = shift(rows, rows[0].vote_key, len(options), answer)
    assert moved.moved[0][1] == 1 and moved.moved[1][1] == 1    # one moved 1st -> 2nd option, one stayed
    share = teacher.locator("[data-testid='stMetric']").filter(has_text="Correct, round 1").first.inner_text()
    assert f"{moved.right_before:.0%} → {moved.right_after:.0%}" in share
    table = teacher.locator(f"{VOTE_BOX} [data-testid='stMarkdownContainer'] table").first.inner_text()
    assert "Round 1 choice" in table
    teacher.screenshot(path=str(shots / "live-vote-shift-1280-en.png"), full_page=True)
    for page, tag, mine in ((phone, phone_tag, 1), (laptop, laptop_tag, 1)):   # both saw the reveal
        kind = "Success" if mine == answer else "Warning"
        page.locator(f"{VOTE_BOX} [data-testid='stAlertContent{kind}']").first.wait_for(timeout=FOLLOW_MS)
        assert page.locator(f"{VOTE_BOX} [data-testid='stRadio'] input[disabled]").count() == len(options)
        page.screenshot(path=str(shots / f"live-reveal-{tag}.png"), full_page=True)

    # --- (c) the laptop explores on its own; the teacher moves; the laptop stays; "back" follows at once
    _click(laptop, ".st-key-live_explore")
    laptop.locator("[data-testid='stSidebarNav'] a[href$='/split']").first.click()
    _wait_following(laptop, "split")
    wait_ready(laptop)
    _wait_metric(teacher, "Following", "1 of 2")
    _click(teacher, ".st-key-live_next")
    _wait_following(phone, "concat")
    laptop.wait_for_function(  # the laptop has read the teacher's new step (its banner says so) ...
        "() => document.querySelector('.st-key-live_banner')?.innerText.includes('step 3/6')", timeout=FOLLOW_MS)
    assert _page_key(laptop) == "split"                                  # ... and did not follow
    assert laptop.locator(".st-key-live_back").count() == 1
    laptop.screenshot(path=str(shots / "live-exploring-1280-en.png"), full_page=True)
    _click(laptop, ".st-key-live_back")
    _wait_following(laptop, "concat", hd="8", causal="1")
    assert laptop.locator(".st-key-live_explore").count() == 1
    _wait_metric(teacher, "Following", "2 of 2")
    teacher.screenshot(path=str(shots / "live-presenter-following-1280-en.png"), full_page=True)
    phone.screenshot(path=str(shots / f"live-student-concat-{phone_tag}.png"), full_page=True)
    for ctx, page, _ in students:
        assert page.locator('[data-testid="stException"]').count() == 0
        ctx.close()
    teacher_ctx.close()


def test_a_second_presenter_window_is_told_at_once_and_takes_over(browser, live_server, shots):
    """Two presenter windows: the one that did not move learns it from its own once-a-second clock (no click),
    publishes nothing until "take over", and after it the other window is told in turn."""
    from playwright.sync_api import expect

    from harness.server import wait_ready
    from mha_core.classroom.storage import Storage
    from mha_core.lesson.store import read_live

    base, db_url = live_server
    first_ctx = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="en-US")
    first = first_ctx.new_page()
    teacher_opens_a_class(first, f"{base}/classroom", PASSWORD)
    _click(first, ".st-key-live_start")
    first.locator(".st-key-live_bar").wait_for(timeout=FOLLOW_MS)
    second_ctx = browser.new_context(viewport={"width": 390, "height": 900}, locale="zh-CN")
    second = second_ctx.new_page()
    second.goto(f"{base}/classroom")
    wait_ready(second)
    second.locator(".st-key-classroom_role button").nth(1).click()
    wait_ready(second)
    second.locator(".st-key-classroom_pw_in input").fill(PASSWORD)
    second.locator('[data-testid="stFormSubmitButton"] button').click()
    wait_ready(second)
    _click(second, ".st-key-live_resume")                       # the newest class: this one
    second.locator(".st-key-live_bar").wait_for(timeout=FOLLOW_MS)
    _click(first, ".st-key-live_next")
    second.locator(".st-key-live_take_over").wait_for(timeout=FOLLOW_MS)   # told without touching it
    # the bar's Next is drawn disabled later in the same run as "take over": wait for it, not for the first delta
    expect(second.locator(".st-key-live_next button:visible").first).to_be_disabled(timeout=FOLLOW_MS)
    second.screenshot(path=str(shots / "live-other-window-390-zh.png"), full_page=True)
    second.locator(".st-key-live_take_over button:visible").first.click()  # (the page keeps a hidden copy)
    wait_ready(second)
    _click(second, ".st-key-live_next")
    first.locator(".st-key-live_take_over").wait_for(timeout=FOLLOW_MS)    # now the first window is told
    first.screenshot(path=str(shots / "live-other-window-1280-en.png"), full_page=True)
    store = Storage.open(db_url)
    try:
        (info, *_) = store.list_classes()                        # newest first
        assert read_live(store, info.id)[1].step == 2
    finally:
        store.dispose()
    for page in (first, second):
        assert page.locator('[data-testid="stException"]').count() == 0
    first_ctx.close()
    second_ctx.close()

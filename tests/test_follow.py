"""The follower's next move and the presenter's next state as pure functions (mha_core.lesson.follow, .presenter):
every case the follow poll meets, without Streamlit (the AppTest tests in test_live_page check the wiring)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mha_core.lesson import LiveState, Plan, Step, VoteState, default_plan
from mha_core.lesson.follow import ACK_GRACE_S, HEARTBEAT_S, MAX_ASK, MAX_REASK, Follower, Move, poll
from mha_core.lesson.presenter import Lesson, Presenter, moved_step, step_of, step_state, synced

CLASS = 7
SETTINGS = (("h", 4), ("sentence", "the cat sat"))
STATE = LiveState(step=2, page="split", settings=SETTINGS, step_started_at=100.0, lesson_started_at=50.0)
NOW = 1000.0


def live_poll(f: Follower, version: int = 3, state: LiveState | None = STATE, page: str = "split",
              acked: str | None = None, now: float = NOW, live_now: bool = True):
    """One poll of the live fragment (or, with ``f.full_run``, the poll inside a full run)."""
    return poll(f, CLASS, version, state, page, acked, now, live_now)


def drawn_to_the_end(f: Follower, now: float = NOW) -> tuple[Follower, int | None]:
    """A full run: it begins, its poll copies, the page runs to its end."""
    d = live_poll(f.run_begins(now - 0.5), now=now - 0.4)
    return d.follower.run_framed().bannered().drawn(now)


def test_a_new_version_asks_for_a_full_run_that_copies_the_teachers_settings_and_page():
    f = Follower(class_id=CLASS, version=2, state=STATE, applied=2, banner_version=2)
    d = live_poll(f, version=3, acked="2")
    assert d.move is Move.REDRAW and d.follower.asked == (3, 1) and d.follower.version == 3
    d = live_poll(d.follower.run_begins(NOW), page="overview")          # the full run the redraw asked for
    assert d.move is Move.COPY and d.settings == SETTINGS and d.page == "split" and d.follower.pending == 3
    f, version = d.follower.run_framed().drawn(NOW + 0.4)
    assert version == 3 and f.applied == 3 and f.pending is None and f.run_s == pytest.approx(0.4)


def test_every_full_run_of_a_follower_copies_the_teachers_values_even_of_a_version_it_drew():
    f, _ = drawn_to_the_end(Follower())
    d = live_poll(f.run_begins(NOW + 5), acked="3")
    assert d.move is Move.COPY and d.settings == SETTINGS and d.page is None


def test_a_drawn_version_its_browser_confirms_is_left_alone():
    f, _ = drawn_to_the_end(Follower())
    assert live_poll(f, acked="3", now=NOW + 60).move is Move.WAIT


def test_a_following_student_on_another_page_is_brought_back_without_a_redraw():
    f, _ = drawn_to_the_end(Follower())
    d = live_poll(f, acked="3", page="glossary")
    assert d.move is Move.GO and d.page == "split"


def test_an_unconfirmed_version_is_drawn_again_after_the_grace_and_at_most_max_reask_times():
    f, _ = drawn_to_the_end(Follower())
    assert live_poll(f, now=NOW + ACK_GRACE_S / 2).move is Move.WAIT  # its browser may still say so
    reasks = []
    for i in range(MAX_REASK + 2):
        d = live_poll(f, now=NOW + ACK_GRACE_S + i)
        reasks.append(d.move)
        f, _ = drawn_to_the_end(d.follower, now=NOW + ACK_GRACE_S + i + 0.1) if d.move is Move.REASK else (
            d.follower, None)
        f = replace(f, applied_at=NOW)  # each redraw ended long ago: past the grace again
    assert reasks == [Move.REASK] * MAX_REASK + [Move.WAIT] * 2
    assert f.reasked == (3, MAX_REASK)


def test_a_page_that_never_finishes_is_asked_for_at_most_max_ask_times_per_version():
    f = Follower()
    moves = []
    for i in range(MAX_ASK + 3):
        d = live_poll(f, now=NOW + i)
        moves.append(d.move)
        f = d.follower
        if d.move is Move.REDRAW:  # the full run draws the banner, then stops on the way: nothing is applied
            f = live_poll(f.run_begins(NOW + i)).follower.run_framed().bannered()
    assert moves == [Move.REDRAW] * MAX_ASK + [Move.WAIT] * 3
    assert live_poll(f, version=4).move is Move.REDRAW  # a new version is asked for again


def test_an_exploring_student_copies_nothing_and_refreshes_once_for_the_banners_new_step():
    f, _ = drawn_to_the_end(Follower())
    f = f.explore()
    assert live_poll(f, acked="3").move is Move.REFRESH   # drawn following: the predictions are its own again
    d = live_poll(f.run_begins(NOW))
    assert d.move is Move.WAIT and d.follower.pending is None and d.settings == ()  # its full runs copy nothing
    f = d.follower.run_framed().bannered()
    assert live_poll(f, acked="3", page="glossary").move is Move.WAIT        # no page switch, no settings
    newer = replace(STATE, step=3, page="attend")
    d = live_poll(f, version=4, state=newer, page="glossary")
    assert d.move is Move.REFRESH and d.page is None                         # the banner shows the new step


def test_back_to_the_teacher_draws_the_teachers_state_at_once_even_with_no_new_version():
    f, _ = drawn_to_the_end(Follower())
    f = f.explore().back()
    assert f.following and live_poll(f, acked="3").move is Move.REDRAW


def test_the_heartbeat_is_sent_at_most_every_few_seconds_and_at_once_after_explore_or_back():
    f = live_poll(Follower(), acked="3").follower.beaten(NOW)
    assert not live_poll(f, now=NOW + HEARTBEAT_S / 2).beat
    assert live_poll(f, now=NOW + HEARTBEAT_S).beat
    assert live_poll(f.explore(), now=NOW + 1).beat and live_poll(f.back(), now=NOW + 1).beat


def test_a_following_students_full_run_sends_no_heartbeat_its_next_poll_does():
    """The full run holds the class's turn: a write there, 60 times per move, kept the class waiting (issue 26)."""
    f = live_poll(Follower(), acked="3").follower.beaten(NOW)
    later = NOW + 2 * HEARTBEAT_S
    d = live_poll(f.run_begins(later), now=later)
    assert d.move is Move.COPY and not d.beat
    assert live_poll(d.follower.run_framed(), now=later + 1).beat


def test_the_polls_pace_keeps_every_following_student_in_the_teachers_count():
    """Polls every FOLLOW_POLL_S (6 s: each is a fragment run the class's redraws wait for, issue 26) still beat at
    every poll, a student whose polls run is never taken for silent, and one whose poll's timer was lost is woken
    and beats again before the presenter's count of who is here (classroom PRESENT_S) lets it go."""
    from mha_core.classroom.live_lesson import PRESENT_S
    from mha_core.ui.live.follow import FOLLOW_POLL_S
    from mha_core.ui.live.wake import SILENT_S

    assert HEARTBEAT_S <= FOLLOW_POLL_S                          # every poll beats
    assert 2 * FOLLOW_POLL_S < SILENT_S                          # two polls' jitter is not silence
    assert SILENT_S + 2.0 + FOLLOW_POLL_S < PRESENT_S            # woken (a run of up to 2 s), its next poll beats


def test_the_class_going_live_or_ending_switches_the_polls_pace():
    d = live_poll(Follower(), live_now=False)
    assert d.move is Move.PACE and d.follower.live(CLASS) == STATE
    ended = live_poll(Follower(following=False), state=None, live_now=True)
    assert ended.move is Move.PACE and ended.follower.following          # a new lesson starts followed
    assert ended.follower.live(CLASS) is None
    assert live_poll(Follower(), state=None, live_now=False).move is Move.WAIT  # still no lesson


def test_a_follower_knows_only_its_own_classs_state():
    f = live_poll(Follower()).follower
    assert f.live(CLASS) == STATE and f.live(CLASS + 1) is None


def test_a_page_drawn_without_a_copy_acknowledges_nothing():
    assert Follower().drawn(NOW) == (Follower(), None)


def _plan() -> Plan:
    return Plan((Step("overview", 3), Step("split", 5), Step("attend", 5), Step("split", 2), Step("quiz", 4,
                                                                                                  ("d-head",))))


def test_the_presenters_step_carries_the_lesson_start_and_clears_the_vote():
    first = step_state(_plan(), 0, None, SETTINGS, NOW)
    assert (first.page, first.step_started_at, first.lesson_started_at, first.vote) == ("overview", NOW, NOW, None)
    later = step_state(_plan(), 4, replace(first, vote=VoteState("x", 1, "open", 0, 2)), (), NOW + 60)
    assert later.lesson_started_at == NOW and later.vote is None and later.questions == ("d-head",)
    assert [moved_step(_plan(), first, d) for d in (-1, 1, 9)] == [0, 1, 4]
    # a Next drawn at step 0 moves from step 0 only: run again once the class is at 1, it moves no further
    second = step_state(_plan(), moved_step(_plan(), first, 1, drawn_at=0), first, SETTINGS, NOW)
    assert moved_step(_plan(), second, 1, drawn_at=0) == 1 and moved_step(_plan(), second, 1, drawn_at=1) == 2


def test_navigating_by_the_sidebar_finds_the_step_that_shows_the_page():
    plan = _plan()
    assert step_of(plan, "split", 2) == 3 and step_of(plan, "split", 4) == 1 and step_of(plan, "glossary", 2) == 2
    last = step_state(plan, 2, None, SETTINGS, NOW)
    assert synced(plan, last, "attend", SETTINGS, NOW + 9) is last                   # nothing changed
    assert synced(plan, last, "classroom", SETTINGS, NOW + 9) is last                # not a lesson page
    moved = synced(plan, replace(last, vote=VoteState("x", 1, "open", 0, 2)), "quiz", SETTINGS, NOW + 9)
    assert (moved.step, moved.page, moved.vote, moved.questions, moved.step_started_at) == (
        4, "quiz", None, ("d-head",), NOW + 9)
    off_plan = synced(plan, last, "glossary", SETTINGS, NOW + 9)                     # no step shows it
    assert (off_plan.step, off_plan.page, off_plan.questions, off_plan.step_started_at) == (2, "glossary", (), NOW)
    assert synced(plan, last, "attend", (("h", 2),), NOW + 9).settings == (("h", 2),)


def test_a_presenter_outrun_by_another_window_shows_the_class_and_takes_over_explicitly():
    p = Presenter.begin(Lesson(CLASS, "ABC123"), default_plan(), 1, STATE)
    assert p.goto == "split" and not p.conflict and p.lesson == Lesson(CLASS, "ABC123")
    theirs = replace(STATE, step=4, page="why")
    out = p.going(None).outrun(5, theirs)
    assert (out.version, out.state, out.goto, out.conflict) == (5, theirs, "why", True)
    back = out.going(None).taken_over(6, theirs)
    assert (back.version, back.goto, back.conflict) == (6, "why", False)


def test_a_presenter_knows_its_own_write_whose_record_was_lost_from_another_windows():
    p = Presenter.begin(Lesson(CLASS, "ABC123"), default_plan(), 4, STATE)
    mine = replace(STATE, settings=(("h", 8),))
    sending = p.publishing(mine)
    assert sending.own(5, mine)                                   # the next version, with what it was sending
    assert not sending.own(5, replace(mine, step=3))              # another window's state
    assert not sending.own(6, mine) and not sending.own(4, mine)  # not the version after this window's
    assert not p.own(5, mine)                                     # sending nothing: any newer version is theirs
    assert sending.published(5, mine).sending is None

"""The presenter's side of a class vote, by Peer Instruction (mha_core.lesson.pi): open with an optional countdown,
close round 1 without showing it, the discussion prompt, vote again, both rounds side by side with the moves, the
answer, the follow-up and its share. The coach is drawn here only, in a closed popover of the presenter's session:
it is never in the published state, so no phone and no follower ever gets it."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

import streamlit as st

from mha_core.charts import votes as vote_charts
from mha_core.errors import LabError
from mha_core.lesson import (
    CONCEPTEST,
    FOLLOW_UP_ROUND,
    Move,
    VoteState,
    coach,
    flips,
    follow_up_share,
    moves,
    shift,
    tally,
)
from mha_core.lesson import pi as peer
from mha_core.lesson.pi import COUNTDOWNS
from mha_core.ui import render
from mha_core.ui.class_services import storage
from mha_core.ui.i18n import bound_t, t
from mha_core.ui.live.keys import (
    AGAIN_KEY,
    CLOSE_KEY,
    COACH_KEY,
    COUNTDOWN_KEY,
    COUNTDOWN_S_KEY,
    FLASH_KEY,
    FOLLOW_UP_KEY,
    OPEN_KEY,
    REVEAL_KEY,
    SHOW_KEY,
)
from mha_core.ui.live.pi import countdown, follow_up_for, follow_up_question, vote_kind
from mha_core.ui.live.presenter import COUNT_POLL_S
from mha_core.ui.live.publish import publish
from mha_core.ui.live.session import Lesson, current_page, flash, presenter, published

_BUTTONS = {Move.CLOSE: (CLOSE_KEY, ":material/lock:"), Move.SHOW: (SHOW_KEY, ":material/bar_chart:"),
            Move.REVOTE: (AGAIN_KEY, ":material/forum:"), Move.REVEAL: (REVEAL_KEY, ":material/visibility:"),
            Move.FOLLOW_UP: (FOLLOW_UP_KEY, ":material/quiz:")}


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def on_vote(vote: VoteState | None) -> None:
    """Publish the vote as the presenter moved it."""
    last = published()
    if last is None:
        return
    try:
        publish(replace(last, vote=vote))
    except LabError as err:
        flash(err)


def _seconds() -> int:
    return int(st.session_state.get(COUNTDOWN_S_KEY) or 0)


def _on_countdown() -> None:
    st.session_state[COUNTDOWN_S_KEY] = int(st.session_state.get(COUNTDOWN_KEY) or 0)


def _on_open(key: str, answer: int, n_options: int) -> None:
    left = _seconds()
    on_vote(VoteState(key, 1, "open", answer, n_options, vote_kind(),
                      time.time() + left if left else None))


def _on_move(vote: VoteState, move: Move) -> None:
    try:
        on_vote(peer.moved(vote, move, time.time(), _seconds(), follow_up_for(vote.key)))
    except ValueError:  # a stale button (another window moved the vote): nothing to do
        return


def _countdown_choice() -> None:
    """The countdown for the round the next button opens (its value kept in the session, not only the widget)."""
    st.session_state[COUNTDOWN_KEY] = _seconds()
    bound = bound_t()  # the session's language, also when AppTest formats an option outside a run
    st.segmented_control(t("pi.countdown_label"), (0, *COUNTDOWNS), key=COUNTDOWN_KEY, on_change=_on_countdown,
                         format_func=lambda s: bound("pi.countdown_seconds", s=s) if s else bound("pi.countdown_none"))


def teacher_vote(key: str, options: tuple[str, ...], answer: int, explanation: str) -> None:
    """The presenter's controls and figures for the vote on this page's prediction."""
    last = published()
    vote = last.vote
    if vote is not None and vote.key != key:
        if vote.key.startswith(f"{current_page()}."):  # the settings changed the question: its vote ends
            on_vote(None)
        vote = None
    follow = follow_up_question(vote) if vote is not None and vote.round == FOLLOW_UP_ROUND else None
    if follow is not None:
        st.markdown(f"**{t('pi.follow_up_title')}**\n\n{follow.prompt}")
        options, answer, explanation = tuple(o.text for o in follow.options), vote.answer, follow.explanation
    st.markdown("\n".join(f"{i + 1}. {o}" for i, o in enumerate(options)))
    render.show_flash(FLASH_KEY)
    if vote is None:
        _countdown_choice()
        st.button(t("live.vote_open"), key=OPEN_KEY, type="primary", icon=":material/how_to_vote:",
                  on_click=_on_open, args=(key, answer, len(options)))
        return
    if vote.phase == "open":
        alone = vote.round != 2  # round 1 and the follow-up are answered alone; round 2 after the discussion
        st.info(t("pi.alone") if alone else t("pi.revote"), icon=":material/person:" if alone else ":material/forum:")
        countdown(vote)
        _vote_count(presenter().lesson, key, vote.round)
    else:
        try:
            rows = storage().votes(presenter().class_id, key)
        except LabError as err:
            render.show_error(err)
            return
        _figures(rows, vote, options, answer)
        if vote.phase == "revealed":
            st.success(t("live.vote_answer", answer=options[answer]), icon=":material/check_circle:")
            st.markdown(explanation)
    _move_buttons(vote)


def _move_buttons(vote: VoteState) -> None:
    offered = moves(vote)
    if not offered:
        return
    if any(m in (Move.REVOTE, Move.FOLLOW_UP) for m in offered):
        _countdown_choice()
    row = st.container(horizontal=True, wrap=True)  # whole labels, wrapped onto lines on a phone
    for i, move in enumerate(offered):
        key, icon = _BUTTONS[move]
        row.button(t(f"pi.move_{move.value}"), key=key, type="primary" if i == 0 else "secondary", icon=icon,
                   width="content", on_click=_on_move, args=(vote, move))


def _figures(rows: Sequence, vote: VoteState, options: tuple[str, ...], answer: int) -> None:
    """What a closed round shows: nothing of round 1 by default (the discussion prompt instead, and the coach for
    the presenter), round 1's counts when shown, both rounds with the moves, the follow-up next to them."""
    key = vote.key
    if vote.round == FOLLOW_UP_ROUND:
        n, share = follow_up_share(rows, key)
        _rounds_row(rows, key, share, n)
        return
    counts = tally(rows, key, vote.round, len(options))
    st.caption(t("live.vote_round", round=vote.round, n=sum(counts)))
    if vote.round == 1 and vote.phase == "closed":
        st.info(f"**{t('pi.discuss')}**", icon=":material/forum:")
        st.caption(f"{t('pi.discuss_lead')} {t('pi.hidden_source')}")
    elif vote.round == 1:
        render.chart(vote_charts.histogram, counts, options,
                     answer=answer if vote.phase == "revealed" else None, count_title=t("live.votes_axis"))
    else:
        _both_rounds(rows, key, options, answer, vote.phase == "revealed")
    if vote.kind == CONCEPTEST and vote.round == 1:
        _coach(shift(rows, key, len(options), answer).right_before)


def _coach(share: float | None) -> None:
    """The coach, for the presenter only: a closed popover, opened by the teacher (a mirrored projector shows only
    its button)."""
    advice = coach(share)
    with st.popover(t("pi.coach_title"), icon=":material/psychology_alt:", key=COACH_KEY):
        if advice is None:
            st.write(t("pi.coach_none"))
        else:
            st.write(t(f"pi.coach_{advice.value}", share=f"{peer.coach_percent(share)}%"))
        st.caption(t("pi.coach_source"))


def _both_rounds(rows: Sequence, key: str, options: tuple[str, ...], answer: int, revealed: bool) -> None:
    """After the vote again: both rounds side by side and, with the answer, the share right and who moved."""
    sh = shift(rows, key, len(options), answer)
    render.chart(vote_charts.shift_bars, sh.before, sh.after, options,
                 round_titles=(t("live.round_1"), t("live.round_2")), count_title=t("live.votes_axis"))
    if revealed:
        to_right, to_wrong = flips(sh, answer)
        cols = st.columns(3)
        cols[0].metric(t("live.right_share"), f"{_share(sh.right_before)} → {_share(sh.right_after)}")
        cols[1].metric(t("pi.wrong_to_right"), to_right)
        cols[2].metric(t("pi.right_to_wrong"), to_wrong)
    numbered = [f"{i + 1}" for i in range(len(options))]
    columns: dict[str, list] = {t("live.moved_from"): numbered}
    for j, name in enumerate(numbered):
        columns[t("live.moved_to", option=name)] = [sh.moved[i][j] for i in range(len(options))]
    st.caption(t("live.moved_caption"))
    render.table(columns, decimals=0)


def _rounds_row(rows: Sequence, key: str, share: float | None, n: int) -> None:
    """The follow-up's share correct next to the two rounds' (Smith et al. 2009)."""
    def right(round_: int) -> str:
        mine = {r.student_id: r.correct for r in rows if r.vote_key == key and r.round == round_}
        return _share(sum(mine.values()) / len(mine) if mine else None)

    cols = st.columns(3)
    cols[0].metric(t("live.round_1"), right(1))
    cols[1].metric(t("live.round_2"), right(2))
    cols[2].metric(t("pi.follow_up_label"), _share(share))
    st.caption(f"{t('pi.follow_up_share', share=_share(share), n=n)} {t('pi.follow_up_source')}")


@st.fragment(run_every=COUNT_POLL_S)
def _vote_count(lesson: Lesson, key: str, round_: int) -> None:
    """"12 of 30 voted", live."""
    try:
        voted = sum(1 for r in storage().votes(lesson.class_id, key) if r.round == round_)
        _, present_n = storage().presence(lesson.class_id)
    except LabError as err:
        render.show_error(err)
        return
    st.metric(t("live.voted_label"), t("live.voted", x=voted, y=max(present_n, voted)))

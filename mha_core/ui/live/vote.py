"""The class vote that replaces "predict first" while a class is live (Peer Instruction: vote, discuss, vote again,
reveal): the presenter's controls and figures, the student's ballot, and votes the database did not take."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import streamlit as st

from mha_core.charts import votes as vote_charts
from mha_core.classroom import Member
from mha_core.classroom.storage import DatabaseError
from mha_core.errors import LabError
from mha_core.lesson import VoteState, ballot, shift, tally
from mha_core.quiz.store import Unsent
from mha_core.ui import render
from mha_core.ui.classdb import storage
from mha_core.ui.i18n import t
from mha_core.ui.live.keys import (
    AGAIN_KEY,
    CLOSE_KEY,
    FLASH_KEY,
    OPEN_KEY,
    RESENT_KEY,
    REVEAL_KEY,
    SEND_KEY,
    VOTE_FAILED_KEY,
    VOTE_FLASH_KEY,
    VOTED_KEY,
    VOTES_READ_KEY,
    choice_key,
)
from mha_core.ui.live.presenter import COUNT_POLL_S
from mha_core.ui.live.publish import publish
from mha_core.ui.live.session import (
    Lesson,
    active_vote_role,
    current_page,
    flash,
    live_seen,
    member,
    presenter,
    published,
)

# The process's votes the database did not take, by student id (bounded, thread-safe: mha_core.quiz.store.Unsent),
# so that a reload (a new session; the address keeps the student id) finds the choice and sends it again.
UNSENT = Unsent()


def _unsent_key(m: Member, vote: VoteState) -> str:
    return f"vote:{m.class_id}:{vote.key}:{vote.round}"


def on_vote(vote: VoteState | None) -> None:
    """The presenter moves the vote: open, close and show the histogram, vote again, reveal."""
    last = published()
    if last is None:
        return
    try:
        publish(replace(last, vote=vote))
    except LabError as err:
        flash(err)


def vote_box(key: str, prompt: str, options: Sequence[str], answer: int, explanation: str) -> None:
    """The class vote on this prediction: the presenter's controls and figures, or the student's ballot."""
    with st.container(border=True, key=f"live_vote_{key.replace('.', '_')}"):
        st.markdown(f"**{t('live.vote_title')}** {prompt}")
        if active_vote_role() == "teacher":
            _teacher_vote(key, tuple(options), answer, explanation)
        else:
            _student_vote(key, tuple(options), answer, explanation)


def _teacher_vote(key: str, options: tuple[str, ...], answer: int, explanation: str) -> None:
    last = published()
    vote = last.vote
    if vote is not None and vote.key != key:
        if vote.key.startswith(f"{current_page()}."):  # the settings changed the question: its vote ends
            try:
                publish(replace(last, vote=None))
            except LabError as err:
                render.show_error(err)
        vote = None
    st.markdown("\n".join(f"{i + 1}. {o}" for i, o in enumerate(options)))
    render.show_flash(FLASH_KEY)
    if vote is None:
        st.button(t("live.vote_open"), key=OPEN_KEY, type="primary", icon=":material/how_to_vote:",
                  on_click=on_vote, args=(VoteState(key, 1, "open", answer, len(options)),))
        return
    if vote.phase == "open":
        _vote_count(presenter().lesson, key, vote.round)
        st.button(t("live.vote_close"), key=CLOSE_KEY, type="primary", icon=":material/bar_chart:",
                  on_click=on_vote, args=(replace(vote, phase="histogram"),))
        return
    try:
        rows = storage().votes(presenter().class_id, key)
    except LabError as err:
        render.show_error(err)
        return
    revealed = vote.phase == "revealed"
    counts = tally(rows, key, vote.round, len(options))
    st.caption(t("live.vote_round", round=vote.round, n=sum(counts)))
    if vote.round == 1:
        render.chart(vote_charts.histogram, counts, options, answer=answer if revealed else None,
                     count_title=t("live.votes_axis"))
    else:
        _moved(rows, key, options, answer, revealed)
    cols = st.columns(2)
    if vote.round == 1 and not revealed:
        cols[0].button(t("live.vote_again"), key=AGAIN_KEY, icon=":material/forum:", width="stretch",
                       on_click=on_vote, args=(replace(vote, round=2, phase="open"),),
                       help=t("live.vote_again_help"))
    if not revealed:
        cols[1].button(t("live.vote_reveal"), key=REVEAL_KEY, type="primary", icon=":material/visibility:",
                       width="stretch", on_click=on_vote, args=(replace(vote, phase="revealed"),))
        return
    st.success(t("live.vote_answer", answer=options[answer]), icon=":material/check_circle:")
    st.markdown(explanation)


def _moved(rows: Sequence, key: str, options: tuple[str, ...], answer: int, revealed: bool) -> None:
    """After the vote again: both rounds side by side, the share right before → after, and who moved where."""
    sh = shift(rows, key, len(options), answer)
    render.chart(vote_charts.shift_bars, sh.before, sh.after, options,
                 round_titles=(t("live.round_1"), t("live.round_2")), count_title=t("live.votes_axis"))
    if revealed:
        share = "–" if sh.right_before is None else f"{sh.right_before:.0%}"
        after = "–" if sh.right_after is None else f"{sh.right_after:.0%}"
        st.metric(t("live.right_share"), f"{share} → {after}")
    numbered = [f"{i + 1}" for i in range(len(options))]
    columns: dict[str, list] = {t("live.moved_from"): numbered}
    for j, name in enumerate(numbered):
        columns[t("live.moved_to", option=name)] = [sh.moved[i][j] for i in range(len(options))]
    st.caption(t("live.moved_caption"))
    render.table(columns, decimals=0)


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


def _on_send(m: Member, vote: VoteState) -> None:
    """Send the student's vote; on trouble keep the choice and say why (it can be sent again)."""
    ss = st.session_state
    ck = choice_key(vote.key, vote.round)
    if ss.get(ck) is None:  # the button is disabled until a choice is made
        return
    try:
        choice = ballot(ss[ck], vote.n_options)  # a forged websocket value: a clear message, nothing stored
        storage().cast_vote(m, vote.key, vote.round, choice, choice == vote.answer)
    except LabError as err:  # DatabaseError included: nothing stored, the choice stays to send again
        render.flash(VOTE_FLASH_KEY, err)
        ss[VOTE_FAILED_KEY] = isinstance(err, DatabaseError)
        if isinstance(err, DatabaseError):
            UNSENT.keep(m.key, _unsent_key(m, vote), choice)  # a reload finds it (and sends it again)
        else:
            UNSENT.sent(m.key, _unsent_key(m, vote))  # refused: never to be sent
        if err.key == "vote_choice_bad":
            ss[ck] = None  # not an option: the ballot is empty again
        return
    UNSENT.sent(m.key, _unsent_key(m, vote))
    ss[VOTE_FAILED_KEY] = False
    ss.setdefault(VOTED_KEY, {})[(vote.key, vote.round)] = choice


def _stored_votes(m: Member | None, key: str) -> dict:
    """This student's votes {(vote key, round): choice}: the session's, with the database's for this vote read
    once per session (a reload or a restart starts a new session, and the vote is stored)."""
    ss = st.session_state
    voted: dict = ss.setdefault(VOTED_KEY, {})
    if m is None:
        return voted
    read = ss.get(VOTES_READ_KEY)
    if not read or read[0] != m.class_id:
        read = (m.class_id, frozenset())
    if key in read[1]:
        return voted
    try:
        rows = storage().votes(m.class_id, key, m.student_id)
    except LabError:  # no database now: the next run reads again
        return voted
    for r in rows:
        voted.setdefault((r.vote_key, r.round), r.choice)
    ss[VOTES_READ_KEY] = (m.class_id, read[1] | {key})
    return voted


def _resend_unsent(m: Member, vote: VoteState) -> bool:
    """A vote this process keeps unsent for the student (the database failed, then perhaps a reload) is on the
    ballot and sent again, once per session. True while it is still unsent (the ballot says so)."""
    ss = st.session_state
    ukey, ck = _unsent_key(m, vote), choice_key(vote.key, vote.round)
    kept = UNSENT.of(m.key).get(ukey)
    if kept is None:
        return False
    if ss.get(ck) is None:  # before the radio is drawn in this run
        ss[ck] = kept
    resent: set = ss.setdefault(RESENT_KEY, set())
    if ukey not in resent:
        resent.add(ukey)
        _on_send(m, vote)
    unsent = UNSENT.of(m.key).get(ukey) is not None
    if unsent:
        ss[VOTE_FAILED_KEY] = True
    return unsent


def _student_vote(key: str, options: tuple[str, ...], answer: int, explanation: str) -> None:
    ss = st.session_state
    state, m = live_seen(), member()
    vote = state.vote if state is not None and state.vote is not None and state.vote.key == key else None
    voted: dict = _stored_votes(m, key) if vote is not None else ss.setdefault(VOTED_KEY, {})
    if vote is None:
        st.radio(t("common.predict_pick"), range(len(options)), index=None, key=choice_key(key, 0),
                 format_func=list(options).__getitem__, label_visibility="collapsed", disabled=True)
        st.info(t("live.vote_wait_open"), icon=":material/hourglass_top:")
        return
    ck = choice_key(key, vote.round)
    mine = voted.get((key, vote.round))
    if ck not in ss and mine is not None:
        ss[ck] = mine
    is_open = vote.phase == "open"
    unsent = is_open and m is not None and mine is None and _resend_unsent(m, vote)
    mine = voted.get((key, vote.round))
    st.radio(t("common.predict_pick"), range(len(options)), index=None, key=ck,
             format_func=list(options).__getitem__, label_visibility="collapsed", disabled=not is_open)
    if vote.round == 2 and is_open:
        st.caption(t("live.vote_round_2"))
    if is_open:
        failed = bool(ss.get(VOTE_FAILED_KEY))
        label = t("live.vote_send_again") if failed else t("live.vote_send")
        st.button(label, key=SEND_KEY, type="primary", icon=":material/send:", on_click=_on_send,
                  args=(m, vote), disabled=m is None or ss.get(ck) is None)
        render.show_flash(VOTE_FLASH_KEY)
        if unsent:
            st.warning(t("live.vote_unsent"), icon=":material/cloud_off:")
        if mine is not None and not failed:
            st.success(t("live.vote_in"), icon=":material/how_to_reg:")
        return
    if vote.phase != "revealed":
        st.info(t("live.vote_closed_wait") if mine is not None else t("live.vote_missed"), icon=":material/cast:")
        return
    given = voted.get((key, 2), voted.get((key, 1)))
    if given is None:
        st.info(t("live.vote_none", answer=options[answer]), icon=":material/lightbulb:")
    elif given == answer:
        st.success(t("common.predict_right", answer=options[answer]), icon=":material/check_circle:")
    else:
        st.warning(t("common.predict_wrong", answer=options[answer]), icon=":material/lightbulb:")
    st.markdown(explanation)

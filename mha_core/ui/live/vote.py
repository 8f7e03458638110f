"""The class vote that replaces "predict first" while a class is live (Peer Instruction: vote, discuss, vote again,
reveal): the student's ballot (round 1 alone, the discussion prompt, the vote again, the follow-up) and votes the
database did not take; the presenter's side is ``cycle``."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import streamlit as st

from mha_core.classroom import DatabaseError, Member
from mha_core.errors import LabError
from mha_core.lesson import CONCEPTEST, FOLLOW_UP_ROUND, VoteState, ballot
from mha_core.quiz.progress_store import Unsent
from mha_core.ui import render, shared_body
from mha_core.ui.class_services import storage
from mha_core.ui.i18n import t
from mha_core.ui.live.cycle import teacher_vote
from mha_core.ui.live.keys import (
    RESENT_KEY,
    SEND_KEY,
    VOTE_FAILED_KEY,
    VOTE_FLASH_KEY,
    VOTED_KEY,
    VOTES_READ_KEY,
    choice_key,
)
from mha_core.ui.live.page import voting
from mha_core.ui.live.pi import countdown, follow_up_question
from mha_core.ui.live.session import active_vote_role, fragment_run, live_seen, member

# The process's votes the database did not take, by student id (bounded, thread-safe:
# mha_core.quiz.progress_store.Unsent),
# so that a reload (a new session; the address keeps the student id) finds the choice and sends it again.
UNSENT = Unsent()


def _unsent_key(m: Member, vote: VoteState) -> str:
    return f"vote:{m.class_id}:{vote.key}:{vote.round}"


def vote_box(key: str, prompt: str, options: Sequence[str], answer: int, explanation: str) -> None:
    """The class vote on this prediction: the presenter's controls and figures, or the student's ballot (a
    student's own part of a page shared by the class: ``shared_body.own``). Before the teacher opens this vote the
    ballot is the same for every student (and the live state, which says so, is part of what a shared page
    matches): it is drawn with the page, and shared with it."""
    if active_vote_role() == "student" and _waiting(key):
        _vote_box(key, prompt, tuple(options), answer, explanation)
        return
    shared_body.own(_vote_box, key, prompt, tuple(options), answer, explanation)


def _vote_on(key: str) -> VoteState | None:
    """The class's vote on ``key`` as this session last read the live state (None: not opened yet, or another
    question's)."""
    state = live_seen()
    return state.vote if state is not None and state.vote is not None and state.vote.key == key else None


def _waiting(key: str) -> bool:
    """No vote on ``key`` is going on."""
    return _vote_on(key) is None


def _vote_box(key: str, prompt: str, options: tuple[str, ...], answer: int, explanation: str) -> None:
    """``vote_box``'s content."""
    with st.container(border=True, key=f"live_vote_{key.replace('.', '_')}"):
        st.markdown(f"**{t('live.vote_title')}** {prompt}")
        if active_vote_role() == "teacher":
            teacher_vote(key, tuple(options), answer, explanation)
        elif _waiting(key):
            _waiting_ballot(key, options)
        else:
            _student_vote(key, tuple(options), answer, explanation)


def _waiting_ballot(key: str, options: tuple[str, ...]) -> None:
    """The ballot before its vote opens: the question's options, not yet to be chosen (no fragment: nothing on it
    reruns; the full run the opening wakes draws the ballot)."""
    st.radio(t("common.predict_pick"), range(len(options)), index=None, key=choice_key(key, 0),
             format_func=list(options).__getitem__, label_visibility="collapsed", disabled=True)
    st.info(t("live.vote_wait_open"), icon=":material/hourglass_top:")


def _on_send(m: Member, vote: VoteState) -> None:
    """Send the student's vote; on trouble keep the choice and say why (it can be sent again)."""
    with voting():  # ahead of the class's next redraw, as the ballot's run that follows
        _send(m, vote)


def _send(m: Member, vote: VoteState) -> None:
    """``_on_send``'s work."""
    ss = st.session_state
    ck = choice_key(vote.key, vote.round)
    if ss.get(ck) is None:  # the button is never disabled: a redraw the browser missed must not lock a student out
        render.flash(VOTE_FLASH_KEY, LabError("vote_pick_first"))
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


@st.fragment
def _student_vote(key: str, options: tuple[str, ...], answer: int, explanation: str) -> None:
    """The student's ballot, a fragment: choosing and sending rerun only the ballot, not the page (in a class of 60,
    a full run waits its turn behind every classmate's redraw; tests/test_live_page.py, benchmarks/bench_live), and
    the ballot's own runs go ahead of the class's next redraw (``page.voting``)."""
    with voting() if fragment_run() else contextlib.nullcontext():
        _ballot(key, options, answer, explanation)


def _ballot(key: str, options: tuple[str, ...], answer: int, explanation: str) -> None:
    """The ballot's content: waiting for the vote, or the choice, "send", and what was sent."""
    ss = st.session_state
    m, vote = member(), _vote_on(key)
    if vote is None:  # closed by the teacher while this fragment ran on its own
        _waiting_ballot(key, options)
        return
    voted = _stored_votes(m, key)
    follow = follow_up_question(vote) if vote.round == FOLLOW_UP_ROUND else None
    if follow is not None:  # the follow-up: another question on the same idea, in this student's language
        st.markdown(f"**{t('pi.follow_up_title')}**\n\n{follow.prompt}")
        options, answer, explanation = tuple(o.text for o in follow.options), vote.answer, follow.explanation
    ck = choice_key(key, vote.round)
    mine = voted.get((key, vote.round))
    if ck not in ss and mine is not None:
        ss[ck] = mine
    is_open = vote.phase == "open"
    unsent = is_open and m is not None and mine is None and _resend_unsent(m, vote)
    mine = voted.get((key, vote.round))
    if is_open and vote.round in (1, FOLLOW_UP_ROUND):  # the follow-up too: alone, as Smith et al. 2009 asked it
        st.info(f"**{t('pi.alone')}**", icon=":material/person:")
    st.radio(t("common.predict_pick"), range(len(options)), index=None, key=ck,
             format_func=list(options).__getitem__, label_visibility="collapsed", disabled=not is_open)
    if vote.round == 2 and is_open:
        st.caption(t("live.vote_round_2"))
    if is_open:
        countdown(vote)
        failed = bool(ss.get(VOTE_FAILED_KEY))
        label = t("live.vote_send_again") if failed else t("live.vote_send")
        # Enabled before a choice too (an empty send says so): bench_live once saw a browser keep the button disabled
        # for 30 s after the server had redrawn it enabled, and the student could not vote.
        st.button(label, key=SEND_KEY, type="primary", icon=":material/send:", on_click=_on_send,
                  args=(m, vote), disabled=m is None)
        render.show_flash(VOTE_FLASH_KEY)
        if unsent:
            st.warning(t("live.vote_unsent"), icon=":material/cloud_off:")
        if mine is not None and not failed:
            st.success(t("live.vote_in"), icon=":material/how_to_reg:")
        return
    if vote.round == 1 and vote.phase == "closed" and vote.kind == CONCEPTEST:
        st.info(f"**{t('pi.discuss')}**", icon=":material/forum:")  # Mazur's prompt, on every phone
        return
    if vote.phase != "revealed":
        st.info(t("live.vote_closed_wait") if mine is not None else t("live.vote_missed"), icon=":material/cast:")
        return
    given = mine if vote.round == FOLLOW_UP_ROUND else voted.get((key, 2), voted.get((key, 1)))
    if given is None:
        st.info(t("live.vote_none", answer=options[answer]), icon=":material/lightbulb:")
    elif given == answer:
        st.success(t("common.predict_right", answer=options[answer]), icon=":material/check_circle:")
    else:
        st.warning(t("common.predict_wrong", answer=options[answer]), icon=":material/lightbulb:")
    st.markdown(explanation)

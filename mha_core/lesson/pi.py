"""Peer Instruction as Crouch & Mazur run it, without Streamlit: the presenter's moves through a vote, the coach
that reads round 1, the countdown, and the isomorphic follow-up.

A prediction (asked before the idea is taught) is one round: open, close, show the counts, reveal. A ConcepTest
(asked after) is the full cycle: round 1 alone, closed WITHOUT showing the counts (showing them sways the
discussion toward the plurality: Perez et al. 2010; Vickrey et al. 2015), discussion, round 2, both rounds side by
side with the moves, the explanation, then a follow-up that asks the same idea on another surface (Smith et al.
2009: 52 % → 68 % → 73 % on the isomorphic question).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from enum import StrEnum

from mha_core.lesson.live import ROUNDS, VoteState
from mha_core.lesson.plan import CONCEPTEST
from mha_core.lesson.votes import Shift, Vote

# The coach's thresholds on round 1's share correct (Crouch & Mazur 2001; Vickrey et al. 2015): below LOW, too few
# know it for a discussion to help; above HIGH, most already do.
LOW_SHARE = 0.35
HIGH_SHARE = 0.70
FOLLOW_UP_ROUND = ROUNDS[-1]
COUNTDOWNS: tuple[int, ...] = (30, 60, 90, 120)  # the presenter's countdown choices, in seconds (0: none)
# The follow-up of each ConcepTest page: a single-choice bank question on the same idea, another surface.
FOLLOW_UPS: dict[str, str] = {"concat": "wo-without", "why": "why-many-heads", "split": "head-output-shape",
                              "attend": "head-output-shape", "overview": "why-many-heads", "cross": "concat-shape"}


class Advice(StrEnum):
    """What the coach tells the presenter after round 1 (catalog ``live.coach_<value>``)."""

    REVISIT = "revisit"  # under LOW_SHARE: revisit the idea or give a hint, then vote again
    DISCUSS = "discuss"  # LOW_SHARE … HIGH_SHARE: discuss with a neighbour, then vote again
    EXPLAIN = "explain"  # over HIGH_SHARE: explain briefly and move on


def coach(share_right: float | None) -> Advice | None:
    """The advice from round 1's share correct (None: nobody voted, no advice). The bounds 35 % and 70 % themselves
    are "discuss": the middle band is closed, as Crouch & Mazur give it (35–70 %)."""
    if share_right is None:
        return None
    if share_right < LOW_SHARE:
        return Advice.REVISIT
    if share_right > HIGH_SHARE:
        return Advice.EXPLAIN
    return Advice.DISCUSS


def coach_percent(share: float) -> int:
    """Round 1's share as the whole percent the coach's sentence shows, never across its band's bound: 8 of 23
    right (34.8 %) reads 34 %, "under 35 %", not 35 %; 19 of 27 (70.4 %) reads 71 %, "over 70 %", not 70 %."""
    shown, advice = round(share * 100), coach(share)
    if advice == Advice.REVISIT:
        return min(shown, round(LOW_SHARE * 100) - 1)
    if advice == Advice.EXPLAIN:
        return max(shown, round(HIGH_SHARE * 100) + 1)
    return shown


class Move(StrEnum):
    """A presenter's move on the vote (catalog ``live.move_<value>``)."""

    CLOSE = "close"          # stop taking votes (round 1 of a ConcepTest: nothing shown)
    SHOW = "show"            # show the counts of round 1 anyway (not the default: it sways the discussion)
    REVOTE = "revote"        # after the discussion: round 2
    REVEAL = "reveal"        # the answer and why
    FOLLOW_UP = "follow_up"  # the isomorphic follow-up (round 3)


def moves(vote: VoteState) -> tuple[Move, ...]:
    """The presenter's moves from where the vote stands, the one by the book first."""
    full = vote.kind == CONCEPTEST
    if vote.phase == "open":
        return (Move.CLOSE,)
    if vote.round == FOLLOW_UP_ROUND or vote.phase == "revealed":
        return (Move.FOLLOW_UP,) if full and vote.round < FOLLOW_UP_ROUND else ()
    if vote.round == 1 and full:
        return (Move.REVOTE, Move.SHOW, Move.REVEAL) if vote.phase == "closed" else (Move.REVOTE, Move.REVEAL)
    return (Move.REVEAL,) if vote.phase == "histogram" else (Move.SHOW, Move.REVEAL)


def moved(vote: VoteState, move: Move, now: float, countdown_s: int = 0,
          follow_up: tuple[str, int, int] = ("", 0, 1)) -> VoteState:
    """The vote after ``move`` at ``now`` (epoch seconds); a move that opens a round starts a countdown of
    ``countdown_s`` seconds (0: none). ``follow_up`` is (bank question id, right option, options) for FOLLOW_UP.
    ValueError for a move ``moves`` does not offer (a stale button)."""
    if move not in moves(vote):
        raise ValueError(f"{move} is not a move from round {vote.round} {vote.phase}")
    deadline = now + countdown_s if countdown_s > 0 else None
    if move == Move.CLOSE:
        # round 1 of a full cycle closes unseen; round 2 shows both rounds; a prediction its counts; a follow-up
        # its share correct and answer
        phase = {1: "closed" if vote.kind == CONCEPTEST else "histogram", 2: "histogram"}.get(vote.round, "revealed")
        return replace(vote, phase=phase, deadline=None)
    if move == Move.SHOW:
        return replace(vote, phase="histogram")
    if move == Move.REVOTE:
        return replace(vote, round=2, phase="open", deadline=deadline)
    if move == Move.REVEAL:
        return replace(vote, phase="revealed")
    question, answer, n_options = follow_up
    return replace(vote, round=FOLLOW_UP_ROUND, phase="open", answer=answer, n_options=n_options,
                   deadline=deadline, follow_up=question)


def remaining(vote: VoteState | None, now: float) -> float | None:
    """Seconds left on the vote's countdown (0 when it ran out), None when no countdown runs (none set, or the
    round is not open)."""
    if vote is None or vote.deadline is None or vote.phase != "open":
        return None
    return max(0.0, vote.deadline - now)


def follow_up_share(rows: Iterable[Vote], key: str) -> tuple[int, float | None]:
    """(answers, share correct) of the follow-up of vote ``key`` (None when nobody answered): ``correct`` as stored
    per student, the last row of a student counting."""
    last = {r.student_id: r.correct for r in rows if r.vote_key == key and r.round == FOLLOW_UP_ROUND}
    return len(last), (sum(last.values()) / len(last) if last else None)


def flips(sh: Shift, answer: int) -> tuple[int, int]:
    """(wrong → right, right → wrong): students who voted in both rounds and moved onto, or off, the answer."""
    n = len(sh.moved)
    to_right = sum(sh.moved[i][answer] for i in range(n) if i != answer)
    to_wrong = sum(sh.moved[answer][j] for j in range(n) if j != answer)
    return to_right, to_wrong

"""One vote per student per round, enforced by the store (issue 27 §1), on SQLite and PostgreSQL: through a whole
Peer Instruction cycle (round 1, closed unseen, round 2, follow-up) no round takes a vote once closed, not even
from a student who reloads (joins again and gets a fresh session), and no vote reaches another class."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import func, select

from mha_core.classroom import Member, Storage
from mha_core.classroom.schema import votes
from mha_core.errors import LabError
from mha_core.lesson import FOLLOW_UP_ROUND, LiveState, Move, VoteState, follow_up_share, shift, vote_key
from mha_core.lesson.pi import moved
from mha_core.lesson.store import publish_live

KEY = vote_key("concat", "concat-4-8", (4, 8))



def _publish(store: Storage, class_id: int, vote: VoteState | None) -> None:
    publish_live(store, class_id, LiveState(step=4, page="concat", settings=(), vote=vote))


def _class(store: Storage, n: int, tag: str = "") -> tuple[int, str, list[Member]]:
    info = store.create_class()
    return info.id, info.code, [store.join(info.code, f"{tag}{i:031x}", f"s{i}") for i in range(n)]


def _rows(store: Storage) -> int:
    with store.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(votes)).scalar_one()


def _refused(store: Storage, m: Member, key: str, round_: int, choice: int = 0) -> str:
    with pytest.raises(LabError) as err:
        store.cast_vote(m, key, round_, choice, choice == 0)
    return err.value.key


def test_a_full_cycle_takes_one_vote_per_student_per_round_and_nothing_after_a_round_closed(store):
    class_id, code, (ann, bo, cy) = _class(store, 3)
    vote = VoteState(KEY, 1, "open", 0, 2)
    _publish(store, class_id, vote)
    store.cast_vote(ann, KEY, 1, 1, False)
    store.cast_vote(ann, KEY, 1, 0, True)     # a change of mind while open replaces, never adds
    store.cast_vote(bo, KEY, 1, 1, False)
    vote = moved(vote, Move.CLOSE, 0.0)       # closed without showing
    _publish(store, class_id, vote)
    again = store.join(code, f"{2:031x}", "s2")  # cy reloads: a new session joins again, same student
    assert again == cy
    assert _refused(store, again, KEY, 1) == "vote_closed"
    vote = moved(vote, Move.REVOTE, 0.0)
    _publish(store, class_id, vote)
    assert _refused(store, cy, KEY, 1) == "vote_closed"          # round 1 stays closed during round 2
    for m, choice in ((ann, 0), (bo, 0), (cy, 1)):
        store.cast_vote(m, KEY, 2, choice, choice == 0)
    vote = moved(vote, Move.CLOSE, 0.0)
    _publish(store, class_id, vote)
    assert _refused(store, store.join(code, f"{0:031x}", "s0"), KEY, 2) == "vote_closed"
    vote = moved(moved(vote, Move.REVEAL, 0.0), Move.FOLLOW_UP, 0.0, follow_up=("wo-without", 0, 4))
    _publish(store, class_id, vote)
    assert _refused(store, ann, KEY, 2) == "vote_closed"
    assert _refused(store, ann, KEY, FOLLOW_UP_ROUND, 4) == "vote_choice_bad"  # the follow-up's own options
    store.cast_vote(ann, KEY, FOLLOW_UP_ROUND, 3, False)
    store.cast_vote(ann, KEY, FOLLOW_UP_ROUND, 0, True)
    store.cast_vote(bo, KEY, FOLLOW_UP_ROUND, 0, True)
    _publish(store, class_id, moved(vote, Move.CLOSE, 0.0))
    assert _refused(store, cy, KEY, FOLLOW_UP_ROUND) == "vote_closed"
    rows = store.votes(class_id, KEY)
    per_round = {(r.student_id, r.round) for r in rows}
    assert len(per_round) == len(rows) == _rows(store) == 7        # 2 + 3 + 2: one per student and round
    sh = shift(rows, KEY, 2, 0)
    assert (sh.before, sh.after, sh.right_before, sh.right_after) == ((1, 1), (2, 1), 0.5, pytest.approx(2 / 3))
    assert follow_up_share(rows, KEY) == (2, 1.0)


def test_no_vote_reaches_another_class(store):
    a_id, _, (ann,) = _class(store, 1, "a")
    b_id, b_code, (bo,) = _class(store, 1, "b")
    _publish(store, b_id, VoteState(KEY, 1, "open", 0, 2))    # class B votes; class A is not live
    assert _refused(store, ann, KEY, 1) == "vote_closed"
    _publish(store, a_id, VoteState(KEY, 1, "closed", 0, 2))  # A's round with the same key is closed
    assert _refused(store, ann, KEY, 1) == "vote_closed"
    # a member whose class is B but whose student row is A's (never built by join: a forged session) is refused
    forged = replace(ann, class_id=b_id, code=b_code)
    assert _refused(store, forged, KEY, 1) == "class_gone"
    store.cast_vote(bo, KEY, 1, 0, True)
    assert [(r.student_id, r.vote_key) for r in store.votes(b_id)] == [(bo.student_id, KEY)]
    assert store.votes(a_id) == () and _rows(store) == 1

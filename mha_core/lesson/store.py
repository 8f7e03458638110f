"""The live lesson in the class database: ``mha_core.classroom`` stores the plan and the live state as JSON text
and knows no lesson type; these functions encode and decode them (as ``mha_core.quiz.progress_store`` does for
progress).
The store reads one field of the state's JSON itself: ``vote.n_options``, to check a ballot in the statement that
stores it (``LiveState.to_json`` writes it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mha_core.classroom.rows import LiveVote
from mha_core.lesson.live import LiveState
from mha_core.lesson.plan import Plan, plan_from_json, plan_to_json

if TYPE_CHECKING:
    from mha_core.classroom.storage import Storage


def save_plan(store: Storage, class_id: int, plan: Plan) -> None:
    """Store the class's lesson plan (replacing the one before); LabError lesson_class_gone without the class."""
    store.save_plan_json(class_id, plan_to_json(plan))


def load_plan(store: Storage, class_id: int) -> Plan | None:
    """The class's saved plan; None when it has none (use the default). LabError lesson_plan_bad when the stored
    plan no longer reads (e.g. a question left the bank)."""
    data = store.load_plan_json(class_id)
    return None if data is None else plan_from_json(data)


def publish_live(store: Storage, class_id: int, state: LiveState, seen: int | None = None) -> int | None:
    """Make ``state`` the class's live state: its new version, or None when ``seen`` is no longer the class's
    version (compare-and-set: another window presented since)."""
    vote = None if state.vote is None else LiveVote(state.vote.key, state.vote.round, state.vote.phase)
    return store.publish_live_json(class_id, state.to_json(), vote, seen)


def read_live(store: Storage, class_id: int) -> tuple[int, LiveState | None]:
    """(version, state) of the class's live lesson: (0, None) when it was never live, (version, None) once it
    ended. LabError lesson_state_bad when the stored state does not read."""
    version, data = store.read_live_json(class_id)
    return version, (None if data is None else LiveState.from_json(data))

"""The live lesson without Streamlit: the teacher's plan and its timer (plan), the state students follow (live),
a follower's next move (follow), the presenter's session and the states it publishes (presenter) and the class
votes' figures (votes). The Streamlit side is ``mha_core.ui.live``; storage is ``mha_core.classroom.storage``."""

from mha_core.lesson.live import FOLLOWED, PHASES, Drawn, LiveState, VoteState, browser_shows, snapshot, vote_key
from mha_core.lesson.plan import (
    LESSON_PAGES,
    MAX_MINUTES,
    MAX_STEPS,
    Plan,
    Step,
    Timer,
    default_plan,
    dropped,
    moved,
    plan_from_json,
    plan_to_json,
    retimed,
    timer,
)
from mha_core.lesson.votes import MAX_CHOICE, Shift, ballot, shift, tally

__all__ = [
    "FOLLOWED",
    "LESSON_PAGES",
    "MAX_CHOICE",
    "MAX_MINUTES",
    "MAX_STEPS",
    "PHASES",
    "Drawn",
    "LiveState",
    "Plan",
    "Shift",
    "Step",
    "Timer",
    "VoteState",
    "ballot",
    "browser_shows",
    "default_plan",
    "dropped",
    "moved",
    "plan_from_json",
    "plan_to_json",
    "retimed",
    "shift",
    "snapshot",
    "tally",
    "timer",
    "vote_key",
]

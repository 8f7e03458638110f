"""The live lesson's Streamlit side: the teacher's lesson plan and "Teach live" (plan_editor), the presenter's bar
and publishing (presenter, publish), the projector that lost its session (projector), following students' screens
(follow), and the class votes that replace "predict first" while a class is live (vote); app.py's calls around each
run are in page. The plan, the state and the votes' figures are pure code in ``mha_core.lesson``.
"""

from mha_core.lesson.presenter import Lesson
from mha_core.ui.live.follow import FOLLOW_POLL_S, drawn
from mha_core.ui.live.keys import (
    ADD_KEY,
    ADD_PAGE_KEY,
    AGAIN_KEY,
    BACK_KEY,
    BANNER_KEY,
    BAR_KEY,
    CLOSE_KEY,
    COACH_KEY,
    COUNTDOWN_KEY,
    END_KEY,
    EXPLORE_KEY,
    FOLLOW_UP_KEY,
    LESSON_QUERY,
    LIVE_QUERY,
    NEXT_KEY,
    OPEN_KEY,
    PAGE_KEY,
    PRESENTER_KEY,
    PREV_KEY,
    PROJECTOR_LOGIN_KEY,
    PROJECTOR_RESUME_KEY,
    RESET_KEY,
    RESUME_KEY,
    REVEAL_KEY,
    ROLE_KEY,
    SAVE_KEY,
    SEND_KEY,
    SHOW_KEY,
    START_KEY,
    TAKE_OVER_KEY,
    TEACH_CODE_KEY,
    TEACHER_KEY,
    choice_key,
    kind_key,
    minutes_key,
    step_button_key,
)
from mha_core.ui.live.page import frame, turn
from mha_core.ui.live.plan_editor import KEPT, NEW_STEP_MINUTES, plan_card
from mha_core.ui.live.session import active_vote_role, check_questions, current_page, following, presenting
from mha_core.ui.live.vote import UNSENT, vote_box

__all__ = [
    "ADD_KEY", "ADD_PAGE_KEY", "AGAIN_KEY", "BACK_KEY", "BANNER_KEY", "BAR_KEY", "CLOSE_KEY", "END_KEY", "EXPLORE_KEY",
    "FOLLOW_POLL_S", "KEPT", "LESSON_QUERY", "LIVE_QUERY", "NEW_STEP_MINUTES", "NEXT_KEY", "OPEN_KEY", "PAGE_KEY",
    "PRESENTER_KEY", "PREV_KEY", "PROJECTOR_LOGIN_KEY", "PROJECTOR_RESUME_KEY", "RESET_KEY", "RESUME_KEY",
    "REVEAL_KEY", "ROLE_KEY", "SAVE_KEY", "SEND_KEY", "START_KEY", "TAKE_OVER_KEY", "COACH_KEY", "COUNTDOWN_KEY",
    "FOLLOW_UP_KEY", "SHOW_KEY", "kind_key",
    "TEACH_CODE_KEY", "TEACHER_KEY", "UNSENT", "Lesson", "active_vote_role", "check_questions", "choice_key",
    "current_page", "drawn", "following", "frame", "minutes_key", "plan_card", "presenting",
    "step_button_key", "turn", "vote_box",
]

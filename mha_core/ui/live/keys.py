"""The live lesson's session, widget and address keys (one place: every module of the wing reads them, and the
browser tests find its containers by them)."""

from __future__ import annotations

# --- session keys (values, not widgets) ---
PRESENTER_KEY = "live_presenter"   # session: lesson.Presenter, the lesson this session presents (absent: none)
FOLLOWER_KEY = "live_follower"     # session: lesson.Follower, what this member's session knows of following
PAGE_KEY = "live_page"             # session: the page of this run (the vote keys of render.predict)
VOTED_KEY = "live_voted"           # session: {(vote key, round): choice} of this student's stored votes
VOTES_READ_KEY = "_live_votes_read"  # session: (class id, vote keys whose stored votes of this student were read)
RESENT_KEY = "_live_resent"        # session: the unsent votes this session took back and sent again
EDIT_KEY = "live_edit"             # session: (class id, Plan) in the teacher's plan editor
FLASH_KEY = "live_flash"           # session: a LabError a live callback left, to show once
VOTE_FLASH_KEY = "live_vote_flash"  # session: a LabError of the student's last vote, to show under the vote
VOTE_FAILED_KEY = "live_vote_failed"  # session: True when the database failed the last send (offer "send again")

# The class page's keys the projector reads or sets (teacher.py and classroom.py import this module, so they are
# named here; test_live_page holds them equal to the owners'):
TEACHER_KEY = "classroom_teacher"        # session: True after the right password (teacher.TEACHER_KEY)
TEACH_CODE_KEY = "classroom_teach_code"  # widget: the class the teacher looks at (teacher.TEACH_CODE_KEY)
ROLE_KEY = "classroom_role"              # widget: the student's or the teacher's view (classroom.ROLE_KEY)

# --- widget keys ---
ADD_PAGE_KEY = "live_add_page"                              # select box: the page a new step shows
ADD_KEY, SAVE_KEY, RESET_KEY = "live_plan_add", "live_plan_save", "live_plan_reset"  # plan buttons
START_KEY, RESUME_KEY = "live_start", "live_resume"          # buttons: teach live, resume the running lesson
PREV_KEY, NEXT_KEY, END_KEY = "live_prev", "live_next", "live_end"  # the presenter's bar
EXPLORE_KEY, BACK_KEY = "live_explore", "live_back"          # the student's banner
OPEN_KEY, CLOSE_KEY, AGAIN_KEY, REVEAL_KEY = "live_vote_open", "live_vote_close", "live_vote_again", "live_vote_reveal"
SEND_KEY = "live_vote_send"                                  # the student's "send my vote"
TAKE_OVER_KEY = "live_take_over"                             # the presenter's "take over" after a conflict
PROJECTOR_RESUME_KEY, PROJECTOR_LOGIN_KEY = "live_projector_resume", "live_projector_login"  # projector buttons
BAR_KEY, BANNER_KEY = "live_bar", "live_banner"              # containers (stable for browser tests)

# The address's parameter that says which live version this browser has drawn: written at the very end of a full
# run, after everything it drew, so a browser whose URL carries it received the whole run. Streamlit drops the rest
# of a full run that has just ended when a fragment's timer tick arrives before the run's messages were sent (the
# tick starts a new ScriptRunner and the old one's queued messages are ignored; app_session.py): the server then
# believes the page drawn while the browser still shows the old one. Every poll reads the browser's address, so
# such a student is asked for another full run instead of staying on the old h or the old page.
LIVE_QUERY = "live"
# The presenter's address names the class it presents (a class code is what the projector shows anyway), so a
# projector window whose session a reload or a restart lost still knows which lesson runs and can offer to resume.
LESSON_QUERY = "lesson"


def minutes_key(i: int) -> str:
    """Widget key of step i's minutes in the plan editor."""
    return f"live_plan_min_{i}"


def step_button_key(action: str, i: int) -> str:
    """Widget key of step i's button in the plan editor: up, down, drop."""
    return f"live_plan_{action}_{i}"


def choice_key(vote: str, round_: int) -> str:
    """Widget key of the student's choice in a vote's round."""
    return f"live_choice_{vote}_{round_}"

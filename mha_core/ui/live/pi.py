"""What the presenter's and the students' sides of a Peer Instruction vote share: the countdown (drawn on phones and
the projector, ticking in the browser), the follow-up's bank question in the reader's language, and the kind of
vote the presenter's step asks."""

from __future__ import annotations

import json
import time

import streamlit as st

from mha_core.lesson import CONCEPTEST, FOLLOW_UPS, PREDICTION, VoteState, remaining
from mha_core.quiz import load_questions
from mha_core.quiz.model import Question
from mha_core.ui.i18n import lang, t
from mha_core.ui.live.session import presenter, published

_CLOCK = "%CLOCK%"  # the countdown text's placeholder, filled in by the browser every tick
# Ticks in the browser from the seconds left when the page was drawn (the server's clock: a phone's own clock may
# be off by minutes), so no server run is spent per second and per phone. Only catalog text and numbers go in.
_TICK_JS = """<div id="{id}" class="mha-countdown" role="timer" style="font-size:1.3em;font-weight:600">{text}</div>
<script>(function () {{
  const el = document.getElementById({id_js}); if (!el) return;
  const end = Date.now() + {left_ms}; const tpl = {tpl}; const over = {over};
  const tick = () => {{
    const s = Math.max(0, Math.ceil((end - Date.now()) / 1000));
    el.textContent = s > 0 ? tpl.replace({clock}, Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0"))
                           : over;
    if (s <= 0) clearInterval(timer);
  }};
  const timer = setInterval(tick, 250); tick();
}})();</script>"""


def _clock(seconds: float) -> str:
    seconds = max(0, int(-(-seconds // 1)))
    return f"{seconds // 60}:{seconds % 60:02d}"


def countdown(vote: VoteState | None) -> None:
    """The vote's countdown while its round is open and it has one: "0:42 left", then "Time is up"."""
    left = remaining(vote, time.time())
    if left is None:
        return
    tpl, over = t("pi.countdown_left", clock=_CLOCK), t("pi.countdown_over")
    text = tpl.replace(_CLOCK, _clock(left)) if left > 0 else over
    box_id = f"mha-countdown-{int(vote.deadline * 1000)}-{vote.round}"
    st.html(_TICK_JS.format(id=box_id, id_js=json.dumps(box_id), text=text, left_ms=int(left * 1000),
                            tpl=json.dumps(tpl), over=json.dumps(over), clock=json.dumps(_CLOCK)),
            unsafe_allow_javascript=True)


def follow_up_question(vote: VoteState) -> Question | None:
    """The follow-up's bank question in this session's language (its options in bank order, as the vote counts
    them); None when the vote is not a follow-up or the question left the bank."""
    if not vote.follow_up:
        return None
    return next((q for q in load_questions(lang()) if q.id == vote.follow_up), None)


def follow_up_for(key: str) -> tuple[str, int, int]:
    """(bank question, right option, options) of the follow-up to the vote ``key`` (its page's, lesson.pi)."""
    qid = FOLLOW_UPS.get(key.split(".", 1)[0], "")
    q = next((q for q in load_questions(lang()) if q.id == qid), None)
    if q is None:
        return "", 0, 1
    return q.id, q.option_ids.index(q.correct[0]), len(q.options)


def vote_kind() -> str:
    """The kind of vote the presenter's step asks: a prediction when the plan says so, else the full cycle (a
    ConcepTest step, or a teacher who asks the class on a teaching step or off the plan)."""
    who, state = presenter(), published()
    plan = None if who is None else who.plan
    if plan is None or state is None or not plan.steps:
        return CONCEPTEST
    step = plan.steps[min(state.step, len(plan.steps) - 1)]
    return PREDICTION if step.page == state.page and step.kind == PREDICTION else CONCEPTEST

"""What a presenter's session knows of the lesson it teaches, and the states it publishes, without Streamlit.

One frozen ``Presenter`` under one session key: the class, the plan, the version and state this window published
(or read) last, the page its next full run switches to, and whether another window presents since. ``step_state``
and ``synced`` build the next ``LiveState`` from the plan and the presenter's settings; ``mha_core.ui.live``
writes it (compare-and-set on ``Presenter.version``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mha_core.lesson.live import LiveState
from mha_core.lesson.plan import LESSON_PAGES, Plan


@dataclass(frozen=True)
class Lesson:
    """The class a presenter teaches live."""

    class_id: int
    code: str


@dataclass(frozen=True)
class Presenter:
    """The lesson this session presents: its class, plan, the (version, state) it published or read last, the page
    its next full run switches to, ``conflict`` once another window presented (this one then publishes nothing
    until "take over"), and ``sending``: the state it is writing now, recorded before the write."""

    class_id: int
    code: str
    plan: Plan
    version: int
    state: LiveState
    goto: str | None = None
    conflict: bool = False
    sending: LiveState | None = None

    @classmethod
    def begin(cls, lesson: Lesson, plan: Plan, version: int, state: LiveState) -> Presenter:
        """Presenting ``lesson`` from (``version``, ``state``) on, its page next."""
        return cls(lesson.class_id, lesson.code, plan, version, state, goto=state.page)

    @property
    def lesson(self) -> Lesson:
        """The class taught."""
        return Lesson(self.class_id, self.code)

    def publishing(self, state: LiveState) -> Presenter:
        """This window is about to write ``state`` (recorded first: see ``own``)."""
        return replace(self, sending=state)

    def published(self, version: int, state: LiveState) -> Presenter:
        """This window wrote ``state`` as ``version``."""
        return replace(self, version=version, state=state, sending=None)

    def own(self, version: int, state: LiveState | None) -> bool:
        """Whether the class's (``version``, ``state``) is this window's own last write, whose record was lost: a
        rerun request stops a Streamlit run at its next session-state access, which can be the one right after the
        write committed. Such a write is the version after this window's, with the state it was sending."""
        return self.sending is not None and version == self.version + 1 and state == self.sending

    def outrun(self, version: int, state: LiveState) -> Presenter:
        """Another window presented since: show the class's (``version``, ``state``), its page next."""
        return replace(self, version=version, state=state, goto=state.page, conflict=True)

    def taken_over(self, version: int, state: LiveState) -> Presenter:
        """"Take over": present from this window again, from where the class is."""
        return replace(self, version=version, state=state, goto=state.page, conflict=False)

    def going(self, page: str | None) -> Presenter:
        """The next full run switches to ``page`` (None: stays)."""
        return replace(self, goto=page)


def step_state(plan: Plan, step: int, last: LiveState | None, settings: tuple[tuple[str, object], ...],
               now: float) -> LiveState:
    """The state of step ``step`` just begun (the lesson's start carried over; no vote)."""
    s = plan.steps[step]
    return LiveState(step=step, page=s.page, settings=settings, vote=None, questions=s.questions,
                     step_started_at=now, lesson_started_at=last.lesson_started_at if last else now)


def moved_step(plan: Plan, last: LiveState, delta: int, drawn_at: int | None = None) -> int:
    """Previous / next: the step ``delta`` away, clamped to the plan. A button drawn at step ``drawn_at`` moves only
    from there: once the class is elsewhere, its move was made (a click is one move, however often its callback
    runs) or another window moved the class, and ``last.step`` comes back (no move)."""
    if drawn_at is not None and drawn_at != last.step:
        return last.step
    return max(0, min(len(plan.steps) - 1, last.step + delta))


def step_of(plan: Plan, page: str, step: int) -> int:
    """The step that shows ``page``: this one, else the next one that does, else the first; else unchanged."""
    order = [*range(step, len(plan.steps)), *range(0, step)]
    return next((i for i in order if plan.steps[i].page == page), step)


def synced(plan: Plan, last: LiveState, page: str, settings: tuple[tuple[str, object], ...],
           now: float) -> LiveState:
    """The state after the presenter navigated to ``page`` (by the sidebar: the step that shows it, its check, no
    vote; the clock restarts only on another step) with ``settings``; ``last`` itself when nothing changed. A page
    that is no lesson page (the class page) changes nothing."""
    new = last
    if page != last.page and page in LESSON_PAGES:
        step = step_of(plan, page, last.step)
        questions = plan.steps[step].questions if plan.steps[step].page == page else ()
        new = replace(new, step=step, page=page, vote=None, questions=questions,
                      step_started_at=now if step != last.step else last.step_started_at)
    if settings != new.settings:
        new = replace(new, settings=settings)
    return new

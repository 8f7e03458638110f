"""A class member's next move while following a live lesson, decided without Streamlit.

A member's session polls the class's one ``LiveState`` (every few seconds while the class is live, the fallback to
the process's watcher, which wakes it when the class moves; now and then while it is not). ``poll`` takes what this
session knows (one frozen ``Follower``), what the poll read (the live version and state), what the browser's address
says it drew (its acknowledgement), the page this run shows and the time, and returns one ``Decision``: wait, ask
for a full run (to draw a new version, again for one the browser never confirmed, or to poll at the other pace),
switch page, or, inside a full run, copy the teacher's settings before any widget is drawn.
``mha_core.ui.live.follow`` only applies it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from mha_core.lesson.live import Drawn, LiveState, browser_shows

HEARTBEAT_S = 5.0     # a student's "I am here" at most this often (not every poll)
MAX_ASK = 10          # polls that ask for a full run to draw one version (a page that stops must not loop)
ACK_GRACE_S = 2.0     # after a full run drew a version, how long its browser may take to say so (its address)
MAX_REASK = 3         # full runs asked again for one version its browser does not confirm


@dataclass(frozen=True)
class Follower:
    """What a member's session knows of following its class's live lesson (one value under one session key)."""

    class_id: int | None = None            # the class whose live state was read last (None: none read yet)
    version: int = 0                       # the live version read last
    state: LiveState | None = None         # the live state read last (None: the class is not live)
    following: bool = True                 # False once the student chose to explore on their own
    applied: int | None = None             # the version the last complete full run drew (None: none, or "back")
    applied_at: float = 0.0                # when that run ended (epoch seconds)
    run_s: float = 0.0                     # how long that run took
    run_started_at: float = 0.0            # when the current full run began
    pending: int | None = None             # the version the current full run copied (applied once it ends)
    asked: tuple[int, int] | None = None   # (version, polls that asked for a full run to draw it)
    reasked: tuple[int, int] | None = None  # (version, full runs asked again: its browser did not confirm it)
    beat_at: float = 0.0                   # when the last heartbeat was taken
    full_run: bool = False                 # the poll runs inside a full run now (not on the fragment's timer)
    drawn_following: bool = True           # whether the page was last drawn following (its votes or predictions)
    banner_version: int | None = None      # the live version the banner was last drawn from
    steps: tuple[int, float, int] | None = None  # (class id, lesson start, number of steps) for the banner

    def live(self, class_id: int) -> LiveState | None:
        """The live state last read, when it is of ``class_id`` (the member may have moved to another class)."""
        return self.state if self.class_id == class_id else None

    def run_begins(self, now: float) -> Follower:
        """A full run begins: the poll inside it copies; the page is drawn following or not, as now."""
        return replace(self, full_run=True, run_started_at=now, drawn_following=self.following)

    def run_framed(self) -> Follower:
        """The full run's poll is over: later polls are the fragment's own."""
        return replace(self, full_run=False)

    def bannered(self) -> Follower:
        """The full run drew the banner from the version read last."""
        return replace(self, banner_version=self.version)

    def drawn(self, now: float) -> tuple[Follower, int | None]:
        """The page ran to its end: the version its full run copied is drawn (returned, for the address); None when
        this run copied nothing. A run stopped on the way never gets here, so the next poll asks again."""
        if self.pending is None:
            return self, None
        done = replace(self, pending=None, applied=self.pending, applied_at=now, run_s=now - self.run_started_at)
        return done, self.pending

    def explore(self) -> Follower:
        """"Explore on my own": stop following; the next poll tells the teacher at once."""
        return replace(self, following=False, beat_at=0.0)

    def back(self) -> Follower:
        """"Back to the teacher": follow again and draw the teacher's state at once (even the version drawn last)."""
        return replace(self, following=True, applied=None, beat_at=0.0)

    def beaten(self, now: float) -> Follower:
        """The heartbeat was taken."""
        return replace(self, beat_at=now)

    def with_steps(self, class_id: int, lesson_started_at: float, n: int) -> Follower:
        """The number of steps of the lesson being taught, read once per lesson."""
        return replace(self, steps=(class_id, lesson_started_at, n))


class Move(StrEnum):
    """What a poll asks of the page."""

    WAIT = "wait"        # nothing to do: the page shows what it should
    PACE = "pace"        # the class went live or the lesson ended: a full run (it polls at the other pace)
    REDRAW = "redraw"    # a full run to draw a live version this browser has not drawn
    REASK = "reask"      # a full run again: a version was drawn but its browser never said so
    GO = "go"            # switch to the teacher's page
    COPY = "copy"        # inside a full run: copy the teacher's settings before any widget (and switch page if set)
    REFRESH = "refresh"  # exploring: a full run redraws the banner (a new step) or the student's own predictions


@dataclass(frozen=True)
class Decision:
    """A poll's outcome: the move, the session's new ``Follower``, the page to switch to, the teacher's settings to
    copy (COPY) and whether to send the heartbeat now."""

    move: Move
    follower: Follower
    page: str | None = None
    settings: tuple[tuple[str, object], ...] = ()
    beat: bool = False


def _count(pair: tuple[int, int] | None, version: int) -> int:
    """The count in (version, count) when it is of ``version``, else 0."""
    return pair[1] if pair is not None and pair[0] == version else 0


def shows(f: Follower, version: int, acked: str | None, now: float) -> bool:
    """Whether the member's browser shows ``version`` (``browser_shows`` over the session and its address)."""
    drawn = Drawn(f.applied, f.applied_at, f.run_s, acked, reasks=_count(f.reasked, version))
    return browser_shows(version, drawn, now, ACK_GRACE_S, MAX_REASK)


def poll(f: Follower, class_id: int, version: int, state: LiveState | None, page: str, acked: str | None,
         now: float, live_now: bool) -> Decision:
    """The member's next move after reading (``version``, ``state``) of its class: ``page`` is the page this run
    shows, ``acked`` the live version the browser's address says it drew, ``live_now`` whether this poll is the
    live-lesson one (the class was live when the page was drawn)."""
    f = replace(f, class_id=class_id, version=version, state=state)
    if (state is not None) != live_now:  # the class went live or ended: poll at the other pace, banner or not
        return Decision(Move.PACE, f if state is not None else replace(f, following=True))  # a new lesson: followed
    if state is None:
        return Decision(Move.WAIT, f)
    beat = now - f.beat_at >= HEARTBEAT_S
    if f.following and f.full_run:
        # Every full run copies the teacher's values before any widget is drawn, so the page always draws them: a
        # rerun the browser queued before this one carries its old widget values, which Streamlit applies at the
        # start of the run (copying only once per version left students on the old h for a whole move).
        # No heartbeat here: a write in a following student's full run holds the class's turn (60 of them per
        # move); the fragment's next poll, a second or two later, sends it.
        return Decision(Move.COPY, replace(f, pending=version), page=state.page if state.page != page else None,
                        settings=state.settings)
    if f.following:  # a poll: only ask for a full run when there is something new to draw
        n = _count(f.asked, version) + 1
        if not shows(f, version, acked, now) and n <= MAX_ASK:  # bounded: a page that stops never loops
            f = replace(f, asked=(version, n))
            if f.applied == version:  # drawn, but its browser does not say so: again (bounded by MAX_REASK)
                return Decision(Move.REASK, replace(f, reasked=(version, _count(f.reasked, version) + 1)), beat=beat)
            return Decision(Move.REDRAW, f, beat=beat)
        if state.page != page:
            return Decision(Move.GO, f, page=state.page, beat=beat)
    if f.full_run:
        return Decision(Move.WAIT, f, beat=beat)
    if f.following != f.drawn_following or f.banner_version != version:  # the predictions, or the banner's step
        return Decision(Move.REFRESH, f, beat=beat)
    return Decision(Move.WAIT, f, beat=beat)

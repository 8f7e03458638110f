"""Which following sessions to wake when a class's live version grows, decided without Streamlit.

A following member's session reports itself whenever it polls or finishes drawing (``Watchlist.seen``, with the
live version it has drawn); a watcher reads the live version of every class in the list a few times a second and
wakes the sessions of a class whose version grew (``Watchlist.grown``, then ``due``), instead of leaving each to
its next poll. A session that is busy running is woken once it is idle, unless it reports the version drawn first.
A session that drew a version and then went silent for ``silent_s`` (no poll: its browser lost the poll's timer) is
woken once for that version (``silent``, then ``rescue``). Sessions that stopped reporting (closed, exploring, moved
to another class) are forgotten after ``forget_s``. Pure and single-threaded: the watcher holds a lock around it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Watchlist:
    """Following sessions per class, the live version last read of each class, and the wakes not yet sent."""

    forget_s: float
    silent_s: float = float("inf")                                       # no report this long after drawing: wake
    sessions: dict[int, dict[str, float]] = field(default_factory=dict)  # class id -> {session id: last report}
    versions: dict[int, int] = field(default_factory=dict)               # class id -> live version read last
    waiting: dict[str, int] = field(default_factory=dict)                # session id -> version it should draw
    drawn: dict[str, int] = field(default_factory=dict)                  # session id -> version it reported drawn
    rescued: dict[str, int] = field(default_factory=dict)                # session id -> version woken for silence

    def seen(self, class_id: int, session_id: str, now: float, drawn: int | None) -> None:
        """A following session of ``class_id`` reported at ``now``, showing live version ``drawn`` (None: none)."""
        for other, members in self.sessions.items():   # a member who moved to another class leaves the old one
            if other != class_id:
                members.pop(session_id, None)
        self.sessions.setdefault(class_id, {})[session_id] = now
        if drawn is None:
            return
        self.drawn[session_id] = drawn
        if drawn >= self.waiting.get(session_id, drawn + 1):
            del self.waiting[session_id]
        read = self.versions.get(class_id)
        if read is not None and drawn < read:  # behind a version already read: no growth will come to wake it
            self.waiting[session_id] = read

    def left(self, session_id: str) -> None:
        """The session stopped following (exploring, or no longer a member): never woken again until it reports."""
        for members in self.sessions.values():
            members.pop(session_id, None)
        self.waiting.pop(session_id, None)
        self.drawn.pop(session_id, None)
        self.rescued.pop(session_id, None)

    def classes(self, now: float) -> list[int]:
        """The classes to read now: those with a session that reported within ``forget_s`` (the rest are dropped)."""
        for class_id in list(self.sessions):
            members = {s: at for s, at in self.sessions[class_id].items() if now - at <= self.forget_s}
            if members:
                self.sessions[class_id] = members
            else:
                del self.sessions[class_id]
                self.versions.pop(class_id, None)
        known = {s for members in self.sessions.values() for s in members}
        self.waiting = {s: v for s, v in self.waiting.items() if s in known}
        self.drawn = {s: v for s, v in self.drawn.items() if s in known}
        self.rescued = {s: v for s, v in self.rescued.items() if s in known}
        return sorted(self.sessions)

    def grown(self, class_id: int, version: int) -> None:
        """The version just read of ``class_id``: when it grew since the last read, every session of the class is
        due to draw it. The first read learns where the class is: only the sessions that reported drawing an older
        version are due (a move published between a session's report and that first read would otherwise wake no
        one: tests/test_wake.py once passed only because a server's first page took 80 ms longer)."""
        before = self.versions.get(class_id)
        self.versions[class_id] = version
        for session_id in self.sessions.get(class_id, {}):
            last = before if before is not None else self.drawn.get(session_id, version)  # unknown: not behind
            if version > last:
                self.waiting[session_id] = version

    def due(self) -> list[str]:
        """The sessions to wake (each stays due until ``woken`` or until it reports the version drawn)."""
        return sorted(self.waiting)

    def silent(self, now: float) -> list[str]:
        """The sessions that drew a version and have not reported for ``silent_s`` since, not yet woken for that
        version: a following session polls every few seconds, so its browser lost the poll's timer.

        Streamlit 1.67 drops what is left of a finished run when a poll's fragment run starts before the event loop
        has sent it (``AppSession`` then ignores the old script runner's events): the page misses its end, the
        poll's ``auto_rerun`` with it, and the browser, which cleared its timers when that full run began, never
        polls again (bench_live saw one to three of 60 students stop at a move in half its runs). One full run
        redraws the page and restarts the timer; once per version, so a tab in the background (its timers slowed
        by the browser) costs one run per move, not one every ``silent_s``."""
        return sorted(s for members in self.sessions.values() for s, at in members.items()
                      if now - at > self.silent_s and s in self.drawn
                      and self.rescued.get(s) != self.drawn[s])

    def rescue(self, session_id: str) -> None:
        """The session was asked for a full run: not woken for silence again until it draws a newer version."""
        if session_id in self.drawn:
            self.rescued[session_id] = self.drawn[session_id]

    def woken(self, session_id: str) -> None:
        """The session was asked for a full run (whose poll reads the newest version)."""
        self.waiting.pop(session_id, None)

    def class_of(self, session_id: str) -> int | None:
        """The class whose lesson the session follows (None: not watched)."""
        return next((c for c, members in self.sessions.items() if session_id in members), None)

    def version(self, class_id: int) -> int | None:
        """The live version of ``class_id`` as last read (None: not watched)."""
        return self.versions.get(class_id)

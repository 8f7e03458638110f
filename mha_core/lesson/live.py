"""The live lesson's state: what the presenter shows now, which students' screens copy it.

One ``LiveState`` per class lives in the database as JSON (``lesson.store.publish_live`` / ``read_live``), so every
replica serves the same lesson. Pure: no Streamlit. Vote keys are built from language-free parts and SHA-1, never
Python's ``hash()`` (which differs per process), so every replica and every language agree on them.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mha_core.errors import LabError
from mha_core.lesson.plan import CONCEPTEST, LESSON_PAGES, PREDICTION
from mha_core.settings import CAUSAL, D_HEAD, D_MODEL, FIXED, H_DIV, HEAD, SEED, SENTENCE, WEIGHT_MODE, H, Setting

# A vote round's phase, in the order the teacher moves it: open; closed (nothing shown: the default end of round 1,
# so the discussion is not swayed by the plurality); histogram (the counts); revealed (the answer and why).
PHASES = ("open", "closed", "histogram", "revealed")
ROUNDS = (1, 2, 3)  # a vote, the vote again after discussing, and the follow-up (lesson.pi.FOLLOW_UP_ROUND)
# The settings students follow (not the language, not the tables switch: each student keeps their own).
FOLLOWED: tuple[Setting, ...] = (H, D_HEAD, FIXED, D_MODEL, H_DIV, SENTENCE, WEIGHT_MODE, SEED, CAUSAL, HEAD)
_KINDS: dict[str, type] = {s.key: s.kind for s in FOLLOWED}
KEY_HASH_HEX = 10  # hex digits of SHA-1 in a vote key


@dataclass(frozen=True)
class VoteState:
    """The class vote running now: its key, round (1, 2 after "vote again", 3 for the follow-up), phase, right
    option, options; the step's kind, the countdown's end and, in round 3, the follow-up's bank question."""

    key: str
    round: int
    phase: str
    answer: int
    n_options: int
    kind: str = CONCEPTEST         # lesson.plan.PREDICTION or CONCEPTEST (a vote stored before kinds: a full cycle)
    deadline: float | None = None  # epoch seconds the countdown ends (wall clock: shared by replicas); None: none
    follow_up: str = ""            # round 3: the bank question asked (its options in bank order)


@dataclass(frozen=True)
class LiveState:
    """What every following student's screen shows: the teacher's step, page, settings, vote and check."""

    step: int
    page: str
    settings: tuple[tuple[str, object], ...]  # followed settings as (session key, value), sorted by key
    vote: VoteState | None = None
    questions: tuple[str, ...] = ()           # on a quiz step: the check's question ids
    step_started_at: float = 0.0              # epoch seconds (wall clock: shared by replicas)
    lesson_started_at: float = 0.0

    def to_json(self) -> str:
        """The state as JSON (what mha_live.data stores)."""
        vote = None if self.vote is None else {"key": self.vote.key, "round": self.vote.round,
                                               "phase": self.vote.phase, "answer": self.vote.answer,
                                               "n_options": self.vote.n_options, "kind": self.vote.kind,
                                               "deadline": self.vote.deadline, "follow_up": self.vote.follow_up}
        return json.dumps({"step": self.step, "page": self.page, "settings": [list(kv) for kv in self.settings],
                           "vote": vote, "questions": list(self.questions),
                           "step_started_at": self.step_started_at, "lesson_started_at": self.lesson_started_at},
                          ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> LiveState:
        """The state stored as JSON; LabError lesson_state_bad when it is malformed. Settings this version does not
        follow are dropped (a newer replica may follow more)."""
        try:
            data = json.loads(text)
            state = cls(step=_int(data["step"]), page=_page(data["page"]), settings=_settings(data["settings"]),
                        vote=None if data.get("vote") is None else _vote(data["vote"]),
                        questions=_strings(data.get("questions", [])),
                        step_started_at=_epoch(data.get("step_started_at", 0.0)),
                        lesson_started_at=_epoch(data.get("lesson_started_at", 0.0)))
        except (TypeError, ValueError, KeyError, AttributeError, RecursionError):
            raise LabError("lesson_state_bad") from None
        return state


def _int(value: object, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(value)
    return value


def _page(value: object) -> str:
    if value not in LESSON_PAGES:
        raise ValueError(value)
    return str(value)


def _epoch(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(value)
    return float(value)


def _strings(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(value)
    return tuple(value)


def _fits(kind: type, value: object) -> bool:
    """``value`` has the setting's type exactly (an int is not a bool, a bool is not an int)."""
    return isinstance(value, kind) and (kind is bool or not isinstance(value, bool))


def _settings(value: object) -> tuple[tuple[str, object], ...]:
    pairs = []
    for item in value:  # a non-list fails here or below (TypeError / ValueError)
        key, setting = item
        if not isinstance(key, str):
            raise ValueError(key)
        if key in _KINDS:
            if not _fits(_KINDS[key], setting):
                raise ValueError(setting)
            pairs.append((key, setting))
    return tuple(sorted(dict(pairs).items()))


def _vote(value: Mapping) -> VoteState:
    deadline = value.get("deadline")
    vote = VoteState(key=value["key"], round=_int(value["round"], 1), phase=value["phase"],
                     answer=_int(value["answer"]), n_options=_int(value["n_options"], 1),
                     kind=value.get("kind", CONCEPTEST), deadline=None if deadline is None else _epoch(deadline),
                     follow_up=value.get("follow_up", ""))
    if not isinstance(vote.key, str) or not vote.key or vote.round not in ROUNDS or vote.phase not in PHASES \
            or vote.answer >= vote.n_options or vote.kind not in (PREDICTION, CONCEPTEST) \
            or not isinstance(vote.follow_up, str) or (vote.round == ROUNDS[-1]) != bool(vote.follow_up):
        raise ValueError(value)
    return vote


def snapshot(values: Mapping[str, object]) -> tuple[tuple[str, object], ...]:
    """The followed settings present in ``values`` (e.g. the presenter's session state), sorted by key, each as
    its setting's type; a missing or unset (None) one is left out, so a follower keeps its own."""
    pairs = []
    for s in FOLLOWED:
        value = values[s.key] if s.key in values else None
        if value is not None:
            pairs.append((s.key, s.kind(value)))
    return tuple(sorted(pairs))


def vote_key(page: str, question: str, parts: Sequence[object] = ()) -> str:
    """A vote's stable key: ``page.question.`` + 10 hex digits of SHA-1 over ``repr`` of the language-free parts the
    answer depends on (the same in every process, replica and language; never Python's ``hash()``)."""
    digest = hashlib.sha1(repr(tuple(parts)).encode("utf-8"), usedforsecurity=False).hexdigest()
    return f"{page}.{question}.{digest[:KEY_HASH_HEX]}"


ACK_LOAD_FACTOR = 3.0  # a loaded server sends a run's messages late: wait this many times the run's own duration


@dataclass(frozen=True)
class Drawn:
    """What a follower's session knows of the live version its page shows: the version its last complete full run
    drew (``None``: none yet), when that run ended and how long it took, the version its browser's address says it
    has (``None``: none), and how many times a poll already asked to draw this version again."""

    applied: int | None
    applied_at: float
    run_s: float
    acked: str | None
    reasks: int


def browser_shows(version: int, drawn: Drawn, now: float, grace_s: float, max_reasks: int) -> bool:
    """Whether a follower's browser shows ``version``: a full run drew it to its end and the browser says so, or
    may still say so (within ``grace_s`` of that run's end, or ACK_LOAD_FACTOR times its duration on a loaded
    server). A run's messages can be lost after it ended, so the version is drawn again, at most ``max_reasks``
    times and each time only after that wait: asking at every poll on a loaded server would only load it more."""
    if drawn.applied != version:
        return False
    if drawn.acked == str(version) or drawn.reasks >= max_reasks:
        return True
    return now - drawn.applied_at < max(grace_s, ACK_LOAD_FACTOR * drawn.run_s)

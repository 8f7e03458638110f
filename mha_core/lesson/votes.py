"""A class vote's figures from stored rows: the count per option, and how answers moved between two rounds (Peer
Instruction: vote, discuss with a neighbour, vote again). Pure; a row is anything with ``student_id``,
``vote_key``, ``round``, ``choice`` and ``correct`` (e.g. ``mha_core.classroom.storage.VoteRow``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from mha_core.errors import LabError

MAX_CHOICE = 2**31 - 1  # a stored choice fits a 32-bit INTEGER column (PostgreSQL's is 32 bits)


class Vote(Protocol):
    """What the figures read from a stored vote."""

    student_id: int
    vote_key: str
    round: int
    choice: int
    correct: bool


def ballot(value: object, n_options: int) -> int:
    """The option a student's ballot sent, checked before anything is stored: an int with 0 <= value < n_options.
    A forged websocket value (a string, NaN, a huge number, a bool) is LabError vote_choice_bad, never an
    exception, so the sender reads why nothing was counted."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < min(n_options, MAX_CHOICE + 1):
        raise LabError("vote_choice_bad")
    return value


def _choices(rows: Iterable[Vote], key: str, round: int, n_options: int) -> dict[int, int]:  # noqa: A002
    """student -> choice in this vote and round (a later row of the same student wins; choices out of range are
    ignored)."""
    return {r.student_id: r.choice for r in rows
            if r.vote_key == key and r.round == round and 0 <= r.choice < n_options}


def tally(rows: Iterable[Vote], key: str, round: int, n_options: int) -> tuple[int, ...]:  # noqa: A002
    """How many students chose each option in this vote and round."""
    counts = [0] * n_options
    for choice in _choices(rows, key, round, n_options).values():
        counts[choice] += 1
    return tuple(counts)


@dataclass(frozen=True)
class Shift:
    """Round 1 against round 2 of one vote."""

    before: tuple[int, ...]                # tally of round 1
    after: tuple[int, ...]                 # tally of round 2
    moved: tuple[tuple[int, ...], ...]     # moved[i][j]: students who chose i, then j (voted in both rounds)
    right_before: float | None             # share of round 1's votes on the answer (None: nobody voted)
    right_after: float | None


def _share(counts: tuple[int, ...], answer: int) -> float | None:
    total = sum(counts)
    return counts[answer] / total if total else None


def shift(rows: Iterable[Vote], key: str, n_options: int, answer: int) -> Shift:
    """How the class's answers moved from round 1 to round 2 of the vote ``key``."""
    rows = tuple(rows)
    first, second = _choices(rows, key, 1, n_options), _choices(rows, key, 2, n_options)
    before, after = tally(rows, key, 1, n_options), tally(rows, key, 2, n_options)
    grid = [[0] * n_options for _ in range(n_options)]
    for student, choice in first.items():
        if student in second:
            grid[choice][second[student]] += 1
    return Shift(before, after, tuple(map(tuple, grid)), _share(before, answer), _share(after, answer))

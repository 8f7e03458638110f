"""How fast new students may join: token buckets per class and per source address, kept in the class database
(never in a session or a process: a reload, another tab or another replica shares the same counts).

Why these numbers (a real class against a script; 1 token = 1 new student, refilled with time):
- Per source address: a school's NAT puts a whole class (30–40 phones) behind one address, and they join over
  about a minute after the code goes up. A burst of 12 refilled at 45 a minute lets 40 in within 40 s of the
  first (12 at once, then one every 1.3 s); a script making 100 joins in 4 s gets 12 + 3 = 15 identities and
  then waits. Students who arrive in the same second as 12 others are told to wait a second or two.
- Per class: whatever the addresses (phones on mobile data, a botnet), at most 60 at once and 60 a minute
  more: a lecture hall of 120 is in within a minute; a flood of fake students cannot outgrow that, and the
  presenter's count shows it.
A student coming back (a reload, a restart, the same id in the link) takes no token: only new identities do.
Both limits can be changed with MHA_JOIN_LIMITS ("burst/per-minute per address, burst/per-minute per class",
e.g. "12/45,60/60") for a load test or a bigger hall.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from sqlalchemy import select

from mha_core.classroom.schema import join_buckets
from mha_core.classroom.storage import Storage, dialect_insert

LIMITS_ENV = "MHA_JOIN_LIMITS"
PRUNE_AFTER_S = 3600.0  # buckets full and untouched this long are deleted: the table stays small


@dataclass(frozen=True)
class Bucket:
    """A token bucket: ``burst`` joins at once, refilled at ``per_minute``."""

    burst: float
    per_minute: float

    @property
    def rate(self) -> float:
        """Tokens per second."""
        return self.per_minute / 60.0


@dataclass(frozen=True)
class JoinLimits:
    """The two buckets every new join takes a token from."""

    address: Bucket = Bucket(12, 45)
    klass: Bucket = Bucket(60, 60)


def _bucket(text: str) -> Bucket:
    burst, _, per_minute = text.partition("/")
    b = Bucket(float(burst), float(per_minute))
    if not (1 <= b.burst <= 1e6 and 0 < b.per_minute <= 1e6):
        raise ValueError(text)
    return b


def join_limits(env: Mapping[str, str]) -> JoinLimits:
    """The limits from MHA_JOIN_LIMITS, else the defaults (a malformed value also gives the defaults)."""
    text = env.get(LIMITS_ENV, "").strip()
    if not text:
        return JoinLimits()
    try:
        address, klass = text.split(",")
        return JoinLimits(_bucket(address), _bucket(klass))
    except ValueError:
        return JoinLimits()


@dataclass
class JoinLimiter:
    """Takes a token for a new student from the class's bucket and the source address's bucket, both or neither,
    in one transaction (safe across replicas: SQLite's write lock, PostgreSQL's row locks)."""

    storage: Storage
    limits: JoinLimits = field(default_factory=JoinLimits)
    clock: Callable[[], float] = field(default=lambda: time.time())  # looked up per call (tests freeze it)

    def take(self, class_id: int, address: str) -> float:
        """0 when the join may go ahead (a token taken from each bucket), else the seconds to wait (none taken)."""
        now = self.clock()
        pairs = ((f"class:{class_id}", self.limits.klass), (f"ip:{address[:150]}", self.limits.address))
        with self.storage.writing() as conn:
            for key, b in pairs:  # start each bucket full; a row that exists is left as it is
                conn.execute(dialect_insert(self.storage.engine, join_buckets).values(
                    key=key, tokens=b.burst, updated_at=now).on_conflict_do_nothing(index_elements=["key"]))
            levels, waits = {}, []
            for key, b in pairs:  # SELECT … FOR UPDATE on PostgreSQL; SQLite holds the write lock already
                row = conn.execute(select(join_buckets.c.tokens, join_buckets.c.updated_at)
                                   .where(join_buckets.c.key == key).with_for_update()).one()
                level = min(b.burst, row.tokens + max(0.0, now - row.updated_at) * b.rate)
                levels[key] = level
                if level < 1.0:
                    waits.append((1.0 - level) / b.rate)
            if waits:
                return max(waits)
            for key, _b in pairs:
                conn.execute(join_buckets.update().where(join_buckets.c.key == key).values(
                    tokens=levels[key] - 1.0, updated_at=now))
            # buckets untouched for an hour are full again: forget them
            conn.execute(join_buckets.delete().where(join_buckets.c.updated_at < now - PRUNE_AFTER_S))
        return 0.0

    def level(self, key: str, bucket: Bucket) -> float:
        """A bucket's tokens now (full when unknown): for tests and the benchmark."""
        now = self.clock()
        with self.storage.reading() as conn:
            row = conn.execute(select(join_buckets).where(join_buckets.c.key == key)).first()
        return bucket.burst if row is None else min(bucket.burst, row.tokens + (now - row.updated_at) * bucket.rate)

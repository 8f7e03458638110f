"""The teacher's password: where it comes from, a constant-time check, and a back-off for wrong tries kept in the
class database (per source, decaying)."""

from __future__ import annotations

import hmac
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from sqlalchemy import func, select

from mha_core.classroom.schema import limiter
from mha_core.classroom.storage import Storage, dialect_insert

PASSWORD_ENV = "MHA_TEACHER_PASSWORD"
PASSWORD_SECRET = "teacher_password"


def configured_password(env: Mapping[str, str], secrets: Mapping[str, object]) -> str | None:
    """The password from the environment, else from Streamlit secrets; None when neither sets one."""
    value = env.get(PASSWORD_ENV) or secrets.get(PASSWORD_SECRET)
    return value if isinstance(value, str) and value else None


def password_matches(given: str, expected: str) -> bool:
    """Whether the typed password is the configured one, compared in constant time."""
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


@dataclass(frozen=True)
class Policy:
    """How one kind of source is limited: ``free`` wrong tries, then base·2ⁿ seconds (capped) before the next
    check; one wrong try is forgiven every ``leak`` seconds (decay), and the count never exceeds ``ceiling``."""

    free: float = 3.0
    base: float = 2.0
    cap: float = 60.0
    leak: float = 60.0
    ceiling: float = 16.0

    def back_off(self, failures: float) -> float:
        """Seconds to block after a wrong try that brought the count to ``failures`` (0 while free)."""
        over = math.ceil(failures - self.free - 1e-9)
        return 0.0 if over <= 0 else min(self.cap, self.base * 2 ** (over - 1))


# A session is cheap to make (reload), so the limit that holds is the one per source address; it is short
# (capped at SOURCE.cap seconds) so that a student guessing on the teacher's network cannot keep the teacher out.
SESSION = Policy(free=3, base=2.0, cap=60.0, leak=60.0, ceiling=12)
SOURCE = Policy(free=10, base=1.0, cap=10.0, leak=30.0, ceiling=20)
PRUNE_AFTER_S = 3600.0  # rows untouched this long (and not blocking) are deleted: the table cannot grow forever
_POLICIES = MappingProxyType({"session": SESSION, "ip": SOURCE})


@dataclass(frozen=True)
class Attempt:
    """What a try at the password gave: in, or not (``wait`` > 0: refused unchecked, try again in that long)."""

    ok: bool
    wait: float


@dataclass
class RateLimiter:
    """Back-off for wrong passwords per source (``"ip:<address>"``, ``"session:<id>"``), kept in the class
    database so that no client can reset it (a cache clear) and every replica sees the same counts.

    A try is allowed only when none of its keys is blocked; only checked tries count (a refused one changes
    nothing), counts leak away with time, and a right password forgets the session's and the source's counts.
    Wall-clock time: replicas share it.
    """

    storage: Storage
    clock: Callable[[], float] = field(default=lambda: time.time())  # looked up per call (tests freeze it)
    policies: Mapping[str, Policy] = field(default_factory=lambda: _POLICIES)

    def policy(self, key: str) -> Policy:
        """The policy for a key, by its prefix (``ip:``, ``session:``); the session's for anything else."""
        return self.policies.get(key.split(":", 1)[0], SESSION)

    def wait(self, *keys: str) -> float:
        """Seconds until a try is allowed for all ``keys`` (0 when allowed now)."""
        now = self.clock()
        with self.storage.reading() as conn:
            ends = conn.execute(select(limiter.c.blocked_until).where(limiter.c.key.in_(keys))).scalars().all()
        return max(0.0, max(ends, default=0.0) - now)

    def failures(self, key: str) -> float:
        """The key's wrong tries now, after decay (0 for an unknown key)."""
        now = self.clock()
        with self.storage.reading() as conn:
            row = conn.execute(select(limiter).where(limiter.c.key == key)).first()
        return 0.0 if row is None else self._decayed(row.failures, row.updated_at, now, self.policy(key))

    @staticmethod
    def _decayed(failures: float, updated_at: float, now: float, p: Policy) -> float:
        return max(0.0, failures - max(0.0, now - updated_at) / p.leak)

    def failed(self, key: str, policy: Policy | None = None) -> float:
        """Count a wrong try for ``key`` (compare-and-set, safe across replicas); the seconds it is blocked now."""
        p = policy or self.policy(key)
        for _ in range(10):
            now = self.clock()
            with self.storage.reading() as conn:
                row = conn.execute(select(limiter).where(limiter.c.key == key)).first()
            count = min(p.ceiling, 1.0 + (0.0 if row is None else self._decayed(row.failures, row.updated_at, now, p)))
            block = p.back_off(count)
            until = max(now + block, 0.0 if row is None else row.blocked_until)
            values = {"failures": count, "blocked_until": until, "updated_at": now}
            if row is None:
                stmt = dialect_insert(self.storage.engine, limiter).values(key=key, version=1, **values) \
                    .on_conflict_do_nothing(index_elements=["key"]).returning(limiter.c.version)
            else:
                stmt = (limiter.update().where(limiter.c.key == key, limiter.c.version == row.version)
                        .values(version=row.version + 1, **values).returning(limiter.c.version))
            with self.storage.writing() as conn:
                if conn.execute(stmt).first() is not None:
                    conn.execute(limiter.delete().where(limiter.c.updated_at < now - PRUNE_AFTER_S,
                                                        limiter.c.blocked_until < now))
                    return block
        raise RuntimeError("the limiter row kept changing under us")

    def succeeded(self, *keys: str) -> None:
        """Forget the wrong tries (and any back-off) of every key given (a right password)."""
        with self.storage.writing() as conn:
            conn.execute(limiter.delete().where(limiter.c.key.in_(keys)))

    def attempt(self, matches: Callable[[], bool], source: str, session: str) -> Attempt:
        """One try at the password from ``session`` at ``source``: refused unchecked while either is backing off;
        a wrong password counts for both; a right one clears both.

        Clearing the source matters on a shared address (a school's NAT): students' wrong tries there would
        otherwise stay counted after the teacher got in, so one more wrong try put the address straight back
        into back-off and the teacher's next login (a reload, the presenter's window) was refused again. Brute
        force stays bounded: only a right password clears, and whoever knows it needs no guessing.
        """
        wait = self.wait(source, session)
        if wait > 0:  # refused unchecked: it costs nothing and tells nothing
            return Attempt(False, wait)
        if matches():
            self.succeeded(source, session)
            return Attempt(True, 0.0)
        self.failed(session)
        self.failed(source)
        return Attempt(False, 0.0)

    def rows(self) -> int:
        """How many sources the table remembers (bounded: idle ones are pruned)."""
        with self.storage.reading() as conn:
            return conn.execute(select(func.count()).select_from(limiter)).scalar_one()

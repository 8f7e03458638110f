"""The teacher's password: where it comes from, a constant-time check, and a back-off for wrong tries."""

from __future__ import annotations

import hmac
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

PASSWORD_ENV = "MHA_TEACHER_PASSWORD"
PASSWORD_SECRET = "teacher_password"


def configured_password(env: Mapping[str, str], secrets: Mapping[str, object]) -> str | None:
    """The password from the environment, else from Streamlit secrets; None when neither sets one."""
    value = env.get(PASSWORD_ENV) or secrets.get(PASSWORD_SECRET)
    return value if isinstance(value, str) and value else None


def password_matches(given: str, expected: str) -> bool:
    """Whether the typed password is the configured one, compared in constant time."""
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


@dataclass
class _Entry:
    failures: int = 0
    blocked_until: float = 0.0


@dataclass
class RateLimiter:
    """Exponential back-off per key: ``free`` wrong tries, then base·2ⁿ seconds (capped) before the next.

    Thread-safe; one instance is shared by every session (kept by ``st.cache_resource``). Keys are e.g.
    ``"session:<id>"`` and ``"global"``; a try is allowed only when none of its keys is blocked.
    """

    free: int = 3
    base: float = 2.0
    cap: float = 300.0
    clock: Callable[[], float] = time.monotonic
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _entries: dict[str, _Entry] = field(default_factory=dict, repr=False)

    def wait(self, *keys: str) -> float:
        """Seconds until a try is allowed for all ``keys`` (0 when allowed now)."""
        now = self.clock()
        with self._lock:
            ends = [e.blocked_until for k in keys if (e := self._entries.get(k)) is not None]
        return max(0.0, max(ends, default=0.0) - now)

    def failed(self, key: str, free: int | None = None) -> None:
        """Count a wrong try for ``key`` and block it for the next back-off step once past the free ones."""
        now = self.clock()
        allowed = self.free if free is None else free
        with self._lock:
            entry = self._entries.setdefault(key, _Entry())
            entry.failures += 1
            over = entry.failures - allowed
            if over > 0:
                entry.blocked_until = now + min(self.cap, self.base * 2 ** (over - 1))

    def succeeded(self, key: str) -> None:
        """Forget ``key``'s wrong tries (a right password)."""
        with self._lock:
            self._entries.pop(key, None)

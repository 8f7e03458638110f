"""Class mode's shared resources: the class database, the wrong-password limiter over it, and where a request
comes from (the limiter's per-source key).

Everything a class shares (classes, members, answers, quiz progress, the limiter's counts, the class's switches)
is in the database, so any replica can serve any request and no client can reset it: the only cached object is
the engine (a cache clear opens a new one).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import streamlit as st

from mha_core import classroom  # its store's modules (and SQLAlchemy) are imported when a page first needs one
from mha_core.classroom.config import database_url

if TYPE_CHECKING:
    from mha_core.classroom import JoinLimiter, RateLimiter, Storage

PROXIES_ENV = "MHA_TRUSTED_PROXIES"  # comma-separated addresses of load balancers whose X-Real-IP is believed


class LazySecrets(Mapping[str, object]):
    """Streamlit's secrets, read on first use: the class store is looked up several times a run (every follower's
    redraw in a live lesson), and reading the secrets costs more than the lookup when the environment already names
    the database."""

    def __init__(self) -> None:
        self._read: Mapping[str, object] | None = None

    def _secrets(self) -> Mapping[str, object]:
        if self._read is None:
            self._read = streamlit_secrets()
        return self._read

    def __getitem__(self, key: str) -> object:
        return self._secrets()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._secrets())

    def __len__(self) -> int:
        return len(self._secrets())


def streamlit_secrets() -> Mapping[str, object]:
    """Streamlit secrets, or nothing when there is no secrets file (never an exception)."""
    try:
        return dict(st.secrets)
    except Exception:  # noqa: BLE001 - a missing or unreadable secrets file means "no secrets"
        return {}


def _dispose(store: Storage) -> None:
    """Close a store's connections when its cache entry goes."""
    store.dispose()


@st.cache_resource(show_spinner=False, on_release=_dispose)
def _storage(url: str) -> Storage:
    """The engine (a connection pool) per URL: the only cached object, and it holds no data."""
    return classroom.Storage.open(url)


def storage() -> Storage:
    """The class store for the configured URL, schema created or migrated on first use (DatabaseError if down)."""
    return _storage(store_url())


def store_url() -> str:
    """The configured class store's URL (what ``storage`` opens)."""
    return database_url(os.environ, LazySecrets())


def limiter() -> RateLimiter:
    """Wrong-password back-off per source, in the database (shared by every session and replica)."""
    return classroom.RateLimiter(storage())


def join_limiter() -> JoinLimiter:
    """New students per class and per source address, in the database (limits: MHA_JOIN_LIMITS or defaults)."""
    return classroom.JoinLimiter(storage(), classroom.join_limits(os.environ))


def source_address() -> str:
    """Where the request comes from: the peer's address, or the load balancer's X-Real-IP when the peer is one
    of ``MHA_TRUSTED_PROXIES`` (only then: anyone else could write that header)."""
    try:
        peer, forwarded = st.context.ip_address, st.context.headers.get("X-Real-IP")
    except Exception:  # noqa: BLE001 - no browser context
        peer, forwarded = None, None
    peer = peer.strip()[:64] if isinstance(peer, str) else ""            # AppTest gives no address
    forwarded = forwarded.strip()[:64] if isinstance(forwarded, str) else ""
    trusted = {p.strip() for p in os.environ.get(PROXIES_ENV, "").split(",") if p.strip()}
    if forwarded and peer in trusted:
        return forwarded
    return peer or "unknown"

"""The class store's two backends for tests: a fresh SQLite file, or the CI's PostgreSQL emptied before and after."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from mha_core.classroom import Storage, sqlite_url
from mha_core.classroom.schema import metadata

PG_ENV = "MHA_TEST_DATABASE_URL"
BACKENDS = ("sqlite", "postgresql")


def pg_url() -> str:
    """The test PostgreSQL's URL; a failure in CI when it is missing, else a skip with the reason."""
    url = os.environ.get(PG_ENV)
    if not url:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must test PostgreSQL, but {PG_ENV} is unset (source tests/ci_postgres.sh in .ci/run)")
        pytest.skip(f"PostgreSQL variant: set {PG_ENV} (source tests/ci_postgres.sh starts a local server)")
    return worker_url(url, os.environ.get("PYTEST_XDIST_WORKER", ""))


def worker_url(url: str, worker: str) -> str:
    """The database of this xdist worker ("gw0" -> mha_test_gw0, made by tests/ci_postgres.sh): the tests empty
    their database before and after, so two workers must never share one."""
    if not worker:
        return url
    parsed = make_url(url)
    return parsed.set(database=f"{parsed.database}_{worker}").render_as_string(hide_password=False)


def _drop_all(url: str) -> None:
    s = Storage.open(url)
    metadata.drop_all(s.engine)
    s.dispose()


@contextlib.contextmanager
def empty_database(backend: str, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database on ``backend`` (PostgreSQL's tables dropped before and after)."""
    if backend == "sqlite":
        yield sqlite_url(tmp_path / "data" / "class.sqlite3")
        return
    url = pg_url()
    _drop_all(url)
    try:
        yield url
    finally:
        _drop_all(url)


def old_schema(engine, script: str) -> None:  # noqa: ANN001 - an SQLAlchemy Engine
    """Build a database as an older version left it: ``script``'s statements (``{serial}`` is the backend's
    auto-increment key) in one transaction."""
    from sqlalchemy import text

    serial = "SERIAL PRIMARY KEY" if engine.dialect.name == "postgresql" else "INTEGER PRIMARY KEY"
    with engine.begin() as conn:
        for stmt in script.format(serial=serial).split(";"):
            if stmt.strip():
                conn.execute(text(stmt))

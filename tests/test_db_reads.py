"""Reads travel light (mha_core.classroom.db): no transaction around a read (no BEGIN and ROLLBACK to the server),
writes still one transaction each, and PostgreSQL's pooled connections pinged only after sitting idle, yet replaced
when the server closed them. Each read of a following student's redraw used to cost four round trips (ping, BEGIN,
the query, ROLLBACK) with the class's turn held (issue 26)."""

from __future__ import annotations

import contextlib

from sqlalchemy import event, text

from mha_core.classroom import db
from tests.dbhelpers import pg_url


def _in_transaction(dbapi_conn) -> bool:  # noqa: ANN001 - sqlite3 or psycopg connection
    info = getattr(dbapi_conn, "info", None)
    if info is not None and hasattr(info, "transaction_status"):  # psycopg
        import psycopg.pq
        return info.transaction_status != psycopg.pq.TransactionStatus.IDLE
    return dbapi_conn.in_transaction  # sqlite3


def test_a_read_opens_no_transaction_and_a_write_still_does(store):
    info = store.create_class()
    statements: list[str] = []
    event.listen(store.engine, "before_cursor_execute", lambda *a: statements.append(a[2].split()[0].upper()))
    with store.reading() as conn:
        conn.execute(text("SELECT 1")).all()
        assert not _in_transaction(conn.connection.dbapi_connection)
    assert not store.was_removed(info.id, "someone")
    assert "BEGIN" not in statements and statements.count("SELECT") == 2
    with store.writing() as conn:
        conn.execute(text("SELECT 1")).all()
        assert _in_transaction(conn.connection.dbapi_connection)


def test_postgres_pings_a_pooled_connection_only_after_it_sat_idle(monkeypatch):
    store = db.Database(db.make_engine(pg_url()))
    pings: list[object] = []
    real = store.engine.dialect.do_ping
    monkeypatch.setattr(store.engine.dialect, "do_ping", lambda c: pings.append(c) or real(c))
    try:
        with store.reading() as conn:  # a new connection: pinged (it has never been used)
            conn.execute(text("SELECT 1"))
        with store.reading() as conn:  # just returned: trusted
            conn.execute(text("SELECT 1"))
        assert len(pings) == 1
        monkeypatch.setattr(db, "PING_IDLE_S", 0.0)  # every connection now counts as idle
        with store.reading() as conn:
            conn.execute(text("SELECT 1"))
        assert len(pings) == 2
    finally:
        store.dispose()


def test_postgres_replaces_a_connection_the_server_closed_while_it_sat_idle(monkeypatch):
    """What pool_pre_ping gave: a restarted server (here: its backends terminated) costs no failed read."""
    store, admin = db.Database(db.make_engine(pg_url())), db.make_engine(pg_url())
    try:
        with store.reading() as conn:
            pid = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
        with admin.connect() as conn:
            assert conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid}).scalar_one()
        monkeypatch.setattr(db, "PING_IDLE_S", 0.0)
        with store.reading() as conn:
            assert conn.execute(text("SELECT pg_backend_pid()")).scalar_one() != pid
    finally:
        store.dispose()
        admin.dispose()


def test_postgres_recovers_when_the_server_closed_a_connection_used_a_moment_ago():
    """The other side of the trade: a connection returned within PING_IDLE_S is used without a ping, so a server
    that closed it in between may fail that one read (a DatabaseError, which the page reports); the next works."""
    store, admin = db.Database(db.make_engine(pg_url())), db.make_engine(pg_url())
    try:
        with store.reading() as conn:
            pid = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
        with admin.connect() as conn:
            conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        with contextlib.suppress(db.DatabaseError), store.reading() as conn:
            conn.execute(text("SELECT 1"))
        with store.reading() as conn:
            assert conn.execute(text("SELECT 1")).scalar_one() == 1
    finally:
        store.dispose()
        admin.dispose()

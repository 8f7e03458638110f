"""The class database underneath the store: the engine (SQLite with WAL and a busy timeout, or PostgreSQL with
timeouts), driver failures turned into ``DatabaseError``, and ``Database``: connections for reads and queued write
transactions, with the SQLite file's identity checked before every statement (so nothing is "stored" into a file
deleted or replaced under the running app)."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Self

from sqlalchemy import Connection, Engine, create_engine, event, exc
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url

from mha_core.classroom.errors import DatabaseError
from mha_core.classroom.rows import Member
from mha_core.classroom.schema import migrate
from mha_core.errors import LabError

BUSY_TIMEOUT_MS = 5000
WRITE_QUEUE_S = 30.0  # how long a write waits for its turn among this process's writers (SQLite)
_IMMEDIATE = "mha_sqlite_immediate"  # execution option: this transaction writes
_READ = "mha_sqlite_read"  # execution option: SQLite reads without a BEGIN (each statement its own snapshot)
PG_TIMEOUT_S = 2.0  # PostgreSQL connect and statement timeout: a quiz click waits at most about this long
PING_IDLE_S = 5.0  # a pooled PostgreSQL connection unused this long is pinged before it is used again


def utc_now() -> datetime:
    """Now, timezone-aware (both databases store the stamps alike)."""
    return datetime.now(UTC)


def make_engine(url: str, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> Engine:
    """An engine for any SQLAlchemy URL; SQLite files get their folder, WAL journal and a busy timeout,
    PostgreSQL a connect and a statement timeout of ``PG_TIMEOUT_S`` (a silent server costs seconds, not minutes)."""
    u = make_url(url)
    if u.get_backend_name() != "sqlite":
        args: dict[str, object] = {}
        if u.get_backend_name() == "postgresql":
            ms = int(PG_TIMEOUT_S * 1000)
            args = {"connect_timeout": int(PG_TIMEOUT_S),
                    "options": f"-c statement_timeout={ms} -c lock_timeout={ms}"}
        engine = create_engine(u, pool_size=10, max_overflow=20, pool_timeout=WRITE_QUEUE_S, connect_args=args)
        _ping_when_idle(engine)
        return engine
    if u.database and u.database != ":memory:":
        Path(u.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(u, pool_size=10, max_overflow=20, pool_timeout=20,
                           connect_args={"timeout": busy_timeout_ms / 1000, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn, _record) -> None:  # noqa: ANN001 - DB-API connection
        dbapi_conn.isolation_level = None  # the driver's own implicit BEGIN off: "begin" below issues it
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        # A write transaction takes the write lock up front (BEGIN IMMEDIATE), so it waits on the busy timeout;
        # a deferred one that reads first and then writes fails at once with "database is locked" when another
        # writer committed in between (SQLite cannot upgrade a stale snapshot).
        options = conn.get_execution_options()
        if not options.get(_READ):
            conn.exec_driver_sql("BEGIN IMMEDIATE" if options.get(_IMMEDIATE) else "BEGIN")

    return engine


def _ping_when_idle(engine: Engine) -> None:
    """Check a pooled connection before use only when it sat unused for PING_IDLE_S (a restarted database has
    closed it), instead of on every checkout (``pool_pre_ping``): a round trip to the server per read, taken while a
    following student's redraw holds its turn. A connection that fails its ping is replaced, as pre-ping does."""

    @event.listens_for(engine, "checkin")
    def _returned(_dbapi_conn, record) -> None:  # noqa: ANN001 - the pool's record
        record.info["mha_returned"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checkout(dbapi_conn, record, _proxy) -> None:  # noqa: ANN001 - DB-API connection, the pool's record
        returned = record.info.get("mha_returned")
        if returned is not None and time.monotonic() - returned < PING_IDLE_S:
            return
        try:
            engine.dialect.do_ping(dbapi_conn)
        except Exception as err:  # noqa: BLE001 - any failure: the pool drops it and checks out another
            raise exc.DisconnectionError() from err


def gone(member: Member) -> LabError:
    """The member's class (or their row in it) is no longer in the database."""
    return LabError("class_gone", code=member.code)


def lost() -> DatabaseError:
    """The tables (or the SQLite file) are gone under the running app."""
    return DatabaseError("class_db_lost")


@contextlib.contextmanager
def translated() -> Iterator[None]:
    """Turn driver failures into DatabaseError: busy (locked), lost (tables gone) or unavailable (the rest)."""
    try:
        yield
    except (exc.OperationalError, exc.InterfaceError, exc.TimeoutError, exc.ProgrammingError) as err:
        text = str(err).lower()
        if "no such table" in text or "undefinedtable" in text or ("relation" in text and "does not exist" in text):
            raise lost() from err
        if isinstance(err, exc.ProgrammingError):
            raise
        if "locked" in text or "busy" in text:
            raise DatabaseError("class_db_busy") from err
        raise DatabaseError("class_db_unavailable") from err


def dialect_insert(engine: Engine, table):  # noqa: ANN001, ANN202 - a dialect's Insert construct
    name = engine.dialect.name
    if name == "sqlite":
        return sqlite.insert(table)
    if name == "postgresql":
        return postgresql.insert(table)
    raise NotImplementedError(f"class mode supports SQLite and PostgreSQL, not {name}")


def file_identity(engine: Engine) -> tuple[Path, tuple[int, int]] | None:
    """(path, (device, inode)) of a SQLite file database, to notice the file being deleted or replaced."""
    db = engine.url.database
    if engine.dialect.name != "sqlite" or not db or db == ":memory:" or db.startswith("file:"):
        return None
    path = Path(db).resolve()
    st = path.stat()
    return path, (st.st_dev, st.st_ino)


class Database:
    """One database's engine and connections (thread-safe: one engine, a connection per call); ``Storage`` adds
    the tables' methods."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._file = file_identity(engine)
        # SQLite: this process's writers queue here, in Python, rather than in SQLite's busy handler, which polls
        # and lets 50 eager writers starve one past its timeout; the busy timeout then only arbitrates between
        # processes. PostgreSQL locks rows itself.
        self._write_turn = threading.Lock() if engine.dialect.name == "sqlite" else None
        # SQLite's driver keeps its own BEGIN off (make_engine), so a read skips ours; elsewhere the driver's
        # autocommit (SQLite's isolation level is left alone: SQLAlchemy would turn the driver's BEGIN back on).
        self._read_options = {_READ: True} if engine.dialect.name == "sqlite" else {"isolation_level": "AUTOCOMMIT"}

    @classmethod
    def open(cls, url: str, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> Self:
        """Connect and create or migrate the schema (DatabaseError if the database is unusable)."""
        engine = make_engine(url, busy_timeout_ms)
        try:
            with translated():
                migrate(engine)
        except DatabaseError:
            engine.dispose()
            raise
        return cls(engine)

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def check(self) -> None:
        """DatabaseError ``class_db_lost`` when the SQLite file opened was deleted or replaced since."""
        if self._file is None:
            return
        path, ident = self._file
        try:
            st = os.stat(path)
        except OSError:
            raise lost() from None
        if (st.st_dev, st.st_ino) != ident:
            raise lost()

    @contextlib.contextmanager
    def reading(self) -> Iterator[Connection]:
        """A connection for reads, after the file check; driver failures become DatabaseError. No transaction is
        opened: each statement reads what is committed when it runs, as PostgreSQL's READ COMMITTED gives a
        statement in a transaction anyway, and no BEGIN and ROLLBACK travel to the server around each read."""
        self.check()
        with translated(), self.engine.connect().execution_options(**self._read_options) as conn:
            yield conn

    @contextlib.contextmanager
    def writing(self) -> Iterator[Connection]:
        """A transaction (committed on leaving), after the file check; driver failures become DatabaseError."""
        self.check()
        with self._turn(), translated(), self.engine.connect().execution_options(**{_IMMEDIATE: True}) as conn, \
                conn.begin():
            yield conn

    @contextlib.contextmanager
    def _turn(self) -> Iterator[None]:
        """Wait for this process's write turn (SQLite only); DatabaseError if it does not come in WRITE_QUEUE_S."""
        if self._write_turn is None:
            yield
            return
        if not self._write_turn.acquire(timeout=WRITE_QUEUE_S):
            raise DatabaseError("class_db_busy")
        try:
            yield
        finally:
            self._write_turn.release()

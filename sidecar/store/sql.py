"""SQL on either engine, one way: `?` placeholders, async, a transaction or a read per block.

    async with database.transaction("answer") as db:
        row = await db.fetchrow("SELECT ... WHERE session_id = ?", (session_id,))

SQLite runs synchronously under the async surface (its calls take microseconds; nothing
inside a SQLite block may await real I/O, so a block never yields the event loop).
PostgreSQL runs on an asyncpg pool: bounded in size, a timeout on taking a connection and
on every statement, broken connections replaced by the pool on the next use.

Failures reach callers as two exceptions only: StoreUnavailable (the database cannot be
reached or used) and StoreConflict (a unique key or a serialisation failure: another
writer got there first). Each block is timed and its failures counted by operation.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Protocol

from sidecar.observability.metrics import Metrics
from sidecar.store.dsn import masked
from sidecar.store.errors import StoreConflict, StoreUnavailable

log = logging.getLogger("sidecar.store")

Row = Sequence[Any]


class Executor(Protocol):
    async def fetch(self, sql: str, args: Sequence[object] = ()) -> list[Row]: ...

    async def fetchrow(self, sql: str, args: Sequence[object] = ()) -> Row | None: ...

    async def execute(self, sql: str, args: Sequence[object] = ()) -> int:
        """Rows changed."""
        ...

    async def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None: ...


class Block(Protocol):
    async def __aenter__(self) -> Executor: ...

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class Database(Protocol):
    engine: str  # "sqlite" or "postgresql"
    # Other processes write the same rows: no in-memory copy of a shared fact may answer
    # without being checked against the store.
    shared: bool
    timing: Timing

    def transaction(self, op: str) -> Block: ...

    def reading(self, op: str) -> Block:
        """Reads, or one write statement (atomic by itself): no transaction around it."""
        ...

    async def ping(self) -> None: ...

    async def reset(self) -> None:
        """Replace every pooled connection (they may all have died with the server)."""
        ...


class Timing:
    """Per-operation duration and error series, looked up once per name. `on_unavailable`
    hears of every failure to reach the store (the server's health entry follows it)."""

    def __init__(self, metrics: Metrics | None) -> None:
        self._metrics = metrics
        self._seconds: dict[str, Any] = {}
        self.on_unavailable: Callable[[str], None] | None = None

    def observe(self, op: str, seconds: float) -> None:
        if self._metrics is None:
            return
        child = self._seconds.get(op)
        if child is None:
            child = self._seconds[op] = self._metrics.store_seconds.labels(op=op)
        child.observe(seconds)

    def failed(self, op: str, reason: str) -> None:
        if self._metrics is not None:
            self._metrics.store_errors.labels(op=op, reason=reason).inc()
        if reason == "unavailable" and self.on_unavailable is not None:
            self.on_unavailable(op)


# -- SQLite ------------------------------------------------------------------------------

# Messages of sqlite3.OperationalError that mean "cannot be used now", not a bug in a query.
_SQLITE_UNAVAILABLE = (
    "locked",
    "busy",
    "disk i/o",
    "full",
    "unable to open",
    "readonly",
    "read-only",
    "not a database",
    "malformed",
)


def _sqlite_error(error: BaseException) -> BaseException | None:
    if isinstance(error, sqlite3.IntegrityError):
        return StoreConflict(str(error))
    if isinstance(error, sqlite3.OperationalError):
        text = str(error).lower()
        if any(part in text for part in _SQLITE_UNAVAILABLE):
            return StoreUnavailable(f"the state file cannot be used: {error}")
    if isinstance(error, sqlite3.ProgrammingError) and "closed" in str(error):
        return StoreUnavailable("the state file is closed")
    return None


class _SqliteExecutor:
    __slots__ = ("_db",)

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    async def fetch(self, sql: str, args: Sequence[object] = ()) -> list[Row]:
        return self._db.execute(sql, args).fetchall()

    async def fetchrow(self, sql: str, args: Sequence[object] = ()) -> Row | None:
        row: Row | None = self._db.execute(sql, args).fetchone()
        return row

    async def execute(self, sql: str, args: Sequence[object] = ()) -> int:
        return int(self._db.execute(sql, args).rowcount)

    async def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        if rows:
            self._db.executemany(sql, rows)


class _SqliteBlock:
    __slots__ = ("_database", "_op", "_started", "_write")

    def __init__(self, database: SqliteDatabase, op: str, write: bool) -> None:
        self._database = database
        self._op = op
        self._write = write
        self._started = 0.0

    async def __aenter__(self) -> Executor:
        database = self._database
        self._started = time.perf_counter()
        database.lock.acquire()
        if self._write:
            try:
                database.connection.execute("BEGIN IMMEDIATE")
            except Exception as error:
                database.lock.release()
                translated = _sqlite_error(error)
                if translated is None:
                    raise
                database.timing.failed(self._op, "unavailable")
                raise translated from error
        return database.executor

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        database = self._database
        try:
            if self._write:
                database.connection.execute("ROLLBACK" if error is not None else "COMMIT")
        except Exception as failure:
            error = error or failure
        finally:
            database.lock.release()
            database.timing.observe(self._op, time.perf_counter() - self._started)
        if error is not None:
            translated = _sqlite_error(error)
            if translated is not None:
                reason = "conflict" if isinstance(translated, StoreConflict) else "unavailable"
                database.timing.failed(self._op, reason)
                raise translated from error
            if kind is None:
                raise error  # the commit itself failed


class SqliteDatabase:
    """The state file's one connection (sidecar/state/store.py), seen through `Database`."""

    engine = "sqlite"

    def __init__(
        self,
        connection: sqlite3.Connection,
        lock: threading.Lock,
        metrics: Metrics | None = None,
        shared: bool = False,
    ) -> None:
        self.connection = connection
        self.lock = lock
        self.shared = shared
        self.executor = _SqliteExecutor(connection)
        self.timing = Timing(metrics)

    def transaction(self, op: str) -> Block:
        return _SqliteBlock(self, op, True)

    def reading(self, op: str) -> Block:
        return _SqliteBlock(self, op, False)

    async def ping(self) -> None:
        async with self.reading("ping") as db:
            await db.fetchrow("SELECT 1")

    async def reset(self) -> None:
        """One connection, reopened by nobody: nothing to replace."""


# -- PostgreSQL ----------------------------------------------------------------------------


def _numbered(sql: str) -> str:
    """`?` placeholders as `$1, $2, ...` (our SQL never has a `?` inside a literal)."""
    parts = sql.split("?")
    out = [parts[0]]
    for index, part in enumerate(parts[1:], start=1):
        out.append(f"${index}{part}")
    return "".join(out)


def _pg_error(error: BaseException) -> BaseException | None:
    import asyncpg

    exceptions = asyncpg.exceptions
    if isinstance(
        error, (exceptions.IntegrityConstraintViolationError, exceptions.TransactionRollbackError)
    ):
        return StoreConflict(str(error))
    if isinstance(
        error,
        (
            OSError,
            TimeoutError,
            asyncio.TimeoutError,
            asyncpg.InterfaceError,
            exceptions.PostgresConnectionError,
            exceptions.OperatorInterventionError,
            exceptions.InsufficientResourcesError,
            exceptions.InvalidAuthorizationSpecificationError,
            exceptions.InternalClientError,
        ),
    ):
        return StoreUnavailable(f"PostgreSQL cannot be used: {type(error).__name__}: {error}")
    return None


class _PgExecutor:
    __slots__ = ("_conn", "_sql")

    def __init__(self, conn: Any, sql: dict[str, str]) -> None:
        self._conn = conn
        self._sql = sql

    def _text(self, sql: str) -> str:
        text = self._sql.get(sql)
        if text is None:
            text = self._sql[sql] = _numbered(sql)
        return text

    async def fetch(self, sql: str, args: Sequence[object] = ()) -> list[Row]:
        rows: list[Row] = await self._conn.fetch(self._text(sql), *args)
        return rows

    async def fetchrow(self, sql: str, args: Sequence[object] = ()) -> Row | None:
        row: Row | None = await self._conn.fetchrow(self._text(sql), *args)
        return row

    async def execute(self, sql: str, args: Sequence[object] = ()) -> int:
        status: str = await self._conn.execute(self._text(sql), *args)
        tail = status.rsplit(" ", 1)[-1]
        return int(tail) if tail.isdigit() else 0

    async def executemany(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        if rows:
            await self._conn.executemany(self._text(sql), rows)


class _PgBlock:
    __slots__ = ("_conn", "_database", "_op", "_started", "_tx", "_write")

    def __init__(self, database: PostgresDatabase, op: str, write: bool) -> None:
        self._database = database
        self._op = op
        self._write = write
        self._conn: Any = None
        self._tx: Any = None
        self._started = 0.0

    async def __aenter__(self) -> Executor:
        database = self._database
        self._started = time.perf_counter()
        pool = database.pool
        if pool is None:
            database.timing.failed(self._op, "unavailable")
            raise StoreUnavailable("PostgreSQL is not connected yet")
        database.waiting += 1
        try:
            self._conn = await pool.acquire(timeout=database.timeout)
            if self._write:
                self._tx = self._conn.transaction()
                await self._tx.start()
        except BaseException as error:
            if self._conn is not None:
                await self._release()
            translated = _pg_error(error)
            if translated is None:
                raise
            database.timing.failed(self._op, "unavailable")
            raise translated from error
        finally:
            database.waiting -= 1
        return _PgExecutor(self._conn, database.statements)

    async def _release(self) -> None:
        pool = self._database.pool
        conn, self._conn = self._conn, None
        if pool is None or conn is None:
            return
        try:
            await pool.release(conn)
        except Exception:  # a broken connection: the pool replaces it
            log.debug("releasing a PostgreSQL connection failed", exc_info=True)

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        database = self._database
        try:
            if self._tx is not None:
                if error is None:
                    await self._tx.commit()
                else:
                    try:
                        await self._tx.rollback()
                    except Exception:  # the connection is gone: nothing was committed
                        log.debug("rollback failed", exc_info=True)
        except BaseException as failure:
            error = error or failure
        finally:
            await self._release()
            database.timing.observe(self._op, time.perf_counter() - self._started)
        if error is not None:
            translated = _pg_error(error)
            if translated is not None:
                reason = "conflict" if isinstance(translated, StoreConflict) else "unavailable"
                database.timing.failed(self._op, reason)
                raise translated from error
            if kind is None:
                raise error


class PostgresDatabase:
    """An asyncpg pool of bounded size. `open` connects (and may be retried)."""

    engine = "postgresql"
    shared = True

    def __init__(
        self,
        dsn: str,
        password: str | None,
        metrics: Metrics | None = None,
        pool_size: int = 10,
        timeout: float = 5.0,
    ) -> None:
        self.dsn = dsn
        self._password = password
        self._pool_size = pool_size
        self.timeout = timeout
        self.pool: Any = None
        self.waiting = 0
        self.statements: dict[str, str] = {}
        self.timing = Timing(metrics)
        if metrics is not None:
            metrics.store_pool_waiting.set_function(lambda: self.waiting)
            metrics.store_pool_connections.labels(state="in_use").set_function(self._in_use)
            metrics.store_pool_connections.labels(state="idle").set_function(self._idle)

    def _in_use(self) -> float:
        pool = self.pool
        return 0.0 if pool is None else float(pool.get_size() - pool.get_idle_size())

    def _idle(self) -> float:
        pool = self.pool
        return 0.0 if pool is None else float(pool.get_idle_size())

    async def open(self) -> None:
        """Connect a pool; raises StoreUnavailable (with the reason, never the password)."""
        import asyncpg

        if self.pool is not None:
            return
        try:
            self.pool = await asyncpg.create_pool(
                self.dsn,
                password=self._password,
                # No floor: asyncpg would otherwise reconnect (and log a traceback) in the
                # background while the server is gone; `open` migrates on a connection.
                min_size=0,
                max_size=self._pool_size,
                timeout=self.timeout,  # connecting
                command_timeout=self.timeout,  # every statement
                max_inactive_connection_lifetime=300.0,
            )
        except BaseException as error:
            translated = _pg_error(error)
            if translated is None:
                name = type(error).__name__
                raise StoreUnavailable(
                    f"PostgreSQL at {masked(self.dsn)} cannot be used: {name}: {error}"
                ) from error
            raise translated from error

    def transaction(self, op: str) -> Block:
        return _PgBlock(self, op, True)

    def reading(self, op: str) -> Block:
        return _PgBlock(self, op, False)

    async def ping(self) -> None:
        async with self.reading("ping") as db:
            await db.fetchrow("SELECT 1")

    async def reset(self) -> None:
        if self.pool is not None:
            await self.pool.expire_connections()

    async def close(self) -> None:
        pool, self.pool = self.pool, None
        if pool is not None:
            try:
                await asyncio.wait_for(pool.close(), self.timeout)
            except Exception:
                pool.terminate()

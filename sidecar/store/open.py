"""Choose the store a `--state` value names, and keep track of whether it answers."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

from sidecar.observability.metrics import Metrics
from sidecar.observability.rate_limited_log import RateLimitedLog
from sidecar.state.approvals import OnceAnswer
from sidecar.store.dsn import check_dsn, describe, is_postgres, read_password
from sidecar.store.errors import StateError, StoreUnavailable
from sidecar.store.model import Snapshot, Writes
from sidecar.store.postgres import PostgresStore
from sidecar.store.sql import Database
from sidecar.store.sqlite import SqliteStore

log = logging.getLogger("sidecar.store")


class Store(Protocol):
    """Everything the sidecar persists, behind one interface (both engines)."""

    engine: str
    shared: bool  # other processes write too
    database: Database

    @property
    def describe(self) -> str:
        """What to call it in logs: the SQLite path, or the DSN without its password."""
        ...

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def load_session(self, session_id: str) -> Snapshot: ...

    async def save_session(self, session_id: str, writes: Writes) -> None: ...

    async def take_once(self, session_id: str, answers: list[OnceAnswer]) -> list[bool]: ...

    async def delete_sessions(self, session_ids: list[str]) -> dict[str, dict[str, int]]: ...

    async def prune(self) -> int: ...

    async def flush(self) -> None: ...

    def changed(self, session_id: str) -> None: ...


def open_store(
    state: str,
    metrics: Metrics | None = None,
    password_file: Path | None = None,
    workers: int = 1,
    pool_size: int = 10,
    timeout_seconds: float = 5.0,
) -> SqliteStore | PostgresStore:
    """The store for a `--state` value. SQLite is opened here (raises StateError);
    PostgreSQL connects in `open()`, which may be retried."""
    if is_postgres(state):
        check_dsn(state)
        password = read_password(password_file) if password_file is not None else None
        return PostgresStore(state, password, metrics, pool_size, timeout_seconds)
    if password_file is not None:
        raise StateError("a state password file is only used with a postgresql:// state")
    return SqliteStore(state, metrics, shared=workers > 1)


class StoreHealth:
    """Whether the store answers: told of every failure to reach it, it reports the
    store down (health entry, metric, one log line in a while) and probes it with
    backoff until it answers again; the pool reconnects by itself meanwhile."""

    def __init__(
        self,
        database: Database,
        name: str,
        metrics: Metrics,
        report: Callable[[bool], Awaitable[None]],
        first_delay: float = 0.2,
        max_delay: float = 10.0,
    ) -> None:
        self._database = database
        self._name = name
        self._metrics = metrics
        self._report = report
        self._first_delay = first_delay
        self._max_delay = max_delay
        self._probe: asyncio.Task[None] | None = None
        self._log = RateLimitedLog(log, 30.0)
        self.up = False
        self.down_since = 0.0
        self.reason = ""
        database.timing.on_unavailable = self._failed

    async def opened(self) -> None:
        self.up = True
        self._metrics.store_up.set(1)
        await self._report(True)

    def _failed(self, op: str) -> None:
        if self._probe is not None or not self.up:
            return  # already probing, or not open yet (the opener retries)
        self.up = False
        self.down_since = time.monotonic()
        self._metrics.store_up.set(0)
        self._log.warning(
            "store_down",
            "state store %s cannot be used (in %s); Inspect fails closed and context calls "
            "answer UNAVAILABLE until it answers again",
            self._name,
            op,
        )
        self._probe = asyncio.get_running_loop().create_task(self._until_up())

    async def _until_up(self) -> None:
        await self._report(False)
        delay = self._first_delay
        try:
            while True:
                await asyncio.sleep(delay)
                try:
                    # Connections opened before the loss are dead even if the server is
                    # back: replace them all, then check that one answers.
                    await self._database.reset()
                    await self._database.ping()
                except StoreUnavailable as error:
                    self.reason = str(error)
                    delay = min(delay * 2, self._max_delay)
                    continue
                break
        finally:
            self._probe = None
        self.up = True
        self._metrics.store_up.set(1)
        log.info(
            "state store %s answers again after %.1fs",
            self._name,
            time.monotonic() - self.down_since,
        )
        await self._report(True)

    async def close(self) -> None:
        if self._probe is not None:
            self._probe.cancel()
            await asyncio.gather(self._probe, return_exceptions=True)


__all__ = ["Store", "StoreHealth", "describe", "open_store"]

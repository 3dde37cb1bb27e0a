"""The embedded store: the SQLite state file (`make serve`, sidecar mode, the CLI).

With one server process the store keeps an exact copy of what Inspect needs in memory:
which sessions have anything stored (a session with nothing stored costs no query), and
the snapshots of recent sessions (bounded in bytes). Every write goes to the file first
and then to the copy, so the copy is never ahead of the file.

One more thing only this mode does: an Inspect's repetition streak (every Inspect
records one) does not wait for the file; what else it records (approval questions, taint,
facts) is written at once, in one transaction. The copy has the streak at once; the
file gets it within a second (`flush`, which the server calls every second, and before
anything else is written, deleted or pruned). A kill -9 may lose the last second of
streak counts, nothing else.

With several workers (`--workers N` on one file) the copy is off: every Inspect reads
the file (a few small queries), WAL lets readers and the writer work together, and the
busy timeout makes a writer wait its turn.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence

from sidecar.observability.metrics import Metrics
from sidecar.state.approvals import OnceAnswer
from sidecar.state.store import StateStore
from sidecar.store.base import STREAK_UPSERT, SqlStateStore, load_rows, save_rows
from sidecar.store.model import Snapshot, StoredStreak, StreakWrite, Writes
from sidecar.store.sql import SqliteDatabase

FLUSH_AT = 1024  # streaks waiting for the file; past it they are written at once
CACHE_SESSIONS = 100_000
CACHE_BYTES = 64 * 1024 * 1024
_STATE_TABLES = (
    "standing_answers",
    "once_answers",
    "streaks",
    "taints",
    "session_facts",
    "session_tools",
    "session_taint",
)


class SqliteStore(SqlStateStore):
    engine = "sqlite"
    database: SqliteDatabase

    def __init__(self, path: str, metrics: Metrics | None = None, shared: bool = False) -> None:
        """Opens the file (migrations included) at once; raises StateError."""
        self.file = StateStore(path)
        self.path = path
        self.database = SqliteDatabase(self.file.connection, self.file.lock, metrics, shared)
        self.shared = shared
        self._cache: OrderedDict[str, Snapshot] = OrderedDict()
        self._weights: dict[str, int] = {}
        self._cache_bytes = 0
        # Streaks the copy has and the file does not yet (one server process only).
        self._unwritten: dict[str, tuple[StreakWrite, float]] = {}
        # Sessions that may have Inspect state (a superset); None when not kept (shared).
        self._with_state: set[str] | None = None
        if not shared:
            union = " UNION ".join(f"SELECT session_id FROM {t}" for t in _STATE_TABLES)  # noqa: S608
            with self.file.reading() as db:
                self._with_state = {str(r[0]) for r in db.execute(union)}

    @property
    def describe(self) -> str:
        return self.path

    async def open(self) -> None:
        """Nothing to wait for: the file was opened by the constructor."""

    async def close(self) -> None:
        await self.flush()
        self.file.close()

    async def flush(self) -> None:
        """Write the streaks only the copy has yet, in one transaction."""
        if not self._unwritten:
            return
        pending, self._unwritten = self._unwritten, {}
        try:
            async with self.database.transaction("flush_streaks") as db:
                await db.executemany(
                    STREAK_UPSERT,
                    [
                        (session, s.tool, s.digest, s.count, at, False, 0)
                        for session, (s, at) in pending.items()
                    ],
                )
        except BaseException:
            for session, unwritten in pending.items():  # kept for the next try
                self._unwritten.setdefault(session, unwritten)
            raise

    # -- Inspect -------------------------------------------------------------------------

    async def load_session(self, session_id: str) -> Snapshot:
        index = self._with_state
        if index is None:
            async with self.database.reading("load_session") as db:
                return await load_rows(db, session_id, shared=True)
        cached = self._cache.get(session_id)
        if cached is not None:
            self._cache.move_to_end(session_id)
            return cached
        if session_id not in index:
            return Snapshot()  # nothing stored: no query
        async with self.database.reading("load_session") as db:
            snapshot = await load_rows(db, session_id, shared=False)
        unwritten = self._unwritten.get(session_id)
        if unwritten is not None:  # newer than the file's
            s = unwritten[0]
            snapshot.streak = StoredStreak(s.tool, s.digest, s.count)
        self._remember(session_id, snapshot)
        return snapshot

    async def save_session(self, session_id: str, writes: Writes) -> None:
        now = time.time()
        index = self._with_state
        if index is not None and writes.streak is not None:
            # One process owns the file: the copy answers, the file follows (module doc).
            # What else the Inspect recorded (questions, taint, facts) is written at once.
            rest = Writes(None, writes.taint, writes.facts, writes.decision_id, writes.questions)
            if rest:
                async with self.database.transaction("save_session") as db:
                    await save_rows(db, session_id, rest, now)
            self._unwritten[session_id] = (writes.streak, now)
            if len(self._unwritten) >= FLUSH_AT:
                await self.flush()
        else:
            self._unwritten.pop(session_id, None)  # what is written now is newer
            async with self.database.transaction("save_session") as db:
                await save_rows(db, session_id, writes, now)
        if index is None or not (writes.streak or writes.taint or writes.facts):
            return
        cached = self._cache.get(session_id)
        if cached is None and session_id not in index:
            # Nothing was stored before: these writes are all there is (RecordDecision
            # would have put the session in the index first).
            cached = Snapshot()
        index.add(session_id)
        if cached is None:
            return
        # The file has it; the copy follows (new objects: readers may hold the old ones).
        if writes.streak is not None:
            s = writes.streak
            cached.streak = StoredStreak(s.tool, "", s.count, live=s.streak)
        if writes.taint is not None and cached.taint is None:
            cached.taint = writes.taint
        if writes.facts:
            cached.facts = {**cached.facts, **{(f.kind, f.key): f for f in writes.facts}}
        self._remember(session_id, cached)  # measured again: it grew (its streak too)

    def once_taken(self, session_id: str, answers: Sequence[OnceAnswer]) -> None:
        cached = self._cache.get(session_id)
        if cached is None:
            return
        used = {(a.decision_id, a.tool_call_id) for a in answers}
        cached.once = {
            key: kept
            for key, waiting in cached.once.items()
            if (kept := [a for a in waiting if (a.decision_id, a.tool_call_id) not in used])
        }

    def changed(self, session_id: str) -> None:
        """Answers, registered tools or injection taint changed: the copy reads the file
        again next time."""
        self._forget_cached(session_id)
        if self._with_state is not None:
            self._with_state.add(session_id)

    def _remember(self, session_id: str, snapshot: Snapshot) -> None:
        weight = snapshot.weight()
        self._cache_bytes += weight - self._weights.get(session_id, 0)
        self._weights[session_id] = weight
        self._cache[session_id] = snapshot
        self._cache.move_to_end(session_id)
        while len(self._cache) > CACHE_SESSIONS or self._cache_bytes > CACHE_BYTES:
            dropped, _ = self._cache.popitem(last=False)
            self._cache_bytes -= self._weights.pop(dropped, 0)

    def _forget_cached(self, session_id: str) -> None:
        if self._cache.pop(session_id, None) is not None:
            self._cache_bytes -= self._weights.pop(session_id, 0)

    @property
    def cache_bytes(self) -> int:
        return self._cache_bytes

    # -- sessions ------------------------------------------------------------------------

    async def delete_sessions(self, session_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """Rows removed per session and table; then the WAL is checkpointed and truncated,
        so no copy of the deleted pages stays in it."""
        for session_id in session_ids:
            self._unwritten.pop(session_id, None)
        removed = await self.delete_rows(session_ids)
        for session_id in session_ids:
            self._forget_cached(session_id)
            if self._with_state is not None:
                self._with_state.discard(session_id)
        with self.file.lock:
            self.file.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return removed

    async def prune(self) -> int:
        await self.flush()
        pruned = await self.prune_streaks()
        for session_id in pruned:
            cached = self._cache.get(session_id)
            if cached is not None:
                cached.streak = None
        return len(pruned)

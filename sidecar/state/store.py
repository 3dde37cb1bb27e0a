"""SQLite state store (WAL, versioned migrations). One connection, used from one event loop."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sidecar.inspection.verdict import Verdict

# Append only: each entry moves the schema one version forward.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE standing_answers (
        session_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        verdict INTEGER NOT NULL,
        decision_id TEXT NOT NULL,
        answered_at REAL NOT NULL,
        PRIMARY KEY (session_id, tool_name)
    );
    CREATE TABLE one_time_answers (
        session_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        verdict INTEGER NOT NULL,
        decision_id TEXT NOT NULL,
        answered_at REAL NOT NULL,
        PRIMARY KEY (session_id, tool_call_id)
    );
    CREATE TABLE answer_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        answer TEXT NOT NULL,
        decision_id TEXT NOT NULL,
        answered_at REAL NOT NULL
    );
    """,
    """
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        provider_managed INTEGER NOT NULL DEFAULT 0,
        context_limit INTEGER NOT NULL DEFAULT 0,
        version INTEGER NOT NULL DEFAULT 0,
        usage_tokens INTEGER NOT NULL DEFAULT 0,
        usage_seq INTEGER NOT NULL DEFAULT 0,
        calibration REAL NOT NULL DEFAULT 1.0,
        recoveries INTEGER NOT NULL DEFAULT 0,
        next_seq INTEGER NOT NULL DEFAULT 1,
        created_at REAL NOT NULL
    );
    CREATE TABLE messages (
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        id TEXT NOT NULL,
        role TEXT NOT NULL,
        kind TEXT NOT NULL,
        response_id TEXT NOT NULL,
        created_at_ms INTEGER NOT NULL,
        user_visible INTEGER NOT NULL,
        agent_visible INTEGER NOT NULL,
        position REAL NOT NULL,
        tokens INTEGER NOT NULL,
        replaces TEXT NOT NULL,
        parts TEXT NOT NULL,
        PRIMARY KEY (session_id, seq),
        UNIQUE (session_id, id)
    );
    """,
)


class StateError(Exception):
    """The state file cannot be used; the message names it."""


log = logging.getLogger("sidecar.state")
# SQLite writes these beside the database; it gives them the database file's mode.
_COMPANIONS = ("-wal", "-shm", "-journal")


def _private_file(path: Path) -> None:
    """The state holds people's answers and every session's history, tool output
    included, in plaintext: its directories are created 0700 and the files 0600,
    whatever the umask. A state file found readable by others is made private."""
    missing: list[Path] = []
    for parent in (path.parent, *path.parent.parents):
        if parent.exists():
            break
        missing.append(parent)
    for directory in reversed(missing):
        directory.mkdir(mode=0o700)
        directory.chmod(0o700)  # mkdir's mode passes through the umask
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        mode = os.fstat(descriptor).st_mode & 0o777
        if mode != 0o600:
            os.fchmod(descriptor, 0o600)
            if mode & 0o077:
                log.warning("%s was readable by other users; made it private (0600)", path)
    finally:
        os.close(descriptor)
    for suffix in _COMPANIONS:
        companion = path.with_name(path.name + suffix)
        try:
            if companion.stat().st_mode & 0o077:
                companion.chmod(0o600)
                log.warning("%s was readable by other users; made it private (0600)", companion)
        except FileNotFoundError:
            pass


def _weight(key: tuple[str, str, str]) -> int:
    return 250 + len(key[1]) + len(key[2])  # the tuple, its strings' headers, the dict slot


class StateStore:
    """Answers are read on every Inspect, so reads go through a bounded in-memory cache.

    The cache is exact because this process is the only writer: one sidecar owns
    one state file (two sidecars sharing a file is not supported). For the same
    reason the set of sessions that have any answer is kept whole in memory: most
    calls come from sessions without answers and then cost no query at all.
    """

    def __init__(
        self, path: str, cache_entries: int = 100_000, cache_bytes: int = 16 * 1024 * 1024
    ) -> None:
        self._cache: OrderedDict[tuple[str, str, str], Verdict | None] = OrderedDict()
        self._answered_sessions: set[str] = set()
        self._cache_entries = cache_entries
        # Keys are client strings of up to 256 characters each: bounded in bytes too.
        self._cache_bytes_limit = cache_bytes
        self._cache_bytes = 0
        try:
            self._open(path)
        except (OSError, sqlite3.Error) as error:
            raise StateError(f"cannot use the state file {path}: {error}") from None

    def _open(self, path: str) -> None:
        if path != ":memory:":
            _private_file(Path(path))
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        self._db.execute("PRAGMA busy_timeout = 5000")
        if path != ":memory:":
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
        self._migrate()
        rows = self._db.execute(
            "SELECT session_id FROM standing_answers UNION SELECT session_id FROM one_time_answers"
        )
        self._answered_sessions = {row[0] for row in rows}

    @property
    def schema_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        with self._lock:
            current = self.schema_version
            if current > len(MIGRATIONS):
                raise StateError(
                    f"state store schema version {current} is newer than this sidecar "
                    f"understands ({len(MIGRATIONS)}); refusing to touch it"
                )
            for version, script in enumerate(MIGRATIONS[current:], start=current + 1):
                self._db.executescript(f"BEGIN; {script}; PRAGMA user_version = {version}; COMMIT;")

    def record_answer(
        self,
        session_id: str,
        tool_name: str,
        tool_call_id: str,
        answer: str,
        verdict: Verdict,
        standing: bool,
        decision_id: str,
    ) -> None:
        now = time.time()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(
                    "INSERT INTO answer_log (session_id, tool_name, tool_call_id, answer, "
                    "decision_id, answered_at) VALUES (?, ?, ?, ?, ?, ?)",
                    (session_id, tool_name, tool_call_id, answer, decision_id, now),
                )
                if standing:
                    self._db.execute(
                        "INSERT OR REPLACE INTO standing_answers VALUES (?, ?, ?, ?, ?)",
                        (session_id, tool_name, int(verdict), decision_id, now),
                    )
                elif tool_call_id:
                    self._db.execute(
                        "INSERT OR REPLACE INTO one_time_answers VALUES (?, ?, ?, ?, ?)",
                        (session_id, tool_call_id, int(verdict), decision_id, now),
                    )
                self._db.execute("COMMIT")
                if standing:
                    self._remember(("standing", session_id, tool_name), verdict)
                elif tool_call_id:
                    self._remember(("once", session_id, tool_call_id), verdict)
                if standing or tool_call_id:
                    self._answered_sessions.add(session_id)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def standing_answer(self, session_id: str, tool_name: str) -> Verdict | None:
        return self._lookup(
            ("standing", session_id, tool_name),
            "SELECT verdict FROM standing_answers WHERE session_id = ? AND tool_name = ?",
        )

    def one_time_answer(self, session_id: str, tool_call_id: str) -> Verdict | None:
        return self._lookup(
            ("once", session_id, tool_call_id),
            "SELECT verdict FROM one_time_answers WHERE session_id = ? AND tool_call_id = ?",
        )

    def _lookup(self, key: tuple[str, str, str], query: str) -> Verdict | None:
        if key[1] not in self._answered_sessions:
            return None
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
            row = self._db.execute(query, key[1:]).fetchone()
            verdict = Verdict(row[0]) if row else None
            self._remember(key, verdict)
            return verdict

    def _remember(self, key: tuple[str, str, str], verdict: Verdict | None) -> None:
        if key not in self._cache:
            self._cache_bytes += _weight(key)
        self._cache[key] = verdict
        self._cache.move_to_end(key)
        while len(self._cache) > self._cache_entries or self._cache_bytes > self._cache_bytes_limit:
            dropped, _ = self._cache.popitem(last=False)
            self._cache_bytes -= _weight(dropped)

    @property
    def cache_bytes(self) -> int:
        """Estimated bytes the answer cache holds."""
        return self._cache_bytes

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE): all of it lands, or none."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._db

    def close(self) -> None:
        with self._lock:
            self._db.close()

"""The SQLite state file (WAL, versioned migrations): one connection per process, used from
one event loop. `sidecar/store/sqlite.py` puts the store interface on top of it."""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from sidecar.store.errors import StateError

__all__ = ["MIGRATIONS", "SESSION_TABLES", "StateError", "StateStore"]

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
    # Context: the calibration's age, the last rewrite of a view, idleness for
    # retention, the view's token sums, an index that reads a session's agent view
    # without its history, and one of the call ids a session used (an Append checks
    # new ones there, without holding the session's history in memory).
    """
    ALTER TABLE sessions ADD COLUMN calibrated_seq INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN rewrite_seq INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN last_active_at REAL NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN view_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE sessions ADD COLUMN result_tokens INTEGER NOT NULL DEFAULT 0;
    UPDATE sessions SET
        last_active_at = created_at,
        view_tokens = (SELECT COALESCE(SUM(tokens), 0) FROM messages
                       WHERE session_id = sessions.id AND agent_visible = 1),
        result_tokens = (SELECT COALESCE(SUM(tokens), 0) FROM messages
                         WHERE session_id = sessions.id AND agent_visible = 1
                         AND role = 'tool' AND kind = 'ordinary');
    CREATE INDEX sessions_by_last_active ON sessions (last_active_at);
    CREATE INDEX messages_agent_view ON messages (session_id, agent_visible, position, seq);
    CREATE TABLE tool_calls (
        session_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (session_id, call_id)
    ) WITHOUT ROWID;
    INSERT OR IGNORE INTO tool_calls (session_id, call_id, seq)
        SELECT m.session_id, json_extract(j.value, '$.id'), m.seq
        FROM messages AS m, json_each(m.parts) AS j
        WHERE json_extract(j.value, '$.t') = 'call';
    """,
    # What a session's calls created, for later calls: downloaded or decoded files,
    # scripts written, secrets staged in files, git remotes added, registries switched.
    """
    CREATE TABLE session_facts (
        session_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        origin TEXT NOT NULL,
        detail TEXT NOT NULL,
        recorded_at REAL NOT NULL,
        PRIMARY KEY (session_id, kind, key)
    );
    """,
    # Approvals bound to what was asked: answers keyed by call id alone were reused by
    # any later call that happened to get the same id, so those rows are dropped.
    """
    DROP TABLE one_time_answers;
    CREATE TABLE approval_questions (
        session_id TEXT NOT NULL,
        decision_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        arguments_digest TEXT NOT NULL,
        asked_at REAL NOT NULL,
        answer TEXT NOT NULL DEFAULT '',
        answered_at REAL,
        PRIMARY KEY (session_id, decision_id, tool_call_id)
    );
    CREATE INDEX approval_questions_by_age ON approval_questions (asked_at);
    CREATE TABLE once_answers (
        session_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        arguments_digest TEXT NOT NULL,
        verdict INTEGER NOT NULL,
        decision_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        answered_at REAL NOT NULL,
        PRIMARY KEY (session_id, decision_id, tool_call_id)
    );
    ALTER TABLE answer_log ADD COLUMN arguments_digest TEXT NOT NULL DEFAULT '';
    CREATE INDEX answer_log_by_session ON answer_log (session_id);
    """,
    # Shared state (issue 12): repetition streaks and session taint leave memory, so that
    # every worker and replica counts and remembers the same.
    """
    CREATE TABLE streaks (
        session_id TEXT PRIMARY KEY,
        tool_name TEXT NOT NULL,
        digest TEXT NOT NULL,
        count INTEGER NOT NULL,
        updated_at REAL NOT NULL
    );
    CREATE INDEX streaks_by_age ON streaks (updated_at);
    CREATE TABLE taints (
        session_id TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        tainted_at REAL NOT NULL
    );
    """,
    # Tool definitions (issue 15): the trusted and the latest definition of each
    # (server, tool), whatever session registered it; the audit of trust changes; which
    # definition each session was given.
    """
    CREATE TABLE tool_definitions (
        server TEXT NOT NULL,
        name TEXT NOT NULL,
        trusted_fingerprint TEXT NOT NULL,
        trusted_definition TEXT NOT NULL,
        latest_fingerprint TEXT NOT NULL,
        latest_definition TEXT NOT NULL,
        present INTEGER NOT NULL,
        first_seen REAL NOT NULL,
        trusted_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (server, name)
    );
    CREATE TABLE tool_trust_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        server TEXT NOT NULL,
        name TEXT NOT NULL,
        event TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        previous_fingerprint TEXT NOT NULL,
        asked_in TEXT NOT NULL,
        at REAL NOT NULL
    );
    CREATE INDEX tool_trust_log_by_tool ON tool_trust_log (server, name);
    CREATE TABLE session_tools (
        session_id TEXT NOT NULL,
        server TEXT NOT NULL,
        name TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        registered_at REAL NOT NULL,
        PRIMARY KEY (session_id, server, name)
    ) WITHOUT ROWID;
    """,
    # Injection-aware sessions (issue 15): messages that made a session untrusted, and
    # tool results a model classifier has not judged yet (or could not).
    """
    CREATE TABLE session_taint (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        source TEXT NOT NULL,
        state TEXT NOT NULL,
        rules TEXT NOT NULL,
        excerpt TEXT NOT NULL,
        at REAL NOT NULL
    );
    CREATE INDEX session_taint_by_session ON session_taint (session_id);
    """,
    # Issue 15 on the store interface: every change of tool_definitions moves this on, so
    # a process holding the records knows when another one changed them.
    """
    CREATE TABLE tool_registry (
        id INTEGER PRIMARY KEY,
        version INTEGER NOT NULL
    );
    INSERT INTO tool_registry (id, version) VALUES (1, 0);
    """,
)

# Every table that holds rows of a session, and the column naming the session.
# Deleting a session (DeleteSession, retention) removes its rows from each of them:
# a new session-keyed table must be added here (a test checks the schema for it).
SESSION_TABLES: tuple[tuple[str, str], ...] = (
    ("messages", "session_id"),
    ("tool_calls", "session_id"),
    ("standing_answers", "session_id"),
    ("approval_questions", "session_id"),
    ("once_answers", "session_id"),
    ("answer_log", "session_id"),
    ("session_facts", "session_id"),
    ("streaks", "session_id"),
    ("taints", "session_id"),
    ("session_tools", "session_id"),
    ("session_taint", "session_id"),
    ("sessions", "id"),
)


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


@contextmanager
def _exclusive(path: str) -> Iterator[None]:
    """Workers opening one file together migrate it one at a time: a lock on the file
    (flock, apart from SQLite's own fcntl locks) held while the version is read and
    moved on."""
    if path == ":memory:":
        yield
        return
    descriptor = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # releases the lock


def _weight(key: tuple[str, str, str]) -> int:
    return 250 + len(key[1]) + len(key[2])  # the tuple, its strings' headers, the dict slot


class StateStore:
    """The state file: one connection, migrations, transactions.

    One sidecar owns one state file: its workers (`--workers`) may share it (WAL, busy
    timeouts; the store then keeps no copy of shared facts in memory), two sidecars may
    not. `sidecar/store/sqlite.py` builds the store interface on it.
    """

    def __init__(self, path: str) -> None:
        self.path = path
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
        # Deleted rows are overwritten with zeros: a deleted session leaves no text behind.
        self._db.execute("PRAGMA secure_delete = ON")
        self._migrate()

    @property
    def connection(self) -> sqlite3.Connection:
        return self._db

    @property
    def lock(self) -> threading.Lock:
        return self._lock

    @property
    def schema_version(self) -> int:
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        with self._lock, _exclusive(self.path):
            if self.path != ":memory:":
                # Under the file lock: workers opening a new file together switched it to
                # WAL at once, and SQLite answers that race "database is locked" at once,
                # without waiting out the busy timeout.
                self._db.execute("PRAGMA journal_mode = WAL")
                self._db.execute("PRAGMA synchronous = NORMAL")
            current = self.schema_version
            if current > len(MIGRATIONS):
                raise StateError(
                    f"state store schema version {current} is newer than this sidecar "
                    f"understands ({len(MIGRATIONS)}); refusing to touch it"
                )
            for version, script in enumerate(MIGRATIONS[current:], start=current + 1):
                self._db.executescript(f"BEGIN; {script}; PRAGMA user_version = {version}; COMMIT;")

    def delete_sessions(self, session_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """Remove each session's rows from every table in SESSION_TABLES, in one
        transaction; rows removed per session and table. Then the write-ahead log is
        checkpointed and truncated, so no copy of the deleted pages stays in it."""
        removed: dict[str, dict[str, int]] = {}
        with self.transaction() as db:
            for session_id in session_ids:
                removed[session_id] = {
                    table: db.execute(
                        f"DELETE FROM {table} WHERE {column} = ?",  # noqa: S608 (constants)
                        (session_id,),
                    ).rowcount
                    for table, column in SESSION_TABLES
                }
        with self._lock:
            # In-memory indexes of these rows (approvals, flow facts) are dropped by their
            # owners' forget hooks, which DeleteSession and retention call.
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return removed

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

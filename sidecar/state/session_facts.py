"""What a session's calls created, kept so that later calls are judged with it.

Attackers split steps across calls precisely because each step alone looks harmless:
download, then chmod, then run; write a script, then run it; stage a secret in a file, then
send the file; add a git remote, then push to it; switch a package registry, then install.
Facts live in the state store (they survive restarts), keyed by session.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import NamedTuple

from sidecar.state.store import StateStore

MAX_DETAIL = 64 * 1024  # content of a script written, kept to judge it when it runs
MAX_FACTS_PER_SESSION = 10_000


class Fact(NamedTuple):
    kind: str  # "file", "tree", "carried", "remote", "registry"
    key: str  # a path, a directory, a remote name, an ecosystem
    origin: str  # an Origin value, or "" where it does not apply
    detail: str = ""  # written content, carried sources (newline-separated), a URL


class SessionFacts:
    """Reads are cheap for the many sessions that have no facts: which sessions do is kept
    in memory (this process is the state file's only writer)."""

    def __init__(self, store: StateStore) -> None:
        self._store = store
        self._lock = threading.Lock()
        with store.reading() as db:
            rows = db.execute("SELECT DISTINCT session_id FROM session_facts").fetchall()
        self._sessions = {row[0] for row in rows}

    def has_any(self, session_id: str) -> bool:
        return session_id in self._sessions

    def record(self, session_id: str, facts: Iterable[Fact]) -> None:
        rows = [
            (session_id, f.kind, f.key, f.origin, f.detail[:MAX_DETAIL], time.time()) for f in facts
        ]
        if not rows:
            return
        with self._store.transaction() as db:
            count = db.execute(
                "SELECT COUNT(*) FROM session_facts WHERE session_id = ?", (session_id,)
            ).fetchone()[0]
            if count + len(rows) > MAX_FACTS_PER_SESSION:
                rows = rows[: max(0, MAX_FACTS_PER_SESSION - count)]
            db.executemany("INSERT OR REPLACE INTO session_facts VALUES (?, ?, ?, ?, ?, ?)", rows)
        with self._lock:
            self._sessions.add(session_id)

    def facts(self, session_id: str, kind: str) -> list[Fact]:
        if session_id not in self._sessions:
            return []
        with self._store.reading() as db:
            rows = db.execute(
                "SELECT kind, key, origin, detail FROM session_facts "
                "WHERE session_id = ? AND kind = ?",
                (session_id, kind),
            ).fetchall()
        return [Fact(*row) for row in rows]

    def fact(self, session_id: str, kind: str, key: str) -> Fact | None:
        if session_id not in self._sessions:
            return None
        with self._store.reading() as db:
            row = db.execute(
                "SELECT kind, key, origin, detail FROM session_facts "
                "WHERE session_id = ? AND kind = ? AND key = ?",
                (session_id, kind, key),
            ).fetchone()
        return Fact(*row) if row else None

    def forget(self, session_id: str) -> bool:
        """Drop a deleted session from memory (DeleteSession removed its rows); True if it
        had facts."""
        with self._lock:
            had = session_id in self._sessions
            self._sessions.discard(session_id)
        return had

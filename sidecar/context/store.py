"""Session storage: an interface, and the SQLite implementation (the same file as the
rest of the state). Messages are never deleted; only their flags change."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from typing import Protocol

from sidecar.context.messages import (
    Kind,
    Message,
    Role,
    SessionState,
    parts_from_json,
    parts_to_json,
)
from sidecar.observability.metrics import Metrics
from sidecar.state.store import StateStore

_LOAD_SESSION = (
    "SELECT id, provider_managed, context_limit, version, usage_tokens, usage_seq, "
    "calibration, recoveries, next_seq FROM sessions WHERE id = ?"
)
_MESSAGE_FIELDS = (
    "SELECT seq, id, role, kind, response_id, created_at_ms, user_visible, agent_visible, "
    "position, tokens, replaces, parts FROM messages "
)
_LOAD_MESSAGES = _MESSAGE_FIELDS + "WHERE session_id = ? ORDER BY position, seq"
_HISTORY_PAGE = (
    _MESSAGE_FIELDS + "WHERE session_id = ? AND user_visible = 1 "
    "AND (position > ? OR (position = ? AND seq > ?)) ORDER BY position, seq LIMIT ?"
)
_INSERT_MESSAGE = (
    "INSERT INTO messages (session_id, seq, id, role, kind, response_id, created_at_ms, "
    "user_visible, agent_visible, position, tokens, replaces, parts) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class SessionStore(Protocol):
    def load(self, session_id: str) -> tuple[SessionState, list[Message]] | None: ...

    def append(self, state: SessionState, messages: Sequence[Message], created: bool) -> None: ...

    def save_state(self, state: SessionState) -> None: ...

    def apply_change(
        self,
        state: SessionState,
        expected_version: int,
        flips: Sequence[Message],
        inserts: Sequence[Message],
    ) -> bool: ...

    def history(
        self, session_id: str, after: tuple[float, int] | None, limit: int
    ) -> list[Message]: ...


class SqliteSessionStore:
    def __init__(self, state: StateStore, metrics: Metrics) -> None:
        self._db = state
        self._metrics = metrics

    def _timed(self, op: str) -> _Timer:
        return _Timer(self._metrics, op)

    def load(self, session_id: str) -> tuple[SessionState, list[Message]] | None:
        with self._timed("load"), self._db.reading() as db:
            row = db.execute(_LOAD_SESSION, (session_id,)).fetchone()
            if row is None:
                return None
            rows = db.execute(_LOAD_MESSAGES, (session_id,)).fetchall()
        return _state(row), [_message(r) for r in rows]

    def append(self, state: SessionState, messages: Sequence[Message], created: bool) -> None:
        with self._timed("append"), self._db.transaction() as db:
            if created:
                db.execute(
                    "INSERT INTO sessions (id, created_at) VALUES (?, ?)", (state.id, time.time())
                )
            db.executemany(_INSERT_MESSAGE, [_row(state.id, m) for m in messages])
            _update_state(db, state)

    def save_state(self, state: SessionState) -> None:
        with self._timed("save_state"), self._db.transaction() as db:
            _update_state(db, state)

    def apply_change(
        self,
        state: SessionState,
        expected_version: int,
        flips: Sequence[Message],
        inserts: Sequence[Message],
    ) -> bool:
        """Flip flags and insert messages atomically, only if nothing changed since
        `expected_version` was read (optimistic concurrency)."""
        with self._timed("apply_change"), self._db.transaction() as db:
            current = db.execute(
                "SELECT version FROM sessions WHERE id = ?", (state.id,)
            ).fetchone()
            if current is None or current[0] != expected_version:
                return False
            db.executemany(
                "UPDATE messages SET user_visible = ?, agent_visible = ? "
                "WHERE session_id = ? AND seq = ?",
                [(int(m.user_visible), int(m.agent_visible), state.id, m.seq) for m in flips],
            )
            db.executemany(_INSERT_MESSAGE, [_row(state.id, m) for m in inserts])
            _update_state(db, state)
            return True

    def history(
        self, session_id: str, after: tuple[float, int] | None, limit: int
    ) -> list[Message]:
        position, seq = after if after is not None else (float("-inf"), 0)
        with self._timed("history"), self._db.reading() as db:
            rows = db.execute(
                _HISTORY_PAGE, (session_id, position, position, seq, limit)
            ).fetchall()
        return [_message(r) for r in rows]


class _Timer:
    def __init__(self, metrics: Metrics, op: str) -> None:
        self._observe = metrics.store_seconds.labels(op=op).observe
        self._started = 0.0

    def __enter__(self) -> None:
        self._started = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self._observe(time.perf_counter() - self._started)


def _update_state(db: sqlite3.Connection, state: SessionState) -> None:
    db.execute(
        "UPDATE sessions SET provider_managed = ?, context_limit = ?, version = ?, "
        "usage_tokens = ?, usage_seq = ?, calibration = ?, recoveries = ?, next_seq = ? "
        "WHERE id = ?",
        (
            int(state.provider_managed), state.context_limit, state.version, state.usage_tokens,
            state.usage_seq, state.calibration, state.recoveries, state.next_seq, state.id,
        ),
    )  # fmt: skip


def _row(session_id: str, m: Message) -> tuple[object, ...]:
    return (
        session_id, m.seq, m.id, m.role.value, m.kind.value, m.response_id, m.created_at_ms,
        int(m.user_visible), int(m.agent_visible), m.position, m.tokens, m.replaces,
        parts_to_json(m.parts),
    )  # fmt: skip


def _state(row: Sequence[object]) -> SessionState:
    return SessionState(
        id=str(row[0]), provider_managed=bool(row[1]), context_limit=int(row[2]),  # type: ignore[call-overload]
        version=int(row[3]), usage_tokens=int(row[4]), usage_seq=int(row[5]),  # type: ignore[call-overload]
        calibration=float(row[6]), recoveries=int(row[7]), next_seq=int(row[8]),  # type: ignore[arg-type, call-overload]
    )  # fmt: skip


def _message(row: Sequence[object]) -> Message:
    seq, id_, role, kind, response_id, created, user, agent, position, tokens, replaces, parts = row
    return Message(
        id=str(id_), role=Role(role), parts=parts_from_json(str(parts)), kind=Kind(kind),
        response_id=str(response_id), created_at_ms=int(created), user_visible=bool(user),  # type: ignore[call-overload]
        agent_visible=bool(agent), seq=int(seq), position=float(position), tokens=int(tokens),  # type: ignore[call-overload, arg-type]
        replaces=str(replaces),
    )  # fmt: skip

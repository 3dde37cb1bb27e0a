"""Session storage: an interface, and the SQLite implementation (the same file as the
rest of the state). Messages are never deleted while their session lives; only their
flags change. Deleting a session removes every row it owns (`StateStore.delete_sessions`)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
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

_SESSION_FIELDS = (
    "id, provider_managed, context_limit, version, usage_tokens, usage_seq, calibration, "
    "recoveries, next_seq, calibrated_seq, rewrite_seq, last_active_at, view_tokens, "
    "result_tokens"
)
_LOAD_SESSION = f"SELECT {_SESSION_FIELDS} FROM sessions WHERE id = ?"  # noqa: S608 (constants)
_MESSAGE_FIELDS = (
    "SELECT seq, id, role, kind, response_id, created_at_ms, user_visible, agent_visible, "
    "position, tokens, replaces, parts FROM messages "
)
# The agent's view only, through the (session_id, agent_visible, position, seq) index:
# a session's hidden history is never read to serve it.
_LOAD_VIEW = _MESSAGE_FIELDS + "WHERE session_id = ? AND agent_visible = 1 ORDER BY position, seq"
# The view from its end: its last group, and the last assistant message.
_VIEW_BACKWARDS = (
    _MESSAGE_FIELDS + "WHERE session_id = ? AND agent_visible = 1 "
    "AND (position < ? OR (position = ? AND seq < ?)) ORDER BY position DESC, seq DESC LIMIT ?"
)
_LAST_ASSISTANT = (
    _MESSAGE_FIELDS + "WHERE session_id = ? AND agent_visible = 1 AND role = 'assistant' "
    "AND kind = 'ordinary' ORDER BY position DESC, seq DESC LIMIT 1"
)
_HISTORY_PAGE = (
    _MESSAGE_FIELDS + "WHERE session_id = ? AND user_visible = 1 "
    "AND (position > ? OR (position = ? AND seq > ?)) ORDER BY position, seq LIMIT ?"
)
_INSERT_MESSAGE = (
    "INSERT INTO messages (session_id, seq, id, role, kind, response_id, created_at_ms, "
    "user_visible, agent_visible, position, tokens, replaces, parts) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


@dataclass(frozen=True, slots=True)
class Change:
    """Everything one call changes in a session, written in one transaction."""

    state: SessionState
    expected_version: int  # the version the change was planned against
    created: bool = False
    appended: Sequence[Message] = ()
    flips: Sequence[Message] = ()  # messages whose flags changed, with the new flags
    inserts: Sequence[Message] = ()  # summaries, notes and stand-ins of the sidecar


@dataclass(frozen=True, slots=True)
class Loaded:
    """What an Append needs of a stored session, without its view: the state, the
    view's last group (calls waiting for results are there) and its last assistant
    message (what a usage report covers)."""

    state: SessionState
    last_group: list[Message]
    last_assistant: Message | None


class SessionStore(Protocol):
    def load(self, session_id: str) -> Loaded | None: ...

    def load_view(self, session_id: str) -> list[Message]:
        """The agent-visible messages, in order."""
        ...

    def exists(self, session_id: str) -> bool: ...

    def existing_ids(self, session_id: str, ids: Sequence[str]) -> list[str]: ...

    def existing_calls(self, session_id: str, call_ids: Sequence[str]) -> list[str]: ...

    def message(self, session_id: str, message_id: str) -> Message | None: ...

    def commit(self, change: Change) -> bool:
        """Write the change if the session is still at `expected_version` (optimistic
        concurrency); False, and nothing written, if it is not."""
        ...

    def history(
        self, session_id: str, after: tuple[float, int] | None, limit: int
    ) -> list[Message]: ...

    def delete(self, session_ids: Sequence[str]) -> dict[str, int]:
        """Remove the sessions and every row they own; messages removed per session
        (sessions that had no row anywhere are left out)."""
        ...

    def idle(self, before: float, limit: int) -> list[str]:
        """Sessions last active before `before` (Unix time), oldest first."""
        ...


class SqliteSessionStore:
    def __init__(self, state: StateStore, metrics: Metrics) -> None:
        self._db = state
        self._metrics = metrics

    def _timed(self, op: str) -> _Timer:
        return _Timer(self._metrics, op)

    def load(self, session_id: str) -> Loaded | None:
        with self._timed("load"), self._db.reading() as db:
            row = db.execute(_LOAD_SESSION, (session_id,)).fetchone()
            if row is None:
                return None
            # Back from the end to the first message that is not a tool result.
            group: list[Message] = []
            after = (float("inf"), 0)
            while True:
                rows = db.execute(
                    _VIEW_BACKWARDS, (session_id, after[0], after[0], after[1], 64)
                ).fetchall()
                page = [_message(r) for r in rows]
                start = next((i for i, m in enumerate(page) if m.role is not Role.TOOL), None)
                if start is not None or len(page) < 64:
                    group += page if start is None else page[: start + 1]
                    break
                group += page
                after = (page[-1].position, page[-1].seq)
            group.reverse()
            last = next(
                (
                    m
                    for m in reversed(group)
                    if m.role is Role.ASSISTANT and m.kind is Kind.ORDINARY
                ),
                None,
            )
            if last is None:
                found = db.execute(_LAST_ASSISTANT, (session_id,)).fetchone()
                last = _message(found) if found is not None else None
        return Loaded(_state(row), group, last)

    def load_view(self, session_id: str) -> list[Message]:
        with self._timed("load_view"), self._db.reading() as db:
            rows = db.execute(_LOAD_VIEW, (session_id,)).fetchall()
        return [_message(r) for r in rows]

    def exists(self, session_id: str) -> bool:
        with self._db.reading() as db:
            return (
                db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
                is not None
            )

    def existing_ids(self, session_id: str, ids: Sequence[str]) -> list[str]:
        found: list[str] = []
        with self._timed("existing_ids"), self._db.reading() as db:
            for start in range(0, len(ids), 500):  # SQLite's bound on parameters
                chunk = list(ids[start : start + 500])
                marks = ",".join("?" * len(chunk))
                found += [
                    r[0]
                    for r in db.execute(
                        f"SELECT id FROM messages WHERE session_id = ? AND id IN ({marks})",  # noqa: S608
                        (session_id, *chunk),
                    )
                ]
        return found

    def existing_calls(self, session_id: str, call_ids: Sequence[str]) -> list[str]:
        found: list[str] = []
        with self._timed("existing_calls"), self._db.reading() as db:
            for start in range(0, len(call_ids), 500):
                chunk = list(call_ids[start : start + 500])
                marks = ",".join("?" * len(chunk))
                found += [
                    r[0]
                    for r in db.execute(
                        "SELECT call_id FROM tool_calls "  # noqa: S608 (placeholders only)
                        f"WHERE session_id = ? AND call_id IN ({marks})",
                        (session_id, *chunk),
                    )
                ]
        return found

    def message(self, session_id: str, message_id: str) -> Message | None:
        with self._db.reading() as db:
            row = db.execute(
                _MESSAGE_FIELDS + "WHERE session_id = ? AND id = ?", (session_id, message_id)
            ).fetchone()
        return _message(row) if row is not None else None

    def commit(self, change: Change) -> bool:
        state = change.state
        with self._timed("commit"), self._db.transaction() as db:
            if change.created:
                db.execute(
                    "INSERT INTO sessions (id, created_at) VALUES (?, ?)", (state.id, time.time())
                )
            else:
                current = db.execute(
                    "SELECT version FROM sessions WHERE id = ?", (state.id,)
                ).fetchone()
                if current is None or current[0] != change.expected_version:
                    return False
            db.executemany(_INSERT_MESSAGE, [_row(state.id, m) for m in change.appended])
            db.executemany(
                "INSERT INTO tool_calls (session_id, call_id, seq) VALUES (?, ?, ?)",
                [
                    (state.id, call.id, m.seq)
                    for m in change.appended
                    if m.agent_visible
                    for call in m.tool_calls
                ],
            )
            # Inserts before flips: a call may hide a stand-in it inserted itself.
            db.executemany(_INSERT_MESSAGE, [_row(state.id, m) for m in change.inserts])
            db.executemany(
                "UPDATE messages SET user_visible = ?, agent_visible = ? "
                "WHERE session_id = ? AND seq = ?",
                [
                    (int(m.user_visible), int(m.agent_visible), state.id, m.seq)
                    for m in change.flips
                ],
            )
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

    def delete(self, session_ids: Sequence[str]) -> dict[str, int]:
        with self._timed("delete"):
            removed = self._db.delete_sessions(session_ids)
        return {
            session_id: rows.get("messages", 0)
            for session_id, rows in removed.items()
            if any(rows.values())
        }

    def idle(self, before: float, limit: int) -> list[str]:
        with self._db.reading() as db:
            rows = db.execute(
                "SELECT id FROM sessions WHERE last_active_at < ? ORDER BY last_active_at LIMIT ?",
                (before, limit),
            ).fetchall()
        return [str(r[0]) for r in rows]


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
        "usage_tokens = ?, usage_seq = ?, calibration = ?, recoveries = ?, next_seq = ?, "
        "calibrated_seq = ?, rewrite_seq = ?, last_active_at = ?, view_tokens = ?, "
        "result_tokens = ? WHERE id = ?",
        (
            int(state.provider_managed), state.context_limit, state.version, state.usage_tokens,
            state.usage_seq, state.calibration, state.recoveries, state.next_seq,
            state.calibrated_seq, state.rewrite_seq, state.last_active_at, state.view_tokens,
            state.result_tokens, state.id,
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
        calibrated_seq=int(row[9]), rewrite_seq=int(row[10]),  # type: ignore[call-overload]
        last_active_at=float(row[11]), view_tokens=int(row[12]),  # type: ignore[arg-type, call-overload]
        result_tokens=int(row[13]),  # type: ignore[call-overload]
    )  # fmt: skip


def _message(row: Sequence[object]) -> Message:
    seq, id_, role, kind, response_id, created, user, agent, position, tokens, replaces, parts = row
    return Message(
        id=str(id_), role=Role(role), parts=parts_from_json(str(parts)), kind=Kind(kind),
        response_id=str(response_id), created_at_ms=int(created), user_visible=bool(user),  # type: ignore[call-overload]
        agent_visible=bool(agent), seq=int(seq), position=float(position), tokens=int(tokens),  # type: ignore[call-overload, arg-type]
        replaces=str(replaces),
    )  # fmt: skip

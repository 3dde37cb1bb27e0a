"""Session storage: an interface, and its SQL implementation on either engine (the same
database as the rest of the state: the SQLite file, or PostgreSQL shared by replicas).
Messages are never deleted while their session lives; only their flags change. Deleting a
session removes every row it owns (the store's `delete_sessions`).

Every change is one transaction that first moves the session's version on, if it is still
the version the change was planned against (optimistic concurrency): of two replicas or
workers changing one session at once, one commits and the other is told to try again."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
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
from sidecar.store.errors import StoreConflict
from sidecar.store.sql import Database, Executor

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
    # Other processes change the same sessions: a session held in memory must be checked
    # against the stored version before it is used.
    shared: bool

    async def load(self, session_id: str) -> Loaded | None: ...

    async def load_view(self, session_id: str) -> list[Message]:
        """The agent-visible messages, in order."""
        ...

    async def version(self, session_id: str) -> int | None:
        """The stored version of the session; None if it does not exist."""
        ...

    async def exists(self, session_id: str) -> bool: ...

    async def existing_ids(self, session_id: str, ids: Sequence[str]) -> list[str]: ...

    async def existing_calls(self, session_id: str, call_ids: Sequence[str]) -> list[str]: ...

    async def message(self, session_id: str, message_id: str) -> Message | None: ...

    async def commit(self, change: Change) -> bool:
        """Write the change if the session is still at `expected_version` (optimistic
        concurrency); False, and nothing written, if it is not."""
        ...

    async def history(
        self, session_id: str, after: tuple[float, int] | None, limit: int
    ) -> list[Message]: ...

    async def delete(self, session_ids: Sequence[str]) -> dict[str, int]:
        """Remove the sessions and every row they own; messages removed per session
        (sessions that had no row anywhere are left out)."""
        ...

    async def idle(self, before: float, limit: int) -> list[str]:
        """Sessions last active before `before` (Unix time), oldest first."""
        ...


DeleteRows = Callable[[Sequence[str]], Awaitable[dict[str, dict[str, int]]]]


class SqlSessionStore:
    """SessionStore on the store's database (SQLite or PostgreSQL, the same SQL)."""

    def __init__(self, database: Database, delete_rows: DeleteRows) -> None:
        self._db = database
        self._delete_rows = delete_rows
        self.shared = database.shared

    async def load(self, session_id: str) -> Loaded | None:
        async with self._db.reading("load") as db:
            row = await db.fetchrow(_LOAD_SESSION, (session_id,))
            if row is None:
                return None
            # Back from the end to the first message that is not a tool result.
            group: list[Message] = []
            after = (float("inf"), 0)
            while True:
                rows = await db.fetch(
                    _VIEW_BACKWARDS, (session_id, after[0], after[0], after[1], 64)
                )
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
                found = await db.fetchrow(_LAST_ASSISTANT, (session_id,))
                last = _message(found) if found is not None else None
        return Loaded(_state(row), group, last)

    async def load_view(self, session_id: str) -> list[Message]:
        async with self._db.reading("load_view") as db:
            rows = await db.fetch(_LOAD_VIEW, (session_id,))
        return [_message(r) for r in rows]

    async def version(self, session_id: str) -> int | None:
        async with self._db.reading("version") as db:
            row = await db.fetchrow("SELECT version FROM sessions WHERE id = ?", (session_id,))
        return None if row is None else int(row[0])

    async def exists(self, session_id: str) -> bool:
        return await self.version(session_id) is not None

    async def existing_ids(self, session_id: str, ids: Sequence[str]) -> list[str]:
        found: list[str] = []
        async with self._db.reading("existing_ids") as db:
            for start in range(0, len(ids), 500):  # SQLite's bound on parameters
                chunk = list(ids[start : start + 500])
                marks = ",".join("?" * len(chunk))
                found += [
                    str(r[0])
                    for r in await db.fetch(
                        f"SELECT id FROM messages WHERE session_id = ? AND id IN ({marks})",  # noqa: S608
                        (session_id, *chunk),
                    )
                ]
        return found

    async def existing_calls(self, session_id: str, call_ids: Sequence[str]) -> list[str]:
        found: list[str] = []
        async with self._db.reading("existing_calls") as db:
            for start in range(0, len(call_ids), 500):
                chunk = list(call_ids[start : start + 500])
                marks = ",".join("?" * len(chunk))
                found += [
                    str(r[0])
                    for r in await db.fetch(
                        "SELECT call_id FROM tool_calls "  # noqa: S608 (placeholders only)
                        f"WHERE session_id = ? AND call_id IN ({marks})",
                        (session_id, *chunk),
                    )
                ]
        return found

    async def message(self, session_id: str, message_id: str) -> Message | None:
        async with self._db.reading("message") as db:
            row = await db.fetchrow(
                _MESSAGE_FIELDS + "WHERE session_id = ? AND id = ?", (session_id, message_id)
            )
        return _message(row) if row is not None else None

    async def commit(self, change: Change) -> bool:
        state = change.state
        try:
            async with self._db.transaction("commit") as db:
                if change.created:
                    # A replica creating the same session first makes this a conflict.
                    await db.execute(
                        "INSERT INTO sessions (id, created_at) VALUES (?, ?)",
                        (state.id, time.time()),
                    )
                # First, and conditional: it takes the session's row (PostgreSQL locks it
                # until the commit) only if nobody moved the version on meanwhile.
                if not await _update_state(db, state, change.expected_version):
                    raise StoreConflict(f"session {state.id!r} changed")
                await db.executemany(_INSERT_MESSAGE, [_row(state.id, m) for m in change.appended])
                await db.executemany(
                    "INSERT INTO tool_calls (session_id, call_id, seq) VALUES (?, ?, ?)",
                    [
                        (state.id, call.id, m.seq)
                        for m in change.appended
                        if m.agent_visible
                        for call in m.tool_calls
                    ],
                )
                # Inserts before flips: a call may hide a stand-in it inserted itself.
                await db.executemany(_INSERT_MESSAGE, [_row(state.id, m) for m in change.inserts])
                await db.executemany(
                    "UPDATE messages SET user_visible = ?, agent_visible = ? "
                    "WHERE session_id = ? AND seq = ?",
                    [
                        (int(m.user_visible), int(m.agent_visible), state.id, m.seq)
                        for m in change.flips
                    ],
                )
        except StoreConflict:
            return False
        return True

    async def history(
        self, session_id: str, after: tuple[float, int] | None, limit: int
    ) -> list[Message]:
        position, seq = after if after is not None else (float("-inf"), 0)
        async with self._db.reading("history") as db:
            rows = await db.fetch(_HISTORY_PAGE, (session_id, position, position, seq, limit))
        return [_message(r) for r in rows]

    async def delete(self, session_ids: Sequence[str]) -> dict[str, int]:
        removed = await self._delete_rows(session_ids)
        return {
            session_id: rows.get("messages", 0)
            for session_id, rows in removed.items()
            if any(rows.values())
        }

    async def idle(self, before: float, limit: int) -> list[str]:
        async with self._db.reading("idle") as db:
            rows = await db.fetch(
                "SELECT id FROM sessions WHERE last_active_at < ? ORDER BY last_active_at LIMIT ?",
                (before, limit),
            )
        return [str(r[0]) for r in rows]


async def _update_state(db: Executor, state: SessionState, expected_version: int) -> bool:
    changed = await db.execute(
        "UPDATE sessions SET provider_managed = ?, context_limit = ?, version = ?, "
        "usage_tokens = ?, usage_seq = ?, calibration = ?, recoveries = ?, next_seq = ?, "
        "calibrated_seq = ?, rewrite_seq = ?, last_active_at = ?, view_tokens = ?, "
        "result_tokens = ? WHERE id = ? AND version = ?",
        (
            int(state.provider_managed), state.context_limit, state.version, state.usage_tokens,
            state.usage_seq, float(state.calibration), state.recoveries, state.next_seq,
            state.calibrated_seq, state.rewrite_seq, float(state.last_active_at),
            state.view_tokens, state.result_tokens, state.id, expected_version,
        ),
    )  # fmt: skip
    return changed == 1


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

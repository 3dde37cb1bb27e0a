"""Tool definitions and the trust in them: trust on first use, drift, acceptance.

Trust is per (server, tool name), whatever session registered it, and lives in the state
store, so a definition that changed keeps asking after a restart and in every session. A tool
missing from a server's list keeps its trusted definition: one that comes back changed is
drift like any other. Each session also remembers which definition it was given, so a call is
judged against what that session's model was told.

Every change of trust is written to `tool_trust_log` (first_seen, changed, reverted, removed,
returned, accepted) with the session that asked, if any. The log is about the tool, not the
session: DeleteSession blanks the session's name in it (`forget`) and keeps the entry.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, NamedTuple

from sidecar.integrity.definitions import ToolDefinition, from_canonical
from sidecar.state.store import StateStore

Trust = Literal["new", "trusted", "changed"]
_SESSION_CACHE = 4096  # sessions whose tool lists are kept in memory
DELETED_SESSION = "(deleted session)"


class ToolKey(NamedTuple):
    server: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolRecord:
    key: ToolKey
    trusted_fingerprint: str
    trusted_definition: str  # canonical JSON
    latest_fingerprint: str
    latest_definition: str
    present: bool
    first_seen: float
    trusted_at: float

    @property
    def changed(self) -> bool:
        return self.latest_fingerprint != self.trusted_fingerprint

    def trusted(self) -> ToolDefinition:
        return from_canonical(self.trusted_definition)

    def definition_of(self, fingerprint: str) -> ToolDefinition | None:
        if fingerprint == self.trusted_fingerprint:
            return from_canonical(self.trusted_definition)
        if fingerprint == self.latest_fingerprint:
            return from_canonical(self.latest_definition)
        return None


class Registered(NamedTuple):
    """What one registration found for one tool."""

    key: ToolKey
    trust: Trust
    fingerprint: str
    trusted_fingerprint: str
    first_time: bool  # this fingerprint had not been seen for this tool before (metrics)


class SessionTool(NamedTuple):
    """A definition a session was given."""

    record: ToolRecord
    fingerprint: str


class NotRegistered(Exception):
    """AcceptToolChange for a tool never registered: NOT_FOUND."""


class NothingToAccept(Exception):
    """No pending change, or not the one named: FAILED_PRECONDITION."""


class ToolRegistry:
    """Every (server, tool) is held in memory (few: thousands at most); which tools a
    session was given is read from the store on demand and kept for recent sessions."""

    def __init__(self, store: StateStore, clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self._clock = clock
        self._lock = threading.Lock()
        with store.reading() as db:
            rows = db.execute(
                "SELECT server, name, trusted_fingerprint, trusted_definition, "
                "latest_fingerprint, latest_definition, present, first_seen, trusted_at "
                "FROM tool_definitions"
            ).fetchall()
            sessions = db.execute("SELECT DISTINCT session_id FROM session_tools").fetchall()
        self._tools = {ToolKey(r[0], r[1]): _record(r) for r in rows}
        self._sessions = {row[0] for row in sessions}
        # session -> tool name as called -> [(server, name, fingerprint)]
        self._by_session: OrderedDict[str, dict[str, list[tuple[ToolKey, str]]]] = OrderedDict()

    # -- registration ------------------------------------------------------------

    def register(
        self, session_id: str, server: str, definitions: Sequence[ToolDefinition]
    ) -> tuple[list[Registered], list[str]]:
        """Record a server's tool list for a session; returns each tool's trust and the
        names of the server's tools missing from the list."""
        now = self._clock()
        found: list[Registered] = []
        updated: dict[ToolKey, ToolRecord] = {}
        listed = {d.name for d in definitions}
        with self._store.transaction() as db:
            for definition in definitions:
                key = ToolKey(server, definition.name)
                canonical = definition.canonical
                fingerprint = definition.fingerprint
                record = updated.get(key) or self._tools.get(key)
                registered, record = self._register_one(
                    db, session_id, key, record, canonical, fingerprint, now
                )
                updated[key] = record
                found.append(registered)
            removed = sorted(
                key.name
                for key, record in self._tools.items()
                if key.server == server and record.present and key.name not in listed
            )
            for name in removed:
                record = self._tools[ToolKey(server, name)]
                db.execute(
                    "UPDATE tool_definitions SET present = 0, updated_at = ? "
                    "WHERE server = ? AND name = ?",
                    (now, server, name),
                )
                _log(db, record.key, "removed", record.latest_fingerprint, "", session_id, now)
                updated[record.key] = _replace(record, present=False)
            db.execute(
                "DELETE FROM session_tools WHERE session_id = ? AND server = ?",
                (session_id, server),
            )
            db.executemany(
                "INSERT OR REPLACE INTO session_tools VALUES (?, ?, ?, ?, ?)",
                [(session_id, server, r.key.name, r.fingerprint, now) for r in found],
            )
        with self._lock:
            self._tools.update(updated)
            self._sessions.add(session_id)
            self._by_session.pop(session_id, None)  # read again on next use
        return found, removed

    def _register_one(
        self,
        db: sqlite3.Connection,
        session_id: str,
        key: ToolKey,
        record: ToolRecord | None,
        canonical: str,
        fingerprint: str,
        now: float,
    ) -> tuple[Registered, ToolRecord]:
        if record is None:
            db.execute(
                "INSERT INTO tool_definitions VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?)",
                (key.server, key.name, fingerprint, canonical, fingerprint, canonical, now, now,
                 now),
            )  # fmt: skip
            _log(db, key, "first_seen", fingerprint, "", session_id, now)
            record = ToolRecord(key, fingerprint, canonical, fingerprint, canonical, True, now, now)
            return Registered(key, "new", fingerprint, fingerprint, True), record
        first_time = fingerprint not in (record.trusted_fingerprint, record.latest_fingerprint)
        if not record.present:
            _log(db, key, "returned", fingerprint, record.latest_fingerprint, session_id, now)
        if fingerprint != record.latest_fingerprint:
            event = "reverted" if fingerprint == record.trusted_fingerprint else "changed"
            _log(db, key, event, fingerprint, record.latest_fingerprint, session_id, now)
        if fingerprint != record.latest_fingerprint or not record.present:
            db.execute(
                "UPDATE tool_definitions SET latest_fingerprint = ?, latest_definition = ?, "
                "present = 1, updated_at = ? WHERE server = ? AND name = ?",
                (fingerprint, canonical, now, key.server, key.name),
            )
            record = _replace(
                record, latest_fingerprint=fingerprint, latest_definition=canonical, present=True
            )
        trust: Trust = "trusted" if fingerprint == record.trusted_fingerprint else "changed"
        return Registered(key, trust, fingerprint, record.trusted_fingerprint, first_time), record

    # -- acceptance --------------------------------------------------------------

    def accept(self, key: ToolKey, fingerprint: str, session_id: str = "") -> tuple[str, str]:
        """Make the pending definition trusted; returns (previous, new) fingerprints.

        Raises NotRegistered, or NothingToAccept when the tool has no pending change or the
        pending one is not `fingerprint` (it changed again since the person looked)."""
        record = self._tools.get(key)
        if record is None:
            raise NotRegistered(f"no tool {key.name!r} was registered by server {key.server!r}")
        if not record.changed:
            raise NothingToAccept("its definition has not changed from the trusted one")
        if fingerprint != record.latest_fingerprint:
            raise NothingToAccept(
                f"the pending definition is {record.latest_fingerprint}, not {fingerprint}: "
                "it changed again since it was shown"
            )
        now = self._clock()
        with self._store.transaction() as db:
            db.execute(
                "UPDATE tool_definitions SET trusted_fingerprint = latest_fingerprint, "
                "trusted_definition = latest_definition, trusted_at = ?, updated_at = ? "
                "WHERE server = ? AND name = ? AND latest_fingerprint = ?",
                (now, now, key.server, key.name, fingerprint),
            )
            _log(db, key, "accepted", fingerprint, record.trusted_fingerprint, session_id, now)
        with self._lock:
            self._tools[key] = _replace(
                record,
                trusted_fingerprint=fingerprint,
                trusted_definition=record.latest_definition,
                trusted_at=now,
            )
        return record.trusted_fingerprint, fingerprint

    # -- the Inspect path --------------------------------------------------------

    def has_tools(self, session_id: str) -> bool:
        return session_id in self._sessions

    def record(self, key: ToolKey) -> ToolRecord | None:
        return self._tools.get(key)

    def session_tool(self, session_id: str, name: str, server: str = "") -> SessionTool | None:
        """The definition the session was given for the tool it calls `name` (also as
        `mcp__server__name` or `server__name`); None when the session registered none.
        With `server` (the call's annotation), only that server's tool counts."""
        if session_id not in self._sessions:
            return None
        entries = self._session_map(session_id).get(name, [])
        for key, fingerprint in entries:
            if server and key.server != server:
                continue
            record = self._tools.get(key)
            if record is not None:
                return SessionTool(record, fingerprint)
        return None

    def servers_offering(self, session_id: str, name: str) -> list[str]:
        if session_id not in self._sessions:
            return []
        return sorted({key.server for key, _ in self._session_map(session_id).get(name, [])})

    def _session_map(self, session_id: str) -> dict[str, list[tuple[ToolKey, str]]]:
        with self._lock:
            cached = self._by_session.get(session_id)
            if cached is not None:
                self._by_session.move_to_end(session_id)
                return cached
        with self._store.reading() as db:
            rows = db.execute(
                "SELECT server, name, fingerprint FROM session_tools WHERE session_id = ?",
                (session_id,),
            ).fetchall()
        by_name: dict[str, list[tuple[ToolKey, str]]] = {}
        for server, name, fingerprint in rows:
            key = ToolKey(server, name)
            for alias in _names_as_called(server, name):
                by_name.setdefault(alias, []).append((key, fingerprint))
        with self._lock:
            self._by_session[session_id] = by_name
            while len(self._by_session) > _SESSION_CACHE:
                self._by_session.popitem(last=False)
        return by_name

    def audit(self, key: ToolKey) -> list[tuple[str, str, str, str, float]]:
        """(event, fingerprint, previous fingerprint, session, time) for a tool, oldest first."""
        with self._store.reading() as db:
            rows = db.execute(
                "SELECT event, fingerprint, previous_fingerprint, asked_in, at "
                "FROM tool_trust_log WHERE server = ? AND name = ? ORDER BY id",
                (key.server, key.name),
            ).fetchall()
        return [tuple(row) for row in rows]

    def forget(self, session_id: str) -> bool:
        """A deleted session: its tool lists are gone (SESSION_TABLES); its name is blanked
        in the trust log, whose entries stay (they are about the tools)."""
        with self._lock:
            had = session_id in self._sessions
            self._sessions.discard(session_id)
            self._by_session.pop(session_id, None)
        with self._store.transaction() as db:
            db.execute(
                "UPDATE tool_trust_log SET asked_in = ? WHERE asked_in = ?",
                (DELETED_SESSION, session_id),
            )
        return had


def _names_as_called(server: str, name: str) -> tuple[str, ...]:
    """The names a runtime may call a server's tool by."""
    if not server:
        return (name,)
    return (name, f"mcp__{server}__{name}", f"{server}__{name}")


def _record(row: tuple[object, ...]) -> ToolRecord:
    server, name, trusted, trusted_text, latest, latest_text, present, first, trusted_at = row
    return ToolRecord(
        ToolKey(str(server), str(name)),
        str(trusted),
        str(trusted_text),
        str(latest),
        str(latest_text),
        bool(present),
        float(first),  # type: ignore[arg-type]
        float(trusted_at),  # type: ignore[arg-type]
    )


def _replace(record: ToolRecord, **changes: object) -> ToolRecord:
    return replace(record, **changes)  # type: ignore[arg-type]


def _log(
    db: sqlite3.Connection,
    key: ToolKey,
    event: str,
    fingerprint: str,
    previous: str,
    session_id: str,
    now: float,
) -> None:
    db.execute(
        "INSERT INTO tool_trust_log (server, name, event, fingerprint, previous_fingerprint, "
        "asked_in, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (key.server, key.name, event, fingerprint, previous, session_id, now),
    )

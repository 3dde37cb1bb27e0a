"""Tool definitions and the trust in them: trust on first use, drift, acceptance.

Trust is per (server, tool name), whatever session registered it, and lives in the store
(SQLite or PostgreSQL), so a definition that changed keeps asking after a restart, in every
session and on every replica. A tool missing from a server's list keeps its trusted
definition: one that comes back changed is drift like any other. Each session also
remembers which definition it was given (`session_tools`, read with the session's Inspect
snapshot), so a call is judged against what that session's model was told.

Every (server, tool) record is held in memory (few: thousands at most), checked against
the store's `tool_registry.version`, which every change of `tool_definitions` moves on in
the same transaction: each Inspect's snapshot carries the version, and held records older
than it are read again before the call is judged. So a definition trusted, changed or
accepted through one replica decides the very next call on another.

Writers take turns: on PostgreSQL every registration and acceptance locks the version row
first (`FOR UPDATE`); on SQLite the write transaction is exclusive. Two replicas registering
the same (server, tool) at once agree: the first insert wins (`ON CONFLICT DO NOTHING`),
the second reads what it stored.

Every change of trust is written to `tool_trust_log` (first_seen, changed, reverted,
removed, returned, accepted) with the session that asked, if any. The log is about the
tool, not the session: deleting a session blanks its name there and keeps the entry.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, NamedTuple

from sidecar.integrity.definitions import ToolDefinition, from_canonical
from sidecar.store.sql import Database, Executor

Trust = Literal["new", "trusted", "changed"]
DELETED_SESSION = "(deleted session)"

_RECORDS = (
    "SELECT server, name, trusted_fingerprint, trusted_definition, latest_fingerprint, "
    "latest_definition, present, first_seen, trusted_at FROM tool_definitions"
)
VERSION = "SELECT version FROM tool_registry"


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


def _nothing(session_id: str) -> None:
    """No cache to tell."""


class ToolRegistry:
    def __init__(
        self,
        database: Database,
        changed: Callable[[str], None] = _nothing,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """`changed`: a session's stored tools changed (the SQLite store's copy forgets it)."""
        self._database = database
        self._changed = changed
        self._clock = clock
        self._tools: dict[ToolKey, ToolRecord] = {}
        self.version: int | None = None  # of the records held; None: never read
        self._loading = asyncio.Lock()

    # -- the records held ------------------------------------------------------------

    async def refresh(self, version: int | None) -> None:
        """Read the records again if the store's `version` is newer than what is held.
        None: the snapshot carries no version (one process owns the SQLite file, and this
        registry reads back its own writes), so only a registry never read reads."""
        if not self._stale(version):
            return
        async with self._loading:
            if self._stale(version):
                await self.load()

    def _stale(self, version: int | None) -> bool:
        held = self.version
        return held is None or (version is not None and version > held)

    async def load(self) -> None:
        async with self._database.reading("load_tools") as db:
            row = await db.fetchrow(VERSION)
            rows = await db.fetch(_RECORDS)
        self._tools = {record.key: record for record in map(_record, rows)}
        self.version = int(row[0]) if row is not None else 0

    def record(self, key: ToolKey) -> ToolRecord | None:
        return self._tools.get(key)

    # -- registration ------------------------------------------------------------

    async def register(
        self, session_id: str, server: str, definitions: Sequence[ToolDefinition]
    ) -> tuple[list[Registered], list[str]]:
        """Record a server's tool list for a session; returns each tool's trust and the
        names of the server's tools missing from the list. Raises StoreUnavailable."""
        now = self._clock()
        found: list[Registered] = []
        listed = {d.name for d in definitions}
        async with self._database.transaction("register_tools") as db:
            await self._take_turn(db)
            current = {
                record.key: record
                for record in map(
                    _record, await db.fetch(_RECORDS + " WHERE server = ?", (server,))
                )
            }
            bump = False
            for definition in definitions:
                key = ToolKey(server, definition.name)
                registered, record, changed = await self._register_one(
                    db, session_id, key, current.get(key), definition, now
                )
                current[key] = record
                found.append(registered)
                bump = bump or changed
            removed = sorted(
                key.name
                for key, record in current.items()
                if record.present and key.name not in listed
            )
            for name in removed:
                record = current[ToolKey(server, name)]
                await db.execute(
                    "UPDATE tool_definitions SET present = 0, updated_at = ? "
                    "WHERE server = ? AND name = ?",
                    (now, server, name),
                )
                latest = record.latest_fingerprint
                await _log(db, record.key, "removed", latest, "", session_id, now)
                bump = True
            if bump:
                await db.execute("UPDATE tool_registry SET version = version + 1")
            await db.execute(
                "DELETE FROM session_tools WHERE session_id = ? AND server = ?",
                (session_id, server),
            )
            await db.executemany(
                "INSERT INTO session_tools (session_id, server, name, fingerprint, "
                "registered_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id, server, name) "
                "DO UPDATE SET fingerprint = excluded.fingerprint",
                [(session_id, server, r.key.name, r.fingerprint, now) for r in found],
            )
        self._changed(session_id)
        if bump:
            await self.load()
        return found, removed

    async def _take_turn(self, db: Executor) -> None:
        """Registry writers one at a time (SQLite's write transaction already is)."""
        if self._database.engine == "postgresql":
            await db.fetchrow(VERSION + " FOR UPDATE")

    async def _register_one(
        self,
        db: Executor,
        session_id: str,
        key: ToolKey,
        record: ToolRecord | None,
        definition: ToolDefinition,
        now: float,
    ) -> tuple[Registered, ToolRecord, bool]:
        canonical = definition.canonical
        fingerprint = definition.fingerprint
        if record is None:
            # First writer wins; whoever lost reads what the winner stored.
            inserted = await db.execute(
                "INSERT INTO tool_definitions (server, name, trusted_fingerprint, "
                "trusted_definition, latest_fingerprint, latest_definition, present, "
                "first_seen, trusted_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?) "
                "ON CONFLICT (server, name) DO NOTHING",
                (key.server, key.name, fingerprint, canonical, fingerprint, canonical, now, now,
                 now),
            )  # fmt: skip
            if inserted:
                await _log(db, key, "first_seen", fingerprint, "", session_id, now)
                record = ToolRecord(
                    key, fingerprint, canonical, fingerprint, canonical, True, now, now
                )
                return Registered(key, "new", fingerprint, fingerprint, True), record, True
            row = await db.fetchrow(
                _RECORDS + " WHERE server = ? AND name = ?", (key.server, key.name)
            )
            assert row is not None  # the conflicting row is committed and never deleted
            record = _record(row)
        first_time = fingerprint not in (record.trusted_fingerprint, record.latest_fingerprint)
        changed = False
        if not record.present:
            await _log(db, key, "returned", fingerprint, record.latest_fingerprint, session_id, now)
        if fingerprint != record.latest_fingerprint:
            event = "reverted" if fingerprint == record.trusted_fingerprint else "changed"
            await _log(db, key, event, fingerprint, record.latest_fingerprint, session_id, now)
        if fingerprint != record.latest_fingerprint or not record.present:
            await db.execute(
                "UPDATE tool_definitions SET latest_fingerprint = ?, latest_definition = ?, "
                "present = 1, updated_at = ? WHERE server = ? AND name = ?",
                (fingerprint, canonical, now, key.server, key.name),
            )
            record = replace(
                record, latest_fingerprint=fingerprint, latest_definition=canonical, present=True
            )
            changed = True
        trust: Trust = "trusted" if fingerprint == record.trusted_fingerprint else "changed"
        registered = Registered(key, trust, fingerprint, record.trusted_fingerprint, first_time)
        return registered, record, changed

    # -- acceptance --------------------------------------------------------------

    async def accept(self, key: ToolKey, fingerprint: str, session_id: str = "") -> tuple[str, str]:
        """Make the pending definition trusted; returns (previous, new) fingerprints.

        Raises NotRegistered, or NothingToAccept when the tool has no pending change or the
        pending one is not `fingerprint` (it changed again since the person looked); and
        StoreUnavailable. Judged on the stored record, not the one held."""
        now = self._clock()
        async with self._database.transaction("accept_tool_change") as db:
            await self._take_turn(db)
            row = await db.fetchrow(
                _RECORDS + " WHERE server = ? AND name = ?", (key.server, key.name)
            )
            if row is None:
                raise NotRegistered(f"no tool {key.name!r} was registered by server {key.server!r}")
            record = _record(row)
            if not record.changed:
                raise NothingToAccept("its definition has not changed from the trusted one")
            if fingerprint != record.latest_fingerprint:
                raise NothingToAccept(
                    f"the pending definition is {record.latest_fingerprint}, not "
                    f"{fingerprint}: it changed again since it was shown"
                )
            await db.execute(
                "UPDATE tool_definitions SET trusted_fingerprint = latest_fingerprint, "
                "trusted_definition = latest_definition, trusted_at = ?, updated_at = ? "
                "WHERE server = ? AND name = ?",
                (now, now, key.server, key.name),
            )
            previous = record.trusted_fingerprint
            await _log(db, key, "accepted", fingerprint, previous, session_id, now)
            await db.execute("UPDATE tool_registry SET version = version + 1")
        await self.load()
        return record.trusted_fingerprint, fingerprint

    async def audit(self, key: ToolKey) -> list[tuple[str, str, str, str, float]]:
        """(event, fingerprint, previous fingerprint, session, time) for a tool, oldest first."""
        async with self._database.reading("tool_audit") as db:
            rows = await db.fetch(
                "SELECT event, fingerprint, previous_fingerprint, asked_in, at "
                "FROM tool_trust_log WHERE server = ? AND name = ? ORDER BY id",
                (key.server, key.name),
            )
        return [(str(r[0]), str(r[1]), str(r[2]), str(r[3]), float(r[4])) for r in rows]


class SessionTools:
    """The tools one session was given, by every name a runtime may call them."""

    __slots__ = ("_by_name",)

    def __init__(self, rows: Sequence[tuple[str, str, str]]) -> None:
        by_name: dict[str, list[tuple[ToolKey, str]]] = {}
        for server, name, fingerprint in rows:
            key = ToolKey(server, name)
            for alias in names_as_called(server, name):
                by_name.setdefault(alias, []).append((key, fingerprint))
        self._by_name = by_name

    def __bool__(self) -> bool:
        return bool(self._by_name)

    def named(self, name: str) -> list[tuple[ToolKey, str]]:
        return self._by_name.get(name, [])


def names_as_called(server: str, name: str) -> tuple[str, ...]:
    """The names a runtime may call a server's tool by."""
    if not server:
        return (name,)
    return (name, f"mcp__{server}__{name}", f"{server}__{name}")


def _record(row: Sequence[object]) -> ToolRecord:
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


async def _log(
    db: Executor,
    key: ToolKey,
    event: str,
    fingerprint: str,
    previous: str,
    session_id: str,
    now: float,
) -> None:
    await db.execute(
        "INSERT INTO tool_trust_log (server, name, event, fingerprint, previous_fingerprint, "
        "asked_in, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (key.server, key.name, event, fingerprint, previous, session_id, now),
    )

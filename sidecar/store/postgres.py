"""The shared store: PostgreSQL, for many replicas and many workers.

Nothing about a session is kept in memory between calls: an Inspect reads the session's
snapshot in one query and writes what it recorded in one statement, so an answer, a
streak or a taint recorded through one replica decides the very next call on another.
The context service checks its cached sessions against the stored version on every call.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from sidecar.inspection.verdict import Verdict
from sidecar.observability.metrics import Metrics
from sidecar.state.approvals import OnceAnswer
from sidecar.state.injection_taint import TaintStatus, entry
from sidecar.state.session_facts import Fact
from sidecar.store.base import (
    FACT_UPSERT,
    QUESTION_UPSERT,
    STREAK_UPSERT,
    TAINT_INSERT,
    SqlStateStore,
    text,
)
from sidecar.store.dsn import masked
from sidecar.store.errors import StateError
from sidecar.store.model import Snapshot, StoredStreak, Writes
from sidecar.store.postgres_schema import MIGRATION_LOCK, MIGRATIONS
from sidecar.store.sql import PostgresDatabase

_SNAPSHOT = """
SELECT
  (SELECT json_agg(json_build_array(tool_name, verdict))
     FROM standing_answers WHERE session_id = ?),
  (SELECT json_agg(json_build_array(tool_name, arguments_digest, verdict, decision_id,
                                    tool_call_id, answered_at) ORDER BY answered_at)
     FROM once_answers WHERE session_id = ?),
  (SELECT json_build_array(tool_name, digest, count) FROM streaks WHERE session_id = ?),
  (SELECT source FROM taints WHERE session_id = ?),
  (SELECT json_agg(json_build_array(kind, key, origin, detail))
     FROM session_facts WHERE session_id = ?),
  (SELECT json_agg(json_build_array(server, name, fingerprint))
     FROM session_tools WHERE session_id = ?),
  (SELECT version FROM tool_registry),
  (SELECT json_build_array(message_id, source, state, rules, excerpt, at) FROM session_taint
     WHERE session_id = ? AND state = 'flagged' ORDER BY id LIMIT 1),
  (SELECT count(*) FROM session_taint WHERE session_id = ? AND state = 'flagged'),
  (SELECT json_build_array(message_id, source, state, rules, excerpt, at) FROM session_taint
     WHERE session_id = ? AND state <> 'flagged' ORDER BY id LIMIT 1)
"""


def _as_cte(name: str, statement: str, source: str | None = None) -> str:
    """An upsert as a data-modifying WITH entry (VALUES replaced by a JSON set)."""
    if source is not None:
        head, _, tail = statement.partition(" VALUES ")
        _, _, conflict = tail.partition(") ")
        statement = f"{head} {source} {conflict}"
    return f"{name} AS ({statement} RETURNING 1)"


_FACTS_SOURCE = (
    "SELECT ?, x.kind, x.key, x.origin, x.detail, ? "
    "FROM json_to_recordset(?::json) AS x(kind text, key text, origin text, detail text)"
)
_QUESTIONS_SOURCE = (
    "SELECT ?, ?, x.id, x.tool, x.digest, ? "
    "FROM json_to_recordset(?::json) AS x(id text, tool text, digest text)"
)


class PostgresStore(SqlStateStore):
    engine = "postgresql"
    shared = True
    database: PostgresDatabase

    def __init__(
        self,
        dsn: str,
        password: str | None = None,
        metrics: Metrics | None = None,
        pool_size: int = 10,
        timeout_seconds: float = 5.0,
    ) -> None:
        self.dsn = dsn
        self.database = PostgresDatabase(dsn, password, metrics, pool_size, timeout_seconds)
        self._statements: dict[tuple[bool, bool, bool, bool], str] = {}
        self.schema_version = 0

    @property
    def describe(self) -> str:
        return masked(self.dsn)

    async def open(self) -> None:
        """Connect and migrate; raises StoreUnavailable (retry) or StateError (give up)."""
        await self.database.open()
        await self._migrate()

    async def _migrate(self) -> None:
        async with self.database.transaction("migrate") as db:
            # Replicas starting together take turns; the lock ends with the transaction.
            await db.fetchrow("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))
            await db.execute("CREATE TABLE IF NOT EXISTS sidecar_schema (version INTEGER NOT NULL)")
            row = await db.fetchrow("SELECT max(version) FROM sidecar_schema")
            current = int(row[0]) if row is not None and row[0] is not None else 0
            if current > len(MIGRATIONS):
                raise StateError(
                    f"the state store schema at {masked(self.dsn)} is version {current}, newer "
                    f"than this sidecar understands ({len(MIGRATIONS)}); refusing to use it "
                    "(upgrade this sidecar, or point it at another database)"
                )
            for version, script in enumerate(MIGRATIONS[current:], start=current + 1):
                await db.execute(script)
                await db.execute("DELETE FROM sidecar_schema")
                await db.execute("INSERT INTO sidecar_schema (version) VALUES (?)", (version,))
            self.schema_version = max(current, len(MIGRATIONS))

    async def close(self) -> None:
        await self.database.close()

    def changed(self, session_id: str) -> None:
        """Nothing is kept in memory to drop."""

    async def flush(self) -> None:
        """Every write is made when it is asked for."""

    async def load_session(self, session_id: str) -> Snapshot:
        async with self.database.reading("load_session") as db:
            row = await db.fetchrow(_SNAPSHOT, (session_id,) * 9)
        snapshot = Snapshot()
        if row is None:
            return snapshot
        standing, once, streak, taint, facts, tools, version, flagged, count, unchecked = row
        for tool, verdict in _json(standing):
            snapshot.standing[tool] = Verdict(verdict)
        for tool, digest, verdict, decision_id, call_id, answered_at in _json(once):
            snapshot.once.setdefault((tool, digest), []).append(
                OnceAnswer(Verdict(verdict), decision_id, call_id, float(answered_at))
            )
        if streak is not None:
            tool, digest, count = json.loads(streak)
            snapshot.streak = StoredStreak(tool, digest, int(count))
        if taint is not None:
            snapshot.taint = str(taint)
        for kind, key, origin, detail in _json(facts):
            snapshot.facts[(kind, key)] = Fact(kind, key, origin, detail)
        snapshot.tools = tuple((server, name, fp) for server, name, fp in _json(tools))
        snapshot.tools_version = int(version) if version is not None else 0
        if flagged is not None or unchecked is not None:
            snapshot.injection = TaintStatus(
                entry(json.loads(flagged)) if flagged is not None else None,
                int(count or 0),
                entry(json.loads(unchecked)) if unchecked is not None else None,
            )
        return snapshot

    async def save_session(self, session_id: str, writes: Writes) -> None:
        """One statement (data-modifying WITH entries): one round trip, atomic."""
        shape = (
            writes.streak is not None,
            writes.taint is not None,
            bool(writes.facts),
            bool(writes.questions),
        )
        statement = self._statements.get(shape)
        if statement is None:
            statement = self._statements[shape] = _save_statement(*shape)
        now = time.time()
        args: list[Any] = []
        if writes.streak is not None:
            s = writes.streak
            args += (session_id, s.tool, s.digest, s.count, now, s.continued, s.delta)
        if writes.taint is not None:
            args += (session_id, text(writes.taint), now)
        if writes.facts:
            facts = json.dumps(
                [
                    {"kind": f.kind, "key": text(f.key), "origin": f.origin,
                     "detail": text(f.detail)}
                    for f in {(f.kind, f.key): f for f in writes.facts}.values()
                ]
            )  # fmt: skip
            args += (session_id, now, facts)
        if writes.questions:
            questions = json.dumps(
                [
                    {"id": q.tool_call_id, "tool": q.tool_name, "digest": q.arguments_digest}
                    for q in {q.tool_call_id: q for q in writes.questions}.values()
                ]
            )
            args += (session_id, writes.decision_id, now, questions)
        # One statement is atomic by itself: no BEGIN and COMMIT round trips around it.
        async with self.database.reading("save_session") as db:
            await db.execute(statement, args)

    async def delete_sessions(self, session_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        return await self.delete_rows(session_ids)

    async def take_once(self, session_id: str, answers: Sequence[OnceAnswer]) -> list[bool]:
        return await self.take_once_in(self.database.reading, session_id, answers)

    async def prune(self) -> int:
        return len(await self.prune_streaks())


def _save_statement(streak: bool, taint: bool, facts: bool, questions: bool) -> str:
    parts: list[str] = []
    if streak:
        parts.append(_as_cte("s", STREAK_UPSERT))
    if taint:
        parts.append(_as_cte("t", TAINT_INSERT))
    if facts:
        parts.append(_as_cte("f", FACT_UPSERT, _FACTS_SOURCE))
    if questions:
        parts.append(_as_cte("q", QUESTION_UPSERT, _QUESTIONS_SOURCE))
    return "WITH " + ", ".join(parts) + " SELECT 1"


def _json(value: Any) -> list[Any]:
    if value is None:
        return []
    decoded: list[Any] = json.loads(value)
    return decoded

"""What both engines do the same way: the same tables, the same SQL (`?` placeholders)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from sidecar.state.approvals import OnceAnswer
from sidecar.state.injection_taint import read_status
from sidecar.state.store import SESSION_TABLES
from sidecar.state.tool_registry import DELETED_SESSION, VERSION
from sidecar.store.model import Snapshot, StoredStreak, Writes
from sidecar.store.sql import Block, Database, Executor

# A repetition streak is about calls in a row; one idle this long is forgotten.
STREAK_TTL_SECONDS = 86_400.0

STREAK_UPSERT = (
    "INSERT INTO streaks (session_id, tool_name, digest, count, updated_at) "
    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
    "count = CASE WHEN ? AND streaks.tool_name = excluded.tool_name "
    "AND streaks.digest = excluded.digest THEN streaks.count + ? ELSE excluded.count END, "
    "tool_name = excluded.tool_name, digest = excluded.digest, updated_at = excluded.updated_at"
)
TAINT_INSERT = (
    "INSERT INTO taints (session_id, source, tainted_at) VALUES (?, ?, ?) "
    "ON CONFLICT (session_id) DO NOTHING"
)
FACT_UPSERT = (
    "INSERT INTO session_facts (session_id, kind, key, origin, detail, recorded_at) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, kind, key) DO UPDATE SET "
    "origin = excluded.origin, detail = excluded.detail, recorded_at = excluded.recorded_at"
)
QUESTION_UPSERT = (
    "INSERT INTO approval_questions (session_id, decision_id, tool_call_id, tool_name, "
    "arguments_digest, asked_at) VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (session_id, decision_id, tool_call_id) DO UPDATE SET "
    "tool_name = excluded.tool_name, arguments_digest = excluded.arguments_digest, "
    "asked_at = excluded.asked_at"
)


def text(value: str) -> str:
    """PostgreSQL text cannot hold NUL; what the analysis recorded is only judged, so a
    NUL becomes U+FFFD (on both engines, so that they agree)."""
    return value.replace("\x00", "\ufffd") if "\x00" in value else value


class SqlStateStore:
    """The parts of the store interface both engines share."""

    database: Database

    async def take_once(self, session_id: str, answers: Sequence[OnceAnswer]) -> list[bool]:
        return await self.take_once_in(self.database.transaction, session_id, answers)

    async def take_once_in(
        self, block: Callable[[str], Block], session_id: str, answers: Sequence[OnceAnswer]
    ) -> list[bool]:
        """One DELETE ... RETURNING: only one replica gets each answer."""
        if not answers:
            return []
        pairs = ", ".join("(?, ?)" for _ in answers)
        args: list[object] = [session_id]
        for answer in answers:
            args += (answer.decision_id, answer.tool_call_id)
        async with block("take_once") as db:
            rows = await db.fetch(
                "DELETE FROM once_answers WHERE session_id = ? AND "  # noqa: S608 (placeholders)
                f"(decision_id, tool_call_id) IN ({pairs}) RETURNING decision_id, tool_call_id",
                args,
            )
        taken = {(str(r[0]), str(r[1])) for r in rows}
        self.once_taken(session_id, answers)
        return [(a.decision_id, a.tool_call_id) in taken for a in answers]

    def once_taken(self, session_id: str, answers: Sequence[OnceAnswer]) -> None:
        """Hook: once answers were used up (a cache of them forgets them)."""

    async def delete_rows(self, session_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """Each session's rows from every session table, in one transaction."""
        removed: dict[str, dict[str, int]] = {}
        async with self.database.transaction("delete_sessions") as db:
            for session_id in session_ids:
                removed[session_id] = {
                    table: await db.execute(
                        f"DELETE FROM {table} WHERE {column} = ?",  # noqa: S608 (constants)
                        (session_id,),
                    )
                    for table, column in SESSION_TABLES
                }
                # The trust log is about tools: its entries stay, the session's name not.
                await db.execute(
                    "UPDATE tool_trust_log SET asked_in = ? WHERE asked_in = ?",
                    (DELETED_SESSION, session_id),
                )
        return removed

    async def prune_streaks(self, now: float | None = None) -> list[str]:
        cutoff = (time.time() if now is None else now) - STREAK_TTL_SECONDS
        async with self.database.transaction("prune_streaks") as db:
            rows = await db.fetch(
                "DELETE FROM streaks WHERE updated_at < ? RETURNING session_id", (cutoff,)
            )
        return [str(r[0]) for r in rows]


async def load_rows(db: Executor, session_id: str, shared: bool) -> Snapshot:
    """A session's snapshot in a few small queries (SQLite; PostgreSQL uses one).
    `shared`: other processes write the file, so the tool registry's version is read."""
    from sidecar.inspection.verdict import Verdict
    from sidecar.state.session_facts import Fact

    snapshot = Snapshot()
    for tool, verdict in await db.fetch(
        "SELECT tool_name, verdict FROM standing_answers WHERE session_id = ?", (session_id,)
    ):
        snapshot.standing[str(tool)] = Verdict(verdict)
    for tool, digest, verdict, decision_id, call_id, answered_at in await db.fetch(
        "SELECT tool_name, arguments_digest, verdict, decision_id, tool_call_id, answered_at "
        "FROM once_answers WHERE session_id = ? ORDER BY answered_at",
        (session_id,),
    ):
        snapshot.once.setdefault((str(tool), str(digest)), []).append(
            OnceAnswer(Verdict(verdict), str(decision_id), str(call_id), float(answered_at))
        )
    row = await db.fetchrow(
        "SELECT tool_name, digest, count FROM streaks WHERE session_id = ?", (session_id,)
    )
    if row is not None:
        snapshot.streak = StoredStreak(str(row[0]), str(row[1]), int(row[2]))
    row = await db.fetchrow("SELECT source FROM taints WHERE session_id = ?", (session_id,))
    if row is not None:
        snapshot.taint = str(row[0])
    for kind, key, origin, detail in await db.fetch(
        "SELECT kind, key, origin, detail FROM session_facts WHERE session_id = ?", (session_id,)
    ):
        snapshot.facts[(str(kind), str(key))] = Fact(str(kind), str(key), str(origin), str(detail))
    snapshot.tools = tuple(
        (str(server), str(name), str(fingerprint))
        for server, name, fingerprint in await db.fetch(
            "SELECT server, name, fingerprint FROM session_tools WHERE session_id = ?",
            (session_id,),
        )
    )
    if shared:
        row = await db.fetchrow(VERSION)
        snapshot.tools_version = int(row[0]) if row is not None else 0
    snapshot.injection = await read_status(db, session_id)
    return snapshot


async def save_rows(db: Executor, session_id: str, writes: Writes, now: float) -> None:
    """An Inspect's writes as statements in the caller's transaction (SQLite)."""
    streak = writes.streak
    if streak is not None:
        await db.execute(
            STREAK_UPSERT,
            (session_id, streak.tool, streak.digest, streak.count, now, streak.continued,
             streak.delta),
        )  # fmt: skip
    if writes.taint is not None:
        await db.execute(TAINT_INSERT, (session_id, text(writes.taint), now))
    if writes.facts:
        await db.executemany(
            FACT_UPSERT,
            [
                (session_id, f.kind, text(f.key), f.origin, text(f.detail), now)
                for f in writes.facts
            ],
        )
    if writes.questions:
        await db.executemany(
            QUESTION_UPSERT,
            [
                (session_id, writes.decision_id, q.tool_call_id, q.tool_name, q.arguments_digest,
                 now)
                for q in writes.questions
            ],
        )  # fmt: skip

"""Sessions that read untrusted input: the messages that looked like a prompt injection,
and those a model classifier has not judged yet (or could not).

A session is *tainted* once one message was flagged, and stays so (until DeleteSession): the
model has read it, whatever was hidden or summarised since. A session is *unchecked* while a
message waits for the classifier, or after the classifier failed on one: cannot tell means
ask. Rows live in the store (`session_taint`, SQLite or PostgreSQL); `SessionTaint` writes
them, and every Inspect reads the session's status with its snapshot (store/model.py), so a
taint recorded through one replica decides the next Inspect on another.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Literal, NamedTuple, cast

from sidecar.store.sql import Database, Executor

State = Literal["flagged", "pending", "failed"]
Source = Literal["append", "inspect", "classifier"]
MAX_EXCERPT = 400
MAX_ROWS_PER_SESSION = 1000

_ENTRY = "SELECT message_id, source, state, rules, excerpt, at FROM session_taint "
FIRST_FLAGGED = _ENTRY + "WHERE session_id = ? AND state = 'flagged' ORDER BY id LIMIT 1"
FIRST_UNCHECKED = _ENTRY + "WHERE session_id = ? AND state <> 'flagged' ORDER BY id LIMIT 1"
COUNT_FLAGGED = "SELECT COUNT(*) FROM session_taint WHERE session_id = ? AND state = 'flagged'"


class TaintEntry(NamedTuple):
    message_id: str  # the message (or ToolOutput's call id) that caused it
    source: Source
    state: State
    rules: tuple[str, ...]
    excerpt: str
    at: float


class TaintStatus(NamedTuple):
    flagged: TaintEntry | None  # the first message that tainted the session
    flagged_count: int
    unchecked: TaintEntry | None  # a message the classifier has not (or could not) judge

    @property
    def untrusted(self) -> bool:
        return self.flagged is not None or self.unchecked is not None


CLEAN = TaintStatus(None, 0, None)


def entry(row: Sequence[object] | None) -> TaintEntry | None:
    if row is None:
        return None
    message_id, source, state, rules, excerpt, at = row
    return TaintEntry(
        str(message_id),
        cast(Source, str(source)),
        cast(State, str(state)),
        tuple(str(rules).split(",")) if rules else (),
        str(excerpt),
        float(at),  # type: ignore[arg-type]
    )


async def read_status(db: Executor, session_id: str) -> TaintStatus:
    """A session's status in three small queries (SQLite; PostgreSQL reads it with the
    snapshot's one query)."""
    flagged = entry(await db.fetchrow(FIRST_FLAGGED, (session_id,)))
    if flagged is None:
        unchecked = entry(await db.fetchrow(FIRST_UNCHECKED, (session_id,)))
        return CLEAN if unchecked is None else TaintStatus(None, 0, unchecked)
    count = await db.fetchrow(COUNT_FLAGGED, (session_id,))
    unchecked = entry(await db.fetchrow(FIRST_UNCHECKED, (session_id,)))
    return TaintStatus(flagged, int(count[0]) if count else 1, unchecked)


def _nothing(session_id: str) -> None:
    """No cache to tell."""


class SessionTaint:
    def __init__(
        self,
        database: Database,
        changed: Callable[[str], None] = _nothing,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """`changed`: a session's taint changed (the SQLite store's copy forgets it)."""
        self._database = database
        self._changed = changed
        self._clock = clock

    async def open(self) -> None:
        """One process owning the store: a classifier's answer does not survive a restart
        (it never came). Not on a shared store, where another process may be waiting for
        one; a check lost with a process stays pending, which asks the same way."""
        if self._database.shared:
            return
        async with self._database.transaction("taint_restart") as db:
            await db.execute("UPDATE session_taint SET state = 'failed' WHERE state = 'pending'")

    async def flag(
        self,
        session_id: str,
        message_id: str,
        source: Source,
        rules: tuple[str, ...],
        excerpt: str,
    ) -> bool:
        """Record a flagged message; True if the session was not tainted before."""
        return await self._write(session_id, message_id, source, "flagged", rules, excerpt)

    async def pending(self, session_id: str, message_id: str, source: Source) -> None:
        await self._write(session_id, message_id, source, "pending", (), "")

    async def resolve(
        self,
        session_id: str,
        message_id: str,
        outcome: Literal["clean", "flagged", "failed"],
        rules: tuple[str, ...] = (),
        excerpt: str = "",
    ) -> bool:
        """The classifier's answer for a pending message; True if it newly taints."""
        async with self._database.transaction("taint_resolve") as db:
            before = await db.fetchrow(FIRST_FLAGGED, (session_id,)) is None
            if outcome == "clean":
                await db.execute(
                    "DELETE FROM session_taint WHERE session_id = ? AND message_id = ? "
                    "AND state = 'pending'",
                    (session_id, message_id),
                )
            else:
                await db.execute(
                    "UPDATE session_taint SET state = ?, source = 'classifier', rules = ?, "
                    "excerpt = ?, at = ? WHERE session_id = ? AND message_id = ? "
                    "AND state = 'pending'",
                    (outcome, ",".join(rules), _text(excerpt[:MAX_EXCERPT]), self._clock(),
                     session_id, message_id),
                )  # fmt: skip
        self._changed(session_id)
        return outcome == "flagged" and before

    async def _write(
        self,
        session_id: str,
        message_id: str,
        source: Source,
        state: State,
        rules: tuple[str, ...],
        excerpt: str,
    ) -> bool:
        async with self._database.transaction("taint_write") as db:
            before = await db.fetchrow(FIRST_FLAGGED, (session_id,)) is None
            if state == "flagged" and not before:
                known = await db.fetchrow(
                    "SELECT 1 FROM session_taint WHERE session_id = ? AND message_id = ? "
                    "AND state = 'flagged'",
                    (session_id, message_id),
                )
                if known is not None:
                    return False  # the same message again (a runtime resends its outputs)
            count = await db.fetchrow(
                "SELECT COUNT(*) FROM session_taint WHERE session_id = ?", (session_id,)
            )
            if count is not None and int(count[0]) >= MAX_ROWS_PER_SESSION and state == "flagged":
                return False  # the first ones are what prompts name; the session stays tainted
            await db.execute(
                "INSERT INTO session_taint (session_id, message_id, source, state, rules, "
                "excerpt, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, message_id, source, state, ",".join(rules),
                 _text(excerpt[:MAX_EXCERPT]), self._clock()),
            )  # fmt: skip
        self._changed(session_id)
        return state == "flagged" and before

    async def status(self, session_id: str) -> TaintStatus:
        """Read now (tests, tools); Inspect reads it with the session's snapshot."""
        async with self._database.reading("taint_status") as db:
            return await read_status(db, session_id)


def _text(value: str) -> str:
    """PostgreSQL text cannot hold NUL (an excerpt of hidden text may)."""
    return value.replace("\x00", "\ufffd")

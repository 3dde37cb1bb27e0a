"""Sessions that read untrusted input: the messages that looked like a prompt injection,
and those a model classifier has not judged yet (or could not).

A session is *tainted* once one message was flagged, and stays so (until DeleteSession): the
model has read it, whatever was hidden or summarised since. A session is *unchecked* while a
message waits for the classifier, or after the classifier failed on one: cannot tell means
ask. Rows live in the state store (`session_taint`), so both survive a restart; a pending
check lost with a restart counts as failed.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Literal, NamedTuple

from sidecar.state.store import StateStore

State = Literal["flagged", "pending", "failed"]
Source = Literal["append", "inspect", "classifier"]
MAX_EXCERPT = 400
MAX_ROWS_PER_SESSION = 1000
_CACHE = 4096


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


_CLEAN = TaintStatus(None, 0, None)


class SessionTaint:
    def __init__(self, store: StateStore, clock: Callable[[], float] = time.time) -> None:
        self._store = store
        self._clock = clock
        self._lock = threading.Lock()
        with store.transaction() as db:
            # A classifier's answer does not survive a restart: it never came.
            db.execute("UPDATE session_taint SET state = 'failed' WHERE state = 'pending'")
            rows = db.execute("SELECT DISTINCT session_id FROM session_taint").fetchall()
        self._sessions = {row[0] for row in rows}
        self._status: OrderedDict[str, TaintStatus] = OrderedDict()

    def flag(
        self,
        session_id: str,
        message_id: str,
        source: Source,
        rules: tuple[str, ...],
        excerpt: str,
    ) -> bool:
        """Record a flagged message; True if the session was not tainted before."""
        before = self.status(session_id).flagged is None
        self._write(session_id, message_id, source, "flagged", rules, excerpt)
        return before

    def pending(self, session_id: str, message_id: str, source: Source) -> None:
        self._write(session_id, message_id, source, "pending", (), "")

    def resolve(
        self,
        session_id: str,
        message_id: str,
        outcome: Literal["clean", "flagged", "failed"],
        rules: tuple[str, ...] = (),
        excerpt: str = "",
    ) -> bool:
        """The classifier's answer for a pending message; True if it newly taints."""
        before = self.status(session_id).flagged is None
        with self._store.transaction() as db:
            if outcome == "clean":
                db.execute(
                    "DELETE FROM session_taint WHERE session_id = ? AND message_id = ? "
                    "AND state = 'pending'",
                    (session_id, message_id),
                )
            else:
                db.execute(
                    "UPDATE session_taint SET state = ?, source = 'classifier', rules = ?, "
                    "excerpt = ?, at = ? WHERE session_id = ? AND message_id = ? "
                    "AND state = 'pending'",
                    (outcome, ",".join(rules), excerpt[:MAX_EXCERPT], self._clock(), session_id,
                     message_id),
                )  # fmt: skip
        self._drop(session_id)
        return outcome == "flagged" and before

    def _write(
        self,
        session_id: str,
        message_id: str,
        source: Source,
        state: State,
        rules: tuple[str, ...],
        excerpt: str,
    ) -> None:
        with self._store.transaction() as db:
            count = db.execute(
                "SELECT COUNT(*) FROM session_taint WHERE session_id = ?", (session_id,)
            ).fetchone()[0]
            if count >= MAX_ROWS_PER_SESSION and state == "flagged":
                return  # the first ones are what prompts name; the session stays tainted
            db.execute(
                "INSERT INTO session_taint (session_id, message_id, source, state, rules, "
                "excerpt, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, message_id, source, state, ",".join(rules), excerpt[:MAX_EXCERPT],
                 self._clock()),
            )  # fmt: skip
        with self._lock:
            self._sessions.add(session_id)
        self._drop(session_id)

    def status(self, session_id: str) -> TaintStatus:
        if session_id not in self._sessions:
            return _CLEAN
        with self._lock:
            cached = self._status.get(session_id)
            if cached is not None:
                self._status.move_to_end(session_id)
                return cached
        with self._store.reading() as db:
            rows = db.execute(
                "SELECT message_id, source, state, rules, excerpt, at FROM session_taint "
                "WHERE session_id = ? ORDER BY id",
                (session_id,),
            ).fetchall()
        entries = [
            TaintEntry(m, s, st, tuple(r.split(",")) if r else (), e, a)
            for m, s, st, r, e, a in rows
        ]
        flagged = [e for e in entries if e.state == "flagged"]
        unchecked = next((e for e in entries if e.state != "flagged"), None)
        status = TaintStatus(flagged[0] if flagged else None, len(flagged), unchecked)
        with self._lock:
            self._status[session_id] = status
            while len(self._status) > _CACHE:
                self._status.popitem(last=False)
        return status

    def _drop(self, session_id: str) -> None:
        with self._lock:
            self._status.pop(session_id, None)

    def forget(self, session_id: str) -> bool:
        """A deleted session (DeleteSession removed its rows); True if it had any."""
        with self._lock:
            had = session_id in self._sessions
            self._sessions.discard(session_id)
            self._status.pop(session_id, None)
        return had

"""Approval questions and people's answers, bound to exactly what was asked.

A REQUIRE_APPROVAL verdict becomes a *question*: (session, decision_id, tool_call_id) with the
tool and a digest of its canonical arguments. RecordDecision answers a question at most once.
A "once" answer is then *pending*: the next Inspect in the session of the same tool with the
same arguments uses it up, whatever call id the runtime gives it. "Always" answers stand for
the session and tool. Every table is keyed by session_id, so removing a session is a DELETE.

One sidecar owns the state file (see StateStore), so the in-memory indexes are exact.
"""

from __future__ import annotations

import enum
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sidecar.inspection.verdict import Verdict
from sidecar.state.store import StateStore

# Tables that hold anything about a session's approvals (DeleteSession removes their rows).
SESSION_TABLES = ("approval_questions", "once_answers", "standing_answers", "answer_log")
_PRUNE_EVERY = 1024  # question inserts between two prunes


@dataclass(frozen=True, slots=True)
class Question:
    tool_call_id: str
    tool_name: str
    arguments_digest: str


@dataclass(frozen=True, slots=True)
class OnceAnswer:
    """A person's verdict on one exact call, waiting for that call's next Inspect."""

    verdict: Verdict
    decision_id: str
    tool_call_id: str
    answered_at: float


class Refusal(enum.Enum):
    """Why an answer cannot be recorded (RecordDecision answers FAILED_PRECONDITION)."""

    NOT_ASKED = "no such question was asked in this session"
    ANSWERED = "this question was already answered"
    EXPIRED = "this question expired before it was answered"
    OTHER_TOOL = "this question was about another tool"


class AnswerRefused(Exception):
    def __init__(self, refusal: Refusal, detail: str = "") -> None:
        self.refusal = refusal
        super().__init__(refusal.value + (f" ({detail})" if detail else ""))


class ApprovalStore:
    """Questions, pending once answers and standing answers, in the state file.

    Reads on the Inspect path touch memory only: sessions without answers cost a set lookup.
    """

    def __init__(
        self,
        state: StateStore,
        question_ttl_seconds: float = 86_400.0,
        once_ttl_seconds: float = 3_600.0,
        max_questions: int = 100_000,
        clock: Callable[[], float] = time.time,
        cache_entries: int = 100_000,
        cache_bytes: int = 16 * 1024 * 1024,
    ) -> None:
        self._state = state
        self._question_ttl = question_ttl_seconds
        self._once_ttl = once_ttl_seconds
        self._max_questions = max_questions
        self._clock = clock
        self._cache_entries = cache_entries
        # Keys are client strings of up to 256 characters each: bounded in bytes too.
        self._cache_bytes_limit = cache_bytes
        self._cache_bytes = 0
        self._inserts_since_prune = 0
        self._standing_cache: OrderedDict[tuple[str, str], Verdict | None] = OrderedDict()
        self._standing_sessions: set[str] = set()
        # session -> (tool, digest) -> answers, oldest first.
        self._pending: dict[str, dict[tuple[str, str], list[OnceAnswer]]] = {}
        self._load()

    def _load(self) -> None:
        cutoff = self._clock() - self._once_ttl
        with self._state.transaction() as db:
            db.execute("DELETE FROM once_answers WHERE answered_at < ?", (cutoff,))
            rows = db.execute(
                "SELECT session_id, tool_name, arguments_digest, verdict, decision_id, "
                "tool_call_id, answered_at FROM once_answers ORDER BY answered_at"
            ).fetchall()
            standing = db.execute("SELECT DISTINCT session_id FROM standing_answers").fetchall()
        for session, tool, digest, verdict, decision_id, call_id, answered_at in rows:
            answer = OnceAnswer(Verdict(verdict), decision_id, call_id, answered_at)
            self._pending.setdefault(session, {}).setdefault((tool, digest), []).append(answer)
        self._standing_sessions = {row[0] for row in standing}

    # -- questions ---------------------------------------------------------------------

    def ask(self, session_id: str, decision_id: str, questions: Sequence[Question]) -> None:
        """Remember the questions one Inspect asked, so that only they can be answered."""
        if not questions:
            return
        now = self._clock()
        with self._state.transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO approval_questions (session_id, decision_id, "
                "tool_call_id, tool_name, arguments_digest, asked_at) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (session_id, decision_id, q.tool_call_id, q.tool_name, q.arguments_digest, now)
                    for q in questions
                ],
            )
        self._inserts_since_prune += len(questions)
        if self._inserts_since_prune >= _PRUNE_EVERY:
            self.prune()

    def prune(self) -> int:
        """Forget expired questions, and the oldest beyond the cap; returns how many went."""
        self._inserts_since_prune = 0
        cutoff = self._clock() - self._question_ttl
        with self._state.transaction() as db:
            removed = db.execute(
                "DELETE FROM approval_questions WHERE asked_at < ?", (cutoff,)
            ).rowcount
            count = db.execute("SELECT count(*) FROM approval_questions").fetchone()[0]
            excess = count - self._max_questions
            if excess > 0:
                removed += db.execute(
                    "DELETE FROM approval_questions WHERE rowid IN (SELECT rowid FROM "
                    "approval_questions ORDER BY asked_at LIMIT ?)",
                    (excess,),
                ).rowcount
        return int(removed)

    # -- answers -----------------------------------------------------------------------

    def answer(
        self,
        session_id: str,
        decision_id: str,
        tool_call_id: str,
        tool_name: str,
        label: str,
        verdict: Verdict,
        standing: bool,
    ) -> str:
        """Answer one asked question; returns the tool it was about.

        Raises AnswerRefused when the question was never asked, was answered, expired,
        or was about another tool than `tool_name` (when given). An "always" answer to a
        question also settles that exact call once, like a "once" answer.
        """
        now = self._clock()
        with self._state.transaction() as db:
            row = db.execute(
                "SELECT tool_name, arguments_digest, asked_at, answered_at "
                "FROM approval_questions "
                "WHERE session_id = ? AND decision_id = ? AND tool_call_id = ?",
                (session_id, decision_id, tool_call_id),
            ).fetchone()
            if row is None:
                raise AnswerRefused(Refusal.NOT_ASKED)
            asked_tool, digest, asked_at, answered_at = row
            if answered_at is not None:
                raise AnswerRefused(Refusal.ANSWERED)
            if asked_at < now - self._question_ttl:
                raise AnswerRefused(Refusal.EXPIRED)
            if tool_name and tool_name != asked_tool:
                raise AnswerRefused(Refusal.OTHER_TOOL, f"asked about {asked_tool!r}")
            db.execute(
                "UPDATE approval_questions SET answer = ?, answered_at = ? "
                "WHERE session_id = ? AND decision_id = ? AND tool_call_id = ?",
                (label, now, session_id, decision_id, tool_call_id),
            )
            db.execute(
                "INSERT INTO once_answers (session_id, tool_name, arguments_digest, verdict, "
                "decision_id, tool_call_id, answered_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, asked_tool, digest, int(verdict), decision_id, tool_call_id, now),
            )
            self._log(db, session_id, asked_tool, tool_call_id, label, decision_id, digest, now)
            if standing:
                self._stand(db, session_id, asked_tool, verdict, decision_id, now)
        once = OnceAnswer(verdict, decision_id, tool_call_id, now)
        self._pending.setdefault(session_id, {}).setdefault((asked_tool, digest), []).append(once)
        if standing:
            self._remember_standing(session_id, asked_tool, verdict)
        return str(asked_tool)

    def set_standing(
        self, session_id: str, tool_name: str, label: str, verdict: Verdict, decision_id: str = ""
    ) -> None:
        """A standing rule a person set without a prompt (an "always" answer, no question)."""
        now = self._clock()
        with self._state.transaction() as db:
            self._log(db, session_id, tool_name, "", label, decision_id, "", now)
            self._stand(db, session_id, tool_name, verdict, decision_id, now)
        self._remember_standing(session_id, tool_name, verdict)

    @staticmethod
    def _stand(
        db: sqlite3.Connection,
        session_id: str,
        tool: str,
        verdict: Verdict,
        decision_id: str,
        now: float,
    ) -> None:
        db.execute(
            "INSERT OR REPLACE INTO standing_answers VALUES (?, ?, ?, ?, ?)",
            (session_id, tool, int(verdict), decision_id, now),
        )

    @staticmethod
    def _log(
        db: sqlite3.Connection,
        session_id: str,
        tool: str,
        call_id: str,
        label: str,
        decision_id: str,
        digest: str,
        now: float,
    ) -> None:
        db.execute(
            "INSERT INTO answer_log (session_id, tool_name, tool_call_id, answer, decision_id, "
            "answered_at, arguments_digest) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (session_id, tool, call_id, label, decision_id, now, digest),
        )

    # -- the Inspect path --------------------------------------------------------------

    def has_once_answers(self, session_id: str) -> bool:
        return session_id in self._pending

    def take_once_answer(self, session_id: str, tool_name: str, digest: str) -> OnceAnswer | None:
        """The oldest pending answer to this exact call, used up; None if there is none."""
        by_call = self._pending.get(session_id)
        if by_call is None:
            return None
        answers = by_call.get((tool_name, digest))
        if not answers:
            return None
        cutoff = self._clock() - self._once_ttl
        found: OnceAnswer | None = None
        used: list[OnceAnswer] = []
        while answers and found is None:
            answer = answers.pop(0)
            used.append(answer)
            if answer.answered_at >= cutoff:
                found = answer
        if not answers:
            del by_call[(tool_name, digest)]
            if not by_call:
                del self._pending[session_id]
        with self._state.transaction() as db:
            db.executemany(
                "DELETE FROM once_answers WHERE session_id = ? AND decision_id = ? "
                "AND tool_call_id = ?",
                [(session_id, a.decision_id, a.tool_call_id) for a in used],
            )
        return found

    def standing_answer(self, session_id: str, tool_name: str) -> Verdict | None:
        if session_id not in self._standing_sessions:
            return None
        key = (session_id, tool_name)
        cache = self._standing_cache
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
        with self._state.reading() as db:
            row = db.execute(
                "SELECT verdict FROM standing_answers WHERE session_id = ? AND tool_name = ?",
                key,
            ).fetchone()
        verdict = Verdict(row[0]) if row else None
        self._cache_standing(key, verdict)
        return verdict

    def _remember_standing(self, session_id: str, tool_name: str, verdict: Verdict) -> None:
        self._standing_sessions.add(session_id)
        self._cache_standing((session_id, tool_name), verdict)

    def _cache_standing(self, key: tuple[str, str], verdict: Verdict | None) -> None:
        cache = self._standing_cache
        if key not in cache:
            self._cache_bytes += _weight(key)
        cache[key] = verdict
        cache.move_to_end(key)
        while len(cache) > self._cache_entries or self._cache_bytes > self._cache_bytes_limit:
            dropped, _ = cache.popitem(last=False)
            self._cache_bytes -= _weight(dropped)

    @property
    def cache_bytes(self) -> int:
        """Estimated bytes the standing-answer cache holds."""
        return self._cache_bytes

    # -- sessions ----------------------------------------------------------------------

    def forget_session(self, session_id: str) -> bool:
        """Remove every question and answer of a session (for DeleteSession and retention);
        True if it had any in memory."""
        had = session_id in self._pending or session_id in self._standing_sessions
        with self._state.transaction() as db:
            for table in SESSION_TABLES:
                db.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))  # noqa: S608
        self._pending.pop(session_id, None)
        self._standing_sessions.discard(session_id)
        for key in [k for k in self._standing_cache if k[0] == session_id]:
            del self._standing_cache[key]
            self._cache_bytes -= _weight(key)
        return had


def _weight(key: tuple[str, str]) -> int:
    """Rough bytes of a cache entry: its strings plus fixed overheads."""
    return 200 + sum(len(part) for part in key)

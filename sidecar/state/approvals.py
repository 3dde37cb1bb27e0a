"""Approval questions and people's answers, bound to exactly what was asked.

A REQUIRE_APPROVAL verdict becomes a *question*: (session, decision_id, tool_call_id) with the
tool and a digest of its canonical arguments. RecordDecision answers a question at most once.
A "once" answer is then *pending*: the next Inspect in the session of the same tool with the
same arguments uses it up, whatever call id the runtime gives it. "Always" answers stand for
the session and tool. Every table is keyed by session_id, so removing a session is a DELETE.

The Inspect path reads answers from the session's snapshot and writes questions after the
chain (sidecar/store/states.py); RecordDecision writes here. Both engines run the same SQL;
answering a question is a conditional update, so two replicas can never both answer it.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass

from sidecar.inspection.verdict import Verdict
from sidecar.store.sql import Database, Executor

# Tables that hold anything about a session's approvals (DeleteSession removes their rows).
SESSION_TABLES = ("approval_questions", "once_answers", "standing_answers", "answer_log")


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
    """Answers to asked questions, and standing answers set without a prompt."""

    def __init__(
        self,
        database: Database,
        question_ttl_seconds: float = 86_400.0,
        once_ttl_seconds: float = 3_600.0,
        max_questions: int = 100_000,
        clock: Callable[[], float] = time.time,
        changed: Callable[[str], None] = lambda session_id: None,
    ) -> None:
        """`changed`: told the session whose answers changed (a cache of them drops it)."""
        self._db = database
        self._question_ttl = question_ttl_seconds
        self._once_ttl = once_ttl_seconds
        self._max_questions = max_questions
        self._clock = clock
        self._changed = changed

    @property
    def once_ttl_seconds(self) -> float:
        return self._once_ttl

    async def prune(self) -> int:
        """Forget expired questions and once answers, and the oldest questions beyond the
        cap; returns how many rows went."""
        now = self._clock()
        async with self._db.transaction("approvals_prune") as db:
            removed = await db.execute(
                "DELETE FROM approval_questions WHERE asked_at < ?", (now - self._question_ttl,)
            )
            removed += await db.execute(
                "DELETE FROM once_answers WHERE answered_at < ?", (now - self._once_ttl,)
            )
            row = await db.fetchrow("SELECT count(*) FROM approval_questions")
            excess = int(row[0]) - self._max_questions if row is not None else 0
            if excess > 0:
                removed += await db.execute(
                    "DELETE FROM approval_questions WHERE (session_id, decision_id, tool_call_id) "
                    "IN (SELECT session_id, decision_id, tool_call_id FROM approval_questions "
                    "ORDER BY asked_at LIMIT ?)",
                    (excess,),
                )
        return removed

    async def answer(
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
        async with self._db.transaction("answer") as db:
            row = await db.fetchrow(
                "SELECT tool_name, arguments_digest, asked_at, answered_at "
                "FROM approval_questions "
                "WHERE session_id = ? AND decision_id = ? AND tool_call_id = ?",
                (session_id, decision_id, tool_call_id),
            )
            if row is None:
                raise AnswerRefused(Refusal.NOT_ASKED)
            asked_tool, digest, asked_at, answered_at = row
            if answered_at is not None:
                raise AnswerRefused(Refusal.ANSWERED)
            if asked_at < now - self._question_ttl:
                raise AnswerRefused(Refusal.EXPIRED)
            if tool_name and tool_name != asked_tool:
                raise AnswerRefused(Refusal.OTHER_TOOL, f"asked about {asked_tool!r}")
            # Conditional: of two replicas answering at once, one finds it answered.
            updated = await db.execute(
                "UPDATE approval_questions SET answer = ?, answered_at = ? "
                "WHERE session_id = ? AND decision_id = ? AND tool_call_id = ? "
                "AND answered_at IS NULL",
                (label, now, session_id, decision_id, tool_call_id),
            )
            if updated != 1:
                raise AnswerRefused(Refusal.ANSWERED)
            await db.execute(
                "INSERT INTO once_answers (session_id, tool_name, arguments_digest, verdict, "
                "decision_id, tool_call_id, answered_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, asked_tool, digest, int(verdict), decision_id, tool_call_id, now),
            )
            await _log(db, session_id, asked_tool, tool_call_id, label, decision_id, digest, now)
            if standing:
                await _stand(db, session_id, asked_tool, verdict, decision_id, now)
        self._changed(session_id)
        return str(asked_tool)

    async def set_standing(
        self, session_id: str, tool_name: str, label: str, verdict: Verdict, decision_id: str = ""
    ) -> None:
        """A standing rule a person set without a prompt (an "always" answer, no question)."""
        now = self._clock()
        async with self._db.transaction("set_standing") as db:
            await _log(db, session_id, tool_name, "", label, decision_id, "", now)
            await _stand(db, session_id, tool_name, verdict, decision_id, now)
        self._changed(session_id)


async def _stand(
    db: Executor, session_id: str, tool: str, verdict: Verdict, decision_id: str, now: float
) -> None:
    await db.execute(
        "INSERT INTO standing_answers (session_id, tool_name, verdict, decision_id, answered_at) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id, tool_name) DO UPDATE SET "
        "verdict = excluded.verdict, decision_id = excluded.decision_id, "
        "answered_at = excluded.answered_at",
        (session_id, tool, int(verdict), decision_id, now),
    )


async def _log(
    db: Executor,
    session_id: str,
    tool: str,
    call_id: str,
    label: str,
    decision_id: str,
    digest: str,
    now: float,
) -> None:
    await db.execute(
        "INSERT INTO answer_log (session_id, tool_name, tool_call_id, answer, decision_id, "
        "answered_at, arguments_digest) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (session_id, tool, call_id, label, decision_id, now, digest),
    )

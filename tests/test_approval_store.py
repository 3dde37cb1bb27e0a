"""The approval store: questions expire, are capped, and a session's rows go with it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sidecar.inspection.answers import apply_once_answers, arguments_digest
from sidecar.inspection.model import CallVerdict, ToolCall
from sidecar.inspection.verdict import Verdict
from sidecar.state.approvals import (
    SESSION_TABLES,
    AnswerRefused,
    ApprovalStore,
    Question,
    Refusal,
)
from sidecar.state.store import StateStore


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


CALL = ToolCall("c1", "write_file", {"path": "a", "content": "x"})
DIGEST = arguments_digest(CALL)


def store(path: Path, clock: Clock, **options: float) -> ApprovalStore:
    return ApprovalStore(StateStore(str(path)), clock=clock, **options)  # type: ignore[arg-type]


def test_the_digest_ignores_key_order_and_nothing_else() -> None:
    reordered = ToolCall("other-id", "write_file", {"content": "x", "path": "a"})
    assert arguments_digest(reordered) == DIGEST
    assert arguments_digest(ToolCall("c1", "write_file", {"path": "a", "content": "y"})) != DIGEST
    assert arguments_digest(ToolCall("c1", "write_file", {"path": "a", "content": 1})) != (
        arguments_digest(ToolCall("c1", "write_file", {"path": "a", "content": True}))
    )
    assert len(DIGEST) == 64  # sha256, hex
    # A lone surrogate cannot make the digest fail.
    assert arguments_digest(ToolCall("c", "t", {"x": "\udcff"}))


def test_a_question_expires(tmp_path: Path) -> None:
    clock = Clock()
    approvals = store(tmp_path / "s.db", clock, question_ttl_seconds=60)
    approvals.ask("s", "d", [Question("c1", "write_file", DIGEST)])
    clock.now += 61
    with pytest.raises(AnswerRefused) as refused:
        approvals.answer("s", "d", "c1", "write_file", "allow_once", Verdict.ALLOW, False)
    assert refused.value.refusal is Refusal.EXPIRED


def test_a_question_can_be_answered_just_before_it_expires(tmp_path: Path) -> None:
    clock = Clock()
    approvals = store(tmp_path / "s.db", clock, question_ttl_seconds=60)
    approvals.ask("s", "d", [Question("c1", "write_file", DIGEST)])
    clock.now += 60
    assert approvals.answer("s", "d", "c1", "", "allow_once", Verdict.ALLOW, False) == "write_file"


def test_an_unused_once_answer_expires(tmp_path: Path) -> None:
    clock = Clock()
    approvals = store(tmp_path / "s.db", clock, once_ttl_seconds=30)
    approvals.ask("s", "d", [Question("c1", "write_file", DIGEST)])
    approvals.answer("s", "d", "c1", "write_file", "allow_once", Verdict.ALLOW, False)
    clock.now += 31
    assert approvals.take_once_answer("s", "write_file", DIGEST) is None
    assert not approvals.has_once_answers("s")  # the expired answer was dropped


def test_expired_once_answers_are_dropped_at_open(tmp_path: Path) -> None:
    clock = Clock()
    approvals = store(tmp_path / "s.db", clock, once_ttl_seconds=30)
    approvals.ask("s", "d", [Question("c1", "write_file", DIGEST), Question("c2", "t", "x")])
    approvals.answer("s", "d", "c1", "write_file", "allow_once", Verdict.ALLOW, False)
    clock.now += 20
    approvals.answer("s", "d", "c2", "t", "deny_once", Verdict.DENY, False)
    clock.now += 15  # the first answer is 35 s old, the second 15 s
    reopened = store(tmp_path / "s.db", clock, once_ttl_seconds=30)
    assert reopened.take_once_answer("s", "write_file", DIGEST) is None
    found = reopened.take_once_answer("s", "t", "x")
    assert found is not None and found.verdict is Verdict.DENY


def test_questions_beyond_the_cap_go_oldest_first(tmp_path: Path) -> None:
    clock = Clock()
    approvals = store(tmp_path / "s.db", clock, max_questions=3)
    for index in range(5):
        clock.now += 1
        approvals.ask("s", f"d{index}", [Question("c", "t", "x")])
    assert approvals.prune() == 2
    for index in (0, 1):
        with pytest.raises(AnswerRefused):
            approvals.answer("s", f"d{index}", "c", "t", "allow_once", Verdict.ALLOW, False)
    approvals.answer("s", "d2", "c", "t", "allow_once", Verdict.ALLOW, False)


def test_expired_questions_are_pruned(tmp_path: Path) -> None:
    clock = Clock()
    approvals = store(tmp_path / "s.db", clock, question_ttl_seconds=10)
    approvals.ask("s", "old", [Question("c", "t", "x")])
    clock.now += 11
    approvals.ask("s", "new", [Question("c", "t", "x")])
    assert approvals.prune() == 1
    with sqlite3.connect(tmp_path / "s.db") as db:
        assert db.execute("SELECT decision_id FROM approval_questions").fetchall() == [("new",)]


def test_prune_runs_by_itself_as_questions_are_asked(tmp_path: Path) -> None:
    clock = Clock()
    approvals = store(tmp_path / "s.db", clock, max_questions=10)
    for index in range(1100):
        approvals.ask("s", f"d{index}", [Question("c", "t", "x")])
    with sqlite3.connect(tmp_path / "s.db") as db:
        (count,) = db.execute("SELECT count(*) FROM approval_questions").fetchone()
    assert count <= 1100 - 1024 + 10


def test_forgetting_a_session_removes_every_row_of_it(tmp_path: Path) -> None:
    clock = Clock()
    approvals = store(tmp_path / "s.db", clock)
    for session in ("gone", "kept"):
        approvals.ask(
            session, "d", [Question("c1", "write_file", DIGEST), Question("c2", "t", "y")]
        )
        approvals.answer(session, "d", "c1", "", "allow_once", Verdict.ALLOW, False)
        approvals.answer(session, "d", "c2", "", "always_deny", Verdict.DENY, True)
    approvals.forget_session("gone")
    assert approvals.standing_answer("gone", "t") is None
    assert approvals.take_once_answer("gone", "write_file", DIGEST) is None
    assert approvals.standing_answer("kept", "t") is Verdict.DENY
    with sqlite3.connect(tmp_path / "s.db") as db:
        for table in SESSION_TABLES:
            sessions = {row[0] for row in db.execute(f"SELECT session_id FROM {table}")}
            assert sessions == {"kept"}, table
    reopened = store(tmp_path / "s.db", clock)
    assert reopened.standing_answer("gone", "t") is None
    assert reopened.take_once_answer("kept", "write_file", DIGEST) is not None


def test_standing_answers_are_found_after_reopening(tmp_path: Path) -> None:
    clock = Clock()
    approvals = store(tmp_path / "s.db", clock)
    approvals.set_standing("b", "deploy", "always_deny", Verdict.DENY)
    assert approvals.standing_answer("b", "deploy") is Verdict.DENY
    reopened = store(tmp_path / "s.db", clock)
    assert reopened.standing_answer("b", "deploy") is Verdict.DENY
    assert reopened.standing_answer("a", "deploy") is None
    assert reopened.standing_answer("b", "other") is None


def _verdict(verdict: Verdict, call: ToolCall = CALL) -> CallVerdict:
    return CallVerdict(call, verdict, "the policy's reason", "prompt" * (verdict == 2), [])


@pytest.mark.parametrize(
    ("before", "answer", "after"),
    [
        (Verdict.REQUIRE_APPROVAL, Verdict.ALLOW, Verdict.ALLOW),
        (Verdict.REQUIRE_APPROVAL, Verdict.DENY, Verdict.DENY),
        (Verdict.DENY, Verdict.ALLOW, Verdict.DENY),  # an answer never loosens a denial
        (Verdict.ALLOW, Verdict.DENY, Verdict.DENY),  # but may tighten an allow
        (Verdict.ALLOW, Verdict.ALLOW, Verdict.ALLOW),
    ],
)
def test_how_a_once_answer_settles_a_verdict(
    tmp_path: Path, before: Verdict, answer: Verdict, after: Verdict
) -> None:
    approvals = store(tmp_path / "s.db", Clock())
    approvals.ask("s", "d", [Question("c1", "write_file", DIGEST)])
    approvals.answer("s", "d", "c1", "", "x_once", answer, False)
    (settled,) = apply_once_answers("s", [_verdict(before)], approvals)
    assert settled.verdict is after
    assert settled.approval_prompt == ""
    assert settled.findings[-1].rule_id == "permission.answered_once"
    if before is Verdict.DENY:
        assert settled.reason == "the policy's reason"
    # Used up, whatever the outcome.
    assert not approvals.has_once_answers("s")

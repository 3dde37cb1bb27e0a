"""RecordDecision: people's answers persist in SQLite, survive a restart, and apply later."""

from __future__ import annotations

import sqlite3

import grpc
import pytest

from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar, tool


async def inspect_one(address: str, session: str, call: pb.ToolCall) -> pb.ToolVerdict:
    async with grpc.aio.insecure_channel(address) as channel:
        response = await pb_grpc.PolicyServiceStub(channel).Inspect(
            pb.InspectRequest(session_id=session, tool_calls=[call])
        )
    return response.verdicts[0]


async def record(address: str, **fields: object) -> pb.RecordDecisionResponse:
    async with grpc.aio.insecure_channel(address) as channel:
        return await pb_grpc.PolicyServiceStub(channel).RecordDecision(
            pb.RecordDecisionRequest(**fields)  # type: ignore[arg-type]
        )


async def test_always_answers_survive_a_restart(start_sidecar: StartSidecar, state_path) -> None:
    first = await start_sidecar()
    address = first.addresses[0]
    write = tool("1", "write_file", path="a.txt", content="x")
    deploy = tool("2", "deploy", target="prod")
    assert (await inspect_one(address, "s", write)).verdict == pb.VERDICT_REQUIRE_APPROVAL
    allowed = await record(
        address,
        session_id="s",
        tool_name="write_file",
        answer=pb.ANSWER_ALWAYS_ALLOW,
        decision_id="d1",
    )
    denied = await record(
        address, session_id="s", tool_name="deploy", answer=pb.ANSWER_ALWAYS_DENY, decision_id="d2"
    )
    assert allowed.persisted and denied.persisted
    await first.stop(grace=0)

    second = await start_sidecar()  # same SQLite file
    address = second.addresses[0]
    assert (await inspect_one(address, "s", write)).verdict == pb.VERDICT_ALLOW
    assert (await inspect_one(address, "s", deploy)).verdict == pb.VERDICT_DENY
    # Answers belong to their session.
    assert (await inspect_one(address, "other", write)).verdict == pb.VERDICT_REQUIRE_APPROVAL
    with sqlite3.connect(state_path) as db:
        rows = db.execute("SELECT answer, decision_id FROM answer_log ORDER BY id").fetchall()
    assert rows == [("always_allow", "d1"), ("always_deny", "d2")]


async def test_once_answers_apply_to_that_call_only(start_sidecar: StartSidecar) -> None:
    sidecar = await start_sidecar()
    address = sidecar.addresses[0]
    response = await record(
        address,
        session_id="s",
        tool_name="write_file",
        tool_call_id="c1",
        answer=pb.ANSWER_ALLOW_ONCE,
    )
    assert not response.persisted
    approved = tool("c1", "write_file", path="a", content="x")
    later = tool("c2", "write_file", path="a", content="x")
    assert (await inspect_one(address, "s", approved)).verdict == pb.VERDICT_ALLOW
    assert (await inspect_one(address, "s", later)).verdict == pb.VERDICT_REQUIRE_APPROVAL
    await record(
        address,
        session_id="s",
        tool_name="write_file",
        tool_call_id="c3",
        answer=pb.ANSWER_DENY_ONCE,
    )
    assert (await inspect_one(address, "s", tool("c3", "write_file"))).verdict == pb.VERDICT_DENY


async def test_a_persons_allow_does_not_override_a_security_deny(
    start_sidecar: StartSidecar,
) -> None:
    sidecar = await start_sidecar()
    address = sidecar.addresses[0]
    await record(address, session_id="s", tool_name="shell", answer=pb.ANSWER_ALWAYS_ALLOW)
    verdict = await inspect_one(
        address, "s", pb.ToolCall(id="1", name="shell", arguments_json='{"command": "rm -rf /"}')
    )
    assert verdict.verdict == pb.VERDICT_DENY
    safe = await inspect_one(
        address, "s", pb.ToolCall(id="2", name="shell", arguments_json='{"command": "make"}')
    )
    assert safe.verdict == pb.VERDICT_ALLOW


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"tool_name": "t", "answer": pb.ANSWER_ALWAYS_ALLOW}, "session_id"),
        ({"session_id": "s", "answer": pb.ANSWER_ALWAYS_ALLOW}, "tool_name"),
        ({"session_id": "s", "tool_name": "t"}, "answer"),
        ({"session_id": "s", "tool_name": "t", "answer": 42}, "answer"),
        ({"session_id": "s", "tool_name": "t", "answer": pb.ANSWER_ALLOW_ONCE}, "tool_call_id"),
    ],
)
async def test_bad_answers_are_invalid_argument(
    start_sidecar: StartSidecar, fields: dict[str, object], field: str
) -> None:
    sidecar = await start_sidecar()
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await record(sidecar.addresses[0], **fields)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert (raised.value.details() or "").startswith(field + ":")


def test_the_store_finds_answers_of_both_kinds_after_reopening(tmp_path) -> None:
    # Sessions with answers are indexed in memory at open; both tables must feed it.
    from sidecar.inspection.verdict import Verdict
    from sidecar.state.store import StateStore

    path = str(tmp_path / "state.db")
    store = StateStore(path)
    store.record_answer("a", "shell", "call-1", "allow_once", Verdict.ALLOW, False, "d1")
    store.record_answer("b", "deploy", "", "always_deny", Verdict.DENY, True, "d2")
    assert store.one_time_answer("a", "call-1") is Verdict.ALLOW
    reopened = StateStore(path)
    assert reopened.one_time_answer("a", "call-1") is Verdict.ALLOW
    assert reopened.one_time_answer("a", "call-2") is None
    assert reopened.standing_answer("b", "deploy") is Verdict.DENY
    assert reopened.standing_answer("a", "deploy") is None
    assert reopened.standing_answer("never-answered", "deploy") is None

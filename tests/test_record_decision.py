"""RecordDecision: answers are bound to the question asked, persist, and apply once or always."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import grpc
import pytest

from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar, shell, tool
from tests.context_helpers import text


async def inspect(address: str, session: str, *calls: pb.ToolCall) -> pb.InspectResponse:
    async with grpc.aio.insecure_channel(address) as channel:
        return await pb_grpc.PolicyServiceStub(channel).Inspect(
            pb.InspectRequest(session_id=session, tool_calls=list(calls))
        )


async def inspect_one(address: str, session: str, call: pb.ToolCall) -> pb.ToolVerdict:
    return (await inspect(address, session, call)).verdicts[0]


async def record(address: str, metadata: Any = None, **fields: Any) -> pb.RecordDecisionResponse:
    async with grpc.aio.insecure_channel(address) as channel:
        return await pb_grpc.PolicyServiceStub(channel).RecordDecision(
            pb.RecordDecisionRequest(**fields),
            metadata=metadata,
        )


async def ask(address: str, session: str, call: pb.ToolCall) -> str:
    """Inspect one call that needs approval; return the decision id of the question."""
    response = await inspect(address, session, call)
    assert response.verdicts[0].verdict == pb.VERDICT_REQUIRE_APPROVAL
    assert response.verdicts[0].tool_call_id == call.id
    return response.decision_id


async def answer(
    address: str, session: str, decision_id: str, call: pb.ToolCall, choice: int
) -> pb.RecordDecisionResponse:
    return await record(
        address,
        session_id=session,
        decision_id=decision_id,
        tool_call_id=call.id,
        tool_name=call.name,
        answer=choice,
    )


async def test_allow_once_is_bound_to_the_tool_and_arguments_asked_about(
    start_sidecar: StartSidecar,
) -> None:
    # The probe: after ALLOW_ONCE for write_file call "1", every later call "1" was ALLOW.
    address = (await start_sidecar()).addresses[0]
    write = tool("1", "write_file", path="a.txt", content="x")
    decision = await ask(address, "A", write)
    response = await answer(address, "A", decision, write, pb.ANSWER_ALLOW_ONCE)
    assert not response.persisted

    for _ in range(3):
        dropped = await inspect_one(address, "A", tool("1", "delete_database", database="prod"))
        assert dropped.verdict == pb.VERDICT_REQUIRE_APPROVAL
    removed = await inspect_one(address, "A", shell("1", "rm -rf ./project"))
    assert removed.verdict == pb.VERDICT_REQUIRE_APPROVAL
    other_file = await inspect_one(address, "A", tool("1", "write_file", path="b.txt", content="x"))
    assert other_file.verdict == pb.VERDICT_REQUIRE_APPROVAL
    elsewhere = await inspect_one(address, "B", write)
    assert elsewhere.verdict == pb.VERDICT_REQUIRE_APPROVAL

    # The call asked about, re-Inspected (any id, any key order): allowed, once.
    same = pb.ToolCall(
        id="run-it", name="write_file", arguments_json='{"content": "x",  "path": "a.txt"}'
    )
    allowed = await inspect_one(address, "A", same)
    assert allowed.verdict == pb.VERDICT_ALLOW
    assert "permission.answered_once" in [f.rule_id for f in allowed.findings]
    assert decision in allowed.reason
    again = await inspect_one(address, "A", same)
    assert again.verdict == pb.VERDICT_REQUIRE_APPROVAL


async def test_deny_once_denies_that_call_once(start_sidecar: StartSidecar) -> None:
    address = (await start_sidecar()).addresses[0]
    deploy = tool("c1", "deploy", target="prod")
    decision = await ask(address, "s", deploy)
    await answer(address, "s", decision, deploy, pb.ANSWER_DENY_ONCE)
    assert (await inspect_one(address, "s", tool("c1", "deploy", target="dev"))).verdict == (
        pb.VERDICT_REQUIRE_APPROVAL
    )
    denied = await inspect_one(address, "s", deploy)
    assert denied.verdict == pb.VERDICT_DENY
    assert "denied this call once" in denied.reason
    assert (await inspect_one(address, "s", deploy)).verdict == pb.VERDICT_REQUIRE_APPROVAL


async def test_two_identical_calls_in_one_batch_use_one_answer(start_sidecar: StartSidecar) -> None:
    address = (await start_sidecar()).addresses[0]
    write = tool("1", "write_file", path="a", content="x")
    decision = await ask(address, "s", write)
    await answer(address, "s", decision, write, pb.ANSWER_ALLOW_ONCE)
    twice = tool("2", "write_file", path="a", content="x")
    response = await inspect(address, "s", write, twice)
    assert [v.verdict for v in response.verdicts] == [
        pb.VERDICT_ALLOW,
        pb.VERDICT_REQUIRE_APPROVAL,
    ]


async def test_a_once_answer_settles_a_question_another_inspector_asked(
    start_sidecar: StartSidecar,
) -> None:
    # Security asks about a force push of a branch not named as a topic branch (a shared
    # branch's is denied);
    # the person saw that prompt and allowed it once.
    address = (await start_sidecar()).addresses[0]
    push = shell("p", "git push --force origin login-rework")
    first = await inspect_one(address, "s", push)
    assert "effects.destroy-git-history" in [f.rule_id for f in first.findings]
    decision = await ask(address, "s", push)
    await answer(address, "s", decision, push, pb.ANSWER_ALLOW_ONCE)
    assert (await inspect_one(address, "s", push)).verdict == pb.VERDICT_ALLOW
    assert (await inspect_one(address, "s", push)).verdict == pb.VERDICT_REQUIRE_APPROVAL


async def test_answers_to_questions_never_asked_are_failed_precondition(
    start_sidecar: StartSidecar,
) -> None:
    sidecar = await start_sidecar()
    address = sidecar.addresses[0]
    write = tool("1", "write_file", path="a", content="x")
    decision = await ask(address, "s", write)
    allowed = await inspect(address, "s", tool("2", "read_file", path="a"))
    assert allowed.verdicts[0].verdict == pb.VERDICT_ALLOW

    never_asked = [
        {"decision_id": "not-a-decision", "tool_call_id": "1"},
        {"decision_id": decision, "tool_call_id": "2"},  # not part of that decision
        {"decision_id": allowed.decision_id, "tool_call_id": "2"},  # allowed: nothing to ask
        {"decision_id": decision, "tool_call_id": "1", "session_id": "other"},
        {"decision_id": decision, "tool_call_id": "1", "tool_name": "delete_database"},
    ]
    for fields in never_asked:
        request = {
            "session_id": "s",
            "tool_name": "write_file",
            "answer": pb.ANSWER_ALLOW_ONCE,
            **fields,
        }
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await record(address, **request)
        assert raised.value.code() == grpc.StatusCode.FAILED_PRECONDITION, fields

    await answer(address, "s", decision, write, pb.ANSWER_ALLOW_ONCE)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await answer(address, "s", decision, write, pb.ANSWER_ALWAYS_ALLOW)
    assert raised.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "already answered" in (raised.value.details() or "")
    # The refused answers changed nothing: the one real answer applies once.
    assert (await inspect_one(address, "s", write)).verdict == pb.VERDICT_ALLOW
    assert (await inspect_one(address, "s", write)).verdict == pb.VERDICT_REQUIRE_APPROVAL
    refused = sidecar.metrics.refused_answers
    assert refused.labels(reason="not_asked")._value.get() == 4
    assert refused.labels(reason="other_tool")._value.get() == 1
    assert refused.labels(reason="answered")._value.get() == 1


async def test_always_answers_survive_a_restart(start_sidecar: StartSidecar, state_path) -> None:
    first = await start_sidecar()
    address = first.addresses[0]
    write = tool("1", "write_file", path="a.txt", content="x")
    deploy = tool("2", "deploy", target="prod")
    decision = await ask(address, "s", write)
    allowed = await answer(address, "s", decision, write, pb.ANSWER_ALWAYS_ALLOW)
    # A standing rule a person sets without a prompt: no question needed.
    denied = await record(address, session_id="s", tool_name="deploy", answer=pb.ANSWER_ALWAYS_DENY)
    assert allowed.persisted and denied.persisted
    await first.stop(grace=0)

    second = await start_sidecar()  # same SQLite file
    address = second.addresses[0]
    other_write = tool("3", "write_file", path="b.txt", content="y")
    assert (await inspect_one(address, "s", other_write)).verdict == pb.VERDICT_ALLOW
    assert (await inspect_one(address, "s", deploy)).verdict == pb.VERDICT_DENY
    # Answers belong to their session.
    assert (await inspect_one(address, "other", write)).verdict == pb.VERDICT_REQUIRE_APPROVAL
    with sqlite3.connect(state_path) as db:
        rows = db.execute(
            "SELECT answer, decision_id, tool_call_id FROM answer_log ORDER BY id"
        ).fetchall()
    assert rows == [("always_allow", decision, "1"), ("always_deny", "", "")]


async def test_a_once_answer_survives_a_restart(start_sidecar: StartSidecar) -> None:
    first = await start_sidecar()
    write = tool("1", "write_file", path="a", content="x")
    decision = await ask(first.addresses[0], "s", write)
    await answer(first.addresses[0], "s", decision, write, pb.ANSWER_ALLOW_ONCE)
    await first.stop(grace=0)
    second = await start_sidecar()
    assert (await inspect_one(second.addresses[0], "s", write)).verdict == pb.VERDICT_ALLOW
    assert (await inspect_one(second.addresses[0], "s", write)).verdict == (
        pb.VERDICT_REQUIRE_APPROVAL
    )


async def test_a_persons_allow_does_not_override_a_security_deny(
    start_sidecar: StartSidecar,
) -> None:
    sidecar = await start_sidecar()
    address = sidecar.addresses[0]
    await record(address, session_id="s", tool_name="shell", answer=pb.ANSWER_ALWAYS_ALLOW)
    verdict = await inspect_one(address, "s", shell("1", "rm -rf /"))
    assert verdict.verdict == pb.VERDICT_DENY
    safe = await inspect_one(address, "s", shell("2", "make"))
    assert safe.verdict == pb.VERDICT_ALLOW


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"tool_name": "t", "answer": pb.ANSWER_ALWAYS_ALLOW}, "session_id"),
        ({"session_id": "s", "answer": pb.ANSWER_ALWAYS_ALLOW}, "tool_name"),
        ({"session_id": "s", "tool_name": "t"}, "answer"),
        ({"session_id": "s", "tool_name": "t", "answer": 42}, "answer"),
        ({"session_id": "s", "tool_name": "t", "answer": pb.ANSWER_ALLOW_ONCE}, "tool_call_id"),
        (
            {
                "session_id": "s",
                "tool_name": "t",
                "answer": pb.ANSWER_DENY_ONCE,
                "tool_call_id": "1",
            },
            "decision_id",
        ),
        (
            {
                "session_id": "s",
                "tool_name": "t",
                "answer": pb.ANSWER_ALWAYS_DENY,
                "decision_id": "d",
            },
            "tool_call_id",
        ),
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


# -- the approval channel: RecordDecision needs a token the agent does not have ----------

TOKEN = "0123456789abcdef-approval-token"


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "approval-token"
    path.write_text(TOKEN + "\n")
    path.chmod(0o600)
    return path


async def test_record_decision_needs_the_approval_token(
    start_sidecar: StartSidecar, token_file: Path
) -> None:
    sidecar = await start_sidecar(approval_token_file=token_file)
    address = sidecar.addresses[0]
    write = tool("1", "write_file", path="a", content="x")
    decision = await ask(address, "s", write)
    fields = {
        "session_id": "s",
        "decision_id": decision,
        "tool_call_id": "1",
        "tool_name": "write_file",
        "answer": pb.ANSWER_ALLOW_ONCE,
    }
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await record(address, **fields)
    assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED
    for wrong in ("Bearer nope", f"Bearer {TOKEN}x", f"Basic {TOKEN}", TOKEN):
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await record(address, metadata=(("authorization", wrong),), **fields)
        expected = (
            grpc.StatusCode.UNAUTHENTICATED
            if not wrong.startswith("Bearer")
            else grpc.StatusCode.PERMISSION_DENIED
        )
        assert raised.value.code() == expected, wrong
    # Two credentials: whichever one a proxy in front checked, the call is refused.
    for pair in ((f"Bearer {TOKEN}", "Bearer nope"), ("Bearer nope", f"Bearer {TOKEN}")):
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await record(address, metadata=tuple(("authorization", v) for v in pair), **fields)
        assert raised.value.code() == grpc.StatusCode.PERMISSION_DENIED, pair
    # Nothing was recorded by the refused calls.
    assert (await inspect_one(address, "s", write)).verdict == pb.VERDICT_REQUIRE_APPROVAL
    refused = sidecar.metrics.refused_answers
    assert refused.labels(reason="missing")._value.get() == 3
    assert refused.labels(reason="wrong")._value.get() == 4

    decision = await ask(address, "s", write)
    await record(
        address,
        metadata=(("authorization", f"bearer {TOKEN}"),),
        **{**fields, "decision_id": decision},
    )
    assert (await inspect_one(address, "s", write)).verdict == pb.VERDICT_ALLOW


async def test_a_warning_is_logged_when_no_approval_credential_is_set(
    start_sidecar: StartSidecar, token_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("WARNING", logger="sidecar.server")
    await start_sidecar()
    assert any("no approval credential" in r.getMessage() for r in caplog.records)
    caplog.clear()
    await start_sidecar(approval_token_file=token_file)
    assert not any("no approval credential" in r.getMessage() for r in caplog.records)


async def test_a_short_or_missing_token_file_stops_the_start(
    start_sidecar: StartSidecar, tmp_path: Path
) -> None:
    from sidecar.config import ConfigError

    short = tmp_path / "short"
    short.write_text("abc\n")
    with pytest.raises(ConfigError, match="at least 16 bytes"):
        await start_sidecar(approval_token_file=short)


# -- read_only_hint: a client's word never loosens a call the sidecar analyses -----------


async def test_read_only_hint_cannot_loosen_a_shell_call(start_sidecar: StartSidecar) -> None:
    address = (await start_sidecar(mode="smart_approve")).addresses[0]

    def hinted(call_id: str, command: str, hint: bool) -> pb.ToolCall:
        return pb.ToolCall(
            id=call_id,
            name="shell",
            arguments_json=json.dumps({"command": command}),
            annotations=pb.ToolAnnotations(read_only_hint=hint),
        )

    removal = await inspect_one(address, "s", hinted("1", "rm -rf ./src", True))
    assert removal.verdict == pb.VERDICT_REQUIRE_APPROVAL
    # It may tighten: a read-only command the client calls not read-only is asked about.
    assert (await inspect_one(address, "s", shell("2", "ls -la"))).verdict == pb.VERDICT_ALLOW
    listing = await inspect_one(address, "s", hinted("3", "ls -la", False))
    assert listing.verdict == pb.VERDICT_REQUIRE_APPROVAL
    # Opaque tools: the hint still counts in smart_approve.
    opaque = await inspect_one(address, "s", tool("4", "fetch_docs", read_only=True, q="x"))
    assert opaque.verdict == pb.VERDICT_ALLOW
    unhinted = await inspect_one(address, "s", tool("5", "fetch_docs", q="x"))
    assert unhinted.verdict == pb.VERDICT_REQUIRE_APPROVAL
    # A tool the policy lists as read-only is asked about when the client says it writes.
    reader = await inspect_one(address, "s", tool("6", "read_file", read_only=False, path="a"))
    assert reader.verdict == pb.VERDICT_REQUIRE_APPROVAL


async def test_delete_session_needs_the_approval_token_when_one_is_set(
    start_sidecar: StartSidecar, token_file: Path
) -> None:
    # Deleting a session resets its answers, counters and data-flow facts: not for the agent.
    sidecar = await start_sidecar(approval_token_file=token_file)
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        context = pb_grpc.ContextServiceStub(channel)
        await context.Append(
            pb.AppendRequest(
                session_id="s",
                messages=[text("u", pb.ROLE_USER, "x")],
            )
        )
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await context.DeleteSession(pb.DeleteSessionRequest(session_id="s"))
        assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await context.DeleteSession(
                pb.DeleteSessionRequest(session_id="s"),
                metadata=(("authorization", "Bearer nope"),),
            )
        assert raised.value.code() == grpc.StatusCode.PERMISSION_DENIED
        deleted = await context.DeleteSession(
            pb.DeleteSessionRequest(session_id="s"),
            metadata=(("authorization", f"Bearer {TOKEN}"),),
        )
        assert deleted.messages_deleted == 1

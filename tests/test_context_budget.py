"""Compaction plans the whole view: it fits, it settles, and large results are elided."""

from __future__ import annotations

import grpc
import pytest

from sidecar.server import Sidecar
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.context_helpers import (
    call,
    history_of,
    provider_problems,
    result,
    text,
    view_estimate,
)


@pytest.fixture
async def stub(sidecar: Sidecar):
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        yield pb_grpc.ContextServiceStub(channel)


async def test_the_summary_and_note_are_counted_against_the_limit(stub) -> None:
    messages = [text("sys", pb.ROLE_SYSTEM, "You are a careful coding agent.")]
    for n in range(12):  # a long span: twelve requests of ~300 characters each
        messages += [
            text(f"u{n}", pb.ROLE_USER, f"Request {n}: " + "please change the parser. " * 11),
            text(f"a{n}", pb.ROLE_ASSISTANT, "Done."),
        ]
    messages.append(text("latest", pb.ROLE_USER, "Now run the tests."))
    view = await stub.Project(
        pb.ProjectRequest(session_id="budget", messages=messages, context_limit=600)
    )
    assert view.compaction.compacted
    assert view_estimate(view.messages) < 0.8 * 600
    assert view.tokens.tokens == view.compaction.tokens_after == view_estimate(view.messages)
    assert provider_problems(list(view.messages)) == []


async def test_a_compaction_that_would_change_only_the_summary_is_not_done(stub) -> None:
    messages = [text("sys", pb.ROLE_SYSTEM, "You are a careful coding agent.")]
    for n in range(4):
        messages += [
            text(f"u{n}", pb.ROLE_USER, f"Request {n}."),
            call(f"a{n}", (f"c{n}", "shell", f'{{"command": "ls {n}"}}')),
            result(f"t{n}", f"c{n}", "listing\n" * 60),
        ]
    # The request that must stay verbatim is over 80% of the window on its own.
    messages.append(text("latest", pb.ROLE_USER, "Refactor this: " + "code " * 600))
    first = await stub.Project(
        pb.ProjectRequest(session_id="settle", messages=messages, context_limit=1_000)
    )
    assert first.compaction.compacted
    assert first.tokens.tokens <= 1_000
    again = pb.ProjectRequest(session_id="settle", context_limit=1_000)
    second = await stub.Project(again)
    third = await stub.Project(again)
    for again in (second, third):
        assert not again.compaction.compacted
        # The previous summary keeps its id, so the provider's prompt cache still hits.
        assert [m.id for m in again.messages] == [m.id for m in first.messages]
        assert again.tokens.tokens <= 1_000


async def test_results_that_only_together_do_not_fit_are_elided_oldest_first(stub) -> None:
    calls = [(f"c{n}", "read_file", f'{{"path": "src/m{n}.py"}}') for n in range(5)]
    messages = [
        text("sys", pb.ROLE_SYSTEM, "You are a careful coding agent."),
        text("u1", pb.ROLE_USER, "Read the five modules."),
        call("a1", *calls, response_id="r1"),
        *(result(f"t{n}", f"c{n}", f"line {n}\n" * 130) for n in range(5)),  # ~900 each
    ]
    view = await stub.Project(
        pb.ProjectRequest(session_id="group", messages=messages, context_limit=1_000)
    )
    assert view.tokens.tokens < 0.8 * 1_000
    assert view_estimate(view.messages) < 0.8 * 1_000
    assert provider_problems(list(view.messages)) == []
    elided = list(view.elided_message_ids)
    assert elided and elided == sorted(elided)  # the oldest first
    assert "t4" not in elided  # the newest result fits once the older ones are shortened
    history = {m.id: m for m in await history_of(stub, "group")}
    assert all(
        history[f"t{n}"].parts[0].tool_result.content == f"line {n}\n" * 130 for n in range(5)
    )


async def test_a_result_larger_than_its_share_is_shown_elided(stub) -> None:
    output = "".join(f"{n:05d} some output line\n" for n in range(2_000))  # ~46,000 characters
    view = await stub.Project(
        pb.ProjectRequest(
            session_id="huge",
            messages=[
                text("u1", pb.ROLE_USER, "Show the log."),
                call("a1", ("c1", "shell", '{"command": "cat app.log"}')),
                result("t1", "c1", output),
            ],
            context_limit=32_000,
        )
    )
    assert list(view.elided_message_ids) == ["t1"]
    shown = view.messages[-1]
    assert shown.role == pb.ROLE_TOOL and shown.parts[0].tool_result.tool_call_id == "c1"
    content = shown.parts[0].tool_result.content
    assert content.startswith("00000 some output line")  # the head
    assert content.endswith("01999 some output line\n")  # and the tail
    assert "t1" in content and "elided" in content  # what was cut, and where the rest is
    assert view_estimate([shown]) <= 0.25 * 32_000
    assert not view.compaction.compacted  # shown shortened; nothing else changed
    history = await history_of(stub, "huge")
    assert history[-1].parts[0].tool_result.content == output


async def test_a_request_that_cannot_fit_is_failed_precondition_and_stores_nothing(stub) -> None:
    await stub.Append(
        pb.AppendRequest(
            session_id="too-big",
            messages=[text("sys", pb.ROLE_SYSTEM, "You are a careful coding agent.")],
        )
    )
    request = pb.ProjectRequest(
        session_id="too-big",
        messages=[text("u1", pb.ROLE_USER, "Review: " + "lorem ipsum " * 700)],
        context_limit=1_000,
    )
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stub.Project(request)
    assert raised.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    details = raised.value.details() or ""
    assert "latest request" in details and "1000" in details
    assert [m.id for m in await history_of(stub, "too-big")] == ["sys"]
    # With a larger window the same messages are accepted: nothing was kept.
    request.context_limit = 8_000
    view = await stub.Project(request)
    assert [m.id for m in view.messages] == ["sys", "u1"]


async def test_context_exceeded_with_a_group_too_large_recovers_by_eliding(stub) -> None:
    calls = [(f"c{n}", "read_file", f'{{"path": "m{n}.py"}}') for n in range(3)]
    messages = [
        text("u1", pb.ROLE_USER, "Read the modules."),
        call("a1", *calls),
        *(result(f"t{n}", f"c{n}", "q" * 1_600) for n in range(3)),
    ]
    await stub.Append(pb.AppendRequest(session_id="exceeded", messages=messages))
    view = await stub.Project(
        pb.ProjectRequest(
            session_id="exceeded",
            reason=pb.PROJECT_REASON_CONTEXT_EXCEEDED,
            context_limit=1_000,
        )
    )
    assert view.compaction.compacted
    assert view.elided_message_ids
    assert view_estimate(view.messages) < 0.8 * 1_000
    assert provider_problems(list(view.messages)) == []

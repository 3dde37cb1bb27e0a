"""Token accounting over gRPC: what a usage report covers, the threshold, calibration."""

from __future__ import annotations

import grpc
import pytest

from sidecar.server import Sidecar
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.context_helpers import call, history_of, result, text, view_estimate

SYSTEM = "You are a careful coding agent. " * 60  # ~1,900 characters


@pytest.fixture
async def stub(sidecar: Sidecar):
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        yield pb_grpc.ContextServiceStub(channel)


def after(messages: list[pb.Message], message_id: str) -> list[pb.Message]:
    ids = [m.id for m in messages]
    return messages[ids.index(message_id) + 1 :]


async def test_usage_covers_messages_up_to_the_last_assistant_message(stub) -> None:
    opening = [
        text("sys", pb.ROLE_SYSTEM, SYSTEM),
        text("u1", pb.ROLE_USER, "Why does the build fail?"),
        call("a1", ("c1", "shell", '{"command": "cat build.log"}')),
    ]
    covered = view_estimate(opening)
    # The runtime sends the model's reply, the tool result that came after it, and
    # the usage of the model call that produced the reply, in one Project.
    view = await stub.Project(
        pb.ProjectRequest(
            session_id="cover",
            messages=[*opening, result("t1", "c1", "x" * 4_000)],
            usage=pb.Usage(input_tokens=covered - 20, output_tokens=20),
            context_limit=100_000,
        )
    )
    tokens = view.tokens
    assert tokens.source == pb.TOKEN_SOURCE_PROVIDER
    assert tokens.provider_tokens == covered
    assert tokens.usage_through_message_id == "a1"
    assert tokens.tokens == tokens.provider_tokens + tokens.estimated_tokens
    # The 4,000-character result is not covered: it is estimated and added.
    result_estimate = view_estimate(after(list(view.messages), "a1"))
    assert result_estimate > 1_000
    assert tokens.estimated_tokens == result_estimate  # the ratio learned here is 1.0


async def test_usage_plus_a_later_tool_result_triggers_compaction(stub) -> None:
    messages = [text("sys", pb.ROLE_SYSTEM, "You are a careful coding agent.")]
    messages.append(text("u1", pb.ROLE_USER, "Look at the three logs."))
    for n in range(3):
        messages += [
            call(f"a0{n}", (f"c0{n}", "shell", f'{{"command": "cat log{n}"}}')),
            result(f"t0{n}", f"c0{n}", f"log line {n}\n" * 270),  # ~3,000 characters
        ]
    messages += [
        text("u2", pb.ROLE_USER, "Now the build log."),
        call("a1", ("c1", "shell", '{"command": "cat build.log"}')),
    ]
    covered = view_estimate(messages)
    view = await stub.Project(
        pb.ProjectRequest(
            session_id="trigger",
            messages=[*messages, result("t1", "c1", "y" * 3_500)],
            usage=pb.Usage(input_tokens=covered, output_tokens=0),
            context_limit=4_000,
        )
    )
    # Usage alone is ~2,400 of 4,000 (60%); with the result after it, over 80%.
    assert covered < 0.8 * 4_000
    assert view.compaction.compacted
    assert view.compaction.trigger == pb.COMPACTION_TRIGGER_THRESHOLD
    assert view.compaction.tokens_before >= 0.8 * 4_000
    assert view.tokens.tokens < 0.8 * 4_000
    assert "t1" in {m.id for m in view.messages}


@pytest.mark.parametrize(("usage", "compacts"), [(800, True), (799, False), (790, False)])
async def test_compaction_happens_when_tokens_reach_the_threshold(
    stub, usage: int, compacts: bool
) -> None:
    session = f"boundary-{usage}"
    messages = [
        text("sys", pb.ROLE_SYSTEM, "You are a careful coding agent."),
        text("u1", pb.ROLE_USER, "List the files."),
        call("a0", ("c0", "shell", '{"command": "ls"}')),
        result("t0", "c0", "a.py b.py"),
        text("u2", pb.ROLE_USER, "Read a.py."),
        text("a1", pb.ROLE_ASSISTANT, "Reading it now."),
    ]
    view = await stub.Project(
        pb.ProjectRequest(
            session_id=session,
            messages=messages,
            usage=pb.Usage(input_tokens=usage - 10, output_tokens=10),
            context_limit=1_000,
        )
    )
    assert view.compaction.tokens_before == usage if compacts else view.tokens.tokens == usage
    assert view.compaction.compacted is compacts


async def test_a_late_report_names_the_message_it_belongs_to(stub) -> None:
    first = [
        text("sys", pb.ROLE_SYSTEM, SYSTEM),
        text("u1", pb.ROLE_USER, "Fix the tests."),
        call("a1", ("c1", "shell", '{"command": "pytest"}')),
    ]
    await stub.Append(pb.AppendRequest(session_id="late", messages=first))
    covered = view_estimate(first)
    # The usage of a1's model call arrives only after a2 was appended.
    view = await stub.Project(
        pb.ProjectRequest(
            session_id="late",
            messages=[
                result("t1", "c1", "3 failed\n" * 200),
                call("a2", ("c2", "shell", '{"command": "pytest -x"}')),
                result("t2", "c2", "1 failed\n" * 200),
            ],
            usage=pb.Usage(input_tokens=covered, through_message_id="a1"),
            context_limit=100_000,
        )
    )
    assert view.tokens.usage_through_message_id == "a1"
    assert view.tokens.provider_tokens == covered
    assert view.tokens.estimated_tokens == view_estimate(after(list(view.messages), "a1"))


async def test_a_report_naming_an_unknown_message_is_rejected_and_stores_nothing(stub) -> None:
    await stub.Append(
        pb.AppendRequest(session_id="unknown-through", messages=[text("u", pb.ROLE_USER, "x")])
    )
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stub.Project(
            pb.ProjectRequest(
                session_id="unknown-through",
                messages=[text("a", pb.ROLE_ASSISTANT, "y")],
                usage=pb.Usage(input_tokens=10, through_message_id="nope"),
            )
        )
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "usage.through_message_id" in (raised.value.details() or "")
    assert [m.id for m in await history_of(stub, "unknown-through")] == ["u"]


async def test_a_wrong_report_cannot_skew_the_session_for_long(stub) -> None:
    opening = [
        text("sys", pb.ROLE_SYSTEM, SYSTEM),
        text("u1", pb.ROLE_USER, "Go."),
        call("a1", ("c1", "shell", '{"command": "ls"}')),
    ]
    # A report ten times too low: the ratio it implies is bounded.
    view = await stub.Project(
        pb.ProjectRequest(
            session_id="skew",
            messages=[*opening, result("t1", "c1", "z" * 2_000)],
            usage=pb.Usage(input_tokens=view_estimate(opening) // 10),
            context_limit=1_000_000,
        )
    )
    later = view_estimate(after(list(view.messages), "a1"))
    assert view.tokens.estimated_tokens >= 0.5 * later
    # Without another report, the ratio decays back towards 1 as messages arrive.
    batch: list[pb.Message] = []
    for n in range(2, 52):
        batch += [
            call(f"a{n}", (f"c{n}", "shell", f'{{"command": "ls {n}"}}')),
            result(f"t{n}", f"c{n}", f"file{n}"),
        ]
    view = await stub.Project(pb.ProjectRequest(session_id="skew", messages=batch))
    later = view_estimate(after(list(view.messages), "a1"))
    assert view.tokens.estimated_tokens >= 0.95 * later


async def test_calls_waiting_for_results_are_not_counted(stub) -> None:
    await stub.Append(
        pb.AppendRequest(
            session_id="waiting",
            messages=[
                text("sys", pb.ROLE_SYSTEM, "You are a careful coding agent."),
                text("u1", pb.ROLE_USER, "Write the file."),
            ],
        )
    )
    # The runtime projects before running the call (it asks Inspect first).
    big_call = call("a1", ("c1", "write_file", '{"content": "' + "w" * 3_200 + '"}'))
    view = await stub.Project(
        pb.ProjectRequest(session_id="waiting", messages=[big_call], context_limit=1_000)
    )
    assert [m.id for m in view.messages] == ["sys", "u1"]
    assert view.tokens.tokens == view_estimate(view.messages)
    assert not view.compaction.compacted

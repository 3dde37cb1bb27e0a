"""Hostile shapes at the edge: huge repeated fields are refused by their count before
anything is converted, and deep JSON is refused by its depth before it is parsed, each
INVALID_ARGUMENT naming the field and the limit; deep shell and code never make INTERNAL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from sidecar.context.manager import ContextError
from sidecar.server import Sidecar, _preflight
from sidecar.service import context_service, policy_service
from sidecar.service.errors import InvalidArgument
from sidecar.service.json_depth import MAX_JSON_DEPTH, check_json_depth
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import shell

# -- repeated fields ---------------------------------------------------------------------


class Untouchable:
    """A repeated field whose items must not be looked at: only its length."""

    def __init__(self, length: int) -> None:
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __iter__(self) -> Iterator[object]:
        raise AssertionError("the items were converted before their count was checked")

    def __getitem__(self, index: int) -> object:
        raise AssertionError("the items were converted before their count was checked")


def test_append_counts_messages_before_converting_any() -> None:
    with pytest.raises(ContextError) as raised:
        context_service._messages(Untouchable(1_900_000))  # type: ignore[arg-type]
    assert "messages" in str(raised.value)
    assert f"{context_service.MAX_MESSAGES_PER_CALL:,}" in str(raised.value)


async def test_append_of_1_9_million_empty_messages_is_invalid_argument(
    sidecar: Sidecar,
) -> None:
    options = [("grpc.max_send_message_length", 64 << 20)]
    async with grpc.aio.insecure_channel(sidecar.addresses[0], options=options) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.Append(
                pb.AppendRequest(session_id="huge", messages=[pb.Message()] * 1_900_000)
            )
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "messages" in str(raised.value.details())
    assert f"{context_service.MAX_MESSAGES_PER_CALL:,}" in str(raised.value.details())


async def test_parts_of_one_call_are_counted_before_converting(sidecar: Sidecar) -> None:
    part = pb.Part(text=pb.TextPart(text="x"))
    many = context_service.MAX_PARTS_PER_CALL // 10 + 1
    messages = [pb.Message(id=f"m{i}", role=pb.ROLE_USER, parts=[part] * many) for i in range(10)]
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.Append(pb.AppendRequest(session_id="parts", messages=messages))
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "parts" in str(raised.value.details())
        assert f"{context_service.MAX_PARTS_PER_CALL:,}" in str(raised.value.details())
        # Within the limit the same shape is stored.
        fine = messages[: 10 * context_service.MAX_PARTS_PER_CALL // (10 * many)]
        reply = await stub.Append(pb.AppendRequest(session_id="parts", messages=fine))
        assert reply.message_count == len(fine)


async def test_inspect_refuses_too_many_recent_user_messages(
    policy_stub: pb_grpc.PolicyServiceStub,
) -> None:
    limit = policy_service.MAX_RECENT_USER_MESSAGES
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await policy_stub.Inspect(
            pb.InspectRequest(
                session_id="recent",
                tool_calls=[shell("1", "ls")],
                recent_user_messages=[""] * 1_900_000,
            )
        )
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "recent_user_messages" in str(raised.value.details())
    assert f"{limit:,}" in str(raised.value.details())
    reply = await policy_stub.Inspect(
        pb.InspectRequest(
            session_id="recent", tool_calls=[shell("1", "ls")], recent_user_messages=["hi"] * limit
        )
    )
    assert reply.verdicts[0].verdict in (pb.VERDICT_ALLOW, pb.VERDICT_REQUIRE_APPROVAL)


def test_inspect_counts_recent_user_messages_before_converting() -> None:
    class Request:
        session_id = "s"
        tool_calls = [shell("1", "ls")]
        mode = pb.PERMISSION_MODE_UNSPECIFIED
        recent_user_messages = Untouchable(1_900_000)

    with pytest.raises(InvalidArgument) as raised:
        policy_service.calls_from_request(Request(), 50, 1 << 20)  # type: ignore[arg-type]
    assert raised.value.field == "recent_user_messages"


async def test_inspect_tool_calls_over_the_limit_name_the_limit(
    policy_stub: pb_grpc.PolicyServiceStub,
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await policy_stub.Inspect(
            pb.InspectRequest(session_id="calls", tool_calls=[pb.ToolCall()] * 1_000_000)
        )
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "tool_calls" in str(raised.value.details())


# -- deep JSON ---------------------------------------------------------------------------


def _nested(depth: int) -> str:
    return '{"a":' + "[" * depth + "]" * depth + "}"


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 600, 990, 100_000])
async def test_deep_arguments_json_is_invalid_argument_naming_the_field(
    policy_stub: pb_grpc.PolicyServiceStub, depth: int
) -> None:
    request = pb.InspectRequest(
        session_id="deep",
        tool_calls=[
            pb.ToolCall(id="1", name="x", arguments_json=_nested(depth)),
            shell("2", "rm -rf /"),
        ],
    )
    if depth + 1 <= MAX_JSON_DEPTH:  # the object itself is one level
        reply = await policy_stub.Inspect(request)
        assert reply.verdicts[1].verdict == pb.VERDICT_DENY
        return
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await policy_stub.Inspect(request)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "tool_calls[0].arguments_json" in str(raised.value.details())
    assert f"{MAX_JSON_DEPTH}" in str(raised.value.details())


async def test_deep_arguments_inside_an_argument_string_are_not_internal(
    policy_stub: pb_grpc.PolicyServiceStub,
) -> None:
    """An MCP wrapper carries its tool's arguments as a JSON string: parsed later, deep."""
    inner = "[" * 5000 + "]" * 5000
    for name in ("use_mcp_tool", "mcp__x__call"):
        reply = await policy_stub.Inspect(
            pb.InspectRequest(
                session_id="inner",
                tool_calls=[
                    pb.ToolCall(
                        id="1",
                        name=name,
                        arguments_json=json.dumps(
                            {"server_name": "s", "tool_name": "t", "arguments": inner}
                        ),
                    ),
                    shell("2", "rm -rf /"),
                ],
            )
        )
        assert reply.verdicts[1].verdict == pb.VERDICT_DENY


@pytest.mark.parametrize(
    "text",
    [
        '"[[[[{{{{"',  # brackets inside strings do not count
        '"\\"[[[[[["',
        "[" * 10 + "]" * 10,
        '{"a": [1, {"b": [2, 3]}], "c": "}}}}]]]]"}',
    ],
)
def test_brackets_inside_strings_do_not_count(text: str) -> None:
    check_json_depth("f", text, 12)


def test_depth_counts_objects_and_arrays() -> None:
    check_json_depth("f", "[" * 12 + "]" * 12, 12)
    with pytest.raises(InvalidArgument) as raised:
        check_json_depth("f", "[{" * 6 + "[" + "]" + "}]" * 6, 12)
    assert raised.value.field == "f"
    assert "12" in raised.value.problem


# -- deep shell and code -----------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "echo " + "$(" * 600 + "ls" + ")" * 600,
        "echo " + "`" * 2 * 40 + "ls",
        "(" * 2000 + "ls" + ")" * 2000,
        "{ " * 2000 + "ls; " + "}; " * 2000,
        "python3 -c '" + "(" * 3000 + "1" + ")" * 3000 + "'",
        "python3 -c 'x = " + "[" * 3000 + "]" * 3000 + "'",
        "node -e '" + "[" * 3000 + "]" * 3000 + "'",
        "bash -c " + "'bash -c " * 50 + "ls" + "'" * 50,
        "eval " + "'eval " * 200 + "ls" + "'" * 200,
        "x=" + "${a:-" * 1000 + "1" + "}" * 1000,
        "echo $((" + "(" * 3000 + "1" + ")" * 3000 + "))",
    ],
)
async def test_deep_shell_and_code_never_make_internal(
    policy_stub: pb_grpc.PolicyServiceStub, command: str
) -> None:
    reply = await policy_stub.Inspect(
        pb.InspectRequest(
            session_id="deep-shell", tool_calls=[shell("1", command), shell("2", "rm -rf /")]
        )
    )
    assert reply.verdicts[0].verdict in (
        pb.VERDICT_DENY,
        pb.VERDICT_REQUIRE_APPROVAL,
        pb.VERDICT_ALLOW,
    )
    assert reply.verdicts[1].verdict == pb.VERDICT_DENY


def test_limits_are_documented() -> None:
    readme = " ".join((Path(__file__).parent.parent / "README.md").read_text().split())
    for sentence in (
        f"JSON nested more than {MAX_JSON_DEPTH} levels deep",
        f"more than {policy_service.MAX_RECENT_USER_MESSAGES:,} `recent_user_messages`",
        f"more than {context_service.MAX_MESSAGES_PER_CALL:,} messages or "
        f"{context_service.MAX_PARTS_PER_CALL:,} parts in one `Append` or `Project`",
    ):
        assert sentence in readme, sentence


# -- counted on the wire, before parsing --------------------------------------------------


def _field(number: int, payload: bytes) -> bytes:
    assert len(payload) < 128
    return bytes([number << 3 | 2, len(payload)]) + payload


def test_preflight_counts_without_parsing() -> None:
    preflight = _preflight()
    append = "/sidecar.v1.ContextService/Append"
    huge = pb.AppendRequest(session_id="u", messages=[pb.Message()] * 1_900_000)
    refused = preflight.check(append, huge.SerializeToString())
    assert refused is not None and refused.field == "messages"
    assert refused.problem == "1,900,000 messages exceed the limit of 1,000"
    part = pb.Part(text=pb.TextPart(text="x"))
    one = pb.AppendRequest(session_id="u", messages=[pb.Message(id="m", parts=[part] * 20_000)])
    refused = preflight.check(append, one.SerializeToString())
    assert refused is not None and refused.field == "messages.parts"
    fine = pb.AppendRequest(session_id="u", messages=[pb.Message(id="m", parts=[part] * 10)])
    assert preflight.check(append, fine.SerializeToString()) is None
    inspect = pb.InspectRequest(session_id="s", recent_user_messages=[""] * 101)
    refused = preflight.check("/sidecar.v1.PolicyService/Inspect", inspect.SerializeToString())
    assert refused is not None and refused.field == "recent_user_messages"
    assert preflight.check("/sidecar.v1.PolicyService/Inspect", b"\xff\xff") is None


async def test_counts_are_checked_before_the_body_is_parsed(sidecar: Sidecar) -> None:
    """Items that are not valid messages (an id that is not UTF-8) fail the parser; the
    count is what the client is told, so it was read first."""
    bad_message = _field(1, b"\xff")
    body = _field(1, b"u") + _field(2, bad_message) * (context_service.MAX_MESSAGES_PER_CALL + 1)
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        append = channel.unary_unary("/sidecar.v1.ContextService/Append")
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await append(body)
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert str(raised.value.details()).startswith("messages: 1,001 messages exceed")
        # Within the count, the parser's own refusal.
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await append(_field(1, b"u") + _field(2, bad_message))
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert str(raised.value.details()).startswith("request:")


async def test_recent_tool_outputs_and_registered_tools_are_counted_on_the_wire(
    policy_stub: pb_grpc.PolicyServiceStub,
) -> None:
    """Issue 15's repeated fields get the same wire count as the others: a million empty
    items is INVALID_ARGUMENT naming the field before anything is parsed."""
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await policy_stub.Inspect(
            pb.InspectRequest(
                session_id="outputs",
                tool_calls=[shell("1", "ls")],
                recent_tool_outputs=[pb.ToolOutput()] * 1_000_000,
            )
        )
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "recent_tool_outputs" in str(raised.value.details())
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await policy_stub.RegisterTools(
            pb.RegisterToolsRequest(
                session_id="tools", server="s", tools=[pb.ToolDefinition()] * 1_000_000
            )
        )
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "tools" in str(raised.value.details())

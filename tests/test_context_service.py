"""ContextService over loopback gRPC with a real SQLite file."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import grpc
import pytest

from sidecar.server import Sidecar
from sidecar.state.store import MIGRATIONS
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar
from tests.context_helpers import call, provider_problems, result, text


@pytest.fixture
async def stub(sidecar: Sidecar):
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        yield pb_grpc.ContextServiceStub(channel)


async def test_project_returns_agent_visible_messages_in_order(stub) -> None:
    messages = [
        text("sys", pb.ROLE_SYSTEM, "You are helpful."),
        text("u1", pb.ROLE_USER, "List the files."),
        call("a1", ("c1", "shell", '{"command": "ls"}')),
        result("t1", "c1", "a.py b.py"),
        text("remind", pb.ROLE_USER, "Remember to run the tests.", kind=pb.MESSAGE_KIND_REMINDER),
        text("receipt", pb.ROLE_USER, "You ran: ls", kind=pb.MESSAGE_KIND_RECEIPT),
        text("hidden", pb.ROLE_USER, "agent must not see", agent_visible=False),
        text("a2", pb.ROLE_ASSISTANT, "Two files."),
    ]
    appended = await stub.Append(pb.AppendRequest(session_id="s", messages=messages))
    assert appended.message_count == 8
    projection = await stub.Project(pb.ProjectRequest(session_id="s"))
    assert [m.id for m in projection.messages] == ["sys", "u1", "a1", "t1", "remind", "a2"]
    by_id = {m.id: m for m in projection.messages}
    # Unset flags read as true for ordinary messages, on any client.
    assert by_id["u1"].HasField("user_visible") and by_id["u1"].user_visible
    assert by_id["remind"].agent_visible and not by_id["remind"].user_visible
    history = await stub.History(pb.HistoryRequest(session_id="s"))
    assert [m.id for m in history.messages] == ["sys", "u1", "a1", "t1", "receipt", "hidden", "a2"]
    assert provider_problems(list(projection.messages)) == []
    assert projection.tokens.source == pb.TOKEN_SOURCE_ESTIMATE
    assert projection.tokens.tokens > 0


async def test_arguments_and_reasoning_are_replayed_byte_for_byte(stub) -> None:
    raw_arguments = '{"path": "a.txt", "content": "x"  , }'  # not even valid JSON
    reasoning = pb.ReasoningPart(
        provider="anthropic", text="thinking", signature=b"\x00\xffsig", encrypted=b"\x01\x02"
    )
    assistant = pb.Message(
        id="a",
        role=pb.ROLE_ASSISTANT,
        response_id="resp-1",
        parts=[
            pb.Part(reasoning=reasoning),
            pb.Part(tool_call=pb.ToolCallPart(id="c", name="write", arguments=raw_arguments)),
        ],
    )
    await stub.Append(
        pb.AppendRequest(
            session_id="b",
            messages=[text("u", pb.ROLE_USER, "go"), assistant, result("r", "c", "ok")],
        )
    )
    projection = await stub.Project(pb.ProjectRequest(session_id="b"))
    replayed = projection.messages[1]
    assert replayed.parts[0].reasoning == reasoning
    assert replayed.parts[1].tool_call.arguments == raw_arguments
    assert replayed.response_id == "resp-1"


async def test_history_pages(stub) -> None:
    await stub.Append(
        pb.AppendRequest(
            session_id="p",
            messages=[
                text(f"m{i}", pb.ROLE_USER if i % 2 == 0 else pb.ROLE_ASSISTANT, str(i))
                for i in range(25)
            ],
        )
    )
    seen: list[str] = []
    token = ""
    while True:
        page = await stub.History(pb.HistoryRequest(session_id="p", page_size=10, page_token=token))
        seen += [m.id for m in page.messages]
        token = page.next_page_token
        if not token:
            break
    assert seen == [f"m{i}" for i in range(25)]


@pytest.mark.parametrize(
    ("requests", "field"),
    [
        ([pb.AppendRequest(session_id="", messages=[text("a", pb.ROLE_USER, "x")])], "session_id:"),
        (
            [pb.AppendRequest(session_id="x", messages=[text("", pb.ROLE_USER, "x")])],
            "messages[0].id:",
        ),
        (
            [
                pb.AppendRequest(
                    session_id="x",
                    messages=[text("a", pb.ROLE_USER, "x"), text("a", pb.ROLE_USER, "y")],
                )
            ],
            "messages[1].id: duplicate",
        ),
        (
            [pb.AppendRequest(session_id="x", messages=[text("a", pb.ROLE_UNSPECIFIED, "x")])],
            "messages[0].role:",
        ),
        (
            [pb.AppendRequest(session_id="x", messages=[pb.Message(id="a", role=pb.ROLE_USER)])],
            "messages[0]: message 'a' has no parts",
        ),
        (
            [
                pb.AppendRequest(
                    session_id="x",
                    messages=[pb.Message(id="a", role=pb.ROLE_USER, parts=[pb.Part()])],
                )
            ],
            "messages[0].parts[0]: is empty",
        ),
        (
            [
                pb.AppendRequest(
                    session_id="x",
                    messages=[text("u", pb.ROLE_USER, "x"), result("t", "c9", "orphan")],
                )
            ],
            "messages[1]: message 't': tool result for 'c9' answers no pending call",
        ),
        (
            [
                pb.AppendRequest(
                    session_id="x",
                    messages=[
                        text("u", pb.ROLE_USER, "x"),
                        call("a", ("c1", "ls", "{}")),
                        text("u2", pb.ROLE_USER, "next"),
                    ],
                )
            ],
            "messages[2]: message 'u2': tool calls c1 have no results yet",
        ),
        (
            [
                pb.AppendRequest(
                    session_id="x",
                    messages=[
                        text("u", pb.ROLE_USER, "x"),
                        call("a", ("c1", "ls", "{}"), ("c1", "ls", "{}")),
                    ],
                )
            ],
            "tool call id 'c1' is used twice",
        ),
        (
            [
                pb.AppendRequest(
                    session_id="x",
                    messages=[
                        pb.Message(
                            id="t", role=pb.ROLE_TOOL, parts=[pb.Part(text=pb.TextPart(text="x"))]
                        )
                    ],
                )
            ],
            "a tool message must hold only tool results",
        ),
        (
            [
                pb.AppendRequest(
                    session_id="x",
                    messages=[
                        text("u", pb.ROLE_USER, "x"),
                        call("a", ("c1", "ls", "{}")),
                        result("t", "c1", "ok"),
                    ],
                ),
                pb.AppendRequest(session_id="x", messages=[call("a2", ("c1", "ls", "{}"))]),
            ],
            "messages[0]: message 'a2': tool call id 'c1' is used twice",
        ),
        (
            [
                pb.AppendRequest(
                    session_id="x",
                    messages=[
                        pb.Message(
                            id="u",
                            role=pb.ROLE_USER,
                            parts=[pb.Part(tool_call=pb.ToolCallPart(id="c", name="n"))],
                        )
                    ],
                )
            ],
            "only assistant messages may hold tool calls",
        ),
        (
            [
                pb.AppendRequest(
                    session_id="x",
                    messages=[text("u", pb.ROLE_USER, "x")],
                    usage=pb.Usage(input_tokens=-1),
                )
            ],
            "usage: token counts must not be negative",
        ),
        (
            [
                pb.AppendRequest(session_id="x", messages=[text("u", pb.ROLE_USER, "x")]),
                pb.HistoryRequest(session_id="x", page_token="garbage"),
            ],
            "page_token:",
        ),
    ],
)
async def test_bad_input_is_invalid_argument_naming_the_message(stub, requests, field: str) -> None:
    *setup, last = requests
    for request in setup:
        await stub.Append(request)
    method = {
        pb.ProjectRequest: stub.Project,
        pb.AppendRequest: stub.Append,
        pb.HistoryRequest: stub.History,
    }[type(last)]
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await method(last)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in (raised.value.details() or "")


async def test_a_rejected_append_stores_nothing(stub) -> None:
    await stub.Append(
        pb.AppendRequest(session_id="atomic", messages=[text("u", pb.ROLE_USER, "x")])
    )
    with pytest.raises(grpc.aio.AioRpcError):
        await stub.Append(
            pb.AppendRequest(
                session_id="atomic",
                messages=[text("ok", pb.ROLE_ASSISTANT, "fine"), result("bad", "zz", "orphan")],
            )
        )
    history = await stub.History(pb.HistoryRequest(session_id="atomic"))
    assert [m.id for m in history.messages] == ["u"]


async def test_a_user_only_receipt_may_sit_between_a_call_and_its_result(stub) -> None:
    await stub.Append(
        pb.AppendRequest(
            session_id="r",
            messages=[
                text("u", pb.ROLE_USER, "x"),
                call("a", ("c1", "ls", "{}")),
                text("rc", pb.ROLE_USER, "ran ls", kind=pb.MESSAGE_KIND_RECEIPT),
                result("t", "c1", "ok"),
            ],
        )
    )
    projection = await stub.Project(pb.ProjectRequest(session_id="r"))
    assert provider_problems(list(projection.messages)) == []


async def test_pending_calls_are_left_out_of_the_projection(stub) -> None:
    await stub.Append(
        pb.AppendRequest(
            session_id="pend",
            messages=[text("u", pb.ROLE_USER, "x"), call("a", ("c1", "ls", "{}"))],
        )
    )
    projection = await stub.Project(pb.ProjectRequest(session_id="pend"))
    assert [m.id for m in projection.messages] == ["u"]
    assert provider_problems(list(projection.messages)) == []


async def test_concurrent_appends_to_one_session_are_serialised(stub) -> None:
    await stub.Append(pb.AppendRequest(session_id="c", messages=[text("first", pb.ROLE_USER, "x")]))
    await asyncio.gather(
        *(
            stub.Append(
                pb.AppendRequest(
                    session_id="c", messages=[text(f"m{i}", pb.ROLE_ASSISTANT, str(i))]
                )
            )
            for i in range(30)
        )
    )
    history = await stub.History(pb.HistoryRequest(session_id="c", page_size=100))
    assert sorted(m.id for m in history.messages) == sorted(
        ["first"] + [f"m{i}" for i in range(30)]
    )


async def test_provider_usage_drives_the_count(stub) -> None:
    await stub.Append(
        pb.AppendRequest(
            session_id="u",
            messages=[text("u1", pb.ROLE_USER, "hi"), text("a1", pb.ROLE_ASSISTANT, "hello")],
            usage=pb.Usage(
                input_tokens=1000,
                cache_read_tokens=500,
                cache_creation_tokens=100,
                output_tokens=50,
                context_limit=100_000,
            ),
        )
    )
    projection = await stub.Project(pb.ProjectRequest(session_id="u"))
    assert projection.tokens.source == pb.TOKEN_SOURCE_PROVIDER
    assert projection.tokens.tokens == 1650  # Anthropic's input excludes cached tokens: added
    assert projection.tokens.limit == 100_000
    more = await stub.Project(
        pb.ProjectRequest(session_id="u", messages=[text("u2", pb.ROLE_USER, "x" * 4000)])
    )
    assert more.tokens.tokens > 1650 + 900  # the new message is estimated on top


async def test_everything_survives_a_restart(start_sidecar: StartSidecar) -> None:
    first = await start_sidecar()
    async with grpc.aio.insecure_channel(first.addresses[0]) as channel:
        await pb_grpc.ContextServiceStub(channel).Append(
            pb.AppendRequest(
                session_id="keep",
                messages=[text("u", pb.ROLE_USER, "x"), call("a", ("c1", "ls", "{}"))],
            )
        )
    await first.stop(grace=0)
    second = await start_sidecar()
    async with grpc.aio.insecure_channel(second.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        # The pending call survived: its result is accepted, anything else is not.
        with pytest.raises(grpc.aio.AioRpcError):
            await stub.Append(
                pb.AppendRequest(session_id="keep", messages=[text("u2", pb.ROLE_USER, "y")])
            )
        await stub.Append(pb.AppendRequest(session_id="keep", messages=[result("t", "c1", "ok")]))
        projection = await stub.Project(pb.ProjectRequest(session_id="keep"))
    assert [m.id for m in projection.messages] == ["u", "a", "t"]


async def test_sessions_stored_before_the_context_migration_are_served(
    start_sidecar: StartSidecar, state_path: Path
) -> None:
    """A state file at schema version 2 (before the view sums and the call-id index)."""
    state_path.parent.mkdir(parents=True)
    with sqlite3.connect(state_path) as db:
        for version, script in enumerate(MIGRATIONS[:2], start=1):
            db.executescript(f"BEGIN; {script}; PRAGMA user_version = {version}; COMMIT;")
        db.execute(
            "INSERT INTO sessions (id, next_seq, version, created_at) VALUES ('old', 5, 4, 0)"
        )
        rows = [
            (1, "u", "user", '[{"t":"text","text":"go"}]', 1, 10),
            (2, "a", "assistant", '[{"t":"call","id":"c1","name":"ls","args":"{}"}]', 1, 20),
            (3, "t", "tool", '[{"t":"result","id":"c1","content":"ok","err":false}]', 1, 30),
            (4, "x", "user", '[{"t":"text","text":"hidden"}]', 0, 40),
        ]
        db.executemany(
            "INSERT INTO messages VALUES ('old', ?, ?, ?, 'ordinary', '', 0, 1, ?, ?, ?, '', ?)",
            [
                (seq, id_, role, visible, float(seq), tokens, parts)
                for seq, id_, role, parts, visible, tokens in rows
            ],
        )
    sidecar = await start_sidecar()
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        view = await stub.Project(pb.ProjectRequest(session_id="old"))
        assert [m.id for m in view.messages] == ["u", "a", "t"]
        assert view.tokens.tokens == 60  # the view's sum, computed by the migration
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.Append(
                pb.AppendRequest(session_id="old", messages=[call("a2", ("c1", "ls", "{}"))])
            )
        assert "tool call id 'c1' is used twice" in (raised.value.details() or "")
        history = await stub.History(pb.HistoryRequest(session_id="old"))
        assert [m.id for m in history.messages] == ["u", "a", "t", "x"]


async def test_context_calls_before_the_policy_is_loaded_are_unavailable(
    sidecar: Sidecar, stub
) -> None:
    """Before the first policy loads (a few seconds at start) a context call used to fail with
    INTERNAL and a traceback; it is UNAVAILABLE (retry) and stores nothing."""
    engine = sidecar.engine
    assert engine is not None
    active = engine.active
    engine._active = None  # as between the listener opening and the first load
    try:
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.Append(
                pb.AppendRequest(session_id="early", messages=[text("u", pb.ROLE_USER, "hi")])
            )
        assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        engine.replace(active)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await stub.History(pb.HistoryRequest(session_id="early"))
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND

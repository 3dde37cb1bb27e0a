"""A ContextService call that fails stores nothing: every failure path, then the retry."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from sidecar.server import Sidecar
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar, write_policy
from tests.context_helpers import call, history_of, result, text
from tests.model_server import ModelServer, serve_model


def opening() -> list[pb.Message]:
    messages = [text("sys", pb.ROLE_SYSTEM, "s"), text("u1", pb.ROLE_USER, "first")]
    for n in range(4):
        messages += [
            call(f"a{n}", (f"c{n}", "shell", "{}")),
            result(f"t{n}", f"c{n}", f"output {n}\n" * 200),
        ]
    return messages


def carried() -> list[pb.Message]:
    return [text("u2", pb.ROLE_USER, "second"), call("a9", ("c9", "shell", "{}"))]


async def ids(stub: pb_grpc.ContextServiceStub, session: str) -> list[str]:
    return [m.id for m in await history_of(stub, session)]


async def test_a_refused_recovery_keeps_nothing_it_carried(sidecar: Sidecar) -> None:
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        await stub.Append(pb.AppendRequest(session_id="refused", messages=opening()))
        exceeded = pb.ProjectRequest(
            session_id="refused", reason=pb.PROJECT_REASON_CONTEXT_EXCEEDED, context_limit=50_000
        )
        await stub.Project(exceeded)
        await stub.Project(exceeded)  # two recoveries in a row: the limit
        before = await ids(stub, "refused")
        exceeded.messages.extend(carried())
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.Project(exceeded)
        assert raised.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert await ids(stub, "refused") == before
        # The runtime's retry of the same messages is not a "duplicate message id".
        retry = pb.ProjectRequest(session_id="refused", messages=carried())
        view = await stub.Project(retry)
        assert [m.id for m in view.messages][-1] == "u2"  # a9 waits for its result
        assert await ids(stub, "refused") == [*before, "u2", "a9"]


async def test_a_refused_provider_managed_recovery_keeps_nothing(sidecar: Sidecar) -> None:
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        await stub.Append(
            pb.AppendRequest(
                session_id="managed",
                messages=opening(),
                options=pb.SessionOptions(provider_managed=True),
            )
        )
        before = await ids(stub, "managed")
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.Project(
                pb.ProjectRequest(
                    session_id="managed",
                    messages=carried(),
                    reason=pb.PROJECT_REASON_CONTEXT_EXCEEDED,
                )
            )
        assert raised.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert await ids(stub, "managed") == before


async def test_bad_input_in_a_project_keeps_nothing(sidecar: Sidecar) -> None:
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        await stub.Append(pb.AppendRequest(session_id="bad", messages=opening()))
        before = await ids(stub, "bad")
        for broken in (
            [*carried()[:1], result("orphan", "zz", "x")],  # a result for no call
            [*carried()[:1], text("u1", pb.ROLE_USER, "dup")],  # a stored id again
            [text("~summary-1", pb.ROLE_USER, "x")],  # the sidecar's own namespace
        ):
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await stub.Project(pb.ProjectRequest(session_id="bad", messages=broken))
            assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert await ids(stub, "bad") == before


def fail_inserts_of(state_path: Path, message_id: str) -> None:
    """A real SQLite failure inside the sidecar's own transaction (a full disk, say)."""
    with sqlite3.connect(state_path) as db:
        db.execute(
            f"CREATE TRIGGER fail_{message_id} BEFORE INSERT ON messages "
            f"WHEN NEW.id = '{message_id}' BEGIN SELECT RAISE(ABORT, 'disk is full'); END"
        )


async def test_a_store_failure_keeps_nothing_in_the_file_or_in_memory(
    start_sidecar: StartSidecar, state_path: Path
) -> None:
    sidecar = await start_sidecar()
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        await stub.Append(pb.AppendRequest(session_id="disk", messages=opening()))
        before = await ids(stub, "disk")
        fail_inserts_of(state_path, "a9")
        for request in (
            pb.AppendRequest(session_id="disk", messages=carried()),
            pb.ProjectRequest(session_id="disk", messages=carried(), context_limit=1_000),
        ):
            method = stub.Append if isinstance(request, pb.AppendRequest) else stub.Project
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await method(request)
            assert raised.value.code() != grpc.StatusCode.OK
            assert await ids(stub, "disk") == before
        # The session in memory did not move on either: a different next turn is valid.
        view = await stub.Project(
            pb.ProjectRequest(
                session_id="disk", messages=[text("u3", pb.ROLE_USER, "other")], context_limit=0
            )
        )
        assert view.messages[-1].id == "u3"
    await sidecar.stop(grace=0)
    again = await start_sidecar()
    async with grpc.aio.insecure_channel(again.addresses[0]) as channel:
        assert await ids(pb_grpc.ContextServiceStub(channel), "disk") == [*before, "u3"]


async def test_a_new_session_that_fails_is_not_created(
    start_sidecar: StartSidecar, state_path: Path
) -> None:
    sidecar = await start_sidecar()
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        await stub.Append(pb.AppendRequest(session_id="other", messages=opening()))
        fail_inserts_of(state_path, "a9")
        with pytest.raises(grpc.aio.AioRpcError):
            await stub.Append(pb.AppendRequest(session_id="fresh", messages=carried()))
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.History(pb.HistoryRequest(session_id="fresh"))
        assert raised.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.fixture
def slow_model() -> Iterator[ModelServer]:
    yield from serve_model(lambda body: (200, "a summary", 2.0))


async def test_a_project_cancelled_while_compacting_keeps_nothing(
    start_sidecar: StartSidecar, operator_policies: Path, slow_model: ModelServer
) -> None:
    write_policy(
        operator_policies,
        "context.yaml",
        json.dumps(
            {
                "context": {
                    "summarizer": {"base_url": slow_model.url, "model": "m", "retries": 0},
                    "tool_pair_cutoff_ratio": 1.0,
                }
            }
        ),
    )
    sidecar = await start_sidecar()
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        await stub.Append(pb.AppendRequest(session_id="cancel", messages=opening()))
        before = await ids(stub, "cancel")
        request = pb.ProjectRequest(
            session_id="cancel",
            messages=[text("u2", pb.ROLE_USER, "second")],
            reason=pb.PROJECT_REASON_CONTEXT_EXCEEDED,
            context_limit=50_000,
        )
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.Project(request, timeout=0.5)  # the summariser takes 2 s
        assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        await asyncio.sleep(2.5)  # whatever the server was doing has ended
        assert await ids(stub, "cancel") == before
        view = await stub.Project(request)  # the retry: no "duplicate message id"
        assert view.compaction.compacted
        assert await ids(stub, "cancel") == [*before, "u2"]


async def test_a_session_another_writer_always_wins_is_aborted_and_keeps_nothing(
    start_sidecar: StartSidecar, state_path: Path
) -> None:
    """On a shared store another replica may move a session on between every attempt. A
    trigger that drops every version change stands in for such a writer: each attempt's
    conditional update matches no row, so every retry conflicts. The call ends ABORTED and
    stores nothing; the session stays as it was."""
    sidecar = await start_sidecar()
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        await stub.Append(pb.AppendRequest(session_id="race", messages=opening()))
        before = await ids(stub, "race")
        with sqlite3.connect(state_path) as db:
            db.execute(
                "CREATE TRIGGER always_behind BEFORE UPDATE ON sessions "
                "WHEN NEW.version <> OLD.version BEGIN SELECT RAISE(IGNORE); END"
            )
        for request in (
            pb.AppendRequest(session_id="race", messages=carried()),
            pb.ProjectRequest(session_id="race", messages=carried(), context_limit=1_000),
        ):
            method = stub.Append if isinstance(request, pb.AppendRequest) else stub.Project
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await method(request)
            assert raised.value.code() == grpc.StatusCode.ABORTED, raised.value.details()
            assert await ids(stub, "race") == before

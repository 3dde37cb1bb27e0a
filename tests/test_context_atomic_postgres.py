"""A failure inside a PostgreSQL commit keeps nothing, as on SQLite: a real PostgreSQL of the
test's own, with a trigger that fails one message's insert (a full disk, a constraint)."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest

from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar
from tests.context_helpers import text
from tests.postgres_server import PostgresServer
from tests.test_context_atomic import carried, ids, opening


@pytest.fixture
def database() -> Iterator[PostgresServer]:
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()


async def test_a_failure_inside_a_postgresql_commit_keeps_nothing(
    start_sidecar: StartSidecar, database: PostgresServer
) -> None:
    dsn = database.fresh_database("atomic")
    sidecar = await start_sidecar(state=dsn)
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        await stub.Append(pb.AppendRequest(session_id="disk", messages=opening()))
        before = await ids(stub, "disk")
        database.psql(
            "CREATE FUNCTION refuse_a9() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF NEW.id = 'a9' THEN RAISE EXCEPTION 'disk is full'; END IF; RETURN NEW; END $$",
            "CREATE TRIGGER refuse_a9 BEFORE INSERT ON messages "
            "FOR EACH ROW EXECUTE FUNCTION refuse_a9()",
            database="atomic",
        )
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


async def test_delete_session_on_postgresql_removes_every_row(
    start_sidecar: StartSidecar, database: PostgresServer
) -> None:
    dsn = database.fresh_database("deleting")
    sidecar = await start_sidecar(state=dsn)
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        await stub.Append(pb.AppendRequest(session_id="gone", messages=opening()))
        await stub.Append(pb.AppendRequest(session_id="kept", messages=opening()))
        reply = await stub.DeleteSession(pb.DeleteSessionRequest(session_id="gone"))
        assert reply.messages_deleted == len(opening())
        for method, request in (
            (stub.History, pb.HistoryRequest(session_id="gone")),
            (stub.DeleteSession, pb.DeleteSessionRequest(session_id="gone")),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await method(request)
            assert raised.value.code() == grpc.StatusCode.NOT_FOUND
        assert await ids(stub, "kept") == [m.id for m in opening()]
    counts = database.psql(
        "SELECT (SELECT count(*) FROM messages WHERE session_id = 'gone')"
        " + (SELECT count(*) FROM sessions WHERE id = 'gone')",
        database="deleting",
    )
    assert counts.strip() == "0"

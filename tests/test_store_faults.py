"""Losing the database: at start the sidecar waits NOT_SERVING and retries; while serving,
Inspect fails closed (per `state_unavailable`), context calls answer UNAVAILABLE and
nothing acknowledged is lost; when the database is back, everything works again without a
restart. A real PostgreSQL of the test's own is stopped and started again."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from sidecar.server import STATE, Sidecar
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar
from tests.postgres_server import PostgresServer

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


@pytest.fixture
def database() -> Iterator[PostgresServer]:
    """A PostgreSQL of this test's own (the test stops it): not started yet."""
    server = PostgresServer()
    try:
        yield server
    finally:
        server.stop()


async def health(sidecar: Sidecar, service: str = "") -> int:
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service)
        )
        return int(reply.status)


async def eventually(check: Callable[[], Awaitable[bool]], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not await check():
        assert time.monotonic() < deadline, "not within the time allowed"
        await asyncio.sleep(0.1)


def call(call_id: str, name: str, **arguments: object) -> pb.ToolCall:
    return pb.ToolCall(id=call_id, name=name, arguments_json=json.dumps(arguments))


def metric(sidecar: Sidecar, name: str, **labels: str) -> float:
    value = sidecar.metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


async def test_an_unreachable_database_at_start_keeps_the_sidecar_not_serving_until_it_answers(
    start_sidecar: StartSidecar, database: PostgresServer
) -> None:
    sidecar = await start_sidecar(state=database.dsn)  # nothing listens there yet
    assert await health(sidecar) == NOT_SERVING
    assert await health(sidecar, STATE) == NOT_SERVING
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as unavailable:
            await pb_grpc.ContextServiceStub(channel).History(pb.HistoryRequest(session_id="s"))
        assert unavailable.value.code() == grpc.StatusCode.UNAVAILABLE
    database.start()
    await eventually(lambda: _serving(sidecar))
    assert await health(sidecar, STATE) == SERVING
    assert metric(sidecar, "sidecar_store_up") == 1.0
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        context = pb_grpc.ContextServiceStub(channel)
        message = pb.Message(id="m", role=pb.ROLE_USER, parts=[pb.Part(text=pb.TextPart(text="x"))])
        await context.Append(pb.AppendRequest(session_id="s", messages=[message]))


async def _serving(sidecar: Sidecar) -> bool:
    return await health(sidecar) == SERVING


async def test_losing_the_database_fails_closed_and_recovers_without_a_restart(
    start_sidecar: StartSidecar, database: PostgresServer
) -> None:
    database.start()
    asking = await start_sidecar(state=database.dsn, mode="approve")
    denying = await start_sidecar(state=database.dsn, mode="approve", state_unavailable="deny")
    refusing = await start_sidecar(
        state=database.dsn, mode="approve", state_unavailable="unavailable"
    )
    async with grpc.aio.insecure_channel(asking.addresses[0]) as channel:
        policy = pb_grpc.PolicyServiceStub(channel)
        context = pb_grpc.ContextServiceStub(channel)
        await policy.RecordDecision(
            pb.RecordDecisionRequest(
                session_id="s", tool_name="deploy", answer=pb.ANSWER_ALWAYS_ALLOW
            )
        )
        deploy = pb.InspectRequest(session_id="s", tool_calls=[call("1", "deploy")])
        assert (await policy.Inspect(deploy)).verdicts[0].verdict == pb.VERDICT_ALLOW
        acknowledged = []
        for n in range(5):
            message = pb.Message(
                id=f"m{n}", role=pb.ROLE_USER, parts=[pb.Part(text=pb.TextPart(text=f"{n}"))]
            )
            await context.Append(pb.AppendRequest(session_id="s", messages=[message]))
            acknowledged.append(message.id)

        database.pause()
        # The standing "always allow" cannot be read: the call asks (fail closed)...
        lost = (await policy.Inspect(deploy)).verdicts[0]
        assert lost.verdict == pb.VERDICT_REQUIRE_APPROVAL
        assert [f.rule_id for f in lost.findings][-1] == "state.unavailable"
        # ...and what the policy denies stays denied.
        root = pb.InspectRequest(
            session_id="s", tool_calls=[call("2", "shell", command="rm -rf /")]
        )
        assert (await policy.Inspect(root)).verdicts[0].verdict == pb.VERDICT_DENY
        for rpc in (
            context.Append(
                pb.AppendRequest(
                    session_id="s",
                    messages=[
                        pb.Message(
                            id="late",
                            role=pb.ROLE_USER,
                            parts=[pb.Part(text=pb.TextPart(text="x"))],
                        )
                    ],
                )
            ),
            context.History(pb.HistoryRequest(session_id="s")),
            context.Project(pb.ProjectRequest(session_id="s")),
            policy.RecordDecision(
                pb.RecordDecisionRequest(
                    session_id="s", tool_name="x", answer=pb.ANSWER_ALWAYS_DENY
                )
            ),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as error:
                await rpc
            assert error.value.code() == grpc.StatusCode.UNAVAILABLE
        await eventually(lambda: _state_is(asking, NOT_SERVING))
        assert await health(asking) == SERVING  # Inspect still answers, closed
        assert metric(asking, "sidecar_store_up") == 0.0
        assert (
            metric(asking, "sidecar_inspect_state_unavailable_total", policy="require_approval")
            >= 1
        )
        assert (
            metric(asking, "sidecar_store_errors_total", op="load_session", reason="unavailable")
            >= 1
        )

    async with grpc.aio.insecure_channel(denying.addresses[0]) as channel:
        denied = await pb_grpc.PolicyServiceStub(channel).Inspect(deploy)
        assert denied.verdicts[0].verdict == pb.VERDICT_DENY
    async with grpc.aio.insecure_channel(refusing.addresses[0]) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await pb_grpc.PolicyServiceStub(channel).Inspect(deploy)
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE

    database.resume()
    await eventually(lambda: _state_is(asking, SERVING))
    async with grpc.aio.insecure_channel(asking.addresses[0]) as channel:
        policy = pb_grpc.PolicyServiceStub(channel)
        context = pb_grpc.ContextServiceStub(channel)
        for n in range(12):  # more calls than the pool has connections: none is stale
            varied = pb.InspectRequest(session_id="s", tool_calls=[call("1", "deploy", n=n)])
            assert (await policy.Inspect(varied)).verdicts[0].verdict == pb.VERDICT_ALLOW
        stored = [m.id for m in (await context.History(pb.HistoryRequest(session_id="s"))).messages]
        assert stored == acknowledged  # the refused Append stored nothing
        message = pb.Message(
            id="after", role=pb.ROLE_USER, parts=[pb.Part(text=pb.TextPart(text="x"))]
        )
        await context.Append(pb.AppendRequest(session_id="s", messages=[message]))
    assert metric(asking, "sidecar_store_up") == 1.0


async def _state_is(sidecar: Sidecar, status: int) -> bool:
    return await health(sidecar, STATE) == status


async def test_the_dsn_password_never_reaches_the_log(
    start_sidecar: StartSidecar, database: PostgresServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG")
    await start_sidecar(state=database.dsn)  # unreachable: logs why, with the DSN
    await asyncio.sleep(1.2)  # a retry or two
    assert "cannot be reached" in caplog.text
    assert database.password not in caplog.text
    assert "app:***@127.0.0.1" in caplog.text

"""Standard health protocol transitions and server reflection."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from sidecar.policy.loader import PolicyError
from sidecar.server import Sidecar
from tests.conftest import StartSidecar, write_policy

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


async def test_serving_after_start_and_not_serving_once_shutdown_starts(
    start_sidecar: StartSidecar,
) -> None:
    sidecar = await start_sidecar()
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        for service in ("", "sidecar.v1.PolicyService"):
            reply = await stub.Check(health_pb2.HealthCheckRequest(service=service))
            assert reply.status == SERVING
        watch = stub.Watch(health_pb2.HealthCheckRequest(service=""))
        first = await watch.read()
        assert first.status == SERVING
        stopping = asyncio.create_task(sidecar.stop(grace=1.0))
        changed = await asyncio.wait_for(watch.read(), timeout=5)
        assert changed.status == NOT_SERVING
        await stopping


async def test_not_serving_until_the_policy_is_loaded(
    start_sidecar: StartSidecar, tmp_path, monkeypatch
) -> None:
    from sidecar.policy import loader
    from sidecar.policy import reloader as reloader_module

    seen: list[int] = []
    real_load = loader.load_policy

    def checking_load(directories):
        # Runs in a worker thread after the ports are bound and before SERVING.
        with grpc.insecure_channel(f"unix:{tmp_path}/sidecar-0.sock") as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=5
            )
        seen.append(reply.status)
        return real_load(directories)

    monkeypatch.setattr(reloader_module, "load_policy", checking_load)
    sidecar = await start_sidecar()
    assert seen == [NOT_SERVING]
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
    assert reply.status == SERVING


async def test_a_bad_policy_stops_startup_with_the_file_and_line(
    start_sidecar: StartSidecar, operator_policies
) -> None:
    path = write_policy(operator_policies, "bad.yaml", "permission:\n  mode: yolo\n")
    with pytest.raises(PolicyError) as raised:
        await start_sidecar()
    assert f"{path}:2: permission.mode:" in str(raised.value)


async def test_reflection_lists_the_services(sidecar: Sidecar) -> None:
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        call = stub.ServerReflectionInfo()
        await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
        reply = await call.read()
        await call.done_writing()
    names = {s.name for s in reply.list_services_response.service}
    assert {"sidecar.v1.PolicyService", "grpc.health.v1.Health"} <= names

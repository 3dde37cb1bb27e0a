"""Graceful shutdown: in-flight calls finish, new ones are refused."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import grpc
import pytest

from sidecar.inspection.chain import ChainLink
from sidecar.inspection.model import Finding, InspectionContext, ToolCall
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar, shell
from tests.test_chain import _with_extra_link


class Slow:
    name = "slow"

    def __init__(self) -> None:
        self.entered = asyncio.Event()

    async def inspect(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        self.entered.set()
        await asyncio.sleep(0.5)
        return [[] for _ in calls]


async def test_in_flight_calls_finish_during_the_grace_period(start_sidecar: StartSidecar) -> None:
    sidecar = await start_sidecar(mode="auto")
    slow = Slow()
    await _with_extra_link(sidecar, ChainLink(slow, 5.0))
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.PolicyServiceStub(channel)
        in_flight = asyncio.ensure_future(
            stub.Inspect(pb.InspectRequest(session_id="d", tool_calls=[shell("1", "ls")]))
        )
        await slow.entered.wait()
        stopping = asyncio.create_task(sidecar.stop(grace=5.0))
        response = await in_flight
        assert response.verdicts[0].verdict == pb.VERDICT_ALLOW
        await stopping
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.Inspect(
                pb.InspectRequest(session_id="d", tool_calls=[shell("2", "ls")]), timeout=2
            )
        assert raised.value.code() in (
            grpc.StatusCode.UNAVAILABLE,
            grpc.StatusCode.DEADLINE_EXCEEDED,
        )

"""The drain gate's wait: quiet after the last call, or refusing for a bounded time when
clients retry at once; never before the calls in progress finish."""

from __future__ import annotations

import asyncio
from typing import Any, NamedTuple

import grpc

from sidecar.service.drain import DrainGate


class Details(NamedTuple):
    method: str
    invocation_metadata: tuple[Any, ...] = ()


class Context:
    def __init__(self) -> None:
        self.code: grpc.StatusCode | None = None

    async def abort(self, code: grpc.StatusCode, details: str) -> None:
        self.code = code
        raise grpc.aio.AbortError()


async def _gated(gate: DrainGate, behaviour: Any) -> Any:
    async def continuation(details: Any) -> grpc.RpcMethodHandler:
        return grpc.unary_unary_rpc_method_handler(behaviour)

    handler = await gate.intercept_service(continuation, Details("/svc.S/Call"))
    assert handler is not None
    return handler.unary_unary


async def test_settles_only_after_calls_in_progress_and_a_quiet_spell() -> None:
    gate = DrainGate(("svc.S",))
    release = asyncio.Event()

    async def slow(request: Any, context: Any) -> str:
        await release.wait()
        return "done"

    call = await _gated(gate, slow)
    running = asyncio.create_task(call(None, Context()))
    await asyncio.sleep(0)
    assert gate.in_progress == 1
    gate.close()
    waiting = asyncio.create_task(gate.settled(0.05, 30.0, 30.0))
    await asyncio.sleep(0.2)
    assert not waiting.done()  # a call is still running
    release.set()
    assert await running == "done"
    assert await waiting is True


async def test_new_calls_are_refused_unavailable_and_retries_do_not_hold_it_open() -> None:
    gate = DrainGate(("svc.S",))

    async def fine(request: Any, context: Any) -> str:
        return "ran"

    gate.close()
    refused: list[grpc.StatusCode | None] = []
    stop = asyncio.Event()

    async def retrying_client() -> None:
        while not stop.is_set():
            context = Context()
            call = await _gated(gate, fine)  # arrives at the gate
            try:
                await call(None, context)
            except grpc.aio.AbortError:
                refused.append(context.code)
            await asyncio.sleep(0.005)

    client = asyncio.create_task(retrying_client())
    try:
        assert await gate.settled(0.05, 30.0, 0.3) is True  # not quiet, yet settled
    finally:
        stop.set()
        await client
    assert refused and set(refused) == {grpc.StatusCode.UNAVAILABLE}


async def test_gives_up_when_the_grace_period_runs_out() -> None:
    gate = DrainGate(("svc.S",))
    release = asyncio.Event()

    async def slow(request: Any, context: Any) -> str:
        await release.wait()
        return "done"

    running = asyncio.create_task((await _gated(gate, slow))(None, Context()))
    await asyncio.sleep(0)
    gate.close()
    assert await gate.settled(0.05, 0.2, 0.1) is False
    release.set()
    await running

"""Graceful shutdown: in-flight calls finish, new ones are refused."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from sidecar.inspection.chain import ChainLink
from sidecar.inspection.model import Finding, InspectionContext, ToolCall
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar, shell, write_policy
from tests.model_server import serve_model
from tests.test_chain import _with_extra_link
from tests.test_server_process import wait_serving


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


# -- the `sidecar serve` process on SIGTERM, with 16 calls in flight --------------------


def _serve(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    socket_path = tmp_path / "drain.sock"
    process = subprocess.Popen(
        [
            sys.executable, "-m", "sidecar", "serve",
            "--listen", f"unix:{socket_path}", "--metrics-listen", "off",
            "--state", str(tmp_path / "state.db"), "--mode", "auto", "--decision-log", "off",
            "--grace-seconds", "20", *args,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    target = f"unix:{socket_path}"
    wait_serving(target)
    return process, target


def _sixteen_calls(
    target: str, command: Callable[[int], str]
) -> tuple[list[threading.Thread], list[str]]:
    outcomes: list[str] = []
    channel = grpc.insecure_channel(target)
    stub = pb_grpc.PolicyServiceStub(channel)

    def call(index: int) -> None:
        request = pb.InspectRequest(
            session_id=f"drain-{index}", tool_calls=[shell("1", command(index))]
        )
        try:
            response = stub.Inspect(request, timeout=60)
            outcomes.append(pb.Verdict.Name(response.verdicts[0].verdict))
        except grpc.RpcError as error:
            outcomes.append(error.code().name)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    return threads, outcomes


def _after_sigterm(process: subprocess.Popen[str], target: str) -> tuple[str, int]:
    """Signal, then what a new call and a health check get while the server drains."""
    process.send_signal(signal.SIGTERM)
    with grpc.insecure_channel(target) as channel:
        deadline = time.monotonic() + 10
        status = health_pb2.HealthCheckResponse.SERVING
        while status == health_pb2.HealthCheckResponse.SERVING and time.monotonic() < deadline:
            status = (
                health_pb2_grpc.HealthStub(channel)
                .Check(health_pb2.HealthCheckRequest(), timeout=5)
                .status
            )
        try:
            pb_grpc.PolicyServiceStub(channel).Inspect(
                pb.InspectRequest(session_id="late", tool_calls=[shell("1", "ls")]),
                timeout=5,
            )
            late = "OK"
        except grpc.RpcError as error:
            late = error.code().name
    return late, status


def test_sigterm_with_16_slow_calls_in_flight_cancels_none(tmp_path: Path) -> None:
    """The probe's shape: the adversary reviewer waits on a slow model for every call."""
    policies = tmp_path / "policies"
    policies.mkdir()
    for model in serve_model(lambda body: (200, '{"decision": "ALLOW", "reason": "ok"}', 1.5)):
        write_policy(
            policies,
            "adversary.yaml",
            json.dumps({
                "inspectors": {"adversary": {"enabled": True, "timeout_ms": 20_000}},
                "adversary": {"base_url": model.url, "model": "slow"},
            }),
        )  # fmt: skip
        process, target = _serve(tmp_path, "--policies", str(policies))
        try:
            threads, outcomes = _sixteen_calls(target, lambda i: "make")
            while len(model.requests) < 16:  # all sixteen are at the model: in flight
                time.sleep(0.01)
            late, health = _after_sigterm(process, target)
            for thread in threads:
                thread.join()
            _, err = process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
    assert outcomes == ["VERDICT_ALLOW"] * 16, outcomes
    assert late == "UNAVAILABLE"
    assert health == health_pb2.HealthCheckResponse.NOT_SERVING
    assert process.returncode == 0, err


def test_sigterm_with_16_heavy_calls_queued_cancels_none(tmp_path: Path) -> None:
    """Calls queued behind work on the event loop were what grpc cancelled (12-14 of 16,
    exit after 0.15-0.75 s): none may end CANCELLED; those that had not started may be
    told UNAVAILABLE, which clients retry."""
    process, target = _serve(tmp_path)
    try:
        threads, outcomes = _sixteen_calls(
            target, lambda i: f"echo {i}; " + "cat f | " * 1500 + "make"
        )
        while not outcomes and threads[0].is_alive():
            time.sleep(0.01)  # the first answer: the server is at work
        late, _ = _after_sigterm(process, target)
        for thread in threads:
            thread.join()
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert len(outcomes) == 16
    assert "CANCELLED" not in outcomes, outcomes
    assert set(outcomes) <= {"VERDICT_ALLOW", "VERDICT_REQUIRE_APPROVAL", "UNAVAILABLE"}
    assert late == "UNAVAILABLE"
    assert process.returncode == 0, err

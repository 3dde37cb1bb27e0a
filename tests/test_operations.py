"""Running in a pod: Kubernetes' own variables, the health-only port for kubelet probes,
and logs a pipeline can parse, with the bound addresses in them."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar, shell
from tests.test_config import service_links
from tests.test_server_process import run_sidecar, stop, wait_serving

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


def quiet(tmp_path: Path) -> list[str]:
    """Flags for a server that binds nothing but a Unix socket in tmp_path."""
    return [
        "--listen",
        f"unix:{tmp_path}/s.sock",
        "--metrics-listen",
        "off",
        "--state",
        ":memory:",
        "--decision-log",
        "off",
    ]


def test_a_service_named_sidecar_does_not_crash_loop_the_pod(tmp_path: Path) -> None:
    """`helm install sidecar ...` makes a Service sidecar-agent-policy-sidecar; with service
    links on, every pod in the namespace gets SIDECAR_..._SERVICE_HOST and friends."""
    env = {
        **service_links("sidecar-agent-policy-sidecar", {"grpc": 50051, "metrics": 9464}),
        **service_links("sidecar", {"http": 80}),
        **service_links("sidecar-mode", {"grpc": 50051}),
    }
    assert "SIDECAR_AGENT_POLICY_SIDECAR_SERVICE_HOST" in env
    assert "SIDECAR_AGENT_POLICY_SIDECAR_PORT_50051_TCP_ADDR" in env
    process = run_sidecar(*quiet(tmp_path), "--log-format", "text", env=env)
    try:
        wait_serving(f"unix:{tmp_path}/s.sock")
    finally:
        code, err = stop(process)
    assert code == 0, err
    # Service links are not typos: nothing to warn about them (the one warning left says
    # that no approval credential is configured, which is about something else).
    warnings = [line for line in err.splitlines() if " WARNING " in line]
    assert all("approval credential" in line for line in warnings), warnings
    assert not any("SERVICE" in line or "PORT" in line for line in warnings)


def test_an_unknown_variable_is_a_warning_with_a_suggestion(tmp_path: Path) -> None:
    process = run_sidecar(*quiet(tmp_path), "--log-format", "text", env={"SIDECAR_MOD": "auto"})
    try:
        wait_serving(f"unix:{tmp_path}/s.sock")
    finally:
        code, err = stop(process)
    assert code == 0, err
    assert (
        "WARNING sidecar.config environment variable SIDECAR_MOD is not a setting; ignored "
        "(did you mean SIDECAR_MODE?)" in err
    )


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode()


def health(address: str, service: str = "") -> int:
    with grpc.insecure_channel(address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=5
        )
    return int(reply.status)


def test_json_logs_off_a_terminal_name_every_bound_address(tmp_path: Path) -> None:
    """Port 0 everywhere: the log line is the only way to find the ports, so it must
    carry them; and every stderr line is JSON with an `event` field."""
    process = run_sidecar(
        "--listen",
        "127.0.0.1:0",
        "--metrics-listen",
        "127.0.0.1:0",
        "--health-listen",
        "127.0.0.1:0",
        "--state",
        ":memory:",
        env={"SIDECAR_MOD": "auto"},
    )
    before: list[str] = []
    try:
        assert process.stderr is not None
        while not (line := process.stderr.readline()).count('"serving on '):
            assert line, "the server stopped before serving"
            before.append(line)
        started = json.loads(line)
        assert started["event"] == "log" and started["level"] == "info"
        assert started["logger"] == "sidecar.server"
        grpc_address = started["grpc_addresses"][0]
        metrics, health_only = started["metrics_address"], started["health_address"]
        assert re.fullmatch(r"127\.0\.0\.1:\d+", grpc_address) and not grpc_address.endswith(":0")
        assert f"metrics http://{metrics}/metrics" in started["msg"]
        assert f"health-only {health_only}" in started["msg"]
        assert "sidecar_decisions_total" in fetch(f"http://{metrics}/metrics")
        assert health(health_only) == SERVING
        with grpc.insecure_channel(grpc_address) as channel:
            pb_grpc.PolicyServiceStub(channel).Inspect(
                pb.InspectRequest(session_id="j", tool_calls=[shell("1", "rm -rf /")]), timeout=5
            )
    finally:
        code, err = stop(process)
    assert code == 0, err
    records = [json.loads(text) for text in [*before, *err.splitlines()] if text.strip()]
    events = {record["event"] for record in records}
    assert {"log", "decision"} <= events
    warning = next(r for r in records if r.get("level") == "warning")
    assert "did you mean SIDECAR_MODE?" in warning["msg"]


def test_text_logs_on_request_and_decision_lines_stay_json(tmp_path: Path) -> None:
    args = quiet(tmp_path)
    args[args.index("--decision-log") + 1] = "stderr"
    process = run_sidecar(*args, "--log-format", "text")
    try:
        wait_serving(f"unix:{tmp_path}/s.sock")
        with grpc.insecure_channel(f"unix:{tmp_path}/s.sock") as channel:
            pb_grpc.PolicyServiceStub(channel).Inspect(
                pb.InspectRequest(session_id="t", tool_calls=[shell("1", "ls")]), timeout=5
            )
    finally:
        code, err = stop(process)
    assert code == 0, err
    lines = [text for text in err.splitlines() if text.strip()]
    decisions = [text for text in lines if text.startswith("{")]
    logs = [text for text in lines if not text.startswith("{")]
    assert [json.loads(text)["event"] for text in decisions] == ["decision"]
    assert any(re.match(r"^\d{4}-\d\d-\d\d .* INFO sidecar\.server serving on ", t) for t in logs)


async def test_the_health_only_port_serves_health_and_nothing_else(
    start_sidecar: StartSidecar,
) -> None:
    sidecar = await start_sidecar(health_listen="127.0.0.1:0")
    assert sidecar.health_address is not None
    async with grpc.aio.insecure_channel(sidecar.health_address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        for service in ("", "sidecar.v1.PolicyService", "sidecar.v1.ContextService"):
            reply = await stub.Check(health_pb2.HealthCheckRequest(service=service))
            assert reply.status == SERVING
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await pb_grpc.PolicyServiceStub(channel).Inspect(
                pb.InspectRequest(session_id="h", tool_calls=[shell("1", "ls")])
            )
        assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await pb_grpc.PolicyServiceStub(channel).RecordDecision(pb.RecordDecisionRequest())
        assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED


async def test_the_health_only_port_says_not_serving_when_shutdown_starts(
    start_sidecar: StartSidecar,
) -> None:
    sidecar = await start_sidecar(health_listen="127.0.0.1:0", grace_seconds=1.0)
    assert sidecar.health_address is not None
    seen: list[Any] = []
    async with grpc.aio.insecure_channel(sidecar.health_address) as channel:
        watch = health_pb2_grpc.HealthStub(channel).Watch(
            health_pb2.HealthCheckRequest(service="sidecar.v1.PolicyService")
        )

        async def follow() -> None:
            try:
                async for reply in watch:
                    seen.append(reply.status)
            except grpc.aio.AioRpcError:
                pass  # the port closes once the API has drained

        follower = asyncio.create_task(follow())
        for _ in range(100):
            if seen:
                break
            await asyncio.sleep(0.02)
        await sidecar.stop()
        await asyncio.wait_for(follower, timeout=10)
    assert seen[:2] == [SERVING, NOT_SERVING]


def test_a_health_address_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = f"127.0.0.1:{busy.getsockname()[1]}"
        process = run_sidecar(*quiet(tmp_path), "--health-listen", taken)
        _, err = process.communicate(timeout=30)
    assert process.returncode == 1
    assert f"cannot serve health checks on {taken}" in err
    assert "Traceback" not in err

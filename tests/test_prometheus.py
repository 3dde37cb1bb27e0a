"""A real Prometheus (Debian's package, started here on loopback) scrapes a running
sidecar; promtool checks the exposition and the alert rules."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

import grpc

from sidecar.server import Sidecar
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import shell

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode()


async def test_promtool_accepts_the_metrics_exposition(
    sidecar: Sidecar, policy_stub: pb_grpc.PolicyServiceStub
) -> None:
    await policy_stub.Inspect(
        pb.InspectRequest(session_id="m", tool_calls=[shell("1", "rm -rf /")])
    )
    text = await asyncio.to_thread(fetch, f"http://127.0.0.1:{sidecar.metrics_port}/metrics")
    process = await asyncio.create_subprocess_exec(
        "promtool",
        "check",
        "metrics",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate(text.encode())
    assert process.returncode == 0, (out + err).decode()


def test_promtool_accepts_the_alert_rules() -> None:
    rules = ROOT / "helm" / "agent-policy-sidecar" / "files" / "alerts.yaml"
    result = subprocess.run(
        ["promtool", "check", "rules", str(rules)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


async def test_prometheus_scrapes_per_inspector_series(sidecar: Sidecar, tmp_path: Path) -> None:
    prometheus = shutil.which("prometheus")
    assert prometheus, "Debian's prometheus package is installed by `make tools`"
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.PolicyServiceStub(channel)
        for n in range(5):
            await stub.Inspect(
                pb.InspectRequest(
                    session_id=f"p{n}", tool_calls=[shell("1", "ls"), shell("2", "rm -rf /")]
                )
            )
    port = free_port()
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        "rule_files: ['"
        + str(ROOT / "helm" / "agent-policy-sidecar" / "files" / "alerts.yaml")
        + "']\n"
        "scrape_configs:\n"
        "  - job_name: agent-policy-sidecar\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{sidecar.metrics_port}']}}]\n"
    )
    process = await asyncio.create_subprocess_exec(
        prometheus,
        f"--config.file={config}",
        f"--web.listen-address=127.0.0.1:{port}",
        f"--storage.tsdb.path={tmp_path / 'data'}",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        query = urllib.parse.quote("sum by (inspector) (sidecar_inspector_duration_seconds_count)")
        found: set[str] = set()
        for _ in range(120):  # bounded: at most about a minute
            await asyncio.sleep(0.5)
            try:
                body = json.loads(
                    await asyncio.to_thread(
                        fetch, f"http://127.0.0.1:{port}/api/v1/query?query={query}"
                    )
                )
            except OSError:
                continue
            found = {r["metric"].get("inspector", "") for r in body["data"]["result"]}
            if {"security", "egress", "permission", "repetition"} <= found:
                break
        assert {"security", "egress", "permission", "repetition"} <= found, found
        up = json.loads(
            await asyncio.to_thread(fetch, f"http://127.0.0.1:{port}/api/v1/query?query=up")
        )
        assert up["data"]["result"][0]["value"][1] == "1"
        rules = json.loads(await asyncio.to_thread(fetch, f"http://127.0.0.1:{port}/api/v1/rules"))
        assert (
            len(rules["data"]["groups"][0]["rules"]) == 6
        )  # the alert rules load in a real Prometheus
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), timeout=20)

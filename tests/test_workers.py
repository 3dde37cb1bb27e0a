"""`sidecar serve --workers 2`: two server processes on one TCP address and one SQLite
file. They agree (no worker answers from a stale copy), the Unix socket is served, metrics
add up over both with each worker's gauges labelled, SIGHUP reloads the policy in every
worker, and a killed worker is started again."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from sidecar.workers import _free_port, merge

OPTIONS = [("grpc.use_local_subchannel_pool", 1)]  # a connection of its own per channel


class Workers:
    def __init__(self, directory: Path) -> None:
        self.port = _free_port("127.0.0.1")
        self.metrics_port = _free_port("127.0.0.1")
        self.target = f"127.0.0.1:{self.port}"
        self.socket = directory / "sidecar.sock"
        self.policies = directory / "policies"
        self.policies.mkdir()
        self.log = directory / "server.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable, "-m", "sidecar", "serve", "--workers", "2",
                    "--listen", self.target, "--listen", f"unix:{self.socket}",
                    "--metrics-listen", f"127.0.0.1:{self.metrics_port}",
                    "--state", str(directory / "state.db"), "--policies", str(self.policies),
                    "--policy-watch-seconds", "0", "--mode", "auto", "--decision-log", "off",
                ],
                stdout=subprocess.DEVNULL,
                stderr=log,
            )  # fmt: skip

    def listeners(self) -> set[int]:
        listing = subprocess.run(
            ["ss", "-Hltnp", f"sport = :{self.port}"], capture_output=True, text=True, check=True
        ).stdout
        return {int(part.split(",")[0]) for part in listing.split("pid=")[1:]}

    def connected(self) -> set[int]:
        listing = subprocess.run(
            ["ss", "-Htnp", "state", "established", f"sport = :{self.port}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return {int(part.split(",")[0]) for part in listing.split("pid=")[1:]}

    async def ready(self) -> None:
        deadline = time.monotonic() + 60
        while len(self.listeners()) < 2:
            assert self.process.poll() is None, self.log.read_text()[-3000:]
            assert time.monotonic() < deadline, "the workers never listened"
            await asyncio.sleep(0.1)

    def metrics(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics") as reply:
            return str(reply.read().decode())

    def sample(self, line_start: str) -> list[str]:
        return [line for line in self.metrics().splitlines() if line.startswith(line_start)]


@pytest.fixture
async def workers(tmp_path: Path) -> AsyncIterator[Workers]:
    served = Workers(tmp_path)
    try:
        await served.ready()
        yield served
    finally:
        if served.process.poll() is None:
            served.process.send_signal(signal.SIGTERM)
            assert served.process.wait(60) == 0, served.log.read_text()[-3000:]


async def inspect(target: str, session: str, call: pb.ToolCall) -> pb.ToolVerdict:
    async with grpc.aio.insecure_channel(target, options=OPTIONS) as channel:
        reply = await pb_grpc.PolicyServiceStub(channel).Inspect(
            pb.InspectRequest(session_id=session, tool_calls=[call])
        )
    return reply.verdicts[0]


def shell(command: str) -> pb.ToolCall:
    return pb.ToolCall(id="1", name="shell", arguments_json=json.dumps({"command": command}))


async def test_two_workers_share_the_address_and_agree(workers: Workers) -> None:
    pids = workers.listeners()
    assert len(pids) == 2
    # Many connections: the kernel spreads them over both workers.
    channels = [grpc.aio.insecure_channel(workers.target, options=OPTIONS) for _ in range(16)]
    for n, channel in enumerate(channels):
        health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert health.status == health_pb2.HealthCheckResponse.SERVING, n
    assert workers.connected() == pids
    await pb_grpc.PolicyServiceStub(channels[0]).RecordDecision(
        pb.RecordDecisionRequest(session_id="s", tool_name="deploy", answer=pb.ANSWER_ALWAYS_DENY)
    )
    deploy = pb.ToolCall(id="d", name="deploy", arguments_json="{}")
    for n, channel in enumerate(channels):  # whichever worker answers, the answer stands
        stub = pb_grpc.PolicyServiceStub(channel)
        call = pb.ToolCall(id="d", name="deploy", arguments_json=json.dumps({"n": n}))
        reply = await stub.Inspect(pb.InspectRequest(session_id="s", tool_calls=[call]))
        assert reply.verdicts[0].verdict == pb.VERDICT_DENY, n
    verdicts = []
    for n in range(6):  # repetition counted across the workers
        stub = pb_grpc.PolicyServiceStub(channels[n % 16])
        reply = await stub.Inspect(pb.InspectRequest(session_id="loop", tool_calls=[shell("ls")]))
        verdicts.append(reply.verdicts[0].verdict)
    assert verdicts == [pb.VERDICT_ALLOW] * 5 + [pb.VERDICT_DENY]
    for channel in channels:
        await channel.close()
    # The Unix socket is served (by the first worker).
    unix = await inspect(f"unix:{workers.socket}", "u", deploy)
    assert unix.verdict == pb.VERDICT_ALLOW
    # Counters add up over the workers; gauges are per worker.
    handled = workers.sample('grpc_server_handled_total{grpc_code="OK",grpc_method="Inspect"')
    assert len(handled) == 1 and float(handled[0].split()[-1]) == 16 + 6 + 1
    revisions = workers.sample("sidecar_policy_info{")
    assert sorted(line.split('worker="')[1][0] for line in revisions) == ["0", "1"]
    assert workers.sample('sidecar_workers{state="running"}')[0].endswith(" 2.0")


async def test_sighup_reloads_the_policy_in_every_worker(workers: Workers) -> None:
    (old,) = {
        line.split('revision="')[1].split('"')[0] for line in workers.sample("sidecar_policy_info{")
    }
    (workers.policies / "50-limit.yaml").write_text("repetition:\n  max_consecutive: 2\n")
    workers.process.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 30
    while True:
        revisions = {
            (line.split('revision="')[1].split('"')[0], line.split('worker="')[1][0])
            for line in workers.sample("sidecar_policy_info{")
        }
        if len(revisions) == 2 and all(revision != old for revision, _ in revisions):
            break
        assert time.monotonic() < deadline, revisions
        await asyncio.sleep(0.2)
    verdicts = [(await inspect(workers.target, "r", shell("make"))).verdict for _ in range(3)]
    assert verdicts == [pb.VERDICT_ALLOW, pb.VERDICT_ALLOW, pb.VERDICT_DENY]


async def test_a_killed_worker_is_started_again(workers: Workers) -> None:
    victim = min(workers.listeners())
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while not (
        len(workers.listeners()) == 2
        and victim not in workers.listeners()
        and workers.sample("sidecar_worker_restarts_total")[0].endswith(" 1.0")
    ):
        assert time.monotonic() < deadline, workers.log.read_text()[-3000:]
        await asyncio.sleep(0.2)
    assert (await inspect(workers.target, "after", shell("ls"))).verdict == pb.VERDICT_ALLOW


def test_merging_sums_counters_and_histograms_and_labels_gauges() -> None:
    one = (
        '# TYPE x_total counter\nx_total{a="1"} 2.0\n'
        '# TYPE h histogram\nh_bucket{le="1.0"} 1.0\nh_bucket{le="+Inf"} 2.0\n'
        "h_count 2.0\nh_sum 0.5\n"
        "# TYPE g gauge\ng 5.0\n"
    )
    two = one.replace('x_total{a="1"} 2.0', 'x_total{a="1"} 3.0').replace("g 5.0", "g 7.0")
    families = {f.name: f for f in merge({"0": one, "1": two})}
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in families.values()
        for s in f.samples
    }
    assert samples[("x_total", (("a", "1"),))] == 5.0
    assert samples[("h_bucket", (("le", "+Inf"),))] == 4.0
    assert samples[("h_sum", ())] == 1.0
    assert samples[("g", (("worker", "0"),))] == 5.0
    assert samples[("g", (("worker", "1"),))] == 7.0

"""The hardening probe's hostile shapes against a real `sidecar serve` process, with a
health check running beside each: the time to a verdict, the verdict, the slowest
health check meanwhile, and the server's resident memory before and after.

A health check's time is measured beside an idle server too, in the same run: the
host's own noise (2 shared cores here) is the floor any figure should be read against.

Run: make bench (or python -m bench.hostile_bench)
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.served import Served
from sidecar.memory import resident_bytes
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc

K = 128 * 1024


def _shell(index: int, command: str) -> pb.ToolCall:
    return pb.ToolCall(id=str(index), name="shell", arguments_json=json.dumps({"command": command}))


# name -> the calls of one Inspect. Each line starts differently so that none is the
# repetition of another.
SHAPES: dict[str, list[pb.ToolCall]] = {
    "128 KiB dangling pipeline": [_shell(1, ("cat f | " * (K // 8))[: K - 2] + "| ")],
    "4,000-stage dangling pipeline": [_shell(1, "cat f | " * 4000)],
    "31 x 32 KiB pipelines": [
        _shell(i, f"echo {i}; " + "cat f | " * 4000 + "cat f") for i in range(31)
    ],
    "31 x 128 KiB of words": [
        _shell(i, f"echo {i}; ls " + "a " * (K // 2 - 20)) for i in range(31)
    ],
    "31 x 128 KiB of && chains": [
        _shell(i, f"echo {i}; " + ("ls -la && " * (K // 10))[: K - 30] + "ls") for i in range(31)
    ],
}


@dataclass
class Outcome:
    seconds: float
    verdicts: dict[str, int]
    health_max_ms: float
    health_p99_ms: float
    rss_before: int
    rss_after: int


async def _probe_health(channel: grpc.aio.Channel, stop: asyncio.Event) -> list[float]:
    stub = health_pb2_grpc.HealthStub(channel)
    samples = []
    while not stop.is_set():
        started = time.perf_counter()
        await stub.Check(health_pb2.HealthCheckRequest(), timeout=60)
        samples.append(time.perf_counter() - started)
        await asyncio.sleep(0.005)
    return samples


async def _one(served: Served, calls: list[pb.ToolCall] | None) -> Outcome:
    async with (
        grpc.aio.insecure_channel(served.target) as channel,
        grpc.aio.insecure_channel(served.target) as health_channel,
    ):
        await health_pb2_grpc.HealthStub(health_channel).Check(health_pb2.HealthCheckRequest())
        before = resident_bytes(served.pid)
        stop = asyncio.Event()
        prober = asyncio.create_task(_probe_health(health_channel, stop))
        started = time.perf_counter()
        verdicts: dict[str, int] = {}
        if calls is None:
            await asyncio.sleep(2.0)
        else:
            response = await pb_grpc.PolicyServiceStub(channel).Inspect(
                pb.InspectRequest(session_id="hostile", tool_calls=calls), timeout=300
            )
            for verdict in response.verdicts:
                name = pb.Verdict.Name(verdict.verdict).removeprefix("VERDICT_").lower()
                verdicts[name] = verdicts.get(name, 0) + 1
        seconds = time.perf_counter() - started
        stop.set()
        samples = sorted(await prober)
        await asyncio.sleep(1.0)  # let the server hand memory back
        after = resident_bytes(served.pid)
    return Outcome(
        seconds,
        verdicts,
        samples[-1] * 1000,
        samples[min(len(samples) - 1, int(0.99 * len(samples)))] * 1000,
        before,
        after,
    )


async def run() -> dict[str, Outcome]:
    with tempfile.TemporaryDirectory() as directory:
        served = Served(Path(directory), "--mode", "auto", "--decision-log", "off")
        await served.start()
        try:
            results = {"idle server (the floor)": await _one(served, None)}
            for name, calls in SHAPES.items():
                results[name] = await _one(served, calls)
            results["idle server again"] = await _one(served, None)
        finally:
            served.stop()
    return results


def table(results: dict[str, Outcome]) -> str:
    mb = 1024 * 1024
    lines = [
        "| shape | time to verdicts | verdicts | slowest health check | p99 | RSS before → after |",
        "|---|---|---|---|---|---|",
    ]
    for name, o in results.items():
        verdicts = ", ".join(f"{count} {verdict}" for verdict, count in o.verdicts.items()) or "-"
        lines.append(
            f"| {name} | {o.seconds * 1000:.0f} ms | {verdicts} | {o.health_max_ms:.1f} ms "
            f"| {o.health_p99_ms:.1f} ms | {o.rss_before / mb:.0f} → {o.rss_after / mb:.0f} MB |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(asyncio.run(run())))

"""Inspect and Project over loopback gRPC, against an empty gRPC server measured in the
same run (bench/empty_server.py: same stack, same response bytes, no work).

For each method: serial p50 and p99 latency, and throughput at concurrency 16 and 32,
each as a ratio to the empty server. Inspect carries 5 shell calls by default; issue 10's
criterion is 10 (`--calls 10 --only Inspect`: p50 <= 2.5x the empty server's). Both
servers run in their own processes on Unix sockets; the client is this process.
Measurements alternate between the two servers in short rounds, so the host's noise falls
on both alike.

Run: make bench (or python -m bench.rpc_bench [--calls N] [--only Inspect] [--rounds R])
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.served import Served
from sidecar.v1 import sidecar_pb2 as pb

INSPECT = "/sidecar.v1.PolicyService/Inspect"
PROJECT = "/sidecar.v1.ContextService/Project"
COMMANDS = [
    "git status -- path{n}",
    "pytest -q tests/test_api{n}.py -k 'not slow'",
    "cd src{n} && grep -rn 'TODO{n}' . | head -20",
    "npm run build{n} && npm test -- {n}",
    "curl -s https://api.github.com/repos/o/r{n} | jq .stargazers_count",
    "ls -la dir{n}",
    "git commit -m 'fix: handle empty input {n}'",
    "find . -name '*.pyc{n}' -delete",
    "docker build -t app:dev{n} . && docker run --rm app:dev{n}",
    "python3 -c 'import sys; print(sys.version, {n})'",
]  # the first 5 by default; all 10 with --calls 10 (the in-process bench's new words)
PROJECT_SESSION = "bench-project"


def inspect_request(n: int, count: int = 5) -> bytes:
    calls = [
        pb.ToolCall(id=str(i), name="shell", arguments_json=json.dumps({"command": c.format(n=n)}))
        for i, c in enumerate(COMMANDS[:count])
    ]
    # A new session each time, so the repetition inspector never steps in.
    return pb.InspectRequest(session_id=f"bench-{n}", tool_calls=calls).SerializeToString()


PROJECT_REQUEST = pb.ProjectRequest(session_id=PROJECT_SESSION).SerializeToString()


async def _fill_session(channel: grpc.aio.Channel, messages: int = 100) -> None:
    append = channel.unary_unary("/sidecar.v1.ContextService/Append")
    batch = [
        pb.Message(
            id=f"m{i}",
            role=pb.ROLE_USER if i % 2 == 0 else pb.ROLE_ASSISTANT,
            parts=[pb.Part(text=pb.TextPart(text=f"message {i}: " + "words " * 30))],
        )
        for i in range(messages)
    ]
    await append(pb.AppendRequest(session_id=PROJECT_SESSION, messages=batch).SerializeToString())


async def _wait_serving(target: str) -> None:
    async with grpc.aio.insecure_channel(target) as channel:
        for _ in range(300):
            try:
                reply = await health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(), timeout=1
                )
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.aio.AioRpcError:
                pass
            await asyncio.sleep(0.05)
    raise RuntimeError(f"{target} never became SERVING")


@dataclass
class Row:
    p50_us: float
    p99_us: float
    throughput: dict[int, float]  # concurrency -> calls per second


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Target:
    def __init__(self, channel: grpc.aio.Channel, method: str, calls: int = 5) -> None:
        self._call = channel.unary_unary(method)
        self._method = method
        self._calls = calls
        self._n = 0

    async def once(self) -> None:
        self._n += 1
        body = inspect_request(self._n, self._calls) if self._method == INSPECT else PROJECT_REQUEST
        await self._call(body)


async def _serial(target: Target, calls: int) -> list[float]:
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await target.once()
        samples.append(time.perf_counter() - started)
    return samples


async def _throughput(target: Target, concurrency: int, seconds: float) -> float:
    done = 0
    until = time.perf_counter() + seconds

    async def loop() -> None:
        nonlocal done
        while time.perf_counter() < until:
            await target.once()
            done += 1

    started = time.perf_counter()
    await asyncio.gather(*(loop() for _ in range(concurrency)))
    return done / (time.perf_counter() - started)


async def _measure(
    pair: tuple[Target, Target], rounds: int, calls: int, seconds: float
) -> tuple[Row, Row]:
    serial: tuple[list[float], list[float]] = ([], [])
    rates: tuple[dict[int, list[float]], dict[int, list[float]]] = ({}, {})
    for target in pair:
        await _serial(target, 50)  # warm up
    for _ in range(rounds):
        for side, target in enumerate(pair):
            serial[side].extend(await _serial(target, calls))
        for concurrency in (16, 32):
            for side, target in enumerate(pair):
                rate = await _throughput(target, concurrency, seconds)
                rates[side].setdefault(concurrency, []).append(rate)
    rows = [
        Row(
            _percentile(serial[side], 0.5) * 1e6,
            _percentile(serial[side], 0.99) * 1e6,
            {c: statistics.median(r) for c, r in rates[side].items()},
        )
        for side in (0, 1)
    ]
    return rows[0], rows[1]


def _start_empty(address: str, root: Path) -> subprocess.Popen[bytes]:
    arguments = [address, str(root / "inspect.bin"), str(root / "project.bin")]
    return subprocess.Popen([sys.executable, "-m", "bench.empty_server", *arguments])


async def run(
    rounds: int = 5,
    calls: int = 200,
    seconds: float = 2.0,
    inspect_calls: int = 5,
    only: tuple[str, ...] = ("Inspect", "Project"),
) -> dict[str, tuple[Row, Row]]:
    """Per method: (sidecar, empty server). `inspect_calls`: tool calls per Inspect."""
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        served = Served(root, "--mode", "auto", "--decision-log", "off")
        await served.start()
        empty_socket = f"unix:{root / 'empty.sock'}"
        empty: subprocess.Popen[bytes] | None = None
        try:
            async with grpc.aio.insecure_channel(served.target) as channel:
                await _fill_session(channel)
                inspect_bytes = await channel.unary_unary(INSPECT)(
                    inspect_request(0, inspect_calls)
                )
                project_bytes = await channel.unary_unary(PROJECT)(PROJECT_REQUEST)
                (root / "inspect.bin").write_bytes(inspect_bytes)
                (root / "project.bin").write_bytes(project_bytes)
                empty = _start_empty(empty_socket, root)
                await _wait_serving(empty_socket)
                async with grpc.aio.insecure_channel(empty_socket) as baseline:
                    results = {}
                    for name, method in (("Inspect", INSPECT), ("Project", PROJECT)):
                        if name not in only:
                            continue
                        pair = (
                            Target(channel, method, inspect_calls),
                            Target(baseline, method, inspect_calls),
                        )
                        results[name] = await _measure(pair, rounds, calls, seconds)
        finally:
            if empty is not None:
                empty.terminate()
                empty.wait()
            served.stop()
    return results


def table(results: dict[str, tuple[Row, Row]]) -> str:
    lines = [
        "| method | serial p50 | serial p99 | throughput at 16 | throughput at 32 |",
        "|---|---|---|---|---|",
    ]
    for name, (ours, empty) in results.items():
        lines.append(
            f"| {name} "
            f"| {ours.p50_us / empty.p50_us:.2f}x ({ours.p50_us:.0f} vs {empty.p50_us:.0f} us) "
            f"| {ours.p99_us / empty.p99_us:.2f}x ({ours.p99_us:.0f} vs {empty.p99_us:.0f} us) "
            f"| {ours.throughput[16] / empty.throughput[16]:.2f}x "
            f"({ours.throughput[16]:.0f} vs {empty.throughput[16]:.0f}/s) "
            f"| {ours.throughput[32] / empty.throughput[32]:.2f}x "
            f"({ours.throughput[32]:.0f} vs {empty.throughput[32]:.0f}/s) |"
        )
    return "\n".join(lines)


async def _main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=5, help="shell calls per Inspect (max 10)")
    parser.add_argument("--only", choices=("Inspect", "Project"), action="append")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0, help="per throughput sample")
    args = parser.parse_args()
    calls = max(1, min(args.calls, len(COMMANDS)))
    print(
        f"Inspect ({calls} shell calls, new words) and Project (100 messages) vs an empty gRPC"
        " server; latency ratios: higher is slower; throughput ratios: lower is slower."
    )
    only = tuple(args.only or ("Inspect", "Project"))
    print(table(await run(args.rounds, seconds=args.seconds, inspect_calls=calls, only=only)))


if __name__ == "__main__":
    asyncio.run(_main())

"""Throughput with `--workers 2` against `--workers 1`, at concurrency 32, on this machine.

The server runs in its own processes on a loopback TCP port (SO_REUSEPORT spreads
connections, so the client opens 16 channels); the client sends pre-encoded Inspect
requests of 10 shell calls with words never seen before (the analysis is real work, not a
cache hit) and does not decode the answers, so that its own share of the two cores stays
small. Rounds alternate between the two servers; the ratio is of medians.

Run: python -m bench.workers_bench [--seconds S] [--rounds N] [--state DSN]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from sidecar.v1 import sidecar_pb2 as pb
from sidecar.workers import _free_port

INSPECT = "/sidecar.v1.PolicyService/Inspect"
COMMANDS = [
    "git status -- path{n}",
    "pytest -q tests/test_api{n}.py -k 'not slow'",
    "cd src{n} && grep -rn 'TODO{n}' . | head -20",
    "npm run build{n} && npm test -- {n}",
    "curl -s https://api.github.com/repos/o/r{n} | jq .stargazers_count",
    "ls -la build{n}/ && du -sh build{n}",
    "python3 -m venv .venv{n} && .venv{n}/bin/pip install -r req{n}.txt",
    "docker build -t app{n}:dev . && docker run --rm app{n}:dev true",
    "sed -n '1,{n}p' notes{n}.md | wc -l",
    "make -j2 target{n} 2>&1 | tail -5",
]
CONCURRENCY = 32
CHANNELS = 16


def request(n: int) -> bytes:
    calls = [
        pb.ToolCall(id=str(i), name="shell", arguments_json=json.dumps({"command": c.format(n=n)}))
        for i, c in enumerate(COMMANDS)
    ]
    return pb.InspectRequest(session_id=f"s{n % 64}", tool_calls=calls).SerializeToString()


class Server:
    def __init__(self, workers: int, state: str, directory: Path) -> None:
        self.workers = workers
        self.port = _free_port("127.0.0.1")
        self.target = f"127.0.0.1:{self.port}"
        if not state:
            state = str(directory / f"state-{workers}-{self.port}.db")
        self.process = subprocess.Popen(
            [
                sys.executable, "-m", "sidecar", "serve", "--workers", str(workers),
                "--listen", self.target, "--metrics-listen", "off", "--state", state,
                "--decision-log", "off", "--policy-watch-seconds", "0", "--mode", "auto",
                "--log-level", "warning",
            ],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip

    async def wait(self) -> None:
        """Until every worker listens: a worker listens once it can serve, and a
        connection stays with the worker that took it."""
        for _ in range(600):
            if self._listeners() >= self.workers:
                break
            await asyncio.sleep(0.1)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                async with grpc.aio.insecure_channel(self.target) as channel:
                    reply = await health_pb2_grpc.HealthStub(channel).Check(
                        health_pb2.HealthCheckRequest(), timeout=1
                    )
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        return
            except grpc.aio.AioRpcError:
                pass
            await asyncio.sleep(0.1)
        raise RuntimeError("the server never became SERVING")

    def _listeners(self) -> int:
        """Sockets listening on the port (`ss`, from iproute2)."""
        listing = subprocess.run(
            ["ss", "-Hltn", f"sport = :{self.port}"], capture_output=True, text=True, check=False
        )
        return len(listing.stdout.splitlines())

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


async def throughput(target: str, seconds: float, numbers: itertools.count[int]) -> float:
    # One connection each: channels to one target otherwise share a connection, and a
    # connection is served by one worker.
    options = [("grpc.use_local_subchannel_pool", 1)]
    channels = [grpc.aio.insecure_channel(target, options=options) for _ in range(CHANNELS)]
    calls = [c.unary_unary(INSPECT) for c in channels]
    done = 0
    until = time.monotonic() + seconds

    async def worker(index: int) -> None:
        nonlocal done
        call = calls[index % CHANNELS]
        while time.monotonic() < until:
            await call(request(next(numbers)))
            done += 1

    started = time.monotonic()
    await asyncio.gather(*(worker(i) for i in range(CONCURRENCY)))
    elapsed = time.monotonic() - started
    for channel in channels:
        await channel.close()
    return done / elapsed


async def main(seconds: float, rounds: int, state: str) -> dict[str, float]:
    numbers = itertools.count(os.getpid() * 10**6)
    rates: dict[int, list[float]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as directory:
        for _ in range(rounds):
            for workers in (1, 2):
                server = Server(workers, state, Path(directory))
                try:
                    await server.wait()
                    await throughput(server.target, 1.0, numbers)  # warm up every worker
                    rates[workers].append(await throughput(server.target, seconds, numbers))
                finally:
                    server.stop()
    one, two = statistics.median(rates[1]), statistics.median(rates[2])
    print(f"Inspect of 10 new shell calls, concurrency {CONCURRENCY}, {os.cpu_count()} cores")
    print(f"--workers 1: {one:.0f}/s  (rounds: {', '.join(f'{r:.0f}' for r in rates[1])})")
    print(f"--workers 2: {two:.0f}/s  (rounds: {', '.join(f'{r:.0f}' for r in rates[2])})")
    print(f"ratio: {two / one:.2f}x")
    return {"one": one, "two": two, "ratio": two / one}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--state", default="", help="a postgresql:// DSN (default: SQLite)")
    args = parser.parse_args()
    asyncio.run(main(args.seconds, args.rounds, args.state))

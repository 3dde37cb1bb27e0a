"""`sidecar serve` in its own process on a Unix socket: for the soak and the kill -9
durability test, which need the server's own resident memory and a real kill."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


class Served:
    def __init__(self, directory: Path, *args: str, state: Path | str | None = None) -> None:
        """`state`: a SQLite file (default: in `directory`) or a postgresql:// DSN."""
        self.directory = directory
        self.socket = directory / "sidecar.sock"
        directory.mkdir(parents=True, exist_ok=True)
        self.target = f"unix:{self.socket}"
        self.state = state or directory / "state.db"
        self.log = directory / "server.log"
        self._args = args
        self.process: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        self._spawn()
        await self._wait_serving()

    def _spawn(self) -> None:
        if self.socket.exists():
            self.socket.unlink()
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable, "-m", "sidecar", "serve",
                    "--listen", self.target, "--metrics-listen", "off",
                    "--state", str(self.state), "--policy-watch-seconds", "0",
                    *self._args,
                ],
                stdout=subprocess.DEVNULL,
                stderr=log,
            )  # fmt: skip

    async def _wait_serving(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + 30
        async with grpc.aio.insecure_channel(self.target) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"sidecar exited: {self.log.read_text()[-2000:]}")
                try:
                    reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=1)
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                except grpc.aio.AioRpcError:
                    pass
                await asyncio.sleep(0.05)
        raise RuntimeError("sidecar never became SERVING")

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def kill9(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> int:
        """SIGTERM and wait; the exit status."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

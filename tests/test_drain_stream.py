"""SIGTERM while many clients send calls back to back (the re-probe's shape): every call
is answered for real or told UNAVAILABLE, none is CANCELLED, every answer given has its
decision-log record, and every acknowledged Append is stored."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import grpc

from sidecar.config import Settings
from sidecar.server import Sidecar
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from sidecar.workers import _free_port
from tests.conftest import shell
from tests.test_server_process import wait_serving

CLIENTS = 16


def _serve(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], str, Path]:
    # Workers share a TCP address (SO_REUSEPORT); one server alone listens on a socket file.
    target = (
        f"127.0.0.1:{_free_port('127.0.0.1')}"
        if "--workers" in args
        else f"unix:{tmp_path / 'drain.sock'}"
    )
    decisions = tmp_path / "decisions.log"
    process = subprocess.Popen(
        [
            sys.executable, "-m", "sidecar", "serve",
            "--listen", target, "--metrics-listen", "off",
            "--state", str(tmp_path / "state.db"), "--mode", "auto",
            "--decision-log", str(decisions), "--grace-seconds", "20", *args,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    wait_serving(target)
    return process, target, decisions


Send = Callable[[grpc.Channel, int, int], str]


class BackToBack:
    """CLIENTS threads, each on its own channel, each sending the next call as soon as the
    last one is answered, until one is refused."""

    def __init__(self, target: str, send: Send) -> None:
        self.answered: list[str] = []  # what each answer names (a decision id, a session)
        self.refused: list[str] = []  # status code names
        self._lock = threading.Lock()
        self.threads = [
            threading.Thread(target=self._client, args=(target, i, send)) for i in range(CLIENTS)
        ]
        for thread in self.threads:
            thread.start()

    def _client(self, target: str, index: int, send: Send) -> None:
        with grpc.insecure_channel(target) as channel:
            for count in range(1_000_000):
                try:
                    answer = send(channel, index, count)
                except grpc.RpcError as error:
                    with self._lock:
                        self.refused.append(error.code().name)
                    return
                with self._lock:
                    self.answered.append(answer)

    def join(self) -> None:
        for thread in self.threads:
            thread.join()


def inspecting(command: str) -> Send:
    def send(channel: grpc.Channel, index: int, count: int) -> str:
        request = pb.InspectRequest(
            session_id=f"stream-{index}",
            tool_calls=[shell("1", command.format(index=index, count=count))],
        )
        response = pb_grpc.PolicyServiceStub(channel).Inspect(request, timeout=60)
        return str(response.decision_id)

    return send


def appending(channel: grpc.Channel, index: int, count: int) -> str:
    messages = [
        pb.Message(
            id=f"m{count}-{i}", role=pb.ROLE_USER, parts=[pb.Part(text=pb.TextPart(text="hi"))]
        )
        for i in range(APPENDED)
    ]
    request = pb.AppendRequest(session_id=f"append-{index}", messages=messages)
    pb_grpc.ContextServiceStub(channel).Append(request, timeout=60)
    return request.session_id


APPENDED = 200


def _stream_then_sigterm(tmp_path: Path, send: Send, *args: str) -> tuple[BackToBack, Path]:
    process, target, decisions = _serve(tmp_path, *args)
    try:
        clients = BackToBack(target, send)
        while len(clients.answered) < 3 * CLIENTS:  # the stream is flowing
            time.sleep(0.01)
        process.send_signal(signal.SIGTERM)
        clients.join()
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert len(clients.refused) == CLIENTS  # each client stops at its first refusal
    assert set(clients.refused) == {"UNAVAILABLE"}, clients.refused
    assert process.returncode == 0, err
    return clients, decisions


def _run(tmp_path: Path, command: str, *args: str) -> None:
    clients, decisions = _stream_then_sigterm(tmp_path, inspecting(command), *args)
    logged = {
        json.loads(line)["decision_id"] for line in decisions.read_text().splitlines() if line
    }
    missing = [d for d in clients.answered if d not in logged]
    assert not missing, f"{len(missing)} answered calls have no decision-log record"


async def test_sigterm_mid_stream_of_appends_loses_none(tmp_path: Path) -> None:
    clients, _ = _stream_then_sigterm(tmp_path, appending)
    sidecar = Sidecar(
        Settings(
            listen=(f"unix:{tmp_path}/again.sock",),
            metrics_listen="off",
            state=str(tmp_path / "state.db"),
            decision_log="off",
        )
    )
    await sidecar.start()
    try:
        async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
            stub = pb_grpc.ContextServiceStub(channel)
            for session in sorted(set(clients.answered)):
                stored: list[pb.Message] = []
                token = ""
                while True:
                    page = await stub.History(
                        pb.HistoryRequest(session_id=session, page_token=token, page_size=1000)
                    )
                    stored.extend(page.messages)
                    token = page.next_page_token
                    if not token:
                        break
                acknowledged = clients.answered.count(session) * APPENDED
                assert len(stored) == acknowledged, session
    finally:
        await sidecar.stop(grace=0)


def test_sigterm_mid_stream_of_small_calls_cancels_none(tmp_path: Path) -> None:
    _run(tmp_path, "ls {count}")


def test_sigterm_mid_stream_of_heavy_calls_cancels_none(tmp_path: Path) -> None:
    _run(tmp_path, "echo {index} {count}; " + "cat f | " * 300 + "make")


def test_sigterm_mid_stream_with_two_workers_cancels_none(tmp_path: Path) -> None:
    _run(tmp_path, "ls {count}", "--workers", "2")

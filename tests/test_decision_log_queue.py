"""A reader that stops reading the decision log or the server log stalls nobody.

The probe: stderr piped to a reader that stopped, and after ~31 calls every RPC timed
out, because records were written on the event loop. Here the reader is a real FIFO or
pipe that nobody reads; callers must return, the lines that do not fit are dropped and
counted, and once the reader reads again a line says how many were dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import os
import threading
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import CollectorRegistry

from sidecar.inspection.model import CallVerdict, ToolCall
from sidecar.inspection.verdict import Verdict
from sidecar.observability.decision_log import DecisionLog
from sidecar.observability.line_writer import LineWriter, may_stall
from sidecar.observability.logs import configure_logging, count_dropped_server_lines
from sidecar.observability.metrics import Metrics
from sidecar.secrets import SecretScanner
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar, tool

# Generous: only a stalled writer would take this long; the assertion is that it returns.
RETURNS_WITHIN = 60.0


def _fifo_with_idle_reader(path: Path) -> int:
    """A FIFO whose reader is open (so writers can open it) but reads nothing yet."""
    os.mkfifo(path)
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK)


def _read_all(fd: int, until: str) -> str:
    """Read the FIFO until `until` appears (the writer thread drains into it)."""
    os.set_blocking(fd, True)
    chunks: list[bytes] = []
    while until not in b"".join(chunks).decode("utf-8", "replace"):
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


def _verdict(index: int) -> CallVerdict:
    call = ToolCall(str(index), "write_file", {"path": "a.txt", "content": "x" * 1500})
    return CallVerdict(call, Verdict.ALLOW, "", "", [])


def test_a_fifo_and_a_pipe_may_stall_a_regular_file_and_memory_may_not(tmp_path: Path) -> None:
    reader = _fifo_with_idle_reader(tmp_path / "f")
    writer = os.open(tmp_path / "f", os.O_WRONLY)
    regular = tmp_path / "r"
    regular.write_text("")
    try:
        assert may_stall(writer)
        with open(regular, "a") as stream:
            assert not may_stall(stream)
        assert not may_stall(io.StringIO())
    finally:
        os.close(writer)
        os.close(reader)


def test_decision_records_to_a_stalled_reader_are_dropped_and_counted(tmp_path: Path) -> None:
    reader = _fifo_with_idle_reader(tmp_path / "decisions")
    metrics = Metrics(CollectorRegistry())
    log = DecisionLog(str(tmp_path / "decisions"), SecretScanner(), metrics, capacity_bytes=32_768)
    done = threading.Event()

    def write_many() -> None:
        for index in range(400):  # ~1.6 KiB each: far more than the pipe and the queue
            log.write(f"d{index}", "s", "rev", "auto", [_verdict(index)], {}, 0.001)
        done.set()

    threading.Thread(target=write_many, daemon=True).start()
    assert done.wait(RETURNS_WITHIN), "writing a decision record waited on the reader"
    dropped = metrics.registry.get_sample_value(
        "sidecar_log_lines_dropped_total", {"log": "decision"}
    )
    assert dropped is not None and dropped > 100
    chunks: list[str] = []
    reading = threading.Thread(target=lambda: chunks.append(_read_all(reader, "\0")))
    reading.start()  # reads to the end: the writer's queue drains, then close() ends the FIFO
    assert log.flush(RETURNS_WITHIN)
    log.close()
    reading.join(RETURNS_WITHIN)
    os.close(reader)
    text = chunks[0]
    notices = [json.loads(line) for line in text.splitlines() if "decision_log_dropped" in line]
    records = [line for line in text.splitlines() if '"event":"decision"' in line]
    assert notices and all(n["dropped"] > 0 for n in notices)
    # Every record is either written or counted as dropped.
    assert len(records) + dropped == 400
    assert sum(n["dropped"] for n in notices) <= dropped


def test_a_line_writer_writes_everything_once_the_reader_keeps_up() -> None:
    written: list[str] = []
    writer = LineWriter(written.append, lambda n: f"dropped {n}\n")
    for index in range(1000):
        assert writer.put(f"{index}\n")
    assert writer.flush(RETURNS_WITHIN)
    writer.close()
    assert written == [f"{index}\n" for index in range(1000)]


def test_server_log_lines_to_a_stalled_pipe_are_dropped_counted_and_reported() -> None:
    read_end, write_end = os.pipe()
    stream = os.fdopen(write_end, "w", encoding="utf-8")
    counted: list[int] = []
    root = logging.getLogger()
    previous_handlers, previous_level = list(root.handlers), root.level
    try:
        configure_logging("info", "json", stream=stream, secrets=SecretScanner())
        count_dropped_server_lines(counted.append)
        done = threading.Event()

        def log_many() -> None:
            logger = logging.getLogger("sidecar.test")
            for index in range(3000):  # 3000 lines of ~1 KiB: more than the pipe and the queue
                logger.info("line %d password=hunter2 %s", index, "y" * 1000)
            done.set()

        threading.Thread(target=log_many, daemon=True).start()
        assert done.wait(RETURNS_WITHIN), "logging waited on the reader"
        assert sum(counted) > 0
        text = _read_all(read_end, "log lines dropped")
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
            handler.close()
        for handler in previous_handlers:
            root.addHandler(handler)
        root.setLevel(previous_level)
        os.close(read_end)  # a writer still blocked on the full pipe now fails, and stops
        with contextlib.suppress(BrokenPipeError):
            stream.close()
    assert "hunter2" not in text  # still masked
    notice = next(json.loads(line) for line in text.splitlines() if "log lines dropped" in line)
    assert notice["level"] == "warning"
    assert int(notice["msg"].split()[0]) > 0


async def test_a_stalled_decision_log_reader_does_not_stall_the_server(
    start_sidecar: StartSidecar, tmp_path: Path
) -> None:
    fifo = tmp_path / "decisions.fifo"
    reader = _fifo_with_idle_reader(fifo)
    sidecar = await start_sidecar(decision_log=str(fifo))
    try:
        async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
            stub = pb_grpc.PolicyServiceStub(channel)
            health = health_pb2_grpc.HealthStub(channel)
            content = "z" * 1900
            batch = [
                tool(str(i), "write_file", path=f"f{i}.txt", content=content) for i in range(20)
            ]
            # 120 records of 20 calls, ~2 KiB each: ~4.8 MB to a reader that reads nothing.
            for index in range(120):
                reply = await stub.Inspect(
                    pb.InspectRequest(session_id=f"s{index % 4}", tool_calls=batch),
                    timeout=RETURNS_WITHIN,
                )
                assert len(reply.verdicts) == 20
            check = await health.Check(health_pb2.HealthCheckRequest(), timeout=RETURNS_WITHIN)
            assert check.status == health_pb2.HealthCheckResponse.SERVING
        dropped = sidecar.metrics.registry.get_sample_value(
            "sidecar_log_lines_dropped_total", {"log": "decision"}
        )
        assert dropped is not None and dropped > 0
        text = await asyncio.to_thread(_read_all, reader, "decision_log_dropped")
        assert "decision records dropped" in text
    finally:
        os.close(reader)


def test_closing_with_a_stuck_reader_returns_and_writes_nothing_more(tmp_path: Path) -> None:
    reader = _fifo_with_idle_reader(tmp_path / "stuck")
    log = DecisionLog(str(tmp_path / "stuck"), SecretScanner(), capacity_bytes=8_192)
    for index in range(100):  # more than the FIFO holds: the writer thread blocks
        log.write(f"d{index}", "s", "rev", "auto", [_verdict(index)], {}, 0.001)
    closed = threading.Event()

    def close() -> None:
        log.close()
        closed.set()

    threading.Thread(target=close, daemon=True).start()
    assert closed.wait(RETURNS_WITHIN), "close() waited on the reader"
    assert not log.enabled
    log.write("late", "s", "rev", "auto", [_verdict(0)], {}, 0.001)  # a no-op, not an error
    # The blocked writer keeps its descriptor (closing it under the writer could let a later
    # file reuse the number): the FIFO still has a writer, so reading it would not see EOF.
    assert any(
        os.path.realpath(f"/proc/self/fd/{fd}") == str(tmp_path / "stuck")
        for fd in os.listdir("/proc/self/fd")
        if fd != str(reader) and os.path.exists(f"/proc/self/fd/{fd}")
    )
    os.close(reader)  # the blocked write fails (EPIPE) and the writer thread ends

"""One JSON line per Inspect, with secrets masked, for audit and debugging.

Writing a record never fails a call. A record that cannot be encoded as it is (text
that is not valid Unicode) is written again as ASCII-only JSON, where every such
character is a JSON escape; one that cannot be written at all (a full disk) is
dropped. Either way sidecar_decision_log_failures_total counts it and the log says so,
rate-limited.

Writing never waits on a reader: where the target can stall (stderr piped to a log
shipper that stopped reading, a FIFO), records go through a bounded queue written by
one thread; when it is full a record is dropped, sidecar_log_lines_dropped_total{log=
"decision"} counts it, and once records flow again a line says how many were dropped.
A regular file is written directly, so a record is on disk when the call answers.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from typing import IO, Any

from sidecar.inspection.model import CallVerdict
from sidecar.inspection.verdict import Verdict
from sidecar.observability.line_writer import (
    CLOSE_SECONDS,
    DEFAULT_CAPACITY_BYTES,
    LineWriter,
    may_stall,
)
from sidecar.observability.logs import count_dropped_server_lines
from sidecar.observability.metrics import Metrics
from sidecar.observability.rate_limited_log import RateLimitedLog
from sidecar.secrets import SecretScanner

MAX_ARGUMENTS_CHARS = 2048
_problems = RateLimitedLog(logging.getLogger("sidecar.decision_log"), every_seconds=60.0)


class DecisionLog:
    def __init__(
        self,
        target: str,
        secrets: SecretScanner,
        metrics: Metrics | None = None,
        capacity_bytes: int = DEFAULT_CAPACITY_BYTES,
    ) -> None:
        """target: "stderr", "off", or a file path (appended to; created 0600, since
        the records hold the calls' arguments)."""
        self._secrets = secrets
        self._failures = metrics.decision_log_failures if metrics is not None else None
        self._stream: IO[str] | None = None
        self._file: int | None = None  # a file is written with os.write: nothing buffered
        if target == "stderr":
            self._stream = sys.stderr
        elif target != "off":
            existed = os.path.exists(target)
            self._file = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            if not existed and os.path.isfile(target):
                os.fchmod(self._file, 0o600)  # exactly, whatever the umask took away
        self._lock = threading.Lock()
        self._queue: LineWriter | None = None
        target_fd = self._file if self._file is not None else self._stream
        if target_fd is not None and may_stall(target_fd):
            dropped = metrics.log_lines_dropped.labels(log="decision") if metrics else None
            self._queue = LineWriter(
                self._write_now,
                _dropped_notice,
                on_dropped=dropped.inc if dropped is not None else None,
                on_error=lambda error: self._failed(
                    f"a record could not be written: {type(error).__name__}"
                ),
                capacity_bytes=capacity_bytes,
                name="decision-log",
            )
        if metrics is not None:
            # The server log is set up before any Metrics exist; its drops are counted here,
            # where the server hands its metrics to the logs.
            count_dropped_server_lines(metrics.log_lines_dropped.labels(log="server").inc)

    @property
    def enabled(self) -> bool:
        return self._stream is not None or self._file is not None

    def write(
        self,
        decision_id: str,
        session_id: str,
        revision: str,
        mode: str,
        verdicts: list[CallVerdict],
        failures: dict[str, str],
        latency_seconds: float,
    ) -> None:
        if not self.enabled:
            return
        try:
            record = self._record(
                decision_id, session_id, revision, mode, verdicts, failures, latency_seconds
            )
        except Exception as error:  # the call must still answer
            self._failed(f"a record could not be built: {type(error).__name__}")
            return
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        try:
            line.encode("utf-8")  # here, not in the writer thread, so the record is kept
        except UnicodeError:
            self._failed("a record held text that is not valid Unicode; written escaped")
            line = json.dumps(record, ensure_ascii=True, separators=(",", ":")) + "\n"
        if self._queue is not None:
            self._queue.put(line)
            return
        try:
            self._write_now(line)
        except Exception as error:
            self._failed(f"a record could not be written: {type(error).__name__}")

    def _record(
        self,
        decision_id: str,
        session_id: str,
        revision: str,
        mode: str,
        verdicts: list[CallVerdict],
        failures: dict[str, str],
        latency_seconds: float,
    ) -> dict[str, Any]:
        return {
            "ts": round(time.time(), 6),
            "event": "decision",
            "decision_id": decision_id,
            "session_id": self._secrets.mask(session_id),  # client text, like ids and names
            "policy_revision": revision,
            "mode": mode,
            "latency_ms": round(latency_seconds * 1000, 3),
            "inspector_failures": failures,
            "calls": [self._call(v) for v in verdicts],
        }

    def _write_now(self, line: str) -> None:
        with self._lock:
            if self._file is not None:
                # One write per record, so a failed one leaves nothing behind to retry.
                data = memoryview(line.encode("utf-8"))
                while data:
                    data = data[os.write(self._file, data) :]
            elif self._stream is not None:
                self._stream.write(line)
                self._stream.flush()

    def flush(self, timeout: float = CLOSE_SECONDS) -> bool:
        """Wait until queued records are written; False if the reader is stuck."""
        return self._queue.flush(timeout) if self._queue is not None else True

    def _failed(self, problem: str) -> None:
        if self._failures is not None:
            self._failures.inc()
        _problems.warning(problem[:40], "decision log: %s", problem)

    def _call(self, verdict: CallVerdict) -> dict[str, Any]:
        per_inspector: dict[str, Verdict] = {}
        for finding in verdict.findings:
            current = per_inspector.get(finding.inspector, Verdict.ALLOW)
            per_inspector[finding.inspector] = max(current, finding.verdict)
        # Masking cuts (what is past the limit is not shown, so never half a secret) and
        # scans only what it shows: a megabyte of arguments costs what 2 KiB does.
        arguments = self._secrets.mask(verdict.call.canonical_arguments, MAX_ARGUMENTS_CHARS)
        return {
            "id": self._secrets.mask(verdict.call.id),
            "tool": self._secrets.mask(verdict.call.name),
            "verdict": verdict.verdict.label,
            "reason": verdict.reason,  # already masked by the engine
            "inspectors": {name: v.label for name, v in per_inspector.items()},
            "rules": [f.rule_id for f in verdict.findings if f.verdict is not Verdict.ALLOW],
            "arguments": arguments,
        }

    def close(self) -> None:
        if self._queue is not None:
            # What is queued, within a bound. A writer still blocked on a stuck reader keeps
            # the descriptor: closed under it, its number could be reused by another file.
            stopped = self._queue.close()
            self._queue = None
            if not stopped:
                self._file = self._stream = None
                return
        if self._file is not None:
            os.close(self._file)
            self._file = None


def _dropped_notice(count: int) -> str:
    record = {
        "ts": round(time.time(), 6),
        "event": "decision_log_dropped",
        "dropped": count,
        "msg": f"{count} decision records dropped: the log's reader fell behind",
    }
    return json.dumps(record, separators=(",", ":")) + "\n"

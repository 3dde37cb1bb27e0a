"""The server log: text for a person at a terminal, JSON lines for a log pipeline.

Both go to stderr beside the decision log (when that targets stderr). A JSON log line
carries `"event": "log"`; decision-log lines carry `"event": "decision"` (and shadow
lines their own event), so a pipeline can tell them apart by that one field. In text
format, log lines start with a timestamp and decision lines with `{`.

Logging never waits on stderr's reader: when stderr can stall (a pipe to a log shipper),
lines go through a bounded queue written by one thread, and lines that do not fit are
dropped, counted (sidecar_log_lines_dropped_total{log="server"}) and reported in a line.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Callable
from typing import Any, Literal, TextIO

from sidecar.observability.line_writer import LineWriter, may_stall
from sidecar.observability.server_log import MaskingFormatter
from sidecar.secrets import SecretScanner

LogFormat = Literal["json", "text"]
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
# Fields of every LogRecord; anything else on a record came from `extra=`.
_RECORD_FIELDS = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object per record. Values passed as `extra={"fields": {...}}` are merged
    in, so addresses and revisions are fields a pipeline can read, not text to parse."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": round(record.created, 6),
            "event": "log",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update({k: v for k, v in fields.items() if k not in entry})
        for key, value in record.__dict__.items():
            if key not in _RECORD_FIELDS and key != "fields" and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, separators=(",", ":"), default=str)


class QueuedStreamHandler(logging.Handler):
    """Formats (and masks) on the caller, writes on the queue's thread."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self._stream = stream
        self._count: Callable[[int], None] | None = None
        self.dropped = 0
        self._writer = LineWriter(
            self._write, self._notice, on_dropped=self._dropped, name="server-log"
        )

    def count_dropped_with(self, count: Callable[[int], None]) -> None:
        self._count = count

    def emit(self, record: logging.LogRecord) -> None:
        # Not handleError: reporting it would write to the stream that may be stalled.
        with contextlib.suppress(Exception):
            self._writer.put(self.format(record) + "\n")

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()
        super().close()

    def _write(self, line: str) -> None:
        self._stream.write(line)
        self._stream.flush()

    def _dropped(self, count: int) -> None:
        self.dropped += count
        if self._count is not None:
            self._count(count)

    def _notice(self, count: int) -> str:
        record = logging.makeLogRecord(
            {
                "name": "sidecar.log",
                "levelno": logging.WARNING,
                "levelname": "WARNING",
                "msg": f"{count} log lines dropped: the log's reader fell behind",
            }
        )
        return self.format(record) + "\n"


def count_dropped_server_lines(count: Callable[[int], None]) -> None:
    """Count the server log's dropped lines in a metric (the log exists before metrics)."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, QueuedStreamHandler):
            handler.count_dropped_with(count)


def resolve_format(requested: LogFormat | None, stream: TextIO) -> LogFormat:
    """JSON unless asked otherwise, except on a terminal, where a person reads it."""
    if requested is not None:
        return requested
    isatty = getattr(stream, "isatty", None)
    return "text" if isatty is not None and isatty() else "json"


def configure_logging(
    level: str,
    requested: LogFormat | None,
    stream: TextIO | None = None,
    secrets: SecretScanner | None = None,
) -> LogFormat:
    """Install the one handler of the root logger; returns the format chosen. With
    `secrets`, every formatted line is masked (arguments, messages, tracebacks alike)."""
    stream = sys.stderr if stream is None else stream
    chosen = resolve_format(requested, stream)
    handler: logging.Handler = (
        QueuedStreamHandler(stream) if may_stall(stream) else logging.StreamHandler(stream)
    )
    formatter: logging.Formatter = (
        JsonFormatter() if chosen == "json" else logging.Formatter(TEXT_FORMAT)
    )
    if secrets is not None:
        formatter = MaskingFormatter(secrets, inner=formatter)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
        if isinstance(old, QueuedStreamHandler):
            old.close()
    root.addHandler(handler)
    root.setLevel(level.upper())
    return chosen

"""Lines written by one thread from a bounded queue, so a reader that stops reading
(stderr piped to a stalled log shipper, a FIFO) stalls no caller.

When the queue is full a line is dropped and counted; once lines flow again, a notice
says how many were dropped. Streams that cannot stall a writer (a regular file, an
in-memory buffer) need none of this: `may_stall` tells them apart.
"""

from __future__ import annotations

import os
import stat
import threading
from collections import deque
from collections.abc import Callable
from typing import IO

DEFAULT_CAPACITY_BYTES = 1 << 20
CLOSE_SECONDS = 2.0


def may_stall(stream: IO[str] | int) -> bool:
    """Whether writing can wait on a reader: a pipe, FIFO, socket or terminal."""
    try:
        fd = stream if isinstance(stream, int) else stream.fileno()
        mode = os.fstat(fd).st_mode
    except (AttributeError, OSError, ValueError):
        return False  # no descriptor (StringIO, pytest's capture): memory, never stalls
    return not stat.S_ISREG(mode)


class LineWriter:
    def __init__(
        self,
        write: Callable[[str], None],
        notice: Callable[[int], str],
        *,
        on_dropped: Callable[[int], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        capacity_bytes: int = DEFAULT_CAPACITY_BYTES,
        name: str = "line-writer",
    ) -> None:
        """write: writes one line (with its newline); notice(n): the line saying n were
        dropped; on_dropped(n): counts them (a metric); on_error: a write failed."""
        self._write = write
        self._notice = notice
        self._on_dropped = on_dropped
        self._on_error = on_error
        self._capacity = capacity_bytes
        self._lines: deque[str] = deque()
        self._queued_bytes = 0
        self._unreported = 0
        self._closing = False
        self._idle = True
        self._ready = threading.Condition()
        # A daemon: a reader that never reads again must not keep the process alive.
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def put(self, line: str) -> bool:
        """Queue one line; False when it was dropped (queue full or closed)."""
        with self._ready:
            if self._closing or (self._lines and self._queued_bytes + len(line) > self._capacity):
                self._unreported += 1
                dropped = True
            else:
                self._lines.append(line)
                self._queued_bytes += len(line)
                self._ready.notify()
                dropped = False
        if dropped and self._on_dropped is not None:
            self._on_dropped(1)
        return not dropped

    def flush(self, timeout: float = CLOSE_SECONDS) -> bool:
        """Wait until every queued line is written; False if that took too long."""
        with self._ready:
            return self._ready.wait_for(lambda: not self._lines and self._idle, timeout)

    def close(self, timeout: float = CLOSE_SECONDS) -> bool:
        """Write what is queued (within `timeout`) and stop the thread. False when the
        thread is still blocked on a write: its target must then stay open."""
        with self._ready:
            self._closing = True
            self._ready.notify_all()
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        while True:
            with self._ready:
                self._idle = True
                self._ready.notify_all()
                self._ready.wait_for(lambda: bool(self._lines) or self._closing)
                if not self._lines:
                    return  # closing, and everything is written
                line = self._lines.popleft()
                self._queued_bytes -= len(line)
                self._idle = False
            self._emit(line)
            with self._ready:
                dropped, self._unreported = self._unreported, 0
            if dropped:
                self._emit(self._notice(dropped))

    def _emit(self, line: str) -> None:
        try:
            self._write(line)
        except Exception as error:  # a full disk, a closed pipe: the next line may pass
            if self._on_error is not None:
                self._on_error(error)

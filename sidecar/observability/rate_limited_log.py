"""One log line per kind of event, at most so often: a client sending garbage in a loop
must not flood the log (or fill a disk) with a line, let alone a traceback, per call."""

from __future__ import annotations

import logging
import threading
import time


class RateLimitedLog:
    def __init__(self, logger: logging.Logger, every_seconds: float = 10.0) -> None:
        self._logger = logger
        self._every = every_seconds
        self._last: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}
        self._lock = threading.Lock()

    def log(
        self,
        level: int,
        key: str,
        message: str,
        *args: object,
        exc_info: BaseException | None = None,
    ) -> bool:
        """Log `message % args` unless a line with this key was logged in the last
        interval; then say how many were held back. Returns whether it logged."""
        now = time.monotonic()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < self._every:
                self._suppressed[key] = self._suppressed.get(key, 0) + 1
                return False
            if len(self._last) > 1024:  # keys are a fixed vocabulary; this is a safety net
                self._last.clear()
                self._suppressed.clear()
            self._last[key] = now
            held = self._suppressed.pop(key, 0)
        if held:
            message += f" ({held} similar in the last {self._every:g}s not logged)"
        self._logger.log(level, message, *args, exc_info=exc_info)
        return True

    def warning(self, key: str, message: str, *args: object) -> bool:
        return self.log(logging.WARNING, key, message, *args)

"""The server log: one line per record, with credentials masked whatever logged them.

Masking happens on the formatted line, so it covers arguments, exception messages and
tracebacks alike, from our loggers and from libraries.
"""

from __future__ import annotations

import logging
from typing import IO

from sidecar.secrets import SecretScanner

FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


class MaskingFormatter(logging.Formatter):
    """Masks what another formatter (text by default, or the JSON one) writes."""

    def __init__(
        self, secrets: SecretScanner, fmt: str = FORMAT, inner: logging.Formatter | None = None
    ) -> None:
        super().__init__(fmt)
        self._secrets = secrets
        self._inner = inner

    def format(self, record: logging.LogRecord) -> str:
        text = self._inner.format(record) if self._inner is not None else super().format(record)
        return self._secrets.mask(text)


def configure_server_log(level: str, stream: IO[str], secrets: SecretScanner) -> logging.Handler:
    """Send every record to `stream` through the masking formatter (replaces other handlers)."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(MaskingFormatter(secrets))
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(level.upper())
    return handler

"""A sidecar started in this process on a Unix socket, for benchmarks and the eval."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from sidecar.config import Settings
from sidecar.server import Sidecar


@asynccontextmanager
async def local_sidecar(**settings: Any) -> AsyncIterator[Sidecar]:
    """Quiet defaults (no metrics port, no decision log, in-memory state); override any."""
    with tempfile.TemporaryDirectory() as directory:
        values: dict[str, Any] = {
            "listen": (f"unix:{Path(directory) / 'sidecar.sock'}",),
            "metrics_listen": "off",
            "state": ":memory:",
            "decision_log": "off",
            "policy_watch_seconds": 0,
        }
        values.update(settings)
        sidecar = Sidecar(Settings(**values))
        await sidecar.start()
        try:
            yield sidecar
        finally:
            await sidecar.stop(grace=0)

"""The `sidecar` command (and `python -m sidecar`), before anything heavy is imported.

Importing the server takes a second or more, and until the server's own handler is in
place a SIGTERM would end the process with status -15, which kubelet and systemd read as
a crash. So `serve` handles SIGTERM first of all: during start-up it exits 0 at once; the
server replaces the handler with its drain when it starts serving.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType


def _stop_starting(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


def main() -> int:
    if sys.argv[1:2] == ["serve"]:
        signal.signal(signal.SIGTERM, _stop_starting)
    from sidecar.cli import main as cli_main

    return cli_main()

"""SIGTERM while the server is still starting (importing, opening its state, binding)
stops it with exit status 0, the same as a SIGTERM while serving: kubelet and systemd
read anything else as a crash. The signal is sent as soon as the process handles it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SIGTERM_BIT = 1 << (signal.SIGTERM - 1)


def _handles_sigterm(pid: int) -> bool:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & SIGTERM_BIT)
    return False


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-m", "sidecar"],
        [str(Path(sys.executable).parent / "sidecar")],  # the installed command (the image's)
    ],
    ids=["python -m sidecar", "sidecar"],
)
def test_sigterm_during_start_up_exits_0(tmp_path: Path, command: list[str]) -> None:
    process = subprocess.Popen(
        [
            *command, "serve", "--listen", f"unix:{tmp_path}/s.sock",
            "--metrics-listen", "off", "--state", str(tmp_path / "state.db"),
            "--decision-log", "off",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not _handles_sigterm(process.pid):
            assert process.poll() is None, process.communicate()[1]
            assert time.monotonic() < deadline, "SIGTERM is never handled"
            time.sleep(0.001)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    # It was still starting: it stopped without ever serving.
    assert "serving on" not in err
    assert not (tmp_path / "s.sock").exists()

"""The container image, built from the Dockerfile for real and run.

No image registry is reachable here, and no container daemon runs, so: buildah (Debian's
package) builds without a daemon, with vfs storage and chroot isolation, and the base
image is a Debian root file system made by debootstrap from the Debian mirror (`make
tools` makes it: .ci/debian-rootfs.sh). The Dockerfile's base is a build argument, so
the same file builds on python:3.11-slim-bookworm with Docker.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from sidecar import __version__
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import shell

ROOT = Path(__file__).resolve().parent.parent
ROOTFS = Path(os.environ.get("ROOTFS", ROOT / ".venv" / "tools" / "debian-bookworm-python.tar"))
IMAGE = f"localhost/agent-policy-sidecar:{__version__}"
BASE = "localhost/python-base:3.11"
# The base: Debian's Python in a virtualenv first on PATH, as python:3.11-slim has its
# own first on PATH. pip trusts this machine's CA bundle, which its route to PyPI needs.
BASE_CONTAINERFILE = """\
FROM scratch
ADD rootfs.tar /
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
RUN python3 -m venv /opt/python
ENV PATH=/opt/python/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \\
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt
"""


class Buildah:
    def __init__(self, work: Path) -> None:
        self.flags = [
            "--storage-driver",
            "vfs",
            "--root",
            str(work / "storage"),
            "--runroot",
            str(work / "run"),
        ]

    def command(self, *args: str) -> list[str]:
        return ["buildah", *self.flags, *args]

    def __call__(self, *args: str, timeout: float = 900) -> str:
        result = subprocess.run(
            self.command(*args), capture_output=True, text=True, timeout=timeout
        )
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        return result.stdout


@pytest.fixture(scope="module")
def buildah(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Buildah]:
    assert shutil.which("buildah"), "`make tools` installs buildah (Debian)"
    assert ROOTFS.is_file(), "`make tools` builds the Debian root file system"
    work = tmp_path_factory.mktemp("image")
    tool = Buildah(work)
    context = work / "base"
    context.mkdir()
    try:
        os.link(ROOTFS, context / "rootfs.tar")
    except OSError:
        shutil.copy(ROOTFS, context / "rootfs.tar")
    shutil.copy("/etc/ssl/certs/ca-certificates.crt", context / "ca-certificates.crt")
    (context / "Containerfile").write_text(BASE_CONTAINERFILE)
    try:
        tool("bud", "--isolation", "chroot", "-t", BASE, str(context))
        tool(
            "bud",
            "--isolation",
            "chroot",
            "--build-arg",
            f"PYTHON_IMAGE={BASE}",
            "-f",
            str(ROOT / "Dockerfile"),
            "-t",
            IMAGE,
            str(ROOT),
        )
        yield tool
    finally:
        # vfs copies every layer in full: do not leave gigabytes behind.
        subprocess.run(tool.command("rm", "--all"), capture_output=True)
        subprocess.run(tool.command("rmi", "--all", "--force"), capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


def test_the_image_runs_unprivileged_with_the_documented_entrypoint(buildah: Buildah) -> None:
    config = json.loads(buildah("inspect", "--type", "image", IMAGE))["OCIv1"]["config"]
    assert config["User"] == "10001:10001"
    assert config["Entrypoint"] == ["sidecar", "serve"]
    assert set(config["ExposedPorts"]) == {"50051/tcp", "50052/tcp", "9464/tcp"}
    env = dict(item.split("=", 1) for item in config["Env"])
    assert env["SIDECAR_HEALTH_LISTEN"] == "0.0.0.0:50052"
    assert env["SIDECAR_STATE"] == "/var/lib/sidecar/state.db"
    assert config["Labels"]["org.opencontainers.image.version"] == __version__


def inner_pid(marker: str) -> int | None:
    """The pid of the process (inside the container) whose command line holds `marker`."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ours = any(marker.encode() in part for part in cmdline) and b"serve" in cmdline
        if ours and not any(b"buildah" in part for part in cmdline):
            return int(entry.name)
    return None


def test_the_image_serves_verdicts_and_drains_on_sigterm(buildah: Buildah, tmp_path: Path) -> None:
    volume = tmp_path / "state"  # the image's one writable place
    volume.mkdir()
    os.chown(volume, 10001, 10001)
    container = buildah("from", IMAGE).strip()
    socket_path = volume / "s.sock"
    # The entrypoint, with the image's own environment; a Unix socket instead of a port.
    process = subprocess.Popen(
        buildah.command(
            "run",
            "--isolation",
            "chroot",
            "-v",
            f"{volume}:/var/lib/sidecar",
            container,
            "--",
            "sidecar",
            "serve",
            "--listen",
            "unix:/var/lib/sidecar/s.sock",
            "--metrics-listen",
            "off",
            "--health-listen",
            "off",
        ),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not socket_path.exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the sidecar in the image never listened"
            time.sleep(0.2)
        target = f"unix:{socket_path}"
        with grpc.insecure_channel(target) as channel:
            grpc.channel_ready_future(channel).result(timeout=30)
            for _ in range(100):
                status = health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(), timeout=5
                )
                if status.status == health_pb2.HealthCheckResponse.SERVING:
                    break
                time.sleep(0.2)
            response = pb_grpc.PolicyServiceStub(channel).Inspect(
                pb.InspectRequest(session_id="img", tool_calls=[shell("1", "rm -rf /")]),
                timeout=10,
            )
        assert response.verdicts[0].verdict == pb.VERDICT_DENY
        assert (volume / "state.db").stat().st_uid == 10001  # it ran as the image's user
        pid = inner_pid("unix:/var/lib/sidecar/s.sock")
        assert pid is not None
        os.kill(pid, signal.SIGTERM)  # what the kubelet sends
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert {"log", "decision"} <= {line["event"] for line in lines}  # JSON off a terminal

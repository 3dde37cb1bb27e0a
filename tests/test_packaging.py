"""The container recipe, tested without a container engine: the Dockerfile's promises,
and its install steps replayed in a clean virtualenv (so the recipe cannot rot)."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import venv
from pathlib import Path

import grpc
import pytest

from sidecar import __version__
from sidecar.config import load_settings
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import shell
from tests.test_server_process import wait_serving

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def final_stage() -> str:
    return DOCKERFILE.split("\nFROM ")[-1]


def dockerfile_env() -> dict[str, str]:
    block = re.search(r"^ENV (.+?)(?=^\S)", final_stage(), re.M | re.S)
    assert block is not None
    text = block.group(1).replace("\\\n", " ")
    return dict(item.split("=", 1) for item in shlex.split(text))


def test_the_final_stage_runs_unprivileged_with_an_exec_form_entrypoint() -> None:
    stage = final_stage()
    assert re.search(r"^USER 10001:10001$", stage, re.M)
    assert '\nENTRYPOINT ["sidecar", "serve"]' in stage
    assert "gcc" not in stage and "build-essential" not in stage  # no build tools
    assert "org.opencontainers.image.source" in stage
    assert f"ARG VERSION={__version__}" in stage  # the pinned install matches the package
    assert DOCKERFILE.count("\nFROM ") == 2  # multi-stage: build, then final


def test_the_image_environment_is_valid_configuration(tmp_path: Path) -> None:
    env = dockerfile_env()
    settings = load_settings({}, environ={k: v for k, v in env.items() if k.startswith("SIDECAR_")})
    assert settings.listen == ("0.0.0.0:50051",)
    assert settings.health_listen == "0.0.0.0:50052"  # kubelet probes: the health-only port
    assert settings.state == "/var/lib/sidecar/state.db"


@pytest.fixture(scope="module")
def clean_install(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pip wheel, then install into a fresh virtualenv: the Dockerfile's two steps."""
    work = tmp_path_factory.mktemp("image")
    wheels = work / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--quiet",
            "--wheel-dir",
            str(wheels),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    target = work / "venv"
    venv.create(target, with_pip=True)
    wheel = next(wheels.glob("agent_policy_sidecar-*.whl"))
    subprocess.run(
        [str(target / "bin" / "pip"), "install", "--quiet", f"{wheel}"],
        check=True,
        capture_output=True,
        text=True,
    )
    return target


def test_the_installed_package_serves_with_the_bundled_policy(
    clean_install: Path, tmp_path: Path
) -> None:
    state = tmp_path / "state"  # the only writable place, as in the image
    state.mkdir()
    env = {**os.environ, **dockerfile_env(), "SIDECAR_STATE": str(state / "state.db")}
    # Never the image's fixed ports here: tests must pass beside a running sidecar.
    env["SIDECAR_LISTEN"] = f"unix:{tmp_path}/s.sock"
    env["SIDECAR_METRICS_LISTEN"] = "off"
    env["SIDECAR_HEALTH_LISTEN"] = "off"
    env.pop("PYTHONPATH", None)
    process = subprocess.Popen(
        [str(clean_install / "bin" / "sidecar"), "serve"],
        cwd=state,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_serving(f"unix:{tmp_path}/s.sock")
        with grpc.insecure_channel(f"unix:{tmp_path}/s.sock") as channel:
            response = pb_grpc.PolicyServiceStub(channel).Inspect(
                pb.InspectRequest(session_id="img", tool_calls=[shell("1", "rm -rf /")]), timeout=5
            )
        assert response.verdicts[0].verdict == pb.VERDICT_DENY
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert (state / "state.db").exists()
    # It ran from the installed package, not from this checkout.
    check = subprocess.run(
        [str(clean_install / "bin" / "python"), "-c", "import sidecar; print(sidecar.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={k: v for k, v in env.items() if k != "PYTHONPATH"},
    )
    assert str(clean_install) in check.stdout

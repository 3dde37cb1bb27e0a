"""The `sidecar serve` process: signals, exit codes, configuration errors, TLS."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import shell

SERVING = health_pb2.HealthCheckResponse.SERVING


def run_sidecar(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "sidecar", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def wait_serving(
    target: str, credentials: grpc.ChannelCredentials | None = None, **options
) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        channel = (
            grpc.secure_channel(target, credentials, options=list(options.items()))
            if credentials
            else grpc.insecure_channel(target)
        )
        try:
            with channel:
                reply = health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(), timeout=1
                )
            if reply.status == SERVING:
                return
        except grpc.RpcError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"{target} never became SERVING")


def stop(process: subprocess.Popen[str]) -> tuple[int, str]:
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=20)
    return process.returncode, err


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signal_drains_and_exits_zero(tmp_path: Path, signum: int) -> None:
    sock = tmp_path / "s.sock"
    process = run_sidecar(
        "--listen",
        f"unix:{sock}",
        "--metrics-listen",
        "off",
        "--state",
        str(tmp_path / "st.db"),
        "--mode",
        "auto",
    )
    try:
        wait_serving(f"unix:{sock}")
        with grpc.insecure_channel(f"unix:{sock}") as channel:
            response = pb_grpc.PolicyServiceStub(channel).Inspect(
                pb.InspectRequest(session_id="p", tool_calls=[shell("1", "rm -rf /")]), timeout=5
            )
        assert response.verdicts[0].verdict == pb.VERDICT_DENY
        assert response.mode == pb.PERMISSION_MODE_AUTO  # --mode overrides the policy file
        process.send_signal(signum)
        _, err = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err
    assert "draining" in err
    # The decision log went to stderr with the decision.
    assert '"event":"decision"' in err


def test_defaults_keep_state_in_a_local_sqlite_file_and_log_the_bound_address(
    tmp_path: Path,
) -> None:
    # Port 0, not the default 50051: tests must pass while `make serve` runs beside them.
    # The default address itself (loopback) is asserted in tests/test_config.py.
    process = run_sidecar(
        "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", cwd=tmp_path
    )
    try:
        address = wait_for_log(process, re.compile(r"serving on (127\.0\.0\.1:\d+)"))
        wait_serving(address)
        code, err = stop(process)
    finally:
        if process.poll() is None:
            process.kill()
    assert code == 0, err
    assert (tmp_path / ".sidecar" / "state.db").is_file()


def wait_for_log(process: subprocess.Popen[str], pattern: re.Pattern[str]) -> str:
    """Read the process's stderr until a line matches; the first group is returned."""
    assert process.stderr is not None
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line and process.poll() is not None:
            break
        found = pattern.search(line)
        if found:
            return found.group(1)
    raise AssertionError(f"no log line matched {pattern.pattern}")


@pytest.mark.parametrize(
    ("args", "env", "named"),
    [
        (["--listen", "nonsense"], {}, "--listen"),
        (["--mode", "auto"], {"SIDECAR_GRACE_SECONDS": "-1"}, "SIDECAR_GRACE_SECONDS"),
        ([], {"SIDECAR_MODE": "yolo"}, "SIDECAR_MODE"),
        ([], {"SIDECAR_LOG_FORMAT": "yaml"}, "SIDECAR_LOG_FORMAT"),
        (["--tls-cert", "/nonexistent.pem"], {}, "tls_key"),
        (["--max-message-bytes", "1"], {}, "--max-message-bytes"),
    ],
)
def test_bad_configuration_names_the_setting_and_exits_non_zero(
    args: list[str], env: dict[str, str], named: str
) -> None:
    process = run_sidecar(*args, env=env)
    _, err = process.communicate(timeout=20)
    assert process.returncode == 2
    assert named in err
    assert "Traceback" not in err


def test_config_file_is_read_and_flags_win(tmp_path: Path) -> None:
    config = tmp_path / "sidecar.yaml"
    sock = tmp_path / "c.sock"
    config.write_text(
        f"listen: ['unix:{sock}']\nmetrics_listen: 'off'\nmode: approve\nstate: ':memory:'\n"
    )
    process = run_sidecar("--config", str(config), "--mode", "chat")
    try:
        wait_serving(f"unix:{sock}")
        with grpc.insecure_channel(f"unix:{sock}") as channel:
            response = pb_grpc.PolicyServiceStub(channel).Inspect(
                pb.InspectRequest(session_id="p", tool_calls=[shell("1", "ls")]), timeout=5
            )
        assert response.mode == pb.PERMISSION_MODE_CHAT
    finally:
        code, err = stop(process)
    assert code == 0, err


def test_bad_config_file_names_file_and_line(tmp_path: Path) -> None:
    config = tmp_path / "sidecar.yaml"
    config.write_text("listen: ['127.0.0.1:1']\nmode: [unclosed\n")
    process = run_sidecar("--config", str(config))
    _, err = process.communicate(timeout=20)
    assert process.returncode == 2
    assert f"{config}:" in err


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA, a server certificate for 127.0.0.1/localhost, and a client certificate."""
    directory = tmp_path_factory.mktemp("pki")

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)

    openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=test-ca",
    )
    (directory / "san.cnf").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    for name in ("server", "client"):
        openssl(
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            f"{name}.key",
            "-out",
            f"{name}.csr",
            "-subj",
            f"/CN={name}",
        )
        openssl(
            "x509",
            "-req",
            "-in",
            f"{name}.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            f"{name}.pem",
            "-days",
            "2",
            "-extfile",
            "san.cnf",
        )
    return directory


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_tls_and_mutual_tls(certificates: Path) -> None:
    port = free_port()
    target = f"localhost:{port}"
    process = run_sidecar(
        "--listen",
        f"127.0.0.1:{port}",
        "--metrics-listen",
        "off",
        "--state",
        ":memory:",
        "--tls-cert",
        str(certificates / "server.pem"),
        "--tls-key",
        str(certificates / "server.key"),
        "--tls-client-ca",
        str(certificates / "ca.pem"),
    )
    ca = (certificates / "ca.pem").read_bytes()
    with_client_cert = grpc.ssl_channel_credentials(
        root_certificates=ca,
        private_key=(certificates / "client.key").read_bytes(),
        certificate_chain=(certificates / "client.pem").read_bytes(),
    )
    try:
        wait_serving(target, with_client_cert)
        # Without a client certificate the handshake fails.
        with grpc.secure_channel(
            target, grpc.ssl_channel_credentials(root_certificates=ca)
        ) as channel:
            with pytest.raises(grpc.RpcError) as raised:
                health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(), timeout=3
                )
            assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
        # Plaintext is refused too.
        with grpc.insecure_channel(target) as channel, pytest.raises(grpc.RpcError):
            health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=3)
    finally:
        code, err = stop(process)
    assert code == 0, err


@pytest.mark.parametrize("which", ["--listen", "--metrics-listen"])
def test_an_address_in_use_is_a_clear_error(tmp_path: Path, which: str) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = f"127.0.0.1:{busy.getsockname()[1]}"
        args = [
            "--state",
            ":memory:",
            "--metrics-listen",
            "off",
            "--listen",
            f"unix:{tmp_path}/s.sock",
        ]
        args += [which, taken]
        process = run_sidecar(*args)
        _, err = process.communicate(timeout=30)
    assert process.returncode == 1
    assert taken in err
    assert "Traceback" not in err


@pytest.mark.parametrize("state", ["/proc/no/such/dir/state.db", "/etc/passwd"])
def test_an_unusable_state_file_is_a_clear_error(tmp_path: Path, state: str) -> None:
    process = run_sidecar(
        "--listen", f"unix:{tmp_path}/s.sock", "--metrics-listen", "off", "--state", state
    )
    _, err = process.communicate(timeout=30)
    assert process.returncode == 1
    assert f"cannot use the state file {state}" in err
    assert "Traceback" not in err

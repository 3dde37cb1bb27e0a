"""Generated protobuf code must match proto/: regenerate and compare byte for byte."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ("sidecar_pb2.py", "sidecar_pb2.pyi", "sidecar_pb2_grpc.py", "sidecar_pb2_grpc.pyi")


def test_generated_code_is_not_stale(tmp_path: Path) -> None:
    plugin = shutil.which("protoc-gen-mypy", path=str(Path(sys.executable).parent))
    assert plugin, "protoc-gen-mypy is installed with the dev extras"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{ROOT / 'proto'}",
            f"--plugin=protoc-gen-mypy={plugin}",
            f"--plugin=protoc-gen-mypy_grpc={Path(plugin).with_name('protoc-gen-mypy_grpc')}",
            f"--python_out={tmp_path}",
            f"--grpc_python_out={tmp_path}",
            f"--mypy_out={tmp_path}",
            f"--mypy_grpc_out={tmp_path}",
            str(ROOT / "proto/sidecar/v1/sidecar.proto"),
        ],
        check=True,
        capture_output=True,
    )
    for name in GENERATED:
        fresh = (tmp_path / "sidecar/v1" / name).read_bytes()
        committed = (ROOT / "sidecar/v1" / name).read_bytes()
        assert fresh == committed, f"sidecar/v1/{name} is stale: run `make generate`"


def test_policy_json_schema_is_not_stale() -> None:
    from sidecar.policy.schema import policy_json_schema

    committed = (ROOT / "policies/schema/policy.schema.json").read_text()
    assert committed == policy_json_schema(), "run `make generate`"

"""examples/node calls a live sidecar end to end (Inspect, Append, Project)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from sidecar.server import Sidecar

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "node"


async def test_the_node_client_gets_verdicts_and_a_projection(sidecar: Sidecar) -> None:
    node = shutil.which("node")
    assert node, "Node.js is needed for examples/node"
    assert (EXAMPLE / "node_modules" / "@grpc" / "grpc-js").is_dir(), "run `make tools`"
    for address in sidecar.addresses:  # TCP and the Unix socket
        process = await asyncio.create_subprocess_exec(
            node,
            str(EXAMPLE / "client.js"),
            address,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(process.communicate(), timeout=60)
        assert process.returncode == 0, err.decode()
        lines = [json.loads(line) for line in out.decode().splitlines()]
        verdicts = {line["id"]: line["verdict"] for line in lines if line["rpc"] == "Inspect"}
        assert verdicts == {"1": "VERDICT_DENY", "2": "VERDICT_ALLOW"}
        projection = next(line for line in lines if line["rpc"] == "Project")
        # Flags left unset by the JavaScript client still read as visible.
        assert projection["messages"] == ["sys", "u1", "a1", "t1"]
        assert projection["tokens"] > 0 and projection["source"] == "TOKEN_SOURCE_ESTIMATE"

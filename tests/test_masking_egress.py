"""A credential in a large outbound body is a DENY via egress.secret, whatever the size.

The probe: "AKIA… " repeated 12,000 times in an http_request body got REQUIRE_APPROVAL through
egress.timeout, because finding every match (and building an object for each) took longer
than the inspector's budget. Detection now stops at the first few matches.
"""

from __future__ import annotations

import json

import grpc

from sidecar.secrets import SecretScanner
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar

KEY = "AKIA" + "IOSFODNN7EXAMPLE"
GITHUB = "ghp" + "_" + "a1B2c3D4e5" * 3 + "F6g7H8"


def _http(body: str) -> pb.ToolCall:
    arguments = {"url": "https://api.example.com/upload", "method": "POST", "body": body}
    return pb.ToolCall(id="1", name="http_request", arguments_json=json.dumps(arguments))


async def _inspect(stub: pb_grpc.PolicyServiceStub, body: str) -> pb.ToolVerdict:
    reply = await stub.Inspect(pb.InspectRequest(session_id="egress", tool_calls=[_http(body)]))
    return reply.verdicts[0]


async def test_a_body_full_of_keys_is_denied_as_a_secret(start_sidecar: StartSidecar) -> None:
    sidecar = await start_sidecar()
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.PolicyServiceStub(channel)
        for body in (
            (KEY + " ") * 12_000,
            (GITHUB + " ") * 8_000,
            (KEY + " " + GITHUB + " ") * 5_000,
        ):
            verdict = await _inspect(stub, body)
            rules = [f.rule_id for f in verdict.findings]
            assert verdict.verdict == pb.VERDICT_DENY, rules
            assert "egress.secret" in rules
            assert "egress.timeout" not in rules


async def test_one_key_anywhere_in_a_large_body_is_denied(start_sidecar: StartSidecar) -> None:
    sidecar = await start_sidecar()
    filler = "lorem ipsum dolor sit amet " * 36_000  # ~0.97 MB: near the 1 MiB argument limit
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.PolicyServiceStub(channel)
        for where in (0, len(filler) // 2, len(filler)):
            body = filler[:where] + f" {KEY} " + filler[where:]
            verdict = await _inspect(stub, body)
            assert verdict.verdict == pb.VERDICT_DENY
            assert "egress.secret" in [f.rule_id for f in verdict.findings]


def test_kinds_in_names_the_kinds_of_the_first_matches() -> None:
    scanner = SecretScanner()
    assert scanner.kinds_in((KEY + " " + GITHUB + " ") * 5_000) == {
        "aws_access_key",
        "github_token",
    }
    assert scanner.kinds_in("x " * 100_000 + KEY) == {"aws_access_key"}
    assert scanner.kinds_in("nothing to see " * 10_000) == set()
    assert scanner.kinds_in("short and clean") == set()

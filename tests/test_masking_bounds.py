"""Masking does bounded work per text: past a limit the text is hidden, and the line says so.

A 1 MB argument dense with `password=…` used to cost the event loop half a second per call
in the decision log; what is scanned is now capped, and nothing past the cap is shown.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from sidecar.inspection.model import CallVerdict, ToolCall
from sidecar.inspection.verdict import Verdict
from sidecar.observability.decision_log import MAX_ARGUMENTS_CHARS, DecisionLog
from sidecar.secrets import MASK, MASK_LIMIT, SecretScanner
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar

SCANNER = SecretScanner()
KEY = "AKIA" + "QWERTYUIOPASDFGH"


def test_a_long_text_is_cut_at_the_limit_and_says_how_much_is_hidden() -> None:
    text = "password=hunter2 " * 60_000
    masked = SCANNER.mask(text)
    assert "hunter2" not in masked
    assert len(masked) < MASK_LIMIT + 100
    assert masked.endswith("not shown]")
    shown = masked.rsplit("…[", 1)[1]
    hidden = int(shown.split(" ", 1)[0])
    # A secret crossing the cut is masked whole, so a little more than the limit is used.
    assert len(text) - MASK_LIMIT - len("password=hunter2 ") <= hidden <= len(text) - MASK_LIMIT


def test_a_secret_past_the_limit_is_not_shown() -> None:
    text = "x " * MASK_LIMIT + f"token ghp_{'a1B2' * 9} and {KEY}"
    masked = SCANNER.mask(text)
    assert KEY not in masked
    assert KEY[4:12] not in masked
    assert "a1B2a1B2" not in masked


def test_a_secret_crossing_the_limit_is_masked_whole() -> None:
    for offset in range(1, len(KEY)):
        text = "y" * (MASK_LIMIT - offset - 1) + " " + KEY + " tail" * 10
        masked = SCANNER.mask(text)
        for start in range(4, len(KEY) - 5):
            assert KEY[start : start + 6] not in masked, (offset, masked[-80:])


def test_a_quoted_password_crossing_the_limit_is_masked() -> None:
    secret = "Hun" + "ter9 with spaces"
    text = "z" * (MASK_LIMIT - 20) + f' PGPASSWORD="{secret}" psql' + " more" * 20
    masked = SCANNER.mask(text)
    assert "Hunter9" not in masked
    assert "with spaces" not in masked


def test_a_token_too_long_to_recognise_at_the_cut_is_hidden() -> None:
    # 4 KiB of one word straddling the cut: whatever it is, its visible head is dropped.
    word = "Qz9" * 1400
    text = "w " * (MASK_LIMIT // 2 - 10) + word + " end"
    masked = SCANNER.mask(text)
    assert "Qz9Qz9" not in masked
    assert MASK in masked


def test_short_texts_are_unchanged_by_the_limit() -> None:
    text = "ls -la " * 100
    assert SCANNER.mask(text) == text


def test_any_in_says_a_text_past_the_limit_would_change() -> None:
    assert SCANNER.any_in(["a " * MASK_LIMIT])


def test_the_decision_log_shows_bounded_arguments_and_hides_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    log = DecisionLog(str(path), SCANNER)
    body = "password=hunter2 " * 60_000
    call = ToolCall("1", "http_request", {"url": "https://x.example", "body": body})
    verdict = CallVerdict(call, Verdict.ALLOW, "", "", [])
    log.write("d1", "s", "rev", "auto", [verdict], {}, 0.001)
    log.close()
    record = json.loads(path.read_text())
    arguments = record["calls"][0]["arguments"]
    assert "hunter2" not in arguments
    assert len(arguments) < MAX_ARGUMENTS_CHARS + 100
    assert "not shown]" in arguments


async def test_big_password_bodies_leave_bounded_masked_records(
    start_sidecar: StartSidecar, tmp_path: Path
) -> None:
    """The probe's body, eight at once, over gRPC: each record shows at most the limit."""
    log_path = tmp_path / "big.jsonl"
    sidecar = await start_sidecar(decision_log=str(log_path))
    body = "password=hunter2 " * 60_000
    arguments = json.dumps({"url": "https://x.example", "method": "POST", "body": body})
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.PolicyServiceStub(channel)
        calls = [
            stub.Inspect(
                pb.InspectRequest(
                    session_id=f"big{i}",
                    tool_calls=[pb.ToolCall(id="1", name="http_request", arguments_json=arguments)],
                )
            )
            for i in range(8)
        ]
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        replies = await asyncio.gather(*calls)
        assert (await health).status == health_pb2.HealthCheckResponse.SERVING
    assert all(len(reply.verdicts) == 1 for reply in replies)
    records = [json.loads(line) for line in log_path.read_text().splitlines()]
    assert len(records) == 8
    for record in records:
        shown = record["calls"][0]["arguments"]
        assert "hunter2" not in shown
        assert len(shown) < MAX_ARGUMENTS_CHARS + 100
        assert "masking limit not shown" in shown

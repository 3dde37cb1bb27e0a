"""The adversary inspector against a real local HTTP server playing the model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from sidecar.inspection.adversary import parse_decision
from sidecar.model_client import ModelError
from sidecar.policy.loader import PolicyError
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar, shell, tool, write_policy
from tests.model_server import ModelServer, serve_model


def reviewer(body: dict[str, Any]) -> tuple[int, str, float]:
    """Blocks anything that mentions /etc or curl; allows the rest."""
    call = body["messages"][-1]["content"]
    if "/etc" in call or "curl" in call:
        return 200, json.dumps({"decision": "BLOCK", "reason": "not part of the task"}), 0
    return 200, '{"decision": "ALLOW", "reason": "fits the task"}', 0


@pytest.fixture
def model() -> Iterator[ModelServer]:
    yield from serve_model(reviewer)


def enable(directory: Path, url: str, **extra: Any) -> None:
    settings = {"timeout_ms": 2000, **extra.pop("inspector", {})}
    adversary = {"base_url": url, "model": "reviewer-1", **extra}
    write_policy(
        directory,
        "adversary.yaml",
        json.dumps(
            {"inspectors": {"adversary": {"enabled": True, **settings}}, "adversary": adversary}
        ),
    )


async def inspect(sidecar_address: str, *calls: pb.ToolCall, **fields: Any) -> pb.InspectResponse:
    async with grpc.aio.insecure_channel(sidecar_address) as channel:
        return await pb_grpc.PolicyServiceStub(channel).Inspect(
            pb.InspectRequest(session_id="adv", tool_calls=list(calls), **fields)
        )


async def test_the_model_allows_and_blocks_with_its_reason(
    start_sidecar: StartSidecar, operator_policies: Path, model: ModelServer, monkeypatch
) -> None:
    monkeypatch.setenv("REVIEWER_KEY", "test-key-123")
    enable(operator_policies, model.url, api_key_env="REVIEWER_KEY")
    sidecar = await start_sidecar(mode="auto")
    response = await inspect(
        sidecar.addresses[0],
        shell("ok", "make test"),
        shell("bad", "cat /etc/hosts"),
        tool("other", "list_files"),  # not a reviewed tool: never sent to the model
        task="fix the failing unit test",
        recent_user_messages=["please make the tests pass"],
    )
    verdicts = {v.tool_call_id: v for v in response.verdicts}
    assert verdicts["ok"].verdict == pb.VERDICT_ALLOW
    assert verdicts["bad"].verdict == pb.VERDICT_DENY
    assert verdicts["bad"].reason == "not part of the task"
    assert verdicts["other"].verdict == pb.VERDICT_ALLOW
    assert len(model.requests) == 2
    sent = model.requests[0]
    assert sent["model"] == "reviewer-1"
    user_text = sent["messages"][-1]["content"]
    assert "fix the failing unit test" in user_text and "please make the tests pass" in user_text
    assert all(h.get("Authorization") == "Bearer test-key-123" for h in model.headers)


async def test_model_errors_follow_on_error_and_are_counted(
    start_sidecar: StartSidecar, operator_policies: Path
) -> None:
    for server in serve_model(lambda body: (500, '{"error": "overloaded"}', 0)):
        enable(operator_policies, server.url, retries=1)
        sidecar = await start_sidecar(mode="auto")
        response = await inspect(sidecar.addresses[0], shell("1", "make"))
        assert len(server.requests) == 2  # one retry
    # Not fail-open: the default on_error for the reviewer is require_approval.
    assert response.verdicts[0].verdict == pb.VERDICT_REQUIRE_APPROVAL
    assert any(f.rule_id == "adversary.exception" for f in response.verdicts[0].findings)
    failures = sidecar.metrics.registry.get_sample_value(
        "sidecar_inspector_failures_total", {"inspector": "adversary", "reason": "exception"}
    )
    assert failures == 1.0


async def test_a_slow_model_times_out(start_sidecar: StartSidecar, operator_policies: Path) -> None:
    for server in serve_model(lambda body: (200, '{"decision": "ALLOW"}', 2.0)):
        enable(
            operator_policies,
            server.url,
            retries=0,
            inspector={"timeout_ms": 200, "on_error": "deny"},
        )
        sidecar = await start_sidecar(mode="auto")
        response = await inspect(sidecar.addresses[0], shell("1", "make"))
    assert response.verdicts[0].verdict == pb.VERDICT_DENY
    timeouts = sidecar.metrics.registry.get_sample_value(
        "sidecar_inspector_failures_total", {"inspector": "adversary", "reason": "timeout"}
    )
    assert timeouts == 1.0


async def test_the_key_can_come_from_a_file(
    start_sidecar: StartSidecar, operator_policies: Path, model: ModelServer, tmp_path: Path
) -> None:
    key_file = tmp_path / "key"
    key_file.write_text("from-file\n")
    enable(operator_policies, model.url, api_key_file=str(key_file))
    sidecar = await start_sidecar(mode="auto")
    await inspect(sidecar.addresses[0], shell("1", "ls"))
    assert model.headers[0]["Authorization"] == "Bearer from-file"


async def test_enabled_without_an_endpoint_is_a_policy_error(
    start_sidecar: StartSidecar, operator_policies: Path
) -> None:
    write_policy(operator_policies, "a.yaml", "inspectors:\n  adversary: {enabled: true}\n")
    with pytest.raises(PolicyError, match=r"adversary\.base_url or adversary\.model is not set"):
        await start_sidecar()


@pytest.mark.parametrize(
    ("reply", "decision"),
    [
        ('{"decision": "ALLOW", "reason": "ok"}', "ALLOW"),
        ('```json\n{"decision": "block", "reason": "no"}\n```', "BLOCK"),
        ("BLOCK: this deletes data", "BLOCK"),
        ("I would ALLOW this, not BLOCK it", "BLOCK"),  # ambiguous: cautious
        ("allow", "ALLOW"),
    ],
)
def test_parse_decision(reply: str, decision: str) -> None:
    assert parse_decision(reply)[0] == decision


def test_an_answer_without_a_decision_is_an_error() -> None:
    with pytest.raises(ModelError):
        parse_decision("I am not sure")

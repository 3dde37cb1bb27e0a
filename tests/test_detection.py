"""Detection quality through a live server: every evaluation case, and the targets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import pytest

from bench.eval import (
    DATA,
    PASSES,
    Inspect,
    evaluate,
    figures_for,
    generated_cases,
    load_cases,
    load_thresholds,
    slips,
)
from bench.evalgen.generate import FILES, OUT, generate
from sidecar.engine import PolicyEngine
from sidecar.inspection.model import ToolCall
from sidecar.inspection.verdict import Mode, Verdict
from sidecar.server import Sidecar
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar, engine_for_mode

SINGLE = load_cases(sorted(DATA.glob("toolcalls-*.jsonl")))
SEQUENCES = load_cases(sorted(DATA.glob("sequences-*.jsonl")))


@pytest.fixture
async def auto_sidecar(start_sidecar: StartSidecar) -> Sidecar:
    return await start_sidecar(mode="auto", decision_log="off")


_ENGINE = engine_for_mode(Mode.AUTO)
_VERDICT_TO_PB = {
    Verdict.ALLOW: pb.VERDICT_ALLOW,
    Verdict.REQUIRE_APPROVAL: pb.VERDICT_REQUIRE_APPROVAL,
    Verdict.DENY: pb.VERDICT_DENY,
}


@pytest.mark.parametrize("case", SINGLE, ids=[f"{c['id']}-{c['class']}" for c in SINGLE])
async def test_case(case: dict[str, Any]) -> None:
    """Each case through the bundled policy in-process; the gRPC path is run below."""
    call = ToolCall("1", case["tool"], case["args"])
    decision = await _ENGINE.inspect(f"case-{case['id']}", [call])
    verdict = decision.verdicts[0]
    assert _VERDICT_TO_PB[verdict.verdict] in PASSES[case["expect"]], (
        verdict.reason,
        verdict.findings,
    )


@pytest.mark.parametrize("case", SEQUENCES, ids=[c["id"] for c in SEQUENCES])
async def test_sequence(auto_sidecar: Sidecar, case: dict[str, Any]) -> None:
    async with grpc.aio.insecure_channel(auto_sidecar.addresses[0]) as channel:
        report = await evaluate(pb_grpc.PolicyServiceStub(channel), [case])
    assert report.sequences == [True], report.failures


async def test_the_evaluation_targets_hold(auto_sidecar: Sidecar) -> None:
    async with grpc.aio.insecure_channel(auto_sidecar.addresses[0]) as channel:
        report = await evaluate(pb_grpc.PolicyServiceStub(channel), SINGLE + SEQUENCES)
    assert report.meets_targets, report.render()


def test_the_evaluation_data_is_in_the_project() -> None:
    # A fresh clone has no ../shared: the cases must live here.
    assert Path(DATA).is_dir()
    assert len(SINGLE) > 200 and len(SEQUENCES) >= 8


def _in_process(engine: PolicyEngine) -> Inspect:
    async def inspect(session: str, steps: list[dict[str, Any]]) -> int:
        verdict = Verdict.ALLOW
        for index, step in enumerate(steps):
            decision = await engine.inspect(
                session, [ToolCall(str(index), step["tool"], step["args"])]
            )
            verdict = decision.verdicts[0].verdict
        return _VERDICT_TO_PB[verdict]

    return inspect


def test_the_generated_cases_are_what_the_generator_makes() -> None:
    """The committed set is reproducible: same seeds, transforms, checks and random seed."""
    text, _ = generate()
    for name in FILES:
        assert (OUT / name).read_text() == text[name], f"{name} is stale: python -m bench.evalgen"


async def test_the_generated_figures_do_not_slip() -> None:
    """Every figure of the generated set (overall, per class, transform, tool shape, corpus,
    and smart_approve's read-only asks) stays at or above the floors in thresholds.json."""
    thresholds = load_thresholds()
    figures = await figures_for(
        _in_process(_ENGINE),
        _in_process(engine_for_mode(Mode.SMART_APPROVE)),
        generated_cases(thresholds["sample_every"]),
    )
    slipped = slips(figures.summary(), thresholds)
    assert not slipped, "\n".join(slipped[:50])

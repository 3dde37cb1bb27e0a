"""The runner: order, strictest merge, and isolation of inspectors that fail or hang."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

import grpc
import pytest

from sidecar.engine import ActivePolicy
from sidecar.inspection.chain import ChainLink, InspectorChain, merge
from sidecar.inspection.inspector import LocalInspector
from sidecar.inspection.model import Finding, InspectionContext, ToolCall
from sidecar.inspection.verdict import Mode, Verdict
from sidecar.observability.metrics import Metrics
from sidecar.server import Sidecar
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar, shell


class Fixed:
    """Returns the same verdict for every call and records that it ran."""

    def __init__(self, name: str, verdict: Verdict, ran: list[str]) -> None:
        self.name = name
        self._verdict = verdict
        self._ran = ran

    async def inspect(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        self._ran.append(self.name)
        return [
            [Finding(self.name, self._verdict, f"{self.name}.rule", f"{self.name} says so")]
            for _ in calls
        ]


class Raises:
    name = "raises"

    async def inspect(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        raise RuntimeError("boom")


class Hangs:
    name = "hangs"

    async def inspect(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        await asyncio.sleep(3600)
        return []


class WrongLength:
    name = "short"

    async def inspect(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        return []


CALLS = [ToolCall("1", "t", {}), ToolCall("2", "t", {"a": 1})]
CONTEXT = InspectionContext("s", "dec-42", Mode.AUTO)


async def test_inspectors_run_in_the_configured_order() -> None:
    ran: list[str] = []
    chain = InspectorChain(
        [ChainLink(Fixed(n, Verdict.ALLOW, ran), 1.0) for n in ("c", "a", "b")], Metrics()
    )
    await chain.run(CALLS, CONTEXT)
    assert ran == ["c", "a", "b"]


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ((Verdict.ALLOW, Verdict.ALLOW), Verdict.ALLOW),
        ((Verdict.ALLOW, Verdict.REQUIRE_APPROVAL), Verdict.REQUIRE_APPROVAL),
        ((Verdict.REQUIRE_APPROVAL, Verdict.ALLOW), Verdict.REQUIRE_APPROVAL),
        ((Verdict.DENY, Verdict.ALLOW), Verdict.DENY),
        ((Verdict.REQUIRE_APPROVAL, Verdict.DENY), Verdict.DENY),
        ((Verdict.ALLOW, Verdict.DENY, Verdict.REQUIRE_APPROVAL), Verdict.DENY),
    ],
)
async def test_strictest_verdict_wins_whatever_the_order(
    verdicts: tuple[Verdict, ...], expected: Verdict
) -> None:
    ran: list[str] = []
    links = [ChainLink(Fixed(f"i{n}", v, ran), 1.0) for n, v in enumerate(verdicts)]
    result = await InspectorChain(links, Metrics()).run(CALLS, CONTEXT)
    assert [v.verdict for v in result.verdicts] == [expected, expected]
    # Every inspector's finding is kept, not only the deciding one.
    assert len(result.verdicts[0].findings) == len(verdicts)
    deciding = next(f for f in result.verdicts[0].findings if f.verdict is expected)
    assert result.verdicts[0].reason == deciding.message


def test_merge_without_findings_allows() -> None:
    verdict = merge(CALLS[0], [])
    assert verdict.verdict is Verdict.ALLOW


@pytest.mark.parametrize(
    ("on_error", "expected"),
    [
        ("skip", Verdict.ALLOW),
        ("require_approval", Verdict.REQUIRE_APPROVAL),
        ("deny", Verdict.DENY),
    ],
)
@pytest.mark.parametrize("broken", [Raises, Hangs, WrongLength])
async def test_a_failing_inspector_never_breaks_the_chain(
    broken: Any, on_error: str, expected: Verdict, caplog: pytest.LogCaptureFixture
) -> None:
    ran: list[str] = []
    metrics = Metrics()
    links = [
        ChainLink(Fixed("before", Verdict.ALLOW, ran), 1.0),
        ChainLink(broken(), 0.05, on_error),  # type: ignore[arg-type]
        ChainLink(Fixed("after", Verdict.ALLOW, ran), 1.0),
    ]
    with caplog.at_level(logging.WARNING):
        result = await InspectorChain(links, metrics).run(CALLS, CONTEXT)
    assert ran == ["before", "after"]
    assert [v.verdict for v in result.verdicts] == [expected, expected]
    reason = "timeout" if broken is Hangs else "exception"
    assert (
        metrics.registry.get_sample_value(
            "sidecar_inspector_failures_total", {"inspector": broken.name, "reason": reason}
        )
        == 1.0
    )
    assert result.failures == {broken.name: reason}
    failure_lines = [r.getMessage() for r in caplog.records if broken.name in r.getMessage()]
    assert failure_lines and all("dec-42" in line for line in failure_lines)


async def test_chat_mode_runs_no_inspector() -> None:
    ran: list[str] = []
    chain = InspectorChain([ChainLink(Fixed("x", Verdict.ALLOW, ran), 1.0)], Metrics())
    result = await chain.run(CALLS, CONTEXT._replace(mode=Mode.CHAT))
    assert ran == []
    assert all(v.verdict is Verdict.DENY and "skipped" in v.reason for v in result.verdicts)


async def _with_extra_link(sidecar: Sidecar, link: ChainLink) -> None:
    """Put a faulty inspector into the live server's chain, in front of the real ones."""
    assert sidecar.engine is not None
    active = sidecar.engine.active
    chain = active.chain.with_links([link, *active.chain.links])
    sidecar.engine.replace(ActivePolicy(active.loaded, chain, active.mode))


@pytest.mark.parametrize("broken", [Raises, Hangs])
async def test_fault_isolation_over_grpc(start_sidecar: StartSidecar, broken: Any) -> None:
    sidecar = await start_sidecar(mode="auto")
    await _with_extra_link(sidecar, ChainLink(broken(), 0.05, "require_approval"))
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        response = await pb_grpc.PolicyServiceStub(channel).Inspect(
            pb.InspectRequest(session_id="f", tool_calls=[shell("1", "ls"), shell("2", "rm -rf /")])
        )
    # The real inspectors still ran after the broken one.
    assert [v.verdict for v in response.verdicts] == [pb.VERDICT_REQUIRE_APPROVAL, pb.VERDICT_DENY]
    assert any(f.inspector == "security" for f in response.verdicts[1].findings)
    assert any(f.rule_id.startswith(broken.name) for f in response.verdicts[0].findings)


class RaisesAtOnce(LocalInspector):
    """A local inspector (inspect_now) that fails: isolated like an async one."""

    name = "raises_now"

    def inspect_now(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        raise RuntimeError("boom")


async def test_a_local_inspector_that_raises_is_isolated_and_counted(caplog) -> None:
    metrics = Metrics()
    ran: list[str] = []
    chain = InspectorChain(
        [
            ChainLink(RaisesAtOnce(), 1.0, on_error="require_approval"),
            ChainLink(Fixed("after", Verdict.ALLOW, ran), 1.0),
        ],
        metrics,
    )
    with caplog.at_level(logging.ERROR, logger="sidecar.chain"):
        result = await chain.run(CALLS, CONTEXT)
    assert ran == ["after"]  # the chain went on
    assert [v.verdict for v in result.verdicts] == [Verdict.REQUIRE_APPROVAL] * 2
    assert result.failures == {"raises_now": "exception"}
    assert "raises_now failed (decision dec-42)" in caplog.text
    failures = metrics.registry.get_sample_value(
        "sidecar_inspector_failures_total", {"inspector": "raises_now", "reason": "exception"}
    )
    assert failures == 1.0


class ShortAtOnce(RaisesAtOnce):
    name = "short_now"

    def inspect_now(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        return [[]]  # one result for two calls


async def test_a_local_inspector_with_the_wrong_shape_is_a_failure() -> None:
    chain = InspectorChain([ChainLink(ShortAtOnce(), 1.0, on_error="deny")], Metrics())
    result = await chain.run(CALLS, CONTEXT)
    assert result.failures == {"short_now": "exception"}
    assert [v.verdict for v in result.verdicts] == [Verdict.DENY] * 2

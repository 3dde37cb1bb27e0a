"""The chain runner in detail: merging, metrics, failure findings, waiting inspectors."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from sidecar.inspection.chain import ChainLink, InspectorChain, merge
from sidecar.inspection.inspector import LocalInspector
from sidecar.inspection.model import Finding, InspectionContext, ToolCall
from sidecar.inspection.verdict import Mode, Risk, Verdict
from sidecar.observability.metrics import Metrics

CALLS = [ToolCall("1", "t", {}), ToolCall("2", "t", {"a": 1})]
CONTEXT = InspectionContext("s", "dec-7", Mode.AUTO)


def finding(verdict: Verdict, name: str = "x", prompt: str = "") -> Finding:
    return Finding(name, verdict, f"{name}.rule", f"{name} {verdict.label}", approval_prompt=prompt)


def test_merge_of_one_finding_takes_its_verdict_reason_and_prompt() -> None:
    ask = finding(Verdict.REQUIRE_APPROVAL, "a", prompt="May I?")
    merged = merge(CALLS[0], [ask])
    assert (merged.verdict, merged.reason, merged.approval_prompt) == (
        Verdict.REQUIRE_APPROVAL,
        "a require_approval",
        "May I?",
    )
    assert merged.findings == [ask]
    denied = merge(CALLS[0], [finding(Verdict.DENY, "d", prompt="ignored")])
    assert denied.approval_prompt == "" and denied.reason == "d deny"
    allowed = merge(CALLS[0], [finding(Verdict.ALLOW, "ok")])
    assert allowed.verdict is Verdict.ALLOW and allowed.reason == "ok allow"


def test_merge_without_findings_allows_with_a_reason() -> None:
    merged = merge(CALLS[1], [])
    assert merged.verdict is Verdict.ALLOW
    assert merged.reason == "no inspector objected"
    assert merged.approval_prompt == "" and merged.findings == []
    assert merged.call is CALLS[1]


def test_merge_takes_the_first_deciding_reason_and_joins_distinct_prompts() -> None:
    findings = [
        finding(Verdict.ALLOW, "a"),
        finding(Verdict.REQUIRE_APPROVAL, "b", prompt="Prompt B"),
        finding(Verdict.REQUIRE_APPROVAL, "c"),  # no prompt: its message is shown
        finding(Verdict.REQUIRE_APPROVAL, "d", prompt="Prompt B"),  # said once
    ]
    merged = merge(CALLS[0], findings)
    assert merged.verdict is Verdict.REQUIRE_APPROVAL
    assert merged.reason == "b require_approval"
    assert merged.approval_prompt == "Prompt B\nc require_approval"
    strict = merge(CALLS[0], [*findings, finding(Verdict.DENY, "e"), finding(Verdict.DENY, "f")])
    assert strict.verdict is Verdict.DENY and strict.reason == "e deny"
    assert strict.approval_prompt == ""
    assert len(strict.findings) == 6


class Counting(LocalInspector):
    def __init__(self, name: str, per_call: list[list[Finding]]) -> None:
        self.name = name
        self._per_call = per_call

    def inspect_now(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        return self._per_call


async def test_metrics_count_verdicts_and_findings_per_inspector() -> None:
    metrics = Metrics()
    two = [finding(Verdict.ALLOW, "m"), finding(Verdict.DENY, "m")]
    chain = InspectorChain(
        [
            ChainLink(Counting("quiet", [[], []]), 1.0),
            ChainLink(Counting("one", [[finding(Verdict.REQUIRE_APPROVAL, "one")], []]), 1.0),
            ChainLink(Counting("many", [two, []]), 1.0),
        ],
        metrics,
    )
    for _ in range(2):
        result = await chain.run(CALLS, CONTEXT)
    assert [v.verdict for v in result.verdicts] == [Verdict.DENY, Verdict.ALLOW]

    def sample(name: str, **labels: str) -> float | None:
        return metrics.registry.get_sample_value(name, labels)

    verdicts = "sidecar_inspector_verdicts_total"
    assert sample(verdicts, inspector="quiet", verdict="allow") == 4
    assert sample(verdicts, inspector="one", verdict="require_approval") == 2
    assert sample(verdicts, inspector="one", verdict="allow") == 2
    assert sample(verdicts, inspector="many", verdict="deny") == 2  # the strictest of two
    assert sample(verdicts, inspector="many", verdict="allow") == 2
    findings = "sidecar_findings_total"
    assert sample(findings, inspector="one", rule_id="one.rule") == 2
    assert sample(findings, inspector="many", rule_id="m.rule") == 4
    assert sample(findings, inspector="quiet", rule_id="quiet.rule") is None
    for name in ("quiet", "one", "many"):
        assert sample("sidecar_inspector_duration_seconds_count", inspector=name) == 2
        assert (sample("sidecar_inspector_duration_seconds_sum", inspector=name) or 0) >= 0


class Waits:
    """An inspector that really waits (like a model call) before answering."""

    name = "waits"

    def __init__(self, delay: float, verdict: Verdict = Verdict.REQUIRE_APPROVAL) -> None:
        self.delay = delay
        self.verdict = verdict
        self.closed = False
        self.cancelled = False

    async def inspect(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        try:
            await asyncio.sleep(self.delay)
            await asyncio.sleep(0)  # suspends more than once
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return [[finding(self.verdict, "waits")] for _ in calls]

    async def aclose(self) -> None:
        self.closed = True


class FailsAfterWaiting:
    name = "late_failure"

    async def inspect(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        await asyncio.sleep(0)
        raise RuntimeError("late")


class ShortAfterWaiting:
    name = "late_short"

    async def inspect(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        await asyncio.sleep(0)
        return [[]]


async def test_an_inspector_that_waits_is_awaited_within_its_timeout() -> None:
    waits = Waits(0.01)
    chain = InspectorChain([ChainLink(waits, 1.0, "deny")], Metrics())
    result = await chain.run(CALLS, CONTEXT)
    assert result.failures == {}
    assert [v.verdict for v in result.verdicts] == [Verdict.REQUIRE_APPROVAL] * 2
    await chain.aclose()
    assert waits.closed


async def test_a_waiting_inspector_past_its_timeout_is_cancelled() -> None:
    waits = Waits(5.0, Verdict.ALLOW)
    chain = InspectorChain([ChainLink(waits, 0.02, "deny")], Metrics())
    result = await chain.run(CALLS, CONTEXT)
    assert result.failures == {"waits": "timeout"}
    assert waits.cancelled
    assert [v.verdict for v in result.verdicts] == [Verdict.DENY] * 2
    assert result.verdicts[0].findings[0].rule_id == "waits.timeout"


async def test_failures_after_waiting_are_isolated() -> None:
    metrics = Metrics()
    chain = InspectorChain(
        [
            ChainLink(FailsAfterWaiting(), 1.0, "require_approval"),
            ChainLink(ShortAfterWaiting(), 1.0, "skip"),
        ],
        metrics,
    )
    result = await chain.run(CALLS, CONTEXT)
    assert result.failures == {"late_failure": "exception", "late_short": "exception"}
    assert [v.verdict for v in result.verdicts] == [Verdict.REQUIRE_APPROVAL] * 2


async def test_the_failure_finding_says_what_failed_and_how_to_proceed() -> None:
    chain = InspectorChain([ChainLink(FailsAfterWaiting(), 1.0, "require_approval")], Metrics())
    result = await chain.run(CALLS[:1], CONTEXT)
    (only,) = result.verdicts[0].findings
    assert only == Finding(
        inspector="late_failure",
        verdict=Verdict.REQUIRE_APPROVAL,
        rule_id="late_failure.exception",
        message="inspector late_failure failed (exception); its on_error policy is "
        "require_approval",
        risk=Risk.MEDIUM,
        confidence=0.0,
        approval_prompt="The late_failure check could not run (exception). Allow anyway?",
    )
    assert result.verdicts[0].approval_prompt == only.approval_prompt


async def test_skipped_calls_in_chat_mode_say_so() -> None:
    chain = InspectorChain([], Metrics())
    result = await chain.run(CALLS[:1], CONTEXT._replace(mode=Mode.CHAT))
    (verdict,) = result.verdicts
    assert verdict.verdict is Verdict.DENY
    assert verdict.reason == "t was skipped: chat mode runs no tools"
    assert verdict.findings == [
        Finding("permission", Verdict.DENY, "permission.mode_chat", verdict.reason)
    ]
    assert result.failures == {}


async def test_aclose_skips_inspectors_without_it() -> None:
    waits = Waits(0)
    chain = InspectorChain(
        [ChainLink(Counting("plain", [[], []]), 1.0), ChainLink(waits, 1.0)], Metrics()
    )
    await chain.aclose()
    assert waits.closed


class Tuple(LocalInspector):
    name = "tuple"

    def inspect_now(self, calls: Sequence[ToolCall], context: InspectionContext) -> Any:
        return tuple([] for _ in calls)  # the right length, the wrong type


async def test_a_local_inspector_must_return_a_list() -> None:
    chain = InspectorChain([ChainLink(Tuple(), 1.0, "deny")], Metrics())
    result = await chain.run(CALLS, CONTEXT)
    assert result.failures == {"tuple": "exception"}


async def test_inspector_durations_are_plausible() -> None:
    metrics = Metrics()
    chain = InspectorChain([ChainLink(Waits(0.01), 1.0)], metrics)
    await chain.run(CALLS, CONTEXT)
    total = metrics.registry.get_sample_value(
        "sidecar_inspector_duration_seconds_sum", {"inspector": "waits"}
    )
    assert total is not None and 0.005 <= total < 60  # an interval, not a clock reading


class AnswersDespiteTimeout:
    """Catches its cancellation, waits once more, and still answers."""

    name = "stubborn"

    async def inspect(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            await asyncio.sleep(0)
        return [[finding(Verdict.DENY, "stubborn")] for _ in calls]


async def test_an_inspector_that_handles_its_own_timeout_is_heard() -> None:
    chain = InspectorChain([ChainLink(AnswersDespiteTimeout(), 0.02, "skip")], Metrics())
    result = await chain.run(CALLS, CONTEXT)
    assert [v.verdict for v in result.verdicts] == [Verdict.DENY] * 2
    assert result.failures == {}


async def test_only_timeouts_are_logged_as_timeouts(caplog: Any) -> None:
    chain = InspectorChain([ChainLink(FailsAfterWaiting(), 1.0, "skip")], Metrics())
    await chain.run(CALLS, CONTEXT)
    assert "late_failure failed (decision dec-7)" in caplog.text
    assert "timed out" not in caplog.text


class AnswersAtOnceWhenCancelled:
    """Catches its cancellation and answers at once, without waiting again."""

    name = "prompt"

    async def inspect(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            return [[finding(Verdict.REQUIRE_APPROVAL, "prompt")] for _ in calls]
        return []


async def test_an_inspector_answering_as_it_is_cancelled_is_heard() -> None:
    chain = InspectorChain([ChainLink(AnswersAtOnceWhenCancelled(), 0.02, "deny")], Metrics())
    result = await chain.run(CALLS, CONTEXT)
    assert [v.verdict for v in result.verdicts] == [Verdict.REQUIRE_APPROVAL] * 2
    assert result.failures == {}

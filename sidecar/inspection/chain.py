"""Run inspectors in order, isolate their failures, and merge verdicts strictest first."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from sidecar.inspection.inspector import Inspector
from sidecar.inspection.model import (
    CallVerdict,
    Finding,
    InspectionContext,
    InspectorOutcome,
    ToolCall,
)
from sidecar.inspection.verdict import Mode, Risk, Verdict
from sidecar.observability.metrics import Metrics
from sidecar.policy.schema import OnError

log = logging.getLogger("sidecar.chain")

_ON_ERROR_VERDICT = {"require_approval": Verdict.REQUIRE_APPROVAL, "deny": Verdict.DENY}


@dataclass(frozen=True, slots=True)
class ChainLink:
    inspector: Inspector
    timeout_seconds: float
    on_error: OnError = "skip"


@dataclass(slots=True)
class ChainResult:
    verdicts: list[CallVerdict]
    outcomes: list[InspectorOutcome]


class InspectorChain:
    def __init__(self, links: Sequence[ChainLink], metrics: Metrics) -> None:
        self.links = tuple(links)
        self._metrics = metrics

    async def run(self, calls: Sequence[ToolCall], context: InspectionContext) -> ChainResult:
        if context.mode is Mode.CHAT:
            return ChainResult([_skipped(call) for call in calls], [])
        per_call: list[list[Finding]] = [[] for _ in calls]
        outcomes: list[InspectorOutcome] = []
        for link in self.links:
            outcome, results = await self._run_link(link, calls, context)
            outcomes.append(outcome)
            for findings, found in zip(per_call, results, strict=True):
                findings.extend(found)
        verdicts = [merge(call, findings) for call, findings in zip(calls, per_call, strict=True)]
        return ChainResult(verdicts, outcomes)

    async def _run_link(
        self, link: ChainLink, calls: Sequence[ToolCall], context: InspectionContext
    ) -> tuple[InspectorOutcome, list[list[Finding]]]:
        name = link.inspector.name
        started = time.perf_counter()
        failure: str | None = None
        try:
            async with asyncio.timeout(link.timeout_seconds):
                results = await link.inspector.inspect(calls, context)
            if len(results) != len(calls):
                raise ValueError(f"returned {len(results)} results for {len(calls)} calls")
        except TimeoutError:
            failure = "timeout"
        except Exception:
            failure = "exception"
            log.exception("inspector %s failed (decision %s)", name, context.decision_id)
        elapsed = time.perf_counter() - started
        self._metrics.inspector_seconds.labels(inspector=name).observe(elapsed)
        if failure is not None:
            if failure == "timeout":
                log.warning(
                    "inspector %s timed out after %.3fs (decision %s)",
                    name,
                    link.timeout_seconds,
                    context.decision_id,
                )
            self._metrics.inspector_failures.labels(inspector=name, reason=failure).inc()
            results = [_on_error(link, failure) for _ in calls]
        for found in results:
            verdict = max((f.verdict for f in found), default=Verdict.ALLOW)
            self._metrics.inspector_verdicts.labels(inspector=name, verdict=verdict.label).inc()
            for finding in found:
                self._metrics.findings.labels(inspector=name, rule_id=finding.rule_id).inc()
        return InspectorOutcome(name, elapsed, failure), results


def _on_error(link: ChainLink, failure: str) -> list[Finding]:
    verdict = _ON_ERROR_VERDICT.get(link.on_error)
    if verdict is None:
        return []
    name = link.inspector.name
    message = f"inspector {name} failed ({failure}); its on_error policy is {link.on_error}"
    return [
        Finding(
            inspector=name,
            verdict=verdict,
            rule_id=f"{name}.{failure}",
            message=message,
            risk=Risk.MEDIUM,
            confidence=0.0,
            approval_prompt=f"The {name} check could not run ({failure}). Allow anyway?",
        )
    ]


def merge(call: ToolCall, findings: list[Finding]) -> CallVerdict:
    """The strictest finding decides; the first inspector to reach it gives the reason."""
    verdict = max((f.verdict for f in findings), default=Verdict.ALLOW)
    deciding = [f for f in findings if f.verdict is verdict]
    if not deciding:
        return CallVerdict(call, Verdict.ALLOW, "no inspector objected", "", findings)
    reason = deciding[0].message
    prompt = ""
    if verdict is Verdict.REQUIRE_APPROVAL:
        prompts = dict.fromkeys(f.approval_prompt or f.message for f in deciding)
        prompt = "\n".join(prompts)
    return CallVerdict(call, verdict, reason, prompt, findings)


def _skipped(call: ToolCall) -> CallVerdict:
    message = f"{call.name} was skipped: chat mode runs no tools"
    finding = Finding(
        inspector="permission",
        verdict=Verdict.DENY,
        rule_id="permission.mode_chat",
        message=message,
    )
    return CallVerdict(call, Verdict.DENY, message, "", [finding])

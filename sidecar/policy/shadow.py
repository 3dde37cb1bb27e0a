"""Shadow mode: judge every call under a candidate policy too, and count disagreements.

Only the active policy's verdict is returned. The candidate runs after the
response is sent, with its own repetition and taint state, so it neither adds
latency nor changes what the active policy sees.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence

from sidecar.engine import ActivePolicy, EngineParts
from sidecar.inspection.model import CallVerdict, InspectionContext, ToolCall
from sidecar.inspection.verdict import Mode
from sidecar.observability.metrics import Metrics

log = logging.getLogger("sidecar.shadow")
MAX_PENDING = 1000  # beyond this, shadow work is dropped rather than queued without end


class ShadowEvaluator:
    def __init__(self, parts: EngineParts, metrics: Metrics) -> None:
        self.parts = parts  # separate trackers from the active policy's
        self._metrics = metrics
        self.candidate: ActivePolicy | None = None
        self._pending: set[asyncio.Task[None]] = set()

    async def install(self, candidate: ActivePolicy) -> None:
        self.candidate = candidate

    def submit(
        self,
        calls: Sequence[ToolCall],
        context: InspectionContext,
        requested_mode: Mode | None,
        active_verdicts: list[CallVerdict],
    ) -> None:
        candidate = self.candidate
        if candidate is None:
            return
        if len(self._pending) >= MAX_PENDING:
            self._metrics.shadow_dropped.inc()
            return
        task = asyncio.create_task(
            self._compare(candidate, calls, context, requested_mode, active_verdicts)
        )
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def _compare(
        self,
        candidate: ActivePolicy,
        calls: Sequence[ToolCall],
        context: InspectionContext,
        requested_mode: Mode | None,
        active_verdicts: list[CallVerdict],
    ) -> None:
        mode = candidate.mode
        if requested_mode is not None:
            mode = max(mode, min(requested_mode, candidate.policy.permission.request_mode_limit))
        shadow_context = InspectionContext(
            context.session_id, context.decision_id, mode, context.task,
            context.recent_user_messages,
        )  # fmt: skip
        try:
            result = await candidate.chain.run(calls, shadow_context)
        except Exception:
            log.exception("shadow evaluation failed (decision %s)", context.decision_id)
            return
        for active, shadow in zip(active_verdicts, result.verdicts, strict=True):
            if active.verdict is shadow.verdict:
                continue
            self._metrics.shadow_disagreements.labels(
                active_verdict=active.verdict.label, candidate_verdict=shadow.verdict.label
            ).inc()
            log.warning(
                "%s",
                json.dumps({
                    "event": "shadow_disagreement",
                    "decision_id": context.decision_id,
                    "session_id": context.session_id,
                    "tool_call_id": active.call.id,
                    "tool": active.call.name,
                    "active_verdict": active.verdict.label,
                    "candidate_verdict": shadow.verdict.label,
                    "candidate_revision": candidate.revision,
                    "candidate_rules": [f.rule_id for f in shadow.findings],
                }),
            )  # fmt: skip

    async def drain(self) -> None:
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)

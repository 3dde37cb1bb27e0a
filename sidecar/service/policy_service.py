"""sidecar.v1.PolicyService: Inspect and RecordDecision."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from sidecar import __version__
from sidecar.engine import NotReady, PolicyEngine
from sidecar.inspection.model import CallVerdict, Finding, ToolCall
from sidecar.inspection.verdict import Mode, Risk, Verdict
from sidecar.observability.metrics import Metrics
from sidecar.policy.reloader import ReloadOutcome
from sidecar.secrets import SecretScanner
from sidecar.service.approval_auth import AUTH_CODES, ApprovalGate
from sidecar.service.errors import InvalidArgument
from sidecar.service.json_depth import check_json_depth
from sidecar.state.approvals import AnswerRefused, ApprovalStore
from sidecar.store.errors import StoreUnavailable
from sidecar.text import valid_json
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc

log = logging.getLogger("sidecar.approvals")

MAX_ID_LENGTH = 256
MAX_NAME_LENGTH = 256
# The adversary reviewer reads the last five; a client sending more than this is broken
# or hostile (1.9 million empty strings fit in 4 MiB, each a Python object once read).
MAX_RECENT_USER_MESSAGES = 100

_VERDICT_TO_PB = {
    Verdict.ALLOW: pb.VERDICT_ALLOW,
    Verdict.DENY: pb.VERDICT_DENY,
    Verdict.REQUIRE_APPROVAL: pb.VERDICT_REQUIRE_APPROVAL,
}
_RISK_TO_PB = {
    Risk.LOW: pb.RISK_LOW,
    Risk.MEDIUM: pb.RISK_MEDIUM,
    Risk.HIGH: pb.RISK_HIGH,
    Risk.CRITICAL: pb.RISK_CRITICAL,
}
_MODE_FROM_PB = {
    pb.PERMISSION_MODE_AUTO: Mode.AUTO,
    pb.PERMISSION_MODE_SMART_APPROVE: Mode.SMART_APPROVE,
    pb.PERMISSION_MODE_APPROVE: Mode.APPROVE,
    pb.PERMISSION_MODE_CHAT: Mode.CHAT,
}
_MODE_TO_PB = {mode: value for value, mode in _MODE_FROM_PB.items()}
_ANSWERS = {
    pb.ANSWER_ALLOW_ONCE: ("allow_once", Verdict.ALLOW, False),
    pb.ANSWER_ALWAYS_ALLOW: ("always_allow", Verdict.ALLOW, True),
    pb.ANSWER_DENY_ONCE: ("deny_once", Verdict.DENY, False),
    pb.ANSWER_ALWAYS_DENY: ("always_deny", Verdict.DENY, True),
}


def _check_id(field: str, value: str, limit: int = MAX_ID_LENGTH) -> None:
    if not value:
        raise InvalidArgument(field, "must not be empty")
    if len(value) > limit:
        raise InvalidArgument(field, f"longer than {limit} characters")
    if not value.isprintable():
        raise InvalidArgument(field, "contains control characters")


def calls_from_request(
    request: pb.InspectRequest, max_calls: int, max_argument_bytes: int
) -> tuple[list[ToolCall], int]:
    """The calls, validated and with their text made valid, and their arguments' size."""
    _check_id("session_id", request.session_id)
    if not request.tool_calls:
        raise InvalidArgument("tool_calls", "must contain at least one call")
    # Counts first (len() reads no item): nothing is converted from an oversized field.
    if len(request.tool_calls) > max_calls:
        raise InvalidArgument(
            "tool_calls", f"{len(request.tool_calls):,} calls exceed the limit of {max_calls:,}"
        )
    if len(request.recent_user_messages) > MAX_RECENT_USER_MESSAGES:
        raise InvalidArgument(
            "recent_user_messages",
            f"{len(request.recent_user_messages):,} messages exceed the limit of "
            f"{MAX_RECENT_USER_MESSAGES:,}",
        )
    if request.mode not in _MODE_FROM_PB and request.mode != pb.PERMISSION_MODE_UNSPECIFIED:
        raise InvalidArgument("mode", f"unknown permission mode {request.mode}")
    calls: list[ToolCall] = []
    seen: set[str] = set()
    size = 0
    for index, call in enumerate(request.tool_calls):
        where = f"tool_calls[{index}]"
        _check_id(f"{where}.id", call.id)
        if call.id in seen:
            raise InvalidArgument(f"{where}.id", f"duplicate id {call.id!r}")
        seen.add(call.id)
        _check_id(f"{where}.name", call.name, MAX_NAME_LENGTH)
        text = call.arguments_json
        size += len(text)
        arguments = _arguments(f"{where}.arguments_json", text, max_argument_bytes)
        annotations = call.annotations
        calls.append(
            ToolCall(
                id=call.id,
                name=call.name,
                arguments=arguments,
                read_only_hint=annotations.read_only_hint
                if annotations.HasField("read_only_hint")
                else None,
                destructive_hint=(
                    annotations.destructive_hint
                    if annotations.HasField("destructive_hint")
                    else None
                ),
                server=annotations.server,
            )
        )
    return calls, size


def _arguments(field: str, text: str, limit: int) -> dict[str, Any]:
    if len(text.encode("utf-8", "surrogatepass")) > limit:
        raise InvalidArgument(field, f"larger than {limit} bytes")
    if not text.strip():
        return {}
    check_json_depth(field, text)  # deeper input is a RecursionError wherever it is walked
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidArgument(field, f"not valid JSON: {error}") from None
    except RecursionError:
        raise InvalidArgument(field, "not valid JSON: nested too deeply") from None
    except ValueError:  # Python refuses integers of more than 4,300 digits
        raise InvalidArgument(field, "not valid JSON: a number has too many digits") from None
    if not isinstance(value, dict):
        raise InvalidArgument(field, "must be a JSON object")
    if "\\u" in text:  # only a JSON escape can spell a lone surrogate
        valid_json(value)  # in place
    return value


def verdict_to_pb(verdict: CallVerdict) -> pb.ToolVerdict:
    return pb.ToolVerdict(
        tool_call_id=verdict.call.id,
        verdict=_VERDICT_TO_PB[verdict.verdict],
        reason=verdict.reason,
        approval_prompt=verdict.approval_prompt,
        findings=[_finding_to_pb(f) for f in verdict.findings],
    )


def _finding_to_pb(finding: Finding) -> pb.Finding:
    return pb.Finding(
        inspector=finding.inspector,
        rule_id=finding.rule_id,
        verdict=_VERDICT_TO_PB[finding.verdict],
        risk=_RISK_TO_PB[finding.risk],
        confidence=finding.confidence,
        message=finding.message,
    )


@dataclass(frozen=True, slots=True)
class SlotStatus:
    revision: str
    sources: tuple[str, ...]
    loaded_at: float


@dataclass(frozen=True, slots=True)
class StatusReport:
    active: SlotStatus
    last_reload: ReloadOutcome | None
    shadow: SlotStatus | None
    last_shadow_reload: ReloadOutcome | None


def _timestamp(unix_seconds: float) -> Timestamp:
    stamp = Timestamp()
    stamp.FromNanoseconds(round(unix_seconds * 1e9))
    return stamp


def _slot_to_pb(slot: SlotStatus) -> pb.PolicyStatus:
    return pb.PolicyStatus(
        revision=slot.revision,
        sources=list(slot.sources),
        loaded_at_unix=slot.loaded_at,  # deprecated, still filled for older clients
        loaded_at=_timestamp(slot.loaded_at),
    )


def _reload_to_pb(outcome: ReloadOutcome) -> pb.ReloadStatus:
    return pb.ReloadStatus(
        ok=outcome.ok,
        error=outcome.error,
        attempted_at_unix=outcome.attempted_at,  # deprecated, still filled
        attempted_at=_timestamp(outcome.attempted_at),
    )


class PolicyService(pb_grpc.PolicyServiceServicer):
    def __init__(
        self,
        engine: PolicyEngine,
        approvals: ApprovalStore,
        metrics: Metrics,
        status: Callable[[], StatusReport],
        secrets: SecretScanner,
        gate: ApprovalGate | None = None,
    ) -> None:
        self._engine = engine
        self._approvals = approvals
        self._metrics = metrics
        self._status = status
        self._secrets = secrets
        self._gate = gate or ApprovalGate(None)

    async def _abort(
        self, context: grpc.aio.ServicerContext, code: grpc.StatusCode, message: str
    ) -> None:
        """Error details go to clients and logs: credentials quoted in them are masked."""
        await context.abort(code, self._secrets.mask(message))

    async def GetStatus(
        self, request: pb.GetStatusRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetStatusResponse:
        if not self._engine.ready:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "the policy is not loaded yet")
        report = self._status()
        response = pb.GetStatusResponse(active=_slot_to_pb(report.active), version=__version__)
        if report.last_reload is not None:
            response.last_reload.CopyFrom(_reload_to_pb(report.last_reload))
        if report.shadow is not None:
            response.shadow.CopyFrom(_slot_to_pb(report.shadow))
        if report.last_shadow_reload is not None:
            response.last_shadow_reload.CopyFrom(_reload_to_pb(report.last_shadow_reload))
        # Reload errors quote policy files, which may quote credentials.
        for reload in (response.last_reload, response.last_shadow_reload):
            reload.error = self._secrets.mask(reload.error)
        return response

    async def Inspect(
        self, request: pb.InspectRequest, context: grpc.aio.ServicerContext
    ) -> pb.InspectResponse:
        try:
            limits = self._engine.active.policy.limits
        except NotReady as error:
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(error))
        try:
            calls, size = calls_from_request(
                request, limits.max_tool_calls, limits.max_arguments_bytes
            )
        except InvalidArgument as error:
            await self._abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))
        requested = _MODE_FROM_PB.get(request.mode)
        try:
            # The engine records the questions it asks (RecordDecision checks against them).
            decision = await self._engine.inspect(
                request.session_id,
                calls,
                requested,
                request.task,
                tuple(request.recent_user_messages),
                size,
            )
        except StoreUnavailable as error:  # state_unavailable: unavailable
            await self._abort(context, grpc.StatusCode.UNAVAILABLE, str(error))
        return pb.InspectResponse(
            decision_id=decision.decision_id,
            verdicts=[verdict_to_pb(v) for v in decision.verdicts],
            policy_revision=decision.revision,
            mode=_MODE_TO_PB[decision.mode],
        )

    async def RecordDecision(
        self, request: pb.RecordDecisionRequest, context: grpc.aio.ServicerContext
    ) -> pb.RecordDecisionResponse:
        failure = self._gate.check(context.invocation_metadata())
        if failure is not None:
            self._metrics.refused_answers.labels(reason=failure.value).inc()
            log.warning(
                "RecordDecision refused: %s approval token (session %r)",
                failure.value,
                request.session_id[:MAX_ID_LENGTH],
            )
            code, message = AUTH_CODES[failure]
            await context.abort(code, message)
        try:
            label, verdict, standing, question = _answer_from_request(request)
        except InvalidArgument as error:
            await self._abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))
        try:
            if question:
                await self._approvals.answer(
                    request.session_id,
                    request.decision_id,
                    request.tool_call_id,
                    request.tool_name,
                    label,
                    verdict,
                    standing,
                )
            else:
                await self._approvals.set_standing(
                    request.session_id, request.tool_name, label, verdict, request.decision_id
                )
        except StoreUnavailable as error:
            # Nothing was stored: the person's answer must be given again.
            await self._abort(context, grpc.StatusCode.UNAVAILABLE, str(error))
        except AnswerRefused as refused:
            self._metrics.refused_answers.labels(reason=refused.refusal.name.lower()).inc()
            log.warning(
                "RecordDecision refused: %s (session %r, decision %r, call %r)",
                refused,
                request.session_id,
                request.decision_id,
                request.tool_call_id,
            )
            await self._abort(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                f"decision_id {request.decision_id!r}, tool_call_id {request.tool_call_id!r}: "
                f"{refused}",
            )
        self._metrics.recorded_answers.labels(answer=label).inc()
        return pb.RecordDecisionResponse(persisted=standing)


def _answer_from_request(request: pb.RecordDecisionRequest) -> tuple[str, Verdict, bool, bool]:
    """(label, verdict, standing, answers a question); raises InvalidArgument."""
    _check_id("session_id", request.session_id)
    if request.answer not in _ANSWERS:
        raise InvalidArgument("answer", "must be one of the ANSWER_* values")
    label, verdict, standing = _ANSWERS[request.answer]
    question = bool(request.decision_id or request.tool_call_id)
    if not standing or question:
        # A once answer, or any answer to a prompt, names exactly the question asked.
        _check_id("tool_call_id", request.tool_call_id)
        _check_id("decision_id", request.decision_id)
    if request.tool_name or not question:
        _check_id("tool_name", request.tool_name, MAX_NAME_LENGTH)
    return label, verdict, standing, question

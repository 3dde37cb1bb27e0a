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
from sidecar.inspection.model import CallVerdict, Finding, ToolCall, valid_text
from sidecar.inspection.verdict import Mode, Risk, Verdict
from sidecar.integrity.checks import IntegrityChecks
from sidecar.integrity.definitions import ToolDefinition
from sidecar.integrity.monitor import InjectionMonitor, Untrusted
from sidecar.integrity.scanner import Sign
from sidecar.observability.metrics import Metrics
from sidecar.policy.reloader import ReloadOutcome
from sidecar.secrets import SecretScanner
from sidecar.service.approval_auth import AUTH_CODES, ApprovalGate
from sidecar.service.errors import InvalidArgument
from sidecar.service.json_depth import check_json_depth
from sidecar.state.approvals import AnswerRefused, ApprovalStore
from sidecar.state.tool_registry import (
    NothingToAccept,
    NotRegistered,
    Registered,
    ToolKey,
    ToolRegistry,
)
from sidecar.store.errors import StoreUnavailable
from sidecar.text import valid_json
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc

log = logging.getLogger("sidecar.approvals")
tools_log = logging.getLogger("sidecar.tools")

MAX_ID_LENGTH = 256
MAX_NAME_LENGTH = 256
# RegisterTools: a server's list (MCP servers offer up to a few hundred tools).
MAX_TOOLS = 2_000
MAX_DESCRIPTION_BYTES = 64 * 1024
MAX_SCHEMA_BYTES = 256 * 1024
# Inspect's recent_tool_outputs: what a runtime without the ContextService passes.
MAX_RECENT_OUTPUTS = 32
MAX_RECENT_OUTPUT_BYTES = 256 * 1024
_FINGERPRINT_LENGTH = 64
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
        tools: ToolRegistry | None = None,
        injection: InjectionMonitor | None = None,
    ) -> None:
        self._engine = engine
        self._approvals = approvals
        self._metrics = metrics
        self._status = status
        self._secrets = secrets
        self._gate = gate or ApprovalGate(None)
        self._tools = tools
        self._injection = injection

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
            outputs = outputs_from_request(request)
        except InvalidArgument as error:
            await self._abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))
        if outputs and self._injection is not None:
            # Checked before the calls are judged: a flagged output taints this Inspect too.
            try:
                await self._injection.check(request.session_id, outputs, "inspect")
            except StoreUnavailable as error:
                # A taint that cannot be stored cannot decide these calls: none are judged.
                await self._abort(
                    context,
                    grpc.StatusCode.UNAVAILABLE,
                    f"recent_tool_outputs: the injection check could not be stored: {error}",
                )
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

    async def RegisterTools(
        self, request: pb.RegisterToolsRequest, context: grpc.aio.ServicerContext
    ) -> pb.RegisterToolsResponse:
        if self._tools is None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "no tool registry in this server")
        assert self._tools is not None
        try:
            checks = self._engine.active.integrity
        except NotReady as error:
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(error))
        try:
            definitions = definitions_from_request(request)
        except InvalidArgument as error:
            await self._abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))
        try:
            found, removed = await self._tools.register(
                request.session_id, request.server, definitions
            )
        except StoreUnavailable as error:  # nothing of it was stored
            await self._abort(context, grpc.StatusCode.UNAVAILABLE, str(error))
        response = pb.RegisterToolsResponse(removed=removed)
        label = self._metrics.server_label(request.server)
        for definition, registered in zip(definitions, found, strict=True):
            signs = checks.definition_signs(registered.fingerprint, definition) if checks else ()
            response.tools.append(self._tool_status(definition, registered, signs, checks))
            if registered.first_time and registered.trust == "changed":
                self._metrics.tool_drift.labels(server=label).inc()
                tools_log.warning(
                    "tool %r of server %r changed from its trusted definition (%s -> %s); "
                    "its calls ask until the change is accepted",
                    definition.name,
                    request.server,
                    registered.trusted_fingerprint[:12],
                    registered.fingerprint[:12],
                )
            if registered.first_time and any(s.risk >= Risk.HIGH for s in signs):
                self._metrics.tool_poisoned.labels(server=label).inc()
                tools_log.warning(
                    "tool %r of server %r: its definition speaks to the model (%s)",
                    definition.name,
                    request.server,
                    ", ".join(sorted({s.rule_id for s in signs})),
                )
        return response

    def _tool_status(
        self,
        definition: ToolDefinition,
        registered: Registered,
        signs: tuple[Sign, ...],
        checks: IntegrityChecks | None,
    ) -> pb.ToolStatus:
        findings: list[Finding] = []
        verdict = Verdict.ALLOW
        if registered.trust == "changed" and checks is not None:
            verdict = checks.drift_verdict
            findings.append(
                Finding(
                    "integrity", verdict, "tools.definition-changed",
                    f"differs from the trusted definition {registered.trusted_fingerprint}",
                    Risk.HIGH,
                )
            )  # fmt: skip
        if signs and checks is not None:
            for sign in signs:
                sign_verdict = checks.verdict_for_signs([sign])
                verdict = max(verdict, sign_verdict)
                quoted = f": {sign.excerpt!r}" if sign.excerpt else ""
                findings.append(
                    Finding(
                        "integrity", sign_verdict, f"tools.{sign.rule_id}",
                        f"{sign.message}{quoted}", sign.risk, 0.8,
                    )
                )  # fmt: skip
        return pb.ToolStatus(
            name=definition.name,
            trust=_TRUST_TO_PB[registered.trust],
            fingerprint=registered.fingerprint,
            trusted_fingerprint=registered.trusted_fingerprint,
            verdict=_VERDICT_TO_PB[verdict],
            findings=[
                _finding_to_pb(f._replace(message=self._secrets.mask(f.message))) for f in findings
            ],
        )

    async def AcceptToolChange(
        self, request: pb.AcceptToolChangeRequest, context: grpc.aio.ServicerContext
    ) -> pb.AcceptToolChangeResponse:
        await self._authorise(request.session_id, "AcceptToolChange", context)
        if self._tools is None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "no tool registry in this server")
        assert self._tools is not None
        try:
            _check_server("server", request.server)
            _check_id("name", request.name, MAX_NAME_LENGTH)
            if len(request.fingerprint) != _FINGERPRINT_LENGTH or not all(
                c in "0123456789abcdef" for c in request.fingerprint
            ):
                raise InvalidArgument("fingerprint", "must be the 64 hex digits of a SHA-256")
            if request.session_id:
                _check_id("session_id", request.session_id)
        except InvalidArgument as error:
            await self._abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))
        key = ToolKey(request.server, request.name)
        try:
            previous, trusted = await self._tools.accept(
                key, request.fingerprint, request.session_id
            )
        except StoreUnavailable as error:  # nothing was accepted
            await self._abort(context, grpc.StatusCode.UNAVAILABLE, str(error))
        except NotRegistered as error:
            await self._abort(context, grpc.StatusCode.NOT_FOUND, f"name: {error}")
        except NothingToAccept as error:
            await self._abort(context, grpc.StatusCode.FAILED_PRECONDITION, f"fingerprint: {error}")
        self._metrics.tool_changes_accepted.labels(
            server=self._metrics.server_label(request.server)
        ).inc()
        tools_log.info(
            "tool %r of server %r: the changed definition %s is trusted now (was %s; "
            "accepted in session %r)",
            request.name,
            request.server,
            trusted[:12],
            previous[:12],
            request.session_id,
        )
        return pb.AcceptToolChangeResponse(
            trusted_fingerprint=trusted, previous_fingerprint=previous
        )

    async def _authorise(
        self, session_id: str, method: str, context: grpc.aio.ServicerContext
    ) -> None:
        """Only the approval channel answers: the approval token, when one is configured."""
        failure = self._gate.check(context.invocation_metadata())
        if failure is not None:
            self._metrics.refused_answers.labels(reason=failure.value).inc()
            log.warning(
                "%s refused: %s approval token (session %r)",
                method,
                failure.value,
                session_id[:MAX_ID_LENGTH],
            )
            code, message = AUTH_CODES[failure]
            await context.abort(
                code, f"{method}: {message}" if method != "RecordDecision" else message
            )

    async def RecordDecision(
        self, request: pb.RecordDecisionRequest, context: grpc.aio.ServicerContext
    ) -> pb.RecordDecisionResponse:
        await self._authorise(request.session_id, "RecordDecision", context)
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


_TRUST_TO_PB = {
    "new": pb.TOOL_TRUST_NEW,
    "trusted": pb.TOOL_TRUST_TRUSTED,
    "changed": pb.TOOL_TRUST_CHANGED,
}


def _check_server(field: str, value: str) -> None:
    """A server name may be empty (the runtime's own tools)."""
    if len(value) > MAX_NAME_LENGTH:
        raise InvalidArgument(field, f"longer than {MAX_NAME_LENGTH} characters")
    if not value.isprintable():
        raise InvalidArgument(field, "contains control characters")


def _json_object(field: str, text: str, limit: int) -> dict[str, Any] | None:
    if not text.strip():
        return None
    if len(text.encode("utf-8", "surrogatepass")) > limit:
        raise InvalidArgument(field, f"larger than {limit} bytes")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidArgument(field, f"not valid JSON: {error}") from None
    except (RecursionError, ValueError):
        raise InvalidArgument(
            field, "not valid JSON: nested too deeply or too many digits"
        ) from None
    if not isinstance(value, dict):
        raise InvalidArgument(field, "must be a JSON object")
    if "\\u" in text:
        valid_json(value)
    return value


def definitions_from_request(request: pb.RegisterToolsRequest) -> list[ToolDefinition]:
    _check_id("session_id", request.session_id)
    _check_server("server", request.server)
    if len(request.tools) > MAX_TOOLS:
        raise InvalidArgument(
            "tools", f"{len(request.tools)} tools exceed the limit of {MAX_TOOLS}"
        )
    seen: set[str] = set()
    definitions: list[ToolDefinition] = []
    for index, tool in enumerate(request.tools):
        where = f"tools[{index}]"
        _check_id(f"{where}.name", tool.name, MAX_NAME_LENGTH)
        if tool.name in seen:
            raise InvalidArgument(f"{where}.name", f"duplicate name {tool.name!r}")
        seen.add(tool.name)
        for name, text in (("description", tool.description), ("title", tool.title)):
            if len(text.encode("utf-8", "surrogatepass")) > MAX_DESCRIPTION_BYTES:
                raise InvalidArgument(
                    f"{where}.{name}", f"larger than {MAX_DESCRIPTION_BYTES} bytes"
                )
        definitions.append(
            ToolDefinition(
                name=tool.name,
                description=valid_text(tool.description),
                input_schema=_json_object(
                    f"{where}.input_schema_json", tool.input_schema_json, MAX_SCHEMA_BYTES
                ),
                title=valid_text(tool.title),
                output_schema=_json_object(
                    f"{where}.output_schema_json", tool.output_schema_json, MAX_SCHEMA_BYTES
                ),
                annotations=_json_object(
                    f"{where}.annotations_json", tool.annotations_json, MAX_SCHEMA_BYTES
                ),
            )
        )
    return definitions


def outputs_from_request(request: pb.InspectRequest) -> list[Untrusted]:
    outputs = request.recent_tool_outputs
    if not outputs:
        return []
    if len(outputs) > MAX_RECENT_OUTPUTS:
        raise InvalidArgument(
            "recent_tool_outputs",
            f"{len(outputs)} outputs exceed the limit of {MAX_RECENT_OUTPUTS}",
        )
    total = 0
    found: list[Untrusted] = []
    for index, output in enumerate(outputs):
        where = f"recent_tool_outputs[{index}]"
        total += len(output.content.encode("utf-8", "surrogatepass"))
        if total > MAX_RECENT_OUTPUT_BYTES:
            raise InvalidArgument(
                where, f"the outputs exceed {MAX_RECENT_OUTPUT_BYTES} bytes in all"
            )
        if output.tool_call_id:
            _check_id(f"{where}.tool_call_id", output.tool_call_id)
        if len(output.tool_name) > MAX_NAME_LENGTH:
            raise InvalidArgument(f"{where}.tool_name", f"longer than {MAX_NAME_LENGTH} characters")
        name = output.tool_call_id or f"recent_tool_outputs[{index}]"
        origin = f"output of {output.tool_name or 'a tool'}"
        found.append(Untrusted(name, valid_text(output.content), origin))
    return found


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

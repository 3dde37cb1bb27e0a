"""The policy engine: a loaded policy compiled into a chain, and one Inspect decision."""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, NamedTuple, Protocol

from sidecar.effects.adapters import ToolAdapters
from sidecar.effects.analyser import EffectAnalyser
from sidecar.effects.command_io import SensitivePaths
from sidecar.effects.own_endpoints import OwnEndpoints
from sidecar.inspection.adversary import AdversaryInspector
from sidecar.inspection.answers import arguments_digest
from sidecar.inspection.call_effects import CallEffects
from sidecar.inspection.chain import ChainLink, InspectorChain
from sidecar.inspection.egress import EgressInspector, domain_set
from sidecar.inspection.inspector import Inspector
from sidecar.inspection.integrity import IntegrityInspector
from sidecar.inspection.model import CallVerdict, Finding, InspectionContext, ToolCall
from sidecar.inspection.permission import PermissionInspector
from sidecar.inspection.repetition import RepetitionInspector
from sidecar.inspection.security import VERDICTS, RuleBook, SecurityInspector, check_examples
from sidecar.inspection.verdict import Mode, Risk, Verdict
from sidecar.integrity.checks import IntegrityChecks
from sidecar.model_client import ChatModelClient
from sidecar.observability.decision_log import DecisionLog
from sidecar.observability.metrics import Metrics
from sidecar.policy.loader import LoadedPolicy, PolicyError, PolicyProblem
from sidecar.policy.schema import Policy
from sidecar.secrets import SecretScanner
from sidecar.shell.isolation import IsolatedAnalyser
from sidecar.state.approvals import Question
from sidecar.store.errors import StoreUnavailable
from sidecar.store.sqlite import SqliteStore
from sidecar.store.states import SessionStates

# What Inspect does when the session's stored state cannot be read or written (the
# store is lost): judge without it and ask about every call that would be allowed
# (no stored answer means the call asks), deny them, or answer UNAVAILABLE.
StateUnavailablePolicy = Literal["require_approval", "deny", "unavailable"]
STATE_UNAVAILABLE_RULE = "state.unavailable"


@dataclass(frozen=True, slots=True)
class ActivePolicy:
    """Everything compiled from one policy; replaced as a whole, never edited."""

    loaded: LoadedPolicy
    chain: InspectorChain
    mode: Mode  # the policy's mode, after any operator override
    loaded_at: float = field(default_factory=time.time)
    integrity: IntegrityChecks | None = None  # the injection scanner, for RegisterTools/Append

    @property
    def policy(self) -> Policy:
        return self.loaded.policy

    @property
    def revision(self) -> str:
        return self.loaded.revision


class Decision(NamedTuple):  # immutable, and cheap to build once per Inspect
    decision_id: str
    verdicts: list[CallVerdict]
    revision: str
    mode: Mode


@dataclass(frozen=True, slots=True)
class EngineParts:
    """Long-lived collaborators that outlive any one policy."""

    metrics: Metrics
    states: SessionStates  # a session's stored state: answers, streaks, taint, flow facts
    secrets: SecretScanner
    own_paths: tuple[str, ...] = ()  # the state file, policy directories, sockets
    own_endpoints: OwnEndpoints = field(default_factory=OwnEndpoints)  # its ports and names
    # Set by the server; without them (CLI, in-process tests) everything runs inline.
    isolated: IsolatedAnalyser | None = None  # where large command lines are analysed
    offload: Executor | None = None  # threads for heavy batches' local inspectors
    state_unavailable: StateUnavailablePolicy = "require_approval"

    @classmethod
    def local(
        cls, metrics: Metrics | None = None, secrets: SecretScanner | None = None
    ) -> EngineParts:
        """Parts for an engine in this process alone (the CLI, tests, benchmarks): the
        state lives in an in-memory SQLite store."""
        return cls(
            metrics or Metrics(), SessionStates(SqliteStore(":memory:")), secrets or SecretScanner()
        )


def compile_policy(
    loaded: LoadedPolicy, parts: EngineParts, mode_override: Mode | None
) -> ActivePolicy:
    """Build every inspector for a policy; raises PolicyError before anything is served."""
    policy = loaded.policy
    sensitive = SensitivePaths(policy.sensitive_paths)
    # The last adapter defined for a name wins: an operator's files come after the bundled ones.
    adapters = ToolAdapters(tuple(reversed(policy.tool_adapters)))
    rules = RuleBook(policy.security, sensitive, adapters)
    failing = check_examples(rules, policy.security.rules)
    if failing:
        raise PolicyError(
            [PolicyProblem(_source_of_rule(loaded, p), None, "security.rules", p) for p in failing]
        )
    allowed_hosts = domain_set(policy.egress.allowed_domains)
    analyser = EffectAnalyser(
        policy,
        lambda host: _local(host) or allowed_hosts.matches(_without_port(host)),
        parts.own_paths,
        parts.own_endpoints,
        tuple(dict.fromkeys(Path(source).parent for source in loaded.sources)),
    )
    problems = analyser.problems()
    if problems:
        raise PolicyError([PolicyProblem("(merged policy)", None, "effects", p) for p in problems])
    states = parts.states
    call_effects = CallEffects(rules.shell_calls, analyser, states.facts)
    checks = IntegrityChecks(policy, analyser.catalogue)
    problems = checks.problems()
    if problems:
        raise PolicyError(
            [PolicyProblem("(merged policy)", None, "injection", p) for p in problems]
        )
    available: dict[str, Inspector] = {
        "security": SecurityInspector(rules, call_effects),
        "egress": EgressInspector(
            policy.egress, rules.shell_calls, parts.secrets, sensitive, states.taint
        ),
        "permission": PermissionInspector(
            policy.permission, states.grants, rules.shell_calls, call_effects
        ),
        "repetition": RepetitionInspector(policy.repetition.max_consecutive, states.streaks),
        "integrity": IntegrityInspector(
            checks,
            call_effects,
            adapters,
            policy.permission.read_only_tools,
            states.tools,
            states.injection,
        ),
    }
    links: list[ChainLink] = []
    for name in policy.order:
        settings = policy.settings_for(name)
        if not settings.enabled:
            continue
        if name == "adversary":
            available[name] = _adversary(policy)
        links.append(ChainLink(available[name], settings.timeout_ms / 1000, settings.on_error))
    chain = InspectorChain(links, parts.metrics, rules.shell_calls, parts.isolated, parts.offload)
    return ActivePolicy(
        loaded, chain, mode_override or policy.permission.default_mode, integrity=checks
    )


_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1", "[::1]", "ip6-localhost"})


def _without_port(host: str) -> str:
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _local(host: str) -> bool:
    """Data sent to this machine does not leave it (the sidecar's own API is guarded apart)."""
    bare = _without_port(host).lower()
    return bare in _LOOPBACK or bare.startswith("127.")


def _source_of_rule(loaded: LoadedPolicy, problem: str) -> str:
    """The file that defines the rule named in a problem, for the error message."""
    rule_id = problem.split(":", 1)[0].removeprefix("rule ")
    for name, text in zip(loaded.sources, loaded.texts, strict=True):
        if f"id: {rule_id}" in text:
            return name
    return "(merged policy)"


def mask_verdict(verdict: CallVerdict, secrets: SecretScanner) -> CallVerdict:
    """Credentials quoted in reasons or findings never reach a response or a log."""
    texts = [verdict.reason, verdict.approval_prompt]
    for finding in verdict.findings:
        texts += (finding.message, finding.approval_prompt)
    if not secrets.any_in(texts):
        return verdict  # the common case
    findings = [
        f._replace(message=secrets.mask(f.message), approval_prompt=secrets.mask(f.approval_prompt))
        for f in verdict.findings
    ]
    return CallVerdict(
        verdict.call,
        verdict.verdict,
        secrets.mask(verdict.reason),
        secrets.mask(verdict.approval_prompt),
        findings,
    )


def _adversary(policy: Policy) -> AdversaryInspector:
    settings = policy.adversary
    if not settings.configured:
        raise PolicyError(
            [
                PolicyProblem(
                    "(merged policy)",
                    None,
                    "adversary",
                    "the adversary inspector is enabled but adversary.base_url or "
                    "adversary.model is not set",
                )
            ]
        )
    timeout = policy.settings_for("adversary").timeout_ms / 1000
    client = ChatModelClient.for_endpoint(settings, timeout)
    return AdversaryInspector(client, settings.tools, VERDICTS[settings.block_verdict])


class ShadowSink(Protocol):
    """Receives every decision, to judge it again under a candidate policy."""

    def submit(
        self,
        calls: Sequence[ToolCall],
        context: InspectionContext,
        requested_mode: Mode | None,
        active_verdicts: list[CallVerdict],
    ) -> None: ...


class NotReady(Exception):
    """No policy has been loaded yet."""


class PolicyEngine:
    def __init__(self, parts: EngineParts, decision_log: DecisionLog) -> None:
        self._active: ActivePolicy | None = None
        self._parts = parts
        self._log = decision_log
        self.shadow: ShadowSink | None = None
        self._decision_counters = {
            v: parts.metrics.decisions.labels(verdict=v.label) for v in Verdict
        }
        # Decision ids: a random prefix per engine and a counter. Unique across
        # processes like a uuid4, without a getrandom() system call per Inspect.
        self._id_prefix = os.urandom(8).hex()
        self._id_counter = itertools.count()

    async def facts_of(self, session_id: str) -> bool:
        """Whether the session has data-flow facts stored (for tests and status)."""
        return bool((await self._parts.states.store.load_session(session_id)).facts)

    @property
    def ready(self) -> bool:
        return self._active is not None

    @property
    def active(self) -> ActivePolicy:
        if self._active is None:
            raise NotReady("the policy is not loaded yet")
        return self._active

    def replace(self, active: ActivePolicy) -> None:
        """Atomic swap: calls in flight keep the policy they started with."""
        self._active = active
        self._parts.metrics.set_policy_revision(active.revision)

    async def inspect(
        self,
        session_id: str,
        calls: Sequence[ToolCall],
        requested_mode: Mode | None = None,
        task: str = "",
        recent_user_messages: tuple[str, ...] = (),
        arguments_bytes: int = 0,
    ) -> Decision:
        started = time.perf_counter()
        active = self.active
        mode = active.mode
        if requested_mode is not None:
            # A request may tighten the mode, up to the policy's limit, never loosen it.
            mode = max(mode, min(requested_mode, active.policy.permission.request_mode_limit))
        decision_id = f"{self._id_prefix}{next(self._id_counter):016x}"
        context = InspectionContext(session_id, decision_id, mode, task, recent_user_messages)
        states = self._parts.states
        unavailable: StoreUnavailable | None = None
        try:
            work = await states.begin(session_id)
        except StoreUnavailable as error:
            unavailable = error
            work = states.begin_unstored(session_id)
        try:
            result = await active.chain.run(calls, context, arguments_bytes)
            verdicts = result.verdicts
            if unavailable is None:
                try:
                    verdicts = await states.settle_once(work, verdicts)
                    # Only what was asked can be answered (RecordDecision checks these).
                    questions = [
                        Question(v.call.id, v.call.name, arguments_digest(v.call))
                        for v in verdicts
                        if v.verdict is Verdict.REQUIRE_APPROVAL
                    ]
                    await states.finish(work, decision_id, questions)
                except StoreUnavailable as error:
                    unavailable = error
        finally:
            states.end(work)
        if unavailable is not None:
            verdicts = self._without_state(verdicts, unavailable)
        result.verdicts = [mask_verdict(v, self._parts.secrets) for v in verdicts]
        decisions = self._decision_counters
        for verdict in result.verdicts:
            decisions[verdict.verdict].inc()
        if self.shadow is not None:
            self.shadow.submit(calls, context, requested_mode, result.verdicts)
        if self._log.enabled:
            self._log.write(
                decision_id,
                session_id,
                active.revision,
                mode.name.lower(),
                result.verdicts,
                result.failures,
                time.perf_counter() - started,
            )
        return Decision(decision_id, result.verdicts, active.revision, mode)

    def _without_state(
        self, verdicts: Sequence[CallVerdict], error: StoreUnavailable
    ) -> list[CallVerdict]:
        """Fail closed: what the store would have said is unknown (a standing deny, a
        repetition, a taint, an earlier download), so no call is allowed on that ground."""
        policy = self._parts.state_unavailable
        self._parts.metrics.inspect_state_unavailable.labels(policy=policy).inc()
        if policy == "unavailable":
            raise error
        strictest = Verdict.DENY if policy == "deny" else Verdict.REQUIRE_APPROVAL
        message = (
            "the session's stored state (answers, repetition, taint, earlier calls) cannot "
            "be read now, so this call cannot be allowed on its own"
        )
        finding = Finding(
            "state", strictest, STATE_UNAVAILABLE_RULE, message, Risk.HIGH, 1.0,
            "The sidecar cannot reach its state store. Allow this call anyway?",
        )  # fmt: skip
        tightened: list[CallVerdict] = []
        for verdict in verdicts:
            if verdict.verdict is Verdict.DENY:
                tightened.append(verdict)
            elif verdict.verdict >= strictest:  # said, though it changes nothing
                tightened.append(replace(verdict, findings=[*verdict.findings, finding]))
            else:
                tightened.append(
                    CallVerdict(
                        verdict.call, strictest, message, finding.approval_prompt,
                        [*verdict.findings, finding],
                    )
                )  # fmt: skip
        return tightened

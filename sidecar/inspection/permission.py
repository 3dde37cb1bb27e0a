"""Permission inspector: modes, per-tool rules, and people's standing answers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from sidecar.inspection.globs import GlobSet
from sidecar.inspection.model import Finding, InspectionContext, ToolCall
from sidecar.inspection.verdict import Mode, Verdict
from sidecar.policy.schema import PermissionPolicy

NAME = "permission"
_RULE_VERDICTS = {
    "always_allow": Verdict.ALLOW,
    "ask_before": Verdict.REQUIRE_APPROVAL,
    "never_allow": Verdict.DENY,
}


class GrantLookup(Protocol):
    """What a person answered before, as recorded by RecordDecision."""

    def standing_answer(self, session_id: str, tool_name: str) -> Verdict | None: ...

    def one_time_answer(self, session_id: str, tool_call_id: str) -> Verdict | None: ...


class PermissionInspector:
    name = NAME

    def __init__(self, policy: PermissionPolicy, grants: GrantLookup) -> None:
        self._policy = policy
        self._grants = grants
        self._read_only_tools = GlobSet(policy.read_only_tools)
        # Strictest action first: the first set that matches decides.
        self._rules = []
        for action in ("never_allow", "ask_before", "always_allow"):
            rules = [(GlobSet([r.tool]), r) for r in policy.tools if r.action == action]
            self._rules.append((action, GlobSet(r.tool for _, r in rules), rules))

    async def inspect(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        return [[self._judge(call, context)] for call in calls]

    def _judge(self, call: ToolCall, context: InspectionContext) -> Finding:
        rule_verdict, rule_reason = self._tool_rule(call.name)
        if rule_verdict is Verdict.DENY:
            return _finding(Verdict.DENY, "permission.never_allow", rule_reason)
        once = self._grants.one_time_answer(context.session_id, call.id)
        if once is not None:
            return _finding(
                once, "permission.answered_once", f"a person answered {once.label} once"
            )
        standing = self._grants.standing_answer(context.session_id, call.name)
        if standing is not None:
            return _finding(
                standing,
                "permission.standing_answer",
                f"a person chose always {standing.label.replace('require_approval', 'ask')} "
                f"for {call.name}",
            )
        if rule_verdict is not None:
            rule_id = (
                "permission.always_allow"
                if rule_verdict is Verdict.ALLOW
                else ("permission.ask_before")
            )
            return _finding(rule_verdict, rule_id, rule_reason)
        return self._by_mode(call, context.mode)

    def _tool_rule(self, tool: str) -> tuple[Verdict | None, str]:
        """The strictest matching rule wins, so rule order can never loosen a policy."""
        for action, any_rule, rules in self._rules:
            if any_rule.matches(tool):
                rule = next(rule for glob, rule in rules if glob.matches(tool))
                reason = rule.reason or f"policy rule {action} for {rule.tool!r}"
                return _RULE_VERDICTS[action], reason
        return None, ""

    def _by_mode(self, call: ToolCall, mode: Mode) -> Finding:
        if mode is Mode.AUTO:
            return _finding(Verdict.ALLOW, "permission.mode_auto", "mode auto approves calls")
        if mode is Mode.SMART_APPROVE and self._read_only(call):
            return _finding(Verdict.ALLOW, "permission.read_only", f"{call.name} only reads")
        why = (
            "mode approve asks before every call"
            if mode is Mode.APPROVE
            else (f"{call.name} is not known to be read-only")
        )
        return Finding(
            inspector=NAME,
            verdict=Verdict.REQUIRE_APPROVAL,
            rule_id=f"permission.mode_{mode.name.lower()}",
            message=why,
            approval_prompt=f"Allow the agent to run {call.name}?",
        )

    def _read_only(self, call: ToolCall) -> bool:
        return call.read_only_hint is True or self._read_only_tools.matches(call.name)


def _finding(verdict: Verdict, rule_id: str, message: str) -> Finding:
    prompt = message if verdict is Verdict.REQUIRE_APPROVAL else ""
    return Finding(
        inspector=NAME, verdict=verdict, rule_id=rule_id, message=message, approval_prompt=prompt
    )

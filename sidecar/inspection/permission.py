"""Permission inspector: modes, per-tool and per-command rules, and people's standing answers.

Precedence, strictest first: a policy `never_allow` (tool or command) > a person's
standing ("always") answer > the strictest matching policy rule > the mode. A person's
"once" answer is bound to one exact call and applies after the merge (inspection/answers.py).

A client's `read_only_hint` is a hint about a tool the sidecar cannot see into: it may
make an opaque tool count as read-only in smart_approve, but a call the sidecar analyses
(a shell command) is judged by what it does; there the hint can only tighten (false asks).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import Protocol

from sidecar.effects.adapters import bare_names
from sidecar.effects.command_io import subcommand_words, write_targets
from sidecar.effects.model import Action
from sidecar.inspection.call_effects import CallEffects
from sidecar.inspection.inspector import LocalInspector
from sidecar.inspection.model import Finding, InspectionContext, ToolCall
from sidecar.inspection.shell_calls import ShellCalls
from sidecar.inspection.verdict import Mode, Verdict
from sidecar.matching.globs import GlobSet
from sidecar.policy.schema import CommandPattern, CommandRule, PermissionPolicy
from sidecar.shell.walk import ShellAnalysis, SimpleCommand

NAME = "permission"
_RULE_VERDICTS = {
    "always_allow": Verdict.ALLOW,
    "ask_before": Verdict.REQUIRE_APPROVAL,
    "never_allow": Verdict.DENY,
}
_HARMLESS_WRITES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_MAX_REMEMBERED_TOOLS = 4096


class GrantLookup(Protocol):
    """What a person answered before, as recorded by RecordDecision."""

    def standing_answer(self, session_id: str, tool_name: str) -> Verdict | None: ...


def pattern_matches(pattern: CommandPattern, command: SimpleCommand) -> bool:
    words = pattern.words
    if command.program != words[0]:
        return False
    return _matches_after_program(pattern, command, subcommand_words(command, len(words) - 1))


def _matches_after_program(
    pattern: CommandPattern, command: SimpleCommand, subcommands: tuple[str, ...]
) -> bool:
    """`subcommands` is the command's subcommand words, at least as many as the pattern has."""
    wanted = pattern.words[1:]
    if wanted and subcommands[: len(wanted)] != wanted:
        return False
    return not (pattern.unless_flags and command.flags.intersection(pattern.unless_flags))


class PermissionInspector(LocalInspector):
    name = NAME

    def __init__(
        self,
        policy: PermissionPolicy,
        grants: GrantLookup,
        shell_calls: ShellCalls,
        effects: CallEffects | None = None,
    ) -> None:
        self._effects = effects
        self._policy = policy
        self._grants = grants
        self._shell_calls = shell_calls
        self._read_only_tools = GlobSet(policy.read_only_tools)
        # Strictest action first: the first set that matches decides.
        self._rules = []
        for action in ("never_allow", "ask_before", "always_allow"):
            rules = [(GlobSet([r.tool]), r) for r in policy.tools if r.action == action]
            self._rules.append((action, GlobSet(r.tool for _, r in rules), rules))
        self._command_rules: dict[str, list[CommandRule]] = {}
        for rule in policy.commands:
            self._command_rules.setdefault(rule.words[0], []).append(rule)
        self._read_only_commands: dict[str, list[CommandPattern]] = {}
        for pattern in policy.read_only_commands:
            self._read_only_commands.setdefault(pattern.words[0], []).append(pattern)
        # How many subcommand words the longest read-only pattern of each program needs.
        self._read_only_depth = {
            program: max(len(p.words) - 1 for p in patterns)
            for program, patterns in self._read_only_commands.items()
        }
        self._roots = tuple(r.rstrip("/") for r in policy.workspace_roots)
        # Agents use a handful of tool names: their rule lookups are answered once.
        self._tool_rules: dict[str, tuple[Verdict | None, str, str]] = {}
        self._asks: dict[tuple[Mode, str], Finding] = {}  # the mode's question, per tool

    def inspect_now(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        return [[self._judge(call, context)] for call in calls]

    def _judge(self, call: ToolCall, context: InspectionContext) -> Finding:
        analysis = self._shell_calls.analyse(call) if self._needs_analysis else None
        rule_verdict, rule_id, rule_reason = self._strictest_rule(call, analysis)
        if rule_verdict is Verdict.DENY:
            return _finding(Verdict.DENY, rule_id, rule_reason)
        standing = self._grants.standing_answer(context.session_id, call.name)
        if standing is not None:
            answer = "allow" if standing is Verdict.ALLOW else "deny"
            return _finding(
                standing,
                "permission.standing_answer",
                f"a person chose always {answer} for {call.name}",
            )
        if rule_verdict is not None:
            return _finding(rule_verdict, rule_id, rule_reason)
        return self._by_mode(call, context.mode, analysis, context.session_id)

    @property
    def _needs_analysis(self) -> bool:
        return bool(self._command_rules or self._read_only_commands)

    def _strictest_rule(
        self, call: ToolCall, analysis: ShellAnalysis | None
    ) -> tuple[Verdict | None, str, str]:
        verdict, rule_id, reason = self._tool_rule(call.name)
        if analysis is not None and self._command_rules:
            for command in analysis.commands:
                found = self._command_rule(command)
                if found is not None and (verdict is None or found[0] > verdict):
                    verdict, rule_id, reason = found
        return verdict, rule_id, reason

    def _tool_rule(self, tool: str) -> tuple[Verdict | None, str, str]:
        found = self._tool_rules.get(tool)
        if found is None:
            found = self._strictest_tool_rule(tool)
            if len(self._tool_rules) >= _MAX_REMEMBERED_TOOLS:
                self._tool_rules.clear()
            self._tool_rules[tool] = found
        return found

    def _strictest_tool_rule(self, tool: str) -> tuple[Verdict | None, str, str]:
        """The strictest matching rule wins, so rule order can never loosen a policy."""
        for action, any_rule, rules in self._rules:
            if any_rule.matches(tool):
                rule = next(rule for glob, rule in rules if glob.matches(tool))
                reason = rule.reason or f"policy rule {action} for {rule.tool!r}"
                return _RULE_VERDICTS[action], f"permission.{action}", reason
        return None, "", ""

    def _command_rule(self, command: SimpleCommand) -> tuple[Verdict, str, str] | None:
        best: tuple[Verdict, str, str] | None = None
        for rule in self._command_rules.get(command.program, ()):
            if not pattern_matches(rule, command):
                continue
            if rule.outside_workspace and not self._leaves_workspace(command):
                continue
            verdict = _RULE_VERDICTS[rule.action]
            if best is None or verdict > best[0]:
                where = " outside the workspace" if rule.outside_workspace else ""
                reason = rule.reason or f"policy rule {rule.action} for `{rule.command}`{where}"
                best = (verdict, f"permission.command.{rule.action}", reason)
        return best

    def _leaves_workspace(self, command: SimpleCommand) -> bool:
        for path in command.positionals:
            if path.startswith(("~", "$")):
                return True
            if path.startswith("/"):
                normal = posixpath.normpath(path)
                if not any(normal == r or normal.startswith(r + "/") for r in self._roots):
                    return True
            elif posixpath.normpath(path).startswith(".."):
                return True
        return False

    def _by_mode(
        self, call: ToolCall, mode: Mode, analysis: ShellAnalysis | None, session_id: str = ""
    ) -> Finding:
        if mode is Mode.AUTO:
            return _MODE_AUTO
        if mode is Mode.SMART_APPROVE and call.read_only_hint is not False:
            if any(
                self._read_only_tools.matches(n) for n in (call.name, *bare_names(call.name))
            ):  # an MCP server's get_pull_request is a get_* tool
                return _finding(Verdict.ALLOW, "permission.read_only", f"{call.name} only reads")
            if self._shell_calls.form(call).kind != "unknown":
                # Analysed (a shell line, file changes, a fetch, code): what the call does
                # decides, never the client's word.
                if analysis is not None and self._read_only_shell(analysis):
                    return _READ_ONLY_COMMANDS
                if self._only_looks(call, session_id):
                    return _ONLY_LOOKS
            elif call.read_only_hint is True:
                return _finding(Verdict.ALLOW, "permission.read_only", f"{call.name} only reads")
        key = (mode, call.name)
        finding = self._asks.get(key)
        if finding is None:
            why = (
                "mode approve asks before every call"
                if mode is Mode.APPROVE
                else f"{call.name} is not known to be read-only"
            )
            finding = Finding(
                inspector=NAME,
                verdict=Verdict.REQUIRE_APPROVAL,
                rule_id=f"permission.mode_{mode.name.lower()}",
                message=why,
                approval_prompt=f"Allow the agent to run {call.name}?",
            )
            if len(self._asks) >= _MAX_REMEMBERED_TOOLS:
                self._asks.clear()
            self._asks[key] = finding
        return finding

    def _only_looks(self, call: ToolCall, session_id: str) -> bool:
        """The call's effects are reads of ordinary files and network GETs (kubectl get,
        git log, ruff check, curl ... | jq, Read, Grep, WebFetch): nothing to ask about."""
        if self._effects is None:
            return False
        report = self._effects.of(call, session_id)
        if not report.read_only:
            return False
        classes = self._effects.analyser.judge_rules.classes_of
        return not any(
            not _SENSITIVE.isdisjoint(classes(e)) for e in report.effects if e.action is _READ
        )

    def _read_only_shell(self, analysis: ShellAnalysis) -> bool:
        if analysis.problems or analysis.parse_error or not analysis.commands:
            return False
        for command in analysis.commands:
            patterns = self._read_only_commands.get(command.program)
            if not patterns:
                return False
            # The subcommand words once per command, not once per pattern.
            words = subcommand_words(command, self._read_only_depth[command.program])
            if not any(_matches_after_program(p, command, words) for p in patterns):
                return False
            if any(t not in _HARMLESS_WRITES for t in write_targets(command)):
                return False
        return True


def _finding(verdict: Verdict, rule_id: str, message: str) -> Finding:
    prompt = message if verdict is Verdict.REQUIRE_APPROVAL else ""
    return Finding(
        inspector=NAME, verdict=verdict, rule_id=rule_id, message=message, approval_prompt=prompt
    )


# Findings that never vary are built once (they are immutable).
_MODE_AUTO = _finding(Verdict.ALLOW, "permission.mode_auto", "mode auto approves calls")
_ONLY_LOOKS = _finding(
    Verdict.ALLOW, "permission.only_reads", "the call only reads files or fetches pages"
)
_READ = Action.READ
# Reading these is never "just reading": it asks (or worse, from the security inspector).
_SENSITIVE = frozenset({"credentials", "key_stores", "sidecar", "unresolved", "access_control"})
_READ_ONLY_COMMANDS = _finding(
    Verdict.ALLOW, "permission.read_only_command", "every command only reads"
)

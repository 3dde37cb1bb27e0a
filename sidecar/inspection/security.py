"""Security inspector: rule packs from policy matched on parsed commands and tool arguments."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import re2

from sidecar.inspection.globs import GlobSet
from sidecar.inspection.model import Finding, InspectionContext, ToolCall
from sidecar.inspection.shell import ShellAnalysis, SimpleCommand
from sidecar.inspection.shell import analyse as shell_analyse
from sidecar.inspection.shell_calls import ShellCalls
from sidecar.inspection.verdict import Risk, Verdict
from sidecar.policy.schema import SecurityPolicy, SecurityRule, ShellMatch

NAME = "security"
_VERDICTS = {
    "allow": Verdict.ALLOW,
    "require_approval": Verdict.REQUIRE_APPROVAL,
    "deny": Verdict.DENY,
}


class _Pattern:
    """An optional RE2 search."""

    def __init__(self, pattern: str | None) -> None:
        self._regex = re2.compile(pattern) if pattern else None

    def any(self, values: Sequence[str]) -> bool:
        if self._regex is None:
            return True
        return any(self._regex.search(v) for v in values)


@dataclass(frozen=True, slots=True)
class CompiledShellMatch:
    programs: frozenset[str]
    program_pattern: _Pattern | None
    subcommands: frozenset[str]
    flags_any: frozenset[str]
    flags_all: tuple[frozenset[str], ...]
    positional: _Pattern
    argument: _Pattern
    arguments_text: _Pattern
    redirect_target: _Pattern
    has_redirect_condition: bool
    input_from: frozenset[str]

    @classmethod
    def build(cls, match: ShellMatch) -> CompiledShellMatch:
        return cls(
            frozenset(match.program),
            _Pattern(match.program_pattern) if match.program_pattern else None,
            frozenset(match.subcommand),
            frozenset(match.flags_any),
            tuple(frozenset(group) for group in match.flags_all),
            _Pattern(match.positional),
            _Pattern(match.argument),
            _Pattern(match.arguments_text),
            _Pattern(match.redirect_target),
            match.redirect_target is not None,
            frozenset(match.input_from),
        )

    def matches(self, command: SimpleCommand) -> bool:
        named = bool(self.programs) or self.program_pattern is not None
        if (
            named
            and command.program not in self.programs
            and not (
                self.program_pattern is not None and self.program_pattern.any([command.program])
            )
        ):
            return False
        if self.subcommands and (
            not command.positionals or command.positionals[0] not in self.subcommands
        ):
            return False
        if self.flags_any and not (self.flags_any & command.flags):
            return False
        if any(not (group & command.flags) for group in self.flags_all):
            return False
        if self.input_from and (
            command.input_from is None or command.input_from.program not in self.input_from
        ):
            return False
        if self.has_redirect_condition:
            targets = [r.target for r in command.redirects if ">" in r.operator]
            if not targets or not self.redirect_target.any(targets):
                return False
        return (
            self.positional.any(command.positionals)
            and self.argument.any(command.args)
            and self.arguments_text.any([" ".join(command.args)])
        )


@dataclass(frozen=True, slots=True)
class CompiledRule:
    rule: SecurityRule
    verdict: Verdict
    risk: Risk
    shell: CompiledShellMatch | None
    tools: GlobSet
    tool_globs: tuple[str, ...]
    keys: tuple[str, ...]
    pattern: _Pattern

    def finding(self, detail: str = "") -> Finding:
        message = self.rule.message if not detail else f"{self.rule.message} ({detail})"
        return Finding(
            inspector=NAME,
            verdict=self.verdict,
            rule_id=self.rule.id,
            message=message,
            risk=self.risk,
            confidence=0.9,
            approval_prompt=message,
        )

    def matches_example(self, book: RuleBook, text: str) -> bool:
        """Shell rules take a command line; argument rules the value of their first key."""
        if self.shell is not None:
            analysis = shell_analyse(text)
            return any(self.shell.matches(c) for c in analysis.commands)
        tool = next(iter(self.tool_globs), "tool")
        return self.matches_arguments(ToolCall("example", tool, {self.keys[0]: text}))

    def matches_arguments(self, call: ToolCall) -> bool:
        if not self.tools.matches(call.name):
            return False
        values = [_text(call.arguments.get(key)) for key in self.keys if key in call.arguments]
        return bool(values) and self.pattern.any(values)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


class RuleBook:
    """A policy's rules compiled once per load, indexed by program for speed."""

    def __init__(self, policy: SecurityPolicy) -> None:
        self.shell_calls = ShellCalls(policy.shell_tools, policy.extra_wrappers)
        self.unresolved_verdict = _VERDICTS[policy.unresolved_verdict]
        by_program: dict[str, list[CompiledRule]] = {}
        any_program: list[CompiledRule] = []
        self.argument_rules: list[CompiledRule] = []
        for rule in policy.rules:
            verdict = _VERDICTS[rule.verdict or policy.risk_verdicts[rule.risk]]
            shell = CompiledShellMatch.build(rule.shell) if rule.shell else None
            arguments = rule.arguments
            compiled = CompiledRule(
                rule,
                verdict,
                Risk[rule.risk.upper()],
                shell,
                GlobSet(arguments.tool if arguments else ()),
                arguments.tool if arguments else (),
                arguments.keys if arguments else (),
                _Pattern(arguments.pattern if arguments else None),
            )
            if rule.shell is None:
                self.argument_rules.append(compiled)
            elif rule.shell.program and rule.shell.program_pattern is None:
                for program in rule.shell.program:
                    by_program.setdefault(program, []).append(compiled)
            else:
                any_program.append(compiled)
        self._by_program = by_program
        self._any_program = any_program
        self._by_id = {c.rule.id: c for c in [*self.argument_rules, *any_program]}
        for rules in by_program.values():
            self._by_id.update((c.rule.id, c) for c in rules)

    def compiled(self, rule_id: str) -> CompiledRule:
        return self._by_id[rule_id]

    def shell_rules_for(self, program: str) -> list[CompiledRule]:
        return self._by_program.get(program, []) + self._any_program


def check_examples(book: RuleBook, rules: Sequence[SecurityRule]) -> list[str]:
    """Each rule's inline examples must behave as written; returns what does not."""
    problems: list[str] = []
    for rule in rules:
        compiled = book.compiled(rule.id)
        for text, expected in [(t, True) for t in rule.examples.match] + [
            (t, False) for t in rule.examples.no_match
        ]:
            if compiled.matches_example(book, text) is not expected:
                verb = "should match" if expected else "should not match"
                problems.append(f"rule {rule.id}: example {text!r} {verb}")
    return problems


class SecurityInspector:
    name = NAME

    def __init__(self, rules: RuleBook) -> None:
        self._rules = rules

    async def inspect(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        return [self.inspect_call(call) for call in calls]

    def inspect_call(self, call: ToolCall) -> list[Finding]:
        findings: list[Finding] = []
        for rule in self._rules.argument_rules:
            if rule.matches_arguments(call):
                findings.append(rule.finding())
        analysis = self._rules.shell_calls.analyse(call)
        if analysis is not None:
            findings.extend(self._shell_findings(analysis))
        return findings

    def _shell_findings(self, analysis: ShellAnalysis) -> list[Finding]:
        findings: list[Finding] = []
        seen: set[str] = set()
        for command in analysis.commands:
            for rule in self._rules.shell_rules_for(command.program):
                if (
                    rule.rule.id not in seen
                    and rule.shell is not None
                    and rule.shell.matches(command)
                ):
                    seen.add(rule.rule.id)
                    findings.append(rule.finding(f"via {command.via}" if command.via else ""))
        verdict = self._rules.unresolved_verdict
        for problem in analysis.problems:
            findings.append(
                Finding(
                    inspector=NAME,
                    verdict=verdict,
                    rule_id="shell.unresolved",
                    message=problem,
                    risk=Risk.HIGH,
                    confidence=0.6,
                    approval_prompt=f"Cannot tell what this command does: {problem}.",
                )
            )
        if analysis.parse_error:
            findings.append(
                Finding(
                    inspector=NAME,
                    verdict=verdict,
                    rule_id="shell.parse_error",
                    message="the command line could not be parsed",
                    risk=Risk.HIGH,
                    confidence=0.5,
                    approval_prompt="The command line could not be parsed, so it cannot be checked.",  # noqa: E501
                )
            )
        return findings

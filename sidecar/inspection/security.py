"""Security inspector: rule packs from policy matched on parsed commands and tool arguments."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import re2

from sidecar.effects.adapters import ToolAdapters
from sidecar.effects.analyser import Judged
from sidecar.effects.command_io import (
    SensitivePaths,
    executes_input,
    read_targets,
    subcommand_words,
    upstream,
    write_targets,
)
from sidecar.effects.line_facts import script_facts
from sidecar.inspection.call_effects import CallEffects
from sidecar.inspection.inspector import LocalInspector
from sidecar.inspection.model import Finding, InspectionContext, ToolCall
from sidecar.inspection.shell_calls import ShellCalls
from sidecar.inspection.verdict import Risk, Verdict
from sidecar.matching.globs import GlobSet
from sidecar.matching.pattern_filter import PatternFilter
from sidecar.policy.schema import ArgumentMatch, Example, SecurityPolicy, SecurityRule, ShellMatch
from sidecar.shell.walk import ShellAnalysis, SimpleCommand
from sidecar.shell.walk import analyse as shell_analyse

NAME = "security"
VERDICTS = {
    "allow": Verdict.ALLOW,
    "require_approval": Verdict.REQUIRE_APPROVAL,
    "deny": Verdict.DENY,
}


class _Pattern:
    """An optional RE2 search: absent means 'no condition'.

    Patterns on lists of values (arguments, positionals) run once over the
    values joined by newlines, with ^ and $ anchored per line: one RE2 call per
    command instead of one per argument.
    """

    def __init__(self, pattern: str | None) -> None:
        self.given = pattern is not None
        self._regex = re2.compile(pattern) if pattern is not None else None
        self._lines = re2.compile(f"(?m){pattern}") if pattern is not None else None

    def any(self, values: Sequence[str]) -> bool:
        if self._regex is None:
            return True
        return any(self._regex.search(v) for v in values)

    def any_line(self, lines: str) -> bool:
        return self._lines is None or self._lines.search(lines) is not None


class CommandFacts:
    """What a command reads and writes, worked out once and shared by every rule."""

    __slots__ = (
        "_argument_hits",
        "_filter",
        "_positionals",
        "_reads",
        "_subcommand",
        "_writes",
        "command",
    )

    def __init__(self, command: SimpleCommand, argument_filter: PatternFilter) -> None:
        self.command = command
        self._filter = argument_filter
        self._writes: list[str] | None = None
        self._reads: list[str] | None = None
        self._argument_hits: frozenset[int] | None = None
        self._positionals: str | None = None
        self._subcommand: tuple[str, ...] | None = None

    @property
    def subcommand_words(self) -> tuple[str, ...]:
        """The first word naming what the command does (`git -C x push` -> push), if any."""
        if self._subcommand is None:
            self._subcommand = subcommand_words(self.command, limit=1)
        return self._subcommand

    @property
    def argument_hits(self) -> frozenset[int]:
        """Which of the rule book's argument patterns occur in the arguments (one per line)."""
        if self._argument_hits is None:
            self._argument_hits = self._filter.matching("\n".join(self.command.args))
        return self._argument_hits

    @property
    def positional_lines(self) -> str:
        if self._positionals is None:
            self._positionals = "\n".join(self.command.positionals)
        return self._positionals

    @property
    def writes(self) -> list[str]:
        if self._writes is None:
            self._writes = write_targets(self.command)
        return self._writes

    @property
    def reads(self) -> list[str]:
        if self._reads is None:
            self._reads = read_targets(self.command)
        return self._reads


_MAX_REMEMBERED_NAMES = 4096
_MAX_REMEMBERED_COMMANDS = 4096
_REMEMBERED_ARGUMENTS_LENGTH = 1024  # longer commands are matched afresh, not kept


def _argument_pattern(pattern: str) -> str:
    # Run over the arguments joined by newlines, ^ and $ anchored per line.
    return f"(?m){pattern}"


class CompiledShellMatch:
    def __init__(
        self, match: ShellMatch, sensitive: SensitivePaths, argument_filter: PatternFilter
    ) -> None:
        self.argument_filter = argument_filter
        # All rules' argument patterns run together, once per command (see PatternFilter).
        self.argument_index = (
            argument_filter.patterns.index(_argument_pattern(match.argument))
            if match.argument is not None
            else -1
        )
        self.programs = frozenset(match.program)
        self.program_pattern = _Pattern(match.program_pattern)
        self.subcommands = frozenset(match.subcommand)
        self.flags_any = frozenset(match.flags_any)
        self.flags_all = tuple(frozenset(group) for group in match.flags_all)
        self.positional = _Pattern(match.positional)
        self.arguments_text = _Pattern(match.arguments_text)
        self.arguments_text_not = (
            re2.compile(match.arguments_text_not) if match.arguments_text_not else None
        )
        self.redirect_target = _Pattern(match.redirect_target)
        self.writes_to = _Pattern(match.writes_to)
        self.input_from = frozenset(match.input_from)
        self.input_flags_any = frozenset(match.input_flags_any)
        self.reads_sensitive = match.reads_sensitive
        # Conditions on the script as a whole, by name (see line_facts.script_facts).
        self.script_facts = frozenset(
            name
            for name, wanted in (
                ("recursive_function", match.recursive_function),
                ("runs_download", match.runs_download),
                ("pushes_new_remote", match.pushes_new_remote),
                ("fills_disk", match.fills_disk),
            )
            if wanted
        )
        self.runs_input = match.runs_input
        self.wrapped_by = frozenset(match.wrapped_by)
        self.unless_output_to_flags = frozenset(match.unless_output_to_flags)
        self.per_command = bool(
            self.programs or self.program_pattern.given or self.subcommands or self.flags_any
            or self.flags_all or self.positional.given or match.argument is not None
            or self.arguments_text.given or self.redirect_target.given or self.writes_to.given
            or self.input_from or self.reads_sensitive or self.wrapped_by or self.runs_input
        )  # fmt: skip
        self._sensitive = sensitive
        # Few distinct program names occur, so a pattern on them is searched once per name.
        self._name_answers: dict[str, bool] = {}

    def matches_analysis(self, analysis: ShellAnalysis) -> bool:
        """Conditions on the script as a whole."""
        recursive = bool(analysis.recursive_functions)
        return self.script_facts <= script_facts(analysis.commands, recursive, self.script_facts)

    def output_read_by_flagged(
        self, command: SimpleCommand, commands: Sequence[SimpleCommand]
    ) -> bool:
        """Whether a command reading this one's output has one of `unless_output_to_flags`."""
        return any(
            c.input_from is command and not self.unless_output_to_flags.isdisjoint(c.flags)
            for c in commands
        )

    def _fed_by_listed_program(self, command: SimpleCommand) -> bool:
        """Whether one of `input_from` feeds the command, directly or through other stages
        (`curl ... | cat | sh`, `base64 -d | tee log | sh`)."""
        return any(
            source.program in self.input_from
            and (not self.input_flags_any or not self.input_flags_any.isdisjoint(source.flags))
            for source in upstream(command)
        )

    def names(self, program: str) -> bool:
        if program in self.programs:
            return True
        if not self.program_pattern.given:
            return False
        answer = self._name_answers.get(program)
        if answer is None:
            answer = self.program_pattern.any([program])
            if len(self._name_answers) >= _MAX_REMEMBERED_NAMES:
                self._name_answers.clear()
            self._name_answers[program] = answer
        return answer

    def matches(self, facts: CommandFacts) -> bool:
        command = facts.command
        if (self.programs or self.program_pattern.given) and not self.names(command.program):
            return False
        # Cheap structural checks before any regular expression runs.
        if self.redirect_target.given and not command.redirects:
            return False
        if self.writes_to.given and not facts.writes:
            return False
        if self.reads_sensitive and not facts.reads:
            return False
        if self.subcommands:
            words = facts.subcommand_words
            if not words or words[0] not in self.subcommands:
                return False
        if self.flags_any and not (self.flags_any & command.flags):
            return False
        if self.flags_all and any(not (group & command.flags) for group in self.flags_all):
            return False
        if self.wrapped_by and self.wrapped_by.isdisjoint(command.wrappers):
            return False
        if self.input_from and not self._fed_by_listed_program(command):
            return False
        if self.runs_input and not executes_input(command):
            return False
        if self.redirect_target.given:
            targets = [r.target for r in command.redirects]
            if not targets or not self.redirect_target.any(targets):
                return False
        if self.writes_to.given and not self.writes_to.any(facts.writes):
            return False
        if self.reads_sensitive and not self._sensitive.any(facts.reads):
            return False
        if self.positional.given and (
            not command.positionals or not self.positional.any_line(facts.positional_lines)
        ):
            return False
        if self.argument_index >= 0 and (
            not command.args or self.argument_index not in facts.argument_hits
        ):
            return False
        if self.arguments_text_not is not None and self.arguments_text_not.search(
            " ".join(command.args)
        ):
            return False
        return self.arguments_text.any([" ".join(command.args)])


class CompiledArgumentMatch:
    def __init__(self, match: ArgumentMatch, sensitive: SensitivePaths) -> None:
        self.tools = GlobSet(match.tool, ignore_case=True)  # a rule's reach, never narrowed
        self.tool_globs = match.tool
        self.where = [
            (condition.keys, _Pattern(condition.pattern), condition.sensitive)
            for condition in match.where
        ]
        self._sensitive = sensitive

    def matches(self, call: ToolCall) -> bool:
        if not self.tools.matches(call.name):
            return False
        for keys, pattern, sensitive in self.where:
            values = [_text(call.arguments[k]) for k in keys if k in call.arguments]
            if not values or not pattern.any(values):
                return False
            if sensitive and not self._sensitive.any(values):
                return False
        return True


def _text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


@dataclass(frozen=True, slots=True)
class CompiledRule:
    rule: SecurityRule
    verdict: Verdict
    risk: Risk
    shell: CompiledShellMatch | None
    arguments: CompiledArgumentMatch | None

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

    def matches_example(self, example: Example) -> bool:
        if self.shell is not None:
            if not isinstance(example, str):
                return False
            analysis = shell_analyse(example)
            if not self.shell.matches_analysis(analysis):
                return False
            shell = self.shell
            return not shell.per_command or any(
                shell.matches(CommandFacts(c, shell.argument_filter))
                and not (
                    shell.unless_output_to_flags
                    and shell.output_read_by_flagged(c, analysis.commands)
                )
                for c in analysis.commands
            )
        assert self.arguments is not None
        # A tool name the rule's first glob matches: "*write*" -> "xwritex".
        tool = self.arguments.tool_globs[0].replace("*", "x").replace("?", "x")
        if isinstance(example, str):
            example = {self.rule.arguments.where[0].keys[0]: example} if self.rule.arguments else {}
        return self.arguments.matches(ToolCall("example", tool, dict(example)))


class RuleBook:
    """A policy's rules compiled once per load, indexed by program for speed."""

    def __init__(
        self,
        policy: SecurityPolicy,
        sensitive: SensitivePaths,
        adapters: ToolAdapters | None = None,
    ) -> None:
        self.shell_calls = ShellCalls(
            policy.shell_tools, policy.extra_wrappers, policy.max_command_bytes, adapters=adapters
        )
        self.unresolved_verdict = VERDICTS[policy.unresolved_verdict]
        self.risk_verdicts = policy.risk_verdicts
        self.sensitive = sensitive
        self.argument_rules: list[CompiledRule] = []
        self.script_rules: list[CompiledRule] = []  # conditions on the whole script only
        self._by_program: dict[str, list[CompiledRule]] = {}
        # Rules for any program, grouped by the fact they need, so that a command
        # that writes, reads and redirects nothing never looks at most of them.
        self._any_program: list[CompiledRule] = []
        self._named_by_pattern: list[CompiledRule] = []  # program_pattern: per name, once
        self._for_program: dict[str, list[CompiledRule]] = {}
        # Script-level facts (see line_facts.script_facts) are worked out only if a rule asks.
        self.facts: frozenset[str] = frozenset()  # every script-level fact a rule asks about
        self.per_command_facts: frozenset[str] = frozenset()
        self._matched: dict[tuple[SimpleCommand, frozenset[str]], tuple[CompiledRule, ...]] = {}
        self._on_writes: list[CompiledRule] = []
        self._on_reads: list[CompiledRule] = []
        self._on_redirects: list[CompiledRule] = []
        self._by_id: dict[str, CompiledRule] = {}
        self._argument_rules_by_tool: dict[str, list[CompiledRule]] = {}
        argument_patterns = (r.shell.argument for r in policy.rules if r.shell)
        self.argument_filter = PatternFilter(
            list(dict.fromkeys(_argument_pattern(p) for p in argument_patterns if p is not None))
        )
        for rule in policy.rules:
            compiled = CompiledRule(
                rule,
                VERDICTS[rule.verdict or policy.risk_verdicts[rule.risk]],
                Risk[rule.risk.upper()],
                CompiledShellMatch(rule.shell, sensitive, self.argument_filter)
                if rule.shell
                else None,
                CompiledArgumentMatch(rule.arguments, sensitive) if rule.arguments else None,
            )
            self._by_id[rule.id] = compiled
            if compiled.shell is not None:
                self.facts |= compiled.shell.script_facts
                if compiled.shell.per_command:
                    self.per_command_facts |= compiled.shell.script_facts
            if compiled.shell is None:
                self.argument_rules.append(compiled)
            elif not compiled.shell.per_command:
                self.script_rules.append(compiled)
            elif rule.shell and rule.shell.program and rule.shell.program_pattern is None:
                for program in rule.shell.program:
                    self._by_program.setdefault(program, []).append(compiled)
            elif compiled.shell.writes_to.given:
                self._on_writes.append(compiled)
            elif compiled.shell.reads_sensitive:
                self._on_reads.append(compiled)
            elif compiled.shell.redirect_target.given:
                self._on_redirects.append(compiled)
            elif compiled.shell.program_pattern.given:
                self._named_by_pattern.append(compiled)
            else:
                self._any_program.append(compiled)

    def compiled(self, rule_id: str) -> CompiledRule:
        return self._by_id[rule_id]

    def argument_rules_for(self, tool: str) -> list[CompiledRule]:
        """Argument rules whose tool globs match; cached, as agents use few tool names."""
        rules = self._argument_rules_by_tool.get(tool)
        if rules is None:
            rules = [
                r for r in self.argument_rules if r.arguments and r.arguments.tools.matches(tool)
            ]
            if len(self._argument_rules_by_tool) >= 4096:
                self._argument_rules_by_tool.clear()
            self._argument_rules_by_tool[tool] = rules
        return rules

    def matching_command(
        self, command: SimpleCommand, facts_of_script: frozenset[str]
    ) -> tuple[CompiledRule, ...]:
        """The per-command rules this command matches, given facts about its script.

        Remembered (bounded), because agents run the same commands again and again
        inside different command lines: `cd x && npm test`, `npm test; ls`. Only commands
        nothing feeds: a fed command's key would hold its whole upstream chain, and
        hashing a 10,000-stage pipeline stage by stage is quadratic.
        """
        remember = (
            command.input_from is None
            and sum(map(len, command.args)) <= _REMEMBERED_ARGUMENTS_LENGTH
        )
        key = (command, facts_of_script)
        found = self._matched.get(key) if remember else None
        if found is None:
            facts = CommandFacts(command, self.argument_filter)
            found = tuple(
                rule
                for rule in self.shell_rules_for(facts)
                if rule.shell is not None
                and rule.shell.script_facts <= facts_of_script
                and rule.shell.matches(facts)
            )
            if remember:
                if len(self._matched) >= _MAX_REMEMBERED_COMMANDS:
                    self._matched.clear()
                self._matched[key] = found
        return found

    def _rules_for_program(self, program: str) -> list[CompiledRule]:
        rules = self._for_program.get(program)
        if rules is None:
            named = [r for r in self._named_by_pattern if r.shell and r.shell.names(program)]
            rules = self._by_program.get(program, []) + named + self._any_program
            if len(program) <= _REMEMBERED_ARGUMENTS_LENGTH:  # bounded in bytes, too
                if len(self._for_program) >= _MAX_REMEMBERED_NAMES:
                    self._for_program.clear()
                self._for_program[program] = rules
        return rules

    def shell_rules_for(self, facts: CommandFacts) -> list[CompiledRule]:
        command = facts.command
        # Never `+=`: `rules` is one of the book's own lists.
        rules = self._rules_for_program(command.program)
        if self._on_writes and facts.writes:
            rules = rules + self._on_writes
        if self._on_reads and facts.reads:
            rules = rules + self._on_reads
        if self._on_redirects and command.redirects:
            rules = rules + self._on_redirects
        return rules


def _distinct(findings: list[Finding]) -> list[Finding]:
    """The same rule with the same message, found in several analyses of one call, once."""
    if len(findings) < 2:
        return findings
    return list({(f.rule_id, f.message): f for f in findings}.values())


def _only_the_run_can_tell(finding: Finding) -> bool:
    """Findings about values known only when code runs: not held against code written for
    later (it is judged for what it clearly does)."""
    return "unresolved" in finding.rule_id or finding.rule_id == "shell.parse_error"


def check_examples(book: RuleBook, rules: Sequence[SecurityRule]) -> list[str]:
    """Each rule's inline examples must behave as written; returns what does not."""
    problems: list[str] = []
    for rule in rules:
        compiled = book.compiled(rule.id)
        cases = [(e, True) for e in rule.examples.match] + [
            (e, False) for e in rule.examples.no_match
        ]
        for example, expected in cases:
            if compiled.matches_example(example) is not expected:
                verb = "should match" if expected else "should not match"
                problems.append(f"rule {rule.id}: example {example!r} {verb}")
    return problems


class SecurityInspector(LocalInspector):
    name = NAME

    def __init__(self, rules: RuleBook, effects: CallEffects | None = None) -> None:
        self._rules = rules
        self._effects = effects

    def inspect_now(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        return [self.inspect_call(call, context.session_id) for call in calls]

    def inspect_call(self, call: ToolCall, session_id: str = "") -> list[Finding]:
        findings = [
            rule.finding()
            for rule in self._rules.argument_rules_for(call.name)
            if rule.arguments is not None and rule.arguments.matches(call)
        ]
        analysis = self._rules.shell_calls.analyse(call)
        if analysis is not None:
            findings.extend(self._shell_findings(analysis))
        if self._effects is not None:
            report = self._effects.of(call, session_id)
            for written in report.analyses[1 if analysis is not None else 0 :]:
                # Code written for later (a script, a hook, a startup file) is judged as
                # if it ran: a reverse shell saved to deploy.sh is a reverse shell.
                findings.extend(
                    f._replace(message=f"{f.message} (in code written for later)")
                    for f in self._shell_findings(written)
                    if f.verdict is not Verdict.ALLOW and not _only_the_run_can_tell(f)
                )
            for spawned in report.spawned:
                # Command lines that code in the call runs (os.system, child_process.spawn).
                findings.extend(self._shell_findings(spawned))
            if report.judged:
                findings.extend(self._effect_findings(report.judged))
            for problem in report.problems[:3]:
                findings.append(
                    Finding(
                        inspector=NAME,
                        verdict=self._rules.unresolved_verdict,
                        rule_id="code.unresolved",
                        message=problem,
                        risk=Risk.HIGH,
                        confidence=0.6,
                        approval_prompt=f"Cannot tell what this code does: {problem}.",
                    )
                )
        return _distinct(findings)

    def _effect_findings(self, judged: Sequence[Judged]) -> list[Finding]:
        findings: list[Finding] = []
        seen: set[str] = set()
        risk_verdicts = self._rules.risk_verdicts
        for item in judged:
            rule = item.rule
            if rule.id in seen:
                continue
            seen.add(rule.id)
            message = item.message()
            findings.append(
                Finding(
                    inspector=NAME,
                    verdict=VERDICTS[rule.verdict or risk_verdicts[rule.risk]],
                    rule_id=rule.id,
                    message=message,
                    risk=Risk[rule.risk.upper()],
                    confidence=0.9,
                    approval_prompt=message,
                )
            )
        return findings

    def _shell_findings(self, analysis: ShellAnalysis) -> list[Finding]:
        findings: list[Finding] = []
        seen: set[str] = set()
        book = self._rules
        facts = script_facts(analysis.commands, bool(analysis.recursive_functions), book.facts)
        for rule in book.script_rules:
            if rule.shell is not None and rule.shell.script_facts <= facts:
                seen.add(rule.rule.id)
                findings.append(rule.finding())
        # Per-command results depend only on the facts per-command rules ask about.
        facts &= book.per_command_facts
        for command in analysis.commands:
            for rule in book.matching_command(command, facts):
                shell = rule.shell
                if (
                    shell is not None
                    and shell.unless_output_to_flags
                    and shell.output_read_by_flagged(command, analysis.commands)
                ):
                    continue
                if rule.rule.id not in seen:
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

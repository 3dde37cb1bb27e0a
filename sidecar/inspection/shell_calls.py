"""Which tool calls carry a shell command line, and what that command does.

A call's form (a shell line, file changes, a fetch, code) comes from the policy's tool
adapters; `security.shell_tools` still names extra tools whose argument is a command line.

A batch's command lines are analysed once, before any inspector looks at them
(`prepare`), within a budget: small ones right here, large or operator-heavy ones in
the isolated analysis process (sidecar/shell/isolation.py), the hopeless ones not at
all (sidecar/shell/limits.py). The inspectors then read the prepared analysis.
"""

from __future__ import annotations

import asyncio
import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sidecar.bounded_cache import BoundedCache
from sidecar.effects.adapters import CallForm, ToolAdapters, named_cwd
from sidecar.inspection import deadline
from sidecar.inspection.model import ToolCall
from sidecar.matching.globs import GlobSet
from sidecar.policy.schema import ShellTool
from sidecar.shell.isolation import OUTCOME_REASONS, IsolatedAnalyser, Outcome, truncation
from sidecar.shell.limits import DEFAULT_LIMITS, Route, StructuralLimits
from sidecar.shell.walk import AnalysisBudgetExceeded, ShellAnalysis, analyse
from sidecar.shell.wrappers import DEFAULT_WRAPPERS, WrapperSpec

INLINE_BUDGET_SECONDS = 0.02  # a small line past this goes to the isolated analyser
FALLBACK_BUDGET_SECONDS = 0.25  # without an isolated analyser (CLI, tests): cooperative only
REQUEST_BUDGET_SECONDS = 1.0  # without an isolated analyser; else its request budget
YIELD_EVERY_SECONDS = 0.005  # inline work between turns given back to the event loop
CACHE_ENTRIES = 4096
# A batch past either of these runs its inspectors off the event loop (see chain.py).
HEAVY_COMMANDS = 256
HEAVY_BYTES = 16 * 1024
CUT_OFF_COMMANDS = 1024  # analyses this long may have been cut off (see isolation.py)
CACHE_BYTES = 16 * 1024 * 1024  # estimated by weight(); measured within 0.6-1.6x of it


@dataclass(slots=True)
class Preparation:
    """What preparing a batch found: whether it is heavy, and the calls (by index)
    whose command line was not fully analysed: (reason label, sentence saying why).
    `done` counts the calls prepared so far (prepare_now may stop early)."""

    started: float = 0.0
    done: int = 0
    heavy: bool = False
    cut: dict[int, tuple[str, str]] | None = None
    commands: int = 0
    line_bytes: int = 0
    pending: tuple[int, ToolCall, str] | None = None  # a line for the isolated analyser


class ShellCalls:
    def __init__(
        self,
        tools: tuple[ShellTool, ...],
        extra_wrappers: tuple[str, ...],
        max_bytes: int = 128 * 1024,
        limits: StructuralLimits = DEFAULT_LIMITS,
        adapters: ToolAdapters | None = None,
    ) -> None:
        self.max_bytes = max_bytes
        self.limits = limits
        self.inline_budget = INLINE_BUDGET_SECONDS  # attributes: benchmarks lift them
        self.fallback_budget = FALLBACK_BUDGET_SECONDS
        self.adapters = adapters if adapters is not None else ToolAdapters(())
        self._last_form: tuple[ToolCall, CallForm] | None = None
        arguments = dict.fromkeys(t.argument for t in tools)
        self._tools = [
            (argument, GlobSet(t.tool for t in tools if t.argument == argument))
            for argument in arguments
        ]
        self._extra_wrappers = tuple(extra_wrappers)
        self._wrappers: Mapping[str, WrapperSpec] = DEFAULT_WRAPPERS
        if extra_wrappers:
            self._wrappers = {**DEFAULT_WRAPPERS, **{w: WrapperSpec() for w in extra_wrappers}}
        # Analyses by command line, bounded in bytes (lines come from clients).
        self._cache: BoundedCache[str, ShellAnalysis] = BoundedCache(CACHE_ENTRIES, CACHE_BYTES)
        # The batches being inspected now, by id(call): their analyses, done up front.
        self._prepared: dict[int, tuple[ToolCall, ShellAnalysis | None]] = {}
        # Without prepare (direct use), three inspectors ask about the same call in a row.
        self._last: tuple[ToolCall, ShellAnalysis | None] | None = None

    def form(self, call: ToolCall) -> CallForm:
        """What the call is (kept for the last call: several inspectors ask in a row)."""
        last = self._last_form
        if last is not None and last[0] is call:
            return last[1]
        form = self._form(call)
        self._last_form = (call, form)
        return form

    def _form(self, call: ToolCall) -> CallForm:
        for argument, globs in self._tools:
            if globs.matches(call.name):
                value = call.arguments.get(argument)
                cwd = named_cwd(call.arguments)  # where the line runs, as with adapters
                if isinstance(value, list) and all(isinstance(v, str) for v in value):
                    return CallForm(
                        "shell", shell=shlex.join(value), adapter="shell_tools", cwd=cwd
                    )
                return CallForm(
                    "shell",
                    shell=value if isinstance(value, str) else None,
                    adapter="shell_tools",
                    cwd=cwd,
                )
        return self.adapters.form(call.name, call.arguments)

    def command_line(self, call: ToolCall) -> str | None:
        form = self.form(call)
        if form.kind == "shell":
            return form.shell
        return None

    def is_shell(self, call: ToolCall) -> bool:
        return self.form(call).kind == "shell"

    def analyse(self, call: ToolCall) -> ShellAnalysis | None:
        deadline.check()  # inspectors ask once per call: the place to stop a late one
        entry = self._prepared.get(id(call))
        if entry is not None and entry[0] is call:
            return entry[1]
        last = self._last
        if last is not None and last[0] is call:
            return last[1]
        analysis = self._analyse_now(call)
        self._last = (call, analysis)
        return analysis

    def prepare_now(self, calls: Sequence[ToolCall]) -> Preparation:
        """Prepare what needs no waiting: remembered lines and small ones, until a line
        needs the isolated analyser or this has run long enough to give the event loop
        a turn. Most batches are done here; `prepare_rest` finishes the others.
        Either way, `release` afterwards."""
        now = time.perf_counter()
        found = Preparation(started=now)
        self._prepare_from(calls, found, now + YIELD_EVERY_SECONDS)
        return found

    async def prepare_rest(
        self, calls: Sequence[ToolCall], found: Preparation, isolated: IsolatedAnalyser | None
    ) -> None:
        budget = (
            isolated.settings.request_budget_seconds
            if isolated is not None
            else REQUEST_BUDGET_SECONDS
        )
        request_deadline = found.started + budget
        while found.done < len(calls):
            await asyncio.sleep(0)  # let health checks and other calls through
            self._prepare_from(calls, found, time.perf_counter() + YIELD_EVERY_SECONDS)
            if found.pending is not None:
                index, call, line = found.pending
                found.pending = None
                analysis, cut = await self._isolated_line(line, isolated, request_deadline)
                found.line_bytes += len(line)
                self._record(found, index, call, analysis, cut)
        found.heavy = (
            found.cut is not None
            or found.commands > HEAVY_COMMANDS
            or found.line_bytes > HEAVY_BYTES
        )

    def _prepare_from(self, calls: Sequence[ToolCall], found: Preparation, until: float) -> None:
        """Prepare calls from found.done on, until one needs the isolated analyser (left
        in found.pending) or the time is up."""
        for index in range(found.done, len(calls)):
            call = calls[index]
            line = self.command_line(call)
            if line is None:
                # A shell tool whose command is missing or not text: cannot tell, so ask.
                self._prepared[id(call)] = (call, NOT_TEXT if self.is_shell(call) else None)
                found.done = index + 1
                continue
            found.line_bytes += len(line)
            analysis = self._cache.get(line)
            cut: tuple[str, str] | None = None
            if analysis is None:
                outcome = self._analyse_here(line)
                if outcome is None:  # for the isolated analyser
                    found.line_bytes -= len(line)  # counted again when it is done
                    found.pending = (index, call, line)
                    found.done = index
                    return
                analysis, cut = outcome
            elif len(analysis.commands) >= CUT_OFF_COMMANDS and truncation(analysis):
                cut = ("too_many_commands", truncation(analysis))
            self._record(found, index, call, analysis, cut)
            if time.perf_counter() > until:
                return
        found.heavy = (
            found.cut is not None
            or found.commands > HEAVY_COMMANDS
            or found.line_bytes > HEAVY_BYTES
        )

    def _record(
        self,
        found: Preparation,
        index: int,
        call: ToolCall,
        analysis: ShellAnalysis,
        cut: tuple[str, str] | None,
    ) -> None:
        if cut is not None:
            found.cut = found.cut or {}
            found.cut[index] = cut
        found.commands += len(analysis.commands)
        self._prepared[id(call)] = (call, analysis)
        found.done = index + 1

    def release(self, calls: Sequence[ToolCall]) -> None:
        prepared = self._prepared
        for call in calls:
            prepared.pop(id(call), None)

    def _analyse_here(self, line: str) -> tuple[ShellAnalysis, tuple[str, str] | None] | None:
        """The analysis of a line that needs no waiting, and why it is incomplete if it
        is; None when the line is for the isolated analyser."""
        if len(line) > self.max_bytes:
            return TOO_LARGE, ("too_large", TOO_LARGE.problems[0])
        route, problem = self.limits.route(line)
        if route is Route.TOO_COMPLEX:
            return _cut(problem), ("too_complex", problem)
        if route is Route.INLINE:
            try:
                analysis = analyse(line, self._wrappers, self.inline_budget)
            except AnalysisBudgetExceeded:
                return None  # small but slow: the isolated analyser has the time
            self._remember(line, analysis)
            return analysis, None
        return None

    async def _isolated_line(
        self, line: str, isolated: IsolatedAnalyser | None, request_deadline: float
    ) -> tuple[ShellAnalysis, tuple[str, str] | None]:
        if isolated is None:
            try:
                analysis = analyse(line, self._wrappers, self.fallback_budget)
            except AnalysisBudgetExceeded:
                return _cut(Outcome.TIMEOUT), ("timeout", Outcome.TIMEOUT)
        else:
            result = await isolated.analyse(line, self._extra_wrappers, request_deadline)
            if isinstance(result, str):
                return _cut(result), (OUTCOME_REASONS.get(result, "failed"), result)
            analysis = result
        self._remember(line, analysis)
        cut_off = truncation(analysis)
        return analysis, ("too_many_commands", cut_off) if cut_off else None

    def _analyse_now(self, call: ToolCall) -> ShellAnalysis | None:
        """Without prepare: the same limits and budgets, cooperatively, on this thread."""
        line = self.command_line(call)
        if line is None:
            return NOT_TEXT if self.is_shell(call) else None
        if len(line) > self.max_bytes:
            return TOO_LARGE
        analysis = self._cache.get(line)
        if analysis is not None:
            return analysis
        route, problem = self.limits.route(line)
        if route is Route.TOO_COMPLEX:
            return _cut(problem)
        try:
            analysis = analyse(line, self._wrappers, self.fallback_budget)
        except AnalysisBudgetExceeded:
            return _cut(Outcome.TIMEOUT)
        self._remember(line, analysis)
        return analysis

    def _remember(self, line: str, analysis: ShellAnalysis) -> None:
        self._cache.put(line, analysis, len(line) + weight(analysis))


def weight(analysis: ShellAnalysis) -> int:
    """Rough bytes an analysis holds: its words and object headers (tuples, the
    command itself). tracemalloc puts the real figure at 0.6-1.6x this."""
    total = 0
    for command in analysis.commands:
        args = command.args
        total += 300 + 56 * len(args) + sum(map(len, args))
    return total


def _cut(problem: str) -> ShellAnalysis:
    return ShellAnalysis(commands=(), problems=(problem,), parse_error=False)


NOT_TEXT = ShellAnalysis(
    commands=(), problems=("the command argument is missing or not text",), parse_error=False
)
# Not parsed: analysing adversarial megabytes would stall every other call.
TOO_LARGE = ShellAnalysis(
    commands=(), problems=("the command line is too large to analyse",), parse_error=False
)

"""Which tool calls carry a shell command line, and what that command does."""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from sidecar.inspection.model import ToolCall
from sidecar.matching.globs import GlobSet
from sidecar.policy.schema import ShellTool
from sidecar.shell.walk import ShellAnalysis, analyse
from sidecar.shell.wrappers import DEFAULT_WRAPPERS, WrapperSpec


class ShellCalls:
    def __init__(
        self,
        tools: tuple[ShellTool, ...],
        extra_wrappers: tuple[str, ...],
        max_bytes: int = 128 * 1024,
    ) -> None:
        self.max_bytes = max_bytes
        arguments = dict.fromkeys(t.argument for t in tools)
        self._tools = [
            (argument, GlobSet(t.tool for t in tools if t.argument == argument))
            for argument in arguments
        ]
        # Three inspectors ask about the same call in a row: the last answer is kept.
        self._last: tuple[ToolCall, ShellAnalysis | None] | None = None
        self._wrappers: Mapping[str, WrapperSpec] = DEFAULT_WRAPPERS
        if extra_wrappers:
            self._wrappers = {**DEFAULT_WRAPPERS, **{w: WrapperSpec() for w in extra_wrappers}}

    def command_line(self, call: ToolCall) -> str | None:
        for argument, globs in self._tools:
            if globs.matches(call.name):
                value = call.arguments.get(argument)
                if isinstance(value, list) and all(isinstance(v, str) for v in value):
                    return shlex.join(value)  # argv-style tools
                return value if isinstance(value, str) else None
        return None

    def is_shell(self, call: ToolCall) -> bool:
        return any(globs.matches(call.name) for _, globs in self._tools)

    def analyse(self, call: ToolCall) -> ShellAnalysis | None:
        last = self._last
        if last is not None and last[0] is call:
            return last[1]
        analysis = self._analyse(call)
        self._last = (call, analysis)
        return analysis

    def _analyse(self, call: ToolCall) -> ShellAnalysis | None:
        line = self.command_line(call)
        if line is None:
            # A shell tool whose command is missing or not text: cannot tell, so ask.
            return NOT_TEXT if self.is_shell(call) else None
        if len(line) > self.max_bytes:
            return TOO_LARGE
        return analyse(line, self._wrappers)


NOT_TEXT = ShellAnalysis(
    commands=(), problems=("the command argument is missing or not text",), parse_error=False
)
# Not parsed: analysing adversarial megabytes would stall every other call.
TOO_LARGE = ShellAnalysis(
    commands=(), problems=("the command line is too large to analyse",), parse_error=False
)

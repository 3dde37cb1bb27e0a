"""Which tool calls carry a shell command line, and what that command does."""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from sidecar.inspection.globs import GlobSet
from sidecar.inspection.model import ToolCall
from sidecar.inspection.shell import DEFAULT_WRAPPERS, ShellAnalysis, WrapperSpec, analyse
from sidecar.policy.schema import ShellTool


class ShellCalls:
    def __init__(self, tools: tuple[ShellTool, ...], extra_wrappers: tuple[str, ...]) -> None:
        arguments = dict.fromkeys(t.argument for t in tools)
        self._tools = [
            (argument, GlobSet(t.tool for t in tools if t.argument == argument))
            for argument in arguments
        ]
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

    def analyse(self, call: ToolCall) -> ShellAnalysis | None:
        line = self.command_line(call)
        return None if line is None else analyse(line, self._wrappers)

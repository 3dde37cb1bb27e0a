"""Which tool calls carry a shell command line, and what that command does.

A call's form (a shell line, file changes, a fetch, code) comes from the policy's tool
adapters; `security.shell_tools` still names extra tools whose argument is a command line."""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from sidecar.effects.adapters import CallForm, ToolAdapters
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
        adapters: ToolAdapters | None = None,
    ) -> None:
        self.max_bytes = max_bytes
        self.adapters = adapters if adapters is not None else ToolAdapters(())
        self._last_form: tuple[ToolCall, CallForm] | None = None
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
                if isinstance(value, list) and all(isinstance(v, str) for v in value):
                    return CallForm("shell", shell=shlex.join(value), adapter="shell_tools")
                return CallForm(
                    "shell", shell=value if isinstance(value, str) else None, adapter="shell_tools"
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

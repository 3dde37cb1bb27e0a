"""The effects of each tool call, worked out once and shared by the inspectors."""

from __future__ import annotations

from sidecar.effects.analyser import EffectAnalyser, Judged
from sidecar.effects.shell_effects import LineEffects
from sidecar.inspection.model import ToolCall
from sidecar.inspection.shell_calls import ShellCalls

_MAX_REMEMBERED = 4096
_REMEMBERED_LENGTH = 2048  # longer lines are worked out afresh, not kept


class CallEffects:
    def __init__(self, shell_calls: ShellCalls, analyser: EffectAnalyser) -> None:
        self.shell_calls = shell_calls
        self.analyser = analyser
        self._lines: dict[str, tuple[LineEffects, tuple[Judged, ...]]] = {}
        self._last: tuple[ToolCall, tuple[LineEffects, tuple[Judged, ...]] | None] | None = None

    def of(self, call: ToolCall) -> tuple[LineEffects, tuple[Judged, ...]] | None:
        """The call's effects and the effect rules they match; None for calls with none known."""
        last = self._last
        if last is not None and last[0] is call:
            return last[1]
        found = self._work_out(call)
        self._last = (call, found)
        return found

    def _work_out(self, call: ToolCall) -> tuple[LineEffects, tuple[Judged, ...]] | None:
        analysis = self.shell_calls.analyse(call)
        if analysis is None:
            return None
        line = self.shell_calls.command_line(call) or ""
        remembered = self._lines.get(line)
        if remembered is not None:
            return remembered
        effects = self.analyser.line(analysis)
        result = (effects, tuple(self.analyser.judge(effects.effects)))
        if len(line) <= _REMEMBERED_LENGTH:
            if len(self._lines) >= _MAX_REMEMBERED:
                self._lines.clear()
            self._lines[line] = result
        return result

"""Repetition inspector: deny a call repeated identically too many times in a row."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sidecar.inspection.inspector import LocalInspector
from sidecar.inspection.model import Finding, InspectionContext, ToolCall
from sidecar.inspection.verdict import Risk, Verdict

NAME = "repetition"


@dataclass(slots=True)
class _Streak:
    name: str
    arguments: dict[str, Any]
    count: int

    def continues_with(self, call: ToolCall) -> bool:
        # Dict equality already ignores key order; the canonical JSON (the real
        # definition of "same arguments") only settles the rare repeat, where
        # Python equality would call 1, 1.0 and true the same.
        return (
            call.name == self.name
            and call.arguments == self.arguments
            and call.canonical_arguments
            == ToolCall("", self.name, self.arguments).canonical_arguments
        )


class RepetitionTracker:
    """Per-session streaks, bounded so that many sessions cannot grow memory without end.

    Lives outside the inspector so a policy reload keeps the streaks.
    """

    def __init__(self, max_sessions: int = 100_000) -> None:
        self._streaks: OrderedDict[str, _Streak] = OrderedDict()
        self._max_sessions = max_sessions

    def forget(self, session_id: str) -> bool:
        """Drop a deleted session's streak; True if there was one."""
        return self._streaks.pop(session_id, None) is not None

    def observe(self, session_id: str, call: ToolCall) -> int:
        """Record the call; return how many identical calls in a row it makes."""
        streak = self._streaks.get(session_id)
        if streak is not None and streak.continues_with(call):
            streak.count += 1
        else:
            streak = _Streak(call.name, call.arguments, 1)
            self._streaks[session_id] = streak
        self._streaks.move_to_end(session_id)
        while len(self._streaks) > self._max_sessions:
            self._streaks.popitem(last=False)
        return streak.count


class RepetitionInspector(LocalInspector):
    name = NAME

    def __init__(self, max_consecutive: int, tracker: RepetitionTracker) -> None:
        self._limit = max_consecutive
        self._tracker = tracker

    def inspect_now(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        results: list[list[Finding]] = []
        for call in calls:
            count = self._tracker.observe(context.session_id, call)
            if count > self._limit:
                message = (
                    f"{call.name} was called {count} times in a row with the same arguments "
                    f"(limit {self._limit}); try something different"
                )
                results.append(
                    [
                        Finding(
                            inspector=NAME,
                            verdict=Verdict.DENY,
                            rule_id="repetition.limit",
                            message=message,
                            risk=Risk.MEDIUM,
                        )
                    ]
                )
            else:
                results.append([])
        return results

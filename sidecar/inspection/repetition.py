"""Repetition inspector: deny a call repeated identically too many times in a row."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sidecar.inspection.inspector import LocalInspector
from sidecar.inspection.model import Finding, InspectionContext, ToolCall
from sidecar.inspection.verdict import Risk, Verdict

NAME = "repetition"


class StreakCounter(Protocol):
    """Counts identical calls in a row per session: in memory (RepetitionTracker) or in
    the state store, shared by every worker and replica (sidecar/store/states.py)."""

    def observe(self, session_id: str, call: ToolCall) -> int: ...

    def forget(self, session_id: str) -> bool: ...


@dataclass(slots=True)
class Streak:
    name: str
    arguments: dict[str, Any] | None  # kept when small; large ones only by digest
    digest: bytes
    count: int
    weight: int  # estimated bytes held

    @classmethod
    def start(cls, session_id: str, call: ToolCall) -> Streak:
        """A streak of one: this call."""
        size = _size_over(call.arguments, _KEPT_ARGUMENTS_BYTES)
        small = size <= _KEPT_ARGUMENTS_BYTES
        weight = 300 + len(session_id) + len(call.name) + (size if small else 64)
        return cls(
            call.name, call.arguments if small else None, b"" if small else _digest(call), 1, weight
        )

    @classmethod
    def stored(cls, name: str, digest_hex: str, count: int) -> Streak:
        """A streak as the state store keeps it: the tool and the arguments' digest."""
        return cls(name, None, bytes.fromhex(digest_hex), count, 300 + len(name))

    def digest_hex(self) -> str:
        """What identifies the repeated call in the store (computed once, then kept)."""
        if not self.digest:
            self.digest = _digest(ToolCall("", self.name, self.arguments or {}))
        return self.digest.hex()

    def copy(self, count: int) -> Streak:
        return Streak(self.name, self.arguments, self.digest, count, self.weight)

    def continues_with(self, call: ToolCall) -> bool:
        if call.name != self.name:
            return False
        if self.arguments is None:
            return _digest(call) == self.digest
        # Dict equality already ignores key order; the canonical JSON (the real
        # definition of "same arguments") only settles the rare repeat, where
        # Python equality would call 1, 1.0 and true the same.
        return (
            call.arguments == self.arguments
            and call.canonical_arguments
            == ToolCall("", self.name, self.arguments).canonical_arguments
        )


# A streak keeps the arguments themselves up to this size; a 1 MiB file's content is
# remembered as a digest, so 100,000 sessions cannot hold 100,000 such files.
_KEPT_ARGUMENTS_BYTES = 4096


def _digest(call: ToolCall) -> bytes:
    return hashlib.blake2b(call.canonical_arguments.encode("utf-8", "surrogatepass")).digest()


def _size_over(value: Any, limit: int) -> int:
    """Estimated bytes of a JSON value, counting stops just past limit (cheap for small)."""
    if type(value) is dict and len(value) <= 8:  # the usual call: a few short values
        total = 100 + 50 * len(value)
        for key, item in value.items():
            kind = type(item)
            if kind is str:
                total += 100 + len(key) + len(item)
            elif kind is int or kind is bool or item is None:
                total += 80 + len(key)
            else:
                break
        else:
            return total
    total = 0
    stack = [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, str):
            total += 50 + len(item)
        elif isinstance(item, dict):
            total += 100 + 50 * len(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            total += 60 + 8 * len(item)
            stack.extend(item)
        else:
            total += 32
    return total


class RepetitionTracker:
    """Per-session streaks in this process's memory, bounded so that many sessions cannot
    grow memory without end (shadow evaluation uses it). The server counts in the state
    store instead, so that every worker and replica counts the same calls.

    Lives outside the inspector so a policy reload keeps the streaks.
    """

    def __init__(self, max_sessions: int = 100_000, max_bytes: int = 64 * 1024 * 1024) -> None:
        self._streaks: OrderedDict[str, Streak] = OrderedDict()
        self._max_sessions = max_sessions
        self._max_bytes = max_bytes
        self.bytes = 0  # estimated, of every streak held

    def forget(self, session_id: str) -> bool:
        """Drop a deleted session's streak; True if there was one."""
        return self._streaks.pop(session_id, None) is not None

    def observe(self, session_id: str, call: ToolCall) -> int:
        """Record the call; return how many identical calls in a row it makes."""
        streak = self._streaks.get(session_id)
        if streak is not None and streak.continues_with(call):
            streak.count += 1
        else:
            if streak is not None:
                self.bytes -= streak.weight
            streak = Streak.start(session_id, call)
            self._streaks[session_id] = streak
            self.bytes += streak.weight
        self._streaks.move_to_end(session_id)
        while len(self._streaks) > self._max_sessions or self.bytes > self._max_bytes:
            _, dropped = self._streaks.popitem(last=False)
            self.bytes -= dropped.weight
        return streak.count


class RepetitionInspector(LocalInspector):
    name = NAME

    def __init__(self, max_consecutive: int, tracker: StreakCounter) -> None:
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

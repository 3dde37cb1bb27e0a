"""The one interface every inspector implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from sidecar.inspection.model import Finding, InspectionContext, ToolCall


class Inspector(Protocol):
    """A batch of calls in, one list of findings per call out (empty: nothing to say)."""

    name: str

    async def inspect(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]: ...


class LocalInspector(Inspector, Protocol):
    """An inspector that never waits for anything (no network, no timers).

    The chain calls `inspect_now` directly: no coroutine to create and drive, which
    matters when a whole Inspect is meant to take tens of microseconds. Subclass it to
    get `inspect` for free.
    """

    async def inspect(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        return self.inspect_now(calls, context)

    def inspect_now(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]: ...

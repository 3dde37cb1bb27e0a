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

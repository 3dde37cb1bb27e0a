"""How command lines hand code to interpreters."""

from __future__ import annotations

from collections.abc import Sequence


def code_invocations(
    program: str, args: Sequence[str], stdin_text: str | None = None
) -> list[tuple[str, str]]:
    return []

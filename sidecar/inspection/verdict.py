"""Verdicts, risks and permission modes, with their strictness orders."""

from __future__ import annotations

import enum


class Verdict(enum.IntEnum):
    """Ordered by strictness so that ``max`` merges strictest first."""

    ALLOW = 1
    REQUIRE_APPROVAL = 2
    DENY = 3

    @property
    def label(self) -> str:
        return self.name.lower()


class Risk(enum.IntEnum):
    LOW = 1
    MEDIUM = 2
    HIGH = 3
    CRITICAL = 4


class Mode(enum.IntEnum):
    """Permission modes, ordered loosest to strictest."""

    AUTO = 1
    SMART_APPROVE = 2
    APPROVE = 3
    CHAT = 4

    @classmethod
    def parse(cls, text: str) -> Mode:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            names = ", ".join(m.name.lower() for m in cls)
            raise ValueError(
                f"unknown permission mode {text!r} (expected one of {names})"
            ) from None

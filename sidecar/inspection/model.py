"""Typed domain objects the inspectors work on; no protobuf past the service edge."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from sidecar.inspection.verdict import Mode, Risk, Verdict


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]
    read_only_hint: bool | None = None
    destructive_hint: bool | None = None
    server: str = ""

    @property
    def canonical_arguments(self) -> str:
        """Key order and whitespace do not make two calls different."""
        return json.dumps(self.arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# Finding and InspectionContext are NamedTuples: immutable like frozen dataclasses,
# and several times cheaper to build; every Inspect builds a few of each.
class Finding(NamedTuple):
    """One inspector's judgement about one call."""

    inspector: str
    verdict: Verdict
    rule_id: str
    message: str
    risk: Risk = Risk.LOW
    confidence: float = 1.0
    approval_prompt: str = ""


class InspectionContext(NamedTuple):
    """What an inspector may know besides the calls themselves."""

    session_id: str
    decision_id: str
    mode: Mode
    task: str = ""
    recent_user_messages: tuple[str, ...] = ()


@dataclass(slots=True)
class CallVerdict:
    """The merged outcome for one call."""

    call: ToolCall
    verdict: Verdict
    reason: str
    approval_prompt: str = ""
    findings: list[Finding] = field(default_factory=list)

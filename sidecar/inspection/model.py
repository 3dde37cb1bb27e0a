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

    def sanitised(self) -> ToolCall:
        """The call with lone surrogates (text that cannot be encoded) replaced by U+FFFD, so
        that no verdict depends on whether a string can be encoded."""
        name = valid_text(self.name)
        arguments = valid_value(self.arguments)
        if name is self.name and arguments is self.arguments:
            return self
        return ToolCall(
            self.id, name, arguments, self.read_only_hint, self.destructive_hint, self.server
        )

    @property
    def canonical_arguments(self) -> str:
        """Key order and whitespace do not make two calls different."""
        return json.dumps(self.arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def valid_text(text: str) -> str:
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


def valid_value(value: Any) -> Any:
    """A JSON value with every string made valid text; the same object when nothing changes."""
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        items = {valid_text(str(k)): valid_value(v) for k, v in value.items()}
        same = all(
            k2 is k and v2 is v
            for (k, v), (k2, v2) in zip(value.items(), items.items(), strict=True)
        )
        return value if same else items
    if isinstance(value, list):
        converted = [valid_value(v) for v in value]
        return value if all(a is b for a, b in zip(value, converted, strict=True)) else converted
    return value


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

"""Typed messages and parts; protobuf stays in the service layer."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, replace
from typing import Any


class Role(enum.Enum):
    SYSTEM = "system"
    DEVELOPER = "developer"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class Kind(enum.Enum):
    ORDINARY = "ordinary"
    REMINDER = "reminder"
    SUMMARY = "summary"
    CONTINUATION = "continuation"
    RECEIPT = "receipt"
    REFUSAL = "refusal"


@dataclass(frozen=True, slots=True)
class Text:
    text: str


@dataclass(frozen=True, slots=True)
class Media:
    mime_type: str
    url: str = ""
    data: bytes = b""


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # byte for byte as the provider sent it


@dataclass(frozen=True, slots=True)
class ToolResult:
    tool_call_id: str
    content: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Reasoning:
    provider: str
    text: str = ""
    signature: bytes = b""
    encrypted: bytes = b""


Part = Text | Media | ToolCall | ToolResult | Reasoning


@dataclass(frozen=True, slots=True)
class Message:
    id: str
    role: Role
    parts: tuple[Part, ...]
    kind: Kind = Kind.ORDINARY
    response_id: str = ""
    created_at_ms: int = 0
    user_visible: bool = True
    agent_visible: bool = True
    # Set by the store: order within the session, and the position it sorts at
    # (a tool-pair summary takes the position of the result it stands for).
    seq: int = 0
    position: float = 0.0
    tokens: int = 0  # local estimate of what this message costs the model
    replaces: str = ""  # id of the message this one stands in for (tool-pair summaries)

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [p for p in self.parts if isinstance(p, ToolCall)]

    @property
    def tool_results(self) -> list[ToolResult]:
        return [p for p in self.parts if isinstance(p, ToolResult)]

    def with_visibility(self, user: bool, agent: bool) -> Message:
        return replace(self, user_visible=user, agent_visible=agent)


@dataclass(frozen=True, slots=True)
class VisibilityDefault:
    user_visible: bool
    agent_visible: bool


# What a producer that sets no flags gets; policy may override per kind.
DEFAULT_VISIBILITY: dict[Kind, VisibilityDefault] = {
    Kind.ORDINARY: VisibilityDefault(True, True),
    Kind.REMINDER: VisibilityDefault(False, True),
    Kind.SUMMARY: VisibilityDefault(False, True),
    Kind.CONTINUATION: VisibilityDefault(False, True),
    Kind.RECEIPT: VisibilityDefault(True, False),
    Kind.REFUSAL: VisibilityDefault(False, True),
}


def parts_to_json(parts: tuple[Part, ...]) -> str:
    """Storage form; bytes are hex so the JSON stays text."""
    out: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, Text):
            out.append({"t": "text", "text": part.text})
        elif isinstance(part, Media):
            out.append(
                {"t": "media", "mime": part.mime_type, "url": part.url, "data": part.data.hex()}
            )
        elif isinstance(part, ToolCall):
            out.append({"t": "call", "id": part.id, "name": part.name, "args": part.arguments})
        elif isinstance(part, ToolResult):
            out.append(
                {
                    "t": "result",
                    "id": part.tool_call_id,
                    "content": part.content,
                    "err": part.is_error,
                }
            )
        else:
            out.append({
                "t": "reasoning", "provider": part.provider, "text": part.text,
                "sig": part.signature.hex(), "enc": part.encrypted.hex(),
            })  # fmt: skip
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def parts_from_json(text: str) -> tuple[Part, ...]:
    parts: list[Part] = []
    for item in json.loads(text):
        kind = item["t"]
        if kind == "text":
            parts.append(Text(item["text"]))
        elif kind == "media":
            parts.append(Media(item["mime"], item["url"], bytes.fromhex(item["data"])))
        elif kind == "call":
            parts.append(ToolCall(item["id"], item["name"], item["args"]))
        elif kind == "result":
            parts.append(ToolResult(item["id"], item["content"], item["err"]))
        else:
            parts.append(
                Reasoning(item["provider"], item["text"], bytes.fromhex(item["sig"]),
                          bytes.fromhex(item["enc"]))
            )  # fmt: skip
    return tuple(parts)


@dataclass(frozen=True, slots=True)
class Usage:
    """What the provider reported for the model call that produced the last assistant
    message (or `through_message_id`): it covers the messages up to and including it."""

    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    output_tokens: int = 0
    context_limit: int = 0
    through_message_id: str = ""

    @property
    def total(self) -> int:
        """Anthropic's input_tokens excludes cached tokens, so they are added here."""
        return (
            self.input_tokens + self.cache_read_tokens + self.cache_creation_tokens
            + self.output_tokens
        )  # fmt: skip

    @property
    def reported(self) -> bool:
        return self.total > 0


@dataclass(slots=True)
class SessionState:
    """A session's settings and token bookkeeping, as stored."""

    id: str
    provider_managed: bool = False
    context_limit: int = 0
    version: int = 0  # bumped on every change: optimistic concurrency for compaction
    usage_tokens: int = 0  # the last provider-reported total, 0 when unknown or stale
    usage_seq: int = 0  # the seq of the message the reported usage covers up to
    calibration: float = 1.0  # provider tokens per estimated token, when learned
    recoveries: int = 0  # context_exceeded compactions in a row
    next_seq: int = 1
    calibrated_seq: int = 0  # the last seq when the calibration was learned; 0: never
    rewrite_seq: int = 0  # the first seq of the last compaction, summary or elision
    last_active_at: float = 0.0  # Unix time of the last Append or Project (retention)
    view_tokens: int = 0  # estimates of the agent-visible messages, summed
    result_tokens: int = 0  # of those, ordinary tool results (background summaries' check)

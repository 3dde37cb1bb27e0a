"""Building context messages and checking projections against providers' rules."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sidecar.context.messages import Message as DomainMessage
from sidecar.context.messages import Role, Text, ToolCall, ToolResult
from sidecar.context.pairing import pairing_problems
from sidecar.context.tokens import estimate
from sidecar.v1 import sidecar_pb2 as pb


def text(message_id: str, role: Any, body: str, **fields: Any) -> pb.Message:
    return pb.Message(
        id=message_id, role=role, parts=[pb.Part(text=pb.TextPart(text=body))], **fields
    )


def call(message_id: str, *calls: tuple[str, str, str], response_id: str = "") -> pb.Message:
    return pb.Message(
        id=message_id,
        role=pb.ROLE_ASSISTANT,
        response_id=response_id,
        parts=[pb.Part(tool_call=pb.ToolCallPart(id=i, name=n, arguments=a)) for i, n, a in calls],
    )


def result(message_id: str, call_id: str, content: str, is_error: bool = False) -> pb.Message:
    return pb.Message(
        id=message_id,
        role=pb.ROLE_TOOL,
        parts=[
            pb.Part(
                tool_result=pb.ToolResultPart(
                    tool_call_id=call_id, content=content, is_error=is_error
                )
            )
        ],
    )


_ROLES = {
    pb.ROLE_SYSTEM: Role.SYSTEM,
    pb.ROLE_DEVELOPER: Role.DEVELOPER,
    pb.ROLE_USER: Role.USER,
    pb.ROLE_ASSISTANT: Role.ASSISTANT,
    pb.ROLE_TOOL: Role.TOOL,
}


def provider_problems(messages: list[pb.Message]) -> list[str]:
    """OpenAI's and Anthropic's pairing rules, checked on what Project returned."""
    domain = []
    for m in messages:
        parts: list[object] = []
        for p in m.parts:
            if p.HasField("tool_call"):
                parts.append(ToolCall(p.tool_call.id, p.tool_call.name, p.tool_call.arguments))
            elif p.HasField("tool_result"):
                parts.append(ToolResult(p.tool_result.tool_call_id, p.tool_result.content))
        domain.append(DomainMessage(m.id, _ROLES[m.role], tuple(parts)))  # type: ignore[arg-type]
    problems = pairing_problems(domain)
    # Anthropic: the conversation after the system prompt starts with a user turn.
    first = next((m for m in messages if m.role not in (pb.ROLE_SYSTEM, pb.ROLE_DEVELOPER)), None)
    if first is not None and first.role != pb.ROLE_USER:
        problems.append(f"{first.id}: the first turn is not the user's")
    return problems


def domain(message: pb.Message) -> DomainMessage:
    """A returned message as the domain type, for the documented estimate."""
    parts: list[object] = []
    for p in message.parts:
        if p.HasField("text"):
            parts.append(Text(p.text.text))
        elif p.HasField("tool_call"):
            parts.append(ToolCall(p.tool_call.id, p.tool_call.name, p.tool_call.arguments))
        elif p.HasField("tool_result"):
            parts.append(ToolResult(p.tool_result.tool_call_id, p.tool_result.content))
    return DomainMessage(message.id, _ROLES[message.role], tuple(parts))  # type: ignore[arg-type]


def view_estimate(messages: Iterable[pb.Message]) -> int:
    """The README's estimate of what a returned view costs, independent of what the
    sidecar reported about it."""
    return sum(estimate(domain(m)) for m in messages)


async def history_of(stub: Any, session: str) -> list[pb.Message]:
    messages: list[pb.Message] = []
    token = ""
    while True:
        page = await stub.History(
            pb.HistoryRequest(session_id=session, page_size=1000, page_token=token)
        )
        messages += page.messages
        token = page.next_page_token
        if not token:
            return messages

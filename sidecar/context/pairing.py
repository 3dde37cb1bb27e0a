"""Tool-call pairing: what providers require, checked on append and on every projection.

OpenAI: "An assistant message with 'tool_calls' must be followed by tool messages
responding to each 'tool_call_id'". Anthropic: "`tool_use` ids were found without
`tool_result` blocks immediately after". In this model, an assistant message's
tool calls must be answered by the tool messages that come right after it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from sidecar.context.messages import Message, Role, ToolCall


class PairingError(ValueError):
    def __init__(self, message_id: str, problem: str) -> None:
        self.message_id = message_id
        super().__init__(f"message {message_id!r}: {problem}")


@dataclass(slots=True)
class PairingTracker:
    """Follows a session's agent-visible messages to accept only appends that keep
    the pairing valid. It holds the calls still waiting for results, and while a
    batch is checked the call ids it used; that a call id was never used before in
    the session is the store's to say (its index of call ids)."""

    pending: dict[str, str] = field(default_factory=dict)  # call id -> message id
    seen_calls: set[str] = field(default_factory=set)  # of the batch being checked

    def staged(self) -> PairingTracker:
        return PairingTracker(dict(self.pending))

    def settled(self) -> PairingTracker:
        """What is kept once the batch is stored."""
        return PairingTracker(self.pending)

    def _seen(self, call_id: str) -> bool:
        return call_id in self.seen_calls or call_id in self.pending

    def check(self, message: Message) -> None:
        calls, results = message.tool_calls, message.tool_results
        if calls and message.role is not Role.ASSISTANT:
            raise PairingError(message.id, "only assistant messages may hold tool calls")
        if results and message.role is not Role.TOOL:
            raise PairingError(message.id, "only tool messages may hold tool results")
        if message.role is Role.TOOL and (not results or len(results) != len(message.parts)):
            raise PairingError(message.id, "a tool message must hold only tool results")
        if not message.agent_visible:
            return  # the model never sees it, so it cannot break pairing
        if self.pending and message.role is not Role.TOOL:
            waiting = ", ".join(sorted(self.pending))
            raise PairingError(
                message.id,
                f"tool calls {waiting} have no results yet; their results must come next",
            )
        ids = [c.id for c in calls]
        for call in calls:
            if not call.id:
                raise PairingError(message.id, "a tool call has no id")
            if self._seen(call.id) or ids.count(call.id) > 1:
                raise PairingError(message.id, f"tool call id {call.id!r} is used twice")
        for result in results:
            if result.tool_call_id not in self.pending:
                raise PairingError(
                    message.id, f"tool result for {result.tool_call_id!r} answers no pending call"
                )

    def apply(self, message: Message) -> None:
        if not message.agent_visible:
            return
        for call in message.tool_calls:
            self.pending[call.id] = message.id
            self.seen_calls.add(call.id)
        for result in message.tool_results:
            self.pending.pop(result.tool_call_id, None)


def tracker_for(messages: Iterable[Message]) -> PairingTracker:
    """The calls waiting for results at the end of `messages` (the last group of a
    view is enough: calls are answered right after they are made)."""
    tracker = PairingTracker()
    for message in messages:
        tracker.apply(message)
    return tracker.settled()


def pairing_problems(messages: Sequence[Message]) -> list[str]:
    """Every way a message list breaks OpenAI's or Anthropic's pairing rules."""
    problems: list[str] = []
    pending: dict[str, str] = {}
    for message in messages:
        if pending and message.role is not Role.TOOL:
            problems.append(f"{message.id}: calls {sorted(pending)} are not answered right after")
            pending.clear()
        for result in message.tool_results:
            if result.tool_call_id not in pending:
                problems.append(f"{message.id}: result {result.tool_call_id} answers no call")
            pending.pop(result.tool_call_id, None)
        for call in message.tool_calls:
            pending[call.id] = message.id
    if pending:
        problems.append(f"calls {sorted(pending)} are never answered")
    return problems


def without_unanswered_calls(messages: list[Message]) -> list[Message]:
    """The projection's safety net: trailing calls still waiting for results (the
    runtime asked before running them) are left out, since providers reject them."""
    pending: set[str] = set()
    for message in messages:
        pending.update(c.id for c in message.tool_calls)
        pending.difference_update(r.tool_call_id for r in message.tool_results)
    if not pending:
        return messages
    kept: list[Message] = []
    for message in messages:
        if any(c.id in pending for c in message.tool_calls):
            parts = tuple(
                p for p in message.parts if not (isinstance(p, ToolCall) and p.id in pending)
            )
            if not parts:
                continue
            message = replace(message, parts=parts)
        kept.append(message)
    return kept


def groups(messages: Sequence[Message]) -> list[list[Message]]:
    """Split at safe boundaries: a group never separates calls from their results."""
    out: list[list[Message]] = []
    pending: set[str] = set()
    for message in messages:
        if not pending:
            out.append([])
        out[-1].append(message)
        pending.update(c.id for c in message.tool_calls)
        pending.difference_update(r.tool_call_id for r in message.tool_results)
    return out

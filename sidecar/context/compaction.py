"""Where compaction may cut a view, and what must stay.

A view is: the system prompt (leading system and developer messages), the span up
to the latest request (hidden behind a summary), the latest request (kept verbatim),
and the groups of calls and results after it (the oldest hidden, the newest kept).
Cuts fall only between complete groups, so no call is ever separated from its
results; the newest group is never hidden (it may hold calls still waiting).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sidecar.context.messages import Kind, Message, Role
from sidecar.context.pairing import groups

SIDECAR_KINDS = (Kind.SUMMARY, Kind.CONTINUATION)


@dataclass(frozen=True, slots=True)
class Layout:
    head: list[Message]
    span: list[Message]
    latest: Message | None
    groups: list[list[Message]]  # after the latest request; the last one is never hidden

    @property
    def anchors(self) -> list[Message]:
        return [*self.head, *([self.latest] if self.latest is not None else [])]


def layout(view: Sequence[Message]) -> Layout:
    head = 0
    while head < len(view) and view[head].role in (Role.SYSTEM, Role.DEVELOPER):
        head += 1
    latest = next(
        (
            i
            for i in range(len(view) - 1, head - 1, -1)
            if view[i].role is Role.USER and view[i].kind is Kind.ORDINARY
        ),
        None,
    )
    if latest is None:
        # No request to anchor on: everything but the newest group is the span.
        rest = groups(view[head:])
        span = [m for g in rest[:-1] for m in g]
        return Layout(list(view[:head]), span, None, rest[-1:])
    return Layout(
        list(view[:head]), list(view[head:latest]), view[latest], groups(view[latest + 1 :])
    )


def written_by_sidecar(messages: Sequence[Message]) -> bool:
    """Only summaries and notes of earlier compactions: hiding them alone would change
    nothing but the summary (and its id, which defeats prompt caching)."""
    return all(
        m.kind in SIDECAR_KINDS and m.role is not Role.TOOL and m.id.startswith("~")
        for m in messages
    )


def cost(messages: Sequence[Message]) -> int:
    return sum(m.tokens for m in messages)

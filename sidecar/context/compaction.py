"""Where compaction may cut a view, what must stay, and the plan of the result.

A view is: the system prompt (leading system and developer messages), the span up
to the latest request (hidden behind a summary), the latest request (kept verbatim),
and the groups of calls and results after it (the oldest hidden, the newest kept).
Cuts fall only between complete groups, so no call is ever separated from its
results; the newest group is never hidden (it may hold calls still waiting).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from sidecar.context.elision import MIN_ELIDED_TOKENS, elided, is_result
from sidecar.context.messages import Kind, Message, Role, Text
from sidecar.context.pairing import groups
from sidecar.context.summarizer import Summarizer, shorten
from sidecar.context.tokens import estimate

SIDECAR_KINDS = (Kind.SUMMARY, Kind.CONTINUATION)
SUMMARY_SHARE = 0.1  # of the context limit: the most one compaction summary may take
MIN_SUMMARY_TOKENS = 48
CONTINUATION_TEXT = (
    "Understood. The earlier conversation is summarised above; I will continue the task "
    "from where it stands."
)


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


@dataclass(frozen=True, slots=True)
class Budget:
    """What a plan must fit, in the units Project counts: `ratio` x estimate, plus
    `overhead` (what a provider report says beyond the calibrated estimate; a plan
    aims lower for it, but whether a view fits is judged without it)."""

    limit: int
    hard: float  # the plan must get under this (the threshold, as counted)
    preferred: float  # and aims at this, to leave room for the next turns
    ratio: float
    overhead: float
    summary_cap: int  # tokens one summary may take


@dataclass(frozen=True, slots=True)
class Plan:
    hidden: list[Message]  # as shown (pending calls cut)
    inserts: list[Message]  # summaries, the note, stand-ins, in seq order
    elided: list[str]  # originals shown shortened from now on
    total: float  # what the planned view costs, overhead included
    does_not_fit: str  # why, when even this view is over the limit; "" when it fits


class DoesNotFit(Exception):
    """The system prompt and the latest request alone exceed the limit."""


async def plan(
    shown: Sequence[Message],
    budget: Budget,
    summarizer: Summarizer,
    seq: int,
    now: int,
    original_of: Callable[[Message], Message | None],
) -> Plan:
    """The whole resulting view, the summaries it adds included, fitted under the
    threshold: hide the span before the latest request behind a summary; then as
    few of the oldest groups after it as leave headroom; then shorten the oldest kept
    tool results (from their originals: `original_of` a stand-in); then let the new
    summaries give up their room. Hiding only earlier summaries is no change: a plan
    with no inserts changes nothing, and the summary keeps its id."""
    limit, hard, preferred = budget.limit, budget.hard, budget.preferred
    ratio, overhead, summary_cap = budget.ratio, budget.overhead, budget.summary_cap
    parts = layout(shown)
    anchors = cost(parts.anchors)
    if ratio * anchors > limit:
        raise DoesNotFit(_too_large(parts, ratio, limit))
    inserts: list[Message] = []
    hidden: list[Message] = []
    kept: list[Message] = list(parts.head)
    if parts.span and not written_by_sidecar(parts.span):
        text = shorten(await summarizer.span(parts.span), summary_cap)
        position = parts.span[0].position
        summary = _sidecar_message(
            f"~summary-{seq}", Role.USER, text, Kind.SUMMARY, seq, position, now
        )
        note = _sidecar_message(
            f"~continuation-{seq + 1}", Role.ASSISTANT, CONTINUATION_TEXT,
            Kind.CONTINUATION, seq + 1, position, now,
        )  # fmt: skip
        inserts += [summary, note]
        hidden += parts.span
        kept += [summary, note]
        seq += 2
    else:
        kept += parts.span
    if parts.latest is not None:
        kept.append(parts.latest)
    # The oldest groups after the request: hide as few as leave headroom.
    base = cost(kept)
    tail_summary = summary_cap + 8
    # totals[k]: the view with the k oldest groups hidden (k = 0: none); only a k
    # that hides something other than an earlier summary counts as a change.
    rest = [0] * (len(parts.groups) + 1)
    for k in range(len(parts.groups) - 1, -1, -1):
        rest[k] = rest[k + 1] + cost(parts.groups[k])
    totals: list[tuple[int, float]] = [(0, overhead + ratio * (base + rest[0]))]
    real = False
    for k in range(1, len(parts.groups)):
        real = real or not written_by_sidecar(parts.groups[k - 1])
        if real:
            totals.append((k, overhead + ratio * (base + tail_summary + rest[k])))
    hide = next(
        (k for k, total in totals if total <= preferred),
        next(
            (k for k, total in totals if total < hard),
            min(totals, key=lambda choice: choice[1])[0],  # then the smallest view
        ),
    )
    if hide:
        hidden_tail = [m for g in parts.groups[:hide] for m in g]
        text = shorten(await summarizer.span(hidden_tail), summary_cap)
        summary = _sidecar_message(
            f"~summary-{seq}", Role.ASSISTANT, text, Kind.SUMMARY, seq,
            hidden_tail[0].position, now,
        )  # fmt: skip
        inserts.append(summary)
        hidden += hidden_tail
        kept.append(summary)
        seq += 1
    kept += [m for g in parts.groups[hide:] for m in g]
    # Last resort: shorten the oldest kept tool results until the view fits.
    total = overhead + ratio * cost(kept)
    elisions: dict[int, Message] = {}
    elided_ids: list[str] = []
    for index, message in enumerate(kept):
        if total < hard:
            break
        if not is_result(message) or message.tokens <= MIN_ELIDED_TOKENS:
            continue
        excess = math.ceil((total - hard) / ratio) + 1
        original = message if message.kind is Kind.ORDINARY else original_of(message)
        if original is None:
            continue
        stand_in = elided(original, max(message.tokens - excess, MIN_ELIDED_TOKENS), seq, now)
        if stand_in is None or stand_in.tokens >= message.tokens:
            continue
        elisions[index] = stand_in
        inserts.append(stand_in)
        hidden.append(message)
        elided_ids.append(original.id)
        total -= ratio * (message.tokens - stand_in.tokens)
        seq += 1
    kept = [elisions.get(i, m) for i, m in enumerate(kept)]
    # Then the summaries this compaction writes give up their room, down to a marker.
    for index, message in enumerate(kept):
        if total < hard:
            break
        if message.role is Role.TOOL or not any(message is m for m in inserts):
            continue
        excess = math.ceil((total - hard) / ratio) + 1
        text = "".join(p.text for p in message.parts if isinstance(p, Text))
        shorter = replace(message, parts=(Text(shorten(text, max(message.tokens - excess, 16))),))
        shorter = replace(shorter, tokens=estimate(shorter))
        inserts[next(i for i, m in enumerate(inserts) if m is message)] = shorter
        kept[index] = shorter
        total -= ratio * (message.tokens - shorter.tokens)
    does_not_fit = "" if total - overhead <= limit else _too_large(parts, ratio, limit, kept)
    return Plan(hidden, inserts, elided_ids, total, does_not_fit)


def _sidecar_message(
    message_id: str, role: Role, text: str, kind: Kind, seq: int, position: float, now: int
) -> Message:
    message = Message(
        id=message_id, role=role, parts=(Text(text),), kind=kind, created_at_ms=now,
        user_visible=False, agent_visible=True, seq=seq, position=position,
    )  # fmt: skip
    return replace(message, tokens=estimate(message))


def _too_large(
    parts: Layout,
    ratio: float,
    limit: int,
    kept: Sequence[Message] | None = None,
) -> str:
    """What must stay and does not fit, for the FAILED_PRECONDITION message."""
    head = round(ratio * cost(parts.head))
    pieces = [f"the system prompt ({head} tokens)"] if parts.head else []
    if parts.latest is not None:
        latest = round(ratio * parts.latest.tokens)
        pieces.append(f"the latest request {parts.latest.id!r} ({latest} tokens)")
    if kept is None:
        return (
            f"{' and '.join(pieces) or 'the messages that must stay'} alone exceed the "
            f"context limit of {limit} tokens; shorten the request or raise the limit"
        )
    newest = parts.groups[-1] if parts.groups else []
    if newest:
        ids = ", ".join(repr(m.id) for m in newest[:5]) + (", ..." if len(newest) > 5 else "")
        pieces.append(f"the newest messages {ids} ({round(ratio * cost(newest))} tokens)")
    return (
        f"the view cannot fit the context limit of {limit} tokens even compacted "
        f"({round(ratio * cost(kept))} tokens with tool results shortened): "
        f"{', '.join(pieces)} must stay; shorten them or raise the limit"
    )

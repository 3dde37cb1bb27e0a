"""Token accounting without a tokenizer download: provider usage first, estimates after.

The estimate is ~4 characters a token for text plus a per-message overhead; it
is calibrated per session by the ratio seen whenever the provider reports usage.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sidecar.context.messages import (
    Media,
    Message,
    Reasoning,
    SessionState,
    Text,
    ToolCall,
    ToolResult,
)

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4
MEDIA_TOKENS = 1_000  # a typical image; providers charge by size, which we do not know


def estimate(message: Message) -> int:
    total = MESSAGE_OVERHEAD
    for part in message.parts:
        if isinstance(part, Text):
            total += len(part.text) // CHARS_PER_TOKEN + 1
        elif isinstance(part, ToolCall):
            total += (len(part.name) + len(part.arguments)) // CHARS_PER_TOKEN + 8
        elif isinstance(part, ToolResult):
            total += len(part.content) // CHARS_PER_TOKEN + 8
        elif isinstance(part, Reasoning):
            total += (len(part.text) + len(part.encrypted)) // CHARS_PER_TOKEN + 4
        elif isinstance(part, Media):
            total += MEDIA_TOKENS
    return total


@dataclass(frozen=True, slots=True)
class TokenCount:
    tokens: int
    source: str  # "provider" or "estimate"


def count(state: SessionState, view: Sequence[Message], total: int) -> TokenCount:
    """Tokens the agent-visible messages (`view`, whose estimates sum to `total`) cost
    the model now. Only the messages after the last provider report are walked."""
    if state.usage_tokens > 0:
        # The provider counted everything up to usage_seq; estimate only what came after.
        after = 0
        for message in reversed(view):
            if message.seq <= state.usage_seq:
                break
            after += message.tokens
        return TokenCount(state.usage_tokens + round(after * state.calibration), "provider")
    return TokenCount(round(total * state.calibration), "estimate")


def calibrate(state: SessionState, reported: int, visible: Iterable[Message]) -> None:
    """Learn this session's provider-tokens-per-estimate ratio (smoothed)."""
    estimated = sum(m.tokens for m in visible)
    if estimated <= 0 or reported <= 0:
        return
    ratio = min(max(reported / estimated, 0.25), 4.0)
    state.calibration = ratio if state.calibration == 1.0 else 0.5 * state.calibration + 0.5 * ratio

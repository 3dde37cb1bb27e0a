"""Token accounting without a tokenizer download: provider usage first, estimates after.

A usage report covers the messages up to and including the assistant message its
model call produced; what came after is estimated (~4 bytes of UTF-8 a token plus a
per-part overhead) and multiplied by the session's calibration ratio, learned from
reports. The ratio is bounded and decays back towards 1 as messages arrive without a
new report, so one wrong report cannot skew a session for long.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
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

BYTES_PER_TOKEN = 4
MESSAGE_OVERHEAD = 4
MEDIA_TOKENS = 1_000  # a typical image; providers charge by size, which we do not know
CALIBRATION_MIN = 0.5
CALIBRATION_MAX = 2.0
CALIBRATION_HALF_LIFE = 20  # messages after which a learned ratio's effect halves


def text_tokens(text: str) -> int:
    # UTF-8 bytes, not characters: CJK and emoji cost tokenizers more per character.
    return len(text.encode("utf-8", "surrogatepass")) // BYTES_PER_TOKEN


def result_tokens(result: ToolResult) -> int:
    return text_tokens(result.content) + 8


def estimate(message: Message) -> int:
    total = MESSAGE_OVERHEAD
    for part in message.parts:
        if isinstance(part, Text):
            total += text_tokens(part.text) + 1
        elif isinstance(part, ToolCall):
            total += text_tokens(part.name) + text_tokens(part.arguments) + 8
        elif isinstance(part, ToolResult):
            total += result_tokens(part)
        elif isinstance(part, Reasoning):
            total += text_tokens(part.text) + len(part.encrypted) // BYTES_PER_TOKEN + 4
        elif isinstance(part, Media):
            total += MEDIA_TOKENS
    return total


@dataclass(frozen=True, slots=True)
class TokenCount:
    """tokens = provider + estimated; `through` names the last message the
    provider-reported part covers ("" when there is none)."""

    provider: int
    estimated: int
    through: str = ""

    @property
    def tokens(self) -> int:
        return self.provider + self.estimated

    @property
    def source(self) -> str:
        return "provider" if self.provider > 0 else "estimate"


def calibration(state: SessionState) -> float:
    """The ratio in effect now: the learned one, decayed towards 1 by the messages
    the runtime stored since it was learned (compaction moves `calibrated_seq` on by
    the messages it writes)."""
    if state.calibrated_seq <= 0 or state.calibration == 1.0:
        return 1.0
    age = max(state.next_seq - 1 - state.calibrated_seq, 0)
    return math.exp(math.log(state.calibration) * 0.5 ** (age / CALIBRATION_HALF_LIFE))


def calibrate(state: SessionState, reported: int, estimated: int) -> None:
    """Learn provider tokens per estimated token from a report and the estimate of
    exactly the messages it covers (a geometric mean with what was known, bounded)."""
    if estimated <= 0 or reported <= 0:
        return
    ratio = min(max(reported / estimated, CALIBRATION_MIN), CALIBRATION_MAX)
    known = calibration(state)
    if state.calibrated_seq > 0:
        ratio = math.sqrt(known * ratio)
    state.calibration = ratio
    state.calibrated_seq = state.next_seq - 1


def raise_calibration(state: SessionState, at_least: float) -> None:
    """The provider said the view is larger than we thought (context exceeded)."""
    ratio = min(max(at_least, calibration(state)), CALIBRATION_MAX)
    state.calibration = ratio
    state.calibrated_seq = state.next_seq - 1


def count(
    state: SessionState, view: Sequence[Message], prefix: int, tail: Sequence[Message], total: int
) -> TokenCount:
    """What the projected view (`view[:prefix] + tail`; `total` is the sum of `view`'s
    estimates) costs the model: the usage report, if one is current, for the messages
    it covers, plus the calibrated estimate of the rest. Only the messages after the
    report are visited, from the end."""
    ratio = calibration(state)
    if state.usage_tokens > 0:
        after = 0
        shown = (view[i] for i in range(prefix - 1, -1, -1))  # no copy of the view
        for message in itertools.chain(reversed(tail), shown):
            # The covered message was sent by the runtime: its position is its seq.
            if message.position <= state.usage_seq:
                if message.seq == state.usage_seq:
                    return TokenCount(state.usage_tokens, round(after * ratio), message.id)
                break
            after += message.tokens
    tokens = total - sum(m.tokens for m in view[prefix:]) + sum(m.tokens for m in tail)
    return TokenCount(0, round(tokens * ratio))

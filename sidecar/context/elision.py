"""Tool results shown shortened: head and tail kept, a note of what was cut in between.

The agent sees the elided form (a stand-in message answering the same call); the
original stays in History. The note says how much was cut, where the full output is,
and how to see more, so the model can ask for a narrower output instead of guessing.
"""

from __future__ import annotations

from dataclasses import replace

from sidecar.context.messages import Kind, Message, Role, ToolResult
from sidecar.context.tokens import MESSAGE_OVERHEAD, estimate, result_tokens, text_tokens

HEAD_SHARE = 0.75  # of the kept characters; the tail holds the rest (errors come last)
# The smallest a result is ever shortened to: little more than the short note.
MIN_ELIDED_TOKENS = 40
_NOTE = (
    "\n[... {cut:,} of {total:,} characters ({lines:,} lines) elided here to fit the "
    "context window. The full output is kept in the session history as message "
    "{message_id!r}; to see the elided part, run the tool again with a narrower request "
    "(a line range, a search, head or tail). ...]\n"
)
# When room is short, the note is too.
_SHORT_NOTE = "\n[... {cut:,} characters elided; all of it: message {message_id!r} ...]\n"


def elide_text(text: str, max_tokens: int, message_id: str) -> str:
    """`text` within `max_tokens` (by the estimate), keeping its head and tail."""
    if text_tokens(text) <= max_tokens:
        return text
    note = _NOTE if max_tokens * 4 >= 3 * len(_NOTE) else _SHORT_NOTE
    keep = max(max_tokens * 4 - len(note) - 40, 0)
    for _ in range(8):
        head = int(keep * HEAD_SHARE)
        tail = keep - head
        cut = text[head : len(text) - tail]
        shortened = (
            text[:head]
            + note.format(
                cut=len(cut), total=len(text), lines=cut.count("\n"), message_id=message_id
            )
            + text[len(text) - tail :]
        )
        over = text_tokens(shortened) - max_tokens
        if over <= 0 or keep == 0:
            return shortened
        # Non-ASCII text costs more than a token per 4 characters: shrink and retry.
        keep = max(keep - over * 4 - 16, 0)
    return shortened


def elided(message: Message, max_tokens: int, seq: int, now_ms: int) -> Message | None:
    """A stand-in for a tool message whose results are shortened to fit `max_tokens`,
    or None when it already fits. `message` is the original (never a stand-in)."""
    if message.role is not Role.TOOL or message.tokens <= max_tokens:
        return None
    results = message.tool_results
    fixed = MESSAGE_OVERHEAD + 8 * len(results)
    content = sum(result_tokens(r) - 8 for r in results) or 1
    budget = max(max_tokens - fixed, len(results))
    parts = tuple(
        replace(
            r,
            content=elide_text(
                r.content, max(budget * (result_tokens(r) - 8) // content, 1), message.id
            ),
        )
        for r in results
    )
    stand_in = Message(
        id=f"~{message.id}~elided-{seq}", role=Role.TOOL, parts=parts, kind=Kind.SUMMARY,
        response_id=message.response_id, created_at_ms=now_ms, user_visible=False,
        agent_visible=True, seq=seq, position=message.position, replaces=message.id,
    )  # fmt: skip
    return replace(stand_in, tokens=estimate(stand_in))


def is_result(message: Message) -> bool:
    return message.role is Role.TOOL and all(isinstance(p, ToolResult) for p in message.parts)

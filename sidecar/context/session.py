"""A session as kept in memory, and the cache that holds sessions within a byte budget.

Only what Append and Project need is kept: the session's state, its agent-visible
view (what Project returns; History reads the store), the view's token total and the
pairing tracker. The view list is only ever extended in place; anything else (a
compaction, a summary, an elision, undoing a failed call) gives the session a new
list, so that whoever holds the old one (the encoded-view cache) can tell.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from sidecar.context.messages import (
    Kind,
    Media,
    Message,
    Reasoning,
    Role,
    SessionState,
    Text,
    ToolCall,
    ToolResult,
)
from sidecar.context.pairing import PairingTracker, tracker_for, without_unanswered_calls
from sidecar.context.tokens import estimate

SESSION_BYTES = 2_000  # the session object, its lock, its state
MESSAGE_BYTES = 220  # a Message object, its tuple of parts and its slot in the view
PART_BYTES = 110
SEEN_CALL_BYTES = 110  # a set entry and its string's header


def _str_bytes(text: str) -> int:
    # CPython keeps ASCII at a byte a character, anything else at up to four.
    return 49 + (len(text) if text.isascii() else 4 * len(text))


def message_bytes(message: Message) -> int:
    """What a message costs in memory, approximately (an upper bound for text)."""
    total = MESSAGE_BYTES + _str_bytes(message.id) + len(message.response_id)
    for part in message.parts:
        total += PART_BYTES
        if isinstance(part, Text):
            total += _str_bytes(part.text)
        elif isinstance(part, ToolCall):
            total += _str_bytes(part.id) + _str_bytes(part.name) + _str_bytes(part.arguments)
        elif isinstance(part, ToolResult):
            total += _str_bytes(part.tool_call_id) + _str_bytes(part.content)
        elif isinstance(part, Reasoning):
            total += _str_bytes(part.text) + len(part.signature) + len(part.encrypted)
        elif isinstance(part, Media):
            total += len(part.url) + len(part.data)
    return total


@dataclass(slots=True)
class _Saved:
    state: SessionState
    view: list[Message]
    length: int
    view_tokens: int
    view_bytes: int
    tracker: PairingTracker
    last_assistant: Message | None
    result_tokens: int
    scanned: tuple[int, int]


@dataclass(slots=True)
class Session:
    state: SessionState
    view: list[Message]  # agent-visible, in (position, seq) order
    persisted: bool  # False until the call that creates it is stored
    view_tokens: int = 0
    view_bytes: int = 0
    tracker: PairingTracker = field(default_factory=PairingTracker)
    # The last ordinary assistant message in the view: what a usage report covers.
    last_assistant: Message | None = None
    result_tokens: int = 0  # of ordinary tool results in the view (summaries' pre-check)
    scanned: tuple[int, int] = (0, 0)  # (limit, view length) checked for oversized results
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0  # calls holding or waiting for the lock
    summarising: bool = False
    deleted: bool = False

    @classmethod
    def loaded(cls, state: SessionState, view: list[Message]) -> Session:
        session = cls(state, [], persisted=True)
        session.replace_view(view)
        return session

    @property
    def busy(self) -> bool:
        return self.users > 0 or self.lock.locked() or self.summarising

    @property
    def memory(self) -> int:
        return SESSION_BYTES + self.view_bytes + SEEN_CALL_BYTES * len(self.tracker.seen_calls)

    def extend(self, messages: Sequence[Message]) -> None:
        """Agent-visible messages appended at the end (in place: see the module doc)."""
        for message in messages:
            self.view.append(message)
            self._count(message, 1)

    def replace_view(self, view: list[Message]) -> None:
        self.view = view
        self.view_tokens = self.view_bytes = self.result_tokens = 0
        self.last_assistant = None
        for message in view:
            self._count(message, 1)
        self.tracker = tracker_for(view)
        self.scanned = (0, 0)

    def _count(self, message: Message, sign: int) -> None:
        self.view_tokens += sign * message.tokens
        self.view_bytes += sign * message_bytes(message)
        if message.role is Role.TOOL and message.kind is Kind.ORDINARY:
            self.result_tokens += sign * message.tokens
        if message.role is Role.ASSISTANT and message.kind is Kind.ORDINARY and sign > 0:
            self.last_assistant = message

    def save(self) -> _Saved:
        return _Saved(
            replace(self.state), self.view, len(self.view), self.view_tokens, self.view_bytes,
            self.tracker, self.last_assistant, self.result_tokens, self.scanned,
        )  # fmt: skip

    def restore(self, saved: _Saved) -> None:
        """Undo a call that failed: the view is given back as a new list."""
        self.state = saved.state
        if self.view is not saved.view or len(saved.view) != saved.length:
            self.view = saved.view[: saved.length]
        self.view_tokens, self.view_bytes = saved.view_tokens, saved.view_bytes
        self.tracker, self.last_assistant = saved.tracker, saved.last_assistant
        self.result_tokens, self.scanned = saved.result_tokens, saved.scanned

    def projection(self) -> tuple[int, list[Message]]:
        """How much of the view is sent as is, and the repaired tail after it (calls
        still waiting for their results are left out)."""
        view = self.view
        pending = self.tracker.pending
        if not pending:
            return len(view), []
        # Pending calls are always in the last assistant message that made calls.
        start = len(view)
        while start > 0 and not any(c.id in pending for c in view[start - 1].tool_calls):
            start -= 1
        start = max(start - 1, 0)
        kept = {id(m) for m in view[start:]}
        tail = without_unanswered_calls(view[start:])
        # A message that lost its waiting calls costs less: estimate it again.
        return start, [m if id(m) in kept else replace(m, tokens=estimate(m)) for m in tail]

    def find(self, message_id: str) -> Message | None:
        """A message of the view by id, searched from the end (usually close to it)."""
        for index in range(len(self.view) - 1, -1, -1):
            if self.view[index].id == message_id:
                return self.view[index]
        return None


class SessionCache:
    """Sessions by id, least recently used first, within `max_bytes`. Busy sessions
    (a call or a background summary holds them) are never evicted."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._sizes: dict[str, int] = {}
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._sessions)

    def __iter__(self) -> Iterator[Session]:
        return iter(list(self._sessions.values()))

    def get(self, session_id: str) -> Session | None:
        session = self._sessions.get(session_id)
        if session is not None:
            self._sessions.move_to_end(session_id)
        return session

    def put(self, session: Session, keep: bool = False) -> None:
        """Add or re-measure a session, then evict the least recently used idle ones to
        fit; with `keep`, never this one (it is about to be used)."""
        key = session.state.id
        memory = session.memory
        self.bytes += memory - self._sizes.get(key, 0)
        self._sizes[key] = memory
        self._sessions[key] = session
        self._sessions.move_to_end(key)
        if self.bytes > self.max_bytes:
            for other_key, other in list(self._sessions.items()):
                if self.bytes <= self.max_bytes:
                    break
                if not other.busy and not (keep and other is session):
                    self.pop(other_key)

    def pop(self, session_id: str) -> Session | None:
        session = self._sessions.pop(session_id, None)
        self.bytes -= self._sizes.pop(session_id, 0)
        return session

"""A session as kept in memory, and the cache that holds sessions within a byte budget.

An Append needs little of a session: its state (with the view's token sums), the calls
waiting for results and the last assistant message; duplicate message and call ids are
checked by the store's indexes. So a session can be held light, without its view, and
an Append costs the same at 100 messages as at 10,000. Project needs the agent-visible
view (History reads the store): it is loaded when first needed and kept while the
budget allows. The view list is only ever extended in place; anything else (a
compaction, a summary, an elision, undoing a failed call, loading it again) gives the
session a new list, so that whoever holds the old one (the encoded-view cache) can tell.
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
    view: list[Message] | None
    length: int
    view_bytes: int
    tracker: PairingTracker
    last_assistant: Message | None
    scanned: tuple[int, int]


@dataclass(slots=True)
class Session:
    state: SessionState  # view_tokens and result_tokens are kept up to date with the view
    view: list[Message] | None  # agent-visible, in (position, seq) order; None: not loaded
    persisted: bool  # False until the call that creates it is stored
    view_bytes: int = 0
    tracker: PairingTracker = field(default_factory=PairingTracker)
    # The last ordinary assistant message in the view: what a usage report covers.
    last_assistant: Message | None = None
    scanned: tuple[int, int] = (0, 0)  # (limit, view length) checked for oversized results
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0  # calls holding or waiting for the lock
    summarising: bool = False
    deleted: bool = False

    @classmethod
    def light(
        cls, state: SessionState, last_group: list[Message], last_assistant: Message | None
    ) -> Session:
        return cls(state, None, True, 0, tracker_for(last_group), last_assistant)

    @property
    def busy(self) -> bool:
        return self.users > 0 or self.lock.locked() or self.summarising

    @property
    def memory(self) -> int:
        return SESSION_BYTES + self.view_bytes + PART_BYTES * len(self.tracker.pending)

    def extend(self, messages: Sequence[Message]) -> None:
        """Agent-visible messages appended at the end (in place: see the module doc)."""
        state = self.state
        for message in messages:
            state.view_tokens += message.tokens
            if message.role is Role.TOOL and message.kind is Kind.ORDINARY:
                state.result_tokens += message.tokens
            if message.role is Role.ASSISTANT and message.kind is Kind.ORDINARY:
                self.last_assistant = message
            if self.view is not None:
                self.view.append(message)
                self.view_bytes += message_bytes(message)

    def attach(self, view: list[Message]) -> None:
        """The view, loaded from the store (the state's sums already describe it)."""
        self.view = view
        self.view_bytes = sum(message_bytes(m) for m in view)
        self.scanned = (0, 0)

    def drop_view(self) -> None:
        self.view = None
        self.view_bytes = 0
        self.scanned = (0, 0)

    def replace_view(self, view: list[Message]) -> None:
        """A view rewritten in memory: everything derived from it is counted again."""
        self.state.view_tokens = self.state.result_tokens = 0
        self.last_assistant = self.view = None
        self.extend(view)  # counts only, while no view is held
        self.view = view
        self.view_bytes = sum(message_bytes(m) for m in view)
        self.tracker = tracker_for(last_group(view))
        self.scanned = (0, 0)

    def save(self) -> _Saved:
        view = self.view
        return _Saved(
            replace(self.state), view, len(view) if view is not None else 0, self.view_bytes,
            self.tracker, self.last_assistant, self.scanned,
        )  # fmt: skip

    def restore(self, saved: _Saved) -> None:
        """Undo a call that failed: the view is given back as a new list."""
        self.state = saved.state
        if saved.view is None:
            self.view = None
        elif self.view is not saved.view or len(saved.view) != saved.length:
            self.view = saved.view[: saved.length]
        self.view_bytes, self.tracker = saved.view_bytes, saved.tracker
        self.last_assistant, self.scanned = saved.last_assistant, saved.scanned

    def projection(self) -> tuple[int, list[Message]]:
        """How much of the view is sent as is, and the repaired tail after it (calls
        still waiting for their results are left out). The view must be loaded."""
        view = self.view
        assert view is not None
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
        """A message of the loaded view by id, searched from the end (usually close)."""
        view = self.view or []
        for index in range(len(view) - 1, -1, -1):
            if view[index].id == message_id:
                return view[index]
        return None


def last_group(view: Sequence[Message]) -> Sequence[Message]:
    """The view from its last message that is not a tool result: calls still waiting
    for results can only be there."""
    start = len(view) - 1
    while start > 0 and view[start].role is Role.TOOL:
        start -= 1
    return view[max(start, 0) :]


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
        if self.bytes <= self.max_bytes:
            return
        idle = [
            (k, s) for k, s in self._sessions.items() if not s.busy and not (keep and s is session)
        ]
        # Views go first (the least recently used); a light session costs little.
        for other_key, other in idle:
            if self.bytes <= self.max_bytes:
                return
            if other.view is not None:
                other.drop_view()
                self.bytes += other.memory - self._sizes[other_key]
                self._sizes[other_key] = other.memory
        for other_key, _ in idle:
            if self.bytes <= self.max_bytes:
                return
            self.pop(other_key)

    def pop(self, session_id: str) -> Session | None:
        session = self._sessions.pop(session_id, None)
        self.bytes -= self._sizes.pop(session_id, 0)
        return session

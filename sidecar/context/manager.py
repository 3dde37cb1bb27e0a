"""Sessions: append, project (with compaction), history, and background summaries.

Each session's messages are cached in memory (bounded) in (position, seq) order; the
store is the persisted truth. Changes to one session are serialised by a lock; a
compaction or summary is written only if the session's version is still the one it
was planned against (optimistic concurrency), so a history that changed meanwhile is
never overwritten. Nothing is ever deleted: flags flip and summaries are inserted.
"""

from __future__ import annotations

import asyncio
import bisect
import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from sidecar.context.messages import (
    DEFAULT_VISIBILITY,
    Kind,
    Message,
    Part,
    Role,
    SessionState,
    Text,
    ToolResult,
    Usage,
    VisibilityDefault,
)
from sidecar.context.pairing import (
    PairingTracker,
    groups,
    tracker_for,
    without_unanswered_calls,
)
from sidecar.context.store import SessionStore
from sidecar.context.summarizer import FallbackSummarizer, ModelSummarizer, Summarizer
from sidecar.context.tokens import TokenCount, calibrate, count, estimate
from sidecar.model_client import ChatModelClient
from sidecar.observability.metrics import Metrics
from sidecar.policy.schema import ContextPolicy, SummarizerPolicy

log = logging.getLogger("sidecar.context")

CONTINUATION_TEXT = (
    "Understood. The earlier conversation is summarised above; I will continue the task "
    "from where it stands."
)


class ContextError(Exception):
    """Bad input: becomes INVALID_ARGUMENT naming the field or message."""

    def __init__(self, field_name: str, problem: str) -> None:
        self.field = field_name
        super().__init__(f"{field_name}: {problem}")


class ContextExhausted(Exception):
    """Compaction cannot help any more: becomes FAILED_PRECONDITION."""


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message as a runtime sends it: flags may be unset (None)."""

    id: str
    role: Role
    parts: tuple[Part, ...]
    kind: Kind = Kind.ORDINARY
    response_id: str = ""
    created_at_ms: int = 0
    user_visible: bool | None = None
    agent_visible: bool | None = None


@dataclass(frozen=True, slots=True)
class CompactionResult:
    trigger: str
    hidden: int
    inserted: tuple[str, ...]
    tokens_before: int
    tokens_after: int


@dataclass(frozen=True, slots=True)
class Projection:
    """The model's view: `view[:prefix]` followed by `tail`.

    `view` is the session's cached agent-visible list, shared and only ever
    extended in place (a compaction builds a new one), so callers can reuse work
    done on its prefix; `tail` holds messages repaired for this answer (calls
    still waiting for their results are left out).
    """

    view: list[Message]
    prefix: int
    tail: list[Message]
    tokens: TokenCount
    limit: int
    compaction: CompactionResult | None

    @property
    def messages(self) -> list[Message]:
        return self.view[: self.prefix] + self.tail


@dataclass(slots=True)
class _Session:
    state: SessionState
    messages: list[Message]  # all of them, in (position, seq) order
    tracker: PairingTracker
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    summarising: bool = False
    # The agent-visible messages, kept up to date on append; rebuilt after a
    # compaction or summary. Project's cost then does not grow with history.
    view: list[Message] | None = None
    view_tokens: int = 0

    def visible(self) -> list[Message]:
        if self.view is None:
            self.view = [m for m in self.messages if m.agent_visible]
            self.view_tokens = sum(m.tokens for m in self.view)
        return self.view

    def extend_view(self, added: Sequence[Message]) -> None:
        if self.view is not None:
            for message in added:
                if message.agent_visible:
                    self.view.append(message)
                    self.view_tokens += message.tokens

    def projection_parts(self) -> tuple[list[Message], int, list[Message]]:
        """The view, how much of it is sent as is, and the repaired tail."""
        view = self.visible()
        if not self.tracker.pending:
            return view, len(view), []
        # Pending calls are always in the last assistant message that made calls.
        pending = self.tracker.pending
        start = len(view)
        while start > 0 and not any(c.id in pending for c in view[start - 1].tool_calls):
            start -= 1
        start = max(start - 1, 0)
        return view, start, without_unanswered_calls(view[start:])

    def insert(self, message: Message) -> None:
        keys = [(m.position, m.seq) for m in self.messages]
        self.messages.insert(bisect.bisect(keys, (message.position, message.seq)), message)

    def replace_message(self, message: Message) -> None:
        for index, existing in enumerate(self.messages):
            if existing.seq == message.seq:
                self.messages[index] = message
                return


class ContextManager:
    def __init__(
        self,
        store: SessionStore,
        policy: Callable[[], ContextPolicy],
        metrics: Metrics,
        max_cached_sessions: int = 1_000,
    ) -> None:
        self._store = store
        self._policy = policy
        self._metrics = metrics
        self._cache: OrderedDict[str, _Session] = OrderedDict()
        self._max_cached = max_cached_sessions
        self._tasks: set[asyncio.Task[None]] = set()
        self._summarizers: dict[SummarizerPolicy, ModelSummarizer] = {}

    # -- sessions ---------------------------------------------------------------

    def _session(self, session_id: str) -> _Session | None:
        session = self._cache.get(session_id)
        if session is not None:
            self._cache.move_to_end(session_id)
            return session
        loaded = self._store.load(session_id)
        if loaded is None:
            return None
        state, messages = loaded
        session = _Session(state, messages, tracker_for(messages))
        self._remember(session)
        return session

    def _remember(self, session: _Session) -> None:
        self._cache[session.state.id] = session
        self._cache.move_to_end(session.state.id)
        while len(self._cache) > self._max_cached:
            oldest = next(iter(self._cache.values()))
            if oldest.lock.locked() or oldest.summarising:
                break  # busy; evict later
            self._cache.popitem(last=False)

    def _session_or_new(self, session_id: str, provider_managed: bool) -> tuple[_Session, bool]:
        session = self._session(session_id)
        if session is not None:
            return session, False
        state = SessionState(id=session_id, provider_managed=provider_managed)
        session = _Session(state, [], PairingTracker())
        return session, True

    # -- append -----------------------------------------------------------------

    async def append(
        self,
        session_id: str,
        messages: Sequence[NewMessage],
        usage: Usage | None,
        provider_managed: bool = False,
    ) -> int:
        session, created = self._session_or_new(session_id, provider_managed)
        async with session.lock:
            self._append_locked(session, messages, usage, created)
            count_now = len(session.messages)
        self._schedule_summaries(session)
        return count_now

    def _append_locked(
        self,
        session: _Session,
        messages: Sequence[NewMessage],
        usage: Usage | None,
        created: bool,
    ) -> None:
        if not messages and created:
            raise ContextError("messages", "a new session needs at least one message")
        state = session.state
        known = {m.id for m in session.messages}
        tracker = PairingTracker(dict(session.tracker.pending), set(session.tracker.seen_calls))
        prepared: list[Message] = []
        next_seq = state.next_seq
        defaults = self._kind_defaults()
        now = int(time.time() * 1000)
        for index, new in enumerate(messages):
            where = f"messages[{index}]"
            if not new.id:
                raise ContextError(f"{where}.id", "must not be empty")
            if new.id in known:
                raise ContextError(f"{where}.id", f"duplicate message id {new.id!r}")
            if not new.parts:
                raise ContextError(where, f"message {new.id!r} has no parts")
            known.add(new.id)
            default = defaults[new.kind]
            message = Message(
                id=new.id,
                role=new.role,
                parts=new.parts,
                kind=new.kind,
                response_id=new.response_id,
                created_at_ms=new.created_at_ms or now,
                user_visible=default.user_visible if new.user_visible is None else new.user_visible,
                agent_visible=(
                    default.agent_visible if new.agent_visible is None else new.agent_visible
                ),
                seq=next_seq,
                position=float(next_seq),
            )
            message = replace(message, tokens=estimate(message))
            try:
                tracker.check(message)
            except ValueError as error:
                raise ContextError(where, str(error)) from None
            tracker.apply(message)
            prepared.append(message)
            next_seq += 1
        new_state = replace(state, next_seq=next_seq, version=state.version + 1)
        if usage is not None:
            self._take_usage(
                new_state, usage, session.visible() + [m for m in prepared if m.agent_visible]
            )
        if not prepared and usage is None:
            return
        self._store.append(new_state, prepared, created)
        session.state = new_state
        session.messages.extend(prepared)
        session.extend_view(prepared)
        session.tracker = tracker
        if created:
            self._remember(session)

    def _take_usage(self, state: SessionState, usage: Usage, visible: list[Message]) -> None:
        if usage.context_limit > 0:
            state.context_limit = usage.context_limit
        if usage.reported:
            calibrate(state, usage.total, visible)
            state.usage_tokens = usage.total
            state.usage_seq = state.next_seq - 1

    def _kind_defaults(self) -> dict[Kind, VisibilityDefault]:
        defaults = dict(DEFAULT_VISIBILITY)
        for name, visibility in self._policy().kinds.items():
            defaults[Kind(name)] = VisibilityDefault(
                visibility.user_visible, visibility.agent_visible
            )
        return defaults

    # -- project ----------------------------------------------------------------

    async def project(
        self,
        session_id: str,
        messages: Sequence[NewMessage],
        usage: Usage | None,
        context_limit: int,
        context_exceeded: bool,
        provider_managed: bool = False,
    ) -> Projection:
        session, created = self._session_or_new(session_id, provider_managed)
        if created and not messages:
            raise ContextError("session_id", f"unknown session {session_id!r}")
        policy = self._policy()
        async with session.lock:
            if messages or usage is not None:
                self._append_locked(session, messages, usage, created)
            state = session.state
            limit = context_limit or state.context_limit or policy.default_context_limit
            before = count(state, session.visible(), session.view_tokens)
            compaction: CompactionResult | None = None
            if context_exceeded:
                if state.provider_managed:
                    raise ContextExhausted(
                        "the provider manages this session's context; "
                        "the sidecar does not compact it"
                    )
                if state.recoveries >= policy.max_recovery_compactions:
                    self._metrics.compactions.labels(
                        trigger="context_exceeded", result="exhausted"
                    ).inc()
                    raise ContextExhausted(
                        f"the context is still too large after {state.recoveries} recovery "
                        "compactions in a row; start a new session or raise the context limit"
                    )
                compaction = await self._compact(session, "context_exceeded", before, limit)
            else:
                if state.recoveries:
                    session.state = replace(state, recoveries=0)
                    self._store.save_state(session.state)
                over = limit > 0 and before.tokens > policy.compaction_threshold * limit
                if over and not state.provider_managed:
                    compaction = await self._compact(session, "threshold", before, limit)
            view, prefix, tail = session.projection_parts()
            tokens = count(session.state, view, session.view_tokens)
        self._metrics.projected_tokens.observe(tokens.tokens)
        self._schedule_summaries(session)
        return Projection(view, prefix, tail, tokens, limit, compaction)

    async def _compact(
        self, session: _Session, trigger: str, before: TokenCount, limit: int
    ) -> CompactionResult:
        """Hide the span between the system prompt and the latest request behind a
        summary; if that is not enough, the older groups after the request too."""
        visible = session.visible()
        head = 0
        while head < len(visible) and visible[head].role in (Role.SYSTEM, Role.DEVELOPER):
            head += 1
        latest = max(
            (i for i, m in enumerate(visible) if m.role is Role.USER and m.kind is Kind.ORDINARY),
            default=len(visible),
        )
        span = visible[head:latest] if latest > head else []
        tail = visible[latest + 1 :] if latest < len(visible) else []
        tail_groups = groups(tail)
        budget = self._policy().compaction_threshold * limit if limit else 0
        keep_tail = tail
        if tail_groups and len(tail_groups) > 1:
            kept_tokens = sum(m.tokens for m in visible[:head]) + (
                visible[latest].tokens if latest < len(visible) else 0
            )
            # Keep the newest groups after the request that fit; hide the older ones.
            kept: list[list[Message]] = []
            for group in reversed(tail_groups):
                cost = sum(m.tokens for m in group)
                if kept and (not budget or kept_tokens + cost > budget * 0.6):
                    break
                kept.insert(0, group)
                kept_tokens += cost
            keep_tail = [m for g in kept for m in g]
        hidden_tail = tail[: len(tail) - len(keep_tail)]
        if not span and not hidden_tail:
            self._metrics.compactions.labels(trigger=trigger, result="nothing_to_compact").inc()
            if trigger == "context_exceeded":
                session.state = replace(session.state, recoveries=session.state.recoveries + 1)
                self._store.save_state(session.state)
            return CompactionResult(trigger, 0, (), before.tokens, before.tokens)

        expected = session.state.version
        summarizer = self._summarizer()
        inserts: list[Message] = []
        next_seq = session.state.next_seq
        now = int(time.time() * 1000)
        for hidden, role_after in ((span, Role.USER), (hidden_tail, Role.ASSISTANT)):
            if not hidden:
                continue
            text = await summarizer.span(hidden)
            position = hidden[0].position
            summary = Message(
                id=f"summary-{next_seq}", role=role_after, parts=(Text(text),), kind=Kind.SUMMARY,
                created_at_ms=now, user_visible=False, agent_visible=True, seq=next_seq,
                position=position,
            )  # fmt: skip
            inserts.append(replace(summary, tokens=estimate(summary)))
            next_seq += 1
            if role_after is Role.USER:
                note = Message(
                    id=f"continuation-{next_seq}", role=Role.ASSISTANT,
                    parts=(Text(CONTINUATION_TEXT),), kind=Kind.CONTINUATION, created_at_ms=now,
                    user_visible=False, agent_visible=True, seq=next_seq, position=position,
                )  # fmt: skip
                inserts.append(replace(note, tokens=estimate(note)))
                next_seq += 1
        flips = [m.with_visibility(m.user_visible, False) for m in [*span, *hidden_tail]]
        recoveries = session.state.recoveries + (1 if trigger == "context_exceeded" else 0)
        new_state = replace(
            session.state,
            next_seq=next_seq,
            version=expected + 1,
            usage_tokens=0,  # the provider's count no longer describes the view
            recoveries=recoveries,
        )
        if not self._store.apply_change(new_state, expected, flips, inserts):
            self._metrics.compactions.labels(trigger=trigger, result="conflict").inc()
            raise ContextExhausted("the session changed while it was being compacted; try again")
        session.state = new_state
        for message in flips:
            session.replace_message(message)
        for message in inserts:
            session.insert(message)
        session.view = None
        after = count(new_state, session.visible(), session.view_tokens)
        self._metrics.compactions.labels(trigger=trigger, result="success").inc()
        log.info(
            "compacted session %s (%s): %d messages hidden, %d -> %d tokens",
            new_state.id, trigger, len(flips), before.tokens, after.tokens,
        )  # fmt: skip
        return CompactionResult(
            trigger, len(flips), tuple(m.id for m in inserts), before.tokens, after.tokens
        )

    # -- history ----------------------------------------------------------------

    def history(
        self, session_id: str, page_token: str, page_size: int
    ) -> tuple[list[Message], str]:
        if self._session(session_id) is None:
            raise ContextError("session_id", f"unknown session {session_id!r}")
        after: tuple[float, int] | None = None
        if page_token:
            try:
                position, seq = page_token.split(":", 1)
                after = (float(position), int(seq))
            except ValueError:
                raise ContextError("page_token", "not a token from a previous response") from None
        page = self._store.history(session_id, after, page_size + 1)
        more = len(page) > page_size
        page = page[:page_size]
        token = f"{page[-1].position!r}:{page[-1].seq}" if more and page else ""
        return page, token

    # -- background tool-pair summaries ------------------------------------------

    def _schedule_summaries(self, session: _Session) -> None:
        if session.summarising or session.state.provider_managed:
            return
        if not self._eligible_pairs(session):
            return
        session.summarising = True
        task = asyncio.create_task(self._summarise_pairs(session))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _eligible_pairs(self, session: _Session) -> list[tuple[Message, Message]]:
        policy = self._policy()
        limit = session.state.context_limit or policy.default_context_limit
        if limit <= 0:
            return []
        visible = session.visible()
        all_groups = groups(visible)
        old = all_groups[: max(len(all_groups) - policy.tool_pair_keep_recent, 0)]
        calls: dict[str, Message] = {}
        pairs: list[tuple[Message, Message]] = []
        for group in old:
            for message in group:
                for call in message.tool_calls:
                    calls[call.id] = message
                if (
                    message.role is Role.TOOL
                    and message.kind is Kind.ORDINARY
                    and message.tokens >= policy.tool_pair_min_tokens
                    and len(message.tool_results) == 1
                ):
                    call_message = calls.get(message.tool_results[0].tool_call_id)
                    if call_message is not None:
                        pairs.append((call_message, message))
        if sum(result.tokens for _, result in pairs) <= policy.tool_pair_cutoff_ratio * limit:
            return []
        return pairs[: policy.tool_pair_batch]

    async def _summarise_pairs(self, session: _Session) -> None:
        try:
            pairs = self._eligible_pairs(session)
            summarizer = self._summarizer()
            for call_message, result_message in pairs:
                result = result_message.tool_results[0]
                call = next(c for c in call_message.tool_calls if c.id == result.tool_call_id)
                fingerprint = _fingerprint(result_message)
                try:
                    text = await summarizer.tool_result(call, result)
                except Exception:
                    log.exception("tool-pair summary failed in session %s", session.state.id)
                    self._metrics.tool_pair_summaries.labels(result="failed").inc()
                    continue
                async with session.lock:
                    applied = self._apply_pair_summary(
                        session, call_message, result_message, fingerprint, text
                    )
                self._metrics.tool_pair_summaries.labels(
                    result="applied" if applied else "stale"
                ).inc()
        finally:
            session.summarising = False

    def _apply_pair_summary(
        self,
        session: _Session,
        call_message: Message,
        result_message: Message,
        fingerprint: str,
        text: str,
    ) -> bool:
        """Only if exactly the matching call and result are still there, unchanged."""
        by_seq = {m.seq: m for m in session.messages}
        current_call = by_seq.get(call_message.seq)
        current_result = by_seq.get(result_message.seq)
        if (
            current_call is None
            or current_result is None
            or not current_call.agent_visible
            or not current_result.agent_visible
            or _fingerprint(current_result) != fingerprint
            or current_call.parts != call_message.parts
        ):
            log.warning(
                "tool-pair summary for %s in session %s dropped: the history changed meanwhile",
                result_message.id, session.state.id,
            )  # fmt: skip
            return False
        result = current_result.tool_results[0]
        expected = session.state.version
        seq = session.state.next_seq
        stand_in = Message(
            id=f"{current_result.id}~summary", role=Role.TOOL,
            parts=(ToolResult(result.tool_call_id, text, result.is_error),), kind=Kind.SUMMARY,
            response_id=current_result.response_id, created_at_ms=int(time.time() * 1000),
            user_visible=False, agent_visible=True, seq=seq, position=current_result.position,
            replaces=current_result.id,
        )  # fmt: skip
        stand_in = replace(stand_in, tokens=estimate(stand_in))
        hidden = current_result.with_visibility(current_result.user_visible, False)
        new_state = replace(session.state, next_seq=seq + 1, version=expected + 1, usage_tokens=0)
        if not self._store.apply_change(new_state, expected, [hidden], [stand_in]):
            return False
        session.state = new_state
        session.replace_message(hidden)
        session.insert(stand_in)
        session.view = None
        return True

    def _summarizer(self) -> Summarizer:
        settings = self._policy().summarizer
        if not settings.configured:
            return FallbackSummarizer()
        summarizer = self._summarizers.get(settings)  # policies are frozen, so hashable
        if summarizer is None:
            client = ChatModelClient.for_endpoint(settings, settings.timeout_ms / 1000, 800)
            summarizer = ModelSummarizer(client, self._metrics)
            self._summarizers[settings] = summarizer
        return summarizer

    async def drain(self) -> None:
        """Wait for background summaries (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
        for summarizer in self._summarizers.values():
            await summarizer.close()


def _fingerprint(message: Message) -> str:
    return hashlib.sha256(repr(message.parts).encode()).hexdigest()

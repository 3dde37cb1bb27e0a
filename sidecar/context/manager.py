"""Sessions: append, project (with compaction), history, deletion, and background summaries.

Each call works on the session in memory (`session.py`) under the session's lock and
writes everything it changed in one store transaction at its end; if anything fails
before that (bad input, a refusal, a store error, a cancelled call), the session in
memory is put back as it was, so a failed call changes nothing. A background summary
is written only if the session's version is still the one it was planned against
(optimistic concurrency). Compaction never deletes: flags flip and summaries appear.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from sidecar.context.compaction import (
    MIN_SUMMARY_TOKENS,
    SUMMARY_SHARE,
    Budget,
    DoesNotFit,
    cost,
    plan,
)
from sidecar.context.elision import MIN_ELIDED_TOKENS, elided, is_result
from sidecar.context.messages import (
    DEFAULT_VISIBILITY,
    Kind,
    Message,
    Part,
    Role,
    SessionState,
    ToolResult,
    Usage,
    VisibilityDefault,
)
from sidecar.context.pairing import groups
from sidecar.context.session import Session, SessionCache
from sidecar.context.store import Change, SessionStore
from sidecar.context.summarizer import FallbackSummarizer, ModelSummarizer, Summarizer
from sidecar.context.tokens import (
    TokenCount,
    calibrate,
    calibration,
    count,
    estimate,
    raise_calibration,
)
from sidecar.model_client import ChatModelClient
from sidecar.observability.metrics import Metrics
from sidecar.policy.schema import ContextPolicy, SummarizerPolicy

log = logging.getLogger("sidecar.context")

RESERVED_PREFIX = "~"  # ids of messages the sidecar writes
# After a compaction the view aims at this share of the threshold, to leave room for
# the next turns (a compaction every turn would defeat prompt caching).
HEADROOM = 0.6
TOUCH_SECONDS = 60.0  # last activity is written at most this often when nothing else is
DEFAULT_CACHE_BYTES = 64 * 1024 * 1024


class ContextError(Exception):
    """Bad input: becomes INVALID_ARGUMENT naming the field or message."""

    def __init__(self, field_name: str, problem: str) -> None:
        self.field = field_name
        super().__init__(f"{field_name}: {problem}")


class SessionNotFound(Exception):
    """Becomes NOT_FOUND."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session_id: unknown session {session_id!r}")


class ContextExhausted(Exception):
    """The view cannot be made to fit, or compaction may not help: FAILED_PRECONDITION."""


class SessionConflict(ContextExhausted):
    """Another replica or worker kept changing the session while this call ran (after
    CONFLICT_ATTEMPTS tries): ABORTED, and nothing of this call is stored."""


# A call that lost a race with another replica or worker is planned again on the
# session as stored, up to this many times (each loser finds a newer version).
CONFLICT_ATTEMPTS = 16


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

    `view` is the session's agent-visible list, shared and only ever extended in
    place (anything else gives the session a new list), so callers can reuse work
    done on its prefix; `tail` holds messages repaired for this answer (calls still
    waiting for their results are left out).
    """

    view: list[Message]
    prefix: int
    tail: list[Message]
    tokens: TokenCount
    limit: int
    compaction: CompactionResult | None
    elided: tuple[str, ...] = ()

    @property
    def messages(self) -> list[Message]:
        return self.view[: self.prefix] + self.tail


@dataclass(slots=True)
class _Call:
    """What one call changes, stored together when it succeeds."""

    created: bool
    expected_version: int
    appended: list[Message] = field(default_factory=list)
    flips: list[Message] = field(default_factory=list)
    inserts: list[Message] = field(default_factory=list)
    elided: list[str] = field(default_factory=list)  # originals shown elided from now on
    events: list[tuple[str, str]] = field(default_factory=list)  # compactions, once stored


class ContextManager:
    def __init__(
        self,
        store: SessionStore,
        policy: Callable[[], ContextPolicy],
        metrics: Metrics,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        forget: Sequence[Callable[[str], bool]] = (),
    ) -> None:
        """`forget`: per-session state kept elsewhere (counters), dropped with a session."""
        self._store = store
        self._policy = policy
        self._metrics = metrics
        self._cache = SessionCache(cache_bytes)
        metrics.context_cache_bytes.labels(cache="sessions").set_function(lambda: self._cache.bytes)
        self._forget = tuple(forget)
        self._deleted_listeners: list[Callable[[str], None]] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._summarizers: dict[SummarizerPolicy, ModelSummarizer] = {}

    @property
    def cache(self) -> SessionCache:
        return self._cache

    def on_deleted(self, listener: Callable[[str], None]) -> None:
        """Called with the id of every deleted session (caches elsewhere drop it)."""
        self._deleted_listeners.append(listener)

    # -- sessions ---------------------------------------------------------------

    async def _lookup(self, session_id: str, create: bool, provider_managed: bool) -> Session:
        session = self._cache.get(session_id)
        if session is None:
            loaded = await self._store.load(session_id)
            cached = self._cache.get(session_id)
            if cached is not None:  # another call loaded it meanwhile
                return cached
            if loaded is not None:
                session = Session.light(loaded.state, loaded.last_group, loaded.last_assistant)
            elif create:
                state = SessionState(id=session_id, provider_managed=provider_managed)
                session = Session(state, [], persisted=False)
            else:
                raise SessionNotFound(session_id)
            self._cache.put(session, keep=True)
        return session

    async def _acquire(self, session_id: str, create: bool, provider_managed: bool) -> Session:
        """The session, locked; a call that may not create one gets SessionNotFound."""
        while True:
            session = await self._lookup(session_id, create, provider_managed)
            session.users += 1
            try:
                await session.lock.acquire()
            except BaseException:
                session.users -= 1
                raise
            if self._store.shared and session.persisted and not session.deleted:
                # Replicas and workers share the store: what this one holds is used only
                # if it is still the stored version.
                try:
                    stored = await self._store.version(session_id)
                except BaseException:
                    self._release(session)
                    raise
                if stored != session.state.version:
                    self._evict(session)
                    self._release(session)
                    continue
            if not session.deleted and (create or session.persisted):
                return session
            self._release(session)
            if not session.deleted:
                raise SessionNotFound(session_id)
            # Deleted while we waited: look again (a new session may be created).

    async def _load_view(self, session: Session, staged: Sequence[Message] = ()) -> list[Message]:
        """The session's agent view, loaded from the store if it is not held (plus the
        visible messages `staged` by this call, which the store does not have yet)."""
        if session.view is None:
            session.attach(await self._store.load_view(session.state.id) + list(staged))
        assert session.view is not None
        return session.view

    @staticmethod
    def _view(session: Session) -> list[Message]:
        """The view of a session whose view this call has loaded."""
        assert session.view is not None
        return session.view

    def _evict(self, session: Session) -> None:
        """Forget a session held here that is not the stored one any more; calls waiting
        for it look it up again."""
        session.deleted = True
        if self._cache.get(session.state.id) is session:
            self._cache.pop(session.state.id)

    def _release(self, session: Session) -> None:
        session.users -= 1
        session.lock.release()
        if session.deleted:
            return
        if session.persisted:
            self._cache.put(session)  # re-measured; may now be evicted if over budget
        elif not session.users:
            # A creating call failed and nobody waits: forget the placeholder.
            session.deleted = True
            if self._cache.get(session.state.id) is session:
                self._cache.pop(session.state.id)

    async def _commit(self, session: Session, call: _Call, before: SessionState) -> None:
        """Store what the call changed, in one transaction; raise if it cannot be."""
        state = session.state
        now = time.time()
        changed = (
            bool(call.appended or call.flips or call.inserts)
            or replace(state, version=before.version, last_active_at=before.last_active_at)
            != before
        )
        touch = now - state.last_active_at >= self._touch_seconds()
        if not changed and not touch and session.persisted:
            return
        state.last_active_at = now
        if changed:
            state.version = call.expected_version + 1
        stored = await self._store.commit(
            Change(
                replace(state), call.expected_version, call.created, call.appended,
                call.flips, call.inserts,
            )
        )  # fmt: skip
        if not stored:
            for trigger, _ in call.events[:1]:
                self._metrics.compactions.labels(trigger=trigger, result="conflict").inc()
            raise SessionConflict("the session changed while this call ran; try again")
        session.persisted = True
        session.tracker = session.tracker.settled()
        for trigger, result in call.events:
            self._metrics.compactions.labels(trigger=trigger, result=result).inc()

    def _touch_seconds(self) -> float:
        retention = self._policy().retention_seconds
        return TOUCH_SECONDS if retention is None else min(TOUCH_SECONDS, retention / 8)

    # -- append -----------------------------------------------------------------

    async def append(
        self,
        session_id: str,
        messages: Sequence[NewMessage],
        usage: Usage | None,
        provider_managed: bool = False,
    ) -> int:
        for attempt in range(CONFLICT_ATTEMPTS):
            # Validated even though the commit checks the version too: a stale session
            # could refuse good input (a result for a call made through another replica).
            session = await self._acquire(session_id, bool(messages), provider_managed)
            try:
                saved = session.save()
                try:
                    call = _Call(not session.persisted, session.state.version)
                    await self._stage_append(session, call, messages, usage)
                    await self._commit(session, call, saved.state)
                except BaseException:
                    session.restore(saved)
                    raise
                stored = session.state.next_seq - 1
            except SessionConflict:
                if attempt + 1 == CONFLICT_ATTEMPTS:
                    raise
                self._evict(session)  # planned again on the stored session
                continue
            finally:
                self._release(session)
            self._schedule_summaries(session)
            return stored
        raise AssertionError("unreachable")

    async def _stage_append(
        self,
        session: Session,
        call: _Call,
        messages: Sequence[NewMessage],
        usage: Usage | None,
    ) -> None:
        """Validate and add the messages to the session in memory (not yet stored)."""
        state = session.state
        tracker = session.tracker.staged()
        prepared: list[Message] = []
        batch: dict[str, int] = {}
        next_seq = state.next_seq
        defaults = self._kind_defaults()
        now = int(time.time() * 1000)
        for index, new in enumerate(messages):
            where = f"messages[{index}]"
            if not new.id:
                raise ContextError(f"{where}.id", "must not be empty")
            if new.id.startswith(RESERVED_PREFIX):
                raise ContextError(
                    f"{where}.id", f"ids starting with {RESERVED_PREFIX!r} are the sidecar's own"
                )
            if new.id in batch:
                raise ContextError(f"{where}.id", f"duplicate message id {new.id!r}")
            if not new.parts:
                raise ContextError(where, f"message {new.id!r} has no parts")
            batch[new.id] = index
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
        if prepared and session.persisted:
            # The store's indexes know every id used, hidden ones too: none held in memory.
            stored = await self._store.existing_ids(state.id, list(batch))
            if stored:
                first = min(batch[i] for i in stored)
                raise ContextError(
                    f"messages[{first}].id", f"duplicate message id {messages[first].id!r}"
                )
            used = set(await self._store.existing_calls(state.id, list(tracker.seen_calls)))
            if used:
                index, message = next(
                    (i, m)
                    for i, m in enumerate(prepared)
                    if any(c.id in used for c in m.tool_calls)
                )
                raise ContextError(
                    f"messages[{index}]",
                    f"message {message.id!r}: tool call id {min(used)!r} is used twice",
                )
        state.next_seq = next_seq
        session.tracker = tracker
        visible = [m for m in prepared if m.agent_visible]
        session.extend(visible)
        call.appended.extend(prepared)
        if usage is not None:
            await self._take_usage(session, usage, visible)

    async def _take_usage(self, session: Session, usage: Usage, staged: list[Message]) -> None:
        """A report covers the messages up to and including the assistant message its
        model call produced (or the one it names). `staged`: this call's visible ones."""
        state = session.state
        if usage.context_limit > 0:
            state.context_limit = usage.context_limit
        if not usage.reported:
            return
        covered: Message | None
        if usage.through_message_id:
            covered = next((m for m in staged if m.id == usage.through_message_id), None)
            if covered is None:
                await self._load_view(session, staged)
                covered = session.find(usage.through_message_id)
            if covered is None:
                if await self._store.message(state.id, usage.through_message_id) is None:
                    raise ContextError(
                        "usage.through_message_id",
                        f"no message {usage.through_message_id!r} in this session",
                    )
                return  # hidden since the call it describes: the report is stale
        else:
            covered = session.last_assistant
            if covered is None:  # no model reply yet: the report covers all there is
                view = staged or await self._load_view(session)
                covered = view[-1] if view else None
        if covered is None or not covered.agent_visible:
            return
        if (
            covered.position != covered.seq  # a summary or stand-in: not what a model saw
            or covered.seq < state.usage_seq  # older than the report already taken
            or covered.seq < state.rewrite_seq  # the view it describes was rewritten since
        ):
            return
        # The messages after the covered one: usually this call's own, else the view's.
        later = (
            staged if any(m is covered for m in staged) else await self._load_view(session, staged)
        )
        after = 0
        for index in range(len(later) - 1, -1, -1):
            if later[index].seq == covered.seq:
                break
            after += later[index].tokens
        calibrate(state, usage.total, state.view_tokens - after)
        state.usage_tokens = usage.total
        state.usage_seq = covered.seq

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
        for attempt in range(CONFLICT_ATTEMPTS):
            session = await self._acquire(session_id, bool(messages), provider_managed)
            try:
                await self._load_view(session)  # before anything is staged: stored as is
                saved = session.save()
                try:
                    call = _Call(not session.persisted, session.state.version)
                    if messages or usage is not None:
                        await self._stage_append(session, call, messages, usage)
                    projection = await self._stage_projection(
                        session, call, context_limit, context_exceeded
                    )
                    await self._commit(session, call, saved.state)
                except BaseException:
                    session.restore(saved)
                    raise
            except SessionConflict:
                if attempt + 1 == CONFLICT_ATTEMPTS:
                    raise
                self._evict(session)  # planned again on the stored session
                continue
            finally:
                self._release(session)
            self._metrics.projected_tokens.observe(projection.tokens.tokens)
            self._schedule_summaries(session)
            return projection
        raise AssertionError("unreachable")

    async def _stage_projection(
        self, session: Session, call: _Call, context_limit: int, context_exceeded: bool
    ) -> Projection:
        policy = self._policy()
        state = session.state
        if context_limit > 0:
            state.context_limit = context_limit  # remembered: later calls may omit it
        limit = state.context_limit or policy.default_context_limit
        if context_exceeded:
            if state.provider_managed:
                raise ContextExhausted(
                    "the provider manages this session's context; the sidecar does not compact it"
                )
            if state.recoveries >= policy.max_recovery_compactions:
                self._metrics.compactions.labels(
                    trigger="context_exceeded", result="exhausted"
                ).inc()
                raise ContextExhausted(
                    f"the context is still too large after {state.recoveries} recovery "
                    "compactions in a row; start a new session or raise the context limit"
                )
        elif state.recoveries:
            state.recoveries = 0
        compaction: CompactionResult | None = None
        if (limit > 0 or context_exceeded) and not state.provider_managed:
            # Without a known limit, the provider's refusal says the view is about it.
            window = limit or max(self._count(session).tokens, 1)
            self._elide_oversized(session, call, window, policy.tool_result_max_share)
            before = self._count(session)
            if context_exceeded:
                # The provider counted at least the limit: learn that (bounded).
                shown = self._shown_estimate(session)
                if shown > 0:
                    raise_calibration(state, window / shown)
                before = self._count(session)
                compaction = await self._compact(session, call, "context_exceeded", before, window)
            elif before.tokens >= policy.compaction_threshold * window:
                compaction = await self._compact(session, call, "threshold", before, window)
        prefix, tail = session.projection()
        tokens = count(state, self._view(session), prefix, tail, state.view_tokens)
        if limit > 0 and tokens.tokens > limit and not state.provider_managed:
            raise ContextExhausted(
                f"the view takes {tokens.tokens} tokens, over the context limit of {limit}, "
                "and compaction cannot shorten it further; raise the limit or start a new session"
            )
        return Projection(
            self._view(session), prefix, tail, tokens, limit, compaction, tuple(call.elided)
        )

    def _count(self, session: Session) -> TokenCount:
        prefix, tail = session.projection()
        return count(session.state, self._view(session), prefix, tail, session.state.view_tokens)

    def _shown_estimate(self, session: Session) -> int:
        """The uncalibrated estimate of what Project shows (pending calls left out)."""
        prefix, tail = session.projection()
        return session.state.view_tokens - cost(self._view(session)[prefix:]) + cost(tail)

    def _elide_oversized(self, session: Session, call: _Call, limit: int, share: float) -> None:
        """Results over their share of the window are shown elided from now on. Only
        messages not yet checked against this limit are looked at."""
        cap = max(int(share * limit), MIN_ELIDED_TOKENS)
        checked_limit, checked = session.scanned
        view = self._view(session)
        start = checked if checked_limit == limit and checked <= len(view) else 0
        oversized = [
            i
            for i in range(start, len(view))
            if view[i].kind is Kind.ORDINARY and is_result(view[i]) and view[i].tokens > cap
        ]
        if oversized:
            now = int(time.time() * 1000)
            new_view = list(view)
            for index in oversized:
                stand_in = elided(view[index], cap, session.state.next_seq, now)
                if stand_in is None:
                    continue
                self._rewrite(session, call, [view[index]], [stand_in])
                new_view[index] = stand_in  # it sorts exactly where the original did
                call.elided.append(view[index].id)
            session.replace_view(new_view)
        session.scanned = (limit, len(self._view(session)))

    def _rewrite(
        self, session: Session, call: _Call, hidden: Sequence[Message], inserts: Sequence[Message]
    ) -> None:
        """Stage hiding `hidden` from the agent and inserting `inserts` (whose seqs
        were taken from the state's next_seq, in order)."""
        state = session.state
        if not inserts and not hidden:
            return
        if inserts:
            # A usage report for a message older than this describes another view.
            state.rewrite_seq = inserts[0].seq
            added = inserts[-1].seq + 1 - state.next_seq
            state.next_seq += added
            if state.calibrated_seq:
                state.calibrated_seq += added  # the sidecar's own messages do not age it
        first = min(m.position for m in [*hidden, *inserts])
        if state.usage_tokens and first <= state.usage_seq:
            state.usage_tokens = 0  # the report described a view that changed before its end
        call.flips.extend(m.with_visibility(m.user_visible, False) for m in hidden)
        call.inserts.extend(inserts)

    async def _compact(
        self, session: Session, call: _Call, trigger: str, before: TokenCount, limit: int
    ) -> CompactionResult:
        """Carry out a compaction plan (`compaction.plan`), or leave the view as it is
        when no plan changes anything but the summary, or the view as it is fits and no
        plan does. A view that cannot be made to fit is FAILED_PRECONDITION."""
        policy = self._policy()
        state = session.state
        prefix, tail = session.projection()
        view = self._view(session)
        shown = view[:prefix] + tail
        # Aim in the units `before` was counted in: what a provider report says beyond
        # the calibrated estimate (tool definitions, or a wrong report) is taken to stay
        # whatever is hidden. It makes compaction hide more, but never refuse: whether a
        # view fits is decided by the count Project reports (a report that was wrong
        # must not end the session; one that was right is corrected by the next).
        ratio = calibration(state)
        # Under the threshold as Project will count it (rounded): the next Project with
        # nothing new must not find the view at the threshold again.
        hard = policy.compaction_threshold * limit - 0.5
        if trigger == "context_exceeded":
            hard = min(hard, 0.8 * before.tokens)
        budget = Budget(
            limit=limit,
            hard=hard,
            preferred=HEADROOM * hard,
            ratio=ratio,
            overhead=max(before.tokens - ratio * cost(shown), 0.0),
            summary_cap=max(int(SUMMARY_SHARE * limit), MIN_SUMMARY_TOKENS),
        )
        originals = await self._originals(session, call, shown)
        try:
            planned = await plan(
                shown, budget, self._summarizer(), state.next_seq, int(time.time() * 1000),
                lambda stand_in: originals.get(stand_in.replaces),
            )  # fmt: skip
        except DoesNotFit as error:
            raise ContextExhausted(str(error)) from None
        if planned.does_not_fit:
            if trigger == "threshold" and before.tokens <= limit:
                # No plan fits, but the view as it is does: leave it as it is.
                call.events.append((trigger, "nothing_to_compact"))
                return CompactionResult(trigger, 0, (), before.tokens, before.tokens)
            raise ContextExhausted(planned.does_not_fit)
        if not planned.inserts:
            call.events.append((trigger, "nothing_to_compact"))
            if trigger == "context_exceeded":
                state.recoveries += 1
            return CompactionResult(trigger, 0, (), before.tokens, before.tokens)
        # Pending calls were cut from `shown`: hide the session's own messages.
        by_seq = {m.seq: m for m in view[prefix:]}
        hidden = [by_seq.get(m.seq, m) for m in planned.hidden]
        gone = {m.seq for m in hidden}
        new_view = sorted(
            [*(m for m in view if m.seq not in gone), *planned.inserts],
            key=lambda m: (m.position, m.seq),
        )
        self._rewrite(session, call, hidden, planned.inserts)
        call.elided.extend(planned.elided)
        state.usage_tokens = 0  # the provider's count no longer describes the view
        if trigger == "context_exceeded":
            state.recoveries += 1
        session.replace_view(new_view)
        session.scanned = (limit, len(new_view))
        after = self._count(session)
        call.events.append((trigger, "success" if planned.total < hard else "over_threshold"))
        log.info(
            "compacted session %s (%s): %d messages hidden, %d -> %d tokens",
            state.id, trigger, len(hidden), before.tokens, after.tokens,
        )  # fmt: skip
        return CompactionResult(
            trigger, len(hidden), tuple(m.id for m in planned.inserts), before.tokens,
            after.tokens,
        )  # fmt: skip

    async def _originals(
        self, session: Session, call: _Call, shown: Sequence[Message]
    ) -> dict[str, Message]:
        """The messages the view's stand-ins replace, to shorten them again from the full
        text (one may have come with this very call, and not be stored yet)."""
        found: dict[str, Message] = {}
        for stand_in in shown:
            if stand_in.kind is Kind.ORDINARY or not stand_in.replaces:
                continue
            original = next((m for m in call.appended if m.id == stand_in.replaces), None)
            if original is None:
                original = await self._store.message(session.state.id, stand_in.replaces)
            if original is not None and is_result(original):
                found[stand_in.replaces] = replace(original, tokens=estimate(original))
        return found

    # -- history ----------------------------------------------------------------

    async def history(
        self, session_id: str, page_token: str, page_size: int
    ) -> tuple[list[Message], str]:
        after: tuple[float, int] | None = None
        if page_token:
            try:
                position, seq = page_token.split(":", 1)
                after = (float(position), int(seq))
            except ValueError:
                raise ContextError("page_token", "not a token from a previous response") from None
        cached = self._cache.get(session_id)
        held = cached is not None and cached.persisted and not self._store.shared
        if not held and not await self._store.exists(session_id):
            raise SessionNotFound(session_id)
        page = await self._store.history(session_id, after, page_size + 1)
        more = len(page) > page_size
        page = page[:page_size]
        token = f"{page[-1].position!r}:{page[-1].seq}" if more and page else ""
        return page, token

    # -- deletion and retention --------------------------------------------------

    async def delete(self, session_id: str) -> int:
        """Remove the session and everything it owns; the number of messages removed."""
        cached = self._cache.get(session_id)
        if cached is not None:
            cached.users += 1
            await cached.lock.acquire()  # calls in flight on it finish first
        try:
            removed = await self._delete([session_id], "request")
        finally:
            if cached is not None:
                cached.users -= 1
                cached.lock.release()
        if session_id not in removed:
            raise SessionNotFound(session_id)
        return removed[session_id]

    async def _delete(self, session_ids: Sequence[str], reason: str) -> dict[str, int]:
        removed = await self._store.delete(session_ids)
        for session_id in session_ids:
            forgot = [forget(session_id) for forget in self._forget]
            session = self._cache.pop(session_id)
            if session is not None:
                session.deleted = True
            if session_id not in removed and not any(forgot):
                continue
            removed.setdefault(session_id, 0)
            for listener in self._deleted_listeners:
                listener(session_id)
            self._metrics.sessions_deleted.labels(reason=reason).inc()
            log.info(
                "deleted session %s (%s): %d messages", session_id, reason, removed[session_id]
            )
        return removed

    async def expire_idle_sessions(self) -> None:
        """Forever: delete sessions idle for longer than the policy's retention."""
        while True:
            seconds = self._policy().retention_seconds
            if seconds is None:
                await asyncio.sleep(5.0)  # a reload may turn it on
                continue
            try:
                await self.expire_idle(seconds)
            except Exception:
                log.exception("expiring idle sessions failed; will try again")
            await asyncio.sleep(min(max(seconds / 4, 0.1), 60.0))

    async def expire_idle(self, seconds: float) -> int:
        cutoff = time.time() - seconds
        expired = 0
        while True:
            candidates = await self._store.idle(cutoff, 100)
            idle = []
            for session_id in candidates:
                cached = self._cache.get(session_id)
                # In memory, the last activity is exact (the store's lags a little).
                if cached is None or not (cached.busy or cached.state.last_active_at >= cutoff):
                    idle.append(session_id)
            if idle:
                expired += len(await self._delete(idle, "retention"))
            if len(candidates) < 100 or not idle:
                return expired

    # -- background tool-pair summaries ------------------------------------------

    def _schedule_summaries(self, session: Session) -> None:
        if session.summarising or session.state.provider_managed or session.deleted:
            return
        if not self._may_summarise(session):
            return
        session.summarising = True
        task = asyncio.create_task(self._summarise_pairs(session))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _may_summarise(self, session: Session) -> bool:
        """Cheap: all ordinary results together are an upper bound of the old ones."""
        policy = self._policy()
        limit = session.state.context_limit or policy.default_context_limit
        return limit > 0 and session.state.result_tokens > policy.tool_pair_cutoff_ratio * limit

    def _eligible_pairs(self, session: Session) -> list[tuple[Message, Message]]:
        """The view must be loaded."""
        if not self._may_summarise(session):
            return []
        policy = self._policy()
        limit = session.state.context_limit or policy.default_context_limit
        all_groups = groups(self._view(session))
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

    async def _summarise_pairs(self, session: Session) -> None:
        try:
            async with session.lock:
                if session.deleted:
                    return
                await self._load_view(session)
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
                    applied = not session.deleted and await self._apply_pair_summary(
                        session, call_message, result_message, fingerprint, text
                    )
                self._metrics.tool_pair_summaries.labels(
                    result="applied" if applied else "stale"
                ).inc()
        finally:
            session.summarising = False

    async def _apply_pair_summary(
        self,
        session: Session,
        call_message: Message,
        result_message: Message,
        fingerprint: str,
        text: str,
    ) -> bool:
        """Only if exactly the matching call and result are still there, unchanged (a
        replica that applied it first moved the version on: this commit then conflicts)."""
        view = await self._load_view(session)
        by_seq = {m.seq: i for i, m in enumerate(view)}
        call_index = by_seq.get(call_message.seq)
        result_index = by_seq.get(result_message.seq)
        current_result = view[result_index] if result_index is not None else None
        if (
            call_index is None
            or current_result is None
            or _fingerprint(current_result) != fingerprint
            or view[call_index].parts != call_message.parts
        ):
            log.warning(
                "tool-pair summary for %s in session %s dropped: the history changed meanwhile",
                result_message.id, session.state.id,
            )  # fmt: skip
            return False
        assert result_index is not None
        result = current_result.tool_results[0]
        saved = session.save()
        seq = session.state.next_seq
        stand_in = Message(
            id=f"~{current_result.id}~summary-{seq}", role=Role.TOOL,
            parts=(ToolResult(result.tool_call_id, text, result.is_error),), kind=Kind.SUMMARY,
            response_id=current_result.response_id, created_at_ms=int(time.time() * 1000),
            user_visible=False, agent_visible=True, seq=seq, position=current_result.position,
            replaces=current_result.id,
        )  # fmt: skip
        stand_in = replace(stand_in, tokens=estimate(stand_in))
        call = _Call(False, session.state.version)
        try:
            self._rewrite(session, call, [current_result], [stand_in])
            new_view = list(view)
            new_view[result_index] = stand_in
            session.replace_view(new_view)
            await self._commit(session, call, saved.state)
        except SessionConflict:
            session.restore(saved)
            if self._store.shared:
                self._evict(session)  # the next call reads the stored session
            return False
        except ContextExhausted:
            session.restore(saved)
            return False
        except BaseException:
            session.restore(saved)
            raise
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

"""A session's stored state on the Inspect path: loaded before the chain, written after it.

Inspectors are synchronous (`inspect_now`) and must not wait on a database. So the
engine loads the session's snapshot first (`begin`: answers, the repetition streak,
taint, data-flow facts; one query on PostgreSQL, none on SQLite for a session that has
nothing stored), the inspectors read and record through the facades below (the same
interfaces they had when this state lived in memory), and `finish` writes what they
recorded, with the approval questions the Inspect asked, in one transaction.

Every Inspect of a session reads the store, so an answer, a streak or a taint recorded
through one replica decides the very next call on another. Inspects of one session that
overlap in this process share one working copy (as they shared the in-memory trackers);
it lives only while one of them runs.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from sidecar.inspection.answers import arguments_digest, settle
from sidecar.inspection.model import CallVerdict, ToolCall
from sidecar.inspection.repetition import Streak
from sidecar.inspection.verdict import Verdict
from sidecar.state.approvals import OnceAnswer, Question
from sidecar.state.injection_taint import TaintStatus
from sidecar.state.session_facts import (
    MAX_DETAIL,
    MAX_DETAIL_BYTES_PER_SESSION,
    MAX_FACTS_PER_SESSION,
    Fact,
)
from sidecar.state.tool_registry import SessionTool, SessionTools, ToolKey, ToolRecord, ToolRegistry
from sidecar.store.model import Snapshot, StreakWrite, Writes

TAINT_SOURCE_CHARS = 256  # shown cut anyway; bounded


class InspectStore(Protocol):
    async def load_session(self, session_id: str) -> Snapshot: ...

    async def save_session(self, session_id: str, writes: Writes) -> None: ...

    async def take_once(self, session_id: str, answers: Sequence[OnceAnswer]) -> list[bool]:
        """Use up these once answers; for each, whether it was still there (another
        replica may have used it first)."""
        ...


class SessionWork:
    """One session's state while Inspects of it run: the snapshot, and what they record."""

    __slots__ = (
        "_base_count",
        "_detail_bytes",
        "_dirty",
        "_facts_copied",
        "_new_facts",
        "_new_taint",
        "_reset",
        "_tools",
        "facts",
        "injection",
        "once",
        "session_id",
        "stale",
        "standing",
        "stored",
        "streak",
        "taint",
        "tool_rows",
        "users",
    )  # fmt: skip

    def __init__(self, session_id: str, snapshot: Snapshot, stored: bool = True) -> None:
        self.session_id = session_id
        # False: the store could not be read; the Inspect is judged without it and fails
        # closed, and nothing is written back.
        self.stored = stored
        self.users = 0
        self.standing = snapshot.standing
        self.once = {key: list(answers) for key, answers in snapshot.once.items()}
        stored_streak = snapshot.streak
        self.streak: Streak | None = None
        if stored_streak is not None:
            live = stored_streak.live
            self.streak = (
                live.copy(stored_streak.count)
                if live is not None
                else Streak.stored(stored_streak.tool, stored_streak.digest, stored_streak.count)
            )
        self._base_count = stored_streak.count if stored_streak is not None else 0
        self._reset = False
        self._dirty = False
        self.taint = snapshot.taint
        self._new_taint: str | None = None
        self.facts = snapshot.facts  # copied on the first record
        self._facts_copied = False
        self._new_facts: dict[tuple[str, str], Fact] = {}
        self._detail_bytes = sum(len(f.detail) for f in snapshot.facts.values())
        self.stale = False
        self.tool_rows = snapshot.tools
        self._tools: SessionTools | None = None  # built on first use
        self.injection = snapshot.injection

    def take_integrity(self, snapshot: Snapshot) -> None:
        """The session's tools or taint changed in this process while Inspects of it ran:
        the next one reads them again (answers and streaks stay shared as they are)."""
        self.tool_rows = snapshot.tools
        self._tools = None
        self.injection = snapshot.injection
        self.stale = False

    @property
    def tools(self) -> SessionTools:
        tools = self._tools
        if tools is None:
            tools = self._tools = SessionTools(self.tool_rows)
        return tools

    # -- repetition ------------------------------------------------------------------

    def observe(self, call: ToolCall) -> int:
        streak = self.streak
        if streak is not None and streak.continues_with(call):
            streak.count += 1
        else:
            streak = self.streak = Streak.start(self.session_id, call)
            self._reset = True
        self._dirty = True
        return streak.count

    # -- taint -----------------------------------------------------------------------

    def add_taint(self, source: str) -> None:
        if self.taint is None:
            self.taint = self._new_taint = source[:TAINT_SOURCE_CHARS]

    # -- facts -----------------------------------------------------------------------

    def facts_of(self, kind: str) -> list[Fact]:
        return [fact for fact in self.facts.values() if fact.kind == kind]

    def record(self, facts: Iterable[Fact]) -> None:
        for fact in facts:
            key = (fact.kind, fact.key)
            old = self.facts.get(key)
            if old is None and len(self.facts) >= MAX_FACTS_PER_SESSION:
                continue
            detail = fact.detail[:MAX_DETAIL]
            held = self._detail_bytes - (len(old.detail) if old is not None else 0)
            if held + len(detail) > MAX_DETAIL_BYTES_PER_SESSION:
                detail = ""  # the fact stays, its content is not kept
            fact = fact._replace(detail=detail)
            if old == fact:
                continue
            if not self._facts_copied:
                self.facts = dict(self.facts)
                self._facts_copied = True
            self.facts[key] = fact
            self._new_facts[key] = fact
            self._detail_bytes = held + len(detail)

    # -- writing back ----------------------------------------------------------------

    def take_writes(self, decision_id: str, questions: Sequence[Question]) -> Writes:
        """What was recorded since the last write (then forgotten: written once)."""
        writes = Writes(decision_id=decision_id, questions=list(questions))
        streak = self.streak
        if self._dirty and streak is not None:
            writes.streak = StreakWrite(
                streak.copy(streak.count),
                streak.count,
                continued=not self._reset,
                delta=streak.count - self._base_count,
            )
            self._base_count = streak.count
            self._reset = self._dirty = False
        if self._new_taint is not None:
            writes.taint, self._new_taint = self._new_taint, None
        if self._new_facts:
            writes.facts = list(self._new_facts.values())
            self._new_facts = {}
        return writes


class SessionStates:
    """The Inspect path's view of the store, and the facades the inspectors use."""

    def __init__(
        self,
        store: InspectStore,
        once_ttl_seconds: float = 3_600.0,
        clock: Callable[[], float] = time.time,
        registry: ToolRegistry | None = None,
    ) -> None:
        """`registry`: the tool definitions' records, read again when a snapshot says
        the store holds newer ones."""
        self.store = store
        self.registry = registry
        self._once_ttl = once_ttl_seconds
        self._clock = clock
        self._live: dict[str, SessionWork] = {}
        self.grants = StoredAnswers(self._live)
        self.streaks = StoredStreaks(self._live)
        self.taint = StoredTaint(self._live)
        self.facts = StoredFacts(self._live)
        self.tools = StoredTools(self._live, registry)
        self.injection = StoredInjection(self._live)

    async def begin(self, session_id: str) -> SessionWork:
        """The session's working copy, loaded from the store unless an Inspect of the
        same session is running here; raises StoreUnavailable."""
        work = self._live.get(session_id)
        if work is None or not work.stored or work.stale:
            snapshot = await self.store.load_session(session_id)
            if self.registry is not None:
                await self.registry.refresh(snapshot.tools_version)
            work = self._live.get(session_id)
            if work is None or not work.stored:
                work = self._live[session_id] = SessionWork(session_id, snapshot)
            elif work.stale:
                work.take_integrity(snapshot)
        work.users += 1
        return work

    def changed(self, session_id: str) -> None:
        """The session's registered tools or its taint were written here: an Inspect of it
        that starts while another runs must not judge by the copy loaded before."""
        work = self._live.get(session_id)
        if work is not None:
            work.stale = True

    def begin_unstored(self, session_id: str) -> SessionWork:
        """An empty working copy for an Inspect judged without the store (it failed)."""
        work = self._live.get(session_id)
        if work is None:
            work = self._live[session_id] = SessionWork(session_id, Snapshot(), stored=False)
        work.users += 1
        return work

    def end(self, work: SessionWork) -> None:
        work.users -= 1
        if work.users <= 0 and self._live.get(work.session_id) is work:
            del self._live[work.session_id]

    async def finish(
        self, work: SessionWork, decision_id: str, questions: Sequence[Question]
    ) -> None:
        """Write what the Inspect recorded and the questions it asked; raises
        StoreUnavailable (the writes are then lost, and the Inspect fails closed)."""
        writes = work.take_writes(decision_id, questions)
        if writes:
            await self.store.save_session(work.session_id, writes)

    async def settle_once(
        self, work: SessionWork, verdicts: Sequence[CallVerdict]
    ) -> list[CallVerdict]:
        """A person's once answer settles the next Inspect of exactly that call; using
        it up is a delete that only one replica can win. Raises StoreUnavailable."""
        if not work.once:
            return list(verdicts)
        cutoff = self._clock() - self._once_ttl
        settled: list[CallVerdict] = []
        for verdict in verdicts:
            key = (verdict.call.name, arguments_digest(verdict.call))
            answers = work.once.get(key)
            if not answers:
                settled.append(verdict)
                continue
            used: list[OnceAnswer] = []
            found: OnceAnswer | None = None
            while answers and found is None:  # oldest first; expired ones are used up too
                answer = answers.pop(0)
                used.append(answer)
                if answer.answered_at >= cutoff:
                    found = answer
            if not answers:
                del work.once[key]
            taken = await self.store.take_once(work.session_id, used)
            won = found is not None and taken[-1]
            settled.append(settle(verdict, found) if won and found is not None else verdict)
        return settled


class StoredAnswers:
    """GrantLookup: a session's standing ("always") answers, from its snapshot."""

    def __init__(self, live: dict[str, SessionWork]) -> None:
        self._live = live

    def standing_answer(self, session_id: str, tool_name: str) -> Verdict | None:
        work = self._live.get(session_id)
        return None if work is None else work.standing.get(tool_name)


class StoredStreaks:
    """StreakCounter over the snapshot (outside an Inspect there is nothing to count)."""

    def __init__(self, live: dict[str, SessionWork]) -> None:
        self._live = live

    def observe(self, session_id: str, call: ToolCall) -> int:
        work = self._live.get(session_id)
        return 1 if work is None else work.observe(call)

    def forget(self, session_id: str) -> bool:
        return False  # deleting a session deletes its row


class StoredTaint:
    def __init__(self, live: dict[str, SessionWork]) -> None:
        self._live = live

    def taint(self, session_id: str, source: str) -> None:
        work = self._live.get(session_id)
        if work is not None:
            work.add_taint(source)

    def source(self, session_id: str) -> str | None:
        work = self._live.get(session_id)
        return None if work is None else work.taint

    def forget(self, session_id: str) -> bool:
        return False


class StoredFacts:
    """FactStore over the snapshot: facts recorded by one call of a batch are seen by the
    next call of the same batch, and by every later Inspect once written."""

    def __init__(self, live: dict[str, SessionWork]) -> None:
        self._live = live

    def has_any(self, session_id: str) -> bool:
        work = self._live.get(session_id)
        return work is not None and bool(work.facts)

    def facts(self, session_id: str, kind: str) -> list[Fact]:
        work = self._live.get(session_id)
        return [] if work is None else work.facts_of(kind)

    def fact(self, session_id: str, kind: str, key: str) -> Fact | None:
        work = self._live.get(session_id)
        return None if work is None else work.facts.get((kind, key))

    def record(self, session_id: str, facts: Iterable[Fact]) -> None:
        work = self._live.get(session_id)
        if work is not None:
            work.record(facts)

    def forget(self, session_id: str) -> bool:
        return False


class StoredTools:
    """ToolLookup for the integrity inspector: the tools the session registered (from its
    snapshot) and the registry's records (checked against the store's version)."""

    def __init__(self, live: dict[str, SessionWork], registry: ToolRegistry | None) -> None:
        self._live = live
        self._registry = registry

    def has_tools(self, session_id: str) -> bool:
        work = self._live.get(session_id)
        return work is not None and bool(work.tool_rows)

    def record(self, key: ToolKey) -> ToolRecord | None:
        return None if self._registry is None else self._registry.record(key)

    def session_tool(self, session_id: str, name: str, server: str = "") -> SessionTool | None:
        """The definition the session was given for the tool it calls `name` (also as
        `mcp__server__name` or `server__name`); None when the session registered none.
        With `server` (the call's annotation), only that server's tool counts."""
        work = self._live.get(session_id)
        if work is None or not work.tool_rows:
            return None
        for key, fingerprint in work.tools.named(name):
            if server and key.server != server:
                continue
            record = self.record(key)
            if record is not None:
                return SessionTool(record, fingerprint)
        return None

    def servers_offering(self, session_id: str, name: str) -> list[str]:
        work = self._live.get(session_id)
        if work is None or not work.tool_rows:
            return []
        return sorted({key.server for key, _ in work.tools.named(name)})


class StoredInjection:
    """TaintLookup for the integrity inspector: whether the session read a prompt
    injection, from its snapshot."""

    def __init__(self, live: dict[str, SessionWork]) -> None:
        self._live = live

    def status(self, session_id: str) -> TaintStatus | None:
        work = self._live.get(session_id)
        return None if work is None else work.injection


class WithIntegrity:
    """An InspectStore whose snapshots take the tools and injection status from another
    (the shadow policy keeps its own streaks and facts, and sees what the active policy's
    store knows about tools and taint)."""

    def __init__(self, own: InspectStore, shared: InspectStore) -> None:
        self._own = own
        self._shared = shared

    async def load_session(self, session_id: str) -> Snapshot:
        own = await self._own.load_session(session_id)
        shared = await self._shared.load_session(session_id)
        return dataclasses.replace(
            own,
            tools=shared.tools,
            tools_version=shared.tools_version,
            injection=shared.injection,
        )

    async def save_session(self, session_id: str, writes: Writes) -> None:
        await self._own.save_session(session_id, writes)

    async def take_once(self, session_id: str, answers: Sequence[OnceAnswer]) -> list[bool]:
        return await self._own.take_once(session_id, answers)

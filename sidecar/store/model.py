"""What the store holds for one session's Inspect calls, and what an Inspect writes back.

A `Snapshot` is read before the chain (one query on PostgreSQL); the inspectors read it
and record into a working copy (states.py); the `Writes` are stored after the chain in
one transaction (one statement on PostgreSQL).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sidecar.inspection.repetition import Streak
from sidecar.inspection.verdict import Verdict
from sidecar.state.approvals import OnceAnswer, Question
from sidecar.state.injection_taint import CLEAN, TaintStatus
from sidecar.state.session_facts import Fact


@dataclass(frozen=True, slots=True)
class StoredStreak:
    """The last call and how many identical ones came in a row."""

    tool: str
    digest: str  # hex digest of the canonical arguments ("" when only `live` has it)
    count: int
    # The streak as an Inspect in this process left it (the SQLite store's copy): the next
    # Inspect compares with its arguments, without a digest.
    live: Streak | None = field(default=None, compare=False)


@dataclass(slots=True)
class Snapshot:
    """A session's stored state for Inspect. Readers must not change it (copy first)."""

    standing: dict[str, Verdict] = field(default_factory=dict)  # tool -> always answer
    # (tool, arguments digest) -> once answers waiting for that exact call, oldest first
    once: dict[tuple[str, str], list[OnceAnswer]] = field(default_factory=dict)
    streak: StoredStreak | None = None
    taint: str | None = None  # the first sensitive source the session read
    facts: dict[tuple[str, str], Fact] = field(default_factory=dict)  # (kind, key) -> fact
    # Issue 15: the (server, tool, fingerprint) the session registered; the version of the
    # tool registry the store holds (None: not read, one process owns the SQLite file);
    # whether the session read a prompt injection.
    tools: tuple[tuple[str, str, str], ...] = ()
    tools_version: int | None = None
    injection: TaintStatus = CLEAN

    @property
    def empty(self) -> bool:
        return not (
            self.standing
            or self.once
            or self.streak
            or self.taint
            or self.facts
            or self.tools
            or self.injection.untrusted
        )

    def weight(self) -> int:
        """Approximate bytes held (for the SQLite store's bounded cache)."""
        total = 400 + 200 * (len(self.standing) + len(self.once))
        if self.streak is not None:  # the live streak keeps arguments of up to 4 KiB
            live = self.streak.live
            total += 100 + len(self.streak.tool) + len(self.streak.digest)
            total += live.weight if live is not None else 0
        if self.taint:
            total += 100 + len(self.taint)
        for fact in self.facts.values():
            total += 250 + len(fact.key) + len(fact.detail)
        total += sum(200 + len(server) + len(name) for server, name, _ in self.tools)
        if self.injection.untrusted:
            total += 2_000
        return total


@dataclass(frozen=True, slots=True)
class StreakWrite:
    """The streak after an Inspect. `continued`: it went on from the stored one (same
    call) by `delta` calls, so a store that saw another writer's calls adds the delta
    to what it holds instead of overwriting it."""

    streak: Streak
    count: int
    continued: bool
    delta: int

    @property
    def tool(self) -> str:
        return self.streak.name

    @property
    def digest(self) -> str:
        """Computed when a store writes it (the SQLite store's copy does not need it)."""
        return self.streak.digest_hex()


@dataclass(slots=True)
class Writes:
    streak: StreakWrite | None = None
    taint: str | None = None  # newly tainted: kept only if the session had no taint
    facts: list[Fact] = field(default_factory=list)
    decision_id: str = ""
    questions: list[Question] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.streak or self.taint or self.facts or self.questions)

"""Random sessions through one real server, checked after every Project.

A simulated runtime drives each session: a system prompt and requests of random
sizes, model turns with parallel tool calls, results from a few characters to tens
of thousands (some not ASCII), receipts and reminders, usage reports (mostly right,
some wrong, some late, some missing) from a simulated provider whose tokenizer
counts a fixed factor more or less than the estimate, projections while calls wait
for results, and the provider's context-exceeded refusal with the runtime's retry.

After every Project: the view is within the limit (by the sidecar's count, and by
the provider's once the runtime has retried), or the call failed cleanly and stored
nothing; provider pairing holds; no compaction repeats itself (each hides a message
the runtime sent, or shortens a result); a projection with nothing new settles.
History is compared with everything stored, in order and byte for byte, as the
session goes and at its end.

`make test` runs CONTEXT_PROPERTY_SESSIONS=300 (the default); for a longer run:
CONTEXT_PROPERTY_SESSIONS=3000 CONTEXT_PROPERTY_SEED=7 pytest tests/test_context_properties.py
"""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from sidecar.context.tokens import estimate
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar
from tests.context_helpers import (
    call,
    domain,
    history_of,
    provider_problems,
    result,
    text,
    view_estimate,
)

SESSIONS = int(os.environ.get("CONTEXT_PROPERTY_SESSIONS", "300"))
SEED = int(os.environ.get("CONTEXT_PROPERTY_SEED", "1"))
CONCURRENT = 8
LIMITS = (600, 1_000, 2_000, 4_000, 8_000, 32_000)
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "file",
    "test",
    "error",
    "line",
    "value",
    "result",
    "module",
    "build",
]
WIDE = "数据处理错误模块测试结果"  # three UTF-8 bytes a character


class Dead(Exception):
    """The session ended with a clean FAILED_PRECONDITION (a valid outcome)."""


@dataclass
class Stats:
    sessions: int = 0
    projects: int = 0
    compactions: int = 0
    elided: int = 0
    retries: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)


def body(rng: random.Random, size: int) -> str:
    wide = rng.random() < 0.1
    lines: list[str] = []
    length = 0
    while length < size:
        if wide:
            line = "".join(rng.choice(WIDE) for _ in range(rng.randint(5, 30)))
        else:
            line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12)))
        lines.append(line)
        length += len(line) + 1
    return "\n".join(lines)[:size] or "x"


def size(rng: random.Random) -> int:
    roll = rng.random()
    if roll < 0.35:
        return rng.randint(5, 100)
    if roll < 0.65:
        return rng.randint(100, 1_500)
    if roll < 0.85:
        return rng.randint(1_500, 6_000)
    if roll < 0.97:
        return rng.randint(6_000, 25_000)
    return rng.randint(25_000, 60_000)


class Runtime:
    """One simulated agent runtime and its provider, for one session."""

    def __init__(
        self,
        stub: pb_grpc.ContextServiceStub,
        session: str,
        seed: int,
        stats: Stats,
        database: sqlite3.Connection,
    ):
        self.stub = stub
        self.database = database
        self.session = session
        self.rng = random.Random(seed)
        self.seed = seed
        self.stats = stats
        self.limit = self.rng.choice(LIMITS)
        self.factor = self.rng.choice((0.8, 1.0, 1.0, 1.1, 1.25))  # the provider's tokenizer
        self.stored: list[pb.Message] = []  # every message stored, in order
        self.view: list[pb.Message] = []  # the last view Project returned
        self.pending: list[pb.Message] = []  # messages not yet sent
        self.unseen: list[pb.Message] = []  # appended since the last view
        self.usage: pb.Usage | None = None
        self.serial = 0

    def where(self) -> str:
        return f"session {self.session} (seed {self.seed}, limit {self.limit})"

    def new_id(self, prefix: str) -> str:
        self.serial += 1
        return f"{prefix}{self.serial}"

    def provider_count(self, messages: list[pb.Message]) -> int:
        return round(self.factor * view_estimate(messages))

    # -- the conversation ----------------------------------------------------------

    async def run(self) -> None:
        try:
            await self.conversation()
        except AssertionError:
            raise
        except Exception as error:
            raise AssertionError(f"{self.where()}: {error!r}") from error

    async def conversation(self) -> None:
        rng = self.rng
        if rng.random() < 0.9:
            system = body(rng, rng.choice((30, 200, 1_500, self.limit // 2, 3 * self.limit)))
            self.pending.append(text(self.new_id("sys"), pb.ROLE_SYSTEM, system))
        self.request()
        try:
            for _ in range(rng.randint(6, 24)):
                await self.turn()
            await self.project()
            await self.check_history()
            self.stats.outcomes["finished"] += 1
        except Dead as dead:
            self.stats.outcomes[f"ended: {dead}"] += 1
            await self.check_history()

    def request(self) -> None:
        rng = self.rng
        n = rng.random()
        length = rng.randint(10, 300) if n < 0.9 else rng.randint(300, 5 * self.limit)
        if rng.random() < 0.15:
            self.pending.append(
                text(
                    self.new_id("rem"),
                    pb.ROLE_USER,
                    "Remember the tests.",
                    kind=pb.MESSAGE_KIND_REMINDER,
                )
            )
        self.pending.append(text(self.new_id("u"), pb.ROLE_USER, body(rng, length)))

    async def turn(self) -> None:
        rng = self.rng
        roll = rng.random()
        if roll < 0.15:
            self.request()
            await self.project()
            return
        if roll < 0.3:
            reply = text(self.new_id("a"), pb.ROLE_ASSISTANT, body(rng, rng.randint(5, 800)))
            self.report(reply)
            self.pending.append(reply)
            await self.project()
            return
        # A model response with parallel calls, then their results.
        calls = [
            (
                self.new_id("c"),
                rng.choice(("shell", "read_file", "grep")),
                body(rng, rng.randint(5, 200)),
            )
            for _ in range(rng.choice((1, 1, 1, 2, 3, 4)))
        ]
        assistant = call(self.new_id("a"), *calls, response_id=self.new_id("r"))
        self.report(assistant)
        self.pending.append(assistant)
        results = [
            result(self.new_id("t"), call_id, body(rng, size(rng)), is_error=rng.random() < 0.1)
            for call_id, _, _ in calls
        ]
        if rng.random() < 0.25:
            await self.project()  # the runtime asks before running the calls
        if rng.random() < 0.1:
            self.pending.append(
                text(self.new_id("rc"), pb.ROLE_USER, "ran it", kind=pb.MESSAGE_KIND_RECEIPT)
            )
        if len(results) > 1 and rng.random() < 0.3:
            self.pending.append(results.pop(0))
            await self.project()  # one result in, the others still running
        self.pending += results
        if rng.random() < 0.2:
            await self.append()
        else:
            await self.project()
        if rng.random() < 0.15:
            await self.settles()

    def report(self, assistant: pb.Message) -> None:
        """The usage of the model call that wrote `assistant`, as the provider says."""
        rng = self.rng
        if rng.random() < 0.2:
            return
        seen = self.provider_count(self.view + self.pending)
        total = seen + round(self.factor * estimate(domain(assistant)))
        if rng.random() < 0.1:
            total = max(1, round(total * rng.choice((0.05, 0.3, 3.0))))  # a wrong report
        through = assistant.id if rng.random() < 0.3 else ""
        self.usage = pb.Usage(
            input_tokens=total // 2, output_tokens=total - total // 2, through_message_id=through
        )

    # -- calls and checks ------------------------------------------------------------

    async def append(self) -> None:
        before = len(self.stored)
        batch, usage = self.pending, self.usage
        self.pending, self.usage = [], None
        await self.stub.Append(
            pb.AppendRequest(session_id=self.session, messages=batch, usage=usage)
        )
        self.stored += batch
        self.unseen += batch  # in the view from now on, though no Project showed it yet
        assert len(self.stored) == before + len(batch)

    async def project(
        self, reason: pb.ProjectReason.ValueType = pb.PROJECT_REASON_NORMAL, retry: bool = False
    ) -> None:
        batch, usage = self.pending, self.usage
        request = pb.ProjectRequest(
            session_id=self.session, messages=batch, usage=usage, context_limit=self.limit,
            reason=reason,
        )  # fmt: skip
        concurrent = self.rng.random() < 0.1 and bool(self.stored)
        try:
            if concurrent:  # another reader of the same session at the same time
                outcomes: tuple[Any, Any] = await asyncio.gather(
                    self.stub.Project(request),
                    self.stub.Project(pb.ProjectRequest(session_id=self.session)),
                    return_exceptions=True,
                )
                if isinstance(outcomes[1], grpc.aio.AioRpcError):
                    assert outcomes[1].code() == grpc.StatusCode.FAILED_PRECONDITION, outcomes[1]
                if isinstance(outcomes[0], BaseException):
                    raise outcomes[0]
                response: pb.ProjectResponse = outcomes[0]
            else:
                response = await self.stub.Project(request)
        except grpc.aio.AioRpcError as error:
            assert error.code() == grpc.StatusCode.FAILED_PRECONDITION, (self.where(), error)
            self.stats.refused[_reason(error.details() or "")] += 1
            if os.environ.get("CONTEXT_PROPERTY_VERBOSE"):
                print(self.where(), error.details())
            # Failed cleanly: nothing it carried was stored.
            history = await history_of(self.stub, self.session) if self.stored else []
            assert [m.id for m in history] == self.user_visible_ids(self.stored), self.where()
            asked = [m for m in batch if m.role == pb.ROLE_USER and m.kind == 0]
            if reason == pb.PROJECT_REASON_CONTEXT_EXCEEDED or not asked or retry:
                raise Dead(_reason(error.details() or "")) from None
            # The person is asked for a shorter request; the rest goes again as it was.
            shorter = text(self.new_id("u"), pb.ROLE_USER, "Shorter: go on.")
            self.pending = [
                shorter if m is asked[0] else m for m in batch if m is asked[0] or m not in asked
            ]
            self.usage = None
            return await self.project(retry=True)
        self.pending, self.usage = [], None
        self.stored += batch
        self.check(response, batch)
        if response.compaction.compacted:
            # A compaction leaves the view settled: once more with nothing new does nothing.
            again = await self.stub.Project(
                pb.ProjectRequest(session_id=self.session, context_limit=self.limit)
            )
            assert not again.compaction.compacted, (self.where(), again.compaction)
            self.check(again, [])
        if self.provider_count(list(response.messages)) > self.limit:
            # The provider refuses the call; the runtime asks for a smaller view.
            self.stats.retries += 1
            await self.project(pb.PROJECT_REASON_CONTEXT_EXCEEDED)

    def check(self, response: pb.ProjectResponse, batch: list[pb.Message]) -> None:
        self.stats.projects += 1
        where = self.where()
        messages = list(response.messages)
        ids = [m.id for m in messages]
        tokens = response.tokens
        assert tokens.tokens <= self.limit, (where, tokens)
        assert tokens.tokens == tokens.provider_tokens + tokens.estimated_tokens, where
        assert provider_problems(messages) == [], (where, ids)
        assert len(set(ids)) == len(ids), (where, ids)
        sent = {m.id for m in self.stored}
        assert all(i in sent or i.startswith("~") for i in ids), (where, ids)
        # The estimate behind the count: a bounded ratio of the documented estimate.
        if tokens.provider_tokens:
            assert tokens.usage_through_message_id in ids, where
            after = messages[ids.index(tokens.usage_through_message_id) + 1 :]
        else:
            after = messages
        estimated = view_estimate(after)
        assert 0.5 * estimated - 1 <= tokens.estimated_tokens <= 2 * estimated + 1, (
            where, tokens, estimated,
        )  # fmt: skip
        # The anchors stay verbatim: the system prompt and the latest request.
        requests = [m for m in self.stored if m.role == pb.ROLE_USER and m.kind == 0]
        if requests:
            assert requests[-1].id in ids, (where, requests[-1].id, ids)
        systems = [m for m in self.stored if m.role == pb.ROLE_SYSTEM]
        if systems:
            assert ids[0] == systems[0].id, where
        self.check_store(ids)
        report = response.compaction
        if report.compacted:
            self.stats.compactions += 1
            before = {m.id for m in [*self.view, *self.unseen, *batch]}
            hidden = before - set(ids)
            # Not a repeat: it hid something the runtime sent, or shortened a result.
            assert any(not i.startswith("~") for i in hidden) or response.elided_message_ids, (
                where, hidden,
            )  # fmt: skip
            assert report.tokens_after <= self.limit, where
        self.stats.elided += len(response.elided_message_ids)
        self.view = messages
        self.unseen = []

    def check_store(self, ids: list[str]) -> None:
        """What the file holds is what the agent was shown (read on a connection of the
        test's own): the server's memory and its store agree, so a view loaded again
        after an eviction or a restart is the same."""
        rows = self.database.execute(
            "SELECT id, role, tokens FROM messages WHERE session_id = ? AND agent_visible = 1 "
            "ORDER BY position, seq",
            (self.session,),
        ).fetchall()
        # A background tool-pair summary may have replaced a result since the response.
        stored = [_before_summary(r[0]) for r in rows]
        shown = [_before_summary(i) for i in ids]
        # Only messages whose calls all still wait for results are left out of a view.
        missing = set(stored) - set(shown)
        assert [i for i in stored if i not in missing] == shown, (self.where(), stored, shown)
        assert all(r[1] == "assistant" for r in rows if r[0] in missing), (self.where(), missing)
        (view_tokens,) = self.database.execute(
            "SELECT view_tokens FROM sessions WHERE id = ?", (self.session,)
        ).fetchone()
        assert view_tokens == sum(r[2] for r in rows), self.where()

    async def settles(self) -> None:
        """Once a projection succeeded, projecting again with nothing new changes nothing."""
        await self.project()
        again = await self.stub.Project(
            pb.ProjectRequest(session_id=self.session, context_limit=self.limit)
        )
        assert not again.compaction.compacted, self.where()
        shown = {m.id for m in self.view}
        summaries = {m.id for m in again.messages if m.role == pb.ROLE_TOOL and "~summary" in m.id}
        if not summaries - shown:  # no background tool-pair summary landed meanwhile
            assert [m.id for m in again.messages] == [m.id for m in self.view], self.where()
        self.check(again, [])

    async def check_history(self) -> None:
        if not self.stored:
            return
        history = await history_of(self.stub, self.session)
        assert [m.id for m in history] == self.user_visible_ids(self.stored), self.where()
        stored = {m.id: m for m in self.stored}
        for message in history:
            assert message.parts == stored[message.id].parts, (self.where(), message.id)

    @staticmethod
    def user_visible_ids(messages: list[pb.Message]) -> list[str]:
        agent_only = (pb.MESSAGE_KIND_REMINDER,)
        return [m.id for m in messages if m.kind not in agent_only]


def _before_summary(message_id: str) -> str:
    """The result a tool-pair summary (`~<id>~summary-<seq>`) stands in for."""
    if message_id.startswith("~") and "~summary-" in message_id[1:]:
        return message_id[1 : message_id.rindex("~summary-")]
    return message_id


def _reason(details: str) -> str:
    for known in ("alone exceed", "even compacted", "recovery compactions", "over the context"):
        if known in details:
            return known
    return details[:60]


async def test_random_sessions_keep_every_invariant(
    start_sidecar: StartSidecar, state_path: Path
) -> None:
    # A small cache: sessions' views are evicted and read back from the file as they go.
    sidecar = await start_sidecar(context_cache_mib=1, decision_log="off")
    stats = Stats()
    database = sqlite3.connect(f"file:{state_path}?mode=ro", uri=True)
    try:
        async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
            stub = pb_grpc.ContextServiceStub(channel)
            queue = list(range(SESSIONS))

            async def worker() -> None:
                while queue:
                    n = queue.pop()
                    seed = SEED * 1_000_003 + n
                    await Runtime(stub, f"s{SEED}-{n}", seed, stats, database).run()
                    stats.sessions += 1

            await asyncio.gather(*(worker() for _ in range(CONCURRENT)))
    finally:
        database.close()
    assert sidecar.context is not None
    await sidecar.context.drain()
    print(
        f"\n{stats.sessions} sessions, {stats.projects} projections, {stats.compactions} "
        f"compactions, {stats.elided} results elided, {stats.retries} context-exceeded "
        f"retries; outcomes {dict(stats.outcomes)}; refused {dict(stats.refused)}"
    )
    assert stats.sessions == SESSIONS
    assert stats.compactions > 0 and stats.elided > 0 and stats.retries > 0
    # Sessions end early only for the reasons a runtime can act on.
    known = {"alone exceed", "even compacted", "recovery compactions", "over the context"}
    assert set(stats.refused) <= known, stats.refused

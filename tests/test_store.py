"""The store suite: every engine keeps the same promises.

Each test runs on the SQLite file as one server process uses it (`sqlite`: an exact copy
of Inspect state kept in memory), on the SQLite file as several workers share it
(`sqlite-workers`: no copy, every read goes to the file), and on a real PostgreSQL that
the tests start (`postgresql`). Tests about two writers open two stores on one database,
as two replicas or two workers would.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from sidecar.context.messages import Message, Role, SessionState, Text
from sidecar.context.messages import ToolCall as ContextCall
from sidecar.context.store import Change, SqlSessionStore
from sidecar.inspection.answers import arguments_digest
from sidecar.inspection.model import CallVerdict, ToolCall
from sidecar.inspection.repetition import Streak
from sidecar.inspection.verdict import Verdict
from sidecar.integrity.definitions import ToolDefinition
from sidecar.state.approvals import AnswerRefused, ApprovalStore, Question, Refusal
from sidecar.state.injection_taint import SessionTaint
from sidecar.state.session_facts import MAX_DETAIL, Fact
from sidecar.state.store import SESSION_TABLES, StateStore
from sidecar.state.tool_registry import DELETED_SESSION, ToolKey, ToolRegistry
from sidecar.store.errors import StateError
from sidecar.store.model import StreakWrite, Writes
from sidecar.store.postgres import PostgresStore
from sidecar.store.postgres_schema import MIGRATIONS as PG_MIGRATIONS
from sidecar.store.sqlite import SqliteStore
from sidecar.store.states import SessionStates

Store = SqliteStore | PostgresStore
OpenStore = Callable[[], Awaitable[Store]]


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


CALL = ToolCall("c1", "write_file", {"path": "a", "content": "x"})
DIGEST = arguments_digest(CALL)


@pytest.fixture(params=["sqlite", "sqlite-workers", "postgresql"])
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["sqlite-workers", "postgresql"])
def shared_engine(request: pytest.FixtureRequest) -> str:
    """Engines several processes write at once (one server process owns a SQLite file
    that keeps a copy in memory: that mode has one writer)."""
    return str(request.param)


def _opener(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest, opened: list[Store]
) -> OpenStore:
    dsn = request.getfixturevalue("postgres_dsn") if engine == "postgresql" else ""

    async def make() -> Store:
        store: Store
        if engine == "postgresql":
            store = PostgresStore(dsn)
        else:
            store = SqliteStore(str(tmp_path / "state.db"), shared=engine == "sqlite-workers")
        await store.open()
        opened.append(store)
        return store

    return make


@pytest.fixture
async def open_store(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[OpenStore]:
    """Opens a store on this test's database; each call is another process's view."""
    opened: list[Store] = []
    yield _opener(engine, tmp_path, request, opened)
    for store in opened:
        await store.close()


@pytest.fixture
async def open_shared(
    shared_engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[OpenStore]:
    opened: list[Store] = []
    yield _opener(shared_engine, tmp_path, request, opened)
    for store in opened:
        await store.close()


async def rows(store: Store, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    async with store.database.reading("test") as db:
        return [tuple(r) for r in await db.fetch(sql, args)]


def approvals(store: Store, clock: Clock, **options: float) -> ApprovalStore:
    return ApprovalStore(store.database, clock=clock, changed=store.changed, **options)  # type: ignore[arg-type]


async def ask(store: Store, session: str, decision: str, *questions: Question) -> None:
    await store.save_session(session, Writes(decision_id=decision, questions=list(questions)))


# -- answers ---------------------------------------------------------------------------


def test_the_digest_ignores_key_order_and_nothing_else() -> None:
    reordered = ToolCall("other-id", "write_file", {"content": "x", "path": "a"})
    assert arguments_digest(reordered) == DIGEST
    assert arguments_digest(ToolCall("c1", "write_file", {"path": "a", "content": "y"})) != DIGEST
    assert arguments_digest(ToolCall("c1", "write_file", {"path": "a", "content": 1})) != (
        arguments_digest(ToolCall("c1", "write_file", {"path": "a", "content": True}))
    )
    assert len(DIGEST) == 64  # sha256, hex
    assert arguments_digest(ToolCall("c", "t", {"x": "\udcff"}))


async def test_a_question_expires(open_store: OpenStore) -> None:
    store, clock = await open_store(), Clock()
    answers = approvals(store, clock, question_ttl_seconds=60)
    # Questions are stamped with the wall clock; the answer's clock runs ahead of it.
    clock.now = (await _asked_at(store, "s", "d")) + 61
    with pytest.raises(AnswerRefused) as refused:
        await answers.answer("s", "d", "c1", "write_file", "allow_once", Verdict.ALLOW, False)
    assert refused.value.refusal is Refusal.EXPIRED
    clock.now -= 2  # just inside its lifetime
    assert await answers.answer("s", "d", "c1", "", "allow_once", Verdict.ALLOW, False) == (
        "write_file"
    )
    with pytest.raises(AnswerRefused) as again:
        await answers.answer("s", "d", "c1", "", "allow_once", Verdict.ALLOW, False)
    assert again.value.refusal is Refusal.ANSWERED


async def _asked_at(store: Store, session: str, decision: str) -> float:
    await ask(store, session, decision, Question("c1", "write_file", DIGEST))
    ((asked,),) = await rows(
        store,
        "SELECT asked_at FROM approval_questions WHERE session_id = ? AND decision_id = ?",
        session,
        decision,
    )
    return float(asked)


async def test_refusals_name_what_was_wrong(open_store: OpenStore) -> None:
    store = await open_store()
    answers = approvals(store, Clock(), question_ttl_seconds=10**9)
    await ask(store, "s", "d", Question("c1", "write_file", DIGEST))
    with pytest.raises(AnswerRefused) as never:
        await answers.answer("s", "d", "c9", "", "allow_once", Verdict.ALLOW, False)
    assert never.value.refusal is Refusal.NOT_ASKED
    with pytest.raises(AnswerRefused) as other:
        await answers.answer("s", "d", "c1", "shell", "allow_once", Verdict.ALLOW, False)
    assert other.value.refusal is Refusal.OTHER_TOOL
    with pytest.raises(AnswerRefused):  # another session's question
        await answers.answer("t", "d", "c1", "", "allow_once", Verdict.ALLOW, False)


def _verdict(verdict: Verdict, call: ToolCall = CALL) -> CallVerdict:
    return CallVerdict(call, verdict, "the policy's reason", "prompt" * (verdict == 2), [])


@pytest.mark.parametrize(
    ("before", "answer", "after"),
    [
        (Verdict.REQUIRE_APPROVAL, Verdict.ALLOW, Verdict.ALLOW),
        (Verdict.REQUIRE_APPROVAL, Verdict.DENY, Verdict.DENY),
        (Verdict.DENY, Verdict.ALLOW, Verdict.DENY),  # an answer never loosens a denial
        (Verdict.ALLOW, Verdict.DENY, Verdict.DENY),  # but may tighten an allow
        (Verdict.ALLOW, Verdict.ALLOW, Verdict.ALLOW),
    ],
)
async def test_how_a_once_answer_settles_a_verdict(
    open_store: OpenStore, before: Verdict, answer: Verdict, after: Verdict
) -> None:
    store, clock = await open_store(), Clock()
    answers = approvals(store, clock, question_ttl_seconds=10**9)
    await ask(store, "s", "d", Question("c1", "write_file", DIGEST))
    await answers.answer("s", "d", "c1", "", "x_once", answer, False)
    states = SessionStates(store, clock=clock)
    work = await states.begin("s")
    (settled,) = await states.settle_once(work, [_verdict(before)])
    states.end(work)
    assert settled.verdict is after
    assert settled.approval_prompt == ""
    assert settled.findings[-1].rule_id == "permission.answered_once"
    if before is Verdict.DENY:
        assert settled.reason == "the policy's reason"
    # Used up, whatever the outcome.
    assert not (await store.load_session("s")).once
    assert await rows(store, "SELECT * FROM once_answers") == []


async def test_an_unused_once_answer_expires(open_store: OpenStore) -> None:
    store, clock = await open_store(), Clock()
    answers = approvals(store, clock, question_ttl_seconds=10**9)
    await ask(store, "s", "d", Question("c1", "write_file", DIGEST))
    await answers.answer("s", "d", "c1", "", "allow_once", Verdict.ALLOW, False)
    clock.now += 31
    states = SessionStates(store, once_ttl_seconds=30, clock=clock)
    work = await states.begin("s")
    (settled,) = await states.settle_once(work, [_verdict(Verdict.REQUIRE_APPROVAL)])
    states.end(work)
    assert settled.verdict is Verdict.REQUIRE_APPROVAL  # too old: not used...
    assert not (await store.load_session("s")).once  # ...but used up
    # Pruning drops expired ones that no call asked about again.
    await ask(store, "s", "d2", Question("c2", "t", "x"))
    await answers.answer("s", "d2", "c2", "", "deny_once", Verdict.DENY, False)
    later = Clock()
    later.now = clock.now + 31
    pruning = approvals(store, later, once_ttl_seconds=30, question_ttl_seconds=10**9)
    assert await pruning.prune() >= 1
    assert await rows(store, "SELECT * FROM once_answers") == []


async def test_questions_beyond_the_cap_go_oldest_first(open_store: OpenStore) -> None:
    store, clock = await open_store(), Clock()
    answers = approvals(store, clock, max_questions=3, question_ttl_seconds=10**9)
    for index in range(5):
        await ask(store, "s", f"d{index}", Question("c", "t", "x"))
        await asyncio.sleep(0.002)  # distinct asked_at stamps
    assert await answers.prune() == 2
    for index in (0, 1):
        with pytest.raises(AnswerRefused):
            await answers.answer("s", f"d{index}", "c", "t", "allow_once", Verdict.ALLOW, False)
    await answers.answer("s", "d2", "c", "t", "allow_once", Verdict.ALLOW, False)


async def test_expired_questions_are_pruned(open_store: OpenStore) -> None:
    store = await open_store()
    asked = await _asked_at(store, "s", "old")
    clock = Clock()
    clock.now = asked + 11
    assert await approvals(store, clock, question_ttl_seconds=10).prune() == 1
    assert await rows(store, "SELECT decision_id FROM approval_questions") == []


async def test_standing_answers_are_found_after_reopening(open_store: OpenStore) -> None:
    store = await open_store()
    await approvals(store, Clock()).set_standing("b", "deploy", "always_deny", Verdict.DENY)
    assert (await store.load_session("b")).standing == {"deploy": Verdict.DENY}
    await store.close()
    reopened = await open_store()
    assert (await reopened.load_session("b")).standing == {"deploy": Verdict.DENY}
    assert (await reopened.load_session("a")).standing == {}
    audit = await rows(reopened, "SELECT session_id, tool_name, answer FROM answer_log")
    assert audit == [("b", "deploy", "always_deny")]


async def test_an_answer_replaces_the_snapshot_a_store_held(open_store: OpenStore) -> None:
    """The SQLite store's copy of a session is dropped when its answers change."""
    store = await open_store()
    assert (await store.load_session("s")).standing == {}
    answers = approvals(store, Clock())
    await answers.set_standing("s", "deploy", "always_allow", Verdict.ALLOW)
    assert (await store.load_session("s")).standing == {"deploy": Verdict.ALLOW}
    await answers.set_standing("s", "deploy", "always_deny", Verdict.DENY)
    assert (await store.load_session("s")).standing == {"deploy": Verdict.DENY}


# -- Inspect state ----------------------------------------------------------------------


async def test_a_snapshot_holds_what_inspects_wrote(open_store: OpenStore) -> None:
    store = await open_store()
    await store.save_session(
        "s",
        Writes(
            streak=StreakWrite(Streak.stored("shell", "ab" * 32, 3), 3, continued=False, delta=3),
            taint="~/.ssh/id_rsa",
            facts=[Fact("file", "/tmp/x", "network"), Fact("cwd", "last", "", "/w\x00x")],
        ),
    )
    await store.save_session(
        "s",
        Writes(
            streak=StreakWrite(Streak.stored("shell", "ab" * 32, 5), 5, continued=True, delta=2),
            taint="~/.aws/credentials",  # the first taint stays
            facts=[Fact("file", "/tmp/x", "decoded", "echo hi")],  # a fact is replaced
        ),
    )
    await store.close()
    snapshot = await (await open_store()).load_session("s")
    assert snapshot.streak is not None
    assert (snapshot.streak.tool, snapshot.streak.count) == ("shell", 5)
    assert snapshot.taint == "~/.ssh/id_rsa"
    assert snapshot.facts == {
        ("file", "/tmp/x"): Fact("file", "/tmp/x", "decoded", "echo hi"),
        # PostgreSQL text cannot hold NUL: both engines keep U+FFFD instead.
        ("cwd", "last"): Fact("cwd", "last", "", "/w\ufffdx"),
    }


async def test_a_session_with_nothing_stored_costs_no_query(tmp_path: Path) -> None:
    """One server process on SQLite: sessions without state are known from memory."""
    store = SqliteStore(str(tmp_path / "state.db"))
    await store.save_session("busy", Writes(taint="x"))
    statements: list[str] = []
    store.file.connection.set_trace_callback(statements.append)
    assert (await store.load_session("new")).empty
    assert statements == []
    assert (await store.load_session("busy")).taint == "x"  # read once...
    count = len(statements)
    assert (await store.load_session("busy")).taint == "x"  # ...then held
    assert len(statements) == count
    reopened = SqliteStore(str(tmp_path / "state.db"))  # the index is rebuilt at open
    assert (await reopened.load_session("busy")).taint == "x"


async def test_a_working_copy_counts_repeats_and_records_facts_across_a_batch(
    open_store: OpenStore,
) -> None:
    store = await open_store()
    states = SessionStates(store)
    call = ToolCall("1", "shell", {"command": "ls"})
    work = await states.begin("s")
    assert [states.streaks.observe("s", call) for _ in range(3)] == [1, 2, 3]
    states.facts.record("s", [Fact("file", "/tmp/a", "network")])
    assert states.facts.fact("s", "file", "/tmp/a") is not None  # the next call sees it
    states.taint.taint("s", "~/.ssh/id_rsa")
    await states.finish(work, "d", [Question("1", "shell", "x")])
    states.end(work)
    assert states.streaks.observe("s", call) == 1  # outside an Inspect: nothing counted
    work = await states.begin("s")
    assert states.streaks.observe("s", call) == 4
    assert states.taint.source("s") == "~/.ssh/id_rsa"
    assert states.facts.has_any("s")
    states.end(work)


async def test_facts_are_bounded_per_session(open_store: OpenStore) -> None:
    store = await open_store()
    states = SessionStates(store)
    work = await states.begin("s")
    big = "x" * (MAX_DETAIL + 10)
    states.facts.record("s", [Fact("file", f"/tmp/{i}", "literal", big) for i in range(70)])
    kept = [f for f in work.facts.values() if f.detail]
    assert all(len(f.detail) == MAX_DETAIL for f in kept)
    assert len(kept) == 64  # 4 MiB of details per session; the rest keep no content
    assert len(work.facts) == 70


# -- two processes on one database (replicas, or workers) --------------------------------


async def test_what_one_store_writes_decides_the_next_read_on_another(
    open_shared: OpenStore,
) -> None:
    one, two = await open_shared(), await open_shared()
    await approvals(one, Clock()).set_standing("s", "deploy", "always_deny", Verdict.DENY)
    assert (await two.load_session("s")).standing == {"deploy": Verdict.DENY}
    call = ToolCall("1", "shell", {"command": "make"})
    counts = []
    for store in (one, two, one, two):  # calls in a row, alternating replicas
        states = SessionStates(store)
        work = await states.begin("s")
        counts.append(states.streaks.observe("s", call))
        states.taint.taint("s", f"read by {store is one}")
        await states.finish(work, "d", [])
        states.end(work)
    assert counts == [1, 2, 3, 4]
    assert (await one.load_session("s")).taint == "read by True"


async def test_overlapping_inspects_on_two_stores_add_up_their_repeats(
    open_shared: OpenStore,
) -> None:
    one, two = await open_shared(), await open_shared()
    call = ToolCall("1", "shell", {"command": "make"})
    first = SessionStates(one)
    work = await first.begin("s")
    first.streaks.observe("s", call)
    await first.finish(work, "d", [])
    first.end(work)
    # Both replicas read a streak of 1, then each sees the same call twice.
    a, b = SessionStates(one), SessionStates(two)
    work_a, work_b = await a.begin("s"), await b.begin("s")
    for _ in range(2):
        a.streaks.observe("s", call)
        b.streaks.observe("s", call)
    await a.finish(work_a, "d", [])
    await b.finish(work_b, "d", [])
    snapshot = await two.load_session("s")
    assert snapshot.streak is not None and snapshot.streak.count == 5


async def test_only_one_store_uses_up_a_once_answer(open_shared: OpenStore) -> None:
    one, two = await open_shared(), await open_shared()
    clock = Clock()
    await ask(one, "s", "d", Question("c1", "write_file", DIGEST))
    await approvals(one, clock, question_ttl_seconds=10**9).answer(
        "s", "d", "c1", "", "allow_once", Verdict.ALLOW, False
    )
    working = []
    for store in (one, two):
        states = SessionStates(store, clock=clock)
        working.append((states, await states.begin("s")))  # both see the waiting answer
    results = [
        await states.settle_once(work, [_verdict(Verdict.REQUIRE_APPROVAL)])
        for states, work in working
    ]
    verdicts = sorted(r[0].verdict for r in results)
    assert verdicts == [Verdict.ALLOW, Verdict.REQUIRE_APPROVAL]


async def test_two_stores_answering_one_question_at_once_record_one_answer(
    open_shared: OpenStore,
) -> None:
    stores = [await open_shared() for _ in range(4)]
    await ask(stores[0], "s", "d", Question("c1", "write_file", DIGEST))
    outcomes = await asyncio.gather(
        *(
            approvals(s, Clock(), question_ttl_seconds=10**9).answer(
                "s", "d", "c1", "", "allow_once", Verdict.ALLOW, False
            )
            for s in stores
        ),
        return_exceptions=True,
    )
    assert sum(o == "write_file" for o in outcomes) == 1
    assert all(isinstance(o, AnswerRefused) for o in outcomes if o != "write_file")
    assert len(await rows(stores[0], "SELECT * FROM once_answers")) == 1


# -- sessions (the context service's storage) ---------------------------------------------


def _message(seq: int, text: str = "hello") -> Message:
    return Message(
        id=f"m{seq}", role=Role.USER, parts=(Text(text),), seq=seq, position=float(seq), tokens=2
    )


async def test_a_session_change_commits_only_on_the_version_it_was_planned_on(
    open_shared: OpenStore,
) -> None:
    one, two = await open_shared(), await open_shared()
    a = SqlSessionStore(one.database, one.delete_sessions)
    b = SqlSessionStore(two.database, two.delete_sessions)
    state = SessionState(id="s", version=1, next_seq=2)
    assert await a.commit(Change(state, 0, created=True, appended=[_message(1)]))
    # Another replica creating the same session loses, and stores nothing.
    assert not await b.commit(Change(state, 0, created=True, appended=[_message(1, "other")]))
    # Both plan on version 1; the first commit wins, the second changes nothing.
    planned = SessionState(id="s", version=2, next_seq=3)
    assert await b.commit(Change(planned, 1, appended=[_message(2, "from b")]))
    assert not await a.commit(Change(planned, 1, appended=[_message(2, "from a")]))
    assert await a.version("s") == 2
    history = await a.history("s", None, 10)
    assert [(m.id, m.parts) for m in history] == [
        ("m1", (Text("hello"),)),
        ("m2", (Text("from b"),)),
    ]


async def test_deleting_a_session_removes_every_row_of_it(open_store: OpenStore) -> None:
    store = await open_store()
    answers = approvals(store, Clock(), question_ttl_seconds=10**9)
    sessions = SqlSessionStore(store.database, store.delete_sessions)
    for session in ("gone", "kept"):
        await ask(
            store, session, "d", Question("c1", "write_file", DIGEST), Question("c2", "t", "y")
        )
        await answers.answer(session, "d", "c1", "", "allow_once", Verdict.ALLOW, False)
        await answers.answer(session, "d", "c2", "", "always_deny", Verdict.DENY, True)
        await store.save_session(
            session,
            Writes(
                streak=StreakWrite(Streak.stored("t", "00", 1), 1, False, 1),
                taint="x",
                facts=[Fact("file", "/a", "")],
            ),
        )
        state = SessionState(id=session, version=1, next_seq=3)
        calling = Message(
            id="m2", role=Role.ASSISTANT, parts=(ContextCall("call-1", "shell", "{}"),), seq=2,
            position=2.0,
        )  # fmt: skip
        appended = [_message(1), calling]
        assert await sessions.commit(Change(state, 0, created=True, appended=appended))
        # Issue 15: the tools the session was given, and a prompt injection it read.
        await ToolRegistry(store.database, store.changed).register(
            session, "srv", [ToolDefinition("tool", "Does a thing.")]
        )
        await SessionTaint(store.database, store.changed).flag(
            session, "m1", "append", ("r",), "ignore your instructions"
        )
    assert await sessions.delete(["gone", "never"]) == {"gone": 2}
    assert (await store.load_session("gone")).empty
    assert (await store.load_session("kept")).standing == {"t": Verdict.DENY}
    await store.flush()  # SQLite's copy writes streaks within a second (store/sqlite.py)
    for table, column in SESSION_TABLES:
        found = {r[0] for r in await rows(store, f"SELECT {column} FROM {table}")}
        assert found == {"kept"}, table
    # The trust log is about the tool: it stays, without the deleted session's name.
    # ("gone" saw the tool first; "kept" registered the same definition: nothing to log.)
    assert await rows(store, "SELECT event, asked_in FROM tool_trust_log") == [
        ("first_seen", DELETED_SESSION)
    ]
    await store.close()
    reopened = await open_store()
    assert (await reopened.load_session("gone")).empty
    assert (await reopened.load_session("kept")).taint == "x"


def test_every_session_table_is_deleted_with_its_session(tmp_path: Path) -> None:
    """A table with a session column must be in SESSION_TABLES (SQLite and PostgreSQL
    hold the same tables: test_the_engines_hold_the_same_tables)."""
    state = StateStore(str(tmp_path / "s.db"))
    with state.reading() as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        keyed = {
            table
            for table in tables
            for column in db.execute(f"PRAGMA table_info({table})")
            if column[1] == "session_id" or (table == "sessions" and column[1] == "id")
        }
    assert keyed == {table for table, _ in SESSION_TABLES}


async def test_the_engines_hold_the_same_tables(tmp_path: Path, postgres_dsn: str) -> None:
    sqlite = SqliteStore(str(tmp_path / "s.db"))
    with sqlite.file.reading() as db:
        expected = {
            (table, column[1])
            for (table,) in db.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name != 'sqlite_sequence'"
            )
            for column in db.execute(f"PRAGMA table_info({table})")
        }
    postgres = PostgresStore(postgres_dsn)
    await postgres.open()
    found = set(
        await rows(
            postgres,
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'public' AND table_name != 'sidecar_schema'",
        )
    )
    await postgres.close()
    assert found == expected


# -- schema ------------------------------------------------------------------------------


async def test_replicas_starting_together_migrate_once(postgres_dsn: str) -> None:
    stores = [PostgresStore(postgres_dsn) for _ in range(6)]
    await asyncio.gather(*(s.open() for s in stores))
    assert {s.schema_version for s in stores} == {len(PG_MIGRATIONS)}
    assert await rows(stores[0], "SELECT version FROM sidecar_schema") == [(len(PG_MIGRATIONS),)]
    for store in stores:
        await store.close()


async def test_a_newer_schema_is_refused_with_a_clear_message(
    postgres_dsn: str, tmp_path: Path
) -> None:
    store = PostgresStore(postgres_dsn)
    await store.open()
    async with store.database.transaction("test") as db:
        await db.execute("UPDATE sidecar_schema SET version = 99")
    await store.close()
    with pytest.raises(StateError, match=r"version 99, newer than this sidecar understands") as e:
        await PostgresStore(postgres_dsn).open()
    assert "***" in str(e.value) and postgres_dsn.split(":")[2].split("@")[0] not in str(e.value)
    path = tmp_path / "s.db"
    StateStore(str(path)).close()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(StateError, match="newer than this sidecar understands"):
        SqliteStore(str(path))


async def test_a_wrong_password_is_unavailable_and_never_shown(postgres_dsn: str) -> None:
    from sidecar.store.errors import StoreUnavailable

    user_part, host_part = postgres_dsn.split("@", 1)
    secret = user_part.split(":")[2]
    wrong = PostgresStore(f"postgresql://app:not-{secret}@{host_part}")
    with pytest.raises(StoreUnavailable) as error:
        await wrong.open()
    assert secret not in str(error.value)
    # The password may come from a file instead of the DSN.
    right = PostgresStore(f"postgresql://app@{host_part}", password=secret)
    await right.open()
    await right.close()
    with pytest.raises(asyncpg.PostgresError):  # sanity: the server does check passwords
        await asyncpg.connect(f"postgresql://app:wrong@{host_part}")


# -- issue 15: tool trust and injection taint ---------------------------------------------


async def test_tools_and_taint_reach_the_next_snapshot(open_store: OpenStore) -> None:
    store = await open_store()
    states = SessionStates(store, registry=ToolRegistry(store.database, store.changed))
    assert (await store.load_session("s")).empty  # cached as empty on the SQLite copy
    await ToolRegistry(store.database, store.changed).register(
        "s", "srv", [ToolDefinition("t", "one")]
    )
    taint = SessionTaint(store.database, store.changed)
    assert await taint.flag("s", "m1", "append", ("a", "b"), "ignore\x00 it")
    assert not await taint.flag("s", "m1", "append", ("a",), "again")  # same message
    assert not await taint.flag("s", "m2", "inspect", ("c",), "more")
    await taint.pending("s", "m3", "append")
    work = await states.begin("s")
    try:
        tool = states.tools.session_tool("s", "mcp__srv__t")
        assert tool is not None and not tool.record.changed
        assert states.tools.session_tool("s", "t", server="other") is None
        status = states.injection.status("s")
        assert status is not None and status.flagged is not None
        assert (status.flagged.message_id, status.flagged.rules) == ("m1", ("a", "b"))
        assert status.flagged.excerpt == "ignore\ufffd it"  # both engines: no NUL
        assert status.flagged_count == 2
        assert status.unchecked is not None and status.unchecked.state == "pending"
        assert status == await taint.status("s")
    finally:
        states.end(work)
    assert await taint.resolve("s", "m3", "clean") is False
    assert (await store.load_session("s")).injection.unchecked is None


async def test_trust_changed_through_one_store_decides_the_others_next_inspect(
    open_shared: OpenStore,
) -> None:
    one, two = await open_shared(), await open_shared()
    writer = ToolRegistry(one.database, one.changed)
    reader = ToolRegistry(two.database, two.changed)
    states = SessionStates(two, registry=reader)
    first, _ = await writer.register("s1", "srv", [ToolDefinition("t", "one")])
    work = await states.begin("s1")
    states.end(work)
    record = states.tools.record(ToolKey("srv", "t"))
    assert record is not None and not record.changed
    changed, _ = await writer.register("s2", "srv", [ToolDefinition("t", "two")])
    assert changed[0].trust == "changed"
    work = await states.begin("s2")  # the other's snapshot carries the newer version
    tool = states.tools.session_tool("s2", "t")
    states.end(work)
    assert tool is not None and tool.fingerprint != tool.record.trusted_fingerprint
    assert await reader.accept(ToolKey("srv", "t"), changed[0].fingerprint, "s2") == (
        first[0].fingerprint,
        changed[0].fingerprint,
    )
    # The writer, in turn, sees the acceptance at its next Inspect.
    writer_states = SessionStates(one, registry=writer)
    work = await writer_states.begin("s1")
    writer_states.end(work)
    trusted = writer_states.tools.record(ToolKey("srv", "t"))
    assert trusted is not None and trusted.trusted_fingerprint == changed[0].fingerprint
    assert [e[0] for e in await writer.audit(ToolKey("srv", "t"))] == [
        "first_seen",
        "changed",
        "accepted",
    ]


async def test_registering_one_tool_at_once_through_two_stores_trusts_one(
    open_shared: OpenStore,
) -> None:
    one, two = await open_shared(), await open_shared()
    registries = [ToolRegistry(s.database) for s in (one, two)]
    results = await asyncio.gather(
        *(
            registry.register(f"s{n}", "srv", [ToolDefinition(f"t{k}", f"from {n}")])
            for k in range(8)
            for n, registry in enumerate(registries)
        )
    )
    for k in range(8):
        a, b = results[2 * k][0][0], results[2 * k + 1][0][0]
        assert sorted([a.trust, b.trust]) == ["changed", "new"]
        assert a.trusted_fingerprint == b.trusted_fingerprint


async def test_tools_and_taint_written_while_an_inspect_runs_reach_the_next_one(
    open_store: OpenStore,
) -> None:
    """Inspects of one session that overlap share a working copy: one that starts after
    a taint or a registration was stored must not judge by the copy loaded before."""
    store = await open_store()

    def changed(session_id: str) -> None:
        store.changed(session_id)
        states.changed(session_id)

    registry = ToolRegistry(store.database, changed)
    states = SessionStates(store, registry=registry)
    running = await states.begin("s")  # an Inspect still running (a slow inspector, say)
    await SessionTaint(store.database, changed).flag("s", "o1", "inspect", ("r",), "ignore")
    await registry.register("s", "srv", [ToolDefinition("t", "one")])
    following = await states.begin("s")
    try:
        assert following is running  # still one copy: answers and streaks stay shared
        status = states.injection.status("s")
        assert status is not None and status.flagged is not None
        assert states.tools.session_tool("s", "t") is not None
    finally:
        states.end(following)
        states.end(running)

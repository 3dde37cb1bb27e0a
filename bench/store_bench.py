"""Append, Project and Inspect with stored answers: PostgreSQL against SQLite, in one run.

Two `sidecar serve` processes run side by side on Unix sockets, one on a SQLite file and
one on a PostgreSQL server started here on loopback (fsync off, as a database on a tmpfs
would be; the network hop is loopback's). Measurements alternate between them in short
rounds, so the host's noise falls on both alike.

- Append: one call and its result into one of 20 sessions.
- Project: a 100-message session, nothing new.
- Inspect with stored answers: mode approve, a tool the person answered "always allow"
  in that session (the answer decides), one of 20 sessions.
- Inspect of a registered tool (issue 15): the policy's mode, a call to one of the 20 tools a
  server registered in that session (the session's tools and the registry's version come
  with the snapshot), one of 20 sessions.

Run: python -m bench.store_bench (needs PostgreSQL: make tools)
"""

from __future__ import annotations

import asyncio
import itertools
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import grpc

from bench.served import Served
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.postgres_server import PostgresServer

SESSIONS = 20
OPS = ("Append", "Project", "Inspect", "InspectTool")
TOOLS = 20
SCHEMA = json.dumps({"type": "object", "properties": {"id": {"type": "string"}}})


@dataclass
class Result:
    p50: dict[tuple[str, str], list[float]]
    rate: dict[tuple[str, str], list[float]]


def _pair(n: int) -> list[pb.Message]:
    call = pb.Part(tool_call=pb.ToolCallPart(id=f"c{n}", name="ls", arguments="{}"))
    done = pb.Part(tool_result=pb.ToolResultPart(tool_call_id=f"c{n}", content="a.py b.py"))
    return [
        pb.Message(id=f"a{n}", role=pb.ROLE_ASSISTANT, parts=[call]),
        pb.Message(id=f"t{n}", role=pb.ROLE_TOOL, parts=[done]),
    ]


class Client:
    def __init__(self, target: str) -> None:
        self.channel = grpc.aio.insecure_channel(target)
        self.policy = pb_grpc.PolicyServiceStub(self.channel)
        self.context = pb_grpc.ContextServiceStub(self.channel)
        self.numbers = itertools.count()

    async def prepare(self) -> None:
        history = [
            pb.Message(
                id=f"m{i}",
                role=pb.ROLE_USER if i % 2 == 0 else pb.ROLE_ASSISTANT,
                parts=[pb.Part(text=pb.TextPart(text=f"message {i}: " + "words " * 30))],
            )
            for i in range(100)
        ]
        await self.context.Append(pb.AppendRequest(session_id="project", messages=history))
        for s in range(SESSIONS):
            await self.policy.RecordDecision(
                pb.RecordDecisionRequest(
                    session_id=f"answered-{s}", tool_name="deploy", answer=pb.ANSWER_ALWAYS_ALLOW
                )
            )
            tools = [
                pb.ToolDefinition(
                    name=f"tool_{t}",
                    description=f"Looks up record {t} in the catalogue and returns it.",
                    input_schema_json=SCHEMA,
                )
                for t in range(TOOLS)
            ]
            await self.policy.RegisterTools(
                pb.RegisterToolsRequest(session_id=f"tools-{s}", server="catalogue", tools=tools)
            )

    async def append(self) -> None:
        n = next(self.numbers)
        await self.context.Append(
            pb.AppendRequest(session_id=f"append-{n % SESSIONS}", messages=_pair(n))
        )

    async def project(self) -> None:
        await self.context.Project(pb.ProjectRequest(session_id="project"))

    async def inspect(self) -> None:
        n = next(self.numbers)
        call = pb.ToolCall(id="1", name="deploy", arguments_json=json.dumps({"n": n}))
        reply = await self.policy.Inspect(
            pb.InspectRequest(
                session_id=f"answered-{n % SESSIONS}",
                tool_calls=[call],
                mode=pb.PERMISSION_MODE_APPROVE,
            )
        )
        assert reply.verdicts[0].verdict == pb.VERDICT_ALLOW  # the stored answer decided

    async def inspect_tool(self) -> None:
        n = next(self.numbers)
        call = pb.ToolCall(
            id="1", name=f"tool_{n % TOOLS}", arguments_json=json.dumps({"id": str(n)})
        )
        reply = await self.policy.Inspect(
            pb.InspectRequest(session_id=f"tools-{n % SESSIONS}", tool_calls=[call])
        )
        # Trusted as first registered: the integrity inspector found nothing to say.
        assert not [f for f in reply.verdicts[0].findings if f.inspector == "integrity"]

    def op(self, name: str) -> Callable[[], Awaitable[None]]:
        return {
            "Append": self.append,
            "Project": self.project,
            "Inspect": self.inspect,
            "InspectTool": self.inspect_tool,
        }[name]


async def _serial(work: Callable[[], Awaitable[None]], calls: int) -> float:
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        await work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


async def _rate(work: Callable[[], Awaitable[None]], calls: int, concurrency: int = 16) -> float:
    left = iter(range(calls))

    async def worker() -> None:
        for _ in left:
            await work()

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return calls / (time.perf_counter() - started)


async def run(rounds: int = 5, calls: int = 200) -> Result:
    result = Result({}, {})
    database = PostgresServer().start()
    with tempfile.TemporaryDirectory() as directory:
        servers = {
            "sqlite": Served(Path(directory, "sqlite"), "--decision-log", "off"),
            "postgresql": Served(
                Path(directory, "postgresql"), "--decision-log", "off", state=database.dsn
            ),
        }
        try:
            await asyncio.gather(*(s.start() for s in servers.values()))
            clients = {name: Client(s.target) for name, s in servers.items()}
            for client in clients.values():
                await client.prepare()
                for op in OPS:  # warm up
                    await _serial(client.op(op), 20)
            for _ in range(rounds):
                for op in OPS:
                    for name, client in clients.items():
                        p50 = await _serial(client.op(op), calls)
                        rate = await _rate(client.op(op), calls * 2)
                        result.p50.setdefault((op, name), []).append(p50)
                        result.rate.setdefault((op, name), []).append(rate)
            for client in clients.values():
                await client.channel.close()
        finally:
            for served in servers.values():
                served.stop()
            database.stop()
    return result


def table(result: Result) -> str:
    rows = [
        "| call | serial p50, PostgreSQL ÷ SQLite | throughput at 16, PostgreSQL ÷ SQLite |",
        "|---|---|---|",
    ]
    for op in OPS:
        pg = statistics.median(result.p50[(op, "postgresql")]) * 1e6
        lite = statistics.median(result.p50[(op, "sqlite")]) * 1e6
        pg_rate = statistics.median(result.rate[(op, "postgresql")])
        lite_rate = statistics.median(result.rate[(op, "sqlite")])
        name = {
            "Inspect": "Inspect with stored answers",
            "InspectTool": "Inspect of a registered tool",
        }.get(op, op)
        rows.append(
            f"| {name} | {pg / lite:.2f}x ({pg:.0f} vs {lite:.0f} us) "
            f"| {pg_rate / lite_rate:.2f}x ({pg_rate:.0f} vs {lite_rate:.0f}/s) |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    print(table(asyncio.run(run())))

"""kill -9 under load loses nothing that was acknowledged: every answer to an approval
prompt and every appended message that got OK is there after a restart.

The reduced form runs a few seconds of load; DURABILITY_SECONDS=60 (or `make
durability`) runs the long one.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import grpc

from bench.served import Served
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc

SECONDS = float(os.environ.get("DURABILITY_SECONDS", "2"))
WORKERS = 8


async def _answer(
    stub: pb_grpc.PolicyServiceStub, worker: int, until: float, acknowledged: list[tuple[str, str]]
) -> None:
    """Ask (mode approve: every call needs approval), then answer "always allow"."""
    session = f"answers-{worker}"
    for n in range(10**9):
        if time.monotonic() > until:
            return
        call = pb.ToolCall(id=f"c{n}", name=f"tool_{n}", arguments_json="{}")
        asked = await stub.Inspect(pb.InspectRequest(session_id=session, tool_calls=[call]))
        await stub.RecordDecision(
            pb.RecordDecisionRequest(
                session_id=session,
                tool_name=call.name,
                answer=pb.ANSWER_ALWAYS_ALLOW,
                decision_id=asked.decision_id,
                tool_call_id=call.id,
            )
        )
        acknowledged.append((session, call.name))


async def _append(
    stub: pb_grpc.ContextServiceStub, worker: int, until: float, acknowledged: list[tuple[str, str]]
) -> None:
    session = f"history-{worker}"
    for n in range(10**9):
        if time.monotonic() > until:
            return
        message = pb.Message(
            id=f"m{n}", role=pb.ROLE_USER, parts=[pb.Part(text=pb.TextPart(text=f"step {n}"))]
        )
        await stub.Append(pb.AppendRequest(session_id=session, messages=[message]))
        acknowledged.append((session, message.id))


async def _load_then_kill(served: Served) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    answers: list[tuple[str, str]] = []
    appends: list[tuple[str, str]] = []
    async with grpc.aio.insecure_channel(served.target) as channel:
        policy = pb_grpc.PolicyServiceStub(channel)
        context = pb_grpc.ContextServiceStub(channel)
        until = time.monotonic() + 3600  # the workers run until the kill stops them
        workers = [
            asyncio.ensure_future(_answer(policy, i, until, answers)) for i in range(WORKERS)
        ] + [asyncio.ensure_future(_append(context, i, until, appends)) for i in range(WORKERS)]
        await asyncio.sleep(SECONDS)
        served.kill9()  # in the middle of calls: whatever was not acknowledged may be lost
        results = await asyncio.gather(*workers, return_exceptions=True)
    # Every worker was cut short by the kill, not by a failure before it.
    assert all(isinstance(r, grpc.aio.AioRpcError) for r in results), results
    return answers, appends


async def _check_answers(stub: pb_grpc.PolicyServiceStub, answers: list[tuple[str, str]]) -> int:
    by_session: dict[str, list[str]] = {}
    for session, tool in answers:
        by_session.setdefault(session, []).append(tool)
    lost = 0
    for session, tools in by_session.items():
        for start in range(0, len(tools), 50):
            calls = [
                pb.ToolCall(id=f"v{i}", name=tool, arguments_json="{}")
                for i, tool in enumerate(tools[start : start + 50])
            ]
            response = await stub.Inspect(pb.InspectRequest(session_id=session, tool_calls=calls))
            lost += sum(v.verdict != pb.VERDICT_ALLOW for v in response.verdicts)
    return lost


async def _check_appends(stub: pb_grpc.ContextServiceStub, appends: list[tuple[str, str]]) -> int:
    stored: set[tuple[str, str]] = set()
    for session in {s for s, _ in appends}:
        token = ""
        while True:
            page = await stub.History(
                pb.HistoryRequest(session_id=session, page_size=1000, page_token=token)
            )
            stored.update((session, m.id) for m in page.messages)
            token = page.next_page_token
            if not token:
                break
    return sum(item not in stored for item in appends)


async def test_kill_9_under_load_loses_no_acknowledged_answer_or_append(tmp_path: Path) -> None:
    served = Served(tmp_path, "--mode", "approve", "--decision-log", "off")
    await served.start()
    try:
        answers, appends = await _load_then_kill(served)
        assert answers and appends  # the load did run
        await served.start()  # the same state file, after a crash
        async with grpc.aio.insecure_channel(served.target) as channel:
            lost_answers = await _check_answers(pb_grpc.PolicyServiceStub(channel), answers)
            lost_appends = await _check_appends(pb_grpc.ContextServiceStub(channel), appends)
    finally:
        served.stop()
    assert (lost_answers, lost_appends) == (0, 0), (len(answers), len(appends))

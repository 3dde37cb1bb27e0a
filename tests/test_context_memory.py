"""Memory: the caches are bounded in bytes, and an Append's work does not grow with the
session (counted in executed lines of the sidecar's code, not timed)."""

from __future__ import annotations

import sys
import tracemalloc
from collections.abc import Callable, Coroutine
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any

import grpc
import pytest

import sidecar
from sidecar.context.manager import ContextManager, NewMessage
from sidecar.context.messages import Role, Text, ToolCall, ToolResult
from sidecar.context.store import SqlSessionStore
from sidecar.observability.metrics import Metrics
from sidecar.policy.schema import ContextPolicy
from sidecar.store.sqlite import SqliteStore
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar
from tests.context_helpers import call, result, text

SIDECAR = str(Path(sidecar.__file__).parent)


def session_of(session: str, results: int, size: int) -> list[pb.Message]:
    messages = [text(f"{session}-u", pb.ROLE_USER, "go")]
    for n in range(results):
        messages += [
            call(f"{session}-a{n}", (f"{session}-c{n}", "shell", '{"command": "ls"}')),
            result(f"{session}-t{n}", f"{session}-c{n}", f"{session} {n} " + "x" * size),
        ]
    return messages


async def test_session_caches_stay_within_their_byte_budget(start_sidecar: StartSidecar) -> None:
    sidecar = await start_sidecar(context_cache_mib=1, decision_log="off")
    assert sidecar.context is not None
    budget = 1024 * 1024
    tracemalloc.start()
    try:
        async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
            stub = pb_grpc.ContextServiceStub(channel)
            before, _ = tracemalloc.get_traced_memory()
            for n in range(80):  # 80 sessions of ~100 KB: 8 MB through a 1 MiB budget
                await stub.Append(
                    pb.AppendRequest(session_id=f"m{n}", messages=session_of(f"m{n}", 10, 10_000))
                )
                view = await stub.Project(pb.ProjectRequest(session_id=f"m{n}"))
                assert len(view.messages) == 21
                assert sidecar.context.cache.bytes <= budget
            grown = tracemalloc.get_traced_memory()[0] - before
            # Sessions evicted long ago are read back whole from the store.
            first = await stub.Project(pb.ProjectRequest(session_id="m0"))
            assert first.messages[-1].parts[0].tool_result.content.startswith("m0 9 ")
    finally:
        tracemalloc.stop()
    for cache in ("sessions", "encoded_views"):
        held = sidecar.metrics.registry.get_sample_value(
            "sidecar_context_cache_bytes", {"cache": cache}
        )
        assert held is not None and 0 < held <= budget, (cache, held)
    # Both caches together, and everything else a call leaves behind: not the 8 MB sent.
    assert grown < 4 * budget, grown


async def lines_of(work: Callable[[], Coroutine[Any, Any, object]]) -> int:
    """Lines of the sidecar's own code executed while `work` runs."""
    executed = 0

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal executed
        if not frame.f_code.co_filename.startswith(SIDECAR):
            return None
        if event == "line":
            executed += 1
        return tracer

    sys.settrace(tracer)
    try:
        await work()
    finally:
        sys.settrace(None)
    return executed


def turn(session: str, n: int) -> list[NewMessage]:
    return [
        NewMessage(f"{session}-a{n}", Role.ASSISTANT, (ToolCall(f"{session}-c{n}", "ls", "{}"),)),
        NewMessage(f"{session}-t{n}", Role.TOOL, (ToolResult(f"{session}-c{n}", "a.py b.py"),)),
    ]


@pytest.mark.parametrize("held", [True, False], ids=["held in memory", "evicted"])
async def test_append_and_project_work_does_not_grow_with_the_session(
    tmp_path: Path, held: bool
) -> None:
    """Held: Append and Project cost the same at 100 and 10,000 messages. Evicted (a
    cache too small for any view): Append still does; Project reads the view again."""
    state = SqliteStore(str(tmp_path / "state.db"))
    cache = 64 * 1024 * 1024 if held else 1
    manager = ContextManager(
        SqlSessionStore(state.database, state.delete_sessions),
        ContextPolicy,
        Metrics(),
        cache_bytes=cache,
    )
    try:
        for session, length in (("short", 100), ("long", 10_000)):
            await manager.append(
                session, [NewMessage(f"{session}-u", Role.USER, (Text("go"),))], None
            )
            for start in range(0, length, 500):
                batch = [m for n in range(start, start + 250) for m in turn(session, n)]
                await manager.append(session, batch, None)
        lines: dict[str, list[int]] = {}
        for session in ("short", "long"):
            lines[session] = []
            for n in range(3):
                messages = turn(session, 10**6 + n)
                lines[session].append(
                    await lines_of(partial(manager.append, session, messages, None))
                )
            for _ in range(3 if held else 0):
                lines[session].append(
                    await lines_of(partial(manager.project, session, [], None, 0, False))
                )
        # Equal work for 100 and 10,000 messages (allowing a little for the odd branch).
        for short, long in zip(lines["short"], lines["long"], strict=True):
            assert long <= short + 25, lines
    finally:
        await manager.close()
        await state.close()

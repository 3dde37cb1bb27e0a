"""Compaction and tool-pair summaries over a long session, checked after every step."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from sidecar.server import Sidecar
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar, write_policy
from tests.context_helpers import call, provider_problems, result, text, view_estimate
from tests.model_server import ModelServer, serve_model

LIMIT = 24_000


def output(step: int) -> str:
    lines = [f"line {n} of the output of step {step}: " + "data " * 12 for n in range(40)]
    return "\n".join(lines)  # about 2.6 KB, ~650 tokens


async def all_history_ids(stub: pb_grpc.ContextServiceStub, session: str) -> set[str]:
    ids: set[str] = set()
    token = ""
    while True:
        page = await stub.History(
            pb.HistoryRequest(session_id=session, page_size=1000, page_token=token)
        )
        ids.update(m.id for m in page.messages)
        token = page.next_page_token
        if not token:
            return ids


async def test_a_long_session_keeps_every_invariant_after_every_step(
    start_sidecar: StartSidecar,
) -> None:
    sidecar = await start_sidecar(decision_log="off")
    session = "long"
    appended: set[str] = set()
    compactions = 0
    usage = 0
    for step in range(240):
        if step == 120:  # a restart in the middle keeps everything
            await sidecar.stop(grace=0)
            sidecar = await start_sidecar(decision_log="off")
        batch: list[pb.Message] = []
        if step == 0:
            batch.append(text("system", pb.ROLE_SYSTEM, "You are a careful coding agent."))
        if step % 40 == 0:
            batch.append(
                text(
                    f"ask{step}",
                    pb.ROLE_USER,
                    f"Task {step}: fix the failing tests in module {step}.",
                )
            )
        # Two parallel calls from one response, then their results.
        batch.append(
            call(
                f"a{step}",
                (f"c{step}x", "shell", json.dumps({"command": f"pytest tests/test_{step}.py"})),
                (f"c{step}y", "read_file", json.dumps({"path": f"src/m{step}.py"})),
                response_id=f"r{step}",
            )
        )
        batch.append(result(f"t{step}x", f"c{step}x", output(step)))
        batch.append(result(f"t{step}y", f"c{step}y", f"def f{step}(): return {step}\n" * 5))
        appended.update(m.id for m in batch)
        async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
            stub = pb_grpc.ContextServiceStub(channel)
            projection = await stub.Project(
                pb.ProjectRequest(
                    session_id=session,
                    messages=batch,
                    context_limit=LIMIT,
                    usage=pb.Usage(input_tokens=usage, output_tokens=80, context_limit=LIMIT)
                    if usage
                    else None,
                )
            )
            assert sidecar.context is not None
            await sidecar.context.drain()  # let background summaries land, then check again
            after = await stub.Project(pb.ProjectRequest(session_id=session))
            for view in (projection, after):
                assert provider_problems(list(view.messages)) == [], (
                    step,
                    [m.id for m in view.messages],
                )
                assert view.messages[0].id == "system"  # the system prompt stays
                latest_ask = max(i for i in range(0, step + 1, 40))
                assert f"ask{latest_ask}" in {
                    m.id for m in view.messages
                }  # latest request verbatim
            if projection.compaction.compacted:
                compactions += 1
                assert projection.compaction.tokens_after < LIMIT
                assert projection.tokens.tokens < LIMIT
            assert after.tokens.tokens < LIMIT, step  # the view fits
            # Nothing is lost: every original is still in the person's history.
            assert appended <= await all_history_ids(stub, session)
            # The provider counts 10% more than the estimate; its next report covers this
            # view and the reply it writes next (a{step + 1}).
            usage = int(view_estimate(after.messages) * 1.1)
    assert compactions >= 2
    summaries = sidecar.metrics.registry.get_sample_value(
        "sidecar_tool_pair_summaries_total", {"result": "applied"}
    )
    assert summaries and summaries > 0


@pytest.fixture
def slow_model() -> Iterator[ModelServer]:
    yield from serve_model(lambda body: (200, "the output listed 40 lines of data", 1.5))


async def test_a_summary_is_dropped_when_the_history_changed_meanwhile(
    start_sidecar: StartSidecar, operator_policies: Path, slow_model: ModelServer
) -> None:
    write_policy(
        operator_policies,
        "context.yaml",
        json.dumps(
            {
                "context": {
                    "summarizer": {
                        "base_url": slow_model.url,
                        "model": "m",
                        "timeout_ms": 10_000,
                        "retries": 0,
                    },
                    "tool_pair_keep_recent": 1,
                    "tool_pair_batch": 3,
                    "tool_pair_cutoff_ratio": 0.05,
                }
            }
        ),
    )
    sidecar = await start_sidecar()
    assert sidecar.context is not None
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        messages = [text("sys", pb.ROLE_SYSTEM, "s"), text("u1", pb.ROLE_USER, "go")]
        for n in range(6):
            messages += [
                call(f"a{n}", (f"c{n}", "shell", "{}")),
                result(f"t{n}", f"c{n}", output(n)),
            ]
        messages.append(text("u2", pb.ROLE_USER, "next task"))
        await stub.Append(
            pb.AppendRequest(
                session_id="race", messages=messages, usage=pb.Usage(context_limit=20_000)
            )
        )
        # Summaries are now being written (the model takes 1.5 s). Meanwhile the
        # runtime reports context_exceeded, and compaction hides those very pairs.
        compacted = await stub.Project(
            pb.ProjectRequest(session_id="race", reason=pb.PROJECT_REASON_CONTEXT_EXCEEDED)
        )
        assert compacted.compaction.compacted
        await sidecar.context.drain()
        view = await stub.Project(pb.ProjectRequest(session_id="race"))
    stale = sidecar.metrics.registry.get_sample_value(
        "sidecar_tool_pair_summaries_total", {"result": "stale"}
    )
    applied = sidecar.metrics.registry.get_sample_value(
        "sidecar_tool_pair_summaries_total", {"result": "applied"}
    )
    assert stale and stale >= 1 and not applied
    assert provider_problems(list(view.messages)) == []
    assert not any(m.role == pb.ROLE_TOOL and "~summary" in m.id for m in view.messages)
    assert len(slow_model.requests) >= 1


async def test_summaries_use_the_model_when_the_history_holds_still(
    start_sidecar: StartSidecar, operator_policies: Path
) -> None:
    for model in serve_model(lambda body: (200, "40 lines of data", 0)):
        write_policy(
            operator_policies,
            "context.yaml",
            json.dumps(
                {
                    "context": {
                        "summarizer": {"base_url": model.url, "model": "m"},
                        "tool_pair_keep_recent": 1,
                        "tool_pair_cutoff_ratio": 0.05,
                    }
                }
            ),
        )
        sidecar = await start_sidecar()
        assert sidecar.context is not None
        async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
            stub = pb_grpc.ContextServiceStub(channel)
            messages = [text("u1", pb.ROLE_USER, "go")]
            for n in range(4):
                messages += [
                    call(f"a{n}", (f"c{n}", "shell", "{}")),
                    result(f"t{n}", f"c{n}", output(n)),
                ]
            await stub.Append(
                pb.AppendRequest(
                    session_id="calm", messages=messages, usage=pb.Usage(context_limit=20_000)
                )
            )
            await sidecar.context.drain()
            view = await stub.Project(pb.ProjectRequest(session_id="calm"))
            history = await stub.History(pb.HistoryRequest(session_id="calm"))
    summarised = [m for m in view.messages if m.role == pb.ROLE_TOOL and "~summary" in m.id]
    assert summarised, [m.id for m in view.messages]
    # The summary stands in the pair's place, answering the same call.
    assert all(
        m.role == pb.ROLE_TOOL and "40 lines of data" in m.parts[0].tool_result.content
        for m in summarised
    )
    assert provider_problems(list(view.messages)) == []
    # The originals are still in the person's history; the stand-ins are not.
    assert {f"t{n}" for n in range(4)} <= {m.id for m in history.messages}
    assert not any(m.role == pb.ROLE_TOOL and "~summary" in m.id for m in history.messages)


async def test_recovery_compacts_at_most_twice_in_a_row(sidecar: Sidecar) -> None:
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        messages = [text("sys", pb.ROLE_SYSTEM, "s"), text("u1", pb.ROLE_USER, "first")]
        for n in range(5):
            messages += [
                call(f"a{n}", (f"c{n}", "shell", "{}")),
                result(f"t{n}", f"c{n}", output(n)),
            ]
        messages.append(text("u2", pb.ROLE_USER, "second"))
        await stub.Append(pb.AppendRequest(session_id="rec", messages=messages))
        exceeded = pb.ProjectRequest(
            session_id="rec", reason=pb.PROJECT_REASON_CONTEXT_EXCEEDED, context_limit=100_000
        )
        first = await stub.Project(exceeded)
        assert (
            first.compaction.compacted
            and first.compaction.trigger == pb.COMPACTION_TRIGGER_CONTEXT_EXCEEDED
        )
        await stub.Project(exceeded)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.Project(exceeded)
        assert raised.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "recovery compactions" in (raised.value.details() or "")
        # A normal projection resets the count.
        await stub.Project(pb.ProjectRequest(session_id="rec"))
        await stub.Project(exceeded)


async def test_provider_managed_sessions_are_never_compacted(sidecar: Sidecar) -> None:
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        messages = [text("u1", pb.ROLE_USER, "x" * 40_000), text("a1", pb.ROLE_ASSISTANT, "ok")]
        await stub.Append(
            pb.AppendRequest(
                session_id="pm", messages=messages, options=pb.SessionOptions(provider_managed=True)
            )
        )
        view = await stub.Project(pb.ProjectRequest(session_id="pm", context_limit=5_000))
        assert not view.compaction.compacted and [m.id for m in view.messages] == ["u1", "a1"]
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.Project(
                pb.ProjectRequest(session_id="pm", reason=pb.PROJECT_REASON_CONTEXT_EXCEEDED)
            )
        assert raised.value.code() == grpc.StatusCode.FAILED_PRECONDITION


async def test_per_kind_defaults_come_from_policy(
    start_sidecar: StartSidecar, operator_policies: Path
) -> None:
    write_policy(
        operator_policies,
        "kinds.yaml",
        "context:\n  kinds:\n    receipt: {user_visible: true, agent_visible: true}\n",
    )
    sidecar = await start_sidecar()
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)
        await stub.Append(
            pb.AppendRequest(
                session_id="k",
                messages=[
                    text("u", pb.ROLE_USER, "x"),
                    text("r", pb.ROLE_USER, "ran ls", kind=pb.MESSAGE_KIND_RECEIPT),
                ],
            )
        )
        view = await stub.Project(pb.ProjectRequest(session_id="k"))
    assert [m.id for m in view.messages] == ["u", "r"]

"""The lead's acceptance scenario for issue 14, over loopback gRPC, in one flow."""

from __future__ import annotations

import grpc
import pytest

from sidecar.server import Sidecar
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.context_helpers import call, history_of, provider_problems, result, text, view_estimate


async def test_issue_14_scenario(sidecar: Sidecar) -> None:
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.ContextServiceStub(channel)

        # 1. Usage plus a later tool result triggers compaction.
        messages = [text("sys", pb.ROLE_SYSTEM, "You are a careful coding agent.")]
        messages.append(text("u1", pb.ROLE_USER, "Read the logs."))
        for n in range(3):
            messages += [
                call(f"a0{n}", (f"c0{n}", "shell", f'{{"command": "cat log{n}"}}')),
                result(f"t0{n}", f"c0{n}", f"log line {n}\n" * 270),
            ]
        messages += [
            text("u2", pb.ROLE_USER, "Now the build log."),
            call("a1", ("c1", "shell", '{"command": "cat build.log"}')),
        ]
        usage = view_estimate(messages)  # the provider agrees with the estimate
        view = await stub.Project(
            pb.ProjectRequest(
                session_id="one",
                messages=[*messages, result("t1", "c1", "y" * 3_500)],
                usage=pb.Usage(input_tokens=usage - 40, output_tokens=40),
                context_limit=4_000,
            )
        )
        assert usage < 3_200 <= view.compaction.tokens_before
        assert view.compaction.compacted and view.tokens.tokens < 3_200

        # 2. Exactly 80% compacts; 79% does not.
        for percent, compacts in ((80, True), (79, False)):
            session = f"at-{percent}"
            view = await stub.Project(
                pb.ProjectRequest(
                    session_id=session,
                    messages=[
                        text("sys", pb.ROLE_SYSTEM, "s"),
                        text("u1", pb.ROLE_USER, "first"),
                        text("a0", pb.ROLE_ASSISTANT, "done"),
                        text("u2", pb.ROLE_USER, "second"),
                        text("a1", pb.ROLE_ASSISTANT, "on it"),
                    ],
                    usage=pb.Usage(input_tokens=percent * 10, context_limit=1_000),
                )
            )
            assert view.compaction.compacted is compacts, percent

        # 3. A 20,000-character result with a 1,000-token window.
        output = "".join(f"row {n:04d}: value\n" for n in range(1_300))[:20_000]
        assert len(output) == 20_000
        view = await stub.Project(
            pb.ProjectRequest(
                session_id="big",
                messages=[
                    text("sys", pb.ROLE_SYSTEM, "s"),
                    text("u1", pb.ROLE_USER, "dump the table"),
                    call("a1", ("c1", "sql", '{"query": "select * from t"}')),
                    result("t1", "c1", output),
                ],
                context_limit=1_000,
            )
        )
        assert view.tokens.tokens <= 1_000
        assert view_estimate(view.messages) <= 1_000
        assert provider_problems(list(view.messages)) == []
        history = await history_of(stub, "big")
        assert [m.id for m in history] == ["sys", "u1", "a1", "t1"]
        assert history[-1].parts[0].tool_result.content == output

        # 4. DeleteSession, then History: NOT_FOUND.
        await stub.DeleteSession(pb.DeleteSessionRequest(session_id="big"))
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.History(pb.HistoryRequest(session_id="big"))
        assert raised.value.code() == grpc.StatusCode.NOT_FOUND

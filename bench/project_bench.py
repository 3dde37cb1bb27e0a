"""Project on a long session vs an empty handler returning the same bytes.

Both run in this process on Unix sockets and are timed interleaved, so machine
noise hits both alike. The ratio at 100 and at 1,000 messages shows whether
server-side work grows with history length beyond serialising the answer.

Run: make bench
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

import grpc

from sidecar.config import Settings
from sidecar.server import Sidecar
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc


class Canned:
    """The empty handler: returns the same response bytes, prebuilt."""

    def __init__(self) -> None:
        self.payload = b""

    async def project(self, request: pb.ProjectRequest, context: object) -> bytes:
        return self.payload

    def handler(self) -> grpc.GenericRpcHandler:
        name = pb.DESCRIPTOR.services_by_name["ContextService"].full_name
        project = grpc.unary_unary_rpc_method_handler(
            self.project,
            request_deserializer=pb.ProjectRequest.FromString,
            response_serializer=lambda payload: payload,
        )
        return grpc.method_handlers_generic_handler(name, {"Project": project})


def session_messages(count: int) -> list[pb.Message]:
    messages = [
        pb.Message(id="m0", role=pb.ROLE_USER, parts=[pb.Part(text=pb.TextPart(text="start"))])
    ]
    n = 1
    while len(messages) < count:
        call_id = f"c{n}"
        messages.append(
            pb.Message(
                id=f"m{n}a",
                role=pb.ROLE_ASSISTANT,
                parts=[
                    pb.Part(
                        tool_call=pb.ToolCallPart(
                            id=call_id,
                            name="shell",
                            arguments=json.dumps({"command": f"ls dir{n}"}),
                        )
                    )
                ],
            )
        )
        messages.append(
            pb.Message(
                id=f"m{n}r",
                role=pb.ROLE_TOOL,
                parts=[
                    pb.Part(
                        tool_result=pb.ToolResultPart(
                            tool_call_id=call_id, content=f"file{n}.txt\n" * 8
                        )
                    )
                ],
            )
        )
        n += 1
    return messages[:count]


async def measure(size: int, rounds: int) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as directory:
        sidecar = Sidecar(Settings(
            listen=(f"unix:{Path(directory) / 's.sock'}",), metrics_listen="off",
            state=str(Path(directory) / "state.db"), decision_log="off", policy_watch_seconds=0,
        ))  # fmt: skip
        await sidecar.start()
        canned = Canned()
        empty = grpc.aio.server()
        empty.add_generic_rpc_handlers((canned.handler(),))
        empty.add_insecure_port(f"unix:{Path(directory) / 'e.sock'}")
        await empty.start()
        try:
            empty_address = f"unix:{Path(directory) / 'e.sock'}"
            async with (
                grpc.aio.insecure_channel(sidecar.addresses[0]) as real_channel,
                grpc.aio.insecure_channel(empty_address) as empty_channel,
            ):
                real = pb_grpc.ContextServiceStub(real_channel)
                fake = pb_grpc.ContextServiceStub(empty_channel)
                messages = session_messages(size)
                for start in range(0, size, 500):
                    await real.Append(
                        pb.AppendRequest(session_id="b", messages=messages[start : start + 500])
                    )
                request = pb.ProjectRequest(session_id="b")
                answer = await real.Project(request)
                canned.payload = answer.SerializeToString()  # the same bytes
                answer_bytes = len(canned.payload)
                real_times: list[float] = []
                empty_times: list[float] = []
                for _ in range(rounds):
                    for stub, times in ((real, real_times), (fake, empty_times)):
                        started = time.perf_counter()
                        await stub.Project(request)
                        times.append(time.perf_counter() - started)
        finally:
            await empty.stop(0)
            await sidecar.stop(grace=0)
    return statistics.median(real_times), statistics.median(empty_times), answer_bytes


async def main() -> None:
    print("Project vs an empty handler returning the same bytes (p50, Unix socket):")
    for size in (100, 1000):
        real, empty, size_bytes = await measure(size, rounds=150)
        print(
            f"  {size:5d} messages ({size_bytes / 1024:6.0f} KiB): project {real * 1e3:7.2f} ms, "
            f"empty {empty * 1e3:7.2f} ms, ratio {real / empty:.2f}x"
        )


if __name__ == "__main__":
    asyncio.run(main())

"""A gRPC server that does nothing: it answers Inspect and Project with fixed bytes.

The baseline for bench/rpc_bench.py: the same grpc.aio stack, the same process model,
the same response sizes, and none of the sidecar's work. A ratio against it is what
the sidecar adds to the cost of a gRPC call.

Run: python -m bench.empty_server ADDRESS INSPECT_RESPONSE_FILE PROJECT_RESPONSE_FILE
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc


def _fixed(payload: bytes) -> grpc.RpcMethodHandler:
    async def answer(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return payload

    return grpc.unary_unary_rpc_method_handler(answer)  # bytes in, bytes out


async def serve(address: str, inspect: bytes, project: bytes) -> None:
    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "sidecar.v1.PolicyService", {"Inspect": _fixed(inspect)}
            ),
            grpc.method_handlers_generic_handler(
                "sidecar.v1.ContextService", {"Project": _fixed(project)}
            ),
        )
    )
    checks = health.aio.HealthServicer()
    await checks.set("", health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(checks, server)
    server.add_insecure_port(address)
    await server.start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop(0)


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1], Path(sys.argv[2]).read_bytes(), Path(sys.argv[3]).read_bytes()))

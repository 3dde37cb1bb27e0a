"""What an Inspect-only session leaves in memory (the SQLite store's copy of its
snapshot, with the repetition streak and the arguments it keeps) is bounded by bytes:
filling past the bound evicts the oldest sessions, and the estimate counts the streak."""

from __future__ import annotations

import json

import pytest

from sidecar.server import Sidecar
from sidecar.store.sqlite import SqliteStore
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar

BOUND = 256 * 1024
ARGUMENTS_BYTES = 3000  # under the streak's 4 KiB: kept as they are, per session


async def test_inspect_only_sessions_are_bounded_by_bytes(
    start_sidecar: StartSidecar, monkeypatch: pytest.MonkeyPatch
) -> None:
    import grpc

    monkeypatch.setattr("sidecar.store.sqlite.CACHE_BYTES", BOUND)
    sidecar: Sidecar = await start_sidecar(mode="auto")
    store = sidecar.store
    assert isinstance(store, SqliteStore)
    sessions = 3 * BOUND // ARGUMENTS_BYTES  # three times what fits
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.PolicyServiceStub(channel)
        for index in range(sessions):
            arguments = {"command": f"echo {index} " + "x" * ARGUMENTS_BYTES}
            await stub.Inspect(
                pb.InspectRequest(
                    session_id=f"only-inspect-{index}",
                    tool_calls=[
                        pb.ToolCall(id="1", name="shell", arguments_json=json.dumps(arguments))
                    ],
                )
            )
            assert store.cache_bytes <= BOUND
    kept = len(store._cache)
    assert kept < sessions // 2, f"{kept} of {sessions} sessions still in memory"
    # What is kept is measured with its streak: the estimate covers the arguments held.
    assert store.cache_bytes >= kept * ARGUMENTS_BYTES
    # Evicted sessions are read back from the file: their streak goes on.
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.PolicyServiceStub(channel)
        arguments = {"command": "echo 0 " + "x" * ARGUMENTS_BYTES}
        request = pb.InspectRequest(
            session_id="only-inspect-0",
            tool_calls=[pb.ToolCall(id="2", name="shell", arguments_json=json.dumps(arguments))],
        )
        await stub.Inspect(request)
    snapshot = await store.load_session("only-inspect-0")
    assert snapshot.streak is not None and snapshot.streak.count == 2

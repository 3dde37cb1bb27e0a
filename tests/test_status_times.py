"""GetStatus reports times as google.protobuf.Timestamp; the older doubles stay filled
(deprecated) for clients built before."""

from __future__ import annotations

import time

import grpc

from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar


async def test_status_times_are_timestamps_and_agree_with_the_deprecated_doubles(
    start_sidecar: StartSidecar,
) -> None:
    before = time.time()
    sidecar = await start_sidecar()
    assert sidecar.reloader is not None
    await sidecar.reloader.reload("test")  # so that there is a last reload to report
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        status = await pb_grpc.PolicyServiceStub(channel).GetStatus(pb.GetStatusRequest())
    assert status.active.HasField("loaded_at")
    loaded = status.active.loaded_at.ToNanoseconds() / 1e9
    assert before - 1 <= loaded <= time.time() + 1
    assert abs(loaded - status.active.loaded_at_unix) < 1e-6
    assert status.last_reload.HasField("attempted_at")
    attempted = status.last_reload.attempted_at.ToNanoseconds() / 1e9
    assert abs(attempted - status.last_reload.attempted_at_unix) < 1e-6
    assert pb.PolicyStatus.DESCRIPTOR.fields_by_name["loaded_at_unix"].GetOptions().deprecated

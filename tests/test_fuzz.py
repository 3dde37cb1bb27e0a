"""The reduced fuzz run (bench/fuzz.py; `make fuzz` runs the long one): malformed
protobuf, JSON and Unicode against every method of both services, over a real server."""

from __future__ import annotations

import logging

import grpc
import pytest

from bench.fuzz import HEALTH, POLICY, SEEDS, all_cases, run_cases
from tests.conftest import StartSidecar

REDUCED_RANDOM_CASES = 300


async def test_every_malformed_request_gets_a_status_a_client_can_act_on(
    start_sidecar: StartSidecar, caplog: pytest.LogCaptureFixture
) -> None:
    sidecar = await start_sidecar(mode="auto")
    cases = all_cases(REDUCED_RANDOM_CASES)
    with caplog.at_level(logging.INFO):
        async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
            report = await run_cases(channel, cases)
            # Still serving, and still judging.
            await channel.unary_unary(HEALTH)(SEEDS[HEALTH][0], timeout=5)
            await channel.unary_unary(POLICY + "Inspect")(SEEDS[POLICY + "Inspect"][0], timeout=5)
    assert report.failures == []
    assert report.survived == report.cases == len(cases)
    # Garbage is logged as rate-limited one-liners: never a traceback, never a line a case.
    assert not [r for r in caplog.records if r.exc_info]
    assert len(caplog.records) < len(cases) // 4


def test_the_structured_cases_cover_every_method_and_the_probes_shapes() -> None:
    cases = all_cases(0)
    assert {c.method for c in cases} == set(SEEDS)
    names = {c.name for c in cases}
    for shape in (
        "invalid UTF-8 in a string",
        "JSON integer of 5,000 digits",
        "int64-max usage",
        "page token with a huge offset",
    ):
        assert shape in names

"""Prometheus metrics, scraped over HTTP from the running server and parsed."""

from __future__ import annotations

import asyncio
import contextlib
import urllib.request

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families

from sidecar.server import Sidecar
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import shell


async def scrape(sidecar: Sidecar) -> dict[str, list[tuple[dict[str, str], float]]]:
    url = f"http://127.0.0.1:{sidecar.metrics_port}/metrics"

    def fetch() -> str:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()

    text = await asyncio.to_thread(fetch)
    samples: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append((sample.labels, sample.value))
    return samples


def value(samples, name: str, **labels: str) -> float:
    return sum(v for found, v in samples.get(name, []) if labels.items() <= found.items())


async def test_rpc_and_inspector_series_after_a_call(
    sidecar: Sidecar, policy_stub: pb_grpc.PolicyServiceStub
) -> None:
    await policy_stub.Inspect(
        pb.InspectRequest(session_id="m", tool_calls=[shell("1", "rm -rf /"), shell("2", "make")])
    )
    with contextlib.suppress(grpc.aio.AioRpcError):  # the failure is what we count
        await policy_stub.Inspect(pb.InspectRequest(session_id="", tool_calls=[shell("1", "ls")]))
    samples = await scrape(sidecar)
    rpc = {
        "grpc_service": "sidecar.v1.PolicyService",
        "grpc_method": "Inspect",
        "grpc_type": "unary",
    }
    assert value(samples, "grpc_server_started_total", **rpc) == 2
    assert value(samples, "grpc_server_handled_total", **rpc, grpc_code="OK") == 1
    assert value(samples, "grpc_server_handled_total", **rpc, grpc_code="InvalidArgument") == 1
    assert value(samples, "grpc_server_handling_seconds_count", **rpc) == 2
    for inspector in ("security", "egress", "permission", "repetition"):
        assert value(samples, "sidecar_inspector_duration_seconds_count", inspector=inspector) == 1
        # Sub-millisecond buckets exist.
        assert any(
            labels.get("le") == "0.0001"
            for labels, _ in samples["sidecar_inspector_duration_seconds_bucket"]
        )
    assert (
        value(samples, "sidecar_inspector_verdicts_total", inspector="security", verdict="deny")
        == 1
    )
    assert value(samples, "sidecar_decisions_total", verdict="deny") == 1
    assert value(samples, "sidecar_decisions_total", verdict="require_approval") == 1
    assert value(samples, "sidecar_findings_total", rule_id="destructive.rm-root") == 1
    assert value(samples, "sidecar_build_info") == 1
    revision = sidecar.engine.active.revision if sidecar.engine else ""
    assert value(samples, "sidecar_policy_info", revision=revision) == 1


async def test_inspector_failures_are_exported(sidecar: Sidecar, policy_stub) -> None:
    from sidecar.inspection.chain import ChainLink
    from tests.test_chain import Raises, _with_extra_link

    await _with_extra_link(sidecar, ChainLink(Raises(), 1.0, "skip"))
    await policy_stub.Inspect(pb.InspectRequest(session_id="m", tool_calls=[shell("1", "ls")]))
    samples = await scrape(sidecar)
    assert (
        value(samples, "sidecar_inspector_failures_total", inspector="raises", reason="exception")
        == 1
    )


def test_hot_histograms_export_cumulative_buckets() -> None:
    from prometheus_client import CollectorRegistry, generate_latest

    from sidecar.observability.hot_metrics import HotMetrics

    registry = CollectorRegistry()
    histogram = HotMetrics(registry).histogram("x_seconds", "x", ["k"], (0.1, 1.0))
    for value in (0.05, 0.1, 0.5, 2.0):
        histogram.labels(k="a").observe(value)
    text = generate_latest(registry).decode()
    assert 'x_seconds_bucket{k="a",le="0.1"} 2.0' in text
    assert 'x_seconds_bucket{k="a",le="1.0"} 3.0' in text
    assert 'x_seconds_bucket{k="a",le="+Inf"} 4.0' in text
    assert 'x_seconds_count{k="a"} 4.0' in text
    assert registry.get_sample_value("x_seconds_sum", {"k": "a"}) == pytest.approx(2.65)

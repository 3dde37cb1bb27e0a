"""Issue 15's evaluation in CI (a fixed sample of the package names): the labelled
integrity corpora through a live server, against floors and the false-positive target."""

from __future__ import annotations

import grpc

from bench.integrity_eval import FALSE_POSITIVE_MAX, Results, evaluate
from sidecar.server import Sidecar
from tests.conftest import StartSidecar


def _rate(results: Results, prefix: str) -> tuple[float, float]:
    """(detection, false positives) over the groups whose name starts with `prefix`."""
    groups = [g for name, g in results.groups.items() if name.startswith(prefix)]
    detect = sum(g.detect for g in groups)
    benign = sum(g.benign for g in groups)
    detected = sum(g.detected for g in groups) / detect if detect else 1.0
    blocked = sum(g.blocked for g in groups) / benign if benign else 0.0
    return detected, blocked


async def test_the_integrity_evaluation_holds(start_sidecar: StartSidecar) -> None:
    sidecar: Sidecar = await start_sidecar(mode="auto", decision_log="off")
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        results = await evaluate(channel, every=5)
    report = results.render()
    assert not results.baseline_failures, report
    assert results.false_positive_rate() <= FALSE_POSITIVE_MAX, report
    # The development corpora: everything labelled is caught; nothing benign is flagged
    # beyond what the report shows today.
    assert _rate(results, "tool drift") == (1.0, 0.0), report
    assert _rate(results, "tool definitions, poisoned")[0] >= 0.85, report
    assert _rate(results, "tool definitions, benign")[1] == 0.0, report
    assert _rate(results, "injected result, then a risky")[0] >= 0.95, report
    assert _rate(results, "injected result, then a benign")[1] == 0.0, report
    assert _rate(results, "benign result, then a risky")[1] <= 0.02, report
    # Typosquats: popular names never ask; hand-written squats mostly do.
    assert _rate(results, "popular names")[1] == 0.0, report
    assert _rate(results, "typosquats, hand-written")[0] >= 0.85, report
    assert _rate(results, "typosquats, generated")[0] >= 0.9, report
    assert _rate(results, "held-out real names")[1] <= 0.02, report

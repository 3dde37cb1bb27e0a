"""Hot reload with last-known-good, file watching (ConfigMap symlink swaps), SIGHUP,
reload under load, and shadow mode."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar, shell, write_policy
from tests.test_server_process import run_sidecar, wait_serving

AUTO = "permission: {mode: auto}\n"
APPROVE = "permission: {mode: approve}\n"
BAD = "permission: {mode: sometimes}\n"


_polls = iter(range(10**9))


async def inspect_make(address: str, session: str = "") -> pb.InspectResponse:
    # A fresh session per call unless told: repeated identical calls in one session
    # would hit the repetition limit while a test polls for a reload.
    session = session or f"poll-{next(_polls)}"
    async with grpc.aio.insecure_channel(address) as channel:
        return await pb_grpc.PolicyServiceStub(channel).Inspect(
            pb.InspectRequest(session_id=session, tool_calls=[shell("1", "make")])
        )


async def status(address: str) -> pb.GetStatusResponse:
    async with grpc.aio.insecure_channel(address) as channel:
        return await pb_grpc.PolicyServiceStub(channel).GetStatus(pb.GetStatusRequest())


async def reload_health(address: str) -> int:
    async with grpc.aio.insecure_channel(address) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service="sidecar.policy")
        )
    return reply.status


async def eventually(check, attempts: int = 200) -> None:
    for _ in range(attempts):
        if await check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition never held")


async def test_a_bad_policy_is_rejected_and_the_last_good_one_keeps_serving(
    start_sidecar: StartSidecar, operator_policies: Path
) -> None:
    write_policy(operator_policies, "mode.yaml", AUTO)
    sidecar = await start_sidecar(policy_watch_seconds=0)
    address = sidecar.addresses[0]
    assert sidecar.reloader is not None
    first = (await inspect_make(address)).policy_revision

    write_policy(operator_policies, "mode.yaml", BAD)
    assert not await sidecar.reloader.reload("test")
    response = await inspect_make(address)
    assert response.policy_revision == first
    assert response.verdicts[0].verdict == pb.VERDICT_ALLOW  # still mode auto
    report = await status(address)
    assert not report.last_reload.ok
    assert f"{operator_policies / 'mode.yaml'}:1: permission.mode" in report.last_reload.error
    assert report.active.revision == first
    assert await reload_health(address) == health_pb2.HealthCheckResponse.NOT_SERVING
    async with grpc.aio.insecure_channel(address) as channel:
        overall = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
    assert overall.status == health_pb2.HealthCheckResponse.SERVING  # still serving the good one

    write_policy(operator_policies, "mode.yaml", APPROVE)
    assert await sidecar.reloader.reload("test")
    response = await inspect_make(address)
    assert response.policy_revision != first
    assert response.verdicts[0].verdict == pb.VERDICT_REQUIRE_APPROVAL
    assert await reload_health(address) == health_pb2.HealthCheckResponse.SERVING
    registry = sidecar.metrics.registry
    assert registry.get_sample_value("sidecar_policy_reloads_total", {"result": "failure"}) == 1
    assert registry.get_sample_value("sidecar_policy_reloads_total", {"result": "success"}) == 1
    assert (
        registry.get_sample_value("sidecar_policy_info", {"revision": response.policy_revision})
        == 1
    )
    assert registry.get_sample_value("sidecar_policy_info", {"revision": first}) is None
    assert (
        registry.get_sample_value("sidecar_policy_last_reload_success_timestamp_seconds") or 0
    ) > 0


async def test_the_watcher_reloads_changed_files(
    start_sidecar: StartSidecar, operator_policies: Path
) -> None:
    write_policy(operator_policies, "mode.yaml", AUTO)
    sidecar = await start_sidecar(policy_watch_seconds=0.05)
    address = sidecar.addresses[0]
    write_policy(operator_policies, "mode.yaml", APPROVE)

    async def approves() -> bool:
        return (await inspect_make(address)).verdicts[0].verdict == pb.VERDICT_REQUIRE_APPROVAL

    await eventually(approves)


async def test_a_configmap_symlink_swap_is_picked_up(
    start_sidecar: StartSidecar, tmp_path: Path
) -> None:
    """Kubernetes mounts a ConfigMap as ..data -> ..<timestamp>/ and swaps the link."""
    mount = tmp_path / "configmap"
    mount.mkdir()

    def publish(version: str, text: str) -> None:
        target = mount / f"..{version}"
        target.mkdir()
        (target / "policy.yaml").write_text(text)
        link = mount / "..data_tmp"
        link.symlink_to(target.name)
        os.replace(link, mount / "..data")  # the atomic swap
        if not (mount / "policy.yaml").is_symlink():
            (mount / "policy.yaml").symlink_to("..data/policy.yaml")

    publish("2026_11_30_1", AUTO)
    sidecar = await start_sidecar(policies=(mount,), policy_watch_seconds=0.05)
    address = sidecar.addresses[0]
    assert (await inspect_make(address)).verdicts[0].verdict == pb.VERDICT_ALLOW
    publish("2026_11_30_2", APPROVE)

    async def approves() -> bool:
        return (await inspect_make(address)).verdicts[0].verdict == pb.VERDICT_REQUIRE_APPROVAL

    await eventually(approves)


def test_sighup_reloads_a_running_process(tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    write_policy(policies, "mode.yaml", AUTO)
    sock = tmp_path / "s.sock"
    process = run_sidecar(
        "--listen",
        f"unix:{sock}",
        "--metrics-listen",
        "off",
        "--state",
        ":memory:",
        "--policies",
        str(policies),
        "--policy-watch-seconds",
        "0",
        "--decision-log",
        "off",
    )
    try:
        wait_serving(f"unix:{sock}")
        with grpc.insecure_channel(f"unix:{sock}") as channel:
            stub = pb_grpc.PolicyServiceStub(channel)
            before = stub.GetStatus(pb.GetStatusRequest(), timeout=5).active.revision
            write_policy(policies, "mode.yaml", APPROVE)
            process.send_signal(signal.SIGHUP)
            after = before
            for _ in range(200):
                after = stub.GetStatus(pb.GetStatusRequest(), timeout=5).active.revision
                if after != before:
                    break
                time.sleep(0.05)
            assert after != before
            response = stub.Inspect(
                pb.InspectRequest(session_id="h", tool_calls=[shell("1", "make")]), timeout=5
            )
            assert response.verdicts[0].verdict == pb.VERDICT_REQUIRE_APPROVAL
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert "reloaded (SIGHUP)" in err


async def test_reload_under_load_loses_no_call_and_serves_no_half_policy(
    start_sidecar: StartSidecar, operator_policies: Path
) -> None:
    versions = {"auto": AUTO, "approve": APPROVE}
    write_policy(operator_policies, "mode.yaml", AUTO)
    sidecar = await start_sidecar(policy_watch_seconds=0, decision_log="off")
    assert sidecar.reloader is not None
    address = sidecar.addresses[0]
    revisions: dict[str, int] = {}  # revision -> the verdict it must give for `make`
    revisions[(await inspect_make(address)).policy_revision] = pb.VERDICT_ALLOW

    reloader, engine = sidecar.reloader, sidecar.engine
    assert reloader is not None and engine is not None

    async def flip() -> None:
        for round_number in range(30):
            name = (
                "approve" if round_number % 3 == 0 else "auto" if round_number % 3 == 1 else "bad"
            )
            write_policy(operator_policies, "mode.yaml", versions.get(name, BAD))
            if await reloader.reload("flip"):
                revision = engine.active.revision
                revisions[revision] = (
                    pb.VERDICT_REQUIRE_APPROVAL if name == "approve" else pb.VERDICT_ALLOW
                )
            await asyncio.sleep(0)

    responses: list[pb.InspectResponse] = []

    async def hammer(worker: int) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = pb_grpc.PolicyServiceStub(channel)
            for n in range(60):
                responses.append(
                    await stub.Inspect(
                        pb.InspectRequest(
                            session_id=f"w{worker}-{n}", tool_calls=[shell("1", "make")]
                        )
                    )
                )

    await asyncio.gather(flip(), *(hammer(w) for w in range(4)))
    assert len(responses) == 240  # every call answered
    for response in responses:
        assert response.policy_revision in revisions  # only fully loaded policies served
        assert response.verdicts[0].verdict == revisions[response.policy_revision]
    failures = sidecar.metrics.registry.get_sample_value(
        "sidecar_policy_reloads_total", {"result": "failure"}
    )
    assert failures == 10


async def test_shadow_mode_counts_disagreements_and_returns_only_the_active_verdict(
    start_sidecar: StartSidecar, operator_policies: Path, tmp_path: Path
) -> None:
    write_policy(operator_policies, "mode.yaml", AUTO)
    candidate = tmp_path / "candidate"
    candidate.mkdir()
    write_policy(
        candidate,
        "strict.yaml",
        "permission:\n  mode: auto\n  tools: [{tool: shell, action: never_allow}]\n",
    )
    sidecar = await start_sidecar(shadow_policies=(candidate,), policy_watch_seconds=0)
    address = sidecar.addresses[0]
    verdicts = []
    for n in range(5):  # five identical calls: within the repetition limit
        verdicts.append((await inspect_make(address, session="s")).verdicts[0].verdict)
    assert verdicts == [pb.VERDICT_ALLOW] * 5  # the candidate's deny is never returned
    assert sidecar.shadow is not None
    await sidecar.shadow.drain()
    disagreements = sidecar.metrics.registry.get_sample_value(
        "sidecar_shadow_disagreements_total",
        {"active_verdict": "allow", "candidate_verdict": "deny"},
    )
    assert disagreements == 5
    report = await status(address)
    assert report.shadow.revision and report.shadow.revision != report.active.revision
    assert report.last_shadow_reload.ok


async def test_a_bad_shadow_candidate_does_not_stop_the_sidecar(
    start_sidecar: StartSidecar, tmp_path: Path
) -> None:
    candidate = tmp_path / "candidate"
    candidate.mkdir()
    write_policy(candidate, "bad.yaml", BAD)
    sidecar = await start_sidecar(shadow_policies=(candidate,), policy_watch_seconds=0)
    report = await status(sidecar.addresses[0])
    assert not report.last_shadow_reload.ok
    assert "bad.yaml:1" in report.last_shadow_reload.error
    assert not report.HasField("shadow")
    assert (await inspect_make(sidecar.addresses[0])).verdicts

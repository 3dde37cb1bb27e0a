"""The chart's alerts in a real Prometheus: the rendered PrometheusRule loads, and its
selectors match the jobs the Prometheus Operator gives a PodMonitor's targets
(<namespace>/<name>) and a ServiceMonitor's (the Service's name), and nothing else."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from sidecar.server import Sidecar
from tests.test_helm_chart import MONITORING, render, rules_of, selectors

RELEASE, NAMESPACE = "sidecar", "agents"
NAME = "sidecar-agent-policy-sidecar"  # what the chart names the Service and the PodMonitor
POD_MONITOR_JOB = f"{NAMESPACE}/{NAME}"
SERVICE_MONITOR_JOB = NAME


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def query(port: int, path: str) -> Any:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
        return json.loads(response.read())


async def test_the_rendered_alerts_watch_both_monitor_jobs(
    sidecar: Sidecar, tmp_path: Path
) -> None:
    prometheus = shutil.which("prometheus")
    assert prometheus, "Debian's prometheus package is installed by `make tools`"
    docs = render("--set", "mode=sidecar", "--namespace", NAMESPACE, *MONITORING, release=RELEASE)
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        yaml.safe_dump(
            {"groups": next(d for d in docs if d["kind"] == "PrometheusRule")["spec"]["groups"]}
        )
    )
    checked = await asyncio.to_thread(
        subprocess.run,
        ["promtool", "check", "rules", str(rules)],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr

    live = f"127.0.0.1:{sidecar.metrics_port}"
    # Bound but not listening: connections are refused, so its target is down (up == 0).
    with socket.socket() as dead:
        dead.bind(("127.0.0.1", 0))
        down = f"127.0.0.1:{dead.getsockname()[1]}"
        jobs = {
            POD_MONITOR_JOB: ([live, down], NAMESPACE),
            SERVICE_MONITOR_JOB: ([live], NAMESPACE),
            f"{NAMESPACE}/someone-else": ([live], NAMESPACE),  # another PodMonitor
            f"elsewhere/{NAME}": ([live], "elsewhere"),  # the same name in another namespace
        }
        scrape = [
            {
                "job_name": job,
                "static_configs": [{"targets": targets, "labels": {"namespace": namespace}}],
            }
            for job, (targets, namespace) in jobs.items()
        ]
        config = tmp_path / "prometheus.yml"
        config.write_text(
            yaml.safe_dump(
                {
                    "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                    "rule_files": [str(rules)],
                    "scrape_configs": scrape,
                }
            )
        )
        port = free_port()
        process = await asyncio.create_subprocess_exec(
            prometheus,
            f"--config.file={config}",
            f"--web.listen-address=127.0.0.1:{port}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        try:
            down_selector = selectors(
                next(r for r in rules_of(docs) if r["alert"] == "PolicySidecarDown")["expr"]
            )[0]
            matched: set[tuple[str, str]] = set()
            pending: list[dict[str, Any]] = []
            for _ in range(120):  # bounded: at most about a minute
                await asyncio.sleep(0.5)
                try:
                    up = await asyncio.to_thread(
                        query,
                        port,
                        "/api/v1/query?query=" + urllib.parse.quote(f"up{{{down_selector}}}"),
                    )
                    alerts = await asyncio.to_thread(query, port, "/api/v1/alerts")
                except OSError:
                    continue
                matched = {
                    (r["metric"]["job"], r["metric"]["instance"]) for r in up["data"]["result"]
                }
                pending = [
                    a
                    for a in alerts["data"]["alerts"]
                    if a["labels"]["alertname"] == "PolicySidecarDown"
                ]
                if len(matched) == 3 and pending:
                    break
            assert matched == {
                (POD_MONITOR_JOB, live),
                (POD_MONITOR_JOB, down),
                (SERVICE_MONITOR_JOB, live),
            }
            assert [a["labels"]["instance"] for a in pending] == [down]
            assert pending[0]["labels"]["job"] == POD_MONITOR_JOB
            assert pending[0]["annotations"]["runbook_url"].endswith("RUNBOOK.md#policysidecardown")
            loaded = await asyncio.to_thread(query, port, "/api/v1/rules")
            states = [r["health"] for g in loaded["data"]["groups"] for r in g["rules"]]
            assert states == ["ok"] * 6, states
        finally:
            process.terminate()
            await asyncio.wait_for(process.wait(), timeout=20)

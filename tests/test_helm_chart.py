"""The Helm chart, rendered by the real Helm CLI and validated against Kubernetes schemas."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from sidecar.observability.metrics import Metrics

ROOT = Path(__file__).resolve().parent.parent
CHART = ROOT / "helm" / "agent-policy-sidecar"
HELM = os.environ.get("HELM", str(ROOT / ".venv" / "tools" / "helm"))
MONITORING = ["--api-versions", "monitoring.coreos.com/v1"]


def render(*args: str) -> list[dict[str, Any]]:
    out = subprocess.run(
        [HELM, "template", "ci", str(CHART), *args], check=True, capture_output=True, text=True
    )
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


def assert_valid_kubernetes(path: Path) -> None:
    """Strict validation against the Kubernetes 1.30 schemas bundled with kubernetes-validate."""
    validate = Path(sys.executable).parent / "kubernetes-validate"
    result = subprocess.run(
        [str(validate), "--strict", "-k", "1.30.0", str(path)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def kinds(docs: list[dict[str, Any]]) -> list[str]:
    return sorted(doc["kind"] for doc in docs)


def one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return next(doc for doc in docs if doc["kind"] == kind)


def test_standalone_renders_a_deployment_service_and_guards() -> None:
    docs = render()
    assert kinds(docs) == [
        "ConfigMap",
        "ConfigMap",
        "Deployment",
        "NetworkPolicy",
        "PodDisruptionBudget",
        "Service",
    ]
    assert "HorizontalPodAutoscaler" in kinds(render("--set", "autoscaling.enabled=true"))


def test_the_container_is_locked_down_and_probed_over_grpc() -> None:
    pod = one(render(), "Deployment")["spec"]["template"]["spec"]
    container = pod["containers"][0]
    security = container["securityContext"]
    assert security["runAsNonRoot"] and security["readOnlyRootFilesystem"]
    assert security["capabilities"]["drop"] == ["ALL"] and not security["allowPrivilegeEscalation"]
    assert security["seccompProfile"]["type"] == "RuntimeDefault"
    assert container["livenessProbe"]["grpc"]["port"] == 50051
    assert container["readinessProbe"]["grpc"]["service"] == "sidecar.v1.PolicyService"
    assert container["resources"]["requests"] and container["resources"]["limits"]
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts["/etc/sidecar/policies"]["readOnly"] and "/var/lib/sidecar" in mounts


def test_policy_edits_roll_pods_only_when_reload_is_restart() -> None:
    files = ["--set-string", "policies.files.ops\\.yaml=permission: {mode: approve}"]
    watching = one(render(*files), "Deployment")["spec"]["template"]["metadata"]
    restarting = one(render(*files, "--set", "policies.reload=restart"), "Deployment")["spec"][
        "template"
    ]["metadata"]
    other = one(
        render(
            "--set-string",
            "policies.files.ops\\.yaml=permission: {mode: auto}",
            "--set",
            "policies.reload=restart",
        ),
        "Deployment",
    )
    assert "checksum/policies" not in (watching.get("annotations") or {})
    assert (
        restarting["annotations"]["checksum/policies"]
        != other["spec"]["template"]["metadata"]["annotations"]["checksum/policies"]
    )
    config = one(render(*files), "ConfigMap")
    assert config["data"]["ops.yaml"].strip() == "permission: {mode: approve}"


def test_monitoring_objects_render_only_when_the_api_exists() -> None:
    assert "ServiceMonitor" not in kinds(render())
    docs = render(*MONITORING)
    assert {"ServiceMonitor", "PrometheusRule"} <= set(kinds(docs))
    groups = one(docs, "PrometheusRule")["spec"]["groups"]
    alerts = {rule["alert"] for rule in groups[0]["rules"]}
    assert {
        "PolicySidecarDown",
        "PolicySidecarInspectorFailing",
        "PolicySidecarInspectorSlow",
        "PolicySidecarPolicyReloadFailed",
        "PolicySidecarSummarizerFailing",
    } <= alerts


def test_the_configmap_can_be_the_whole_policy() -> None:
    default_args = one(render(), "Deployment")["spec"]["template"]["spec"]["containers"][0]["args"]
    alone = one(render("--set", "policies.includeBundled=false"), "Deployment")
    assert "--no-bundled-policies" not in default_args
    assert "--no-bundled-policies" in alone["spec"]["template"]["spec"]["containers"][0]["args"]


def test_sidecar_mode_renders_only_what_an_agent_chart_needs() -> None:
    assert kinds(render("--set", "mode=sidecar")) == ["ConfigMap", "ConfigMap"]


@pytest.mark.parametrize(
    "values",
    [
        ["--set", "mode=yolo"],
        ["--set", "grpc.port=0"],
        ["--set", "policies.reload=never"],
        ["--set", "nonsense=1"],
    ],
)
def test_bad_values_fail_at_install_time(values: list[str]) -> None:
    result = subprocess.run(
        [HELM, "template", "ci", str(CHART), *values], capture_output=True, text=True
    )
    assert result.returncode != 0
    assert (
        "values don't meet the specifications of the schema" in result.stderr
        or "schema" in result.stderr
    )


def test_rendered_manifests_pass_kubernetes_schema_validation(tmp_path: Path) -> None:
    for name, args in {
        "standalone": ["--set", "autoscaling.enabled=true"],
        "sidecar": ["--set", "mode=sidecar"],
    }.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump_all(render(*args)))
        assert_valid_kubernetes(path)


def test_the_dashboard_only_uses_metrics_the_sidecar_exports() -> None:
    dashboard = json.loads((CHART / "files" / "dashboard.json").read_text())
    exported = {metric.name for metric in Metrics().registry.collect()}
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            for name in re.findall(r"\b((?:sidecar|grpc_server)_[a-z_]+)", target["expr"]):
                base = re.sub(r"_(total|bucket|count|sum|info)$", "", name)
                assert base in exported or name in exported, (panel["title"], name)


def test_an_agent_chart_can_inject_the_sidecar(tmp_path: Path) -> None:
    """The documented sidecar recipe, rendered for real with this chart as a subchart."""
    import shutil

    parent = tmp_path / "my-agent"
    (parent / "templates").mkdir(parents=True)
    shutil.copytree(CHART, parent / "charts" / "agent-policy-sidecar")
    (parent / "Chart.yaml").write_text(
        "apiVersion: v2\nname: my-agent\nversion: 0.1.0\n"
        "dependencies: [{name: agent-policy-sidecar, version: 0.1.0}]\n"
    )
    (parent / "values.yaml").write_text(
        "agent-policy-sidecar:\n  mode: sidecar\n  policies:\n    reload: restart\n"
        "    files:\n      10-team.yaml: |\n        permission: {mode: approve}\n"
    )
    snippet = (ROOT / "README.md").read_text().split("<!-- sidecar-recipe -->")[1]
    template = snippet.split("```yaml\n", 1)[1].split("```", 1)[0]
    (parent / "templates" / "deployment.yaml").write_text(template)
    out = subprocess.run(
        [HELM, "template", "demo", str(parent)], check=True, capture_output=True, text=True
    )
    docs = [doc for doc in yaml.safe_load_all(out.stdout) if doc]
    pod = one(docs, "Deployment")["spec"]["template"]
    containers = {c["name"]: c for c in pod["spec"]["containers"]}
    assert set(containers) == {"agent", "policy-sidecar"}
    assert containers["policy-sidecar"]["securityContext"]["readOnlyRootFilesystem"]
    assert "checksum/policies" in pod["metadata"]["annotations"]
    assert {v["name"] for v in pod["spec"]["volumes"]} == {
        "policy-sidecar-policies",
        "policy-sidecar-state",
    }
    path = tmp_path / "render.yaml"
    path.write_text(out.stdout)
    assert_valid_kubernetes(path)

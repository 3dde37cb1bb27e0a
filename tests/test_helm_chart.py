"""The Helm chart, rendered by the real Helm CLI and validated against the Kubernetes
schemas (kubernetes-validate) and the Prometheus Operator CRD schemas (tests/data/crds)."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from sidecar.observability.metrics import Metrics

ROOT = Path(__file__).resolve().parent.parent
CHART = ROOT / "helm" / "agent-policy-sidecar"
CRDS = ROOT / "tests" / "data" / "crds"
HELM = os.environ.get("HELM", str(ROOT / ".venv" / "tools" / "helm"))
MONITORING = ["--api-versions", "monitoring.coreos.com/v1"]
# A shared store (PostgreSQL): what more than one replica needs.
SHARED = ["--set", "state.postgres.existingSecret=sidecar-db"]
VALUES = yaml.safe_load((CHART / "values.yaml").read_text())
GRPC, HEALTH, METRICS = VALUES["grpc"]["port"], VALUES["health"]["port"], VALUES["metrics"]["port"]
Doc = dict[str, Any]


def helm_template(chart: Path, release: str, *args: str) -> str:
    out = subprocess.run(
        [HELM, "template", release, str(chart), *args], check=True, capture_output=True, text=True
    )
    return out.stdout


def render(*args: str, release: str = "ci") -> list[Doc]:
    return [doc for doc in yaml.safe_load_all(helm_template(CHART, release, *args)) if doc]


def kinds(docs: list[Doc]) -> list[str]:
    return sorted(doc["kind"] for doc in docs)


def one(docs: list[Doc], kind: str) -> Doc:
    return next(doc for doc in docs if doc["kind"] == kind)


def recipe_chart(tmp_path: Path, values: str) -> Path:
    """An agent's chart with this chart as a subchart and the README's recipe as its
    Deployment: exactly what the README tells people to write."""
    parent = tmp_path / "my-agent"
    if parent.exists():
        shutil.rmtree(parent)
    (parent / "templates").mkdir(parents=True)
    shutil.copytree(CHART, parent / "charts" / "agent-policy-sidecar")
    (parent / "Chart.yaml").write_text(
        "apiVersion: v2\nname: my-agent\nversion: 0.1.0\n"
        "dependencies: [{name: agent-policy-sidecar, version: 0.1.0}]\n"
    )
    (parent / "values.yaml").write_text(values)
    snippet = (ROOT / "README.md").read_text().split("<!-- sidecar-recipe -->")[1]
    template = snippet.split("```yaml\n", 1)[1].split("```", 1)[0]
    (parent / "templates" / "deployment.yaml").write_text(template)
    return parent


SIDECAR_VALUES = "agent-policy-sidecar:\n  mode: sidecar\n"


def render_recipe(tmp_path: Path, *args: str, values: str = SIDECAR_VALUES) -> list[Doc]:
    text = helm_template(recipe_chart(tmp_path, values), "demo", *args)
    return [doc for doc in yaml.safe_load_all(text) if doc]


def pod_of(docs: list[Doc]) -> Doc:
    return dict(one(docs, "Deployment")["spec"]["template"])


def all_containers(pod_spec: Doc) -> list[Doc]:
    return list(pod_spec.get("initContainers", [])) + list(pod_spec["containers"])


def sidecar_container(pod_spec: Doc) -> Doc:
    return next(c for c in all_containers(pod_spec) if c["name"] == "policy-sidecar")


def env_of(container: Doc) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container.get("env", []) if "value" in e}


def is_loopback(address: str) -> bool:
    host = address.rpartition(":")[0].strip("[]")
    return address.startswith("unix:") or host in ("localhost", "::1") or host.startswith("127.")


def listening(container: Doc) -> dict[int, str]:
    """Port -> the address the sidecar binds for it, from its SIDECAR_*LISTEN settings."""
    bound: dict[int, str] = {}
    for name, value in env_of(container).items():
        if name.endswith("LISTEN"):
            for address in value.split(","):
                port = address.strip().rpartition(":")[2]
                if port.isdigit():
                    bound[int(port)] = address.strip()
    return bound


# -- schema validation -----------------------------------------------------------------


def assert_valid_kubernetes(docs: list[Doc], tmp_path: Path) -> None:
    """Strict validation of core kinds against the Kubernetes 1.30 schemas bundled with
    kubernetes-validate; Prometheus Operator kinds against the vendored CRD schemas."""
    core = [doc for doc in docs if not doc["apiVersion"].startswith("monitoring.coreos.com/")]
    path = tmp_path / "render.yaml"
    path.write_text(yaml.safe_dump_all(core))
    validate = Path(sys.executable).parent / "kubernetes-validate"
    result = subprocess.run(
        [str(validate), "--strict", "-k", "1.30.0", str(path)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for doc in docs:
        if doc["apiVersion"].startswith("monitoring.coreos.com/"):
            assert_valid_custom_resource(doc)


@cache
def crd_validator(api_version: str, kind: str) -> jsonschema.protocols.Validator:
    for path in CRDS.glob("*.json"):
        crd = json.loads(path.read_text())
        if crd["apiVersion"] == api_version and crd["kind"] == kind:
            schema = strict(crd["openAPIV3Schema"])
            return jsonschema.Draft4Validator(schema)
    raise AssertionError(f"no vendored CRD schema for {api_version} {kind}")


def strict(schema: Any) -> Any:
    """The CRD schema as `kubectl apply --validate=strict` reads it: a field that is not in
    the schema is an error (unless the schema keeps unknown fields)."""
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: strict(value) for key, value in schema.items()}
    if (
        "properties" in out
        and "additionalProperties" not in out
        and not out.get("x-kubernetes-preserve-unknown-fields")
    ):
        out["additionalProperties"] = False
    return out


LABEL_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def assert_valid_custom_resource(doc: Doc) -> None:
    errors = sorted(
        crd_validator(doc["apiVersion"], doc["kind"]).iter_errors(doc), key=lambda e: e.path
    )
    assert not errors, [f"{'.'.join(map(str, e.path))}: {e.message}" for e in errors]
    # The CRD schema leaves metadata to the API server's ObjectMeta checks.
    metadata = doc["metadata"]
    assert NAME.match(metadata["name"]) and len(metadata["name"]) <= 253
    for key, value in metadata.get("labels", {}).items():
        assert LABEL_KEY.match(key) and isinstance(value, str) and LABEL_VALUE.match(value)
        assert len(value) <= 63
    assert all(isinstance(v, str) for v in metadata.get("annotations", {}).values())


def test_the_crd_validator_rejects_what_the_api_server_would() -> None:
    good: Doc = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PodMonitor",
        "metadata": {"name": "x"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "podMetricsEndpoints": [{"port": "m"}]},
    }
    assert_valid_custom_resource(good)
    for path, value in [
        (("spec", "podMetricEndpoints"), []),  # misspelt field
        (("spec", "podMetricsEndpoints"), [{"port": 9464}]),  # port is a name
        (("spec", "podMetricsEndpoints"), [{"port": "m", "interval": "soon"}]),
    ]:
        bad = copy.deepcopy(good)
        bad[path[0]][path[1]] = value
        with pytest.raises(AssertionError):
            assert_valid_custom_resource(bad)
    with pytest.raises(AssertionError):
        assert_valid_custom_resource({**good, "metadata": {"name": "x", "labels": {"a": 1}}})


def nulls(node: Any, where: str = "") -> Iterator[str]:
    if node is None:
        yield where
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from nulls(value, f"{where}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from nulls(value, f"{where}[{index}]")


# -- standalone ------------------------------------------------------------------------


def test_standalone_renders_a_deployment_service_and_guards() -> None:
    assert kinds(render()) == ["ConfigMap", "ConfigMap", "Deployment", "NetworkPolicy", "Service"]
    assert "HorizontalPodAutoscaler" in kinds(render("--set", "autoscaling.enabled=true", *SHARED))
    assert {"ServiceMonitor", "PrometheusRule"} <= set(kinds(render(*MONITORING)))


def test_the_container_is_locked_down_and_probed_on_the_health_port() -> None:
    pod = pod_of(render())["spec"]
    assert pod["enableServiceLinks"] is False
    container = pod["containers"][0]
    security = container["securityContext"]
    assert security["runAsNonRoot"] and security["readOnlyRootFilesystem"]
    assert security["capabilities"]["drop"] == ["ALL"] and not security["allowPrivilegeEscalation"]
    assert security["seccompProfile"]["type"] == "RuntimeDefault"
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert container[probe]["grpc"]["port"] == HEALTH
    assert container["readinessProbe"]["grpc"]["service"] == "sidecar.v1.PolicyService"
    assert container["resources"]["requests"] and container["resources"]["limits"]
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts["/etc/sidecar/policies"]["readOnly"] and "/var/lib/sidecar" in mounts
    assert env_of(container)["SIDECAR_LOG_FORMAT"] == "json"


def test_the_drain_fits_the_termination_grace_period() -> None:
    for grace, sleep in [(10, 5), (30, 12)]:
        pod = pod_of(
            render(
                "--set",
                f"drain.graceSeconds={grace}",
                "--set",
                f"drain.preStopSleepSeconds={sleep}",
            )
        )["spec"]
        container = pod["containers"][0]
        assert f"--grace-seconds={grace}" in container["args"]
        assert container["lifecycle"]["preStop"]["exec"]["command"] == ["sleep", str(sleep)]
        # The sleep, then the drain, must both end before the kubelet's SIGKILL.
        assert pod["terminationGracePeriodSeconds"] > grace + sleep


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], False),  # one replica by default: a PDB would block every node drain
        (["--set", "replicaCount=3"], True),
        (["--set", "autoscaling.enabled=true", "--set", "autoscaling.minReplicas=1"], False),
        (["--set", "autoscaling.enabled=true", "--set", "autoscaling.minReplicas=2"], True),
        (["--set", "replicaCount=3", "--set", "podDisruptionBudget.enabled=false"], False),
    ],
)
def test_a_disruption_budget_only_when_more_than_one_pod_runs(
    args: list[str], expected: bool
) -> None:
    assert ("PodDisruptionBudget" in kinds(render(*args, *SHARED))) is expected


def test_pods_spread_over_zones_and_nodes() -> None:
    docs = render()
    selector = one(docs, "Deployment")["spec"]["selector"]["matchLabels"]
    spread = pod_of(docs)["spec"]["topologySpreadConstraints"]
    assert [c["topologyKey"] for c in spread] == [
        "topology.kubernetes.io/zone",
        "kubernetes.io/hostname",
    ]
    assert all(c["labelSelector"]["matchLabels"] == selector for c in spread)
    assert all(c["whenUnsatisfiable"] == "ScheduleAnyway" for c in spread)
    custom = pod_of(
        render(
            "--set-json",
            'topologySpread.constraints=[{"maxSkew": 2, "topologyKey": "rack", '
            '"whenUnsatisfiable": "DoNotSchedule"}]',
        )
    )["spec"]["topologySpreadConstraints"]
    assert custom == [
        {
            "maxSkew": 2,
            "topologyKey": "rack",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": selector},
        }
    ]
    assert (
        "topologySpreadConstraints"
        not in pod_of(render("--set", "topologySpread.enabled=false"))["spec"]
    )


def test_the_network_policy_admits_only_labelled_clients_to_the_api() -> None:
    policy = one(render(), "NetworkPolicy")
    api, metrics = policy["spec"]["ingress"]
    assert api["ports"] == [{"port": GRPC, "protocol": "TCP"}]
    assert api["from"] == [
        {"podSelector": {"matchLabels": {"agent-policy-sidecar/client": "true"}}}
    ]
    assert metrics["ports"] == [{"port": METRICS, "protocol": "TCP"}]
    # The health port has no rule: only the pod's node (the kubelet) reaches it.
    assert all(p["port"] != HEALTH for rule in policy["spec"]["ingress"] for p in rule["ports"])
    extra = one(
        render(
            "--set-json",
            'networkPolicy.clients=[{"namespaceSelector": {"matchLabels": {"team": "a"}}}]',
        ),
        "NetworkPolicy",
    )
    assert extra["spec"]["ingress"][0]["from"][1] == {
        "namespaceSelector": {"matchLabels": {"team": "a"}}
    }


def test_tls_mounts_the_secret_and_requires_client_certificates() -> None:
    pod = pod_of(render("--set", "tls.existingSecret=sidecar-tls", "--set", "tls.clientAuth=true"))[
        "spec"
    ]
    container = pod["containers"][0]
    assert {
        "--tls-cert=/etc/sidecar/tls/tls.crt",
        "--tls-key=/etc/sidecar/tls/tls.key",
        "--tls-client-ca=/etc/sidecar/tls/ca.crt",
    } <= set(container["args"])
    assert {"name": "policy-sidecar-tls", "secret": {"secretName": "sidecar-tls"}} in pod["volumes"]
    # Probes stay on the plaintext health port: kubelet gRPC probes cannot do TLS.
    assert container["readinessProbe"]["grpc"]["port"] == HEALTH


def test_policy_edits_roll_pods_only_when_reload_is_restart() -> None:
    files = ["--set-string", "policies.files.ops\\.yaml=permission: {mode: approve}"]
    watching = pod_of(render(*files))["metadata"]
    restarting = pod_of(render(*files, "--set", "policies.reload=restart"))["metadata"]
    other = pod_of(
        render(
            "--set-string",
            "policies.files.ops\\.yaml=permission: {mode: auto}",
            "--set",
            "policies.reload=restart",
        )
    )["metadata"]
    assert "annotations" not in watching  # nothing to say: no empty (null) annotations
    assert (
        restarting["annotations"]["checksum/policies"] != other["annotations"]["checksum/policies"]
    )
    config = one(render(*files), "ConfigMap")
    assert config["data"]["ops.yaml"].strip() == "permission: {mode: approve}"


def test_the_configmap_can_be_the_whole_policy() -> None:
    default_args = pod_of(render())["spec"]["containers"][0]["args"]
    alone = pod_of(render("--set", "policies.includeBundled=false"))["spec"]["containers"][0]
    assert "--no-bundled-policies" not in default_args
    assert "--no-bundled-policies" in alone["args"]


def test_the_default_image_is_the_one_the_readme_builds() -> None:
    readme = (ROOT / "README.md").read_text()
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    built = re.findall(r"docker build -t ([\w./-]+):([\w.-]+) \.", readme)
    assert built, "the README says how to build the image"
    assert {(VALUES["image"]["repository"], chart["appVersion"])} == set(built)
    container = pod_of(render())["spec"]["containers"][0]
    assert container["image"] == f"{VALUES['image']['repository']}:{chart['appVersion']}"
    assert f"kind load docker-image {VALUES['image']['repository']}:" in readme
    notes = (CHART / "templates" / "NOTES.txt").read_text()
    assert "docker build -t agent-policy-sidecar:" in notes and "kind load docker-image" in notes


# -- sidecar mode ----------------------------------------------------------------------


def test_sidecar_mode_renders_only_what_an_agent_chart_needs() -> None:
    assert kinds(render("--set", "mode=sidecar")) == ["ConfigMap", "ConfigMap"]
    assert kinds(render("--set", "mode=sidecar", *MONITORING)) == [
        "ConfigMap",
        "ConfigMap",
        "PodMonitor",
        "PrometheusRule",
    ]


def test_the_sidecar_mode_pod_exposes_no_api_port_beyond_loopback(tmp_path: Path) -> None:
    for args in ([], ["--kube-version", "1.28.0"]):
        docs = render_recipe(tmp_path, *args)
        assert "Service" not in kinds(docs)
        spec = pod_of(docs)["spec"]
        sidecar = sidecar_container(spec)
        listen = env_of(sidecar)["SIDECAR_LISTEN"].split(",")
        assert listen and all(is_loopback(address) for address in listen), listen
        declared = {p["containerPort"] for c in all_containers(spec) for p in c.get("ports", [])}
        assert GRPC not in declared
        # What does listen beyond loopback is the health-only port and /metrics.
        beyond = {port for port, address in listening(sidecar).items() if not is_loopback(address)}
        assert beyond == {HEALTH, METRICS}
        assert spec["enableServiceLinks"] is False
        assert (
            env_of(next(c for c in spec["containers"] if c["name"] == "agent"))["POLICY_SIDECAR"]
            == f"127.0.0.1:{GRPC}"
        )


def probes(container: Doc) -> Iterator[tuple[str, Doc]]:
    for name in ("startupProbe", "livenessProbe", "readinessProbe"):
        if name in container:
            yield name, container[name]


@pytest.mark.parametrize(
    "args", [["--set", "mode=standalone"], ["--set", "mode=sidecar"]], ids=["standalone", "sidecar"]
)
def test_every_kubelet_probe_targets_a_port_served_beyond_loopback(
    tmp_path: Path, args: list[str]
) -> None:
    if args[-1] == "mode=sidecar":
        pods = [
            pod_of(render_recipe(tmp_path, *v))["spec"] for v in ([], ["--kube-version", "1.28.0"])
        ]
    else:
        pods = [pod_of(render(*args))["spec"]]
    for spec in pods:
        sidecar = sidecar_container(spec)
        served = listening(sidecar)
        declared = {p["containerPort"]: p["name"] for p in sidecar["ports"]}
        for name, probe in probes(sidecar):
            if "exec" in probe:
                continue
            action = probe.get("grpc") or probe.get("httpGet") or probe.get("tcpSocket")
            assert action is not None, name
            port = action["port"]
            port = next((n for n, p in declared.items() if p == port), port)
            assert port in served, (name, port)
            assert not is_loopback(served[port]), (name, served[port])
            assert port == HEALTH, name  # health only: never the API


def test_a_native_sidecar_by_default_on_kubernetes_1_29_and_later(tmp_path: Path) -> None:
    docs = render_recipe(tmp_path)  # helm's default cluster version is recent
    spec = pod_of(docs)["spec"]
    [native] = spec["initContainers"]
    assert native["name"] == "policy-sidecar" and native["restartPolicy"] == "Always"
    assert native["startupProbe"]["grpc"] == {"port": HEALTH, "service": "sidecar.v1.PolicyService"}
    assert "lifecycle" not in native  # stopped after the agent: no preStop sleep needed
    assert [c["name"] for c in spec["containers"]] == ["agent"]
    assert_valid_kubernetes(docs, tmp_path)
    on_129 = pod_of(render_recipe(tmp_path, "--kube-version", "1.29.0"))["spec"]
    assert on_129["initContainers"][0]["restartPolicy"] == "Always"


@pytest.mark.parametrize(
    ("args", "values"),
    [
        (["--kube-version", "1.28.9"], SIDECAR_VALUES),
        ([], SIDECAR_VALUES + "  sidecar:\n    native: false\n"),
    ],
    ids=["old-cluster", "switched-off"],
)
def test_a_plain_sidecar_container_otherwise(tmp_path: Path, args: list[str], values: str) -> None:
    docs = render_recipe(tmp_path, *args, values=values)
    spec = pod_of(docs)["spec"]
    assert "initContainers" not in spec  # not an empty (null) list either
    plain = sidecar_container(spec)
    assert plain in spec["containers"] and "restartPolicy" not in plain
    assert plain["readinessProbe"]["grpc"]["port"] == HEALTH
    assert plain["lifecycle"]["preStop"]["exec"]["command"] == ["sleep", "5"]
    assert_valid_kubernetes(docs, tmp_path)


def test_the_switch_can_force_a_native_sidecar(tmp_path: Path) -> None:
    values = SIDECAR_VALUES + "  sidecar:\n    native: true\n"
    spec = pod_of(render_recipe(tmp_path, "--kube-version", "1.28.0", values=values))["spec"]
    assert spec["initContainers"][0]["restartPolicy"] == "Always"


def test_an_agent_chart_can_inject_the_sidecar(tmp_path: Path) -> None:
    """The documented sidecar recipe, rendered for real with this chart as a subchart."""
    values = (
        "agent-policy-sidecar:\n  mode: sidecar\n  policies:\n    reload: restart\n"
        "    files:\n      10-team.yaml: |\n        permission: {mode: approve}\n"
    )
    docs = render_recipe(tmp_path, values=values)
    pod = pod_of(docs)
    assert {c["name"] for c in all_containers(pod["spec"])} == {"agent", "policy-sidecar"}
    assert sidecar_container(pod["spec"])["securityContext"]["readOnlyRootFilesystem"]
    assert "checksum/policies" in pod["metadata"]["annotations"]
    assert {v["name"] for v in pod["spec"]["volumes"]} == {
        "policy-sidecar-policies",
        "policy-sidecar-state",
    }
    assert_valid_kubernetes(docs, tmp_path)


# -- monitoring ------------------------------------------------------------------------

CUSTOM = [
    "--set",
    "serviceMonitor.labels.release=kube-prometheus-stack",
    "--set",
    "serviceMonitor.annotations.team=sre",
    "--set",
    "podMonitor.labels.release=kube-prometheus-stack",
    "--set",
    "podMonitor.annotations.team=sre",
    "--set",
    "prometheusRule.labels.release=kube-prometheus-stack",
    "--set",
    "prometheusRule.annotations.team=sre",
    "--set",
    "dashboards.annotations.grafana_folder=agents",
]


@pytest.mark.parametrize(
    ("mode", "scrape"), [("standalone", "ServiceMonitor"), ("sidecar", "PodMonitor")]
)
def test_monitoring_renders_validates_and_carries_custom_labels(
    tmp_path: Path, mode: str, scrape: str
) -> None:
    docs = render("--set", f"mode={mode}", *MONITORING, *CUSTOM)
    for kind in (scrape, "PrometheusRule"):
        metadata = one(docs, kind)["metadata"]
        assert metadata["labels"]["release"] == "kube-prometheus-stack"
        assert metadata["labels"]["app.kubernetes.io/instance"] == "ci"
        assert metadata["annotations"] == {"team": "sre"}
    dashboard = next(d for d in docs if d["metadata"]["name"].endswith("-dashboard"))
    assert dashboard["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert dashboard["metadata"]["annotations"] == {"grafana_folder": "agents"}
    assert_valid_kubernetes(docs, tmp_path)


def test_without_the_operator_api_no_monitoring_objects_and_the_notes_say_so() -> None:
    assert not {"ServiceMonitor", "PodMonitor", "PrometheusRule"} & set(kinds(render()))
    out = subprocess.run(
        [HELM, "install", "ci", str(CHART), "--dry-run=client", "--set", "mode=sidecar"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert "monitoring.coreos.com/v1 API was not found" in out


def test_the_pod_monitor_scrapes_the_pods_that_include_the_sidecar(tmp_path: Path) -> None:
    docs = render_recipe(tmp_path, *MONITORING)
    monitor = one(docs, "PodMonitor")
    pod = pod_of(docs)
    labels = pod["metadata"]["labels"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= labels.items()
    [endpoint] = monitor["spec"]["podMetricsEndpoints"]
    assert endpoint["path"] == "/metrics"
    sidecar = sidecar_container(pod["spec"])
    port = next(p for p in sidecar["ports"] if p["name"] == endpoint["port"])
    assert listening(sidecar)[port["containerPort"]] == f"0.0.0.0:{METRICS}"
    assert_valid_kubernetes(docs, tmp_path)


def selectors(expr: str) -> list[str]:
    return re.findall(r"\b(?:up|sidecar_[a-z_]+|grpc_server_[a-z_]+)\{([^}]*)\}", expr)


def rules_of(docs: list[Doc]) -> list[Doc]:
    return [
        rule for group in one(docs, "PrometheusRule")["spec"]["groups"] for rule in group["rules"]
    ]


@pytest.mark.parametrize("mode", ["standalone", "sidecar"])
def test_the_alerts_select_the_pod_monitor_and_service_monitor_jobs(mode: str) -> None:
    release, namespace = "sidecar", "agents"  # fullname: sidecar-agent-policy-sidecar
    docs = render("--set", f"mode={mode}", "--namespace", namespace, *MONITORING, release=release)
    name = "sidecar-agent-policy-sidecar"
    service_monitor_job = name  # the Service's name
    pod_monitor_job = f"{namespace}/{name}"  # <namespace>/<PodMonitor name>
    assert name in {d["metadata"]["name"] for d in docs if d["kind"] in ("Service", "PodMonitor")}
    for rule in rules_of(docs):
        found = selectors(rule["expr"])
        assert found, rule["alert"]
        for selector in found:
            job = re.search(r"job=~`([^`]*)`", selector)
            assert job is not None, (rule["alert"], selector)
            pattern = re.compile(job.group(1))  # Prometheus anchors matchers at both ends
            assert pattern.fullmatch(pod_monitor_job) and pattern.fullmatch(service_monitor_job)
            assert not pattern.fullmatch(f"other/{name}") and not pattern.fullmatch("my-agent")
            assert f"namespace=`{namespace}`" in selector


def test_every_alert_links_to_its_runbook_section() -> None:
    runbook = (ROOT / "RUNBOOK.md").read_text()
    sections = {
        re.sub(r"[^a-z0-9 -]", "", heading.lower()).replace(" ", "-"): body
        for heading, body in re.findall(r"^## ([^\n]+)\n(.*?)(?=^## |\Z)", runbook, re.M | re.S)
    }
    rules = rules_of(render(*MONITORING))
    assert len(rules) == 6
    for rule in rules:
        url = rule["annotations"]["runbook_url"]
        base, _, anchor = url.partition("#")
        assert base == VALUES["prometheusRule"]["runbookBaseUrl"]
        assert anchor == rule["alert"].lower() and anchor in sections, rule["alert"]
        assert "What to check" in sections[anchor] and "What to do" in sections[anchor]
    moved = rules_of(render(*MONITORING, "--set", "prometheusRule.runbookBaseUrl=https://wiki/rb"))
    assert all(r["annotations"]["runbook_url"].startswith("https://wiki/rb#") for r in moved)


def dashboard_of(docs: list[Doc]) -> Doc:
    config = next(d for d in docs if d["metadata"]["name"].endswith("-dashboard"))
    [text] = config["data"].values()
    return dict(json.loads(text))


def test_the_dashboard_filters_every_panel_by_namespace_and_pod() -> None:
    dashboard = dashboard_of(render("--namespace", "agents"))
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["namespace"]["current"]["value"] == "agents"
    assert "$namespace" in variables["pod"]["definition"]
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == "${datasource}"
        for target in panel["targets"]:
            for selector in selectors(target["expr"]):
                assert 'namespace=~"$namespace"' in selector, (panel["title"], target["expr"])
                assert 'pod=~"$pod"' in selector, (panel["title"], target["expr"])


def test_the_dashboard_uid_does_not_clash_across_releases() -> None:
    uids = {
        dashboard_of(render("--namespace", namespace, release=release))["uid"]
        for release, namespace in [("a", "x"), ("b", "x"), ("a", "y")]
    }
    assert len(uids) == 3
    assert all(0 < len(uid) <= 40 for uid in uids)  # Grafana's limit


def test_the_dashboard_only_uses_metrics_the_sidecar_exports() -> None:
    dashboard = json.loads((CHART / "files" / "dashboard.json").read_text())
    exported = {metric.name for metric in Metrics().registry.collect()}
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            for name in re.findall(r"\b((?:sidecar|grpc_server)_[a-z_]+)", target["expr"]):
                base = re.sub(r"_(total|bucket|count|sum|info)$", "", name)
                assert base in exported or name in exported, (panel["title"], name)


# -- every render ----------------------------------------------------------------------

COMBINATIONS = {
    "standalone": [],
    "standalone-monitoring": [*MONITORING, *CUSTOM],
    "standalone-hpa-tls": [
        *SHARED,
        "--set",
        "autoscaling.enabled=true",
        "--set",
        "tls.existingSecret=t",
        "--set",
        "podAnnotations.a=b",
        "--set",
        "podLabels.team=x",
    ],
    "standalone-one-replica": ["--set", "replicaCount=1", "--set", "topologySpread.enabled=false"],
    "sidecar": ["--set", "mode=sidecar"],
    "standalone-replicas-postgres-workers": [
        *SHARED,
        "--set",
        "replicaCount=3",
        "--set",
        "workers=2",
        "--set",
        "state.unavailable=deny",
    ],
    "sidecar-postgres": ["--set", "mode=sidecar", *SHARED],
    "sidecar-monitoring": ["--set", "mode=sidecar", *MONITORING, *CUSTOM],
    "restart": ["--set", "policies.reload=restart", "--set-string", "policies.files.a\\.yaml=x: 1"],
}


@pytest.mark.parametrize("name", list(COMBINATIONS))
def test_every_render_validates_and_has_no_null_values(tmp_path: Path, name: str) -> None:
    docs = render(*COMBINATIONS[name])
    for doc in docs:
        assert not list(nulls(doc)), (doc["kind"], list(nulls(doc)))
    assert_valid_kubernetes(docs, tmp_path)


@pytest.mark.parametrize(
    "values",
    [[], ["--set", "mode=sidecar"], [*MONITORING, "--set", "mode=sidecar"]],
    ids=["standalone", "sidecar", "sidecar-monitoring"],
)
def test_helm_lint_strict_is_clean(values: list[str]) -> None:
    result = subprocess.run(
        [HELM, "lint", "--strict", str(CHART), *[v for v in values if v not in MONITORING]],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "values",
    [
        ["--set", "mode=yolo"],
        ["--set", "grpc.port=0"],
        ["--set", "health.port=70000"],
        ["--set", "policies.reload=never"],
        ["--set", "nonsense=1"],
        ["--set", "sidecar.native=maybe"],
        ["--set", "drain.graceSeconds=-1"],
        ["--set", "serviceMonitor.labels.release=1"],  # label values are strings
        ["--set", "podMonitor.lables.release=x"],
        ["--set-json", 'extraArgs=["mode=auto"]'],
        ["--set", "workers=0"],
        ["--set", "state.unavailable=allow"],
        ["--set", "state.postgres.host=db"],
    ],
)
def test_bad_values_fail_at_install_time(values: list[str]) -> None:
    result = subprocess.run(
        [HELM, "template", "ci", str(CHART), *values], capture_output=True, text=True
    )
    assert result.returncode != 0
    assert "schema" in result.stderr


# -- one pod, many pods (issue 12) ----------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [
        ["--set", "replicaCount=2"],
        ["--set", "autoscaling.enabled=true"],
        ["--set", "replicaCount=2", "--set", "state.existingClaim=shared-pvc"],
    ],
    ids=["replicas", "autoscaling", "replicas-on-one-claim"],
)
def test_more_than_one_replica_without_a_shared_store_refuses_to_render(
    values: list[str],
) -> None:
    result = subprocess.run(
        [HELM, "template", "ci", str(CHART), *values], capture_output=True, text=True
    )
    assert result.returncode != 0
    assert "needs a shared store: set state.postgres.existingSecret" in result.stderr
    assert "would disagree" in result.stderr


def test_the_shared_store_comes_from_a_secret_with_the_password_in_a_file() -> None:
    docs = render(*SHARED, "--set", "replicaCount=3", "--set", "workers=2")
    pod = pod_of(docs)["spec"]
    container = pod["containers"][0]
    (state,) = [e for e in container["env"] if e["name"] == "SIDECAR_STATE"]
    assert state["valueFrom"]["secretKeyRef"] == {"name": "sidecar-db", "key": "dsn"}
    assert not any("password" in e["name"].lower() for e in container["env"])
    assert "--state-password-file=/etc/sidecar/state-password/password" in container["args"]
    assert "--workers=2" in container["args"]
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    assert mounts["policy-sidecar-state-password"]["mountPath"] == "/etc/sidecar/state-password"
    assert mounts["policy-sidecar-state-password"]["readOnly"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    secret = volumes["policy-sidecar-state-password"]["secret"]
    assert secret["secretName"] == "sidecar-db"
    assert secret["items"] == [{"key": "password", "path": "password"}]  # the DSN stays out
    assert one(docs, "Deployment")["spec"]["replicas"] == 3


def test_sidecar_mode_keeps_sqlite_on_an_empty_dir_and_may_point_at_postgres(
    tmp_path: Path,
) -> None:
    embedded = sidecar_container(pod_of(render_recipe(tmp_path))["spec"])
    assert env_of(embedded)["SIDECAR_STATE"] == "/var/lib/sidecar/state.db"
    assert not any(a.startswith("--state-password-file") for a in embedded["args"])
    shared = render_recipe(
        tmp_path,
        values=SIDECAR_VALUES + "  state:\n    postgres:\n      existingSecret: answers-db\n",
    )
    container = sidecar_container(pod_of(shared)["spec"])
    (state,) = [e for e in container["env"] if e["name"] == "SIDECAR_STATE"]
    assert state["valueFrom"]["secretKeyRef"]["name"] == "answers-db"

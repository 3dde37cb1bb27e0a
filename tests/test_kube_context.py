"""The Kubernetes context a call switches to decides where its deletes land.

`kubectl config use-context kind-dev && kubectl delete ns scratch` is the developer's own
cluster; the same with a production context is denied. The context lives in the kubeconfig
file, so a switch in one call holds for the session's later calls. Giving a context a name
that reads as local while pointing it elsewhere is a change to a credential file.
"""

from __future__ import annotations

import pytest

from sidecar.engine import PolicyEngine
from sidecar.inspection.model import ToolCall
from sidecar.inspection.verdict import Mode, Verdict
from tests.conftest import engine_for_mode


@pytest.fixture(scope="module")
def engine() -> PolicyEngine:
    return engine_for_mode(Mode.AUTO)


async def _verdicts(engine: PolicyEngine, session: str, lines: list[str]) -> list[Verdict]:
    found = []
    for index, line in enumerate(lines):
        decision = await engine.inspect(session, [ToolCall(str(index), "Bash", {"command": line})])
        found.append(decision.verdicts[0].verdict)
    return found


ONE_LINE = {
    "kind context then delete": (
        "kubectl config use-context kind-dev && kubectl delete namespace scratch",
        Verdict.ALLOW,
    ),
    "kubectx local then helm": ("kubectx minikube && helm uninstall api", Verdict.ALLOW),
    "production context then delete": (
        "kubectl config use-context prod-eu && kubectl delete deployment api",
        Verdict.DENY,
    ),
    "kubectx production then delete": ("kubectx prod && kubectl delete deploy api", Verdict.DENY),
    "own kubeconfig beats the switch": (
        "kubectl config use-context kind-dev && KUBECONFIG=/tmp/k kubectl delete deploy api",
        Verdict.REQUIRE_APPROVAL,
    ),
    "switch to a context known at run time": (
        'kubectl config use-context "$CTX" && kubectl delete deployment api',
        Verdict.REQUIRE_APPROVAL,
    ),
    "renamed to look local": (
        "kubectl config rename-context prod kind-dev && kubectl --context kind-dev delete ns x",
        Verdict.REQUIRE_APPROVAL,
    ),
    "local name pointed at another cluster": (
        "kubectl config set-context kind-x --cluster=prod-cluster --user=admin",
        Verdict.REQUIRE_APPROVAL,
    ),
    "namespace of the current context": (
        "kubectl config set-context --current --namespace=dev",
        Verdict.ALLOW,
    ),
}


@pytest.mark.parametrize("name", sorted(ONE_LINE))
async def test_a_switch_in_the_line_decides_where_later_commands_act(
    engine: PolicyEngine, name: str
) -> None:
    line, expected = ONE_LINE[name]
    assert await _verdicts(engine, f"line-{name}", [line]) == [expected]


SESSIONS = {
    "local switch holds for later calls": (
        ["kubectl config use-context kind-dev", "kubectl delete namespace scratch"],
        Verdict.ALLOW,
    ),
    "production switch holds for later calls": (
        ["kubectx prod-eu", "kubectl delete deployment api"],
        Verdict.DENY,
    ),
    "a later switch to an unknown context ends it": (
        ["kubectx kind-dev", "kubectx -", "kubectl delete deployment api"],
        Verdict.REQUIRE_APPROVAL,
    ),
    "a call naming its own context is judged by it": (
        ["kubectx kind-dev", "kubectl --context prod delete deployment api"],
        Verdict.DENY,
    ),
}


@pytest.mark.parametrize("name", sorted(SESSIONS))
async def test_a_switch_holds_for_the_sessions_later_calls(engine: PolicyEngine, name: str) -> None:
    lines, expected = SESSIONS[name]
    assert (await _verdicts(engine, f"session-{name}", lines))[-1] is expected


async def test_without_a_switch_a_delete_still_asks(engine: PolicyEngine) -> None:
    assert await _verdicts(engine, "plain", ["kubectl delete deployment api"]) == [
        Verdict.REQUIRE_APPROVAL
    ]

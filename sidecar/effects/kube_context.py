"""The Kubernetes context a command line switches to, and the commands that then use it.

`kubectl config use-context kind-dev && kubectl delete ns scratch` deletes on the local kind
cluster; `kubectx prod && kubectl delete deploy api` deletes in production. The context is
kept in the kubeconfig file, so it also holds for the session's later calls. A command that
names its own context or kubeconfig is judged by what it names.
"""

from __future__ import annotations

from collections.abc import Sequence

import re2

from sidecar.shell.walk import SimpleCommand

_CLIENTS = frozenset({"kubectl", "oc", "kubecolor", "microk8s.kubectl", "k3s-kubectl"})
_USES_CONTEXT = {**{name: "--context" for name in _CLIENTS}, "helm": "--kube-context"}
_OWN_CONTEXT = ("--context", "--kube-context", "--kubeconfig", "--cluster", "-s", "--server")


def switched_to(command: SimpleCommand) -> str | None:
    """The context `command` makes current (`kubectl config use-context X`, `kubectx X`),
    "" when it switches to one known only at run time, None when it switches nothing."""
    words = command.positionals
    if command.program in _CLIENTS:
        if len(words) >= 2 and words[0] == "config" and words[1] == "use-context":
            return _literal(words[2]) if len(words) > 2 else ""
        return None
    if command.program == "kubectx" and words and words[0] != "-c":
        # `kubectx -` goes back to the previous context: unknown here.
        return _literal(words[0]) if words[0] != "-" else ""
    return None


def context_words(command: SimpleCommand, context: str) -> tuple[str, ...]:
    """Words that tell the catalogue's text flags which context `command` runs against
    (none when the command names its own or the context is unknown)."""
    option = _USES_CONTEXT.get(command.program)
    if option is None or not context:
        return ()
    if any(type(w) is str and w.startswith(_OWN_CONTEXT) for w in command.args):
        return ()
    if any(w.startswith("KUBECONFIG=") for w in command.environment):
        return ()
    return (f"{option}={context}",)


def disguises_context(command: SimpleCommand) -> bool:
    """`kubectl config rename-context prod kind-dev` or `set-context kind-x --cluster=prod`:
    a context given a name that reads as a cluster on this machine, pointing anywhere.
    Deletes "there" would pass as local work, so this is a change to a credential file."""
    if command.program not in _CLIENTS:
        return False
    words = [w for w in command.positionals if type(w) is str]
    if len(words) < 3 or words[0] != "config":
        return False
    if words[1] == "rename-context" and len(words) >= 4:
        return bool(_LOCAL_NAME.search(words[3]))
    if words[1] == "set-context":
        repoints = any(
            type(w) is str and w.startswith(("--cluster", "--user")) for w in command.args
        )
        return repoints and bool(_LOCAL_NAME.search(words[2]))
    return False


_LOCAL_NAME = re2.compile(
    r"(?i)^(kind-|k3d-|minikube|docker-desktop|rancher-desktop|colima|orbstack)"
)


def runs_kubernetes_client(commands: Sequence[SimpleCommand]) -> bool:
    return any(c.program in _USES_CONTEXT for c in commands)


def _literal(word: object) -> str:
    return word if type(word) is str else ""

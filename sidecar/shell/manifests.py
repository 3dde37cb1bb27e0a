"""What Kubernetes workloads run: the `command` and `args` of their containers.

A pod is code: `kubectl apply` of a manifest whose container pipes a download into a shell
runs that pipe, in the cluster. The manifest may be a file written earlier or a here-document
fed to `kubectl apply -f -`. YAML is read leniently (flow lists and block lists), bounded.
"""

from __future__ import annotations

import json
import shlex

import re2

_MAX_LINES = 2000
_KUBERNETES_KIND = re2.compile(
    r'(?m)(?:^|[{,])\s*"?kind"?\s*:\s*"?(Pod|Deployment|DaemonSet|StatefulSet|Job|CronJob|ReplicaSet)\b'
)
# `command: ["sh", "-c", "..."]` (flow style) or `- sh` items below `command:`/`args:`.
_CONTAINER_FLOW = re2.compile(r'(?m)^\s*"?(command|args)"?\s*:\s*\[(.*)\]\s*,?\s*$')
_CONTAINER_BLOCK = re2.compile(r"(?m)^(\s*)(command|args)\s*:\s*$")
_BLOCK_ITEM = re2.compile(r"^\s*-\s+(.*)$")


def manifest_lines(content: str) -> list[str]:
    """Command lines standing for what applying a workload does: its containers' commands,
    then what the pod is granted of the node, as the `kubectl run --overrides` that would
    grant it (judged by the same rules: privileged in the node's PID namespace, or its
    root filesystem, is the node)."""
    commands = manifest_commands(content)
    grants = node_grants(content)
    return [*commands, _as_overrides(grants)] if grants else commands


# What a pod may be given of its node: its namespaces, full privileges, its files.
_HOST_NAMESPACE = re2.compile(r'(?m)^\s*"?(hostPID|hostNetwork|hostIPC)"?\s*:\s*"?true\b')
_PRIVILEGED = re2.compile(r'(?m)^\s*"?privileged"?\s*:\s*"?true\b')
_FLOW_PRIVILEGED = re2.compile(r'[{,]\s*"?privileged"?\s*:\s*"?true\b')
_HOST_PATH = re2.compile(
    r'"?hostPath"?\s*:\s*\{?\s*(?:#[^\n]*)?\s*"?path"?\s*:\s*["\']?([^"\'\s,}]+)'
)


def node_grants(content: str) -> dict[str, object]:
    """What a workload's pods get of the node: `hostPID`/`hostNetwork`/`hostIPC`,
    `privileged`, and the host paths they mount (the pod spec's keys and values)."""
    text = "\n".join(content.splitlines()[:_MAX_LINES])
    grants: dict[str, object] = {}
    for match in _HOST_NAMESPACE.finditer(text):
        grants[str(match.group(1))] = True
    if _PRIVILEGED.search(text) is not None or _FLOW_PRIVILEGED.search(text) is not None:
        grants["privileged"] = True
    paths = list(dict.fromkeys(str(m.group(1)) for m in _HOST_PATH.finditer(text)))
    if paths:
        grants["hostPath"] = paths[:16]
    return grants


def _as_overrides(grants: dict[str, object]) -> str:
    spec: dict[str, object] = {
        key: True for key in ("hostPID", "hostNetwork", "hostIPC") if grants.get(key)
    }
    if grants.get("privileged"):
        spec["containers"] = [{"name": "manifest", "securityContext": {"privileged": True}}]
    paths = grants.get("hostPath")
    if isinstance(paths, list):
        spec["volumes"] = [
            {"name": f"h{i}", "hostPath": {"path": path}} for i, path in enumerate(paths)
        ]
    overrides = json.dumps({"spec": spec}, separators=(",", ":"))
    return shlex.join(["kubectl", "run", "manifest", f"--overrides={overrides}"])


def manifest_commands(content: str) -> list[str]:
    """What a Kubernetes workload's containers run (`command` + `args`), as command lines:
    a pod that pipes a download into a shell is remote code, wherever it is applied from."""
    found: list[list[str]] = []
    lines = content.splitlines()[:_MAX_LINES]
    for index, line in enumerate(lines):
        flow = _CONTAINER_FLOW.match(line)
        words: list[str] = []
        key = ""
        if flow is not None:
            key = flow.group(1)
            words = _flow_items(flow.group(2))
        else:
            block = _CONTAINER_BLOCK.match(line)
            if block is None:
                continue
            key = block.group(2)
            for following in lines[index + 1 : index + 64]:
                item = _BLOCK_ITEM.match(following)
                if item is None:
                    break
                words.append(_yaml_scalar(item.group(1)))
        if key == "args" and found:
            found[-1].extend(words)  # args follow the command they belong to
        elif words:
            found.append(words)
    return [shlex.join(words) for words in found if words]


def _flow_items(text: str) -> list[str]:
    try:
        items = json.loads("[" + text + "]")
    except ValueError:
        return [_yaml_scalar(part) for part in text.split(",") if part.strip()]
    return [str(item) for item in items]


def _yaml_scalar(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return _unescape(text[1:-1]) if text[0] == '"' else text[1:-1]
    return text


def is_workload(content: str) -> bool:
    return _KUBERNETES_KIND.search(content) is not None


def _unescape(text: str) -> str:
    try:
        value = json.loads(f'"{text}"')
    except ValueError:
        return text
    return value if isinstance(value, str) else text

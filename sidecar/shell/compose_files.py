"""What a Compose file runs: each service as the `docker run` that `docker compose up` makes.

A service is a container: its image, command and entrypoint, and what it is given of the
host (privileges, host namespaces, mounted paths, devices, capabilities, published ports).
Writing them as `docker run` lines lets the container rules judge them as they judge a
typed `docker run` (a miner image, `/:/host` mounted, the Docker socket).
"""

from __future__ import annotations

import shlex
from typing import Any

import re2

from sidecar.policy.yaml_text import parse_yaml

_MAX_CONTENT = 64 * 1024
_MAX_SERVICES = 32
_MAX_ITEMS = 32
_COMPOSE_NAME = re2.compile(r"^(docker-)?compose(\.[A-Za-z0-9_-]+)*\.ya?ml$")
# Host namespaces a service may share: `pid: host`, `network_mode: host`, `ipc: host`.
_HOST_MODES = (
    ("pid", "--pid"),
    ("network_mode", "--network"),
    ("ipc", "--ipc"),
    ("userns_mode", "--userns"),
)
_LISTED = (
    ("cap_add", "--cap-add"),
    ("devices", "--device"),
    ("security_opt", "--security-opt"),
    ("ports", "-p"),
)


def is_compose_file(path: str) -> bool:
    return _COMPOSE_NAME.match(path.rsplit("/", 1)[-1]) is not None


def compose_lines(content: str) -> list[str]:
    """A `docker run` line per service, or [] when the text is not a Compose file."""
    try:
        data = parse_yaml(content[:_MAX_CONTENT])
    except Exception:  # any unreadable text (YAML errors, deep nesting) runs nothing known
        return []
    services = data.get("services") if isinstance(data, dict) else None
    if not isinstance(services, dict):
        return []
    return [
        _run_line(service)
        for service in list(services.values())[:_MAX_SERVICES]
        if isinstance(service, dict)
    ]


def _run_line(service: dict[str, Any]) -> str:
    words = ["docker", "run", "-d"]
    if service.get("privileged") is True:
        words.append("--privileged")
    for key, option in _HOST_MODES:
        value = service.get(key)
        if isinstance(value, str) and value:
            words += [option, value]
    if isinstance(service.get("user"), (str, int)):
        words += ["--user", str(service["user"])]
    for key, option in _LISTED:
        for item in _strings(service.get(key)):
            words += [option, item]
    for volume in _volumes(service.get("volumes")):
        words += ["-v", volume]
    entrypoint = _argv(service.get("entrypoint"))
    if entrypoint:
        words += ["--entrypoint", entrypoint[0]]
    image = service.get("image")
    words.append(image if isinstance(image, str) and image else "compose-built-image")
    words += entrypoint[1:] + _argv(service.get("command"))
    return shlex.join(words)


def _strings(value: object) -> list[str]:
    if isinstance(value, (str, int)):
        return [str(value)]
    if isinstance(value, list):
        return [str(v) for v in value[:_MAX_ITEMS] if isinstance(v, (str, int))]
    return []


def _argv(value: object) -> list[str]:
    """`command: sh -c "..."` is split as the shell would; a list is the argv itself."""
    if isinstance(value, str):
        try:
            return shlex.split(value)
        except ValueError:
            return value.split()
    return _strings(value)


def _volumes(value: object) -> list[str]:
    """Short (`/:/host:ro`) and long (`{type: bind, source: /, target: /host}`) syntax."""
    if not isinstance(value, list):
        return []
    found: list[str] = []
    for item in value[:_MAX_ITEMS]:
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict) and isinstance(item.get("source"), str):
            found.append(f"{item['source']}:{item.get('target', '/mnt')}")
    return found

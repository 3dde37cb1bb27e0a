"""Egress inspector: where calls send data, and whether credentials go with it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import re2

from sidecar.inspection.globs import GlobSet
from sidecar.inspection.model import Finding, InspectionContext, ToolCall
from sidecar.inspection.shell import SimpleCommand
from sidecar.inspection.shell_calls import ShellCalls
from sidecar.inspection.verdict import Mode, Risk, Verdict
from sidecar.policy.schema import EgressPolicy
from sidecar.secrets import SecretScanner

NAME = "egress"
NETWORK_PROGRAMS = frozenset(
    {
        "curl",
        "wget",
        "http",
        "https",
        "httpie",
        "xh",
        "nc",
        "ncat",
        "netcat",
        "socat",
        "ssh",
        "scp",
        "sftp",
        "rsync",
        "ftp",
        "tftp",
        "telnet",
        "aria2c",
        "lynx",
        "links",
        "git",
        "aws",
        "gsutil",
        "gcloud",
        "az",
        "docker",
        "podman",
        "npm",
        "cargo",
        "twine",
        "dig",
        "nslookup",
        "host",
        "ping",
    }
)
_URL = re2.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?(\[[0-9A-Fa-f:.]+\]|[^/:?#]+)")
_USER_HOST = re2.compile(
    r"^(?:[^@/\s]+@)?([A-Za-z0-9.-]+\.[A-Za-z]{2,}|\d{1,3}(?:\.\d{1,3}){3})(?::|$)"
)
_HOSTLIKE = re2.compile(r"^([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|\d{1,3}(?:\.\d{1,3}){3})$")
# Programs whose bare host arguments are destinations (curl takes "example.com" too).
_HOST_PROGRAMS = frozenset(
    {
        "curl",
        "wget",
        "nc",
        "ncat",
        "netcat",
        "socat",
        "ssh",
        "scp",
        "sftp",
        "rsync",
        "ftp",
        "telnet",
        "dig",
        "nslookup",
        "host",
        "ping",
        "http",
        "https",
        "xh",
    }
)


def destinations_of(command: SimpleCommand) -> list[str]:
    """Hosts a command contacts, as far as its arguments tell."""
    if command.program not in NETWORK_PROGRAMS:
        return []
    hosts: list[str] = []
    for argument in command.args:
        value = (
            argument.split("=", 1)[1] if argument.startswith("--") and "=" in argument else argument
        )
        url = _URL.search(value)
        if url:
            hosts.append(url.group(1).strip("[]").lower())
        elif command.program in _HOST_PROGRAMS:
            host = _USER_HOST.search(value) or _HOSTLIKE.search(value)
            if host and not value.startswith("-"):
                hosts.append(host.group(1).lower())
    return hosts


def domain_set(patterns: Iterable[str]) -> GlobSet:
    """'example.com' covers itself and its subdomains; globs such as '*.example.com' work too."""
    globs: list[str] = []
    for pattern in patterns:
        pattern = pattern.lower().rstrip(".")
        globs.append(pattern)
        if "*" not in pattern and "?" not in pattern:
            globs.append("*." + pattern)
    return GlobSet(globs)


class EgressInspector:
    name = NAME

    def __init__(
        self, policy: EgressPolicy, shell_calls: ShellCalls, secrets: SecretScanner
    ) -> None:
        self._policy = policy
        self._url_tools = GlobSet(policy.url_tools)
        self._allowed = domain_set(policy.allowed_domains)
        self._denied = domain_set(policy.denied_domains)
        self._shell_calls = shell_calls
        self._secrets = secrets

    async def inspect(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        return [self._inspect_call(call, context.mode) for call in calls]

    def _inspect_call(self, call: ToolCall, mode: Mode) -> list[Finding]:
        hosts, outbound_text = self._outbound(call)
        if not hosts and outbound_text is None:
            return []
        findings: list[Finding] = []
        secrets = self._secrets.find(outbound_text or "")
        if secrets:
            kinds = ", ".join(sorted({s.kind for s in secrets}))
            findings.append(
                Finding(
                    inspector=NAME,
                    verdict=Verdict.DENY,
                    rule_id="egress.secret",
                    message=f"a credential ({kinds}) would leave the machine",
                    risk=Risk.CRITICAL,
                )
            )
        for host in dict.fromkeys(hosts):
            findings.extend(self._judge_host(host, mode))
        return findings

    def _judge_host(self, host: str, mode: Mode) -> Iterable[Finding]:
        if self._denied.matches(host):
            yield Finding(
                inspector=NAME,
                verdict=Verdict.DENY,
                rule_id="egress.denied_domain",
                message=f"{host} is a denied destination",
                risk=Risk.HIGH,
            )
        elif self._allowed.globs and mode is not Mode.AUTO and not self._allowed.matches(host):
            message = f"{host} is not on the allowed destinations list"
            yield Finding(
                inspector=NAME,
                verdict=Verdict.REQUIRE_APPROVAL,
                rule_id="egress.unknown_domain",
                message=message,
                risk=Risk.MEDIUM,
                approval_prompt=f"Allow a connection to {host}?",
            )

    def _outbound(self, call: ToolCall) -> tuple[list[str], str | None]:
        analysis = self._shell_calls.analyse(call)
        if analysis is not None:
            hosts = [h for c in analysis.commands for h in destinations_of(c)]
            network = any(c.program in NETWORK_PROGRAMS for c in analysis.commands)
            return hosts, self._shell_calls.command_line(call) if network else None
        if not self._url_tools.matches(call.name):
            return [], None
        hosts = []
        for key in self._policy.url_arguments:
            value = call.arguments.get(key)
            if isinstance(value, str):
                url = _URL.search(value)
                if url:
                    hosts.append(url.group(1).strip("[]").lower())
        return hosts, call.canonical_arguments

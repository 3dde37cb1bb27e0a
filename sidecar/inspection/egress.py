"""Egress inspector: where calls send data, what goes with it, and what the session read."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import re2

from sidecar.effects.command_io import (
    CREDENTIAL_OPTIONS,
    SensitivePaths,
    dumps_environment,
    read_targets,
    upstream,
    without_options,
    write_targets,
)
from sidecar.effects.hosts import host_of
from sidecar.effects.url_secrets import secrets_in_urls
from sidecar.inspection.inspector import LocalInspector
from sidecar.inspection.model import Finding, InspectionContext, ToolCall
from sidecar.inspection.shell_calls import ShellCalls
from sidecar.inspection.verdict import Mode, Risk, Verdict
from sidecar.matching.globs import GlobSet
from sidecar.policy.schema import EgressPolicy
from sidecar.secrets import SecretScanner
from sidecar.shell.walk import ShellAnalysis, SimpleCommand

NAME = "egress"
# Programs that send data over the network (git/docker/npm only for their sending subcommands).
NETWORK_PROGRAMS = frozenset({
    "curl", "wget", "http", "https", "httpie", "xh", "nc", "ncat", "netcat", "socat", "ssh",
    "scp", "sftp", "rsync", "ftp", "tftp", "telnet", "aria2c", "lynx", "links", "aws",
    "gsutil", "gcloud", "az", "rclone", "dig", "nslookup", "host", "ping", "smbclient",
    "mail", "sendmail", "mutt", "s3cmd",
})  # fmt: skip
SENDING_SUBCOMMANDS = {
    "git": frozenset({"push", "remote", "clone", "fetch", "pull", "ls-remote"}),
    "docker": frozenset({"push", "login"}),
    "podman": frozenset({"push", "login"}),
    "npm": frozenset({"publish"}),
    "cargo": frozenset({"publish"}),
    "twine": frozenset({"upload"}),
    "gh": frozenset({"api", "gist", "release"}),
}
_UPLOAD_FLAGS = frozenset({
    "d", "data", "data-binary", "data-raw", "data-urlencode", "F", "form", "T", "upload-file",
    "post-file", "body-file", "post-data",
})  # fmt: skip
_URL = re2.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?(\[[0-9A-Fa-f:.]+\]|[^/:?#]+)")
_USER_HOST = re2.compile(
    r"^(?:[^@/\s]+@)?([A-Za-z0-9.-]+\.[A-Za-z]{2,}|\d{1,3}(?:\.\d{1,3}){3})(?::|$)"
)
_HOSTLIKE = re2.compile(r"^([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|\d{1,3}(?:\.\d{1,3}){3})$")
_SOCAT_HOST = re2.compile(r"(?i)^(?:tcp|udp|tcp4|tcp6|openssl)[a-z0-9-]*:([^:,]+):\d+")


def sends(command: SimpleCommand) -> bool:
    if command.program in NETWORK_PROGRAMS:
        return True
    subcommands = SENDING_SUBCOMMANDS.get(command.program)
    return bool(subcommands and command.positionals and command.positionals[0] in subcommands)


# Options whose next word is a value, not a destination (curl -o out.txt, wget -O f).
_OPTION_VALUES = {
    "curl": frozenset({
        "-o", "--output", "-d", "--data", "--data-binary", "--data-raw", "--data-urlencode",
        "-H", "--header", "-X", "--request", "-u", "--user", "-A", "--user-agent", "-e",
        "--referer", "-F", "--form", "-T", "--upload-file", "-w", "--write-out", "-b",
        "--cookie", "-c", "--cookie-jar", "-K", "--config", "--cacert", "--cert", "--key",
        "-m", "--max-time", "--retry", "-r", "--range", "-z", "-C", "-E", "--output-dir",
    }),
    "wget": frozenset({
        "-O", "--output-document", "-o", "--output-file", "-P", "--directory-prefix",
        "--post-data", "--post-file", "--header", "-U", "--user-agent", "-e", "--execute",
        "-T", "--timeout", "-t", "--tries", "--user", "--password", "-a", "--append-output",
    }),
}  # fmt: skip


def destinations_of(command: SimpleCommand) -> list[str]:
    """Hosts a command contacts, as far as its arguments tell."""
    if not sends(command):
        return []
    hosts: list[str] = []
    takes_hosts = command.program in NETWORK_PROGRAMS
    option_values = _OPTION_VALUES.get(command.program, frozenset())
    previous = ""
    for argument in command.args:
        is_value, previous = previous in option_values, argument
        value = argument.split("=", 1)[-1] if argument.startswith("--") else argument
        if is_value and not _URL.search(value):
            continue  # e.g. the file after -o
        url = _URL.search(value)
        if url:
            hosts.append(url.group(1).strip("[]").lower())
            continue
        socat = _SOCAT_HOST.search(value)
        if socat:
            hosts.append(socat.group(1).lower())
        elif takes_hosts and not value.startswith("-"):
            host = _USER_HOST.search(value) or _HOSTLIKE.search(value)
            if host:
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


class TaintRecord(Protocol):
    """Sessions that read a sensitive source: in memory (TaintTracker) or in the state
    store, shared by every worker and replica (sidecar/store/states.py)."""

    def taint(self, session_id: str, source: str) -> None: ...

    def source(self, session_id: str) -> str | None: ...

    def forget(self, session_id: str) -> bool: ...


class TaintTracker:
    """Sessions that have read a sensitive source, in this process's memory (shadow
    evaluation uses it). Bounded; survives policy reloads."""

    def __init__(self, max_sessions: int = 100_000) -> None:
        self._sources: OrderedDict[str, str] = OrderedDict()
        self._max_sessions = max_sessions

    def taint(self, session_id: str, source: str) -> None:
        self._sources.setdefault(session_id, source[:256])  # shown cut anyway; bounded
        self._sources.move_to_end(session_id)
        while len(self._sources) > self._max_sessions:
            self._sources.popitem(last=False)

    def source(self, session_id: str) -> str | None:
        return self._sources.get(session_id)

    def forget(self, session_id: str) -> bool:
        """Drop a deleted session's taint; True if it had one."""
        return self._sources.pop(session_id, None) is not None


@dataclass(slots=True)
class _Outbound:
    hosts: list[str] = field(default_factory=list)
    text: str | None = None  # what leaves the machine, scanned for credentials
    sensitive: list[str] = field(default_factory=list)  # sensitive data that would leave
    uploads: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)  # sensitive sources read (taint)

    @property
    def leaves(self) -> bool:
        return bool(self.hosts) or self.text is not None


class EgressInspector(LocalInspector):
    name = NAME

    def __init__(
        self,
        policy: EgressPolicy,
        shell_calls: ShellCalls,
        secrets: SecretScanner,
        sensitive: SensitivePaths,
        taint: TaintRecord,
    ) -> None:
        self._policy = policy
        self._url_tools = GlobSet(policy.url_tools, ignore_case=True)
        self._outbound_tools = GlobSet(policy.outbound_tools, ignore_case=True)
        self._read_tools = GlobSet(policy.read_tools)
        self._allowed = domain_set(policy.allowed_domains)
        self._denied = domain_set(policy.denied_domains)
        self._shell_calls = shell_calls
        self._secrets = secrets
        self._sensitive = sensitive
        self._taint = taint

    def inspect_now(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        return [self._inspect_call(call, context) for call in calls]

    def _inspect_call(self, call: ToolCall, context: InspectionContext) -> list[Finding]:
        outbound = self._outbound(call)
        if outbound is None:
            return []  # nothing leaves and nothing sensitive is read: most calls
        findings: list[Finding] = []
        if outbound.leaves:
            findings.extend(self._judge(outbound, context))
        if outbound.reads:
            # Later egress in this session needs approval: the data may travel with it.
            self._taint.taint(context.session_id, outbound.reads[0])
        return findings

    def _judge(self, outbound: _Outbound, context: InspectionContext) -> Iterable[Finding]:
        text = outbound.text or ""
        # The kinds, not every match: a body repeating a key 12,000 times is one DENY.
        found = self._secrets.kinds_in(text)
        found.update(secrets_in_urls(text, self._secrets))  # `?q=postgres://u:pw@db`, `token=`
        if found:
            kinds = ", ".join(sorted(found))
            yield _finding(
                Verdict.DENY, "egress.secret", f"a credential ({kinds}) would leave the machine",
                Risk.CRITICAL,
            )  # fmt: skip
        if outbound.sensitive:
            yield _finding(
                Verdict.DENY, "egress.sensitive_data",
                f"sensitive data ({outbound.sensitive[0][:80]}) would leave the machine",
                Risk.CRITICAL,
            )  # fmt: skip
        for upload in outbound.uploads[:1]:
            yield _finding(
                Verdict.ALLOW, "egress.upload", f"uploads local data ({upload[:80]})", Risk.MEDIUM
            )
        for host in dict.fromkeys(outbound.hosts):
            yield from self._judge_host(host, context.mode)
        source = self._taint.source(context.session_id)
        if source is not None:
            message = f"this session read {source[:80]}; data may leave with this call"
            yield _finding(
                Verdict.REQUIRE_APPROVAL, "egress.tainted_session", message, Risk.HIGH,
                prompt=f"Earlier this session read {source[:80]}. Allow sending data out?",
            )  # fmt: skip

    def _judge_host(self, host: str, mode: Mode) -> Iterable[Finding]:
        if self._denied.matches(host):
            yield _finding(
                Verdict.DENY, "egress.denied_domain", f"{host} is a denied destination", Risk.HIGH
            )
        elif self._allowed.globs and mode is not Mode.AUTO and not self._allowed.matches(host):
            yield _finding(
                Verdict.REQUIRE_APPROVAL, "egress.unknown_domain",
                f"{host} is not on the allowed destinations list", Risk.MEDIUM,
                prompt=f"Allow a connection to {host}?",
            )  # fmt: skip

    def _outbound(self, call: ToolCall) -> _Outbound | None:
        analysis = self._shell_calls.analyse(call)
        if analysis is not None:
            return self._shell_outbound(analysis, call)
        outbound = _Outbound()
        if self._read_tools.matches(call.name):
            outbound.reads = [p for p in self._paths(call) if self._sensitive.matches(p)]
        form = self._shell_calls.form(call)
        if (
            form.kind == "fetch"
            or self._url_tools.matches(call.name)
            or self._outbound_tools.matches(call.name)
        ):
            outbound.text = call.canonical_arguments
            for key in self._policy.url_arguments:
                value = call.arguments.get(key)
                url = _URL.search(value) if isinstance(value, str) else None
                if url:
                    outbound.hosts.append(url.group(1).strip("[]").lower())
            outbound.hosts.extend(host_of(u) for u in form.urls if host_of(u))
        return outbound

    def _paths(self, call: ToolCall) -> list[str]:
        values = (call.arguments.get(key) for key in self._policy.path_arguments)
        return [v for v in values if isinstance(v, str)]

    def _shell_outbound(self, analysis: ShellAnalysis, call: ToolCall) -> _Outbound | None:
        outbound: _Outbound | None = None
        read_only: list[str] = []  # sensitive sources read by commands that send nothing
        staged: dict[str, str] = {}  # file written from sensitive data -> where it came from
        for command in analysis.commands:
            targets = read_targets(command)
            reads = [p for p in targets if self._sensitive.matches(p)]
            if not sends(command):
                read_only.extend(reads)
                # `tar czf /tmp/k.tgz ~/.ssh`, `cat key > /tmp/c`: the new file holds secrets.
                origin = reads[0] if reads else None
                if origin is None and staged:
                    origin = next((staged[p] for p in targets if p in staged), None)
                if origin is not None:
                    staged.update(dict.fromkeys(write_targets(command), origin))
                continue
            if outbound is None:
                outbound = _Outbound(text=self._shell_calls.command_line(call) or "")
            outbound.hosts.extend(destinations_of(command))
            outbound.sensitive.extend(reads)
            if staged:
                outbound.sensitive.extend(
                    f"{staged[p]} (staged in {p})"
                    for p in _sent_files(command, targets)
                    if p in staged
                )
            # --post-file=/etc/shadow, -d @key, -F f=@key: the value names a file sent.
            # Keys used to log in (ssh -i key.pem, curl --key) are not sent.
            outbound.sensitive.extend(
                a for a in _sent_arguments(command) if self._sensitive.matches(a.split("=", 1)[-1])
            )
            # Whatever feeds the command, however many stages up, may leave with it.
            for source in upstream(command):
                if dumps_environment(source):
                    outbound.sensitive.append(f"the environment, from {source.program}")
                outbound.sensitive.extend(
                    p for p in read_targets(source) if self._sensitive.matches(p)
                )
            if command.input_from is not None:
                outbound.uploads.append(f"output of {command.input_from.program}")
            if command.flags & _UPLOAD_FLAGS:
                outbound.uploads.extend(a for a in command.args if a.startswith("@") or "=@" in a)
        if outbound is None:
            return _Outbound(reads=read_only) if read_only else None
        outbound.reads = read_only
        return outbound


# Option values that are not sent: login keys, and code run locally that is parsed as
# code anyway (git -c core.sshCommand='ssh -i key', rsync -e 'ssh -i key').
_NOT_SENT = {
    **CREDENTIAL_OPTIONS,
    "git": frozenset({"-c"}),
    "rsync": frozenset({"-e", "--rsh"}),
}


def _sent_files(command: SimpleCommand, read: list[str]) -> list[str]:
    """Files a sending command reads (`read`: its read targets), @file values,
    -T/--upload-file and --post-file=."""
    files = list(read)
    for argument in command.args:
        if "@" in argument:
            files.append(argument.split("@", 1)[1].split(";", 1)[0])
        elif "=" in argument and argument.startswith("--"):
            files.append(argument.split("=", 1)[1])
    args = command.args
    files += [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-T", "--upload-file")]
    return files


def _sent_arguments(command: SimpleCommand) -> list[str]:
    """The command's arguments, without the values of its credential options."""
    options = _NOT_SENT.get(command.program)
    return list(command.args) if options is None else without_options(command.args, options)


def _finding(verdict: Verdict, rule_id: str, message: str, risk: Risk, prompt: str = "") -> Finding:
    return Finding(
        inspector=NAME,
        verdict=verdict,
        rule_id=rule_id,
        message=message,
        risk=risk,
        approval_prompt=prompt or (message if verdict is Verdict.REQUIRE_APPROVAL else ""),
    )

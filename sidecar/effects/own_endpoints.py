"""The sidecar's own network endpoints, however a call spells them.

An agent that reaches the sidecar's API can answer its own approval prompts or delete its
history; one that finds the process by its port (`kill $(lsof -t -i:50051)`, `fuser -k
50051/tcp`) can stop it. Spellings of the host vary (`127.1`, `2130706433`, `0x7f000001`,
`[::1]`, `localhost`), and the port is the one the server listens on, which an operator may
change. Effects that reach a loopback address on one of those ports, or that kill or look up
processes by one, get the flag `sidecar_api`; rules in policy decide the verdict.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

import re2

from sidecar.effects.model import Action, Effect
from sidecar.shell.walk import SimpleCommand

SIDECAR_API = "sidecar_api"
DEFAULT_PORTS = (50051,)
_NETWORK = frozenset({Action.CONNECT, Action.SEND, Action.FETCH, Action.LISTEN})
_CLIENT = _NETWORK - {Action.LISTEN}
_BY_PORT = frozenset({Action.KILL, Action.DISABLE, Action.READ})
_LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost", "ip6-loopback", ""})
# scheme://[user@]host[:port], host:port, [v6]:port, /dev/tcp/host/port
_URL = re2.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?(\[[^\]]*\]|[^/:?#]*)(?::(\d+))?")
_HOST_PORT = re2.compile(r"^(\[[^\]]*\]|[^:/\s]*):(\d+)$")
_DEV_TCP = re2.compile(r"^/dev/(?:tcp|udp)/([^/]+)/(\d+)")
# `pkill python`, `killall -9 python3.11`, `pkill -f python`: the interpreter the sidecar is.
_INTERPRETER = re2.compile(r"^(python|python[0-9][0-9.]*|python[0-9.]*-real)$")
# socat's TCP:host:port, TCP4-CONNECT:host:port, OPENSSL:host:port
_SPEC_PORT = re2.compile(r"(?i)^[a-z0-9-]*:(\[[^\]]*\]|[^:,]+):(\d+)")


class OwnEndpoints:
    """Which ports are the sidecar's, and which effects reach them."""

    def __init__(
        self,
        ports: Iterable[int] = DEFAULT_PORTS,
        hosts: Iterable[str] = (),
        pids: Iterable[int] = (),
    ) -> None:
        """`hosts`: this machine's own names and addresses (the pod's hostname and IP);
        `pids`: the sidecar's processes (the server, and a supervisor of workers)."""
        self.hosts = frozenset(h.lower() for h in hosts if h)
        self.pids = frozenset(str(p) for p in pids if p > 1)
        self.ports: frozenset[int] = frozenset()
        self._port_mention = _mentions(self.ports)
        self._port_texts: tuple[str, ...] = ()
        self.add_ports(ports)

    def add_ports(self, ports: Iterable[int]) -> None:
        """Ports learnt once bound (`127.0.0.1:0` picks one at start)."""
        self.ports = self.ports | {p for p in ports if 0 < p < 65536}
        self._port_mention = _mentions(self.ports)
        self._port_texts = tuple(str(p) for p in sorted(self.ports))

    def mark(self, effect: Effect) -> Effect:
        if SIDECAR_API in effect.flags or not self.ports:
            return effect
        if effect.action in _NETWORK and self._reaches(effect.target):
            return effect._replace(flags=effect.flags | {SIDECAR_API})
        if effect.action in _BY_PORT and self._names_port(effect):
            return effect._replace(flags=effect.flags | {SIDECAR_API})
        if effect.action is Action.KILL and self._kills_own_process(effect.target):
            return effect._replace(flags=effect.flags | {SIDECAR_API})
        return effect

    def _kills_own_process(self, target: str) -> bool:
        """Its pid, every process (`kill -9 -1`), or every process named like it (`pkill
        python`): the sidecar is a Python process."""
        word = target.strip()
        return (
            word in self.pids
            or word == "-1"
            or _INTERPRETER.search(word.removeprefix("-").lower()) is not None
        )

    def _reaches(self, target: str) -> bool:
        host, port = _split(target.strip())
        if port not in self.ports:
            return False
        # `$HOSTNAME:50051`, `$(hostname -i):50051`: cannot tell it is not this machine.
        return is_loopback(host) or host in self.hosts or "$" in host or "`" in host

    def _names_port(self, effect: Effect) -> bool:
        if effect.action is Action.READ and "list" not in effect.flags:
            return False  # a file read; `fuser 50051/tcp` is a process listing
        target = effect.target
        if not any(port in target for port in self._port_texts):
            return False  # the pattern needs a port's digits: spare the RE2 call
        return self._port_mention.search(target) is not None


def with_loopback_ports(effects: list[Effect], command: SimpleCommand) -> list[Effect]:
    """`nc 127.0.0.1 52177`, `telnet localhost 50051`, `socat - TCP:127.1:50051`: a client
    that takes the port apart from the host still reaches host:port. Only loopback targets
    get their port (which service on this machine is reached is what matters there)."""
    changed: list[Effect] = []
    for effect in effects:
        if effect.action in _CLIENT and is_loopback(effect.target) and ":" not in effect.target:
            port = _port_for(effect.target, command)
            if port:
                effect = effect._replace(target=f"{effect.target}:{port}")
        changed.append(effect)
    return changed


def _port_for(host: str, command: SimpleCommand) -> str:
    words = command.positionals
    for word in command.args:
        # A URL or host:port naming this host (`curl http://127.0.0.2:50051/`): the effect's
        # target keeps the host only.
        named, port = _split(word.strip())
        if port and named == host:
            return str(port)
    for index, word in enumerate(words):
        spec = _SPEC_PORT.search(word)
        if spec is not None and spec.group(1).strip("[]").lower() == host:
            return str(spec.group(2))
        if word.lower() == host and index + 1 < len(words) and words[index + 1].isdigit():
            return words[index + 1]
    args = command.args
    for index, word in enumerate(args[:-1]):
        if word in ("-p", "--port", "-P") and args[index + 1].isdigit():
            return args[index + 1]
    return ""


def _mentions(ports: frozenset[int]) -> re2._Regexp:
    """`-iTCP:50051`, `:50051`, `50051/tcp`, `port 50051`, `sport = :50051`."""
    alternatives = "|".join(str(p) for p in sorted(ports)) or "0^"  # nothing, with no ports
    return re2.compile(rf"(?i)(:|\bport\s*=?\s*|^|\s)({alternatives})(/(tcp|udp))?(\b|$)")


def _split(target: str) -> tuple[str, int]:
    for pattern in (_URL, _DEV_TCP, _HOST_PORT):
        found = pattern.search(target)
        if found and found.group(2):
            try:
                return str(found.group(1)).strip("[]").lower(), int(found.group(2))
            except ValueError:
                return "", 0
    return "", 0


def is_loopback(host: str) -> bool:
    """127/8, ::1 and 0.0.0.0 in any spelling inet_aton accepts (`127.1`, `0x7f.1`, decimal)."""
    bare = host.strip("[]").lower()
    if bare in _LOOPBACK_NAMES or bare.endswith(".localhost"):
        return True
    address: ipaddress.IPv4Address | ipaddress.IPv6Address | None
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        address = _inet_aton(bare)
    if address is None:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_unspecified


def _inet_aton(text: str) -> ipaddress.IPv4Address | None:
    """The BSD forms: 1 to 4 parts, each decimal, octal (0...) or hex (0x...)."""
    parts = text.split(".")
    if not 1 <= len(parts) <= 4 or len(text) > 64:
        return None
    values: list[int] = []
    for part in parts:
        try:
            if part.lower().startswith("0x"):
                values.append(int(part[2:] or "0", 16))
            elif part.startswith("0") and len(part) > 1:
                values.append(int(part, 8))
            else:
                values.append(int(part, 10))
        except ValueError:
            return None
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (4 - len(head)):
        return None
    number = 0
    for value in head:
        number = number * 256 + value
    number = number * 256 ** (4 - len(head)) + last
    return ipaddress.IPv4Address(number)

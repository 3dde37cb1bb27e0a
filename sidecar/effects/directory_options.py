"""Options that make a program work in another directory: `git -C ~ clean -fd`,
`make -C /etc install`. The program's relative paths are below that directory."""

from __future__ import annotations

from sidecar.effects.model import UNRESOLVED
from sidecar.shell.walk import SimpleCommand

# program -> (its directory options, whether they come only before the subcommand)
_OPTIONS: dict[str, tuple[frozenset[str], bool]] = {
    "git": (frozenset({"-C"}), True),  # `git log -C` finds copies: after the subcommand it is not
    "make": (frozenset({"-C", "--directory"}), False),
    "gmake": (frozenset({"-C", "--directory"}), False),
}
_GIT_VALUED = frozenset({"-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"})


def working_directory_of(command: SimpleCommand) -> str:
    """The directory the command's options move it to ("" when none, UNRESOLVED when known
    only at run time); several `-C` options compose, as git and make read them."""
    known = _OPTIONS.get(command.program)
    if known is None:
        return ""
    names, leading_only = known
    directory = ""
    args = command.args
    index = 0
    while index < len(args):
        word = args[index]
        value: str | None = None
        if word in names and index + 1 < len(args):
            value = args[index + 1]
            index += 1
        elif word.startswith("--directory="):
            value = word.partition("=")[2]
        elif word.startswith("-C") and len(word) > 2 and not leading_only:
            value = word[2:]
        elif leading_only and word in _GIT_VALUED:
            index += 1  # its value is no subcommand
        elif leading_only and not word.startswith("-"):
            break  # the subcommand: options after it are its own
        if value is not None:
            if type(value) is not str:
                return UNRESOLVED
            directory = (
                value if value.startswith(("/", "~")) or not directory else f"{directory}/{value}"
            )
        index += 1
    return directory

"""Facts about a whole command line that no single command shows.

A file one command downloads and a later one runs (`curl -o x URL && ./x`), a git
remote added and pushed to in the same line. Rules ask for them by name
(runs_download, pushes_new_remote); they are worked out only when a rule asks.
"""

from __future__ import annotations

from collections.abc import Sequence

import re2

from sidecar.effects.command_io import subcommand_words
from sidecar.shell.walk import SimpleCommand

# Programs that fetch files, and the options naming the file they write.
_FETCHERS = {
    "curl": ("-o", "--output"),
    "wget": ("-O", "--output-document"),
    "aria2c": ("-o", "--out"),
    "axel": ("-o", "--output"),
    "fetch": ("-o",),
    "http": ("-o", "--output"),
    "xh": ("-o", "--output"),
}
# Programs that run the file named by their first positional argument.
_SCRIPT_RUNNERS = frozenset({
    "sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish", "source", ".", "python",
    "python2", "python3", "perl", "ruby", "node", "nodejs", "php", "deno", "bun", "pwsh",
})  # fmt: skip


def fetched_files(command: SimpleCommand) -> list[str]:
    """Files a download command writes (-o, -O, > file, or the URL's name for wget/curl -O)."""
    options = _FETCHERS.get(command.program)
    if options is None:
        return []
    found = [r.target for r in command.redirects if r.operator in (">", ">>", "&>")]
    args = command.args
    short = "".join(o[1] for o in options if len(o) == 2)  # "o" for curl's -o
    for index, argument in enumerate(args):
        takes_next = argument in options or (
            # a cluster of short flags ending in the output option: curl -so FILE
            short
            and argument[:1] == "-"
            and argument[1:2] != "-"
            and argument[1:].isalpha()
            and argument[-1] in short
        )
        if takes_next and index + 1 < len(args):
            found.append(args[index + 1])
        elif argument.startswith("--") and argument.split("=", 1)[0] in options:
            found.append(argument.split("=", 1)[1] if "=" in argument else "")
    names_from_url = (command.program == "wget" and not found) or (
        command.has_flag("O", "remote-name") and command.program == "curl"
    )
    if names_from_url:
        for positional in command.positionals:
            if "://" in positional:
                name = positional.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
                found.append(name)
    return [f for f in found if f and f != "-" and not f.startswith("/dev/")]


def runs_fetched_file(commands: Sequence[SimpleCommand]) -> str | None:
    """The first file that one command downloads and a later one runs or makes executable."""
    if not any(command.program in _FETCHERS for command in commands):
        return None  # the common case, answered in one pass
    fetched: set[str] = set()
    for command in commands:
        if fetched:
            if command.program in fetched:  # ./x or /tmp/x: the program is the file's name
                return command.program
            first = command.positionals[0] if command.positionals else ""
            if command.program in _SCRIPT_RUNNERS and _basename(first) in fetched:
                return first
            if command.program == "chmod" and _adds_execute(first):
                hit = next((p for p in command.positionals[1:] if _basename(p) in fetched), None)
                if hit is not None:
                    return hit
        fetched.update(_basename(f) for f in fetched_files(command))
    return None


def _basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _adds_execute(mode: str) -> bool:
    if mode.isdigit():
        return any(int(digit) & 1 for digit in mode[-3:])
    return "+" in mode and "x" in mode.split("+", 1)[1]


def pushes_to_added_remote(commands: Sequence[SimpleCommand]) -> str | None:
    """A git remote added (or re-pointed) and pushed to in the same command line: its URL."""
    if sum(command.program == "git" for command in commands) < 2:
        return None
    added: dict[str, str] = {}
    for command in commands:
        if command.program != "git":
            continue
        pointed = remote_pointed(command)
        if pointed is not None:
            added[pointed[0]] = pointed[1]
            continue
        words = subcommand_words(command, limit=4)
        if words[:1] == ("push",) and len(words) >= 2 and words[1] in added:
            return added[words[1]]
    return None


_REMOTE_URL_KEY = re2.compile(r"(?i)^remote\.(.+)\.(?:push)?url$")


def remote_pointed(command: SimpleCommand) -> tuple[str, str] | None:
    """A git command that adds a remote or points one elsewhere (`git remote add|set-url
    NAME URL`, `git config remote.NAME.pushurl URL`): the remote's name and new URL."""
    if command.program != "git":
        return None
    words = [w for w in command.positionals if type(w) is str]
    if "remote" in words:
        rest = words[words.index("remote") + 1 :]
        if len(rest) >= 3 and rest[0] in ("add", "set-url"):
            return rest[1], rest[2]
    if "config" in words:
        rest = words[words.index("config") + 1 :]
        if len(rest) >= 2:
            key = _REMOTE_URL_KEY.match(rest[0])
            if key is not None:
                return key.group(1), rest[1]
    return None


_NO_FACTS: frozenset[str] = frozenset()


# Devices that never run dry: a copy of one only stops when the disk is full.
_ENDLESS_DEVICES = frozenset({"/dev/zero", "/dev/urandom", "/dev/random", "/dev/full"})
_ENDLESS_PRINTERS = frozenset({"yes"})
# Programs that stop after a bounded amount of their input (head -c 1G, dd count=).
_BOUNDED_READERS = frozenset({"head", "read", "timeout"})
_NOT_A_FILE = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})


def fills_disk(commands: Sequence[SimpleCommand]) -> str | None:
    """A file an endless stream is written to (`dd if=/dev/zero of=/tmp/f`, `yes > f`,
    `cat /dev/urandom | base64 >> f`): it grows until the disk is full. `head -c`, `dd
    count=` and `timeout` bound the stream; devices (/dev/sda) are judged as devices."""
    endless: set[int] = set()
    # A redirect around a pipeline reaches the walk on every stage; only the last writes it.
    feeding = {id(c.input_from) for c in commands if c.input_from is not None}
    for command in commands:
        if _is_endless(command, endless):
            endless.add(id(command))
            for file in _written_files(command, id(command) in feeding):
                if file not in _NOT_A_FILE and not file.startswith(("/dev/", "/proc/", "/sys/")):
                    return file
    return None


def _is_endless(command: SimpleCommand, endless: set[int]) -> bool:
    program = command.program
    if program in _BOUNDED_READERS or "timeout" in command.wrappers:
        return False
    if program == "dd":
        if any(a.startswith("count=") for a in command.args):
            return False
        source = next((a[3:] for a in command.args if a.startswith("if=")), None)
        if source is not None:
            return source in _ENDLESS_DEVICES
    if program in _ENDLESS_PRINTERS:
        return True
    if any(r.operator == "<" and r.target in _ENDLESS_DEVICES for r in command.redirects):
        return True
    if command.input_from is not None and id(command.input_from) in endless:
        return True
    return program in _STREAMERS and any(p in _ENDLESS_DEVICES for p in command.positionals)


_WRITES = frozenset({">", ">>", "&>", ">|", "&>>"})
# Programs that copy or transform a device named as an operand for as long as it gives.
_STREAMERS = frozenset({
    "cat", "pv", "base64", "base32", "xxd", "od", "hexdump", "gzip", "bzip2", "xz", "zstd",
    "tee", "strings", "tr", "cp",
})  # fmt: skip


def _written_files(command: SimpleCommand, piped: bool) -> list[str]:
    files = [] if piped else [r.target for r in command.redirects if r.operator in _WRITES]
    if command.program == "dd":
        files += [a[3:] for a in command.args if a.startswith("of=")]
    elif command.program == "tee":
        files += command.positionals
    elif command.program == "cp" and len(command.positionals) >= 2:
        files.append(command.positionals[-1])
    return files


def script_facts(
    commands: Sequence[SimpleCommand], recursive: bool, wanted: frozenset[str]
) -> frozenset[str]:
    """The script-level facts rules may require, of those `wanted` (the others cost nothing)."""
    facts: list[str] = ["recursive_function"] if recursive else []
    if wanted:
        programs = {command.program for command in commands}  # one pass decides most lines
        if (
            "runs_download" in wanted
            and not programs.isdisjoint(_FETCHERS)
            and runs_fetched_file(commands) is not None
        ):
            facts.append("runs_download")
        if "fills_disk" in wanted and fills_disk(commands) is not None:
            facts.append("fills_disk")
        if (
            "pushes_new_remote" in wanted
            and "git" in programs
            and pushes_to_added_remote(commands) is not None
        ):
            facts.append("pushes_new_remote")
    return frozenset(facts) if facts else _NO_FACTS

"""What a parsed command does: what it reads and writes, what feeds it, whether it runs
its input as code, its subcommand words, and which paths hold secrets."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import re2

from sidecar.effects.paths import normalise
from sidecar.matching.pattern_filter import PatternFilter
from sidecar.shell.embedded_code import (
    INLINE_CODE_OPTIONS,
    inline_code,
    paths_in_code,
    sed_scripts,
    shell_script_index,
)
from sidecar.shell.walk import SHELLS, SimpleCommand

# Programs whose positional arguments are files they read the contents of.
READERS = frozenset({
    "cat", "tac", "less", "more", "head", "tail", "strings", "xxd", "od", "hexdump", "base64",
    "base32", "nl", "bat", "batcat", "view", "vi", "vim", "nano", "emacs", "grep", "egrep",
    "rg", "awk", "sed", "cut", "sort", "uniq", "wc", "diff", "cp", "mv", "scp", "rsync", "tar",
    "zip", "gzip", "bzip2", "xz", "7z", "openssl", "gpg", "sqlite3", "jq", "yq", "python",
    "python3", "source", ".", "curl", "wget", "aws", "gsutil", "nc", "ncat", "socat", "dd",
    "install", "tee", "iconv", "column", "fold", "paste", "pr", "split", "file", "md5sum",
    "sha1sum", "sha256sum", "cksum", "xclip", "pbcopy",
})  # fmt: skip
# Programs that print the environment (which holds API keys).
ENV_DUMPERS = frozenset({"printenv", "env", "set", "export", "declare"})
# Programs whose last positional is where they write.
_COPIERS = frozenset({"cp", "mv", "install", "ln", "rsync"})
_ARCHIVERS = frozenset({"tar", "zip", "7z"})
_WRITERS = _COPIERS | _ARCHIVERS | {"tee", "dd"}  # what write_targets looks at besides redirects


MAX_UPSTREAM = 32  # pipeline stages followed upstream from a command


def upstream(command: SimpleCommand) -> Iterator[SimpleCommand]:
    """The commands feeding this one, nearest first: `cat key | base64 | curl -d @-`
    gives base64, then cat."""
    source = command.input_from
    for _ in range(MAX_UPSTREAM):
        if source is None:
            return
        yield source
        source = source.input_from


def _strip_file_marker(argument: str) -> str:
    """curl -d @file, -F name=@file, file://path: the path itself."""
    if "=@" in argument:
        argument = argument.split("=@", 1)[1]
    argument = argument.removeprefix("@").removeprefix("file://")
    return argument.split(";", 1)[0]  # curl -F f=@file;type=...


def read_targets(command: SimpleCommand) -> list[str]:
    """Files whose contents the command reads (as far as its arguments tell)."""
    if (
        not command.redirects
        and command.program not in READERS
        and command.program not in INLINE_CODE_OPTIONS
    ):
        return []  # most commands: answered without building anything
    found = [r.target for r in command.redirects if r.operator in ("<", "<<<")]
    if _edits_in_place(command):
        return found  # the file's contents go back into the file, nowhere else
    if command.program in INLINE_CODE_OPTIONS:
        found += paths_in_code(command.program, command.args)
    if command.program in READERS:
        operands = list(_operands(command))
        if command.program in _COPIERS and len(operands) >= 2:
            operands = operands[:-1]  # the destination is written, not read
        found += operands
        found += [_strip_file_marker(a) for a in command.args if "@" in a]
        if command.program == "dd":
            found += [a[3:] for a in command.args if a.startswith("if=")]
    return found


# A sed script of substitutions and deletions only: nothing printed, written elsewhere,
# read in or run (no p, w, r, e commands or flags).
_PLAIN_SED_SCRIPT = re2.compile(
    r"^(\s*([0-9]+|\$)?\s*(s/([^/\\\n]|\\.)*/([^/\\\n]|\\.)*/[gI0-9]*|/([^/\\\n]|\\.)*/d|([0-9]+|\$)d)\s*;?)+$"
)


def _edits_in_place(command: SimpleCommand) -> bool:
    """`sed -i 's/^DEBUG=.*/DEBUG=true/' .env`: edits the file without showing it."""
    if command.program != "sed" or not command.has_flag("i", "in-place") or command.input_from:
        return False
    if any(r.operator in (">", ">>", "&>", "|") for r in command.redirects):
        return False
    scripts = sed_scripts(command.args)
    if "-f" in command.args or "--file" in command.args or not scripts:
        return False
    return all(_PLAIN_SED_SCRIPT.match(s) is not None for s in scripts)


# Options naming a key or certificate a program logs in with: read, but never sent.
CREDENTIAL_OPTIONS = {
    "ssh": frozenset({"-i"}),
    "scp": frozenset({"-i"}),
    "sftp": frozenset({"-i"}),
    "autossh": frozenset({"-i"}),
    "curl": frozenset({"--key", "--cert", "-E", "--cacert", "--proxy-key", "--proxy-cert"}),
    "wget": frozenset({"--private-key", "--certificate", "--ca-certificate"}),
}
# Options whose value is not a file the program reads as data: a login key (above), a
# port, a remote shell command, an output file.
_VALUE_OPTIONS = {
    "python": frozenset({"-c", "-m", "-W", "-X"}),  # -c CODE is code, not a file
    "python2": frozenset({"-c", "-m", "-W", "-X"}),
    "python3": frozenset({"-c", "-m", "-W", "-X"}),
    "scp": CREDENTIAL_OPTIONS["scp"] | {"-P", "-o", "-F", "-J", "-c", "-l", "-S"},
    "sftp": CREDENTIAL_OPTIONS["sftp"] | {"-P", "-o", "-F", "-J", "-c", "-l", "-S", "-b"},
    "rsync": frozenset({"-e", "--rsh", "--exclude", "--include", "--port", "--password-file"}),
    "curl": CREDENTIAL_OPTIONS["curl"] | {
        "-o", "--output", "-H", "--header", "-A", "--user-agent", "-u", "--user", "-X",
        "--request", "-w", "--write-out", "-m", "--max-time", "-e", "--referer", "-x", "--proxy",
    },
    "wget": CREDENTIAL_OPTIONS["wget"] | {
        "-O", "--output-document", "-o", "--output-file", "-P", "--directory-prefix", "--header",
        "-U", "--user-agent",
    },
}  # fmt: skip


def _operands(command: SimpleCommand) -> tuple[str, ...] | list[str]:
    """Positional arguments, leaving out values of options that take one (scp -i key)."""
    if command.program in ("openssl", "gpg", "gpg2"):
        return _key_tool_inputs(command)
    options = _VALUE_OPTIONS.get(command.program)
    if options is None:
        return command.positionals
    kept = without_options(command.args, options)
    return [a for a in kept if not a.startswith("-") or a == "-"]


# openssl commands that print or convert private keys; others read certificates, requests
# and data, which hold no secret.
_OPENSSL_KEY_COMMANDS = frozenset({"rsa", "pkey", "ec", "dsa", "pkcs8", "pkcs12", "enc"})


def _key_tool_inputs(command: SimpleCommand) -> list[str]:
    """What openssl and gpg read that may be secret: a key they print, data they decrypt.

    `openssl x509 -in cert.pem`, `openssl req -keyout key.pem` (writes) and
    `gpg --verify sig.asc` read nothing secret.
    """
    args = command.args
    if command.program == "openssl":
        if not command.positionals or command.positionals[0] not in _OPENSSL_KEY_COMMANDS:
            return []
        return [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-in", "-inkey", "-key")]
    if command.has_flag("d", "decrypt"):
        return [a for a in command.positionals if a != "-"]
    return []


def without_options(args: Sequence[str], options: frozenset[str]) -> list[str]:
    """The arguments without these options and their values (`-i key`, `--key=k`)."""
    kept: list[str] = []
    skip = False
    for argument in args:
        if skip:
            skip = False
        elif argument in options:
            skip = True
        elif not argument.startswith("--") or argument.split("=", 1)[0] not in options:
            kept.append(argument)
    return kept


def write_targets(command: SimpleCommand) -> list[str]:
    """Files the command writes: redirects, tee, cp/mv destinations, dd of=."""
    if not command.redirects and command.program not in _WRITERS:
        return []
    found = [r.target for r in command.redirects if ">" in r.operator and r.target[:1] != "&"]
    if command.program == "tee":
        found += command.positionals
    elif command.program in _COPIERS and len(command.positionals) >= 2:
        found.append(command.positionals[-1])
    elif command.program == "dd":
        found += [a[3:] for a in command.args if a.startswith("of=")]
    elif command.program in _ARCHIVERS:
        found += _archive_written(command)
    return found


def _archive_written(command: SimpleCommand) -> list[str]:
    """The archive tar (creating), zip or 7z (adding) writes."""
    args = command.args
    if command.program == "tar":
        creating = command.has_flag("c", "r", "u", "create", "append", "update")
        for index, argument in enumerate(args[:-1]):
            short_f = argument[:1] == "-" and argument[1:2] != "-" and argument.endswith("f")
            bare_f = index == 0 and argument.isalpha() and argument.endswith("f")  # tar czf x
            adds = creating or (bare_f and bool(set(argument) & {"c", "r", "u"}))
            if adds and (short_f or bare_f or argument == "--file"):
                return [args[index + 1]]
        return []
    if command.program == "zip":
        return list(command.positionals[:1])
    if command.program == "7z" and command.positionals[:1] == ("a",):
        return list(command.positionals[1:2])
    return []


def dumps_environment(command: SimpleCommand) -> bool:
    if command.program in ENV_DUMPERS:
        return not command.positionals
    return command.program in ("cat", "strings") and any(
        p.endswith("/environ") for p in command.positionals
    )


class SensitivePaths:
    """RE2 patterns for paths that hold secrets, matched as one set.

    The same few paths (".", "src", "README.md") come up again and again, so short
    ones are answered from a bounded memory instead of a fresh search.
    """

    MAX_REMEMBERED = 4096
    REMEMBERED_LENGTH = 256

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = tuple(patterns)
        self._filter = PatternFilter(self.patterns)
        self._answers: dict[str, bool] = {}

    def matches(self, path: str) -> bool:
        answer = self._answers.get(path)
        if answer is None:
            answer = self._search(path)
            if len(path) <= self.REMEMBERED_LENGTH:
                if len(self._answers) >= self.MAX_REMEMBERED:
                    self._answers.clear()
                self._answers[path] = answer
        return answer

    def _search(self, path: str) -> bool:
        if not self.patterns or not path or ("://" in path and "file://" not in path):
            return False  # a URL names a remote resource, not a local file
        # One spelling per path: /./etc/shadow, ~/x/../.ssh/id_rsa, /proc/self/root/etc/...
        return bool(self._filter.matching(normalise(_strip_file_marker(path.strip("'\"")))))

    def any(self, paths: Iterable[str]) -> bool:
        return any(self.matches(p) for p in paths)


# Global options that take a value, per program, so `git -C dir push` reads as `git push`.
_GLOBAL_OPTIONS_WITH_VALUES = {
    "git": frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"}),
    "kubectl": frozenset(
        {"-n", "--namespace", "--context", "--cluster", "--kubeconfig", "-s", "--server", "--user"}
    ),
    "helm": frozenset({"-n", "--namespace", "--kube-context", "--kubeconfig"}),
    "docker": frozenset({"-H", "--host", "--context", "-c", "--config", "-l", "--log-level"}),
    "podman": frozenset({"--connection", "--url", "--root", "--runroot"}),
    "npm": frozenset({"--prefix", "-C", "--workspace", "-w"}),
    "aws": frozenset({"--profile", "--region", "--endpoint-url", "--output"}),
    "gcloud": frozenset({"--project", "--account", "--configuration"}),
    "terraform": frozenset({"-chdir"}),
    "cargo": frozenset({"--manifest-path", "-Z", "--config"}),
    "make": frozenset({"-C", "-f", "--directory", "--file", "-j"}),
}


def subcommand_words(command: SimpleCommand, limit: int = 3) -> tuple[str, ...]:
    """The words naming what a command does (`git -C x push origin` -> push, origin)."""
    takes_value = _GLOBAL_OPTIONS_WITH_VALUES.get(command.program, frozenset())
    words: list[str] = []
    skip_next = False
    options_done = False
    for arg in command.args:
        if skip_next:
            skip_next = False
            continue
        if not options_done and arg == "--":
            options_done = True
            continue
        if not options_done and arg.startswith("-") and arg != "-":
            if arg in takes_value:
                skip_next = True
            continue
        words.append(arg)
        if len(words) >= limit:
            break
    return tuple(words)


_PYTHONS = frozenset({"python", "python2", "python3"})
_STDIN_FILES = ("<(", "/dev/stdin", "/dev/fd/", "/proc/self/fd/")


def executes_input(command: SimpleCommand) -> bool:
    """Whether a shell or interpreter runs what it is fed as code.

    `curl ... | sh`, `bash <(curl ...)` and `bash -c "$(curl ...)"` do; `curl ... |
    python3 -m json.tool` and `curl ... | python3 -c 'import json, sys; ...'` only read
    data, and `python3 script.py` runs the script, not its input.
    """
    program = command.program
    if program in ("source", ".", "eval"):
        return True
    code = _inline_code(command)
    if code is not None:
        return "$(" in code or "`" in code or "<(" in code  # the code is what was fed
    if program in _PYTHONS and "m" in command.flags:
        return False  # python -m module
    if program in SHELLS and "s" in command.flags:
        return True  # sh -s: the script comes from standard input
    first = command.positionals[0] if command.positionals else ""
    return first in ("", "-") or first.startswith(_STDIN_FILES)


def _inline_code(command: SimpleCommand) -> str | None:
    args = command.args
    if command.program in SHELLS:
        index = shell_script_index(args)
        if index is None:
            return None
        return args[index] if index < len(args) else ""
    found = inline_code(command.program, args)
    return found[0] if found is not None else None

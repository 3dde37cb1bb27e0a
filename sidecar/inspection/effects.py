"""What a parsed command reads and writes, and which paths hold secrets."""

from __future__ import annotations

from collections.abc import Iterable

from sidecar.inspection.pattern_filter import PatternFilter
from sidecar.inspection.shell import SimpleCommand

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
_WRITERS = _COPIERS | {"tee", "dd"}  # programs write_targets looks at besides redirects


def _strip_file_marker(argument: str) -> str:
    """curl -d @file, -F name=@file, file://path: the path itself."""
    if "=@" in argument:
        argument = argument.split("=@", 1)[1]
    argument = argument.removeprefix("@").removeprefix("file://")
    return argument.split(";", 1)[0]  # curl -F f=@file;type=...


def read_targets(command: SimpleCommand) -> list[str]:
    """Files whose contents the command reads (as far as its arguments tell)."""
    if not command.redirects and command.program not in READERS:
        return []  # most commands: answered without building anything
    found = [r.target for r in command.redirects if r.operator in ("<", "<<<")]
    if command.program in READERS:
        found += command.positionals
        found += [_strip_file_marker(a) for a in command.args if "@" in a]
        if command.program == "dd":
            found += [a[3:] for a in command.args if a.startswith("if=")]
    return found


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
    return found


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
        return bool(self._filter.matching(_strip_file_marker(path.strip("'\""))))

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

"""Paths spelled one way, and the classes (system, credentials, home, ...) they fall in.

A path from a command line can be spelled many ways (`~`, `$HOME`, `/./`, `//`, `a/../..`,
`/proc/self/root/...`). `normalise` gives one spelling, so that a class pattern written once
catches them all. Classes are defined by policy as RE2 patterns plus example members; the
examples let a glob (`~/.aws/*`, `/e*`) or a recursive operation on an ancestor (`rm -rf /usr`)
count as touching the class.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import re2

from sidecar.matching.pattern_filter import PatternFilter
from sidecar.windows_paths import is_windows_relative

HOME = "~"
# A stand-in directory for `~` while resolving `..`: `~/../../etc` is `/etc`.
_HOME_STAND_IN = "/home/\x00home"
GLOB_CHARACTERS = frozenset("*?[")
WORKSPACE = "workspace"
OUTSIDE_WORKSPACE = "outside_workspace"
UNRESOLVED_CLASS = "unresolved"
_MAX_REMEMBERED = 4096


def is_glob(path: str) -> bool:
    return not GLOB_CHARACTERS.isdisjoint(path)


def _quiet_options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # a bad glob in a call is no log line (it may hold secrets)
    return options


_QUIET = _quiet_options()


def normalise(path: str, workspace: str | None = None) -> str:
    """One spelling per path: `~` for home, no `.`/`..`/`//`, no trailing `/`.

    Relative paths stay relative (to the workspace) unless `workspace` is given as an
    absolute path, in which case they are resolved against it.
    """
    text = path.strip()
    if text.startswith("file://"):
        text = text[len("file://") :]
    if not text:
        return text
    if text[:1] in ("%", "$"):
        text = _windows_variable(text)
    if text[1:2] == ":" and text[:1].isalpha() and text[2:3] in ("\\", "/", ""):
        text = _windows(text)
    elif text.startswith((".\\", "..\\")) or is_windows_relative(text):
        text = text.replace("\\", "/")  # `.\tmp\t.txt`, `tmp\a.reg`: relative, for Windows
    if text.startswith("~"):
        head, slash, rest = text.partition("/")
        if head == "~":
            text = _HOME_STAND_IN + slash + rest
        elif head == "~root":
            text = "/root" + slash + rest
        elif head[1:].replace("-", "").replace("_", "").replace(".", "").isalnum():
            text = "/home/" + head[1:] + slash + rest  # ~user
    if text.startswith("/"):
        text = _without_proc_aliases(text)
        normal = posixpath.normpath(text)
        if normal.startswith("//"):
            normal = "/" + normal.lstrip("/")
    elif workspace is not None and workspace.startswith("/"):
        normal = posixpath.normpath(posixpath.join(workspace, text))
    else:
        normal = posixpath.normpath(text)
        if normal == ".":
            return "."
    if normal == _HOME_STAND_IN:
        return HOME
    if normal.startswith(_HOME_STAND_IN + "/"):
        return HOME + normal[len(_HOME_STAND_IN) :]
    if normal.startswith("/home/\x00"):  # climbed out of home and back down: /home/x
        return normal
    return normal


# Windows' folders by variable (`%USERPROFILE%\\.ssh`, `$env:APPDATA\\x`), as `~` and drive paths.
_WINDOWS_FOLDERS = {
    "userprofile": "~", "homepath": "~", "home": "~", "appdata": "~/AppData/Roaming",
    "localappdata": "~/AppData/Local", "temp": "~/AppData/Local/Temp",
    "tmp": "~/AppData/Local/Temp", "systemroot": "C:/Windows", "windir": "C:/Windows",
    "programdata": "C:/ProgramData", "programfiles": "C:/Program Files",
    "systemdrive": "C:/", "public": "C:/Users/Public",
}  # fmt: skip
_WINDOWS_VARIABLE = re2.compile(r"^(?:%([A-Za-z]+)%|\$env:([A-Za-z]+))(.*)$")


def _windows_variable(path: str) -> str:
    """`%USERPROFILE%\\.ssh` -> `~/.ssh`; an unknown variable stays as written."""
    match = _WINDOWS_VARIABLE.match(path)
    if match is None:
        return path
    folder = _WINDOWS_FOLDERS.get((match.group(1) or match.group(2) or "").lower())
    if folder is None:
        return path
    rest = str(match.group(3)).replace("\\", "/")
    return folder + ("/" + rest.lstrip("/") if rest.strip("/") else "")


def _windows(path: str) -> str:
    """`C:\\Users\\bob\\.ssh` is a home like `/Users/bob/.ssh`; any other drive path is
    spelt the MSYS way (`C:\\Windows` -> `/c/Windows`), so the classes see one form."""
    rest = path[2:].replace("\\", "/").lstrip("/")
    head, _, tail = rest.partition("/")
    if head.lower() == "users" and tail:
        return "/Users/" + tail
    if not rest:
        return "/"  # a drive's root is that file system's root
    return f"/{path[0].lower()}/{rest}"


def _without_proc_aliases(path: str) -> str:
    """`/proc/self/root/etc/shadow` is `/etc/shadow`; `/proc/1/cwd/x` is relative to a cwd."""
    if not path.startswith("/proc/"):
        return path
    parts = path.split("/")
    if len(parts) > 3 and (parts[2] == "self" or parts[2].isdigit()) and parts[3] == "root":
        return "/" + "/".join(parts[4:])
    return path


@dataclass(frozen=True, slots=True)
class ClassSpec:
    """One path class as the policy defines it."""

    name: str
    patterns: tuple[str, ...]
    exclude: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    run_by: tuple[str, ...] = ()  # programs that run the class's files by themselves


class PathClasses:
    """Which classes a path falls in. Answers are remembered (bounded) per path and use.

    `classify(path)` is about the path itself; `classify(path, recursive=True)` is about a
    tree rooted there (deleting `/usr` deletes system files).
    """

    def __init__(
        self,
        classes: Iterable[ClassSpec],
        workspace_roots: Iterable[str] = (),
    ) -> None:
        self.specs = tuple(classes)
        self.names = tuple(spec.name for spec in self.specs)
        patterns: list[str] = []
        owners: list[int] = []
        for index, spec in enumerate(self.specs):
            for pattern in spec.patterns:
                patterns.append(pattern)
                owners.append(index)
        self._filter = PatternFilter(patterns)
        self._owners = owners
        self._excludes = [
            re2.compile("|".join(f"(?:{p})" for p in spec.exclude)) if spec.exclude else None
            for spec in self.specs
        ]
        # Example members, with `~/x` also spelled for concrete homes, and all their ancestors.
        self._members: list[tuple[str, int]] = []
        for index, spec in enumerate(self.specs):
            for example in spec.examples:
                for spelled in _spellings(example):
                    self._members.append((spelled, index))
        # Each member with itself and its ancestors (what a glob may match), worked out once;
        # relative members apart, the only ones a relative glob can match.
        self._chains = [(m, i, tuple(_self_and_ancestors(m))) for m, i in self._members]
        self._relative = [chain for chain in self._chains if chain[0][:1] not in "/~"]
        self._roots = tuple(
            normalise(root).rstrip("/") for root in workspace_roots if root.startswith("/")
        )
        self._answers: dict[tuple[str, bool, str], frozenset[str]] = {}
        self._run_by = {spec.name: frozenset(spec.run_by) for spec in self.specs if spec.run_by}
        self.run_programs: frozenset[str] = frozenset().union(*self._run_by.values())

    def runners(self, path: str) -> frozenset[str]:
        """The programs that run the file at `path` by themselves (`run_by` of its classes)."""
        if not self._run_by:
            return frozenset()
        return frozenset().union(*(self._run_by.get(name, ()) for name in self.classify(path)))

    def classify(self, path: str, recursive: bool = False, workspace: str = "") -> frozenset[str]:
        """`workspace`: the call's working directory, when known (absolute)."""
        key = (path, recursive, workspace)
        found = self._answers.get(key)
        if found is None:
            found = self._classify(path, recursive, workspace)
            if len(self._answers) >= _MAX_REMEMBERED:
                self._answers.clear()
            self._answers[key] = found
        return found

    def _classify(self, path: str, recursive: bool, workspace: str = "") -> frozenset[str]:
        if not path:
            return frozenset()
        names: set[str] = set()
        if path.startswith("?") or "$" in path:
            names.add(UNRESOLVED_CLASS)
        if self._in_workspace(path, workspace):
            names.add(WORKSPACE)
        elif not path.startswith(("/", "~")):
            names.add(OUTSIDE_WORKSPACE)  # climbs out with ..
        for candidate in (path, *_landings(path, workspace)):
            if is_glob(candidate):
                names |= self._glob_classes(candidate, recursive)
            else:
                names |= self._direct(candidate)
                if recursive:
                    names |= self._below(candidate)
        return frozenset(names)

    def _in_workspace(self, path: str, workspace: str = "") -> bool:
        if path.startswith(("/", "~")):
            if (
                workspace
                and workspace != "/"
                and (path == workspace or path.startswith(workspace + "/"))
            ):
                return True
            return any(path == r or path.startswith(r + "/") for r in self._roots)
        return not (path == ".." or path.startswith("../"))

    def _direct(self, path: str) -> set[str]:
        names: set[str] = set()
        for pattern in self._filter.matching(path):
            index = self._owners[pattern]
            exclude = self._excludes[index]
            if exclude is None or exclude.search(path) is None:
                names.add(self.names[index])
        return names

    def _below(self, path: str) -> set[str]:
        """Classes with an example member inside the tree at `path`."""
        prefix = "/" if path == "/" else path.rstrip("/") + "/"
        return {self.names[i] for member, i in self._members if member.startswith(prefix)}

    def _glob_classes(self, path: str, recursive: bool) -> set[str]:
        """A glob counts as every class one of its possible matches falls in.

        The possible matches are the classes' example members and their directories: `/e*`
        matches `/etc` (system). With `recursive`, the whole tree under a match counts.
        """
        names = self._direct(path)
        while path.startswith("./"):  # `find . -name x` is `./**/x`; members are `x/...`
            path = path[2:]
        prefix = _literal_prefix(path)
        # a relative glob never matches an absolute or home path
        members = [c for c in self._chains if c[0].startswith(prefix)] if prefix else self._relative
        # A glob ending in literal text (`*.pyc`) matches only paths ending in it: members
        # none of whose ancestors end so need no regex (compiling one is the costly part).
        suffix = _literal_suffix(path)
        if suffix:
            members = [c for c in members if any(a.endswith(suffix) for a in c[2])]
        if not members:
            return names  # `*.pyc`, `build/*`: no class member to try (and no RE2 to compile)
        try:
            regex = re2.compile(_glob_regex(path), _QUIET)
        except re2.error:
            return names  # `[z-a]` matches nothing as a range; bash takes it literally
        for member, index, chain in members:
            for candidate in chain:
                if len(candidate) < len(prefix):
                    break
                if regex.fullmatch(candidate):
                    names |= self._direct(candidate)
                    if recursive or candidate == member:
                        names.add(self.names[index])
                    break
        return names


def _landings(path: str, workspace: str) -> tuple[str, ...]:
    """Where a path that climbs out of the working directory may land. With the directory
    known, the one place; without it, as far up as `/` or the home (`../../../etc/shadow`
    from a project is /etc/shadow; `../.ssh/id_rsa` from ~/project is ~/.ssh/id_rsa)."""
    if not path.startswith("../"):
        return ()
    if workspace.startswith("/"):
        return (posixpath.normpath(posixpath.join(workspace, path)),)
    tail = path
    while tail.startswith("../"):
        tail = tail[3:]
    if not tail or tail == "..":
        return ("/", HOME)
    return ("/" + tail, HOME + "/" + tail)


def glob_directory(path: str) -> str:
    """The directory a glob lies in: `/*` -> `/`, `/tmp/x*` -> `/tmp`, `*.o` -> `.`."""
    prefix = _literal_prefix(path)
    if not prefix:
        return "." if not path.startswith(("/", "~")) else path[:1]
    return prefix.rstrip("/") or "/"


def _literal_prefix(path: str) -> str:
    """The part of a glob before its first wildcard, up to a whole directory."""
    first = min((path.index(c) for c in GLOB_CHARACTERS if c in path), default=len(path))
    head = path[:first]
    return head.rpartition("/")[0] + "/" if "/" in head else ""


def _literal_suffix(path: str) -> str:
    """The literal text a glob ends with, after its last wildcard, brace or extglob
    (`*.pyc` -> `.pyc`; `*.{py,sh}` -> ``)."""
    last = max((path.rfind(c) for c in "*?[]{}()!+@\\"), default=-1)
    return path[last + 1 :]


def _glob_regex(glob: str) -> str:
    """Shell glob to RE2: `*` and `?` stay within one path segment; `[...]` is a set."""
    out: list[str] = []
    index = 0
    while index < len(glob):
        char = glob[index]
        # A wildcard that starts a segment does not match a leading dot (bash's default):
        # `rm -rf ./*` leaves .git alone.
        starts_segment = index == 0 or glob[index - 1] == "/"
        if glob.startswith("**/", index) and starts_segment:
            out.append("(?:[^/]+/)*")  # any depth (find -name below a root)
            index += 3
            continue
        if char == "*":
            out.append("(?:[^/.][^/]*)?" if starts_segment else "[^/]*")
        elif char == "?":
            out.append("[^/.]" if starts_segment else "[^/]")
        elif char == "[":
            end = glob.find("]", index + 2)
            if end == -1:
                out.append(re2.escape(char))
            else:
                body = glob[index + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                index = end
        else:
            out.append(re2.escape(char))
        index += 1
    return "".join(out)


def _self_and_ancestors(path: str) -> list[str]:
    found = [path]
    while "/" in path.strip("/"):
        path = path.rstrip("/").rpartition("/")[0]
        if path:
            found.append(path)
    if path.startswith("/"):
        found.append("/")
    return found


def _spellings(example: str) -> list[str]:
    """`~/x` is also `/home/someone/x` and `/root/x`: a glob on /home must find it."""
    normal = normalise(example)
    if normal == HOME or normal.startswith(HOME + "/"):
        rest = normal[1:]
        return [normal, "/home/user" + rest, "/root" + rest]
    return [normal]


def class_specs(definitions: Mapping[str, object]) -> list[ClassSpec]:
    """Build specs from the policy's `path_classes` (pydantic models with the same fields)."""
    specs: list[ClassSpec] = []
    for name, spec in definitions.items():
        specs.append(
            ClassSpec(
                name,
                tuple(getattr(spec, "patterns", ())),
                tuple(getattr(spec, "exclude", ())),
                tuple(getattr(spec, "examples", ())),
                tuple(getattr(spec, "run_by", ())),
            )
        )
    return specs

"""Package names one edit away from a popular one: typosquats.

An INSTALL effect of a program the policy ties to a registry (`packages.ecosystems`) names a
package. Its name is read out of the install spec (`lodash@4`, `requests[socks]>=2`,
`@types/node`, `serde@1`), normalised as the registry compares names (PyPI: case and `-_.`;
crates: `-`/`_`), and compared with the registry's popular names, which are data files in the
policy (`policies/packages/*.txt`, written by tools/popular_packages.py):

- a name among the `known` most popular (or in `allow`) never asks;
- a name one edit (insertion, deletion, substitution) or one transposition away from one of
  the `protect` most popular gets the flag `typosquat` and that name as its data, for the
  effect rule `effects.install-typosquat`.

Scoped npm names are compared whole (`@types/nodee` is one edit from `@types/node`;
`@evil/lodash` is no typo of anything). Names shorter than `typosquat_min_length` are not
judged: short names have too many legitimate neighbours.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from pathlib import Path

import re2

from sidecar.effects.model import Action, Effect
from sidecar.policy.schema import PackageEcosystem, PackagePolicy

TYPOSQUAT = "typosquat"
_VALID = re2.compile(r"^(@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*$")
_PYPI_END = re2.compile(r"[\[=<>!~;@ (,]")
_PYPI_SEPARATORS = re2.compile(r"[-_.]+")
_TRUSTED_SEPARATORS = re.compile(r"[-_.]+")  # over the policy's own lists only
_NOT_A_NAME = ("://", "git+", "git@", "file:", "github:", "gitlab:", "bitbucket:", "link:")
_ARCHIVES = (".tgz", ".tar.gz", ".whl", ".zip", ".gem", ".crate", ".tar.bz2")
_CACHE_ENTRIES = 8
_TYPOSQUAT_FLAG = frozenset({TYPOSQUAT})
_LOOK_ALIKE_FLAG = frozenset({"look_alike_name"})


def package_name(spec: str, normalise: str) -> str | None:
    """The registry name an install spec names, normalised; None for paths, URLs, archives."""
    text = spec.strip()
    if not text or text.startswith((".", "/", "~", "-", "$")) or text.endswith(_ARCHIVES):
        return None
    if any(marker in text for marker in _NOT_A_NAME):
        return None
    if normalise == "npm":
        if "@npm:" in text:
            text = text.split("@npm:", 1)[1]
        at = text.find("@", 1)
        if at > 0:
            text = text[:at]
        if "/" in text and not text.startswith("@"):
            return None  # user/repo: GitHub shorthand, not a registry name
        name = text.lower()
    elif normalise == "pypi":
        match = _PYPI_END.search(text)
        if match is not None:
            text = text[: match.start()]
        name = str(_PYPI_SEPARATORS.sub("-", text.lower()))
    else:  # cargo, gem
        text = text.split("@", 1)[0].split(":", 1)[0]
        name = text.lower().replace("_", "-")
    return name if _VALID.match(name) else None


def one_edit_apart(a: str, b: str) -> bool:
    """Optimal string alignment distance exactly 1 (a transposition counts as one)."""
    if a == b:
        return False
    la, lb = len(a), len(b)
    if la == lb:
        diffs = [i for i in range(la) if a[i] != b[i]]
        if len(diffs) == 1:
            return True
        return (
            len(diffs) == 2
            and diffs[1] == diffs[0] + 1
            and a[diffs[0]] == b[diffs[1]]
            and a[diffs[1]] == b[diffs[0]]
        )
    if abs(la - lb) != 1:
        return False
    short, long = (a, b) if la < lb else (b, a)
    i = 0
    while i < len(short) and short[i] == long[i]:
        i += 1
    return short[i:] == long[i + 1 :]


def _entry(name: str, normalise: str) -> str:
    name = name.lower()
    if normalise == "pypi":
        return _TRUSTED_SEPARATORS.sub("-", name)
    if normalise in ("cargo", "gem"):
        return name.replace("_", "-")
    return name


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


class Registry:
    """One registry's popular names, indexed for one-edit lookups."""

    def __init__(self, names: Sequence[str], spec: PackageEcosystem, min_length: int) -> None:
        self.normalise = spec.normalise
        # The lists are the policy's own data, already names: normalised the cheap way.
        used = names[: max(spec.known, spec.protect)]
        normalised = [_entry(name, spec.normalise) for name in used]
        allowed = (package_name(name, spec.normalise) for name in spec.allow)
        also = [n for n in (package_name(x, spec.normalise) for x in spec.protect_also) if n]
        self.known = set(normalised[: spec.known]) | {n for n in allowed if n} | set(also)
        self.min_length = min_length
        # Each protected name under itself and under each of its one-letter deletions: two
        # names one edit apart share a key (SymSpell's symmetric deletion).
        self._index: dict[str, list[str]] = {}
        for target in [*normalised[: spec.protect], *also]:
            for key in _deletions(target) | {target}:
                self._index.setdefault(key, []).append(target)

    def near(self, name: str) -> str | None:
        """The popular name `name` looks like a typo of, if any."""
        if name in self.known or len(name) < self.min_length:
            return None
        for key in _deletions(name) | {name}:
            for target in self._index.get(key, ()):
                if one_edit_apart(name, target):
                    return target
        return None


class PackageNames:
    """The policy's registries, built on first use (the files are read once per process)."""

    def __init__(self, policy: PackagePolicy, directories: Sequence[Path]) -> None:
        self._policy = policy
        self._directories = tuple(directories)
        self._by_program: dict[str, str] = {}
        for ecosystem, spec in policy.ecosystems.items():
            for program in spec.programs:
                self._by_program[program] = ecosystem
        self._registries: dict[str, Registry] = {}
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        return bool(self._by_program)

    def problems(self) -> list[str]:
        """Registries whose names file cannot be found or read."""
        found: list[str] = []
        for ecosystem, spec in self._policy.ecosystems.items():
            if self._path(spec.names) is None:
                where = ", ".join(str(d) for d in self._directories) or "(none)"
                found.append(
                    f"packages.ecosystems.{ecosystem}.names: {spec.names} is in no policy "
                    f"directory ({where})"
                )
        return found

    def mark(self, effects: Iterable[Effect]) -> tuple[Effect, ...]:
        """The effects, with installs of look-alike names flagged."""
        out: list[Effect] = []
        for effect in effects:
            if effect.action is Action.INSTALL and effect.program:
                ecosystem = self._by_program.get(effect.program.split(" ", 1)[0])
                if ecosystem is not None:
                    effect = self._checked(ecosystem, effect)
            out.append(effect)
        return tuple(out)

    def _checked(self, ecosystem: str, effect: Effect) -> Effect:
        registry = self.registry(ecosystem)
        if registry is None:
            return effect
        if not effect.target.isascii() and not effect.target.startswith((".", "/", "~")):
            # Registries take ASCII names: `r\u0435act-router` (a Cyrillic e) imitates one.
            return effect._replace(flags=effect.flags | _LOOK_ALIKE_FLAG)
        name = package_name(effect.target, registry.normalise)
        if name is None:
            return effect
        target = registry.near(name)
        if target is None:
            return effect
        return effect._replace(flags=effect.flags | _TYPOSQUAT_FLAG, data=(target,))

    def registry(self, ecosystem: str) -> Registry | None:
        found = self._registries.get(ecosystem)
        if found is not None:
            return found
        spec = self._policy.ecosystems[ecosystem]
        path = self._path(spec.names)
        if path is None:
            return None
        built = _registry(path, spec, self._policy.typosquat_min_length)
        with self._lock:
            self._registries[ecosystem] = built
        return built

    def _path(self, name: str) -> Path | None:
        for directory in reversed(self._directories):  # an operator's directory wins
            candidate = directory / name
            if candidate.is_file():
                return candidate
        return None


# Built registries by file and settings: a policy reload (or a test compiling the bundled
# policy again) does not read and index 40,000 names again. A pure function's cache.
_BUILT: OrderedDict[tuple[object, ...], Registry] = OrderedDict()
_BUILT_LOCK = threading.Lock()


def _registry(path: Path, spec: PackageEcosystem, min_length: int) -> Registry:
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size, spec, min_length)
    with _BUILT_LOCK:
        found = _BUILT.get(key)
        if found is not None:
            _BUILT.move_to_end(key)
            return found
    names = [
        line.strip()
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    built = Registry(names, spec, min_length)
    with _BUILT_LOCK:
        _BUILT[key] = built
        while len(_BUILT) > _CACHE_ENTRIES:
            _BUILT.popitem(last=False)
    return built


def names_in(path: Path) -> list[str]:
    """A names file's entries in order (for the evaluation)."""
    return [
        line.strip()
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]

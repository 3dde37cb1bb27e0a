"""Load policy files from directories, merge them, and report errors by file and line."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from sidecar.policy.schema import Policy

# Lists under these keys accumulate across files; every other value is replaced.
ACCUMULATING_KEYS = frozenset(
    {
        "rules",
        "tools",
        "read_only_tools",
        "shell_tools",
        "allowed_domains",
        "denied_domains",
        "extra_wrappers",
        "sensitive_paths",
        "url_tools",
        "outbound_tools",
        "read_tools",
        "commands",
        "read_only_commands",
        "workspace_roots",
    }
)


@dataclass(frozen=True, slots=True)
class PolicyProblem:
    file: str
    line: int | None
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class PolicyError(Exception):
    """A policy that must not be served; carries every problem found."""

    def __init__(self, problems: Sequence[PolicyProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


@dataclass(frozen=True, slots=True)
class LoadedPolicy:
    policy: Policy
    revision: str
    sources: tuple[str, ...]
    texts: tuple[str, ...]


def bundled_policy_dir() -> Path:
    """The default policy shipped inside the package."""
    return Path(str(resources.files("sidecar") / "bundled_policies"))


def policy_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        raise PolicyError([PolicyProblem(str(directory), None, "", "not a directory")])
    return sorted(p for p in directory.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


def load_policy(directories: Iterable[Path]) -> LoadedPolicy:
    """Read every *.yaml in each directory in order; later files override earlier ones."""
    documents: list[tuple[str, str]] = []
    for directory in directories:
        for path in policy_files(directory):
            try:
                documents.append((str(path), path.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError) as error:
                raise PolicyError([PolicyProblem(str(path), None, "", str(error))]) from None
    return load_documents(documents)


def load_documents(documents: Sequence[tuple[str, str]]) -> LoadedPolicy:
    problems: list[PolicyProblem] = []
    merged: dict[str, Any] = {}
    for name, text in documents:
        data = _parse(name, text, problems)
        if data is None:
            continue
        try:
            Policy.model_validate(data)  # each file alone, so errors point at its lines
        except ValidationError as error:
            problems.extend(problems_from(name, text, error))
            continue
        merged = _merge(merged, data)
    if problems:
        raise PolicyError(problems)
    try:
        policy = Policy.model_validate(merged)
    except ValidationError as error:
        raise PolicyError(problems_from("(merged policy)", None, error)) from None
    digest = hashlib.sha256()
    for name, text in documents:
        digest.update(Path(name).name.encode() + b"\0" + text.encode() + b"\0")
    return LoadedPolicy(
        policy,
        digest.hexdigest()[:12],
        tuple(n for n, _ in documents),
        tuple(t for _, t in documents),
    )


def _parse(name: str, text: str, problems: list[PolicyProblem]) -> dict[str, Any] | None:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problems.append(PolicyProblem(name, line, "", f"not valid YAML: {error}"))
        return None
    if data is None:
        return {}
    if not isinstance(data, dict):
        problems.append(PolicyProblem(name, 1, "", "a policy file must be a mapping"))
        return None
    return data


def _merge(base: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in overlay.items():
        current = merged.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            merged[key] = _merge(current, value)
        elif key in ACCUMULATING_KEYS and isinstance(current, list) and isinstance(value, list):
            merged[key] = current + value
        else:
            merged[key] = value
    return merged


def problems_from(name: str, text: str | None, error: ValidationError) -> list[PolicyProblem]:
    root = yaml.compose(text) if text else None
    found = []
    for item in error.errors():
        location = tuple(item["loc"])
        found.append(
            PolicyProblem(
                name,
                _line_of(root, location),
                ".".join(str(part) for part in location),
                item["msg"],
            )
        )
    return found


def _line_of(node: yaml.Node | None, location: tuple[Any, ...]) -> int | None:
    """The line of the deepest YAML node along a pydantic error location."""
    if node is None:
        return None
    line: int = node.start_mark.line + 1
    for part in location:
        child: yaml.Node | None = None
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key.value == str(part):
                    child = value
                    line = key.start_mark.line + 1
                    break
        elif (
            isinstance(node, yaml.SequenceNode)
            and isinstance(part, int)
            and 0 <= part < len(node.value)
        ):
            child = node.value[part]
        if child is None:
            break
        node = child
        line = node.start_mark.line + 1
    return line

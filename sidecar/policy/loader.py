"""Load policy files from directories, merge them, and report errors by file and line."""

from __future__ import annotations

import hashlib
import types
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from sidecar.policy.schema import Policy
from sidecar.policy.yaml_text import parse_yaml
from sidecar.suggestions import did_you_mean

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
        "effect_rules",
        "tool_adapters",  # a later file adds adapters; the last one for a name wins
        "combinations",
        # injection.lexicon (41-injection-lexicon.yaml): an operator's file adds words
        "role_words",
        "greeting_words",
        "override_verbs",
        "instruction_words",
        "earlier_words",
        "send_verbs",
        "secret_words",
        "take_verbs",
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
            # Each file alone, so errors point at its lines; it may use the text patterns
            # earlier files named.
            Policy.model_validate(data, context={"text_patterns": merged.get("text_patterns")})
        except ValidationError as error:
            problems.extend(problems_from(name, text, error, Policy))
            continue
        merged = _merge(merged, data)
    if problems:
        raise PolicyError(problems)
    try:
        policy = Policy.model_validate(merged)
    except ValidationError as error:
        raise PolicyError(problems_from("(merged policy)", None, error, Policy)) from None
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
        data = parse_yaml(text, unique_keys=True)
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


def problems_from(
    name: str, text: str | None, error: ValidationError, model: type[BaseModel] | None = None
) -> list[PolicyProblem]:
    """One problem per validation error, with its line; an unknown key under `model`
    also names the nearest known key ("did you mean mode?")."""
    root = yaml.compose(text) if text else None
    found = []
    for item in error.errors():
        location = tuple(item["loc"])
        message = item["msg"]
        if item["type"] == "extra_forbidden" and model is not None and location:
            message += _suggestion(model, location)
        found.append(
            PolicyProblem(
                name,
                _line_of(root, location),
                ".".join(str(part) for part in location),
                message,
            )
        )
    return found


def _suggestion(model: type[BaseModel], location: tuple[Any, ...]) -> str:
    key, parent = str(location[-1]), location[:-1]
    siblings = known_keys(model, parent)
    # A key written one level too high (`mode:` for `permission.mode:`) is named in full.
    nested = [s for s in siblings if key in known_keys(model, (*parent, s))]
    if len(nested) == 1:
        return f" (did you mean {nested[0]}.{key}?)"
    return did_you_mean(key, siblings)


def known_keys(model: type[BaseModel], location: Sequence[Any]) -> list[str]:
    """The field names allowed at `location` inside `model` ([] when it cannot be told)."""
    current: Any = model
    for part in location:
        current = _field_type(current, part)
        if current is None:
            return []
    models = _models_in(current)
    return sorted({name for m in models for name in m.model_fields})


def _field_type(annotation: Any, part: Any) -> Any:
    """The type one step along a validation-error location, or None."""
    for candidate in _unwrap(annotation):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            field = candidate.model_fields.get(str(part))
            if field is not None:
                return field.annotation
            continue
        origin, args = typing.get_origin(candidate), typing.get_args(candidate)
        if origin in (tuple, list, set, frozenset) and isinstance(part, int) and args:
            return args[0]
        if origin is dict and len(args) == 2 and isinstance(part, str):
            return args[1]
    return None


def _unwrap(annotation: Any) -> list[Any]:
    """The alternatives of a union (X | None), or the annotation itself."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    return [annotation]


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    return [a for a in _unwrap(annotation) if isinstance(a, type) and issubclass(a, BaseModel)]


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

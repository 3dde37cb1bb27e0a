"""Safe YAML parsing through libyaml when PyYAML was built with it.

The pure-Python loader took most of a policy compile (about 6 s of 10 on a slow machine for
the bundled policy); libyaml's safe loader builds the same plain data, errors carry the same
marks, and it does not construct arbitrary objects either.

Policy and configuration files are parsed with unique keys: YAML lets a later key silently
replace an earlier one, so a rule pasted over half of another (two `id:` keys in one item)
loaded as one rule with the other's conditions."""

from __future__ import annotations

from typing import Any

import yaml

_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _UniqueKeyLoader(_SafeLoader):  # type: ignore[misc]
    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.value == "<<":
                    continue
                if key_node.value in seen:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"found duplicate key {key_node.value!r}",
                        key_node.start_mark,
                    )
                seen.add(key_node.value)
        return super().construct_mapping(node, deep)


def parse_yaml(text: str, unique_keys: bool = False) -> Any:
    """Like `yaml.safe_load`, faster; raises `yaml.YAMLError` the same way. With
    `unique_keys`, a key given twice in one mapping is an error at its line."""
    loader = _UniqueKeyLoader if unique_keys else _SafeLoader
    return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader

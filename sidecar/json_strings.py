"""The strings inside parsed JSON: tool arguments and tool definitions are read as text.

Depth is capped: input from clients is refused past MAX_JSON_DEPTH before it is parsed, and
the cap keeps a direct caller's deeper value from recursing without end.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from sidecar.json_depth import MAX_JSON_DEPTH


def json_strings(value: Any, keys: bool = False, depth: int = 0) -> Iterator[str]:
    """Every string in `value`, depth first; with `keys`, object keys too."""
    if depth > MAX_JSON_DEPTH:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if keys:
                yield str(key)
            yield from json_strings(item, keys, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from json_strings(item, keys, depth + 1)

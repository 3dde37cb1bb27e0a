"""A tool that is a CLI in disguise (an MCP server's `resources_delete{kind, name,
namespace}`) is judged as the command line it amounts to. The policy's adapter gives the
line as a template over the tool's arguments (sidecar.policy.schema.ToolAdapter.template).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import Any

import re2

# {key} or {key|other_key}: servers spell one argument differently (`username`, `user`).
_PLACEHOLDER = re2.compile(r"\{(\??[A-Za-z0-9_.|-]+)(:raw)?\}")
_GROUP = re2.compile(r"\[([^\[\]]*)\]")


def render_template(template: str, arguments: Mapping[str, Any]) -> str | None:
    """The command line, or None when a required argument is missing."""
    lowered = {str(k).lower(): v for k, v in arguments.items()}

    def value(keys: str, raw: bool) -> str | None:
        if keys.startswith("?"):  # {?force}: nothing when the argument is true, else left out
            flag = arguments.get(keys[1:], lowered.get(keys[1:].lower()))
            return "" if flag not in (None, False, 0, "", "false", "no", "False") else None
        found = next(
            (
                v
                for key in keys.split("|")
                if (v := arguments.get(key, lowered.get(key.lower()))) not in (None, "", [], {})
            ),
            None,
        )
        if found is None or found == "" or found == [] or found == {}:
            return None
        if isinstance(found, list) and all(isinstance(v, (str, int, float)) for v in found):
            return " ".join(str(v) if raw else shlex.quote(str(v)) for v in found)
        text = found if isinstance(found, str) else json.dumps(found)
        return text if raw else shlex.quote(text)

    def fill(text: str) -> str | None:
        pieces: list[str] = []
        position = 0
        for match in _PLACEHOLDER.finditer(text):
            filled = value(match.group(1), bool(match.group(2)))
            if filled is None:
                return None
            pieces.append(text[position : match.start()])
            pieces.append(filled)
            position = match.end()
        pieces.append(text[position:])
        return "".join(pieces)

    # Each bracketed group is filled whole or left out; the text between groups must fill.
    out: list[str] = []
    position = 0
    for group in [*_GROUP.finditer(template), None]:
        plain = fill(template[position : group.start() if group else len(template)])
        if plain is None:
            return None
        out.append(plain)
        if group is not None:
            out.append(fill(group.group(1)) or "")
            position = group.end()
    return "".join(out).strip()

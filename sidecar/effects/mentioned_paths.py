"""Paths a line names but reads through something the analysis cannot follow.

`read -r x <<< /etc/shadow; cat "$x"`, `arr=(~/.aws/credentials); cat "${arr[0]}"`,
`printf -v f %s /etc/shadow; cat "$f"`, `x=$(echo L2V0Yy9zaGFkb3c= | base64 -d); cat "$x"`:
the read's target is known only at run time, but the line itself spells (or encodes) the
path. When a line reads something unresolved, each path it mentions is taken as a possible
read, so the rules judge it like a read of that path ("cannot tell" is not "harmless").
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence

import re2

from sidecar.effects.model import UNRESOLVED, Action, Effect
from sidecar.effects.paths import normalise

_PATH = re2.compile(r"(?:^|[\s'\"=(:,\[{<>])((?:~|\$HOME|\$\{HOME\})?/[A-Za-z0-9._~/+@%-]+)")
_BASE64 = re2.compile(r"(?:^|[^A-Za-z0-9+/])([A-Za-z0-9+/]{8,}={0,2})")
_MAX_TEXT = 64 * 1024
_MAX_PATHS = 16
MENTIONED = "mentioned"


def possible_reads(line: str, effects: Sequence[Effect]) -> list[Effect]:
    """Reads of the paths `line` mentions, if one of `effects` reads an unresolved path."""
    unresolved = next(
        (e for e in effects if e.action is Action.READ and e.target == UNRESOLVED), None
    )
    if unresolved is None or not line:
        return []
    text = line[:_MAX_TEXT]
    found: dict[str, None] = {}
    for match in _PATH.finditer(text):
        found[_home(match.group(1))] = None
    for match in _BASE64.finditer(text):
        decoded = _decoded(match.group(1))
        if decoded is not None:
            for inner in _PATH.finditer(" " + decoded):
                found[_home(inner.group(1))] = None
    known = {e.target for e in effects if e.action is Action.READ}
    return [
        Effect(
            Action.READ,
            path,
            flags=frozenset({MENTIONED}),
            program=unresolved.program,
        )
        for path in list(found)[:_MAX_PATHS]
        if path not in known and path not in ("/", "~")
    ]


def _home(path: str) -> str:
    for prefix in ("${HOME}", "$HOME"):
        if path.startswith(prefix):
            path = "~" + path[len(prefix) :]
    return normalise(path)


def _decoded(token: str) -> str | None:
    padded = token + "=" * (-len(token) % 4)
    try:
        raw = base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        return None
    return text if text.isprintable() and ("/" in text) else None

"""A move that only renames a file in its own directory.

`mv src/helpers.py src/strings.py` keeps the content where it was; judging it as a delete
of the source asks on everyday refactoring. A hidden file (`~/.bashrc`) is left a move:
renaming it away switches off whatever reads it.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from sidecar.effects.model import Action, Effect

RENAME = "rename"
# `mv ~/Downloads/openapi.yaml ./api/`: a file brought into the project is kept, not lost.
INTO_WORKSPACE = "into_workspace"


def mark_renames(effects: Sequence[Effect]) -> list[Effect]:
    """Flag the one MOVE of a call as a rename when its one destination sits beside it, or
    as brought into the workspace when that destination is relative (the call's own place)."""
    moves = [e for e in effects if e.action is Action.MOVE]
    writes = [e for e in effects if e.action is Action.WRITE]
    if len(moves) != 1 or len(writes) != 1:
        return list(effects)
    source, destination = moves[0].target, writes[0].target
    if _renames(source, destination):
        flag = RENAME
    elif _brought_in(source, destination):
        flag = INTO_WORKSPACE
    else:
        return list(effects)
    return [e._replace(flags=e.flags | {flag}) if e is moves[0] else e for e in effects]


def _brought_in(source: str, destination: str) -> bool:
    """One named file (`name.ext`: a folder moved whole stays a move), not hidden and not
    under a hidden folder, moved to a relative place."""
    if not source or not destination or any(c in source + destination for c in "*?[$`"):
        return False
    parts = [part for part in source.split("/") if part not in ("", "~")]
    if not parts or any(part.startswith(".") for part in parts) or "." not in parts[-1]:
        return False
    return not destination.startswith(("/", "~", ".."))


def _renames(source: str, destination: str) -> bool:
    if not source or not destination or source == destination:
        return False
    if any(c in source + destination for c in "*?[$`"):
        return False
    head, name = posixpath.split(source)
    other_head, other_name = posixpath.split(destination)
    return (
        head == other_head
        and bool(head)
        and not name.startswith(".")
        and not (other_name.startswith("."))
    )

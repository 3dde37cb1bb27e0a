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


def mark_renames(effects: Sequence[Effect]) -> list[Effect]:
    """Flag the one MOVE of a call as a rename when its one destination sits beside it."""
    moves = [e for e in effects if e.action is Action.MOVE]
    writes = [e for e in effects if e.action is Action.WRITE]
    if len(moves) != 1 or len(writes) != 1:
        return list(effects)
    source, destination = moves[0].target, writes[0].target
    if not _renames(source, destination):
        return list(effects)
    return [e._replace(flags=e.flags | {RENAME}) if e is moves[0] else e for e in effects]


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

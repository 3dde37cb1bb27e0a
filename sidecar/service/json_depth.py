"""JSON from clients is refused by its depth before it is parsed (see sidecar.json_depth)."""

from __future__ import annotations

from sidecar.json_depth import MAX_JSON_DEPTH, deeper_than
from sidecar.service.errors import InvalidArgument

__all__ = ["MAX_JSON_DEPTH", "check_json_depth"]


def check_json_depth(field: str, text: str, limit: int = MAX_JSON_DEPTH) -> None:
    if deeper_than(text, limit):
        raise InvalidArgument(field, f"JSON nested more than {limit} levels deep")

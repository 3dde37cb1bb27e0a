"""Decision ids: unique within a process and across processes, 32 hex characters."""

from __future__ import annotations

import re

from sidecar.inspection.model import ToolCall
from tests.conftest import engine_for_mode


async def test_decision_ids_are_unique_within_and_across_engines() -> None:
    first, second = engine_for_mode(None), engine_for_mode(None)
    call = [ToolCall("1", "shell", {"command": "ls"})]
    ids = [(await engine.inspect("s", call)).decision_id for engine in (first, second, first)]
    assert len(set(ids)) == 3
    assert all(re.fullmatch(r"[0-9a-f]{32}", i) for i in ids)
    assert ids[0][:16] != ids[1][:16]  # a fresh random prefix per engine (per process)

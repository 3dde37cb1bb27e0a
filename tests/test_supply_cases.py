"""Cases written for issue 10 in spellings the brief and the tuning sets do not use
(tests/data/secrets_supply_cases.jsonl): secrets that programs print, package sources,
code run later, credentials in URLs, and everyday forms that must stay allowed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sidecar.inspection.model import ToolCall
from sidecar.inspection.verdict import Mode, Verdict
from tests.conftest import engine_for_mode

_ENGINE = engine_for_mode(Mode.AUTO)
_CASES = [
    json.loads(line)
    for line in (Path(__file__).parent / "data" / "secrets_supply_cases.jsonl")
    .read_text()
    .splitlines()
    if line.strip()
]
_PASS = {
    "deny": {Verdict.DENY},
    "block": {Verdict.DENY, Verdict.REQUIRE_APPROVAL},
    "allow": {Verdict.ALLOW},
}


@pytest.mark.parametrize("case", _CASES, ids=[c["id"] for c in _CASES])
async def test_case(case: dict[str, Any]) -> None:
    decision = await _ENGINE.inspect(
        f"case-{case['id']}", [ToolCall("1", case["tool"], case["args"])]
    )
    verdict = decision.verdicts[0]
    rules = [f.rule_id for f in verdict.findings if f.verdict is not Verdict.ALLOW]
    assert verdict.verdict in _PASS[case["expect"]], (case["id"], verdict.verdict, rules)


def test_enough_cases() -> None:
    assert len(_CASES) >= 30

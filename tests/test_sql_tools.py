"""Database tools (MCP postgres/sqlite/mysql servers, `execute_sql`) are database clients:
the statement they carry is judged like one given to `psql -c`."""

from __future__ import annotations

from typing import Any

import pytest

from sidecar.inspection.model import ToolCall
from sidecar.inspection.verdict import Mode, Verdict
from tests.conftest import engine_for_mode


async def verdict_of(tool: str, args: dict[str, Any]) -> Verdict:
    engine = engine_for_mode(Mode.AUTO)
    result = await engine.inspect("s", [ToolCall("1", tool, args)])
    return result.verdicts[0].verdict


@pytest.mark.parametrize(
    ("tool", "args"),
    [("mcp__postgres__query", {"sql": "TRUNCATE TABLE customers CASCADE;"}),
     ("execute_sql", {"query": "DELETE FROM orders"}),
     ("mcp__db__run_query", {"query": "drop table users"}),
     ("query", {"statement": ["SELECT 1", "DROP SCHEMA public CASCADE"]}),
     ("mcp__supabase__execute_sql", {"project_id": "x", "query": "alter table t drop column c"}),
     ("mcp__sqlite__write_query", {"query": "DELETE FROM sessions;"})],
)  # fmt: skip
async def test_a_statement_that_destroys_data_is_not_allowed(
    tool: str, args: dict[str, Any]
) -> None:
    assert await verdict_of(tool, args) is not Verdict.ALLOW


@pytest.mark.parametrize(
    ("tool", "args"),
    [("mcp__postgres__query", {"sql": "SELECT count(*) FROM customers"}),
     ("execute_sql", {"query": "DELETE FROM orders WHERE id = 3"}),
     ("mcp__sqlite__write_query", {"query": "INSERT INTO t VALUES (1)"})],
)  # fmt: skip
async def test_everyday_statements_are_allowed(tool: str, args: dict[str, Any]) -> None:
    assert await verdict_of(tool, args) is Verdict.ALLOW


async def test_a_query_that_is_not_text_cannot_be_told() -> None:
    assert await verdict_of("execute_sql", {"query": {"nested": 1}}) is not Verdict.ALLOW

"""Hostile inputs finish with a verdict and bounded memory (no timing asserted here;
bench/ measures speed)."""

from __future__ import annotations

import tracemalloc

import pytest

from sidecar.inspection.model import ToolCall
from sidecar.inspection.verdict import Mode, Verdict
from tests.conftest import engine_for_mode

ENGINE = engine_for_mode(Mode.AUTO)

CASES = {
    "1 MB argument": "echo " + "A" * 1_000_000,
    "1 MB of nested quotes": "echo " + "\"'" * 500_000,
    "10,000-stage pipeline": " | ".join(["cat"] * 10_000),
    "5,000 nested subshells": "( " * 5_000 + "ls" + " )" * 5_000,
    "2,000 nested substitutions": "echo " + "$(echo " * 2_000 + "x" + ")" * 2_000,
    "regex-hostile text": "rm " + "a" * 50_000 + "!" + " -" + "r" * 50_000,
    "many short commands": "; ".join(f"echo {i}" for i in range(20_000)),
    "secret-like noise": "echo " + "ghp_" * 100_000,
    "unterminated everything": "echo \"$( `(( [[ { '" * 10_000,
    # && chains nest 10,000 deep in the tree: asking tree-sitter for parents was quadratic.
    "10,000 chained commands": " && ".join(["ls -la"] * 10_000),
    "5,000 chained assignments": " && ".join(["A=1"] * 5_000),
    "3,000 os.system calls": "python3 -c '" + 'os.system("ls"); ' * 3_000 + "'",
    "2,000 git command settings": "git " + " ".join(f"-c a.b{i}.cmd=ls" for i in range(2_000)),
    # Each alias use re-reads the alias; each -exec gets every starting point: both capped.
    "a long alias used 5,000 times": "alias a='" + "ls " * 5_000 + "'; " + ";".join(["a"] * 5_000),
    "5,000 find roots times 5,000 -exec": "find " + "a " * 5_000 + "-exec echo {} \\; " * 5_000,
}


@pytest.mark.parametrize("command", CASES.values(), ids=CASES.keys())
async def test_hostile_input_gets_a_verdict_in_bounded_memory(command: str) -> None:
    tracemalloc.start()
    try:
        decision = await ENGINE.inspect("hostile", [ToolCall("1", "shell", {"command": command})])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert decision.verdicts[0].verdict in set(Verdict)
    # Linear memory: a small multiple of the input, never quadratic.
    assert peak < 200 * len(command) + 50_000_000, peak


async def test_a_command_line_over_the_limit_asks_and_is_not_parsed() -> None:
    command = "echo " + "x" * 1_000_000 + " && ls"
    decision = await ENGINE.inspect("big", [ToolCall("1", "shell", {"command": command})])
    verdict = decision.verdicts[0]
    assert verdict.verdict is Verdict.REQUIRE_APPROVAL
    assert "too large to analyse" in verdict.reason


async def test_a_dangerous_command_deep_in_a_long_line_is_found() -> None:
    command = "echo " + "x" * 120_000 + " && rm -rf /"
    decision = await ENGINE.inspect("long", [ToolCall("1", "shell", {"command": command})])
    assert decision.verdicts[0].verdict is Verdict.DENY


async def test_unparseable_input_asks_rather_than_allows() -> None:
    decision = await ENGINE.inspect(
        "bad", [ToolCall("1", "shell", {"command": CASES["unterminated everything"]})]
    )
    assert decision.verdicts[0].verdict is not Verdict.ALLOW


@pytest.mark.parametrize(
    "arguments", [{}, {"command": 42}, {"command": {"x": "rm -rf /"}}, {"cmd": "rm -rf /"}]
)
async def test_a_shell_call_without_a_text_command_asks(arguments: dict[str, object]) -> None:
    decision = await ENGINE.inspect("nt", [ToolCall("1", "shell", arguments)])
    assert decision.verdicts[0].verdict is Verdict.REQUIRE_APPROVAL
    assert "missing or not text" in decision.verdicts[0].reason


async def test_expansions_past_their_caps_ask_instead_of_growing() -> None:
    alias = "alias a='" + "ls " * 5_000 + "'; " + ";".join(["a"] * 5_000)
    roots = "find " + "a " * 100 + "-exec rm -rf {} +"
    for command in (alias, roots):
        verdict = await ENGINE.inspect("caps", [ToolCall("1", "shell", {"command": command})])
        assert verdict.verdicts[0].verdict is not Verdict.ALLOW, command[:40]

"""The command line: inspect without a server, check policies, and clear input errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def sidecar(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sidecar", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_inspect_reads_json_lines_and_prints_verdicts() -> None:
    calls = "\n".join(
        json.dumps(c)
        for c in [
            {"tool": "shell", "args": {"command": "rm -rf /"}},
            {"id": "r", "name": "read_file", "arguments": {"path": "README.md"}},
            {"tool": "shell", "args": {"command": "make"}},
        ]
    )
    result = sidecar("inspect", stdin=calls)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["verdict"] for line in lines] == ["deny", "allow", "require_approval"]
    assert lines[0]["rules"][0] == "destructive.rm-root"
    assert lines[1]["id"] == "r"


def test_inspect_takes_a_file_a_list_and_a_mode(tmp_path: Path) -> None:
    path = tmp_path / "calls.json"
    path.write_text(json.dumps([{"name": "shell", "arguments": '{"command": "make"}'}]))
    result = sidecar("inspect", str(path), "--mode", "auto")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["verdict"] == "allow"


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ('{"tool": "shell"}\n{not json', "<stdin>:2: not valid JSON"),
        ('{"args": {}}', "<stdin>:1: missing tool name"),
        ('{"tool": "t", "args": [1]}', "<stdin>:1: arguments must be a JSON object"),
        ("", "<stdin>: no tool calls found"),
        ("[1, 2]", "<stdin>:1: a tool call must be a JSON object"),
    ],
)
def test_inspect_input_errors_name_the_line(stdin: str, message: str) -> None:
    result = sidecar("inspect", stdin=stdin)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_check_accepts_the_bundled_policy_and_rejects_a_bad_one(tmp_path: Path) -> None:
    ok = sidecar("check")
    assert ok.returncode == 0 and ok.stdout.startswith("ok: ")
    (tmp_path / "bad.yaml").write_text("permission:\n  mode: sometimes\n")
    bad = sidecar("check", str(tmp_path))
    assert bad.returncode == 2
    assert f"{tmp_path / 'bad.yaml'}:2: permission.mode:" in bad.stderr


@pytest.mark.parametrize("command", [[], ["serve"], ["inspect"], ["check"]])
def test_help_everywhere(command: list[str]) -> None:
    result = sidecar(*command, "--help")
    assert result.returncode == 0
    assert "usage: sidecar" in result.stdout


def test_policy_test_suites_report_each_case(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "mine.yaml").write_text(
        "mode: auto\n"
        "cases:\n"
        "  - name: ls runs\n"
        "    call: {tool: shell, args: {command: ls}}\n"
        "    expect: allow\n"
        "  - name: wrong on purpose\n"
        "    call: {tool: shell, args: {command: 'rm -rf /'}}\n"
        "    expect: allow\n"
        "  - name: wrong rule on purpose\n"
        "    call: {tool: shell, args: {command: 'rm -rf /'}}\n"
        "    expect: deny\n"
        "    rules: [no.such.rule]\n"
    )
    result = sidecar("test", str(tmp_path))
    assert result.returncode == 1
    assert "FAIL" in result.stdout and "wrong on purpose: got deny" in result.stdout
    assert "missing rules no.such.rule" in result.stdout
    assert result.stdout.strip().endswith("16 passed, 2 failed")  # 15 bundled + 1 of ours


def test_an_invalid_suite_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    path = tmp_path / "tests" / "bad.yaml"
    path.write_text("cases:\n  - name: x\n    call: {tool: shell}\n    expect: maybe\n")
    result = sidecar("test", str(tmp_path))
    assert result.returncode == 2
    assert f"{path}:4: cases.0.expect:" in result.stderr

"""The command line: inspect without a server, check policies, and clear input errors."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from sidecar.policy.loader import bundled_policy_dir


def sidecar(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sidecar", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def on_a_terminal(*args: str) -> tuple[int, str]:
    """Run with stdin and stdout on a pseudo-terminal, as a person at a shell would."""
    main, secondary = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "sidecar", *args],
            stdin=secondary,
            stdout=secondary,
            stderr=secondary,
            env={**os.environ, "NO_COLOR": "1"},
        )
        os.close(secondary)
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the other end closed: the process is done writing
                break
            if not chunk:
                break
            chunks.append(chunk)
        code = process.wait(timeout=60)
    finally:
        os.close(main)
    return code, b"".join(chunks).decode().replace("\r\n", "\n")


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
    assert result.returncode == 4, result.stderr  # the strictest verdict: a call was denied
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


@pytest.mark.parametrize(
    ("args", "code", "verdict"),
    [
        (["--mode", "auto", "-c", "rm -rf /"], 4, "deny"),
        (["--mode", "auto", "--command", "ls -la"], 0, "allow"),
        (["-c", "make"], 3, "require_approval"),  # smart_approve: make is not read-only
        (["--mode", "auto", "--tool", "read_file", "--args", '{"path": "README.md"}'], 0, "allow"),
        (["--tool", "write_file", "--args", '{"path": "/opt/app/x.yml", "content": "x"}'], 3, None),
        # Overwriting /etc/passwd is denied by the effect rules (issue 10), no longer asked.
        (["--tool", "write_file", "--args", '{"path": "/etc/passwd", "content": "x"}'], 4, "deny"),
    ],
)
def test_inspect_one_call_exits_with_its_verdict(args: list[str], code: int, verdict) -> None:
    result = sidecar("inspect", *args)
    assert result.returncode == code, result.stdout + result.stderr
    record = json.loads(result.stdout)  # not a terminal: one JSON line
    assert record["verdict"] == (verdict or record["verdict"])
    assert {"id", "tool", "verdict", "reason", "approval_prompt", "findings", "rules"} <= set(
        record
    )


def test_inspect_a_command_reports_findings_in_json() -> None:
    result = sidecar("inspect", "--mode", "auto", "-c", "rm -rf /", "--json")
    record = json.loads(result.stdout)
    assert record["tool"] == "shell" and record["mode"] == "auto"
    finding = next(f for f in record["findings"] if f["rule_id"] == "destructive.rm-root")
    assert finding == {
        "inspector": "security",
        "rule_id": "destructive.rm-root",
        "verdict": "deny",
        "risk": "critical",
        "confidence": finding["confidence"],
        "message": record["reason"],
    }


def test_on_a_terminal_the_verdict_is_readable() -> None:
    code, out = on_a_terminal("inspect", "-c", "rm -rf /")
    assert code == 4
    lines = out.splitlines()
    assert lines[0] == "DENY  shell: rm -rf /"
    assert lines[1].startswith("  reason: Recursive deletion")
    assert "  findings:" in lines
    assert any("security/destructive.rm-root (risk critical)" in line for line in lines)
    assert "{" not in out  # no JSON for a person

    code, out = on_a_terminal("inspect", "--command", "make")
    assert code == 3
    assert out.startswith("REQUIRE APPROVAL  shell: make\n")
    assert "  approval prompt: Allow the agent to run shell?" in out

    code, out = on_a_terminal("inspect", "-c", "make", "--json")
    assert code == 3
    assert json.loads(out)["verdict"] == "require_approval"


def test_on_a_terminal_with_nothing_to_inspect_it_says_what_to_give() -> None:
    code, out = on_a_terminal("inspect")
    assert code == 2
    assert out.strip().startswith("sidecar: nothing to inspect: give -c CMD")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["rm -rf /"],
            "sidecar: rm -rf /: no such file; to judge a shell command: sidecar inspect -c 'rm -rf /'",
        ),
        (["missing.json"], "sidecar: missing.json: no such file"),
        (["/"], "sidecar: /: is a directory, not a file of JSON calls"),
        (["--tool", "t", "--args", "{nope"], "sidecar: --args: not valid JSON"),
        (["--tool", "t", "--args", "[1]"], "sidecar: --args: must be a JSON object"),
        (["--args", "{}"], "sidecar inspect: --args goes with --tool NAME"),
        (["calls.json", "-c", "ls"], "sidecar inspect: give a FILE, -c CMD or --tool NAME"),
        (["-c", "ls", "--tool", "t"], "not allowed with argument"),
        (["-c", "ls", "--policies", "/no/such/dir"], "/no/such/dir: not a directory"),
        (["-c", "ls", "--mode", "yolo"], "invalid choice: 'yolo'"),
    ],
)
def test_inspect_usage_and_input_errors_are_one_line_and_exit_2(
    args: list[str], message: str
) -> None:
    result = sidecar("inspect", *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_check_suggests_the_nearest_key(tmp_path: Path) -> None:
    (tmp_path / "typo.yaml").write_text("permission:\n  mod: auto\n")
    result = sidecar("check", str(tmp_path))
    assert result.returncode == 2
    assert (
        f"{tmp_path / 'typo.yaml'}:2: permission.mod: Extra inputs are not permitted "
        "(did you mean mode?)" in result.stderr
    )


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
    # Every bundled case passes, and one of ours (other branches add bundled cases).
    bundled = sum(
        len(yaml.safe_load(suite.read_text())["cases"])
        for suite in (bundled_policy_dir() / "tests").glob("*.yaml")
    )
    assert bundled >= 37  # core, modes, packages
    assert result.stdout.strip().endswith(f"{bundled + 1} passed, 2 failed")


def test_an_invalid_suite_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    path = tmp_path / "tests" / "bad.yaml"
    path.write_text("cases:\n  - name: x\n    call: {tool: shell}\n    expect: maybe\n")
    result = sidecar("test", str(tmp_path))
    assert result.returncode == 2
    assert f"{path}:4: cases.0.expect:" in result.stderr

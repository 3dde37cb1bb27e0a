"""Policy files: merging, revisions, and a precise message for every class of error."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidecar.engine import EngineParts, compile_policy
from sidecar.policy.loader import PolicyError, bundled_policy_dir, load_policy


def load(tmp_path: Path, files: dict[str, str], bundled: bool = False):
    directory = tmp_path / "p"
    directory.mkdir(exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(text)
    return load_policy(([bundled_policy_dir()] if bundled else []) + [directory])


def problems(tmp_path: Path, files: dict[str, str]) -> list[str]:
    with pytest.raises(PolicyError) as raised:
        loaded = load(tmp_path, files)
        parts = EngineParts.local()
        compile_policy(loaded, parts, None)
    return [str(p) for p in raised.value.problems]


def test_the_bundled_policy_loads_and_has_a_stable_revision() -> None:
    first = load_policy([bundled_policy_dir()])
    second = load_policy([bundled_policy_dir()])
    assert first.revision == second.revision
    assert len(first.revision) == 12
    assert first.policy.permission.mode == "smart_approve"
    assert any(r.id == "destructive.rm-root" for r in first.policy.security.rules)


def test_later_files_override_and_rule_lists_accumulate(tmp_path: Path) -> None:
    loaded = load(
        tmp_path,
        {
            "a.yaml": "permission:\n  mode: approve\n  tools: [{tool: a, action: ask_before}]\n",
            "b.yaml": "permission:\n  mode: auto\n  tools: [{tool: b, action: never_allow}]\n",
        },
    )
    assert loaded.policy.permission.mode == "auto"
    assert [t.tool for t in loaded.policy.permission.tools] == ["a", "b"]


def test_revision_changes_with_content(tmp_path: Path) -> None:
    first = load(tmp_path, {"a.yaml": "repetition: {max_consecutive: 3}\n"})
    second = load(tmp_path, {"a.yaml": "repetition: {max_consecutive: 4}\n"})
    assert first.revision != second.revision


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("permission:\n  mode: yolo\n", "bad.yaml:2: permission.mode: Input should be"),
        (
            "permission:\n  mod: auto\n",
            "bad.yaml:2: permission.mod: Extra inputs are not permitted (did you mean mode?)",
        ),
        (
            "mode: auto\n",
            "bad.yaml:1: mode: Extra inputs are not permitted (did you mean permission.mode?)",
        ),
        (
            "permision: {}\n",
            "bad.yaml:1: permision: Extra inputs are not permitted (did you mean permission?)",
        ),
        (
            "permission:\n  tools:\n    - {tool: x, acton: ask_before}\n",
            "bad.yaml:3: permission.tools.0.acton: Extra inputs are not permitted (did you mean action?)",
        ),
        (
            "security:\n  rules:\n    - id: x\n      category: c\n      risk: high\n      mesage: m\n"
            "      shell: {program: [rm]}\n",
            "bad.yaml:6: security.rules.0.mesage: Extra inputs are not permitted (did you mean message?)",
        ),
        ("permission:\n  zzzz: 1\n", "bad.yaml:2: permission.zzzz: Extra inputs are not permitted"),
        ("repetition:\n  max_consecutive: 0\n", "bad.yaml:2: repetition.max_consecutive:"),
        (
            "order: [security, nosuch]\n",
            "bad.yaml:1: order: Value error, unknown inspector 'nosuch'",
        ),
        (
            "inspectors:\n  security:\n    on_error: explode\n",
            "bad.yaml:3: inspectors.security.on_error:",
        ),
        (
            "inspectors:\n  security:\n    timeout_ms: -5\n",
            "bad.yaml:3: inspectors.security.timeout_ms:",
        ),
        (
            "security:\n  rules:\n    - id: x\n      category: c\n      risk: high\n      message: m\n"
            "      shell: {program: [rm], positional: '(a'}\n",
            "bad.yaml:7: security.rules.0.shell.positional: Value error, not a valid RE2 pattern",
        ),
        (
            "security:\n  rules:\n    - id: x\n      category: c\n      risk: severe\n      message: m\n"
            "      shell: {program: [rm]}\n",
            "bad.yaml:5: security.rules.0.risk:",
        ),
        (
            "security:\n  rules:\n    - id: x\n      category: c\n      risk: high\n      message: m\n",
            "bad.yaml:3: security.rules.0: Value error, a rule needs exactly one of 'shell' or 'arguments'",
        ),
        ("permission: [1, 2]\n", "bad.yaml:1: permission: Input should be a valid dictionary"),
        ("- just\n- a list\n", "bad.yaml:1: a policy file must be a mapping"),
        ("permission:\n  mode: [unclosed\n", "bad.yaml:3: not valid YAML"),
        # A key given twice would silently replace the first (half of one rule pasted
        # over another): it is an error at the second.
        (
            "security:\n  rules:\n    - id: x\n      category: c\n      id: y\n",
            "bad.yaml:5: not valid YAML: while constructing a mapping",
        ),
        ("permission:\n  mode: auto\n  mode: smart_approve\n", "bad.yaml:3: not valid YAML"),
        (
            "inspectors:\n  adversary: {enabled: true}\n",
            "adversary: the adversary inspector is enabled but",
        ),
    ],
)
def test_every_error_names_file_line_and_path(tmp_path: Path, text: str, expected: str) -> None:
    found = problems(tmp_path, {"bad.yaml": text})
    assert any(expected in p for p in found), found


def test_all_errors_in_all_files_are_reported_at_once(tmp_path: Path) -> None:
    found = problems(
        tmp_path,
        {"a.yaml": "permission:\n  mode: yolo\n", "b.yaml": "repetition: {max_consecutive: -1}\n"},
    )
    assert len(found) == 2
    assert "a.yaml:2" in found[0] and "b.yaml:1" in found[1]


def test_a_rule_whose_examples_fail_is_rejected(tmp_path: Path) -> None:
    rule = (
        "security:\n  rules:\n    - id: wrong\n      category: c\n      risk: high\n"
        "      message: m\n      shell: {program: [rm], flags_any: [r]}\n"
        "      examples: {match: ['rm file'], no_match: ['rm -r dir']}\n"
    )
    found = problems(tmp_path, {"rules.yaml": rule})
    assert any("rule wrong: example 'rm file' should match" in p for p in found)
    assert any("rule wrong: example 'rm -r dir' should not match" in p for p in found)
    assert all("rules.yaml" in p for p in found)


def test_duplicate_rule_ids_are_rejected(tmp_path: Path) -> None:
    rule = "- {id: same, category: c, risk: low, message: m, shell: {program: [ls]}}\n"
    text = "security:\n  rules:\n    " + rule + "    " + rule
    found = problems(tmp_path, {"a.yaml": text})
    assert any("rule id 'same' is used twice" in p for p in found)


def test_missing_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError) as raised:
        load_policy([tmp_path / "nope"])
    assert "not a directory" in str(raised.value)


def test_argument_rule_examples_work_with_glob_only_tools(tmp_path: Path) -> None:
    rule = (
        "security:\n  rules:\n    - id: mcp.secret-path\n      category: c\n      risk: high\n"
        "      message: m\n      arguments:\n        tool: ['mcp__*__read*']\n"
        "        where: [{keys: [path], pattern: '^/secret'}]\n"
        "      examples: {match: ['/secret/x'], no_match: ['/public']}\n"
    )
    loaded = load(tmp_path, {"r.yaml": rule}, bundled=True)
    parts = EngineParts.local()
    compile_policy(loaded, parts, None)  # examples check out: no PolicyError

"""Argument-level permission rules on parsed shell commands, read-only shell calls,
workspace boundaries and the request-mode limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidecar.engine import PolicyEngine
from sidecar.inspection.model import ToolCall
from sidecar.inspection.verdict import Mode, Verdict
from sidecar.state.approvals import ApprovalStore
from tests.conftest import engine_for_mode, write_policy

RULES = """
permission:
  workspace_roots: [/workspace]
  commands:
    - {command: git push, action: ask_before, reason: pushing publishes work}
    - {command: git status, action: always_allow}
    - {command: rm, outside_workspace: true, action: ask_before}
    - {command: kubectl delete, action: never_allow}
    - {command: npm publish, action: ask_before, unless_flags: [dry-run]}
"""


@pytest.fixture
def engine(tmp_path: Path) -> PolicyEngine:
    write_policy(tmp_path, "rules.yaml", RULES)
    return engine_for_mode(Mode.AUTO, tmp_path)


async def verdict(
    engine: PolicyEngine, command: str, mode: Mode | None = None
) -> tuple[Verdict, str]:
    decision = await engine.inspect("p", [ToolCall("1", "shell", {"command": command})], mode)
    return decision.verdicts[0].verdict, decision.verdicts[0].reason


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git push origin main", Verdict.REQUIRE_APPROVAL),
        ("git -C repo push", Verdict.REQUIRE_APPROVAL),  # global options do not hide it
        ("make && git push", Verdict.REQUIRE_APPROVAL),  # anywhere in the line
        ("bash -c 'git push'", Verdict.REQUIRE_APPROVAL),
        ("git status", Verdict.ALLOW),
        ("git pull", Verdict.ALLOW),  # no rule: mode auto
        ("rm build/x.o", Verdict.ALLOW),
        ("rm /workspace/tmp/x", Verdict.ALLOW),
        ("rm /opt/app/x", Verdict.REQUIRE_APPROVAL),
        ("rm /etc/hosts", Verdict.DENY),  # the effect model: deleting a system file
        ("rm ../../x", Verdict.REQUIRE_APPROVAL),
        ("rm ~/notes.txt", Verdict.REQUIRE_APPROVAL),
        ("rm /workspace/../opt/x", Verdict.REQUIRE_APPROVAL),
        ("kubectl -n prod delete pod x", Verdict.DENY),
        ("npm publish", Verdict.REQUIRE_APPROVAL),
        ("npm publish --dry-run", Verdict.ALLOW),
    ],
)
async def test_command_rules(engine: PolicyEngine, command: str, expected: Verdict) -> None:
    assert (await verdict(engine, command))[0] is expected


async def test_the_rule_reason_is_the_verdict_reason(engine: PolicyEngine) -> None:
    assert await verdict(engine, "git push") == (Verdict.REQUIRE_APPROVAL, "pushing publishes work")


async def test_never_allow_beats_a_persons_standing_answer(tmp_path: Path) -> None:
    write_policy(tmp_path, "rules.yaml", RULES)
    engine = engine_for_mode(Mode.AUTO, tmp_path)
    store = engine._parts.states.store  # the same store RecordDecision writes to
    answers = ApprovalStore(store.database, changed=store.changed)  # type: ignore[attr-defined]
    await answers.set_standing("p", "shell", "always_allow", Verdict.ALLOW, "d")
    assert (await verdict(engine, "kubectl delete ns x"))[0] is Verdict.DENY
    assert (await verdict(engine, "git push"))[
        0
    ] is Verdict.ALLOW  # the person's answer wins over ask


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("ls -la | grep x && git status", Verdict.ALLOW),
        ("git -C repo log --oneline | head", Verdict.ALLOW),
        ("cat README.md", Verdict.ALLOW),
        ("ls 2>/dev/null", Verdict.ALLOW),
        ("ls > listing.txt", Verdict.REQUIRE_APPROVAL),  # writes a file
        ("find . -name '*.tmp' -delete", Verdict.REQUIRE_APPROVAL),
        ("sed -i s/a/b/ f", Verdict.REQUIRE_APPROVAL),
        ("ls && make", Verdict.REQUIRE_APPROVAL),  # one command is not read-only
        ("$CMD", Verdict.REQUIRE_APPROVAL),
        ("cat ~/.ssh/id_rsa", Verdict.DENY),  # read-only, but reading a key store is denied
    ],
)
async def test_smart_approve_lets_read_only_shell_calls_run(
    command: str, expected: Verdict
) -> None:
    engine = engine_for_mode(Mode.SMART_APPROVE)
    assert (await verdict(engine, command))[0] is expected


async def test_a_request_may_tighten_only_up_to_the_policy_limit(tmp_path: Path) -> None:
    write_policy(tmp_path, "limit.yaml", "permission: {max_request_mode: approve}\n")
    engine = engine_for_mode(Mode.AUTO, tmp_path)
    call = [ToolCall("1", "read_file", {"path": "a"})]
    assert (await engine.inspect("s", call, Mode.CHAT)).mode is Mode.APPROVE
    assert (await engine.inspect("s", call, Mode.SMART_APPROVE)).mode is Mode.SMART_APPROVE
    assert (await engine.inspect("s", call, Mode.AUTO)).mode is Mode.AUTO


def test_glob_sets_remember_answers_without_changing_them() -> None:
    from sidecar.matching.globs import GlobSet

    globs = GlobSet(["mcp__github__*", "read_?"])
    names = ["mcp__github__x", "read_a", "read_ab", "other"] * 3
    assert [globs.matches(n) for n in names] == [True, True, False, False] * 3
    small = GlobSet(["a*"])
    small.MAX_REMEMBERED = 2
    assert [small.matches(n) for n in ["a1", "b", "a2", "c", "a1"]] == [
        True,
        False,
        True,
        False,
        True,
    ]


async def test_an_allowlist_asks_for_unknown_hosts_only(tmp_path: Path) -> None:
    write_policy(
        tmp_path, "egress.yaml", "egress:\n  allowed_domains: [example.com, '*.internal']\n"
    )
    engine = engine_for_mode(Mode.SMART_APPROVE, tmp_path)
    allowed = "curl -sS https://api.example.com/x -o out.txt"  # out.txt is a file, not a host
    unknown = "curl -sS https://elsewhere.example.net/x"
    assert (await verdict(engine, allowed))[1] != "out.txt is not on the allowed destinations list"
    decision = await engine.inspect("e", [ToolCall("1", "shell", {"command": allowed})])
    assert not any(f.rule_id == "egress.unknown_domain" for f in decision.verdicts[0].findings)
    decision = await engine.inspect("e", [ToolCall("2", "shell", {"command": unknown})])
    assert any(f.rule_id == "egress.unknown_domain" for f in decision.verdicts[0].findings)
    auto = engine_for_mode(Mode.AUTO, tmp_path)
    decision = await auto.inspect(
        "e", [ToolCall("3", "fetch", {"url": "https://elsewhere.example.net"})]
    )
    assert decision.verdicts[0].verdict is Verdict.ALLOW  # mode auto allows unknown hosts

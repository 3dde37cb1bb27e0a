"""The permission inspector alone: workspace boundaries, rule precedence, read-only calls,
people's standing answers, modes and client hints."""

from __future__ import annotations

from typing import Any

import pytest

from sidecar.inspection.model import Finding, InspectionContext, ToolCall
from sidecar.inspection.permission import PermissionInspector, pattern_matches
from sidecar.inspection.shell_calls import ShellCalls
from sidecar.inspection.verdict import Mode, Verdict
from sidecar.policy.schema import CommandPattern, PermissionPolicy, ShellTool
from sidecar.shell.walk import analyse


class Grants:
    """People's standing answers as the inspector reads them (the store's snapshot is
    tested in test_store.py)."""

    def __init__(self) -> None:
        self.answers: dict[tuple[str, str], Verdict] = {}

    def set_standing(self, session_id: str, tool: str, label: str, verdict: Verdict) -> None:
        self.answers[(session_id, tool)] = verdict

    def standing_answer(self, session_id: str, tool_name: str) -> Verdict | None:
        return self.answers.get((session_id, tool_name))


def inspector(store: Grants | None = None, **policy: Any) -> PermissionInspector:
    return PermissionInspector(
        PermissionPolicy.model_validate(policy),
        store or Grants(),
        ShellCalls((ShellTool(tool="shell"),), ()),
    )


def judge(
    permission: PermissionInspector,
    command: str | None = None,
    mode: Mode = Mode.AUTO,
    tool: str = "shell",
    hint: bool | None = None,
    session: str = "s",
) -> Finding:
    arguments = {"command": command} if command is not None else {"x": 1}
    call = ToolCall("1", tool, arguments, read_only_hint=hint)
    ((finding,),) = permission.inspect_now([call], InspectionContext(session, "d", mode))
    return finding


WORKSPACE = inspector(
    workspace_roots=["/workspace/"],
    commands=[{"command": "rm", "outside_workspace": True, "action": "ask_before"}],
)


@pytest.mark.parametrize(
    ("command", "leaves"),
    [
        ("rm /workspace/x", False),
        ("rm /workspace", False),
        ("rm /workspace/a/../b", False),
        ("rm build/x.o", False),
        ("rm ./x a/../b", False),
        ("rm /workspace-evil/x", True),
        ("rm /workspaces/x", True),
        ("rm /work", True),
        ("rm /", True),
        ("rm /workspace/../etc/passwd", True),
        ("rm $HOME/x", True),
        ("rm $X/y", True),
        ('rm "$D"', True),
        ("rm ~/x", True),
        ("rm a/../../x", True),
        ("rm ../x", True),
        ("rm ..", True),
        ("rm x /etc/hosts", True),  # any one path leaving is enough
    ],
)
def test_the_workspace_boundary(command: str, leaves: bool) -> None:
    finding = judge(WORKSPACE, command)
    if leaves:
        assert finding.verdict is Verdict.REQUIRE_APPROVAL
        assert finding.rule_id == "permission.command.ask_before"
        assert finding.message == "policy rule ask_before for `rm` outside the workspace"
        assert finding.approval_prompt == finding.message
    else:
        assert finding.verdict is Verdict.ALLOW and finding.rule_id == "permission.mode_auto"


def test_without_workspace_roots_every_absolute_path_leaves() -> None:
    bare = inspector(
        commands=[{"command": "rm", "outside_workspace": True, "action": "never_allow"}]
    )
    assert judge(bare, "rm /tmp/x").verdict is Verdict.DENY
    assert judge(bare, "rm x").verdict is Verdict.ALLOW


RULES = [
    {"command": "git", "action": "always_allow", "reason": "git is fine"},
    {"command": "git push", "action": "ask_before", "reason": "pushing publishes"},
    {"command": "git push", "action": "ask_before", "reason": "second push rule"},
    {"command": "git push --force", "action": "never_allow"},
    {"command": "npm publish", "action": "ask_before", "unless_flags": ["dry-run"]},
]


@pytest.mark.parametrize("rules", [RULES, RULES[::-1]], ids=["in order", "reversed"])
def test_the_strictest_matching_command_rule_wins_whatever_the_order(rules: list[Any]) -> None:
    permission = inspector(commands=rules)
    pushed = judge(permission, "git push origin main")
    assert pushed.verdict is Verdict.REQUIRE_APPROVAL
    first_push = next(r for r in rules if r["command"] == "git push")
    assert pushed.message == first_push["reason"]  # the first of equally strict rules
    assert judge(permission, "git status").verdict is Verdict.ALLOW
    assert judge(permission, "git status").message == "git is fine"
    # `git push --force` is a pattern of words, not flags: it names a subcommand.
    assert judge(permission, "git push --force x").verdict is Verdict.REQUIRE_APPROVAL
    assert judge(permission, "git status && git push").verdict is Verdict.REQUIRE_APPROVAL
    assert judge(permission, "npm publish").verdict is Verdict.REQUIRE_APPROVAL
    assert judge(permission, "npm publish --dry-run").verdict is Verdict.ALLOW
    assert judge(permission, "npm install").verdict is Verdict.ALLOW


def test_a_rule_for_a_subcommand_does_not_match_another() -> None:
    permission = inspector(commands=[{"command": "kubectl delete", "action": "never_allow"}])
    assert judge(permission, "kubectl get pods").verdict is Verdict.ALLOW
    assert judge(permission, "kubectl").verdict is Verdict.ALLOW
    assert judge(permission, "kubectl -n prod delete pod x").verdict is Verdict.DENY
    assert judge(permission, "kubectlx delete").verdict is Verdict.ALLOW


def test_pattern_matching_on_program_words_and_flags() -> None:
    (command,) = analyse("git push --force origin").commands
    assert pattern_matches(CommandPattern(command="git push"), command)
    assert pattern_matches(CommandPattern(command="git"), command)
    assert not pattern_matches(CommandPattern(command="git pull"), command)
    assert not pattern_matches(CommandPattern(command="hg push"), command)
    assert not pattern_matches(CommandPattern(command="git push", unless_flags=["force"]), command)
    assert pattern_matches(CommandPattern(command="git push", unless_flags=["dry-run"]), command)


@pytest.mark.parametrize(
    ("tool_action", "command_action", "expected"),
    [
        ("always_allow", "never_allow", Verdict.DENY),
        ("never_allow", "always_allow", Verdict.DENY),
        ("always_allow", "ask_before", Verdict.REQUIRE_APPROVAL),
        ("ask_before", "always_allow", Verdict.REQUIRE_APPROVAL),
    ],
)
def test_tool_and_command_rules_combine_strictest_first(
    tool_action: str, command_action: str, expected: Verdict
) -> None:
    permission = inspector(
        tools=[{"tool": "sh*", "action": tool_action}],
        commands=[{"command": "kubectl delete", "action": command_action}],
    )
    assert judge(permission, "kubectl delete pod x").verdict is expected


def test_the_strictest_tool_rule_wins_and_gives_its_reason() -> None:
    tools = [
        {"tool": "deploy*", "action": "always_allow"},
        {"tool": "deploy_prod", "action": "never_allow", "reason": "not from an agent"},
        {"tool": "deploy_*", "action": "ask_before"},
    ]
    for order in (tools, tools[::-1]):
        permission = inspector(tools=order)
        denied = judge(permission, tool="deploy_prod")
        assert (denied.verdict, denied.rule_id, denied.message) == (
            Verdict.DENY,
            "permission.never_allow",
            "not from an agent",
        )
        asked = judge(permission, tool="deploy_dev")
        assert asked.verdict is Verdict.REQUIRE_APPROVAL
        assert asked.message == "policy rule ask_before for 'deploy_*'"
        allowed = judge(permission, tool="deploy", mode=Mode.APPROVE)
        assert (allowed.verdict, allowed.rule_id) == (Verdict.ALLOW, "permission.always_allow")
        assert judge(permission, tool="other", mode=Mode.APPROVE).verdict is (
            Verdict.REQUIRE_APPROVAL
        )


def test_standing_answers_sit_between_never_allow_and_other_rules() -> None:
    store = Grants()
    permission = inspector(
        store,
        tools=[
            {"tool": "blocked", "action": "never_allow"},
            {"tool": "asked", "action": "ask_before"},
        ],
    )
    for tool in ("blocked", "asked", "free"):
        store.set_standing("s", tool, "always_allow", Verdict.ALLOW)
    store.set_standing("s", "stopped", "always_deny", Verdict.DENY)
    assert judge(permission, tool="blocked").verdict is Verdict.DENY
    allowed = judge(permission, tool="asked", mode=Mode.APPROVE)
    assert (allowed.verdict, allowed.rule_id, allowed.message) == (
        Verdict.ALLOW,
        "permission.standing_answer",
        "a person chose always allow for asked",
    )
    assert judge(permission, tool="free", mode=Mode.APPROVE).verdict is Verdict.ALLOW
    stopped = judge(permission, tool="stopped")
    assert (stopped.verdict, stopped.message) == (
        Verdict.DENY,
        "a person chose always deny for stopped",
    )
    # Another session has no answers.
    assert judge(permission, tool="asked", session="t").verdict is Verdict.REQUIRE_APPROVAL


READ_ONLY = inspector(
    read_only_commands=[
        {"command": "ls"},
        {"command": "git status"},
        {"command": "git stash list"},
        {"command": "cat"},
    ],
    read_only_tools=["read_*"],
)


@pytest.mark.parametrize(
    ("command", "read_only"),
    [
        ("ls -la", True),
        ("ls && git status", True),
        ("cat x > /dev/null", True),
        ("ls 2>/dev/stderr", True),
        ("ls > /dev/stdout", True),
        ("git stash list", True),
        ("git stash", False),
        ("ls > out.txt", False),  # writes a file
        ("ls; rm -rf x", False),
        ("git push", False),
        ("git", False),
        ("ls (", False),  # does not parse
        ("ls $(rm x)", False),
        ("", False),  # no command at all
        ("eval $X", False),  # cannot tell
    ],
)
def test_smart_approve_allows_only_shell_lines_that_only_read(
    command: str, read_only: bool
) -> None:
    finding = judge(READ_ONLY, command, Mode.SMART_APPROVE)
    if read_only:
        assert (finding.verdict, finding.rule_id, finding.message) == (
            Verdict.ALLOW,
            "permission.read_only_command",
            "every command only reads",
        )
    else:
        assert finding.verdict is Verdict.REQUIRE_APPROVAL
        assert finding.rule_id == "permission.mode_smart_approve"
        assert finding.message == "shell is not known to be read-only"
        assert finding.approval_prompt == "Allow the agent to run shell?"


def test_a_clients_read_only_hint_never_loosens_a_shell_call() -> None:
    assert judge(READ_ONLY, "rm -rf ./src", Mode.SMART_APPROVE, hint=True).verdict is (
        Verdict.REQUIRE_APPROVAL
    )
    assert judge(READ_ONLY, "ls", Mode.SMART_APPROVE, hint=False).verdict is (
        Verdict.REQUIRE_APPROVAL
    )
    assert judge(READ_ONLY, "ls", Mode.SMART_APPROVE, hint=True).verdict is Verdict.ALLOW


def test_read_only_hints_and_globs_for_opaque_tools() -> None:
    hinted = judge(READ_ONLY, tool="fetch", mode=Mode.SMART_APPROVE, hint=True)
    assert (hinted.verdict, hinted.rule_id, hinted.message) == (
        Verdict.ALLOW,
        "permission.read_only",
        "fetch only reads",
    )
    assert judge(READ_ONLY, tool="fetch", mode=Mode.SMART_APPROVE).verdict is (
        Verdict.REQUIRE_APPROVAL
    )
    globbed = judge(READ_ONLY, tool="read_file", mode=Mode.SMART_APPROVE)
    assert (globbed.verdict, globbed.rule_id, globbed.message) == (
        Verdict.ALLOW,
        "permission.read_only",
        "read_file only reads",
    )
    assert judge(READ_ONLY, tool="read_file", mode=Mode.SMART_APPROVE, hint=False).verdict is (
        Verdict.REQUIRE_APPROVAL
    )
    # Hints do not matter outside smart_approve.
    assert judge(READ_ONLY, tool="read_file", mode=Mode.APPROVE, hint=True).verdict is (
        Verdict.REQUIRE_APPROVAL
    )
    assert judge(READ_ONLY, tool="fetch", mode=Mode.AUTO, hint=False).verdict is Verdict.ALLOW


def test_without_read_only_commands_shell_calls_are_asked_about() -> None:
    plain = inspector()
    assert judge(plain, "ls", Mode.SMART_APPROVE).verdict is Verdict.REQUIRE_APPROVAL


def test_modes_say_why_they_ask() -> None:
    plain = inspector()
    auto = judge(plain, tool="t")
    assert (auto.verdict, auto.rule_id, auto.message, auto.approval_prompt) == (
        Verdict.ALLOW,
        "permission.mode_auto",
        "mode auto approves calls",
        "",
    )
    approve = judge(plain, tool="t", mode=Mode.APPROVE)
    assert (approve.rule_id, approve.message, approve.approval_prompt) == (
        "permission.mode_approve",
        "mode approve asks before every call",
        "Allow the agent to run t?",
    )
    assert approve.inspector == "permission"


def test_remembered_answers_are_bounded() -> None:
    plain = inspector(tools=[{"tool": "x*", "action": "ask_before"}])
    for index in range(4097):
        judge(plain, tool=f"tool{index}", mode=Mode.APPROVE)
    assert len(plain._asks) <= 4096 and len(plain._tool_rules) <= 4096
    assert len(plain._asks) >= 1 and len(plain._tool_rules) >= 1
    assert judge(plain, tool="x1").verdict is Verdict.REQUIRE_APPROVAL


def test_a_root_is_a_directory_not_a_prefix_of_characters() -> None:
    permission = inspector(
        workspace_roots=["/srv/X"],
        commands=[{"command": "rm", "outside_workspace": True, "action": "never_allow"}],
    )
    assert judge(permission, "rm /srv/X/a").verdict is Verdict.ALLOW
    assert judge(permission, "rm /srv/Y/a").verdict is Verdict.DENY
    assert judge(permission, "rm /srv/XY/a").verdict is Verdict.DENY


def test_long_command_patterns_compare_every_word() -> None:
    permission = inspector(
        commands=[{"command": "kubectl rollout restart", "action": "never_allow"}]
    )
    assert judge(permission, "kubectl rollout restart deploy/x").verdict is Verdict.DENY
    assert judge(permission, "kubectl rollout status deploy/x").verdict is Verdict.ALLOW


def test_a_rule_that_does_not_apply_does_not_hide_the_next_one() -> None:
    permission = inspector(
        workspace_roots=["/w"],
        commands=[
            {"command": "rm", "outside_workspace": True, "action": "never_allow"},
            {"command": "rm", "action": "ask_before", "reason": "removing files"},
        ],
    )
    inside = judge(permission, "rm x")
    assert (inside.verdict, inside.message) == (Verdict.REQUIRE_APPROVAL, "removing files")
    assert judge(permission, "rm /etc/x").verdict is Verdict.DENY


def test_an_equally_strict_command_rule_keeps_the_tool_rules_reason() -> None:
    permission = inspector(
        tools=[{"tool": "shell", "action": "ask_before", "reason": "the shell asks"}],
        commands=[{"command": "git push", "action": "ask_before", "reason": "pushing"}],
    )
    asked = judge(permission, "git push")
    assert (asked.rule_id, asked.message) == ("permission.ask_before", "the shell asks")
    stricter = inspector(
        tools=[{"tool": "shell", "action": "ask_before", "reason": "the shell asks"}],
        commands=[{"command": "git push", "action": "never_allow", "reason": "no pushing"}],
    )
    denied = judge(stricter, "git push")
    assert (denied.rule_id, denied.message) == ("permission.command.never_allow", "no pushing")


def test_other_tools_are_judged_where_command_rules_exist() -> None:
    permission = inspector(commands=[{"command": "git push", "action": "never_allow"}])
    assert judge(permission, tool="write_file").verdict is Verdict.ALLOW
    assert judge(permission, tool="write_file", mode=Mode.APPROVE).verdict is (
        Verdict.REQUIRE_APPROVAL
    )

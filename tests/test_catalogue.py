"""The program catalogue's reading of commands: text flags, word filters, programs that run
programs (sidecar/effects/catalogue.py), and effect rules merged across policy files."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from sidecar.effects.catalogue import Catalogue, effects_of
from sidecar.effects.model import Action, Effect, Origin
from sidecar.policy.loader import PolicyError, load_documents
from sidecar.policy.programs import ProgramSpec


def catalogue(**programs: dict[str, Any]) -> Catalogue:
    return Catalogue({name: ProgramSpec.model_validate(spec) for name, spec in programs.items()})


def effects(cat: Catalogue, line: str, input_text: str = "") -> list[Effect]:
    program, *args = line.split()
    parsed = cat.parse(program, tuple(args))
    assert parsed is not None, line
    return effects_of(parsed, program, tuple(args), Origin.NONE, input_text)


DB = {
    "text_flags": {"production": r"(?i)(^|[^a-z0-9])prod([^a-z0-9]|$)"},
    "value_options": ["-h", "-c"],
    "effects": [
        {
            "action": "destroy",
            "target": "option:-c",
            "kind": "text",
            "match": r"(?i)\bdrop\b",
            "flags": ["database"],
        },
        {"action": "destroy", "target": "stdin", "kind": "text", "match": r"(?i)\bdrop\b"},
    ],
    "subcommands": {"admin": {"effects": [{"action": "destroy", "target": "command"}]}},
}


def test_text_flags_are_named_flags_when_the_command_line_matches() -> None:
    cat = catalogue(db=DB)
    found = effects(cat, "db -h db.prod.internal -c DROP")
    assert [e.action for e in found] == [Action.DESTROY]
    assert {"production", "database"} <= found[0].flags
    assert "production" not in effects(cat, "db -h production-like -c DROP")[0].flags
    assert "production" not in effects(cat, "db -h localhost -c DROP")[0].flags
    # Subcommands inherit the program's text flags.
    assert "production" in effects(cat, "db admin prod")[0].flags


def test_text_flags_can_switch_effects_on_and_off() -> None:
    cat = catalogue(
        tool={
            "text_flags": {"known": r"^tool install (good\.example)/"},
            "effects": [{"action": "install", "target": "operands", "kind": "package"}],
            "subcommands": {
                "install": {
                    "effects": [
                        {
                            "action": "install",
                            "target": "operands",
                            "kind": "package",
                            "unless": ["known"],
                            "flags": ["unknown_source"],
                        }
                    ]
                }
            },
        }
    )
    assert effects(cat, "tool install good.example/x") == []
    [found] = effects(cat, "tool install bad.example/x")
    assert found.target == "bad.example/x" and found.has("unknown_source")


def test_match_keeps_only_the_words_that_match() -> None:
    cat = catalogue(db=DB)
    assert effects(cat, "db -c SELECT") == []
    [found] = effects(cat, "db -c DROP")
    assert found.target == "DROP"
    # Text fed on standard input is a word like any other.
    assert [e.target for e in effects(cat, "db", input_text="drop table x")] == ["drop table x"]
    assert effects(cat, "db", input_text="select 1") == []
    assert effects(cat, "db") == []  # unknown input: nothing to match


def test_not_match_drops_the_words_that_match() -> None:
    cat = catalogue(
        push={
            "effects": [
                {"action": "destroy", "target": "operands[1:]", "kind": "resource",
                 "not_match": "^[a-z]"}
            ]
        }
    )  # fmt: skip
    assert [e.target for e in effects(cat, "push origin main +dev :old")] == ["+dev", ":old"]


RUNNER = {
    "value_options": ["-p"],
    "runs_command": True,
    "effects": [{"action": "install", "target": "operand[0]", "kind": "package"}],
}
PRISMA = {
    "subcommands": {
        "migrate": {
            "subcommands": {
                "reset": {
                    "effects": [{"action": "destroy", "target": "command", "kind": "resource"}]
                },
                "status": {"read_only": True},
            }
        }
    }
}


def test_a_runner_reads_the_command_it_runs_as_that_programs() -> None:
    cat = catalogue(npx=RUNNER, prisma=PRISMA)
    found = effects(cat, "npx -p prisma prisma migrate reset --force")
    assert [(e.action, e.target) for e in found] == [
        (Action.INSTALL, "prisma"),
        (Action.DESTROY, "prisma migrate reset --force"),
    ]
    parsed = cat.parse("npx", ("./node_modules/.bin/prisma", "migrate", "status"))
    assert parsed is not None and parsed.spec.read_only and parsed.outer is not None
    assert parsed.spec.name == "prisma migrate status"


def test_a_runner_of_an_unknown_program_keeps_its_own_effects() -> None:
    cat = catalogue(npx=RUNNER, prisma=PRISMA)
    parsed = cat.parse("npx", ("cowsay", "hi"))
    assert parsed is not None and parsed.outer is None
    assert [(e.action, e.target) for e in effects(cat, "npx cowsay hi")] == [
        (Action.INSTALL, "cowsay")
    ]


def test_runners_within_runners_are_bounded() -> None:
    cat = catalogue(npx=RUNNER)
    words = ("npx",) * 50 + ("x",)
    parsed = cat.parse("npx", words)
    depth = 0
    while parsed is not None and parsed.outer is not None:
        parsed, depth = parsed.outer, depth + 1
    assert depth <= 4


def test_match_patterns_must_be_re2() -> None:
    with pytest.raises(ValidationError, match="RE2"):
        ProgramSpec.model_validate({"effects": [{"action": "delete", "match": "(?=x)"}]})
    with pytest.raises(ValidationError, match="RE2"):
        ProgramSpec.model_validate({"text_flags": {"x": "(?<=a)b"}})


def test_effect_rules_from_several_files_add_up() -> None:
    rule = (
        "effect_rules:\n  - id: {id}\n    category: c\n    risk: high\n    message: m\n"
        "    action: [delete]\n"
    )
    loaded = load_documents(
        [("a.yaml", rule.format(id="a.one")), ("b.yaml", rule.format(id="b.two"))]
    )
    assert [r.id for r in loaded.policy.effect_rules] == ["a.one", "b.two"]


def test_when_all_needs_every_flag() -> None:
    cat = catalogue(
        kube={
            "flags": {"from_file": ["-f"], "dev": ["--dev"]},
            "value_options": ["-f"],
            "effects": [
                {"action": "destroy", "target": "command", "kind": "resource"},
                {
                    "action": "destroy",
                    "target": "command",
                    "kind": "resource",
                    "flags": ["everyday"],
                    "when_all": ["from_file", "dev"],
                },
            ],
        }
    )
    assert [e.has("everyday") for e in effects(cat, "kube -f x.yaml")] == [False]
    assert [e.has("everyday") for e in effects(cat, "kube --dev")] == [False]
    assert [e.has("everyday") for e in effects(cat, "kube -f x.yaml --dev")] == [False, True]


def test_content_selector_gives_the_text_written() -> None:
    cat = catalogue(
        pkg={
            "effects": [
                {
                    "action": "write",
                    "target": "literal:package.json",
                    "content": "operands",
                }
            ]
        }
    )
    [found] = effects(cat, "pkg scripts.postinstall=run-me")
    assert found.target == "package.json" and found.content == "scripts.postinstall=run-me"


def test_a_single_dash_word_that_is_a_named_option_is_that_option() -> None:
    """`find / -delete` and `terraform apply -destroy` name whole options, not letters."""
    cat = catalogue(
        find={
            "value_options": ["-name"],
            "flags": {"delete": ["-delete"]},
            "effects": [
                {"action": "read", "target": "operand[0]"},
                {"action": "delete", "target": "operand[0]", "when": ["delete"]},
            ],
        },
        rm={"flags": {"recursive": ["-r"], "force": ["-f"]}, "effects": [{"action": "delete"}]},
    )
    assert [e.action for e in effects(cat, "find /etc -name x -delete")] == [
        Action.READ,
        Action.DELETE,
    ]
    # Clusters of short options still split: -rf is -r and -f.
    assert effects(cat, "rm -rf x")[0].flags >= {"recursive", "force"}


@pytest.mark.parametrize(
    ("words", "printed"),
    [
        (("%s\\n", "rm -rf /"), "rm -rf /\n"),
        (("%s\\n", "a", "b"), "a\nb\n"),  # the format is reused until the arguments run out
        (("#!/bin/sh\\n%s\\n%s\\n", "set -e", "make"), "#!/bin/sh\nset -e\nmake\n"),
        (("%b", "a\\tb\\n"), "a\tb\n"),
        (("100%% %d items\\n", "3"), "100% 3 items\n"),
        (("%-10s|", "x"), "x         |"),
        (("plain",), "plain"),
        (("%s",), ""),
        (("\\x41\\101\\0101",), "AA\x081"),
    ],
)
def test_printf_prints_what_the_shell_would(words: tuple[str, ...], printed: str) -> None:
    from sidecar.effects.catalogue import printf_text

    assert printf_text(words) == printed


def test_a_script_printed_with_printf_or_echo_e_is_the_script() -> None:
    from sidecar.effects.shell_effects import line_effects
    from sidecar.shell.walk import analyse

    cat = catalogue(
        printf={"output": "printf"},
        echo={"flags": {"escapes": ["-e"]}, "output": "literal"},
        bash={"effects": [{"action": "execute", "target": "operand[0]"}]},
    )
    for line in (
        "printf '%s\\n' 'redis-cli FLUSHALL' > /tmp/job.sh && bash /tmp/job.sh",
        "echo -e 'set -e\\nredis-cli FLUSHALL' > /tmp/job.sh && bash /tmp/job.sh",
    ):
        found = line_effects(analyse(line), cat).effects
        written = next(e for e in found if e.action is Action.WRITE)
        assert written.content.splitlines()[-1] == "redis-cli FLUSHALL", line


def test_read_only_when_a_flag_says_so() -> None:
    cat = catalogue(
        fmt={
            "flags": {"check": ["--check"]},
            "text_flags": {"dry": "--dry-run"},
            "read_only_when": ["check", "dry"],
            "effects": [{"action": "write", "target": "operands", "unless": ["check", "dry"]}],
        }
    )
    for line, read_only in (
        ("fmt src", False),
        ("fmt --check src", True),
        ("fmt --dry-run x", True),
    ):
        program, *args = line.split()
        parsed = cat.parse(program, tuple(args))
        assert parsed is not None and parsed.spec.read_only is read_only, line


def test_every_name_in_the_bundled_catalogue_has_one_spec() -> None:
    """A name given twice (as a program or an alias) silently takes one of the specs."""
    from sidecar.policy.loader import bundled_policy_dir, load_policy

    owners: dict[str, list[str]] = {}
    for name, spec in load_policy([bundled_policy_dir()]).policy.programs.items():
        for given in (name, *spec.aliases):
            owners.setdefault(given, []).append(name)
    assert {n: o for n, o in owners.items() if len(o) > 1} == {}


def test_no_bundled_file_redefines_what_another_says_a_program_does() -> None:
    """Files merge key by key and a later list replaces an earlier one: a second bundled
    entry giving a program's effects or aliases would silently replace the first (as a
    new kafka-topics entry once did). Overlays that add other keys (prints_secrets) merge."""
    import yaml

    from sidecar.policy.loader import bundled_policy_dir

    defined: dict[str, list[str]] = {}
    for path in sorted(bundled_policy_dir().glob("*.yaml")):
        programs = (yaml.safe_load(path.read_text()) or {}).get("programs") or {}
        for name, spec in programs.items():
            if {"effects", "aliases"} & set(spec or {}):  # lists: a later one replaces
                defined.setdefault(name, []).append(path.name)
    assert {n: files for n, files in defined.items() if len(files) > 1} == {}


def test_what_the_bundled_catalogue_calls_read_only_declares_only_reads() -> None:
    """smart_approve may run a read-only command unasked: its spec must not also say it
    writes, deletes, runs or sends something."""
    from sidecar.policy.loader import bundled_policy_dir, load_policy

    def contradictions(name: str, spec: ProgramSpec) -> list[str]:
        found = []
        if spec.read_only:
            found += [
                f"{name}: {e.action}" for e in spec.effects if e.action not in ("read", "fetch")
            ]
        for sub_name, sub in spec.subcommands.items():
            found += contradictions(f"{name} {sub_name}", sub)
        return found

    programs = load_policy([bundled_policy_dir()]).policy.programs
    assert [c for n, s in programs.items() for c in contradictions(n, s)] == []


def test_named_text_patterns_are_used_by_name_across_files() -> None:
    patterns = "text_patterns:\n  staging: '(?i)\\bstaging\\b'\n"
    program = (
        "programs:\n  deployer:\n    text_flags: {staging: '@staging'}\n"
        "    subcommands:\n      push:\n        text_flags: {also: '@staging'}\n"
    )
    loaded = load_documents([("a.yaml", patterns), ("b.yaml", program)])
    spec = loaded.policy.programs["deployer"]
    assert spec.text_flags["staging"] == "(?i)\\bstaging\\b"
    assert spec.subcommands["push"].text_flags["also"] == "(?i)\\bstaging\\b"
    parsed = Catalogue(loaded.policy.programs).parse("deployer", ("push", "to-staging"))
    assert parsed is not None and {"staging", "also"} <= parsed.named


def test_an_unknown_text_pattern_is_an_error_naming_the_file_and_flag() -> None:
    program = "programs:\n  deployer:\n    text_flags: {staging: '@nowhere'}\n"
    with pytest.raises(PolicyError) as raised:
        load_documents([("b.yaml", program)])
    assert "b.yaml" in str(raised.value)
    assert "programs.deployer.text_flags.staging" in str(raised.value)
    assert "nowhere" in str(raised.value)

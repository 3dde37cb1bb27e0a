"""Audit the program catalogue against the Fig autocomplete specs (@withfig/autocomplete, MIT).

Run by hand, not by the tests (it needs the npm package, which nothing downloads at test or
run time):

    npm pack @withfig/autocomplete && tar xzf withfig-autocomplete-*.tgz
    python -m bench.fig_audit package

It prints (1) how the catalogue's value-taking options compare with Fig's, program by program;
(2) the options the catalogue reads as taking a value where Fig says they take none (each is a
bug on one side: in the catalogue they swallow the next word); (3) how reading the generated
evaluation's commands would change if Fig's value options were added. See docs/STATUS.md for
what it found and why the catalogue is written by hand.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from sidecar.effects.catalogue import Catalogue, ParsedCommand
from sidecar.policy.loader import bundled_policy_dir, load_policy
from sidecar.policy.programs import ProgramSpec
from sidecar.shell.walk import analyse

HERE = Path(__file__).parent
GENERATED = HERE.parent.parent / "tests" / "data" / "eval" / "generated"
FigNode = dict[str, Any]


def fig_specs(package: Path, names: list[str]) -> dict[str, FigNode]:
    out = subprocess.run(
        ["node", str(HERE / "extract.mjs"), str(package), *names],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    loaded: dict[str, FigNode] = json.loads(out)
    return loaded


def _options(node: FigNode, key: str) -> set[str]:
    return {o for o in node[key] if o.startswith("-")}


def with_fig_values(spec: ProgramSpec, node: FigNode | None) -> ProgramSpec:
    """The spec with Fig's value options added at each level whose names line up."""
    if node is None:
        return spec
    extra = tuple(sorted(_options(node, "value_options") - set(spec.value_options)))
    subcommands = {}
    for key, sub in spec.subcommands.items():
        wanted = set(key.split("|"))
        match = next(
            (v for k, v in node["subcommands"].items() if wanted & set(k.split("|"))), None
        )
        subcommands[key] = with_fig_values(sub, match)
    return spec.model_copy(
        update={"value_options": spec.value_options + extra, "subcommands": subcommands}
    )


def generated_commands() -> Iterator[str]:
    for name in ("benign.jsonl", "risky.jsonl"):
        for line in (GENERATED / name).read_text().splitlines():
            case = json.loads(line)
            if case["transform"] != "identity":
                continue
            command = case["args"].get("command") or case["args"].get("cmd")
            if isinstance(command, list):
                command = " ".join(command)
            if isinstance(command, str):
                yield command


def reading(parsed: ParsedCommand) -> tuple[str, tuple[str, ...]]:
    return parsed.spec.name, parsed.operands


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    programs: Mapping[str, ProgramSpec] = load_policy([bundled_policy_dir()]).policy.programs
    owner = {alias: name for name, spec in programs.items() for alias in (name, *spec.aliases)}
    fig = fig_specs(Path(argv[0]), sorted(owner))
    ours = {n: 0 for n in ("ours", "fig", "both", "value_vs_flag")}
    disagreements: list[str] = []
    for name, node in sorted(fig.items()):
        spec = programs[owner[name]]
        mine, theirs = set(spec.value_options), _options(node, "value_options")
        ours["ours"] += len(mine)
        ours["fig"] += len(theirs)
        ours["both"] += len(mine & theirs)
        for option in sorted(mine & _options(node, "flags")):
            ours["value_vs_flag"] += 1
            disagreements.append(f"{name} {option}")
    print(f"{len(fig)} of {len(owner)} catalogue names have a Fig spec; top-level value options:")
    print(f"  catalogue {ours['ours']}, Fig {ours['fig']}, both {ours['both']}")
    print(f"  a value in the catalogue, a flag in Fig: {ours['value_vs_flag']}")
    for line in disagreements:
        print(f"    {line}")
    merged = {
        name: with_fig_values(spec, fig.get(name) or next(
            (fig[a] for a in spec.aliases if a in fig), None))
        for name, spec in programs.items()
    }  # fmt: skip
    hand, both = Catalogue(programs), Catalogue(merged)
    read = 0
    changed: list[str] = []
    for command in generated_commands():
        for simple in analyse(command).commands:
            a = hand.parse(simple.program, simple.args)
            b = both.parse(simple.program, simple.args)
            if a is None or b is None:
                continue
            read += 1
            if reading(a) != reading(b):
                changed.append(
                    f"{simple.program} {' '.join(simple.args)[:70]!r}: {a.operands} -> {b.operands}"
                )
    print(f"generated commands read: {read}; read differently with Fig's options: {len(changed)}")
    for line in changed:
        print(f"    {line}")
    return 0


raise SystemExit(main(sys.argv[1:]))

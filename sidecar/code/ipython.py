"""Notebook cells (IPython, Jupyter, OpenHands' `execute_ipython_cell`): Python plus the
shell escapes IPython adds on top of it.

A cell is not plain Python: `!cmd` and `x = !cmd` run a shell, `%%bash` makes the whole
cell a shell script, `%%writefile f` writes the cell to a file, and line magics such as
`%cat`, `%rm`, `%cp`, `%run`, `%cd` or `%sx` (and the shell aliases without their `%`,
through automagic) act on files. Each of these is rewritten to the shell line it amounts
to, so the shell analysis judges `!cat ~/.ssh/id_rsa` like `cat ~/.ssh/id_rsa`; the rest of
the cell is analysed as Python. `{expr}` inside an escape expands a Python value at run
time: the line is judged with it unresolved, and as written (IPython keeps the text of an
expression that fails).
"""

from __future__ import annotations

import shlex

import re2

from sidecar.code.collector import Nested
from sidecar.code.python import analyse_python
from sidecar.effects.model import CodeAnalysis

# Line magics that are shell commands by another name (IPython's default aliases on POSIX
# plus the magics that run or show files).
_ALIASES = frozenset(
    {
        "cat",
        "cp",
        "ls",
        "ll",
        "lf",
        "lk",
        "ldir",
        "lx",
        "mkdir",
        "mv",
        "rm",
        "rmdir",
        "less",
        "more",
        "man",
        "clear",
    }
)
_SHELL_MAGICS = frozenset({"sx", "system", "sc"})
_CELL_SHELLS = frozenset({"bash", "sh", "system", "!", "script"})
_PYTHONS = frozenset({"python", "python3", "python2", "ipython"})
_INTERPOLATION = re2.compile(r"\{[^{}\n]*\}")
_MAX_LINES = 4000


def analyse_ipython(code: str, nested: Nested, depth: int = 0) -> CodeAnalysis:
    python, shell = split_cell(code)
    found = analyse_python(python, nested, depth) if python.strip() else CodeAnalysis()
    if not shell:
        return found
    # One script, in order, so `%cd ~/.ssh` then `!cat id_rsa` is followed like in a shell.
    return found._replace(shell=("\n".join(shell), *found.shell))  # noqa: S604


def split_cell(code: str) -> tuple[str, list[str]]:
    """(the cell's Python, the shell lines its escapes and magics amount to)."""
    code = code.encode("utf-8", "surrogatepass").decode("utf-8", "replace")  # RE2 takes UTF-8
    lines = code.splitlines()[:_MAX_LINES]
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        cell = _cell_magic(lines[first].strip()[2:], "\n".join(lines[first + 1 :]))
        if cell is not None:
            return cell
        lines = lines[first + 1 :]
    python: list[str] = []
    shell: list[str] = []
    for line in lines:
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        command = _escape(stripped)
        if command is None:
            python.append(line)
            continue
        shell.append(command)
        # `{expr}` expands a Python value; when the expression fails IPython keeps the text
        # (`!awk 'BEGIN{system("...")}'`): both readings are judged.
        interpolated = str(_INTERPOLATION.sub("${IPYTHON_VALUE}", command))
        if interpolated != command:
            shell.append(interpolated)
        python.append(indent + "pass")
    return "\n".join(python), shell


def _cell_magic(head: str, body: str) -> tuple[str, list[str]] | None:
    words = head.split()
    if not words:
        return None
    name = words[0]
    if name in _CELL_SHELLS:
        program = words[1] if name == "script" and len(words) > 1 else "bash"
        if program.rsplit("/", 1)[-1] in _PYTHONS:
            return body, []
        # The program reads the cell on standard input, like a here-document.
        return "", [f"{program} <<'__IPYTHON_CELL__'\n{body}\n__IPYTHON_CELL__"]
    if name == "writefile":
        rest = [w for w in words[1:] if not w.startswith("-")]
        if not rest:
            return "", []
        mode = ">>" if "-a" in words[1:] or "--append" in words[1:] else ">"
        target = shlex.quote(rest[0])
        return "", [f"cat {mode} {target} <<'__IPYTHON_CELL__'\n{body}\n__IPYTHON_CELL__"]
    return None  # %%time, %%capture...: the rest of the cell is Python


def _escape(stripped: str) -> str | None:
    """The shell line a cell line amounts to, or None for a line of Python."""
    if stripped.startswith("!"):
        return _words(stripped.lstrip("!"))
    assigned = _assigned_escape(stripped)
    if assigned is not None:
        return assigned
    if stripped.startswith("%") and not stripped.startswith("%%"):
        name, _, rest = stripped[1:].partition(" ")
        return _magic(name, rest)
    name, _, rest = stripped.partition(" ")
    # Automagic: `cat /etc/shadow` is no Python, so IPython runs the alias.
    if name in _ALIASES and rest and not _is_python(stripped):
        return _words(stripped)
    return None


def _assigned_escape(stripped: str) -> str | None:
    """`files = !ls`, `out = %sx cmd`."""
    target, sep, value = stripped.partition("=")
    if not sep or not target.strip().isidentifier() or value.startswith("="):
        return None
    value = value.lstrip()
    if value.startswith("!"):
        return _words(value.lstrip("!"))
    if value.startswith("%"):
        name, _, rest = value[1:].partition(" ")
        return _magic(name, rest)
    return None


def _magic(name: str, rest: str) -> str | None:
    if name in _SHELL_MAGICS:
        return _words(rest)
    if name in _ALIASES:
        return _words(f"{name} {rest}")
    if name == "pycat":
        return _words(f"cat {rest}")
    if name == "load":
        return _words(f"cat {rest}")
    if name == "cd":
        return _words(f"cd {rest}" if rest.strip() else "cd")
    if name == "run":
        return _words(f"python3 {rest}")
    if name == "env" and "=" in rest:
        return _words(f"export {rest.strip().replace(' ', '', 1)}")
    if name in ("pip", "conda", "mamba", "uv"):
        return _words(f"{name} {rest}")
    return None


def _words(command: str) -> str:
    return command.strip()


def _is_python(line: str) -> bool:
    try:
        compile(line, "<cell>", "exec")
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError):
        return False
    return True

"""How command lines hand code to interpreters: `python3 -c CODE`, `node -e`, `deno eval`,
`ruby -e`, `perl -ne`, `php -r`, `pwsh -Command ...`, `pwsh -EncodedCommand B64`, and an
interpreter reading its program from standard input (`python3 - <<EOF`, `... | pwsh -`).

Each interpreter's options that take a value are skipped with their value, so
`python3 -W ignore -c CODE` finds CODE and `perl -I lib -e CODE` does not mistake `lib`
for code. Code in files (`python3 x.py`) is not read here.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence

from sidecar.code.app_consoles import app_console_code
from sidecar.code.values import b64decode
from sidecar.shell.walk import STANDARD_INPUT

Found = list[tuple[str, str]]


def code_invocations(
    program: str, args: Sequence[str], stdin_text: str | None = None
) -> list[tuple[str, str]]:
    """The (language, code) pairs a command line hands to an interpreter. `program` may be
    a path (`/usr/bin/python3`); `stdin_text` is what the command reads on standard input
    (a here-document, a here-string), when known."""
    name = program.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower()
    name = name.removesuffix(".exe")
    console = app_console_code(name, args)
    if console:
        return console
    reader = _reader(name)
    if reader is None:
        return []
    # `python3 /dev/stdin <<EOF`: the program file is standard input, as with `-`.
    words = ["-" if a in STANDARD_INPUT else a for a in args]
    return reader(words, stdin_text)


def _reader(name: str) -> Callable[[list[str], str | None], Found] | None:
    if name in ("python", "python2", "python3", "pypy", "pypy3") or _versioned(name, "python"):
        return _python
    if name in ("node", "nodejs"):
        return _node
    if name == "deno":
        return _deno
    if name == "bun":
        return _bun
    if name in ("ruby", "jruby", "truffleruby") or _versioned(name, "ruby"):
        return _ruby
    if name == "perl" or _versioned(name, "perl"):
        return _perl
    if name == "php" or _versioned(name, "php"):
        return _php
    if name in ("pwsh", "powershell", "pwsh-preview"):
        return _powershell
    if name == "osascript":
        return _osascript
    if name == "dotnet":
        return _dotnet
    if name in _OTHER_INTERPRETERS or (name.startswith("lua") and _versioned(name, "lua")):
        options = _OTHER_INTERPRETERS.get(name, _OTHER_INTERPRETERS["lua"])
        return lambda args, stdin_text: _inline_options(options, args, stdin_text)
    return None


# Interpreters of languages analysed by their literals only (sidecar.code.generic): the
# options that give inline code, joined in order (`osascript -e A -e B`).
_OTHER_INTERPRETERS: dict[str, frozenset[str]] = {
    "lua": frozenset({"-e"}),
    "luajit": frozenset({"-e"}),
    "texlua": frozenset({"-e"}),
    "rscript": frozenset({"-e"}),
    "r": frozenset({"-e"}),
    "julia": frozenset({"-e", "--eval", "-E", "--print"}),
    "tclsh": frozenset(),
    "wish": frozenset(),
    "expect": frozenset({"-c"}),
    "guile": frozenset({"-c"}),
    "racket": frozenset({"-e", "--eval"}),
    "sbcl": frozenset({"--eval"}),
    "clojure": frozenset({"-e", "--eval"}),
    "groovy": frozenset({"-e"}),
    "jshell": frozenset(),  # Java snippets from a file or standard input
    "elixir": frozenset({"-e", "--eval"}),
    "erl": frozenset({"-eval"}),
    "scala": frozenset({"-e"}),
    "kotlinc": frozenset({"-e", "-script"}),
    "swift": frozenset({"-e"}),
    "crystal": frozenset({"eval"}),
    "nim": frozenset({"--eval"}),
}


def _inline_options(options: frozenset[str], args: list[str], stdin_text: str | None) -> Found:
    """Code after any of `options`; else, with no script file, the code on standard input."""
    pieces: list[str] = []
    script = False
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word in options:
            if index < len(args):
                pieces.append(args[index])
            index += 1
        elif word.startswith("--") and "=" in word and word.split("=", 1)[0] in options:
            pieces.append(word.split("=", 1)[1])
        elif word == "-":
            return _stdin("generic", stdin_text)
        elif not word.startswith("-") and not pieces:
            script = True
            break
    if pieces:
        return [("generic", "\n".join(pieces))]
    return [] if script else _stdin("generic", stdin_text)


def _osascript(args: list[str], stdin_text: str | None) -> Found:
    """`osascript -l JavaScript -e CODE` is JXA, JavaScript for Automation; without `-l`
    (or `-l AppleScript`) the code is AppleScript."""
    language = "generic"
    rest: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        if word == "-l" and index + 1 < len(args):
            if args[index + 1].lower() == "javascript":
                language = "javascript"
            index += 2
            continue
        rest.append(word)
        index += 1
    found = _inline_options(frozenset({"-e"}), rest, stdin_text)
    return [(language, code) for _, code in found]


def _dotnet(args: list[str], stdin_text: str | None) -> Found:
    """`dotnet script eval CODE` (dotnet-script) runs C# given inline."""
    if len(args) >= 3 and args[0] == "script" and args[1] == "eval":
        return [("generic", args[2])]
    return []


def _versioned(name: str, base: str) -> bool:
    """python3.11, python2.7, ruby3.2, php8.2, perl5.36."""
    rest = name.removeprefix(base)
    return rest != name and bool(rest) and all(c.isdigit() or c == "." for c in rest)


def _stdin(language: str, stdin_text: str | None) -> Found:
    return [(language, stdin_text)] if stdin_text is not None else []


# --- python --------------------------------------------------------------------------------

_PYTHON_VALUE = frozenset("WXQ")  # -W arg, -X opt, -Q (Python 2) take a value
_PYTHON_LONG_VALUE = frozenset({"--check-hash-based-pycs"})


def _python(args: list[str], stdin_text: str | None) -> Found:
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word in _PYTHON_LONG_VALUE:
            index += 1
            continue
        if word.startswith("--"):
            if word == "--":
                break
            continue
        if word == "-":
            return _stdin("python", stdin_text)
        if word.startswith("-") and len(word) > 1:
            cluster = word[1:]
            for position, letter in enumerate(cluster):
                rest = cluster[position + 1 :]
                if letter == "c":
                    code = rest if rest else (args[index] if index < len(args) else None)
                    return [("python", code)] if code is not None else []
                if letter == "m":
                    return []  # a module runs: its code is not on the line
                if letter in _PYTHON_VALUE:
                    if not rest:
                        index += 1
                    break
            continue
        return []  # a script file
    return _stdin("python", stdin_text)


# --- javascript ----------------------------------------------------------------------------

_NODE_VALUE = frozenset(
    {
        "-r",
        "--require",
        "--import",
        "--loader",
        "--experimental-loader",
        "-C",
        "--conditions",
        "--title",
        "--input-type",
        "--env-file",
        "--stack-size",
        "--max-old-space-size",
        "--inspect-port",
        "--disable-warning",
        "--watch-path",
        "--test-reporter",
    }
)


def _node(args: list[str], stdin_text: str | None) -> Found:
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        option, has_value, attached = word.partition("=")
        if option in ("-e", "--eval", "-p", "--print", "-pe", "-ep"):
            code = attached if has_value else (args[index] if index < len(args) else None)
            return [("javascript", code)] if code is not None else []
        if word == "-":
            return _stdin("javascript", stdin_text)
        if word == "--":
            break
        if option in _NODE_VALUE and not has_value:
            index += 1
            continue
        if word.startswith("-"):
            continue
        return []  # a script file
    return _stdin("javascript", stdin_text)


_DENO_VALUE = frozenset(
    {
        "--ext",
        "--config",
        "-c",
        "--import-map",
        "--location",
        "--seed",
        "--v8-flags",
        "--cert",
        "--lock",
        "--env-file",
        "--inspect",
    }
)


def _deno(args: list[str], stdin_text: str | None) -> Found:
    if not args:
        return []
    command, rest = args[0], args[1:]
    if command == "eval":
        index = 0
        while index < len(rest):
            word = rest[index]
            index += 1
            option, has_value, _ = word.partition("=")
            if option in _DENO_VALUE and not has_value:
                index += 1
                continue
            if word.startswith("-"):
                continue
            return [("javascript", word)]
        return []
    if command == "run" and "-" in rest:
        return _stdin("javascript", stdin_text)
    return []


def _bun(args: list[str], stdin_text: str | None) -> Found:
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        option, has_value, attached = word.partition("=")
        if option in ("-e", "--eval", "-p", "--print"):
            code = attached if has_value else (args[index] if index < len(args) else None)
            return [("javascript", code)] if code is not None else []
        if word in ("-", "run") and word == "-":
            return _stdin("javascript", stdin_text)
        if not word.startswith("-"):
            return []
    return []


# --- ruby, perl, php -----------------------------------------------------------------------

_RUBY_VALUE = frozenset("IrCEFxK")  # options whose value follows (attached or next word)


def _ruby(args: list[str], stdin_text: str | None) -> Found:
    pieces: list[str] = []
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--":
            break
        if word.startswith("--"):
            if word in ("--encoding", "--external-encoding", "--internal-encoding"):
                index += 1
            continue
        if word == "-":
            return _stdin("ruby", stdin_text)
        if word.startswith("-") and len(word) > 1:
            cluster = word[1:]
            for position, letter in enumerate(cluster):
                rest = cluster[position + 1 :]
                if letter == "e":
                    code = rest if rest else (args[index] if index < len(args) else "")
                    if not rest:
                        index += 1
                    pieces.append(code)
                    break
                if letter in _RUBY_VALUE:
                    if not rest:
                        index += 1
                    break
            continue
        break  # a script file (or, after -e, ARGV)
    if pieces:
        return [("ruby", "\n".join(pieces))]
    if index >= len(args) and not any(not a.startswith("-") for a in args):
        return _stdin("ruby", stdin_text)
    return []


# Perl options that take the rest of their cluster as value (-Ilib, -MIO::Socket,
# -i.bak), some also the next word when nothing is attached; -l and -0 take digits.
_PERL_REST = frozenset("IMmxiDdV")
_PERL_NEXT = frozenset("IMm")
_PERL_DIGITS = frozenset("l0C")


def _perl(args: list[str], stdin_text: str | None) -> Found:
    pieces: list[str] = []
    index = 0
    script_seen = False
    while index < len(args):
        word = args[index]
        index += 1
        if word == "--":
            break
        if word == "-":
            return _stdin("perl", stdin_text)
        if word.startswith("-") and len(word) > 1:
            cluster = word[1:]
            position = 0
            while position < len(cluster):
                letter = cluster[position]
                rest = cluster[position + 1 :]
                position += 1
                if letter in ("e", "E"):
                    code = rest if rest else (args[index] if index < len(args) else "")
                    if not rest:
                        index += 1
                    pieces.append(code)
                    break
                if letter in _PERL_DIGITS:
                    while position < len(cluster) and cluster[position] in "0123456789abcdefxX":
                        if letter != "0" and not cluster[position].isdigit():
                            break
                        position += 1
                    continue
                if letter in _PERL_REST:
                    if not rest and letter in _PERL_NEXT:
                        index += 1
                    break
            continue
        script_seen = True
        break
    if pieces:
        return [("perl", "\n".join(pieces))]
    if not script_seen:
        return _stdin("perl", stdin_text)
    return []


_PHP_VALUE = frozenset("cdzt")  # -c ini, -d key=value, -z file, -t root


def _php(args: list[str], stdin_text: str | None) -> Found:
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word in ("-r", "--run"):
            return [("php", args[index])] if index < len(args) else []
        if word.startswith("-r") and len(word) > 2 and not word.startswith("--"):
            return [("php", word[2:])]
        if word in ("-B", "-R", "-E", "--process-begin", "--process-code", "--process-end"):
            return [("php", args[index])] if index < len(args) else []
        if word == "--":
            break
        if word.startswith("-") and len(word) == 2 and word[1] in _PHP_VALUE:
            index += 1
            continue
        if word.startswith("-"):
            if word in ("-S",):  # the built-in web server: not code
                return []
            continue
        return []  # a script file
    return _stdin("php", stdin_text)


# --- powershell ----------------------------------------------------------------------------

# Parameters that take a value, by full name; any unambiguous prefix is accepted.
_PS_VALUE = (
    "executionpolicy",
    "inputformat",
    "outputformat",
    "workingdirectory",
    "windowstyle",
    "configurationname",
    "configurationfile",
    "custompipename",
    "settingsfile",
    "psconsolefile",
    "version",
    "file",
)
_PS_SHORT = {
    "ep": "executionpolicy",
    "ex": "executionpolicy",
    "if": "inputformat",
    "of": "outputformat",
    "wd": "workingdirectory",
    "w": "windowstyle",
    "f": "file",
    "c": "command",
    "e": "encodedcommand",
    "ec": "encodedcommand",
    "en": "encodedcommand",
    "enc": "encodedcommand",
    "v": "version",
    "nop": "noprofile",
    "noni": "noninteractive",
    "nol": "nologo",
    "noe": "noexit",
    "ea": "encodedarguments",
}
_PS_ALL = (
    *_PS_VALUE,
    "command",
    "encodedcommand",
    "encodedarguments",
    "noprofile",
    "noninteractive",
    "nologo",
    "noexit",
    "sta",
    "mta",
    "login",
    "interactive",
    "noprofileloadtime",
    "help",
)


def _ps_parameter(word: str) -> str | None:
    if not word.startswith(("-", "/")) or len(word) < 2:
        return None
    name = word.lstrip("-/").split(":", 1)[0].lower()
    if name in _PS_SHORT:
        return _PS_SHORT[name]
    matches = [p for p in _PS_ALL if p.startswith(name)]
    return matches[0] if len(matches) == 1 else name


def _powershell(args: list[str], stdin_text: str | None) -> Found:
    index = 0
    while index < len(args):
        word = args[index]
        index += 1
        if word == "-":
            return _stdin("powershell", stdin_text)
        parameter = _ps_parameter(word)
        if parameter is None:
            # the first positional: a script file for pwsh (`.ps1`), a command otherwise
            if word.lower().endswith(".ps1"):
                return []
            return [("powershell", " ".join(args[index - 1 :]))]
        if parameter == "command":
            rest = args[index:]
            if rest == ["-"]:
                return _stdin("powershell", stdin_text)
            return [("powershell", " ".join(rest))] if rest else _stdin("powershell", stdin_text)
        if parameter == "encodedcommand":
            if index >= len(args):
                return []
            return [("powershell", _utf16_base64(args[index]))]
        if parameter in _PS_VALUE:
            if parameter == "file":
                return []
            index += 1
    return _stdin("powershell", stdin_text)


def _utf16_base64(text: str) -> str:
    """-EncodedCommand: base64 of UTF-16LE. Text that does not decode is passed on as is
    (PowerShell would refuse it; the analysis then finds nothing it can run)."""
    raw = b64decode(text)
    if raw is None:
        try:
            raw = base64.b64decode(text + "==")
        except (binascii.Error, ValueError):
            return text
    return raw.decode("utf-16-le", "replace")

"""Turn a shell command line into the simple commands that would run.

Parsing uses tree-sitter-bash (linear time, never executes anything). The walk
is iterative so deep nesting cannot exhaust Python's stack. Quoted text stays
data; only nodes that the shell would execute become commands. Wrappers
(sudo, env, timeout, xargs, ...) are unwrapped, and strings handed to a shell
(`bash -c`, `eval`, here-documents, `echo ... | sh`) are parsed again, up to a
depth limit. Whatever cannot be resolved statically is reported as a problem,
which the security inspector turns into at least an approval.
"""

from __future__ import annotations

import codecs
import functools
import itertools
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import re2
import tree_sitter_bash
from tree_sitter import Language, Node, Parser, Tree

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"})
MAX_NESTING = 6


@dataclass(frozen=True, slots=True)
class WrapperSpec:
    """How to find the wrapped command among a wrapper's arguments."""

    value_options: frozenset[str] = frozenset()  # options that take the next word
    skip_positionals: int = 0  # positionals before the command (timeout's duration)
    not_executing_flags: frozenset[str] = frozenset()  # `command -v rm` runs nothing
    skip_assignments: bool = False  # env NAME=VALUE cmd


def _spec(
    values: str = "", skip: int = 0, inert: str = "", assignments: bool = False
) -> WrapperSpec:
    return WrapperSpec(frozenset(values.split()), skip, frozenset(inert.split()), assignments)


DEFAULT_WRAPPERS: Mapping[str, WrapperSpec] = {
    "sudo": _spec("-u -g -p -C -h -U -r -t -T -D --user --group --prompt", assignments=True),
    "doas": _spec("-u -C"),
    "env": _spec("-u -C --unset --chdir", assignments=True),
    "timeout": _spec("-s -k --signal --kill-after", skip=1),
    "nice": _spec("-n --adjustment"),
    "ionice": _spec("-c -n -p --class --classdata"),
    "nohup": _spec(),
    "setsid": _spec(),
    "command": _spec(inert="-v -V"),
    "builtin": _spec(),
    "exec": _spec("-a"),
    "stdbuf": _spec("-i -o -e --input --output --error"),
    "time": _spec("-f -o --format --output"),
    "xargs": _spec(
        "-I -i -n -P -L -l -d -E -e -s -a --max-args --max-procs --delimiter "
        "--arg-file --replace --max-lines --eof"
    ),
    "busybox": _spec(),
    "chroot": _spec("--userspec --groups", skip=1),
    "watch": _spec("-n -d --interval"),
    "unbuffer": _spec(),
    "caffeinate": _spec(),
    "torsocks": _spec(),
    "proxychains": _spec("-f"),
    "proxychains4": _spec("-f"),
    "flock": _spec("-w -E --timeout", skip=1),
    "runuser": _spec("-u -g --user --group"),
}


# Results are NamedTuples: immutable and hashable like frozen dataclasses, but about
# four times cheaper to build, and the walk builds one per command it finds.
class Redirect(NamedTuple):
    operator: str  # ">", ">>", "<", "&>", ...
    target: str


class SimpleCommand(NamedTuple):
    """One program invocation, after unwrapping."""

    program: str  # basename of the executable ("rm" for "/bin/rm")
    args: tuple[str, ...]  # every word after the program, resolved where static
    flags: frozenset[str]  # "-rf" gives r, f and rf; "--force=x" gives force
    positionals: tuple[str, ...]  # non-flag arguments (after "--" everything)
    redirects: tuple[Redirect, ...] = ()
    input_from: SimpleCommand | None = None  # whose output this command reads or runs
    wrappers: tuple[str, ...] = ()
    via: str = ""  # how it was reached: "bash -c", "eval", "xargs", "heredoc", ...

    def has_flag(self, *names: str) -> bool:
        return any(n in self.flags for n in names)


class ShellAnalysis(NamedTuple):
    commands: tuple[SimpleCommand, ...]
    problems: tuple[str, ...]  # what cannot be resolved statically
    parse_error: bool = False
    recursive_functions: tuple[str, ...] = ()  # functions that call themselves (fork bombs)


class _Dynamic(str):
    """A word whose value is only known at run time ($X, $(cmd)); it holds the source text.

    Static words are plain strings: most words are, and a str costs nothing to make.
    """

    __slots__ = ()


def _dynamic(word: str) -> bool:
    return type(word) is _Dynamic


@dataclass(slots=True)
class _Walk:
    wrappers: Mapping[str, WrapperSpec]
    source: str = ""  # the script whose tree is being walked (nested scripts swap it)
    commands: list[SimpleCommand] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    parse_error: bool = False
    recursive_functions: list[str] = field(default_factory=list)


_LANGUAGE = Language(tree_sitter_bash.language())
_PARSERS = threading.local()
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _parser() -> Parser:
    """One parser per thread: a tree-sitter Parser is not thread-safe, and policies
    compile (parsing rule examples) in a worker thread while calls are inspected."""
    parser: Parser | None = getattr(_PARSERS, "parser", None)
    if parser is None:
        parser = Parser(_LANGUAGE)
        _PARSERS.parser = parser
    return parser


def analyse(script: str, wrappers: Mapping[str, WrapperSpec] = DEFAULT_WRAPPERS) -> ShellAnalysis:
    """Every simple command that `script` could run, with what could not be resolved."""
    if wrappers is DEFAULT_WRAPPERS:
        return _analyse_default(script)
    return _run(script, wrappers)


@functools.lru_cache(maxsize=2048)
def _analyse_default(script: str) -> ShellAnalysis:
    return _run(script, DEFAULT_WRAPPERS)


def _run(script: str, wrappers: Mapping[str, WrapperSpec]) -> ShellAnalysis:
    walk = _Walk(wrappers)
    _walk_script(walk, script, depth=0, via="", input_from=None)
    return ShellAnalysis(
        tuple(walk.commands),
        tuple(dict.fromkeys(walk.problems)),
        walk.parse_error,
        tuple(dict.fromkeys(walk.recursive_functions)),
    )


def _walk_script(
    walk: _Walk, script: str, depth: int, via: str, input_from: SimpleCommand | None
) -> None:
    if depth > MAX_NESTING:
        walk.problems.append("shell code nested too deeply to analyse")
        return
    # tree-sitter-bash 0.25 can crash the process on some non-ASCII input (seen with
    # astral-plane characters). Shell syntax is ASCII, so parse a stand-in where every
    # other character is one ASCII letter, and read all text from the original.
    stand_in = script if script.isascii() else _NON_ASCII.sub("a", script)
    tree = _parser().parse(stand_in.encode("ascii"))
    outer = walk.source
    walk.source = script
    try:
        _walk_tree(walk, tree, depth, via, input_from)
    finally:
        walk.source = outer


def _walk_tree(
    walk: _Walk, tree: Tree, depth: int, via: str, input_from: SimpleCommand | None
) -> None:
    root = tree.root_node
    broken = root.has_error  # covers every ERROR and MISSING node below
    if broken:
        walk.parse_error = True
    source = walk.source
    # Code hides inside a word only behind `$(`, backticks or `<(`/`>(` (and the grammar
    # reads `print(x)` as a command holding a subshell): without these characters a
    # command's own children cannot hold another command. Error recovery can put
    # anything anywhere, so a broken tree is searched everywhere.
    nested = broken or "$" in source or "`" in source or "(" in source
    previous_stage: dict[int, int] = {}  # pipeline stage id -> the stage feeding it
    stage_heads: dict[int, SimpleCommand] = {}  # node id -> the last command inside it
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind == "command":
            around = _stage_ancestors(node)
            # A pipeline is visited before anything inside it, so with none seen yet
            # this command neither reads from a pipe nor feeds one.
            feed, piped = (
                _feed_of(node, around, previous_stage, stage_heads)
                if previous_stage
                else (None, False)
            )
            if not piped and depth:
                feed = input_from
            head = _command(walk, node, around, depth, via, feed, nested)
            if head is not None and previous_stage:
                for inside in (node, *around):  # the last command inside a stage feeds the next
                    stage_heads[inside.id] = head
            if not nested:
                continue
        elif kind == "pipeline":
            stages = [c for c in node.named_children if c.type != "comment"]
            for before, after in itertools.pairwise(stages):
                previous_stage[after.id] = before.id
        elif kind in ("declaration_command", "unset_command"):
            _declaration(walk, node, via, depth)
        elif (
            kind == "variable_assignment"
            and node.parent is not None
            and node.parent.type
            in ("program", "list", "compound_statement", "subshell", "do_group")
        ):
            text = _assignment(node, source)  # a bare FOO=1 statement
            walk.commands.append(SimpleCommand("(assign)", (text,), _NO_FLAGS, (text,), via=via))
            _follow_variable(walk, text, via, depth)
        elif kind == "function_definition" and _calls_itself(node, source):
            name = node.child_by_field_name("name")
            walk.recursive_functions.append(_text(name, source) if name is not None else "?")
        elif kind in ("raw_string", "heredoc_body", "comment"):
            continue  # data, never executed by itself
        # Anonymous tokens and leaf words hold no commands: skip them unvisited.
        stack.extend(c for c in reversed(node.named_children) if c.type not in _LEAVES)


def _declaration(walk: _Walk, node: Node, via: str, depth: int) -> None:
    """export/declare/local/readonly/unset: builtins that change the shell's variables."""
    source = walk.source
    keyword = next((c for c in node.children if not c.is_named), None)
    program = keyword.type if keyword is not None else "export"
    args = tuple(
        _assignment(c, source) if c.type == "variable_assignment" else _resolve(c, source)
        for c in node.named_children
    )
    flags, positionals = _split_flags(args)
    walk.commands.append(SimpleCommand(program, args, flags, positionals, via=via))
    for assignment in args:
        _follow_variable(walk, assignment, via, depth)


# Environment variables whose value some program runs as a shell command.
COMMAND_VARIABLES = frozenset({
    "GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
    "GIT_EXTERNAL_DIFF", "GIT_PROXY_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS",
    "PAGER", "MANPAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "FCEDIT", "PROMPT_COMMAND",
    "BASH_ENV", "ENV", "LESSOPEN", "LESSCLOSE", "RSYNC_RSH", "CVS_RSH", "BROWSER",
})  # fmt: skip
# Variables that load code into whatever runs next: recorded as (assign) for rules.
LOADER_VARIABLES = frozenset({
    "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES",
    "DYLD_LIBRARY_PATH", "PYTHONSTARTUP", "PYTHONPATH", "PERL5OPT", "PERL5LIB", "RUBYOPT",
    "NODE_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
})  # fmt: skip


def _follow_variable(walk: _Walk, assignment: str, via: str, depth: int = 0) -> None:
    """NAME=value where a program will run the value as a command: parse the value."""
    name, _, value = assignment.partition("=")
    if name in COMMAND_VARIABLES and value:
        _walk_script(walk, value, depth + 1, f"{name}=", None)


def _prefix_assignments(walk: _Walk, command: Node, via: str, depth: int) -> None:
    """`GIT_SSH_COMMAND='...' git fetch`, `LD_PRELOAD=x.so ls`: variables set for one command."""
    source = walk.source
    for child in command.named_children:
        if child.type != "variable_assignment":
            break  # assignments come first, before the command name
        text = _assignment(child, source)
        name = text.partition("=")[0]
        if name in COMMAND_VARIABLES or name in LOADER_VARIABLES:
            walk.commands.append(SimpleCommand("(assign)", (text,), _NO_FLAGS, (text,), via=via))
            _follow_variable(walk, text, via, depth)


def _assignment(node: Node, source: str) -> str:
    name = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    left = _text(name, source) if name is not None else ""
    return f"{left}={_resolve(value, source)}" if value is not None else f"{left}="


def _calls_itself(function: Node, source: str) -> bool:
    name_node = function.child_by_field_name("name")
    body = function.child_by_field_name("body")
    if name_node is None or body is None:
        return False
    name = _text(name_node, source)
    stack = [body]
    while stack:
        node = stack.pop()
        if node.type == "command":
            called = node.child_by_field_name("name")
            if called is not None and _resolve(called, source) == name:
                return True
        stack.extend(node.named_children)
    return False


_RESERVED_WORDS = frozenset(
    {
        "{",
        "}",
        "(",
        ")",
        "!",
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "do",
        "done",
        "while",
        "until",
        "for",
        "case",
        "esac",
        "function",
        "[[",
        "]]",
        "in",
        "select",
        "coproc",
    }
)
_LEAVES = frozenset(
    {
        "word",
        "number",
        "raw_string",
        "string_content",
        "variable_name",
        "file_descriptor",
        "comment",
        "heredoc_start",
        "heredoc_end",
        "special_variable_name",
        "regex",
        "ansi_c_string",
        "test_operator",
        "extglob_pattern",
    }
)
# Nodes through which a pipeline's data flows to the commands inside them.
_STAGE_CONTAINERS = frozenset(
    {
        "pipeline",
        "redirected_statement",
        "subshell",
        "compound_statement",
        "list",
        "negated_command",
    }
)
_MAX_STAGE_DEPTH = 64  # deeper nesting is not worth following, and keeps this linear
_NO_FLAGS: frozenset[str] = frozenset()


def _stage_ancestors(command: Node) -> list[Node]:
    """The unbroken run of containers above a command: its pipes and redirects live there."""
    found: list[Node] = []
    current = command.parent
    while (
        current is not None and len(found) < _MAX_STAGE_DEPTH and current.type in _STAGE_CONTAINERS
    ):
        found.append(current)
        current = current.parent
    return found


def _feed_of(
    command: Node,
    around: list[Node],
    previous_stage: dict[int, int],
    producers: dict[int, SimpleCommand],
) -> tuple[SimpleCommand | None, bool]:
    """The command whose output this one reads through a pipe, and whether it is piped."""
    for inside in (command, *around):
        stage = previous_stage.get(inside.id)
        if stage is not None:
            return producers.get(stage), True
    return None, False


def _command(
    walk: _Walk,
    node: Node,
    around: list[Node],
    depth: int,
    via: str,
    input_from: SimpleCommand | None,
    nested: bool,
) -> SimpleCommand | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    source = walk.source
    if "=" in source:
        first = node.child(0)
        if first is not None and first.type == "variable_assignment":
            _prefix_assignments(walk, node, via, depth)
    arguments = node.children_by_field_name("argument")
    words = [_resolve(name_node, source)]
    words += [_resolve(c, source) for c in arguments]
    redirect_nodes = _redirect_nodes(node, around)
    redirects, heredoc = _redirects(redirect_nodes, source) if redirect_nodes else ((), None)
    if input_from is None and nested:
        input_from = _substituted_command(arguments, source)
        if input_from is None and redirect_nodes:
            input_from = _redirected_substitution(redirect_nodes, source)
    return _emit(walk, words, redirects, heredoc, depth, via, input_from, wrappers=())


def _emit(
    walk: _Walk,
    words: list[str],
    redirects: tuple[Redirect, ...],
    heredoc: str | None,
    depth: int,
    via: str,
    input_from: SimpleCommand | None,
    wrappers: tuple[str, ...],
) -> SimpleCommand | None:
    if not words:
        return None
    name = words[0]
    if _dynamic(name):
        walk.problems.append(f"command name is computed at run time: {name[:80]}")
        return None
    program = _program_name(name)
    if not program:
        return None
    if _only_keywords(program):
        # `sudo { rm -rf /; }`: judge what follows the keyword, to be safe.
        return _emit(walk, words[1:], redirects, heredoc, depth, via, input_from, wrappers)
    rest = words[1:]
    spec = walk.wrappers.get(program)
    if spec is not None:
        own_options = itertools.takewhile(lambda w: w.startswith("-"), rest)
        if any(w in spec.not_executing_flags for w in own_options):
            return _record(walk, program, rest, redirects, input_from, wrappers, via)
        inner = _unwrap(rest, spec)
        # The wrapper runs too (sudo, chroot): rules may care about it as well.
        wrapper = _record(walk, program, rest, redirects, input_from, wrappers, via)
        if not inner:
            return wrapper  # `env` alone prints the environment
        if program == "env":
            inner = _env_split_string(rest, inner)
        if program == "xargs":
            # xargs appends what it reads to the command: use it where it is static.
            # With -0 or -d the input is not split at blanks: `echo rm -rf / | xargs -0
            # bash -c` hands bash the whole line as one script.
            whole = any(
                w in ("-0", "--null") or w.startswith(("-d", "--delimiter"))
                for w in itertools.takewhile(lambda w: w.startswith("-"), rest)
            )
            inner = inner + _static_output(input_from, split=not whole)
            via = "xargs"
        return _emit(walk, inner, redirects, heredoc, depth, via, input_from, (*wrappers, program))
    command = _record(walk, program, rest, redirects, input_from, wrappers, via)
    if program in _RUNS_CODE:
        _follow_nested(walk, command, rest, heredoc, depth)
    elif program in _WRITES_TEXT and (redirects or program == "tee"):
        _follow_startup_write(walk, command, depth)
    return command


def _only_keywords(program: str) -> bool:
    """A "program" that is nothing but reserved words (`{`, `if`, `" { "`)."""
    if program in _RESERVED_WORDS:
        return True
    if program.isalnum():
        return False  # one plain word that is not reserved
    return all(part in _RESERVED_WORDS for part in program.split())


def _record(
    walk: _Walk,
    program: str,
    rest: list[str],
    redirects: tuple[Redirect, ...],
    input_from: SimpleCommand | None,
    wrappers: tuple[str, ...],
    via: str,
) -> SimpleCommand:
    args = tuple(rest)
    flags, positionals = _split_flags(args)
    command = SimpleCommand(program, args, flags, positionals, redirects, input_from, wrappers, via)
    walk.commands.append(command)
    return command


# Interpreters' options for inline code; that code may hand strings to a shell.
INLINE_CODE_OPTIONS: Mapping[str, tuple[str, ...]] = {
    "python": ("-c",),
    "python2": ("-c",),
    "python3": ("-c",),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"),
    "bun": ("-e", "--eval"),
    "php": ("-r",),
}
_QUOTED = r"'(?:[^'\\]|\\.)*'" + "|" + r'"(?:[^"\\]|\\.)*"'  # a quoted string in code
# os.system("..."), subprocess.run(["rm", "-rf", "/"]), child_process.exec('...'), ...
_SHELL_CALL = re2.compile(
    r"\b(?:system|popen|exec|execSync|spawn|spawnSync|check_output|check_call|call|run|Popen"
    r"|getoutput|getstatusoutput|shell_exec|passthru|proc_open)\s*\(\s*(\[\s*)?"
    rf"({_QUOTED})((?:\s*,\s*(?:{_QUOTED}))*)"
)
_QUOTED_STRING = re2.compile(_QUOTED)
_BACKTICKS = re2.compile(r"`([^`]*)`")  # perl, ruby and php run these through a shell

# git settings whose value git runs as a shell command (aliases and helpers with "!").
GIT_COMMAND_SETTINGS = frozenset({
    "core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "core.askpass",
    "core.gitproxy", "sequence.editor", "diff.external", "gpg.program", "gpg.ssh.program",
    "credential.helper", "uploadpack.packobjectshook", "pager.log", "pager.diff", "pager.show",
})  # fmt: skip
_GIT_COMMAND_SUFFIXES = (
    ".cmd",
    ".command",
    ".textconv",
    ".clean",
    ".smudge",
    ".process",
    ".helper",
)

# Programs whose arguments, input or here-document can be code that runs.
_RUNS_CODE = SHELLS | {"eval", "source", ".", "find", "git"} | INLINE_CODE_OPTIONS.keys()


def _follow_nested(
    walk: _Walk, command: SimpleCommand, rest: list[str], heredoc: str | None, depth: int
) -> None:
    """Parse the code that a command hands to a shell."""
    program = command.program
    if program in SHELLS:
        script_index = _shell_c_index(rest)
        if script_index is not None:
            if script_index >= len(rest):
                return
            script = rest[script_index]
            if _dynamic(script):
                walk.problems.append(f"{program} -c runs code computed at run time")
            _walk_script(walk, script, depth + 1, f"{program} -c", command.input_from)
            return
        if heredoc is not None:
            _walk_script(walk, heredoc, depth + 1, "heredoc", None)
            return
        if not command.positionals or command.positionals[0] == "-":
            _follow_stdin(walk, command, depth)
        return
    if program in ("eval", "source", "."):
        if program == "eval":
            text = " ".join(rest)
            if any(_dynamic(w) for w in rest):
                walk.problems.append("eval runs code computed at run time")
            _walk_script(walk, text, depth + 1, "eval", command.input_from)
        elif command.input_from is not None:
            _follow_stdin(walk, command, depth)
        return
    if program == "find":
        _find_exec(walk, rest, depth)
        return
    if program == "git":
        _git_settings(walk, rest, depth)
        return
    options = INLINE_CODE_OPTIONS.get(program)
    if options is not None:
        for position, word in enumerate(rest[:-1]):
            if word in options:
                for script in _shell_strings(program, rest[position + 1]):
                    _walk_script(walk, script, depth + 1, f"{program} {word}", None)
                return


def _git_settings(walk: _Walk, rest: list[str], depth: int) -> None:
    """`git -c core.pager=CMD log`, `git config alias.x '!CMD'`: git runs these values."""
    settings: list[tuple[str, str]] = []
    for position, word in enumerate(rest[:-1]):
        if word == "-c" and "=" in rest[position + 1]:
            key, _, value = rest[position + 1].partition("=")
            settings.append((key, value))
    if "config" in rest:
        # git config [options] KEY VALUE: the first two words after "config" that are not options.
        words = [w for w in rest[rest.index("config") + 1 :] if not w.startswith("-")]
        if len(words) >= 2:
            settings.append((words[0], words[1]))
    for key, value in settings:
        key = key.lower()
        if key == "core.hookspath":
            walk.problems.append(f"git runs hooks from {value[:80] or 'another directory'}")
            continue
        runs = (
            key in GIT_COMMAND_SETTINGS
            or key.startswith("pager.")
            or key.endswith(_GIT_COMMAND_SUFFIXES)
            or (key.startswith("alias.") and value.startswith("!"))
            or (key.endswith(".helper") and value.startswith("!"))
        )
        if runs and value.strip("!"):
            _walk_script(walk, value.removeprefix("!"), depth + 1, f"git {key}", None)


def _shell_strings(program: str, code: str) -> list[str]:
    """Strings that inline interpreter code passes to a shell (os.system, exec, `...`)."""
    found: list[str] = []
    for call in _SHELL_CALL.finditer(code):
        if call.group(1):  # a list of arguments: join its string items
            items = [_QUOTED_STRING.findall(call.group(2)), _QUOTED_STRING.findall(call.group(3))]
            found.append(" ".join(_unquote(item) for part in items for item in part))
        else:
            found.append(_unquote(call.group(2)))
    if program in ("perl", "ruby", "php"):
        found += _BACKTICKS.findall(code)
    return found


def _unquote(literal: str) -> str:
    body = literal[1:-1]
    if "\\" not in body:
        return body
    return body.replace("\\n", "\n").replace('\\"', '"').replace("\\'", "'").replace("\\\\", "\\")


# Files every new shell runs: text written there is code, and is judged as such.
_STARTUP_NAMES = frozenset({
    ".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zprofile", ".zshenv",
    ".zlogin", ".kshrc", "bash.bashrc", "zshrc", "rc.local",
})  # fmt: skip
_WRITES_TEXT = frozenset({"echo", "printf", "tee"})


def _is_startup_file(path: str) -> bool:
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return name in _STARTUP_NAMES or path.startswith("/etc/profile")


def _follow_startup_write(walk: _Walk, command: SimpleCommand, depth: int) -> None:
    """`echo CODE >> ~/.bashrc`, `echo CODE | tee -a ~/.profile`: parse CODE."""
    if command.program == "tee":
        source = command.input_from
        targets = list(command.positionals)
        if source is None or source.program not in ("echo", "printf"):
            return
    else:
        source = command
        targets = [r.target for r in command.redirects if r.operator in (">", ">>", "&>")]
    for target in targets:
        if _is_startup_file(target):
            text = " ".join(_printed(source)).replace("\\n", "\n")
            _walk_script(walk, text, depth + 1, f"written to {target}", None)
            return


def _follow_stdin(walk: _Walk, shell: SimpleCommand, depth: int) -> None:
    source = shell.input_from
    if source is None:
        return
    if source.program in ("echo", "printf") and source.args:
        body = " ".join(_printed(source))
        _walk_script(
            walk, body.replace("\\n", "\n"), depth + 1, f"piped into {shell.program}", None
        )
    elif source.program in ("cat",) and not source.positionals:
        return
    else:
        walk.problems.append(
            f"{shell.program} executes the output of {source.program or 'another command'}"
        )


def _static_output(source: SimpleCommand | None, split: bool = True) -> list[str]:
    """What echo/printf with literal arguments print, as words (or as one, unsplit)."""
    if source is None or source.program not in ("echo", "printf"):
        return []
    printed = _printed(source)
    if not split:
        return [" ".join(printed)] if printed else []
    return [part for arg in printed for part in arg.split()]


def _printed(source: SimpleCommand) -> list[str]:
    """The arguments echo or printf prints: all but echo's own leading -n/-e/-E options.

    `echo rm -rf /` prints `rm -rf /`: "-rf" is not an echo option, so it is printed.
    """
    args = list(source.args)
    if source.program == "echo":
        while args and len(args[0]) > 1 and args[0][0] == "-" and set(args[0][1:]) <= _ECHO_FLAGS:
            args.pop(0)
    elif args and args[0] == "--":
        args.pop(0)
    return args


_ECHO_FLAGS = frozenset("neE")


def _find_exec(walk: _Walk, rest: list[str], depth: int) -> None:
    # The starting points come before the first expression; {} stands for what is found.
    roots = []
    for word in rest:
        if word.startswith(("-", "(", "!")):
            break
        roots.append(word)
    index = 0
    while index < len(rest):
        if rest[index] in ("-exec", "-execdir", "-ok", "-okdir"):
            end = index + 1
            while end < len(rest) and rest[end] not in (";", "+", "\\;"):
                end += 1
            target = rest[index + 1 : end]
            placeholder = [i for i, w in enumerate(target) if w == "{}"]
            if placeholder and roots:
                at = placeholder[0]
                target = target[:at] + roots + target[at + 1 :]
            _emit(walk, target, (), None, depth, "find -exec", None, ())
            index = end
        index += 1


def _env_split_string(rest: list[str], inner: list[str]) -> list[str]:
    for position, word in enumerate(rest[:-1]):
        if word in ("-S", "--split-string"):
            return rest[position + 1].split() + inner[1:]
    return inner


def _shell_c_index(rest: list[str]) -> int | None:
    """Where the -c script sits among a shell's arguments, if it has one."""
    for position, text in enumerate(rest):
        if text == "--":
            return None
        if text.startswith("-") and not text.startswith("--") and "c" in text[1:]:
            return position + 1
        if not text.startswith("-") and not text.startswith("+"):
            return None
    return None


def _unwrap(rest: list[str], spec: WrapperSpec) -> list[str]:
    index = 0
    skipped = 0
    while index < len(rest):
        text = rest[index]
        if text == "--":
            index += 1
            break
        if text.startswith("-") and len(text) > 1:
            option = text.split("=", 1)[0]
            if option in spec.value_options and "=" not in text:
                index += 2
                continue
            if any(
                text.startswith(v) and len(text) > len(v)
                for v in spec.value_options
                if not v.startswith("--")
            ):
                index += 1  # value attached: -o0, -n10
                continue
            index += 1
            continue
        if spec.skip_assignments and "=" in text and not text.startswith("="):
            index += 1
            continue
        if skipped < spec.skip_positionals:
            skipped += 1
            index += 1
            continue
        break
    return rest[index:]


def _split_flags(args: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    for arg in args:
        if arg[:1] == "-":
            break
    else:
        return _NO_FLAGS, args  # the common case: nothing looks like an option
    flags: set[str] = set()
    positionals: list[str] = []
    options_done = False
    for arg in args:
        if options_done or arg == "-" or not arg.startswith("-"):
            positionals.append(arg)
        elif arg == "--":
            options_done = True
        elif arg.startswith("--"):
            flags.add(arg[2:].split("=", 1)[0])
        else:
            body = arg[1:].split("=", 1)[0]
            flags.add(body)
            flags.update(body)
    return frozenset(flags), tuple(positionals)


def _program_name(text: str) -> str:
    if "/" not in text:
        return text
    return text.rstrip("/").rsplit("/", 1)[-1]


def _redirect_nodes(command: Node, around: list[Node]) -> list[Node]:
    """Redirects on the command and on every enclosing redirected statement.

    tree-sitter attaches `ls && echo x >> f` to the whole list; applying such a
    redirect to every command inside is the conservative reading.
    """
    nodes = command.children_by_field_name("redirect")
    for container in around:
        if container.type == "redirected_statement":
            nodes += container.children_by_field_name("redirect")
    return nodes


def _redirects(nodes: list[Node], source: str) -> tuple[tuple[Redirect, ...], str | None]:
    found: list[Redirect] = []
    heredoc: str | None = None
    for child in nodes:
        if child.type == "file_redirect":
            destination = child.child_by_field_name("destination")
            operator = next((c.type for c in child.children if not c.is_named), "")
            if destination is not None:
                found.append(Redirect(operator, _resolve(destination, source)))
        elif child.type == "heredoc_redirect":
            body = next((c for c in child.named_children if c.type == "heredoc_body"), None)
            heredoc = _text(body, source) if body is not None else ""
        elif child.type == "herestring_redirect":
            heredoc = " ".join(_resolve(w, source) for w in child.named_children)
    return tuple(found), heredoc


def _substituted_command(arguments: list[Node], source: str) -> SimpleCommand | None:
    """The first command whose output is spliced into this command's arguments."""
    for argument in arguments:
        if argument.type in _LEAVES:
            continue  # plain words hold no substitution
        candidates = [argument, *argument.named_children]
        for candidate in candidates:
            if candidate.type in ("command_substitution", "process_substitution"):
                output = _substitution_output(candidate, source)
                if output is not None:
                    return output
    return None


def _redirected_substitution(redirects: list[Node], source: str) -> SimpleCommand | None:
    """cmd < <(producer): the producer feeds the command's input."""
    for redirect in redirects:
        destination = redirect.child_by_field_name("destination")
        if destination is not None and destination.type == "process_substitution":
            output = _substitution_output(destination, source)
            if output is not None:
                return output
    return None


def _substitution_output(substitution: Node, source: str) -> SimpleCommand | None:
    """The command whose output a substitution yields, linked to the stages feeding it:
    `$(echo x | base64 -d)` yields base64, fed by echo. Falls back to the first command."""
    current = substitution
    for _ in range(_MAX_STAGE_DEPTH):
        if current.type == "command":
            return _quick(current, source)
        if current.type == "pipeline":
            feed: SimpleCommand | None = None
            for stage in current.named_children:
                if stage.type == "command":
                    feed = _quick(stage, source, feed) or feed
            if feed is not None:
                return feed
            break
        if current.type == "redirected_statement":
            body = current.child_by_field_name("body")
            if body is None:
                break
            current = body
            continue
        statements = [c for c in current.named_children if c.type != "comment"]
        if not statements:
            break
        current = statements[-1]  # the last statement's output ends the substitution's
    inner = _first_command(substitution)
    return _quick(inner, source) if inner is not None else None


def _first_command(node: Node) -> Node | None:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "command":
            return current
        stack.extend(reversed(current.children))
    return None


def _quick(command: Node, source: str, feed: SimpleCommand | None = None) -> SimpleCommand | None:
    """A command seen only as the producer of another's input."""
    name = command.child_by_field_name("name")
    if name is None:
        return None
    args = tuple(_resolve(c, source) for c in command.children_by_field_name("argument"))
    flags, positionals = _split_flags(args)
    program = _program_name(_resolve(name, source))
    return SimpleCommand(program, args, flags, positionals, input_from=feed)


def _text(node: Node, source: str) -> str:
    # Offsets index the ASCII stand-in, which has one byte per original character.
    return source[node.start_byte : node.end_byte]


_KNOWN_VARIABLES = {"HOME": "~", "USER": "$USER"}


def _resolve(node: Node, source: str) -> str:
    """The static value of a word, or its text as a _Dynamic where it expands at run time."""
    kind = node.type
    if kind == "word" or kind == "number":
        return _unescape(source[node.start_byte : node.end_byte])
    if kind == "command_name":
        children = node.named_children
        if len(children) == 1:
            return _resolve(children[0], source)
        return _join([_resolve(c, source) for c in children] or [_text(node, source)])
    if kind == "raw_string":
        return source[node.start_byte + 1 : node.end_byte - 1]
    if kind == "ansi_c_string":
        return _ansi_c(source[node.start_byte + 2 : node.end_byte - 1])
    if kind == "string":
        parts: list[str] = []
        for child in node.named_children:
            if child.type == "string_content":
                parts.append(_unescape_double(_text(child, source)))
            else:
                parts.append(_resolve(child, source))
        return _join(parts)
    if kind == "concatenation":
        return _join([_resolve(c, source) for c in node.named_children])
    if kind in ("simple_expansion", "expansion"):
        variable = next((c for c in node.named_children if c.type == "variable_name"), None)
        name = _text(variable, source) if variable is not None else ""
        if name in _KNOWN_VARIABLES and len(node.named_children) == 1:
            known = _KNOWN_VARIABLES[name]
            return known if name == "HOME" else _Dynamic(known)
        return _Dynamic("$" + (name or _text(node, source)))
    text = _text(node, source)
    if kind in ("regex", "extglob_pattern"):
        return text
    return _Dynamic(text)  # substitutions, arithmetic and anything unknown


def _join(parts: list[str]) -> str:
    text = "".join(parts)
    return _Dynamic(text) if any(type(p) is _Dynamic for p in parts) else text


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            if char != "\n":
                out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            out.append(char)
    return "".join(out)


def _unescape_double(text: str) -> str:
    if "\\" not in text:
        return text
    for escaped, plain in (('\\"', '"'), ("\\$", "$"), ("\\`", "`"), ("\\\n", "")):
        text = text.replace(escaped, plain)
    return text.replace("\\\\", "\\")


def _ansi_c(body: str) -> str:
    try:
        return codecs.decode(body.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return body

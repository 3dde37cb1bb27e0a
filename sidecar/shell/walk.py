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
import math
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import tree_sitter_bash
from tree_sitter import Language, Node, Parser, Tree

from sidecar.shell.embedded_code import (
    COMMAND_VARIABLES,
    LOADER_VARIABLES,
    embedded_scripts,
    is_startup_file,
    script_in_variable,
    shell_script_index,
)
from sidecar.shell.embedded_code import PROGRAMS as EMBEDDING_PROGRAMS
from sidecar.shell.wrappers import DEFAULT_WRAPPERS, WrapperSpec, unwrap
from sidecar.text import valid_text

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh"})
MAX_NESTING = 6


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
    aliases: dict[str, str] = field(default_factory=dict)  # alias x='...' seen so far
    memo: _Memo | None = None  # top-level commands seen before, by text
    expanded: int = 0  # characters of alias expansions analysed so far
    commands: list[SimpleCommand] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    parse_error: bool = False
    recursive_functions: list[str] = field(default_factory=list)
    deadline: float = math.inf  # time.perf_counter() value past which the walk gives up


class AnalysisBudgetExceeded(Exception):
    """The walk passed its deadline; what it found so far is incomplete."""


_BUDGET_CHECK_EVERY = 256  # nodes between clock reads in the walk loop
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


def analyse(
    script: str,
    wrappers: Mapping[str, WrapperSpec] = DEFAULT_WRAPPERS,
    budget_seconds: float | None = None,
) -> ShellAnalysis:
    """Every simple command that `script` could run, with what could not be resolved.

    With a budget the result is not cached here (the caller keeps its own, bounded in
    bytes) and AnalysisBudgetExceeded is raised once the walk runs past it.
    """
    if budget_seconds is not None:
        return _run(script, wrappers, time.perf_counter() + budget_seconds)
    if wrappers is DEFAULT_WRAPPERS:
        return _analyse_default(script)
    return _run(script, wrappers)


@functools.lru_cache(maxsize=2048)
def _analyse_default(script: str) -> ShellAnalysis:
    return _run(script, DEFAULT_WRAPPERS)


# Shared by every walk with the default wrappers (its entries are immutable; the dict
# operations are atomic, so the policy-compiling thread may use it too).
_DEFAULT_MEMO: _Memo


class _Memo(dict[str, "_Remembered"]):
    """The memo is a dict (its lookups are on the fast path) that also counts the
    bytes it holds: 4,096 texts of 512 characters can expand to far more commands."""

    weight = 0


_DEFAULT_MEMO = _Memo()


def _run(
    script: str, wrappers: Mapping[str, WrapperSpec], deadline: float = math.inf
) -> ShellAnalysis:
    walk = _Walk(wrappers, memo=_DEFAULT_MEMO if wrappers is DEFAULT_WRAPPERS else None)
    walk.deadline = deadline
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
    if depth and time.perf_counter() > walk.deadline:  # nested scripts parse again
        raise AnalysisBudgetExceeded
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
    # Each entry carries its parent's kind and the unbroken run of stage containers above
    # it: asking tree-sitter for a node's parent costs time proportional to its depth.
    stack: list[tuple[Node, str, _Chain | None]] = [(root, "", None)]
    steps = 0
    while stack:
        steps += 1
        if steps % _BUDGET_CHECK_EVERY == 0 and time.perf_counter() > walk.deadline:
            raise AnalysisBudgetExceeded
        node, parent_kind, chain = stack.pop()
        kind = node.type
        if kind == "command":
            around = _containers(chain)
            # A pipeline is visited before anything inside it, so with none seen yet
            # this command neither reads from a pipe nor feeds one.
            feed, piped = (
                _feed_of(node, around, previous_stage, stage_heads)
                if previous_stage
                else (None, False)
            )
            if not piped and depth:
                feed = input_from
            if walk.memo is not None and not nested and not depth and feed is None:
                head = _remembered_command(walk, node, around)
            else:
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
        elif kind == "variable_assignment" and parent_kind in (
            "program",
            "list",
            "compound_statement",
            "subshell",
            "do_group",
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
        below = (node, chain) if kind in _STAGE_CONTAINERS else None
        stack.extend(
            (c, kind, below) for c in reversed(node.named_children) if c.type not in _LEAVES
        )


# What one top-level command adds to a walk: its head, the commands (wrappers and nested
# code included), the problems, and whether nested code failed to parse.
_Remembered = tuple[SimpleCommand | None, tuple[SimpleCommand, ...], tuple[str, ...], bool]
_MEMO_TEXT = 512  # longer commands are walked afresh, not kept
_MEMO_ENTRIES = 4096
_MEMO_BYTES = 16 * 1024 * 1024  # estimated, see _weight


def _remembered_command(walk: _Walk, node: Node, around: list[Node]) -> SimpleCommand | None:
    """A top-level command the walk has seen before, in the same kind of place.

    Agents run the same commands inside ever different lines (`cd x && npm test`,
    `npm test # again`). Outside substitutions, pipes and inherited redirects, what a
    command adds depends on its text alone, so it is remembered by text.
    """
    memo = walk.memo
    assert memo is not None
    text = walk.source[node.start_byte : node.end_byte]
    if (
        walk.aliases
        or len(text) > _MEMO_TEXT
        or any(a.type == "redirected_statement" for a in around)
    ):
        return _command(walk, node, around, 0, "", None, False)
    found = memo.get(text)
    if found is not None:
        head, commands, problems, parse_error = found
        walk.commands.extend(commands)
        walk.problems.extend(problems)
        walk.parse_error |= parse_error
        return head
    commands_before, problems_before, parse_error_before = (
        len(walk.commands),
        len(walk.problems),
        walk.parse_error,
    )
    head = _command(walk, node, around, 0, "", None, False)
    if not walk.aliases:  # an alias definition changes later commands: not a pure result
        commands = tuple(walk.commands[commands_before:])
        weight = len(text) + _weight(commands)
        if len(memo) >= _MEMO_ENTRIES or memo.weight + weight > _MEMO_BYTES:
            memo.clear()
            memo.weight = 0
        memo[text] = (
            head,
            commands,
            tuple(walk.problems[problems_before:]),
            walk.parse_error and not parse_error_before,
        )
        memo.weight += weight
    return head


def _weight(commands: tuple[SimpleCommand, ...]) -> int:
    """Rough bytes held by commands: their words plus object headers."""
    return sum(200 + sum(len(a) + 56 for a in c.args) for c in commands)


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


def _follow_variable(walk: _Walk, assignment: str, via: str, depth: int = 0) -> None:
    """NAME=value where a program will run the value as a command: parse the value."""
    embedded = script_in_variable(assignment)
    if embedded is not None:
        _walk_script(walk, embedded.script, depth + 1, embedded.via, None)


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


# The stage containers above a node, nearest first, as linked pairs built during the walk.
_Chain = tuple[Node, "_Chain | None"]


def _containers(chain: _Chain | None) -> list[Node]:
    """The unbroken run of containers above a command: its pipes and redirects live there."""
    found: list[Node] = []
    while chain is not None and len(found) < _MAX_STAGE_DEPTH:
        found.append(chain[0])
        chain = chain[1]
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
    if walk.aliases and name in walk.aliases:
        return _expand_alias(walk, name, words[1:], depth, input_from)
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
        inner = unwrap(rest, spec)
        # The wrapper runs too (sudo, chroot): rules may care about it as well, with its own
        # options only (`sudo lsof -i` is not `sudo -i`).
        own = rest[: len(rest) - len(inner)]
        wrapper = _record(walk, program, own, redirects, input_from, wrappers, via)
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
            inner = inner + _xargs_input(input_from, split=not whole)
            via = "xargs"
        if program == "parallel":
            # parallel CMD ::: A B: each input after ::: is appended to the command.
            inner = [w for w in inner if w not in (":::", "::::", ":::+")]
            via = "parallel"
        return _emit(walk, inner, redirects, heredoc, depth, via, input_from, (*wrappers, program))
    command = _record(walk, program, rest, redirects, input_from, wrappers, via)
    if program in _RUNS_CODE:
        _follow_nested(walk, command, rest, heredoc, depth)
    elif program in _WRITES_TEXT and (redirects or program == "tee"):
        _follow_startup_write(walk, command, depth)
    elif program == "alias":
        for definition in rest:
            alias, equals, value = definition.partition("=")
            if equals and alias and not alias.startswith("-"):
                walk.aliases[alias] = value
    return command


def _expand_alias(
    walk: _Walk, name: str, rest: list[str], depth: int, input_from: SimpleCommand | None
) -> SimpleCommand | None:
    """`alias x='rm -rf'; x /`: what runs is the alias's text followed by the arguments."""
    text = " ".join([walk.aliases[name], *rest])
    walk.expanded += len(text)
    if walk.expanded > _MAX_EXPANDED:
        # Each use re-reads the alias: a long alias used thousands of times would make
        # the analysis quadratic in the line's length.
        walk.problems.append("aliases expand to more text than can be analysed")
        return None
    value = walk.aliases.pop(name)  # an alias does not expand inside itself
    try:
        _walk_script(walk, text, depth + 1, f"alias {name}", input_from)
    finally:
        walk.aliases[name] = value
    return None


_MAX_EXPANDED = 64 * 1024  # characters of alias expansions analysed per command line
_MAX_FIND_ROOTS = 64  # find starting points put in place of {} (each -exec gets them all)


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


# Programs whose arguments, input or here-document can be code that runs.
_RUNS_CODE = SHELLS | {"eval", "source", ".", "find", "at", "batch"} | EMBEDDING_PROGRAMS


def _follow_nested(
    walk: _Walk, command: SimpleCommand, rest: list[str], heredoc: str | None, depth: int
) -> None:
    """Parse the code that a command hands to a shell."""
    program = command.program
    if program in SHELLS:
        script_index = shell_script_index(rest)
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
    if program in ("at", "batch"):  # run later by a shell: from a here-document or stdin
        if heredoc is not None:
            _walk_script(walk, heredoc, depth + 1, program, None)
        elif "-f" not in rest and command.input_from is not None:
            _follow_stdin(walk, command, depth)
        return
    scripts, problems = embedded_scripts(program, rest, heredoc)
    walk.problems.extend(problems)
    for embedded in scripts:
        _walk_script(walk, embedded.script, depth + 1, embedded.via, None)


_WRITES_TEXT = frozenset({"echo", "printf", "tee"})


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
        if is_startup_file(target):
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


def _xargs_input(source: SimpleCommand | None, split: bool) -> list[str]:
    """What xargs appends: echo's words, find's starting points (as -exec {}), or a word
    marked unknown, so `... | xargs rm -rf` counts as deleting run-time paths."""
    if source is not None and source.program == "find":
        roots = _find_roots(list(source.args))
        if roots:
            return roots
    static = _static_output(source, split)
    if static:
        return static
    return [_Dynamic("$(xargs input)")]


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
    roots = _find_roots(rest)
    if len(roots) > _MAX_FIND_ROOTS:
        walk.problems.append("find has too many starting points to analyse")
        roots = roots[:_MAX_FIND_ROOTS]
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


def _find_roots(args: list[str]) -> list[str]:
    """find's starting points: the words before its first expression (`{}` stands for them)."""
    roots = []
    for word in args:
        if word.startswith(("-", "(", "!")):
            break
        roots.append(word)
    return roots


def _env_split_string(rest: list[str], inner: list[str]) -> list[str]:
    for position, word in enumerate(rest[:-1]):
        if word in ("-S", "--split-string"):
            return rest[position + 1].split() + inner[1:]
    return inner


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
        decoded = codecs.decode(body.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return body
    return valid_text(decoded)  # `$'\udcff'` decodes to a lone surrogate: RE2 rejects it

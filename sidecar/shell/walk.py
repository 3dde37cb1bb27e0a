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
import contextlib
import functools
import itertools
import math
import posixpath
import re
import shlex
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import re2
import tree_sitter_bash
from tree_sitter import Language, Node, Parser, Tree

from sidecar.shell import parameters
from sidecar.shell.embedded_code import (
    COMMAND_VARIABLES,
    LOADER_VARIABLES,
    embedded_scripts,
    is_startup_file,
    script_in_variable,
    shell_script_index,
)
from sidecar.shell.embedded_code import PROGRAMS as EMBEDDING_PROGRAMS
from sidecar.shell.manifests import is_workload, manifest_lines
from sidecar.shell.printing import printed_text, printf
from sidecar.shell.remote_runners import REMOTE_VIAS
from sidecar.shell.wrappers import DEFAULT_WRAPPERS, WrapperSpec, unwrap
from sidecar.text import valid_text
from sidecar.windows_paths import (
    is_windows_absolute,
    is_windows_program_path,
    is_windows_relative,
)

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
    word: str = ""  # the program as written ("/tmp/x", "./run.sh"), when it is a path
    stdin_text: str | None = None  # a here-document or here-string fed to it
    environment: tuple[str, ...] = ()  # NAME=value set for this command (`RAILS_ENV=test x`)

    def has_flag(self, *names: str) -> bool:
        return any(n in self.flags for n in names)


class ShellAnalysis(NamedTuple):
    commands: tuple[SimpleCommand, ...]
    problems: tuple[str, ...]  # what cannot be resolved statically
    parse_error: bool = False
    recursive_functions: tuple[str, ...] = ()  # functions that call themselves (fork bombs)
    # Functions and aliases the line defines, (name, definition as written): a persistent
    # shell keeps them for the session's later calls.
    definitions: tuple[tuple[str, str], ...] = ()


_MAX_DEFINITIONS = 16
_MAX_DEFINITION_CHARS = 4096


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
    # Script semantics: variables with values known statically, the commands whose output a
    # variable holds (X=$(curl ...)), functions defined so far (body node and its source),
    # and which functions are being expanded (no recursion).
    env: _Variables = field(default_factory=lambda: _Variables())
    producers: dict[str, SimpleCommand] = field(default_factory=dict)
    functions: dict[str, tuple[Node, str]] = field(default_factory=dict)
    definitions: dict[str, str] = field(default_factory=dict)  # name -> its text, as written
    calling: set[str] = field(default_factory=set)
    called: set[str] = field(default_factory=set)
    loops: int = 0  # loop bodies being walked per value, nested
    deadline: float = math.inf  # time.perf_counter() value past which the walk gives up
    remote: str = ""  # the via of the remote place (ssh host, heroku app) being walked, if any
    # `xxd -p .env | while read h; do ping -p "$h" ...`: the command feeding a piped loop,
    # until its `read` names the variables that hold what it printed.
    loop_feed: SimpleCommand | None = None


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
    for name, (body, source) in list(walk.functions.items()):
        if name not in walk.called:  # defined, never called here: judge its body as it stands
            _walk_body(walk, body, source, 1, f"function {name}", None)
    problems = walk.problems
    if walk.env.unfollowed:
        problems.extend(
            f"a value is transformed in a way the analysis cannot follow: {w}"
            for w in walk.env.unfollowed
        )
    return ShellAnalysis(
        tuple(walk.commands),
        tuple(dict.fromkeys(problems)),
        walk.parse_error,
        tuple(dict.fromkeys(walk.recursive_functions)),
        tuple(walk.definitions.items())[:_MAX_DEFINITIONS],
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
    if tree.root_node.has_error and ("<<'" in stand_in or '<<"' in stand_in):
        # The grammar stumbles on some quoted here-document bodies; a body is data, so a
        # parse that blanks them and then succeeds is the right reading of the line.
        blanked, ranges = _blank_quoted_heredocs(stand_in)
        retry = _parser().parse(blanked.encode("ascii"))
        # Only if every blanked range is a here-document body in the new tree: `<<'X'`
        # inside a quoted string must not blank the commands after it.
        if not retry.root_node.has_error and _all_heredoc_bodies(retry, ranges):
            tree = retry
    outer, outer_remote = walk.source, walk.remote
    walk.source = script
    if via.startswith(REMOTE_VIAS):
        walk.remote = via
    elif walk.remote:
        via = f"{walk.remote} > {via}"  # `ssh prod 'sh -c ...'`: still on that host
    try:
        _walk_nodes(walk, tree.root_node, depth, via, input_from)
    finally:
        walk.source, walk.remote = outer, outer_remote


_QUOTED_HEREDOC = re.compile(r"""<<(-?)[ \t]*(?:'([^'\n]+)'|"([^"\n]+)"|\\(\w+))""")


def _blank_quoted_heredocs(text: str) -> tuple[str, list[tuple[int, int]]]:
    """Quoted here-documents (`<<'EOF'`) are data: nothing in them is expanded. The grammar
    still stumbles on some bodies (Python with `(...).x()` lines), so this stand-in holds
    letters where a quoted body is; every offset stays the same, and the walk reads the
    body's text from the original. Returns the text and the blanked ranges."""
    out = list(text)
    ranges: list[tuple[int, int]] = []
    position = 0
    for match in _QUOTED_HEREDOC.finditer(text):
        if match.start() < position:
            continue  # inside a body blanked already
        delimiter = match.group(2) or match.group(3) or match.group(4) or ""
        strip_tabs = bool(match.group(1))
        start = text.find("\n", match.end())
        if start == -1 or not delimiter:
            continue
        index = start + 1
        filler = "x" if "x" not in delimiter else "q"
        while index < len(text):
            end = text.find("\n", index)
            line_end = len(text) if end == -1 else end
            line = text[index:line_end]
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                break
            for at in range(index, line_end):
                out[at] = filler
            index = line_end + 1
        if index > start + 1:
            ranges.append((start + 1, min(index, len(text))))
        position = index
    return "".join(out), ranges


def _all_heredoc_bodies(tree: Tree, ranges: list[tuple[int, int]]) -> bool:
    bodies: list[tuple[int, int]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "heredoc_body":
            bodies.append((node.start_byte, node.end_byte))
        else:
            stack.extend(node.children)
    return all(any(start <= lo + 1 and hi <= end + 1 for start, end in bodies) for lo, hi in ranges)


def _walk_body(
    walk: _Walk, body: Node, source: str, depth: int, via: str, input_from: SimpleCommand | None
) -> None:
    """Walk part of a tree again (a function's body at a call, a loop's body per value)."""
    if depth > MAX_NESTING:
        walk.problems.append("shell code nested too deeply to analyse")
        return
    outer = walk.source
    walk.source = source
    try:
        _walk_nodes(walk, body, depth, via, input_from)
    finally:
        walk.source = outer


def _walk_nodes(
    walk: _Walk, root: Node, depth: int, via: str, input_from: SimpleCommand | None
) -> None:
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
            emitted = len(walk.commands)
            if walk.memo is not None and not nested and not depth and feed is None:
                head = _remembered_command(walk, node, around)
            else:
                head = _command(walk, node, around, depth, via, feed, nested)
            if head is None and previous_stage and len(walk.commands) > emitted:
                # `fetch stage2 | bash`: a function's (or alias's) body printed what flows on
                head = walk.commands[-1]
            if head is not None and previous_stage:
                for inside in (node, *around):  # the last command inside a stage feeds the next
                    stage_heads[inside.id] = head
            if head is not None and head.program == "read" and walk.loop_feed is not None:
                for name in _read_names(list(head.args)):
                    walk.producers[name] = walk.loop_feed
                walk.loop_feed = None
            if not nested:
                continue
        elif kind == "pipeline":
            stages = [c for c in node.named_children if c.type != "comment"]
            for before, after in itertools.pairwise(stages):
                previous_stage[after.id] = before.id
        elif kind == "redirected_statement":
            # `cat <<EOF | kubectl apply -f -`: the grammar hangs the rest of the pipeline
            # on the here-document; its first stage reads what the statement's command prints.
            body = node.child_by_field_name("body")
            if body is None or body.type in _COMPOUND_STATEMENTS:
                # `> f`, `>> f`: a redirect alone truncates or creates the file. On a compound
                # (`while read l; do ...; done < ~/.ssh/id_rsa`, `{ ...; } > f`) the redirect
                # is the compound's: its file is read or written all the same.
                redirects, _ = _redirects(node.children_by_field_name("redirect"), source, walk.env)
                if redirects:
                    walk.commands.append(
                        SimpleCommand(":", (), _NO_FLAGS, (), redirects=redirects, via=via)
                    )
            for redirect in node.children_by_field_name("redirect"):
                if body is None or redirect.type != "heredoc_redirect":
                    continue
                for pipe in redirect.named_children:
                    if pipe.type == "pipeline":
                        first = next((c for c in pipe.named_children if c.type != "comment"), None)
                        if first is not None:
                            previous_stage[first.id] = body.id
        elif kind in ("declaration_command", "unset_command"):
            # `export -p > f`, `declare -x | curl -d @- ...`: it prints, so it may feed a
            # pipe or a redirect like any command.
            around = _containers(chain)
            head = _declaration(walk, node, via, depth, around)
            if head is not None and previous_stage:
                for inside in (node, *around):
                    stage_heads[inside.id] = head
        elif kind == "variable_assignment" and parent_kind in (
            "program",
            "list",
            "compound_statement",
            "subshell",
            "do_group",
        ):
            _set_variable(walk, node, source)
            text = _assignment(node, source, walk.env)  # a bare FOO=1 statement
            walk.commands.append(SimpleCommand("(assign)", (text,), _NO_FLAGS, (text,), via=via))
            _follow_variable(walk, text, via, depth)
        elif kind == "function_definition":
            name_node = node.child_by_field_name("name")
            name = _text(name_node, source) if name_node is not None else "?"
            if _calls_itself(node, source):
                walk.recursive_functions.append(name)
            body = node.child_by_field_name("body")
            if depth == 0 and node.end_byte - node.start_byte <= _MAX_DEFINITION_CHARS:
                walk.definitions[name] = _text(node, source)
            if body is not None and name not in walk.calling:
                walk.functions[name] = (body, source)  # walked where it is called
                continue
        elif kind == "while_statement" and node.id in previous_stage:
            walk.loop_feed = stage_heads.get(previous_stage[node.id])
        elif (
            kind == "for_statement"
            and chain is None
            and walk.loops < _MAX_LOOP_NESTING
            and _walk_loop(walk, node, depth, via, input_from)
        ):
            continue
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


def _declaration(
    walk: _Walk, node: Node, via: str, depth: int, around: list[Node]
) -> SimpleCommand | None:
    """export/declare/local/readonly/unset: builtins that change the shell's variables (and
    print them: `export -p`, `declare -x`)."""
    source = walk.source
    keyword = next((c for c in node.children if not c.is_named), None)
    program = keyword.type if keyword is not None else "export"
    reference = any(
        c.type == "word" and _text(c, source).startswith("-") and "n" in _text(c, source)
        for c in node.named_children
    )
    for child in node.named_children:
        if child.type == "variable_assignment" and program != "unset":
            _set_variable(walk, child, source, reference)
        elif program == "unset":
            walk.env.pop(_text(child, source), None)
    args = tuple(
        _assignment(c, source, walk.env)
        if c.type == "variable_assignment"
        else _resolve(c, source, walk.env)
        for c in node.named_children
    )
    flags, positionals = _split_flags(args)
    redirect_nodes = _redirect_nodes(node, around)
    redirects = _redirects(redirect_nodes, source, walk.env)[0] if redirect_nodes else ()
    command = SimpleCommand(program, args, flags, positionals, redirects=redirects, via=via)
    walk.commands.append(command)
    for assignment in args:
        _follow_variable(walk, assignment, via, depth)
    return command


def _follow_variable(walk: _Walk, assignment: str, via: str, depth: int = 0) -> None:
    """NAME=value where a program will run the value as a command: parse the value."""
    embedded = script_in_variable(assignment)
    if embedded is not None:
        _walk_script(walk, embedded.script, depth + 1, embedded.via, None)


def _prefix_assignments(walk: _Walk, command: Node, via: str, depth: int) -> tuple[str, ...]:
    """`GIT_SSH_COMMAND='...' git fetch`, `LD_PRELOAD=x.so ls`: variables set for one command."""
    source = walk.source
    found: list[str] = []
    for child in command.named_children:
        if child.type != "variable_assignment":
            break  # assignments come first, before the command name
        text = _assignment(child, source)
        found.append(text)
        name = text.partition("=")[0]
        if name in COMMAND_VARIABLES or name in LOADER_VARIABLES:
            walk.commands.append(SimpleCommand("(assign)", (text,), _NO_FLAGS, (text,), via=via))
            _follow_variable(walk, text, via, depth)
    return tuple(found)


def _assignment(node: Node, source: str, env: Mapping[str, str] | None = None) -> str:
    name = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    left = _text(name, source) if name is not None else ""
    return f"{left}={_resolve(value, source, env)}" if value is not None else f"{left}="


_MAX_VALUE = 4096  # longer values are kept as unknown (they could make expansions quadratic)
_MAX_LOOP_NESTING = 4
_MAX_LOOP_VALUES = 16


def _set_variable(walk: _Walk, node: Node, source: str, reference: bool = False) -> None:
    """`X=value`: remember the value where it is static, and the command whose output it
    holds where it is `$(...)`. Arrays keep each element (`a[0]`) and all of them (`a[@]`);
    `declare -n X=Y` makes `$X` read Y."""
    name_node = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    if name_node is None:
        return
    env = walk.env
    name = (
        _subscript_key(name_node, source, env)
        if name_node.type == "subscript"
        else _text(name_node, source)
    )
    if reference:
        if value is not None:
            env[_REFERENCE + name] = _resolve(value, source, env)
        return
    appending = any(c.type == "+=" for c in node.children if not c.is_named)
    if value is None:
        env[name] = ""
        return
    if value.type == "array":
        _set_array(walk, name, value, source, appending)
        return
    resolved = _resolve(value, source, env)
    if appending:
        before = env.get(name)
        resolved = _join([before, resolved]) if before is not None else _Dynamic("$" + name)
    if len(resolved) > _MAX_VALUE:
        resolved = _Dynamic("$" + name)
    walk.producers.pop(name, None)
    producer = _substituted_command([value], source)
    if producer is not None:
        walk.producers[name] = producer
        if producer.program == "mktemp" and value.type == "command_substitution":
            resolved = _temporary_path(producer) or resolved
    env[name] = resolved


def _temporary_path(mktemp: SimpleCommand) -> str | None:
    """What `$(mktemp ...)` prints: a fresh name under /tmp, `-p DIR` or its template's
    directory (`t=$(mktemp -d); ...; rm -rf "$t"` deletes a scratch directory)."""
    args = mktemp.args
    directory = "/tmp"  # noqa: S108 (the name mktemp prints; nothing is created)
    template = "tmp.XXXXXXXXXX"
    index = 0
    while index < len(args):
        word = args[index]
        if word in ("-p", "--tmpdir") and index + 1 < len(args):
            directory = args[index + 1]
            index += 1
        elif word.startswith("--tmpdir="):
            directory = word.partition("=")[2]
        elif word.startswith("-p") and len(word) > 2:
            directory = word[2:]
        elif not word.startswith("-"):
            template = word
        index += 1
    if _dynamic(directory) or _dynamic(template) or not directory:
        return None
    if "/" in template:
        return template
    return directory.rstrip("/") + "/" + template


_MAX_ARRAY = 64  # elements kept per array; a longer array is unknown


def _set_array(walk: _Walk, name: str, value: Node, source: str, appending: bool) -> None:
    env = walk.env
    elements: list[str] = []
    if appending:
        before = env.get(name + "[@]")
        if before is None and env.get(name) is not None:
            before = env[name]
        if before is None or _dynamic(before):
            _store_array(env, name, None)
            return
        elements = before.split(_ELEMENTS) if before else []
    for child in value.named_children:
        if child.type != "comment":
            elements.extend(_words_of(child, source, env))
    _store_array(env, name, elements if len(elements) <= _MAX_ARRAY else None)


def _store_array(env: dict[str, str], name: str, elements: list[str] | None) -> None:
    """Keep `a[i]`, `a[@]` and `a` (bash reads `$a` as `${a[0]}`); None forgets the array."""
    for key in [k for k in env if k.startswith(name + "[")]:
        del env[key]
    if elements is None:
        env[name] = env[name + "[@]"] = _Dynamic("$" + name)
        return
    for index, element in enumerate(elements):
        env[f"{name}[{index}]"] = element
    joined = _ELEMENTS.join(elements)
    if len(joined) > _MAX_VALUE:
        _store_array(env, name, None)
        return
    env[name + "[@]"] = _Dynamic(joined) if any(_dynamic(e) for e in elements) else joined
    env[name] = elements[0] if elements else ""


def _walk_loop(
    walk: _Walk, node: Node, depth: int, via: str, input_from: SimpleCommand | None
) -> bool:
    """`for f in a b c; do ...; done`: walk the body once per value, with `$f` bound.
    Returns False when the loop is left to the ordinary walk (no literal list)."""
    source = walk.source
    variable = node.child_by_field_name("variable")
    body = node.child_by_field_name("body")
    values = node.children_by_field_name("value")
    if variable is None or body is None or not values:
        return False
    words: list[str] = []
    for value in values:
        words.extend(_words_of(value, source, walk.env))
    if len(words) > _MAX_LOOP_VALUES:  # a sample: the first and the last values
        half = _MAX_LOOP_VALUES // 2
        words = words[:half] + words[-half:]
    for value in values:
        if value.type not in _LEAVES:  # `for l in $(xxd -p key)`: the list's commands run
            _walk_nodes(walk, value, depth, via, input_from)
    name = _text(variable, source)
    previous = walk.env.get(name)
    walk.loops += 1
    try:
        for word in words:
            walk.env[name] = word
            _walk_body(walk, body, source, depth, via, input_from)
    finally:
        walk.loops -= 1
        if previous is None:
            walk.env.pop(name, None)
        else:
            walk.env[name] = previous
    return True


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
    environment: tuple[str, ...] = ()
    if "=" in source:
        first = node.child(0)
        if first is not None and first.type == "variable_assignment":
            environment = _prefix_assignments(walk, node, via, depth)
    arguments = node.children_by_field_name("argument")
    env = walk.env
    head = name_node.named_children
    if len(head) == 1 and head[0].type in _SPLIT_AT_RUN_TIME:
        words = _words_of(head[0], source, env)  # `$cmd` runs `rm -rf /` when cmd holds it
    else:
        words = [_resolve(name_node, source, env)]
        raw = _text(name_node, source)
        if is_windows_relative(raw):
            # `m\kfs.xfs /dev/sda2`: a program name spelt with escapes to hide it is bash's
            # (`mkfs.xfs`); a relative Windows path is kept only for arguments.
            words = [_unescape(raw)]
    if "{" in source:
        for argument in arguments:
            words.extend(_words_of(argument, source, env))
    else:
        for argument in arguments:
            if argument.type in _SPLIT_AT_RUN_TIME:
                words.extend(_words_of(argument, source, env))
            else:
                words.append(_resolve(argument, source, env))
    redirect_nodes = _redirect_nodes(node, around)
    redirects, heredoc = _redirects(redirect_nodes, source, env) if redirect_nodes else ((), None)
    if input_from is None and nested:
        input_from = _substituted_command(arguments, source)
        if input_from is None and redirect_nodes:
            input_from = _redirected_substitution(redirect_nodes, source)
        if input_from is None and walk.producers:
            input_from = _variable_producer(arguments, source, walk.producers)
    command = _emit(walk, words, redirects, heredoc, depth, via, input_from, wrappers=())
    if command is not None and command.program == "read" and command.stdin_text is not None:
        _assign_read(walk, command, environment)
    return _with_environment(walk, command, environment)


def _assign_read(walk: _Walk, command: SimpleCommand, environment: Sequence[str]) -> None:
    """`read a b <<< "x y"`: the fields of the here-string go to the names, split at IFS
    (`IFS=: read ...` for this command alone); the last name takes the rest."""
    names = _read_names(list(command.args))
    ifs: str = walk.env.get("IFS", _DEFAULT_IFS)
    for assignment in environment:
        if assignment.startswith("IFS="):
            ifs = assignment[4:]
    text = (command.stdin_text or "").rstrip("\n")
    if _dynamic(ifs) or _dynamic(text):
        for name in names:
            _assign_output(walk, name, None)
        return
    fields = _split_at(text, ifs, len(names)) if names else []
    for index, name in enumerate(names):
        _assign_output(walk, name, fields[index] if index < len(fields) else "")


def _split_at(text: str, ifs: str, most: int) -> list[str]:
    """`text` split at any character of `ifs` into at most `most` fields."""
    if not ifs:
        return [text]
    fields: list[str] = []
    current: list[str] = []
    for index, char in enumerate(text):
        if char in ifs and len(fields) < most - 1:
            if current or not char.isspace():
                fields.append("".join(current))
                current = []
            continue
        if len(fields) == most - 1 and not current and char in ifs and char.isspace():
            continue
        current.append(char)
        if len(fields) == most - 1:
            current.append(text[index + 1 :])
            break
    fields.append("".join(current).strip(" \t") if " " in ifs else "".join(current))
    return fields


def _with_environment(
    walk: _Walk, command: SimpleCommand | None, environment: Sequence[str]
) -> SimpleCommand | None:
    """Attach the variables set for a command to it: where it acts can hang on them."""
    if command is None or not environment:
        return command
    given = command._replace(environment=(*environment, *command.environment))
    for index in range(len(walk.commands) - 1, -1, -1):
        if walk.commands[index] is command:
            walk.commands[index] = given
            break
    return given


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
    if walk.functions and name in walk.functions and name not in walk.calling:
        return _call_function(walk, name, words[1:], depth, input_from)
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
            return _record(walk, program, rest, redirects, input_from, wrappers, via, name, heredoc)
        inner = unwrap(rest, spec)
        # The wrapper runs too (sudo, chroot): rules may care about it as well, with its own
        # options only (`sudo lsof -i` is not `sudo -i`).
        own = rest[: len(rest) - len(inner)]
        wrapper = _record(walk, program, own, redirects, input_from, wrappers, via, name)
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
            replace = _xargs_replace_string(rest)
            if replace is not None:
                # xargs -I{} CMD {}: each input line takes the place of {} in CMD.
                fed = _xargs_input(input_from, split=False)
                value = fed[0] if len(fed) == 1 else _Dynamic("$(xargs input)")
                inner = [_xargs_replaced(w, replace, value) for w in inner]
            else:
                inner = inner + _xargs_input(input_from, split=not whole)
            via = "xargs"
        if program == "parallel":
            # parallel CMD ::: A B: each input after ::: is appended to the command.
            inner = [w for w in inner if w not in (":::", "::::", ":::+")]
            via = "parallel"
        outer = (*wrappers, program)
        emitted = _emit(walk, inner, redirects, heredoc, depth, via, input_from, outer)
        if program == "env":  # env RAILS_ENV=test rails ...: the variables are the inner's
            assigned = [w for w in own if "=" in w and w.partition("=")[0].isidentifier()]
            return _with_environment(walk, emitted, assigned)
        return emitted
    command = _record(walk, program, rest, redirects, input_from, wrappers, via, name, heredoc)
    if program in _KUBECTLS and _applies_stdin(rest):
        _follow_manifest(walk, command, heredoc, depth)
    elif program in _RUNS_CODE:
        _follow_nested(walk, command, rest, heredoc, depth)
    elif program in _WRITES_TEXT and (redirects or program == "tee"):
        _follow_startup_write(walk, command, depth)
    elif program == "alias":
        for definition in rest:
            alias, equals, value = definition.partition("=")
            if equals and alias and not alias.startswith("-"):
                walk.aliases[alias] = value
                if depth == 0 and len(value) <= _MAX_DEFINITION_CHARS:
                    walk.definitions[alias] = f"alias {alias}={shlex.quote(value)}"
    elif program == "printf" and len(rest) >= 3 and rest[0] == "-v":
        _assign_output(
            walk, rest[1], printf(rest[2], rest[3:]) if not any(map(_dynamic, rest[2:])) else None
        )
    return command


_KUBECTLS = frozenset({"kubectl", "oc", "kubecolor"})
_APPLYING = frozenset({"apply", "create", "replace", "run"})


def _applies_stdin(rest: list[str]) -> bool:
    """`kubectl apply -f -` (or --filename=-): the manifest comes on standard input."""
    if _APPLYING.isdisjoint(rest):
        return False
    # (`-f - <<EOF`: the grammar may drop the lone `-` before a here-document.)
    return any(
        (word in ("-f", "--filename") and (index + 1 == len(rest) or rest[index + 1] == "-"))
        or word in ("-f-", "--filename=-")
        for index, word in enumerate(rest)
    )


def _follow_manifest(walk: _Walk, command: SimpleCommand, heredoc: str | None, depth: int) -> None:
    """The containers of a manifest fed to `kubectl apply -f -` run their commands."""
    text = heredoc
    source = command.input_from
    if text is None and source is not None:
        if source.stdin_text is not None and source.program == "cat" and not source.positionals:
            text = source.stdin_text
        elif source.program in ("echo", "printf") and not any(map(_dynamic, source.args)):
            text = printed_text(source.program, source.args)
    if text is None or not is_workload(text):
        return
    for line in manifest_lines(text)[:17]:
        _walk_script(walk, line, depth + 1, f"{command.program} manifest", None)


def _read_names(rest: list[str]) -> list[str]:
    """The variables `read` sets: words after its options (-p, -d, -n, -t, -u take a value)."""
    names: list[str] = []
    skip = False
    for word in rest:
        if skip:
            skip = False
        elif word.startswith("-") and not names:
            skip = word[-1:] in ("p", "d", "n", "N", "t", "u", "a") and len(word) == 2
        else:
            names.append(word)
    return names


def _assign_output(walk: _Walk, name: str, value: str | None) -> None:
    """`printf -v X ...`, `read X <<< ...`: builtins that set a variable."""
    if not name.isidentifier():
        return
    if value is None or len(value) > _MAX_VALUE:
        walk.env[name] = _Dynamic("$" + name)
    else:
        walk.env[name] = value


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


def _call_function(
    walk: _Walk, name: str, args: list[str], depth: int, input_from: SimpleCommand | None
) -> SimpleCommand | None:
    """`f() { rm -rf "$1"; }; f /etc`: walk the body with `$1`... bound to the arguments."""
    body, source = walk.functions[name]
    walk.called.add(name)
    walk.expanded += body.end_byte - body.start_byte
    if walk.expanded > _MAX_EXPANDED:
        walk.problems.append("functions expand to more text than can be analysed")
        return None
    walk.calling.add(name)
    try:
        with _positional_parameters(walk, args):
            _walk_body(walk, body, source, depth + 1, f"function {name}", input_from)
    finally:
        walk.calling.discard(name)
    return None


@contextlib.contextmanager
def _positional_parameters(
    walk: _Walk, args: Sequence[str], zero: str | None = None
) -> Iterator[None]:
    """`$1`... `$@` `$#` (and `$0` when given) bound to `args` while a function body or a
    `sh -c SCRIPT NAME ARGS...` script is walked; the caller's are back afterwards."""
    keys = (*_POSITIONAL, "0") if zero is not None else _POSITIONAL
    saved = {k: walk.env[k] for k in keys if k in walk.env}
    for key in keys:
        walk.env.pop(key, None)
    for index, value in enumerate(args[:9], start=1):
        walk.env[str(index)] = value
    joined = " ".join(args)
    dynamic = any(_dynamic(a) for a in args)
    walk.env["@"] = _Dynamic(joined) if dynamic else joined
    elements = _ELEMENTS.join(args)
    walk.env["@[@]"] = _Dynamic(elements) if dynamic else elements
    walk.env["*"] = walk.env["@"]
    walk.env["#"] = str(len(args))
    if zero is not None:
        walk.env["0"] = zero
    try:
        yield
    finally:
        for key in keys:
            walk.env.pop(key, None)
        walk.env.update(saved)


_POSITIONAL = ("1", "2", "3", "4", "5", "6", "7", "8", "9", "@", "*", "#", "@[@]")
_MAX_EXPANDED = 64 * 1024  # characters of alias and function expansions analysed per line
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
    name: str = "",
    stdin_text: str | None = None,
) -> SimpleCommand:
    args = tuple(rest)
    flags, positionals = _split_flags(args)
    word = name if "/" in name or is_windows_program_path(name) else ""
    command = SimpleCommand(
        program, args, flags, positionals, redirects, input_from, wrappers, via, word, stdin_text
    )
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
            # `sh -c 'rm -rf "$1"' _ /etc`: the words after the script are $0, $1, ...
            parameters = rest[script_index + 1 :]
            if parameters:
                with _positional_parameters(walk, parameters[1:], zero=parameters[0]):
                    _walk_script(walk, script, depth + 1, f"{program} -c", command.input_from)
            else:
                _walk_script(walk, script, depth + 1, f"{program} -c", command.input_from)
            return
        if heredoc is not None:
            _walk_script(walk, heredoc, depth + 1, "heredoc", None)
            return
        if not command.positionals or command.positionals[0] in STANDARD_INPUT:
            _follow_stdin(walk, command, depth)
        return
    if program in ("eval", "source", "."):
        if (
            program != "eval"
            and command.positionals[:1]
            and command.positionals[0] in STANDARD_INPUT
        ):
            if heredoc is not None:  # `source /dev/stdin <<EOF`
                _walk_script(walk, heredoc, depth + 1, "heredoc", None)
            elif command.input_from is not None:
                _follow_stdin(walk, command, depth)
            return
        if program == "eval":
            text = " ".join(rest)
            if any(_dynamic(w) for w in rest):
                if trusted_generator(command.input_from):
                    return  # the setup code a local tool prints (its command is walked)
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


# Local tools whose only job is to print shell setup code for `eval "$(...)"`.
_GENERATORS = {
    "ssh-agent": (),
    "direnv": ("hook", "export"),
    "pyenv": ("init", "virtualenv-init"),
    "rbenv": ("init",),
    "nodenv": ("init",),
    "goenv": ("init",),
    "jenv": ("init",),
    "starship": ("init",),
    "zoxide": ("init",),
    "fnm": ("env",),
    "mise": ("activate", "env"),
    "rtx": ("activate",),
    "atuin": ("init",),
    "brew": ("shellenv",),
    "conda": ("shell.bash", "shell.zsh"),
    "keychain": (),
    "gpg-agent": (),
    "dircolors": (),
    "opam": ("env",),
    "thefuck": ("--alias",),
}


def trusted_generator(source: SimpleCommand | None) -> bool:
    """`eval "$(direnv hook bash)"`: code printed by a local setup tool, not computed data."""
    if source is None or source.input_from is not None:
        return False
    wanted = _GENERATORS.get(source.program)
    if wanted is None:
        return False
    return not wanted or bool(source.positionals and source.positionals[0] in wanted)


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
            text = printed_text(source.program, source.args)
            _walk_script(walk, text, depth + 1, f"written to {target}", None)
            return


# Names of a process's standard input: `bash /dev/stdin` reads its script from the pipe.
STANDARD_INPUT = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})


def _follow_stdin(walk: _Walk, shell: SimpleCommand, depth: int) -> None:
    source = shell.input_from
    if source is None:
        return
    if source.program in ("echo", "printf") and source.args:
        body = printed_text(source.program, source.args)
        _walk_script(walk, body, depth + 1, f"piped into {shell.program}", None)
    elif source.program in ("cat",) and not source.positionals:
        if source.stdin_text is not None:  # cat <<EOF | bash: the here-document runs
            _walk_script(walk, source.stdin_text, depth + 1, f"piped into {shell.program}", None)
        return
    else:
        walk.problems.append(
            f"{shell.program} executes the output of {source.program or 'another command'}"
        )


def _xargs_replaced(word: str, replace: str, value: str) -> str:
    if word == replace:
        return value
    if replace not in word:
        return word
    text = word.replace(replace, value)
    return _Dynamic(text) if _dynamic(value) or _dynamic(word) else text


def _xargs_replace_string(rest: list[str]) -> str | None:
    """The -I/-i/--replace string of xargs options, if given."""
    for index, word in enumerate(itertools.takewhile(lambda w: w.startswith("-"), rest)):
        if word == "-I" and index + 1 < len(rest):
            return rest[index + 1]
        if word.startswith("-I") and len(word) > 2:
            return word[2:]
        if word in ("-i", "--replace") or word.startswith(("-i", "--replace=")):
            return word.split("=", 1)[1] if "=" in word else (word[2:] or "{}")
    return None


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
    if source.program == "printf":
        if any(map(_dynamic, source.args)):
            return []
        text = printed_text(source.program, source.args)
        printed = [text] if text else []
    else:
        printed = _printed(source)
    if not split:
        whole = " ".join(printed)
        if "\0" in whole:  # `printf '%s\0' /etc /var | xargs -0 rm -rf`: one word per NUL
            return [part for part in whole.split("\0") if part]
        return [whole] if printed else []
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
            elif roots:  # `curl -F 'f=@{}'`: the found path inside a word
                target = [w.replace("{}", roots[0]) if "{}" in w else w for w in target]
            _emit(walk, target, (), None, depth, "find -exec", None, ())
            index = end
        index += 1


def _find_roots(args: list[str]) -> list[str]:
    """What `{}` stands for: find's starting points (the words before its first expression),
    or, with one `-name PATTERN`, the matches at any depth below them (`ROOT/**/PATTERN`)."""
    roots = []
    for word in args:
        if word.startswith(("-", "(", "!")):
            break
        roots.append(word)
    narrowed = [find_matches_below(args, root) for root in roots]
    if roots and all(narrowed):
        return [glob for globs in narrowed for glob in globs]
    # `find / -path '*app*/policies/*.yaml' -exec sed -i ...`: the whole tree, and beside it
    # what the path pattern reaches (a protected class it could match counts).
    patterns = [p for p in (_find_path_pattern(args, root) for root in roots) if p]
    return roots + patterns


def _find_path_pattern(args: Sequence[str], root: str) -> str | None:
    """With one `-path`/`-wholename PATTERN`, the glob of what it matches below `root`."""
    patterns = [
        args[i + 1]
        for i in range(len(args) - 1)
        if args[i] in ("-path", "-ipath", "-wholename", "-iwholename") and args[i + 1]
    ]
    if len(patterns) != 1 or _dynamic(patterns[0]) or _dynamic(root):
        return None
    pattern = patterns[0]
    if pattern.startswith("*"):  # find's `*` crosses `/`: any depth below the root
        return root.rstrip("/") + "/**/" + pattern
    return pattern


def find_matches_below(args: Sequence[str], root: str) -> list[str]:
    """With one `-name PATTERN`, or one group of `-name` alternatives (`( -name bin -o -name
    obj )`), below a narrowable root, what find acts on is the matches at any depth: the
    globs `ROOT/**/PATTERN`; otherwise [] (the tree). Any other `-o` could let an action run
    on what no name narrows (`-name x -o -exec rm {} +`), so it keeps the tree."""
    names = _name_alternatives(args)
    if not names or not narrowable_find_root(root):
        return []
    if any(_dynamic(n) or "$" in n or "`" in n or "/" in n for n in names):
        return []
    if any(not n.strip("*?.[]") for n in names):
        return []  # `-name '*'` narrows nothing: the tree
    return [root.rstrip("/") + "/**/" + name for name in names]


_OPEN = ("(", "\\(")
_CLOSE = (")", "\\)")
_OR = ("-o", "-or", ",")
_NAME_TESTS = ("-name", "-iname")


def _name_alternatives(args: Sequence[str]) -> list[str]:
    """The names find's expression narrows to: one `-name X`, or one parenthesised group made
    only of `-name` tests joined by `-o`; [] when it narrows otherwise or not at all."""
    alternatives: list[list[str]] = []  # per group that holds an -o: its names
    single: list[str] = []  # names outside any group
    group: list[str] | None = None
    group_names: list[str] = []
    group_pure = True
    group_or = False
    index = 0
    while index < len(args):
        word = args[index]
        if word in _OPEN:
            if group is not None:
                return []  # nested groups: not modelled
            group, group_names, group_pure, group_or = [], [], True, False
        elif word in _CLOSE:
            if group is None:
                return []
            if group_or:
                if not group_pure:
                    return []
                alternatives.append(group_names)
            else:
                single.extend(group_names)
            group = None
        elif word in _OR:
            if group is None:
                return []
            group_or = True
        elif word in _NAME_TESTS and index + 1 < len(args) and args[index + 1]:
            (group_names if group is not None else single).append(args[index + 1])
            index += 1
        elif group is not None:
            group_pure = False
        index += 1
    if group is not None:
        return []
    if alternatives:
        return alternatives[0] if len(alternatives) == 1 and not single else []
    return single if len(single) == 1 else []


_BELOW_A_HOME = re2.compile(r"^(?:~|/home/[^/]+|/Users/[^/]+|/root)/[^/.]")
_SCRATCH = ("/tmp", "/var/tmp", "/dev/shm")  # noqa: S108 (names, not files we create)


def narrowable_find_root(root: str) -> bool:
    """Roots below which `find -name X` is judged as the matches alone: the project (a
    relative root) and scratch directories. Below `/`, `~` or a system directory every
    match counts as the whole tree (`find / -name core | xargs rm -rf` is a wipe)."""
    if _dynamic(root):
        return False
    if not root.startswith(("/", "~")):
        return not root.startswith("..")
    # A folder below a home (`find ~/Downloads -name '*.dmg'`): its matches, judged by their
    # class (a key in ~/.ssh stays a key store); the home itself counts as the tree.
    return root.rstrip("/").startswith(_SCRATCH) or _BELOW_A_HOME.match(root) is not None


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
    if is_windows_program_path(text):
        return text.rstrip("\\").rsplit("\\", 1)[-1]
    if "/" not in text:
        return _SOURCING_FUNCTIONS.get(text, text)
    return text.rstrip("/").rsplit("/", 1)[-1]


# direnv's library sources a file by these names in an .envrc (its `source_env FILE`).
_SOURCING_FUNCTIONS = {"source_env": "source", "source_env_if_exists": "source"}


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


def _redirects(
    nodes: list[Node], source: str, env: Mapping[str, str] | None = None
) -> tuple[tuple[Redirect, ...], str | None]:
    found: list[Redirect] = []
    heredoc: str | None = None
    for child in nodes:
        if child.type == "file_redirect":
            destination = child.child_by_field_name("destination")
            operator = next((c.type for c in child.children if not c.is_named), "")
            if destination is not None:
                # `> ~/.ssh/{id_rsa,x}` is an error in bash; counting every word is the safe side.
                for target in _words_of(destination, source, env):
                    found.append(Redirect(operator, target))
        elif child.type == "heredoc_redirect":
            body = next((c for c in child.named_children if c.type == "heredoc_body"), None)
            heredoc = _text(body, source) if body is not None else ""
        elif child.type == "herestring_redirect":
            heredoc = " ".join(_resolve(w, source, env) for w in child.named_children)
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


def _variable_producer(
    arguments: list[Node], source: str, producers: Mapping[str, SimpleCommand]
) -> SimpleCommand | None:
    """`K=$(cat key); curl -d "$K" ...`: the command whose output the variable holds."""
    for argument in arguments:
        stack = [argument]
        while stack:
            current = stack.pop()
            if current.type in ("simple_expansion", "expansion"):
                variable = next(
                    (c for c in current.named_children if c.type == "variable_name"), None
                )
                if variable is not None:
                    found = producers.get(_text(variable, source))
                    if found is not None:
                        return found
            elif current.type not in _LEAVES:
                stack.extend(current.named_children)
    return None


_MAX_BRACE_WORDS = 64


def _words_of(node: Node, source: str, env: Mapping[str, str] | None) -> list[str]:
    """The words one argument becomes: brace expansion (`/{etc,usr}`, `{1..3}`) splits it."""
    kind = node.type
    if kind in _SPLIT_AT_RUN_TIME:
        fields = _fields(node, source, env)
        return fields if fields is not None else [_resolve(node, source, env)]
    if kind == "brace_expression":
        return _brace_range(node, source) or [_resolve(node, source, env)]
    if kind != "concatenation" or "{" not in source[node.start_byte : node.end_byte]:
        return [_resolve(node, source, env)]
    # Pieces: alternatives for each brace group, literal text for the rest.
    pieces: list[list[str]] = []
    group: list[str] | None = None
    for child in node.named_children:
        text = _text(child, source)
        if child.type == "word" and text == "{" and group is None:
            group = []
            continue
        if child.type == "word" and text == "}" and group is not None:
            pieces.append(_split_commas("".join(group)) or ["{}"])
            group = None
            continue
        if group is not None:
            group.append(_resolve(child, source, env))
        elif child.type == "brace_expression":
            pieces.append(_brace_range(child, source) or [text])
        else:
            pieces.append([_resolve(child, source, env)])
    if group is not None:
        pieces.append(["{" + "".join(group)])
    words = [""]
    dynamic = False
    for alternatives in pieces:
        dynamic = dynamic or any(_dynamic(a) for a in alternatives)
        words = [w + a for w in words for a in alternatives][:_MAX_BRACE_WORDS]
    return [_Dynamic(w) for w in words] if dynamic else words


_SPLIT_AT_RUN_TIME = frozenset({"string", "simple_expansion", "expansion", "command_substitution"})
_DEFAULT_IFS = " \t\n"


def _fields(node: Node, source: str, env: Mapping[str, str] | None) -> list[str] | None:
    """The words one expansion becomes at run time: `"${a[@]}"` and `"$@"` one per element,
    an unquoted `$x` split at the characters of IFS. None: it stays one word."""
    if env is None:
        return None
    if node.type == "string":
        named = node.named_children
        if len(named) != 1 or named[0].type not in ("simple_expansion", "expansion"):
            return None
        key = _all_elements_key(named[0], source, env)
        value = env.get(key) if key is not None else None
        if value is None or _dynamic(value):
            return None
        return value.split(_ELEMENTS) if value else []
    value = _resolve(node, source, env)
    if _dynamic(value):
        return None
    ifs = env.get("IFS", _DEFAULT_IFS)
    if _dynamic(ifs):
        if isinstance(env, _Variables):
            env.unfollowed.append(_text(node, source)[:80])
        return None
    if not ifs:
        return [value]
    text = value.replace(_ELEMENTS, ifs[0])
    if not any(c in ifs for c in text):
        return [text] if text else []
    out: list[str] = []
    current: list[str] = []
    for char in text:
        if char in ifs:
            if current:
                out.append("".join(current))
                current = []
        else:
            current.append(char)
    if current:
        out.append("".join(current))
    return out


def _all_elements_key(node: Node, source: str, env: Mapping[str, str]) -> str | None:
    """`${a[@]}` -> "a[@]", `$@` / `${@}` -> "@[@]"; None for any other expansion."""
    named = node.named_children
    if len(named) != 1:
        return None
    first = named[0]
    if first.type == "special_variable_name" and _text(first, source) == "@":
        return "@[@]"
    if first.type == "subscript":
        key = _subscript_key(first, source, env)
        if key.endswith("[@]"):
            return key
    return None


def _split_commas(text: str) -> list[str]:
    if "," not in text:
        return []
    return text.split(",")


def _brace_range(node: Node, source: str) -> list[str]:
    """`{1..5}`, `{a..e}`: the words it stands for (capped)."""
    bounds = [_text(c, source) for c in node.named_children]
    if len(bounds) != 2:
        return []
    first, last = bounds
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        start, stop = int(first), int(last)
        step = 1 if stop >= start else -1
        count = min(abs(stop - start) + 1, _MAX_BRACE_WORDS)
        return [str(start + step * i) for i in range(count)]
    if len(first) == 1 and len(last) == 1:
        step = 1 if ord(last) >= ord(first) else -1
        count = min(abs(ord(last) - ord(first)) + 1, _MAX_BRACE_WORDS)
        return [chr(ord(first) + step * i) for i in range(count)]
    return []


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
        # `$(hostname; cat /etc/os-release; ss -tlnp)` prints every statement's output: the
        # one that prints a file stands for them (what is sent matters by the files in it).
        for statement in statements[:-1][:_MAX_STAGE_DEPTH]:
            if statement.type == "command":
                printer = _quick(statement, source)
                if printer is not None and printer.program in _PRINTS_FILES and printer.positionals:
                    return printer
        current = statements[-1]  # else the last statement's output ends the substitution's
    inner = _first_command(substitution)
    return _quick(inner, source) if inner is not None else None


# Programs whose output is the files they are given (a substitution that runs one of them
# among others sends those files).
_PRINTS_FILES = frozenset(
    {"cat", "head", "tail", "base64", "xxd", "od", "strings", "tac", "nl", "less", "more"}
)


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


def _resolve(node: Node, source: str, env: Mapping[str, str] | None = None) -> str:
    """The static value of a word, or its text as a _Dynamic where it expands at run time.

    `env` holds the variables whose values the walk knows (assigned earlier in the line,
    loop variables, a function's parameters)."""
    kind = node.type
    if kind == "word" or kind == "number":
        text = source[node.start_byte : node.end_byte]
        if is_windows_absolute(text) or is_windows_relative(text):
            # `C:\Users\bob`, `tmp\a.reg`: bash would read `C:Usersbob`, which nobody means
            return text
        return _unescape(text)
    if kind == "command_name":
        children = node.named_children
        if len(children) == 1:
            return _resolve(children[0], source, env)
        return _join([_resolve(c, source, env) for c in children] or [_text(node, source)])
    if kind == "raw_string":
        return source[node.start_byte + 1 : node.end_byte - 1]
    if kind == "ansi_c_string":
        return _ansi_c(source[node.start_byte + 2 : node.end_byte - 1])
    if kind == "string":
        # The grammar leaves the newlines of a multi-line string between its pieces: the
        # text between them is kept, or `python3 -c "import x<NL>for ..."` loses its lines.
        parts: list[str] = []
        position = node.start_byte + 1
        for child in node.named_children:
            if child.start_byte > position:
                parts.append(_unescape_double(source[position : child.start_byte]))
            if child.type == "string_content":
                parts.append(_unescape_double(_text(child, source)))
            else:
                parts.append(_resolve(child, source, env))
            position = max(position, child.end_byte)
        if node.end_byte - 1 > position:
            parts.append(_unescape_double(source[position : node.end_byte - 1]))
        return _join(parts)
    if kind == "concatenation":
        return _join([_resolve(c, source, env) for c in node.named_children])
    if kind == "simple_expansion" or kind == "expansion":
        return _expand(node, source, env)
    if kind == "command_substitution":
        printed = _printed_by_substitution(node, source, env)
        if printed is not None:
            return printed
    text = _text(node, source)
    if kind in ("regex", "extglob_pattern"):
        return text
    return _Dynamic(text)  # substitutions, arithmetic and anything unknown


_VARIABLE_NODES = frozenset({"variable_name", "special_variable_name"})
_COMPOUND_STATEMENTS = frozenset(
    {"while_statement", "for_statement", "c_style_for_statement", "if_statement",
     "case_statement", "compound_statement", "subshell"}
)  # fmt: skip


def _printed_by_substitution(node: Node, source: str, env: Mapping[str, str] | None) -> str | None:
    """`$(echo /)`, `` `printf ~` ``, `$(dirname /etc/x)`: what a substitution of one
    command with static words prints (the shell drops the trailing newlines)."""
    named = [c for c in node.named_children if c.type != "comment"]
    if len(named) != 1 or named[0].type != "command":
        return None
    command = named[0]
    name = command.child_by_field_name("name")
    if name is None or command.children_by_field_name("redirect"):
        return None
    inner = source[command.start_byte : command.end_byte]
    if "$(" in inner or "`" in inner:
        return None  # nested substitutions stay unknown (and the resolver stays flat)
    program = _program_name(_resolve(name, source, env))
    if program not in _STATIC_PRINTERS:
        return None
    args = tuple(_resolve(c, source, env) for c in command.children_by_field_name("argument"))
    if any(map(_dynamic, args)) or sum(map(len, args)) > _MAX_VALUE:
        return None
    if program == "dirname":
        paths = [a for a in args if not a.startswith("-")]
        text = "\n".join(posixpath.dirname(p.rstrip("/")) or "." for p in paths)
    elif program == "basename":
        paths = [a for a in args if not a.startswith("-")]
        text = posixpath.basename(paths[0].rstrip("/")) if paths else ""
    else:
        text = printed_text(program, args)
    return text.rstrip("\n")


_STATIC_PRINTERS = frozenset({"echo", "printf", "dirname", "basename"})


def _expand(node: Node, source: str, env: Mapping[str, str] | None) -> str:
    """`$x`, `${x}` and `${x<operator>...}`: the value where the walk knows it."""
    children = node.children
    named = node.named_children
    first = named[0] if named else None
    if first is None:
        return _Dynamic(_text(node, source))
    prefix = children[1].type if len(children) > 2 and not children[1].is_named else ""
    if first.type == "subscript":
        name = _subscript_key(first, source, env)
    elif first.type in _VARIABLE_NODES:
        name = _text(first, source)
    else:
        return _Dynamic(_text(node, source))
    value = _lookup(env, name) if env else None
    if prefix == "!" and node.type == "expansion":
        if value is None or _dynamic(value) or len(children) != 4:
            return _Dynamic(_text(node, source))  # `${!prefix*}`, `${!a[@]}`: names, not values
        name, value = value, _lookup(env, value) if env else None
    operator = _operator(node, first)
    if value is None:
        if operator in _UNSET_DEFAULTS and len(named) == 2 and name not in _KNOWN_VARIABLES:
            # Unset here: the default is the value to judge (`rm -rf ${DIR:-/}`).
            return _resolve(named[1], source, env)
        if name in _KNOWN_VARIABLES and len(named) == 1 and not prefix:
            known = _KNOWN_VARIABLES[name]
            return known if name == "HOME" else _Dynamic(known)
        return _Dynamic("$" + (name or _text(node, source)))
    if prefix == "#" and node.type == "expansion":
        if name.endswith("[@]") or name.endswith("[*]"):
            return str(len(value.split(_ELEMENTS))) if value else "0"
        return _Dynamic(_text(node, source)) if _dynamic(value) else str(len(value))
    if name.endswith("[@]") or name.endswith("[*]"):
        value = _join(value.split(_ELEMENTS)) if _ELEMENTS in value else value
        value = value.replace(_ELEMENTS, " ") if not _dynamic(value) else value
    if not operator:
        return value
    if operator in _DEFAULTS_OPERATORS:
        operand = named[1] if len(named) > 1 else None
        if operator in ("+", ":+"):
            if operator == "+" or value:
                return _resolve(operand, source, env) if operand is not None else ""
            return ""
        if operator.startswith(":") and not value:
            return _resolve(operand, source, env) if operand is not None else ""
        return value
    if _dynamic(value):
        return _Dynamic(_text(node, source))
    result = _operated(node, source, env, value, operator, len(named) > 1)
    if result is None:
        # The value is known but the walk cannot follow what is done to it: a word that
        # hides its value this way is a reason to ask.
        if isinstance(env, _Variables):
            env.unfollowed.append(_text(node, source)[:80])
        return _Dynamic(_text(node, source))
    return result


_MAX_PATTERN_WORK = 2_000_000  # glob steps per line; beyond it expansions are unresolved
_DEFAULTS_OPERATORS = frozenset({":-", "-", ":=", "=", ":+", "+", ":?", "?"})
_UNSET_DEFAULTS = frozenset({":-", "-", ":=", "="})
_CASE_OPERATORS = frozenset({",,", ",", "^^", "^", "~~", "~"})
_TRIM_OPERATORS = frozenset({"#", "##", "%", "%%"})
_REPLACE_OPERATORS = frozenset({"/", "//", "/#", "/%"})
_ELEMENTS = "\x1f"  # separates an array's elements inside one stored value


def _operator(node: Node, variable: Node) -> str:
    """The operator token after the variable (`%`, `//`, `:`, `,,`, `@`), or ""."""
    seen = False
    for child in node.children:
        if child is variable or child.id == variable.id:
            seen = True
        elif seen and not child.is_named and child.type != "}":
            return child.type
    return ""


def _operated(
    node: Node,
    source: str,
    env: Mapping[str, str] | None,
    value: str,
    operator: str,
    has_operands: bool,
) -> str | None:
    if operator in _CASE_OPERATORS:
        return parameters.change_case(value, operator) if not has_operands else None
    if operator == "@":
        letter = next(
            (c.type for c in reversed(node.children) if not c.is_named and c.type != "}"), ""
        )
        if letter in ("U", "L", "u"):
            return parameters.change_case(value, "@" + letter)
        if letter == "E":
            return _ansi_c(value)
        if letter == "Q":
            return value
        return None
    texts: list[str | None] = []  # the operands between separators; None: left out
    for operand in _operand_groups(node, operator):
        text = _pattern_text(operand, source, env) if operand is not None else ""
        if text is None:
            return None
        texts.append(text if operand is not None else None)
    if operator in _TRIM_OPERATORS or operator in _REPLACE_OPERATORS:
        # Pattern matching is quadratic: a line may spend only so much on it in total.
        cost = parameters.matching_cost(value, texts[0] or "") if texts else 0
        if isinstance(env, _Variables):
            env.pattern_work += cost
            if env.pattern_work > _MAX_PATTERN_WORK:
                return None
    if operator in _TRIM_OPERATORS:
        return parameters.trim(value, operator, texts[0] or "") if len(texts) == 1 else None
    if operator in _REPLACE_OPERATORS:
        if not texts:
            return None
        pattern = texts[0] or ""
        if (len(pattern) - len(pattern.rstrip("\\"))) % 2 == 1:
            return None  # `${x//\//}`: the grammar splits at the escaped slash
        replacement = texts[1] if len(texts) > 1 else ""
        return parameters.replace(value, operator, pattern, replacement or "")
    if operator == ":" and texts and texts[0] is not None:
        length = texts[1] if len(texts) > 1 else None
        if len(texts) > 1 and length is None:
            length = "0"  # `${x:2:}`: an empty length is zero
        return parameters.substring(value, texts[0], length)
    return None


def _operand_groups(node: Node, operator: str) -> list[Node | None]:
    """The operands after the operator, split at `/` (replacements) or `:` (substrings):
    `${x/%/R}` is [None, R], `${x/a}` is [a]."""
    separator = "/" if operator in _REPLACE_OPERATORS else ":"
    groups: list[Node | None] = [None]
    after = False
    for child in node.children:
        if not after:
            after = not child.is_named and child.type == operator
            continue
        if child.type == "/" and operator in ("/", "//") and len(groups) == 1 and groups[0] is None:
            return []  # `${x///*/R}`: a pattern that starts with `/` is misread by the grammar
        if child.is_named:
            groups[-1] = child
        elif child.type == separator:
            groups.append(None)
    return groups


def _pattern_text(node: Node, source: str, env: Mapping[str, str] | None) -> str | None:
    """An operand of `${x%...}`, `${x/.../...}`, `${x:...}`: its text with variables put in."""
    if node.type in ("regex", "word", "number"):
        text = _text(node, source)
        if "$" in text or "`" in text:
            text = _SIMPLE_VARIABLE.sub(lambda m: _variable_text(m, env), text)
            if "$" in text or "`" in text:
                return None
        return text
    resolved = _resolve(node, source, env)
    return None if _dynamic(resolved) else resolved


_SIMPLE_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")


def _variable_text(match: re.Match[str], env: Mapping[str, str] | None) -> str:
    value = _lookup(env, match.group(1)) if env else None
    return match.group(0) if value is None or _dynamic(value) else value


def _subscript_key(node: Node, source: str, env: Mapping[str, str] | None) -> str:
    """`a[0]`, `a[$i]`, `a[@]`: the key the element is kept under."""
    variable = node.child_by_field_name("name")
    index = node.child_by_field_name("index")
    if variable is None or index is None:
        return _text(node, source)
    key = _resolve(index, source, env)
    if _dynamic(key):
        return _text(node, source)
    return f"{_text(variable, source)}[{key.strip()}]"


_REFERENCE = "\x00ref:"  # env key prefix of `declare -n` names: `${ref}` reads another variable


def _lookup(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name)
    if value is not None:
        return value
    for _ in range(8):  # namerefs may point at namerefs
        target = env.get(_REFERENCE + name)
        if target is None:
            return None
        value = env.get(target)
        if value is not None:
            return value
        name = target
    return None


class _Variables(dict[str, str]):
    """The walk's variables, plus the words whose known value was transformed in a way the
    walk cannot follow (reported as problems: the line asks)."""

    __slots__ = ("pattern_work", "unfollowed")

    def __init__(self) -> None:
        super().__init__()
        self.unfollowed: list[str] = []
        self.pattern_work = 0  # glob-matching steps spent by `${x%...}` and `${x/...}`


def _join(parts: list[str]) -> str:
    if len(parts) > 1 and parts[0] in _HERE and parts[1][:1] == "/":
        # `"$PWD/x.sh"`, `"$(git rev-parse --show-toplevel)/.cache/lib.sh"`: a path below
        # where the line runs (a hook runs at the top of its work tree). The bare word
        # stays unknown: `rm -rf "$PWD"` is judged as unresolved, which asks.
        parts = [".", *parts[1:]]
    text = "".join(parts)
    return _Dynamic(text) if any(type(p) is _Dynamic for p in parts) else text


_HERE = frozenset(
    {"$PWD", "${PWD}", "$(pwd)", "`pwd`", "$(pwd -P)", "$(git rev-parse --show-toplevel)",
     "`git rev-parse --show-toplevel`"}
)  # fmt: skip


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

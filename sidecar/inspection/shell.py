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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

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


@dataclass(frozen=True, slots=True)
class Redirect:
    operator: str  # ">", ">>", "<", "&>", ...
    target: str


@dataclass(frozen=True, slots=True)
class SimpleCommand:
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


@dataclass(frozen=True, slots=True)
class ShellAnalysis:
    commands: tuple[SimpleCommand, ...]
    problems: tuple[str, ...]  # what cannot be resolved statically
    parse_error: bool = False
    recursive_functions: tuple[str, ...] = ()  # functions that call themselves (fork bombs)


@dataclass(slots=True)
class _Word:
    text: str
    dynamic: bool = False


@dataclass(slots=True)
class _Walk:
    wrappers: Mapping[str, WrapperSpec]
    commands: list[SimpleCommand] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    parse_error: bool = False
    recursive_functions: list[str] = field(default_factory=list)


_LANGUAGE = Language(tree_sitter_bash.language())
_PARSERS = threading.local()
_SOURCE = threading.local()  # the script whose tree is being walked, in this thread
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
    outer = getattr(_SOURCE, "text", "")
    _SOURCE.text = script
    try:
        _walk_tree(walk, tree, depth, via, input_from)
    finally:
        _SOURCE.text = outer


def _walk_tree(
    walk: _Walk, tree: Tree, depth: int, via: str, input_from: SimpleCommand | None
) -> None:
    if tree.root_node.has_error:
        walk.parse_error = True
    previous_stage: dict[int, int] = {}  # pipeline stage id -> the stage feeding it
    stage_heads: dict[int, SimpleCommand] = {}  # node id -> the last command inside it
    stack: list[Node] = [tree.root_node]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind == "pipeline":
            stages = [c for c in node.named_children if c.type != "comment"]
            for before, after in itertools.pairwise(stages):
                previous_stage[after.id] = before.id
        elif kind == "command":
            # Earlier stages were walked first (children are pushed in reverse).
            feed, piped = _feed_of(node, previous_stage, stage_heads)
            if not piped and depth:
                feed = input_from
            head = _command(walk, node, depth, via, feed)
            if head is not None:
                _record_producer(node, head, stage_heads)
        elif kind in ("declaration_command", "unset_command"):
            _declaration(walk, node, via)
        elif (
            kind == "variable_assignment"
            and node.parent is not None
            and node.parent.type
            in ("program", "list", "compound_statement", "subshell", "do_group")
        ):
            text = _assignment(node)  # a bare FOO=1 statement
            walk.commands.append(SimpleCommand("(assign)", (text,), frozenset(), (text,), via=via))
        elif kind == "function_definition" and _calls_itself(node):
            name = node.child_by_field_name("name")
            walk.recursive_functions.append(_text(name) if name is not None else "?")
        elif kind in ("raw_string", "heredoc_body", "comment"):
            continue  # data, never executed by itself
        elif kind == "ERROR":
            walk.parse_error = True
        # Anonymous tokens and leaf words hold no commands: skip them unvisited.
        stack.extend(c for c in reversed(node.named_children) if c.type not in _LEAVES)


def _declaration(walk: _Walk, node: Node, via: str) -> None:
    """export/declare/local/readonly/unset: builtins that change the shell's variables."""
    keyword = next((c for c in node.children if not c.is_named), None)
    program = keyword.type if keyword is not None else "export"
    args = tuple(
        _assignment(c) if c.type == "variable_assignment" else _resolve(c).text
        for c in node.named_children
    )
    flags, positionals = _split_flags(args)
    walk.commands.append(SimpleCommand(program, args, flags, positionals, via=via))


def _assignment(node: Node) -> str:
    name = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    left = _text(name) if name is not None else ""
    return f"{left}={_resolve(value).text}" if value is not None else f"{left}="


def _calls_itself(function: Node) -> bool:
    name_node = function.child_by_field_name("name")
    body = function.child_by_field_name("body")
    if name_node is None or body is None:
        return False
    name = _text(name_node)
    stack = [body]
    while stack:
        node = stack.pop()
        if node.type == "command":
            called = node.child_by_field_name("name")
            if called is not None and _resolve(called).text == name:
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


def _feed_of(
    command: Node, previous_stage: dict[int, int], producers: dict[int, SimpleCommand]
) -> tuple[SimpleCommand | None, bool]:
    """The command whose output this one reads through a pipe, and whether it is piped."""
    current = command
    for _ in range(_MAX_STAGE_DEPTH):
        if current.id in previous_stage:
            return producers.get(previous_stage[current.id]), True
        parent = current.parent
        if parent is None or parent.type not in _STAGE_CONTAINERS:
            break
        current = parent
    return None, False


def _record_producer(
    command: Node, built: SimpleCommand, producers: dict[int, SimpleCommand]
) -> None:
    """The last command inside a stage is what the next stage reads from."""
    current: Node | None = command
    for _ in range(_MAX_STAGE_DEPTH):
        if current is None:
            break
        producers[current.id] = built
        current = current.parent
        if current is None or current.type not in _STAGE_CONTAINERS:
            break


def _command(
    walk: _Walk, node: Node, depth: int, via: str, input_from: SimpleCommand | None
) -> SimpleCommand | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    arguments = node.children_by_field_name("argument")
    words = [_resolve(name_node), *(_resolve(c) for c in arguments)]
    redirect_nodes = _redirect_nodes(node)
    redirects, heredoc = _redirects(redirect_nodes)
    if input_from is None:
        input_from = _substituted_command(arguments)
    if input_from is None and redirect_nodes:
        input_from = _redirected_substitution(redirect_nodes)
    return _emit(walk, words, redirects, heredoc, depth, via, input_from, wrappers=())


def _emit(
    walk: _Walk,
    words: list[_Word],
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
    if name.dynamic:
        walk.problems.append(f"command name is computed at run time: {name.text[:80]}")
        return None
    program = _program_name(name.text)
    if not program:
        return None
    if all(part in _RESERVED_WORDS for part in program.split()):
        # `sudo { rm -rf /; }`: judge what follows the keyword, to be safe.
        return _emit(walk, words[1:], redirects, heredoc, depth, via, input_from, wrappers)
    rest = words[1:]
    spec = walk.wrappers.get(program)
    if spec is not None:
        own_options = itertools.takewhile(lambda w: w.text.startswith("-"), rest)
        if any(w.text in spec.not_executing_flags for w in own_options):
            return _record(walk, program, rest, redirects, input_from, wrappers, via)
        inner = _unwrap(rest, spec)
        # The wrapper runs too (sudo, chroot): rules may care about it as well.
        wrapper = _record(walk, program, rest, redirects, input_from, wrappers, via)
        if not inner:
            return wrapper  # `env` alone prints the environment
        if program == "env":
            inner = _env_split_string(walk, rest, inner, depth, via)
        if program == "xargs":
            # xargs appends what it reads to the command: use it where it is static.
            inner = inner + _static_output(input_from)
            via = "xargs"
        return _emit(walk, inner, redirects, heredoc, depth, via, input_from, (*wrappers, program))
    command = _record(walk, program, rest, redirects, input_from, wrappers, via)
    _follow_nested(walk, command, rest, heredoc, depth)
    return command


def _record(
    walk: _Walk,
    program: str,
    rest: list[_Word],
    redirects: tuple[Redirect, ...],
    input_from: SimpleCommand | None,
    wrappers: tuple[str, ...],
    via: str,
) -> SimpleCommand:
    args = tuple(w.text for w in rest)
    flags, positionals = _split_flags(args)
    command = SimpleCommand(program, args, flags, positionals, redirects, input_from, wrappers, via)
    walk.commands.append(command)
    return command


def _follow_nested(
    walk: _Walk, command: SimpleCommand, rest: list[_Word], heredoc: str | None, depth: int
) -> None:
    """Parse the code that a command hands to a shell."""
    program = command.program
    if program in SHELLS:
        script_index = _shell_c_index(rest)
        if script_index is not None:
            if script_index >= len(rest):
                return
            script = rest[script_index]
            if script.dynamic:
                walk.problems.append(f"{program} -c runs code computed at run time")
            _walk_script(walk, script.text, depth + 1, f"{program} -c", command.input_from)
            return
        if heredoc is not None:
            _walk_script(walk, heredoc, depth + 1, "heredoc", None)
            return
        if not command.positionals or command.positionals[0] == "-":
            _follow_stdin(walk, command, depth)
        return
    if program in ("eval", "source", "."):
        if program == "eval":
            text = " ".join(w.text for w in rest)
            if any(w.dynamic for w in rest):
                walk.problems.append("eval runs code computed at run time")
            _walk_script(walk, text, depth + 1, "eval", command.input_from)
        elif command.input_from is not None:
            _follow_stdin(walk, command, depth)
        return
    if program == "find":
        _find_exec(walk, rest, depth)


def _follow_stdin(walk: _Walk, shell: SimpleCommand, depth: int) -> None:
    source = shell.input_from
    if source is None:
        return
    if source.program in ("echo", "printf") and source.args:
        body = " ".join(a for a in source.args if not a.startswith("-"))
        _walk_script(
            walk, body.replace("\\n", "\n"), depth + 1, f"piped into {shell.program}", None
        )
    elif source.program in ("cat",) and not source.positionals:
        return
    else:
        walk.problems.append(
            f"{shell.program} executes the output of {source.program or 'another command'}"
        )


def _static_output(source: SimpleCommand | None) -> list[_Word]:
    """What echo/printf with literal arguments print, as words."""
    if source is None or source.program not in ("echo", "printf"):
        return []
    return [_Word(part) for arg in source.positionals for part in arg.split()]


def _find_exec(walk: _Walk, rest: list[_Word], depth: int) -> None:
    # The starting points come before the first expression; {} stands for what is found.
    roots = []
    for word in rest:
        if word.text.startswith(("-", "(", "!")):
            break
        roots.append(word)
    index = 0
    while index < len(rest):
        if rest[index].text in ("-exec", "-execdir", "-ok", "-okdir"):
            end = index + 1
            while end < len(rest) and rest[end].text not in (";", "+", "\\;"):
                end += 1
            target = rest[index + 1 : end]
            placeholder = [i for i, w in enumerate(target) if w.text == "{}"]
            if placeholder and roots:
                at = placeholder[0]
                target = target[:at] + roots + target[at + 1 :]
            _emit(walk, target, (), None, depth, "find -exec", None, ())
            index = end
        index += 1


def _env_split_string(
    walk: _Walk, rest: list[_Word], inner: list[_Word], depth: int, via: str
) -> list[_Word]:
    for position, word in enumerate(rest[:-1]):
        if word.text in ("-S", "--split-string"):
            return [_Word(part) for part in rest[position + 1].text.split()] + inner[1:]
    return inner


def _shell_c_index(rest: list[_Word]) -> int | None:
    """Where the -c script sits among a shell's arguments, if it has one."""
    for position, word in enumerate(rest):
        text = word.text
        if text == "--":
            return None
        if text.startswith("-") and not text.startswith("--") and "c" in text[1:]:
            return position + 1
        if not text.startswith("-") and not text.startswith("+"):
            return None
    return None


def _unwrap(rest: list[_Word], spec: WrapperSpec) -> list[_Word]:
    index = 0
    skipped = 0
    while index < len(rest):
        text = rest[index].text
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
    return text.rstrip("/").rsplit("/", 1)[-1]


def _redirect_nodes(command: Node) -> list[Node]:
    """Redirects on the command and on every enclosing redirected statement.

    tree-sitter attaches `ls && echo x >> f` to the whole list; applying such a
    redirect to every command inside is the conservative reading.
    """
    nodes = list(command.children_by_field_name("redirect"))
    current = command.parent
    for _ in range(_MAX_STAGE_DEPTH):
        if current is None or current.type not in _STAGE_CONTAINERS:
            break
        if current.type == "redirected_statement":
            nodes += current.children_by_field_name("redirect")
        current = current.parent
    return nodes


def _redirects(nodes: list[Node]) -> tuple[tuple[Redirect, ...], str | None]:
    if not nodes:
        return (), None
    found: list[Redirect] = []
    heredoc: str | None = None
    for child in nodes:
        if child.type == "file_redirect":
            destination = child.child_by_field_name("destination")
            operator = next((c.type for c in child.children if not c.is_named), "")
            if destination is not None:
                found.append(Redirect(operator, _resolve(destination).text))
        elif child.type == "heredoc_redirect":
            body = next((c for c in child.named_children if c.type == "heredoc_body"), None)
            heredoc = _text(body) if body is not None else ""
        elif child.type == "herestring_redirect":
            words = [c for c in child.named_children]
            heredoc = " ".join(_resolve(w).text for w in words)
    return tuple(found), heredoc


def _substituted_command(arguments: list[Node]) -> SimpleCommand | None:
    """The first command whose output is spliced into this command's arguments."""
    for argument in arguments:
        if argument.type in _LEAVES:
            continue  # plain words hold no substitution
        candidates = [argument, *argument.named_children]
        for candidate in candidates:
            if candidate.type in ("command_substitution", "process_substitution"):
                inner = _first_command(candidate)
                if inner is not None:
                    return _quick(inner)
    return None


def _redirected_substitution(redirects: list[Node]) -> SimpleCommand | None:
    """cmd < <(producer): the producer feeds the command's input."""
    for redirect in redirects:
        destination = redirect.child_by_field_name("destination")
        if destination is not None and destination.type == "process_substitution":
            inner = _first_command(destination)
            if inner is not None:
                return _quick(inner)
    return None


def _first_command(node: Node) -> Node | None:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "command":
            return current
        stack.extend(reversed(current.children))
    return None


def _quick(command: Node) -> SimpleCommand | None:
    """A command seen only as the producer of another's input."""
    name = command.child_by_field_name("name")
    if name is None:
        return None
    args = tuple(_resolve(c).text for c in command.children_by_field_name("argument"))
    flags, positionals = _split_flags(args)
    return SimpleCommand(_program_name(_resolve(name).text), args, flags, positionals)


def _text(node: Node) -> str:
    # Offsets index the ASCII stand-in, which has one byte per original character.
    source: str = _SOURCE.text
    return source[node.start_byte : node.end_byte]


_KNOWN_VARIABLES = {"HOME": "~", "USER": "$USER"}


def _resolve(node: Node) -> _Word:
    """The static value of a word, or its text with expansions marked dynamic."""
    kind = node.type
    if kind == "word" or kind == "number":
        return _Word(_unescape(_text(node)))
    if kind == "command_name":
        return _join([_resolve(c) for c in node.named_children] or [_Word(_text(node))])
    if kind == "raw_string":
        return _Word(_text(node)[1:-1])
    if kind == "ansi_c_string":
        return _Word(_ansi_c(_text(node)[2:-1]))
    if kind == "string":
        parts: list[_Word] = []
        for child in node.named_children:
            if child.type == "string_content":
                parts.append(_Word(_unescape_double(_text(child))))
            else:
                parts.append(_resolve(child))
        return _join(parts)
    if kind == "concatenation":
        return _join([_resolve(c) for c in node.named_children])
    if kind in ("simple_expansion", "expansion"):
        variable = next((c for c in node.named_children if c.type == "variable_name"), None)
        name = _text(variable) if variable is not None else ""
        if name in _KNOWN_VARIABLES and len(node.named_children) == 1:
            return _Word(_KNOWN_VARIABLES[name], dynamic=name != "HOME")
        return _Word("$" + (name or _text(node)), dynamic=True)
    if kind in ("command_substitution", "process_substitution", "arithmetic_expansion"):
        return _Word(_text(node), dynamic=True)
    return _Word(_text(node), dynamic=kind not in ("regex", "extglob_pattern"))


def _join(parts: Iterable[_Word]) -> _Word:
    collected = list(parts)
    return _Word("".join(p.text for p in collected), any(p.dynamic for p in collected))


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

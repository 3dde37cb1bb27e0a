"""The effects of a shell line: each command's effects from the catalogue and its redirects,
then the data flow between the commands of the line.

Data flow: what a command writes keeps the origin of what it wrote (downloaded, decoded,
literal code) and the files it carried (`tar czf /tmp/k.tgz ~/.ssh`); a later command that
runs, installs, sources or sends that file is judged with that origin: `curl -o x URL &&
bash x` executes network code, `tar czf k.tgz ~/.ssh && curl -F f=@k.tgz` sends keys.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from sidecar.effects.catalogue import Catalogue, effects_of, literal_text
from sidecar.effects.hosts import host_of
from sidecar.effects.model import ENVIRONMENT, STDIN, UNRESOLVED, Action, Effect, Origin
from sidecar.effects.paths import normalise
from sidecar.shell.walk import ShellAnalysis, SimpleCommand

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
_READS = frozenset({Action.READ, Action.FETCH})


class LineEffects(NamedTuple):
    effects: tuple[Effect, ...]
    unknown_programs: tuple[str, ...]  # programs the catalogue does not know
    read_only: bool  # every command is a known read-only one, writing nothing


@dataclass(slots=True)
class _Flow:
    """What the line has produced so far, by path."""

    origins: dict[str, Origin] = field(default_factory=dict)  # file -> origin of its content
    contents: dict[str, str] = field(default_factory=dict)  # file -> literal content written
    carried: dict[str, tuple[str, ...]] = field(default_factory=dict)  # file -> sources in it
    unpacked: Origin = Origin.NONE  # an archive of this origin was unpacked into the workspace
    outputs: dict[int, tuple[Origin, tuple[str, ...], str]] = field(default_factory=dict)


def line_effects(
    analysis: ShellAnalysis,
    catalogue: Catalogue,
    code_effects: Callable[[SimpleCommand], Iterable[Effect]] | None = None,
) -> LineEffects:
    flow = _Flow()
    effects: list[Effect] = []
    unknown: list[str] = []
    read_only = not analysis.problems and not analysis.parse_error
    for command in analysis.commands:
        if command.program in _BOOKKEEPING:
            continue
        found, known, quiet = _command_effects(command, catalogue, flow)
        if code_effects is not None:
            found.extend(code_effects(command))
        if not known:
            unknown.append(command.program)
            read_only = False
        elif not quiet or any(e.action not in _READS for e in found):
            read_only = False
        effects.extend(found)
    return LineEffects(
        tuple(effects),
        tuple(dict.fromkeys(unknown)),
        read_only and bool(effects or analysis.commands),
    )


def _command_effects(
    command: SimpleCommand, catalogue: Catalogue, flow: _Flow
) -> tuple[list[Effect], bool, bool]:
    """The command's effects, whether the catalogue knows it, and whether it only reads."""
    input_origin, input_sources, input_text = _input_of(command, catalogue, flow)
    program, args = _module_as_program(command)
    parsed = catalogue.parse(program, args)
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
                    output_text = literal_text(parsed)
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
    found = [_with_flow(effect, flow, input_origin, input_sources) for effect in found]
    found.extend(_redirect_effects(command, output_origin, output_sources, output_text, flow))
    _remember(found, flow, output_origin, output_sources)
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
        return Origin.LITERAL, (), literal_text(parsed)
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
            return _file_origin(path, flow), (path,), flow.contents.get(path, "")
    return Origin.NONE, (), ""


# Named flags by which an interpreter gets its code elsewhere than standard input.
_STDIN_OFF = frozenset({"command", "module", "file"})
_RUNS = frozenset({Action.EXECUTE, Action.PERSIST, Action.INSTALL})
_UNRESOLVED = frozenset({"unresolved"})


def _with_flow(
    effect: Effect, flow: _Flow, input_origin: Origin, input_sources: tuple[str, ...]
) -> Effect:
    """Resolve an effect's origin and data against what the line produced before it."""
    action = effect.action
    if effect.target == STDIN and action in _RUNS and effect.origin is Origin.NONE:
        fed = input_origin if input_origin is not Origin.NONE else Origin.UNKNOWN
        flags = effect.flags - _UNRESOLVED
        return effect._replace(origin=fed, data=input_sources, flags=flags)
    if action in (Action.EXECUTE, Action.INSTALL, Action.PERSIST) and effect.target not in (
        STDIN,
        UNRESOLVED,
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
            found.append(Effect(Action.CONNECT, host, program=command.program))
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
        if effect.program in _UNPACKERS and effect.action is Action.READ:
            archive = flow.origins.get(effect.target)
            if archive is Origin.NETWORK or archive is Origin.DECODED:
                flow.unpacked = archive


def _file_origin(path: str, flow: _Flow) -> Origin:
    origin = flow.origins.get(path)
    if origin is not None:
        return origin
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

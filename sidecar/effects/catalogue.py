"""The program catalogue compiled for lookups: a parsed command in, its effects out.

The catalogue is data (`programs:` in policy files, schema in `sidecar/policy/programs.py`).
This module reads a command's words the way the program does — which options take a value,
which words are subcommands, which are operands — and applies the spec's effect templates.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import re2

from sidecar.bounded_cache import BoundedCache
from sidecar.effects.hosts import host_of
from sidecar.effects.model import STDIN, UNRESOLVED, Action, Effect, Origin
from sidecar.effects.paths import normalise
from sidecar.effects.secret_output import CompiledSecretOutput, compile_secret_outputs
from sidecar.matching.globs import glob_to_re2
from sidecar.policy.programs import SELECTOR_PREFIXES, EffectSpec, ProgramSpec

_ORIGINS = {origin.value: origin for origin in Origin}
_ACTIONS = {action.value: action for action in Action}


class Selector(NamedTuple):
    kind: str  # operands, operand, option, assign, literal, command, stdin
    start: int | None = None
    stop: int | None = None
    names: tuple[str, ...] = ()
    text: str = ""
    refine: str = ""  # a SELECTOR_PREFIXES entry without its colon


def compile_selector(text: str) -> Selector:
    for prefix in SELECTOR_PREFIXES:
        if text.startswith(prefix):
            return compile_selector(text[len(prefix) :])._replace(refine=prefix[:-1])
    if text in ("operands", "command", "stdin"):
        return Selector(text)
    head, _, rest = text.partition(":")
    if head == "option":
        return Selector("option", names=tuple(rest.split("|")))
    if head == "assign":
        return Selector("assign", text=rest + "=")
    if head == "literal":
        return Selector("literal", text=rest)
    body = text[text.index("[") + 1 : -1]
    if text.startswith("operand["):
        index = int(body)
        return Selector("operands", index, index + 1 if index != -1 else None)
    start, _, stop = body.partition(":")
    return Selector(
        "operands", int(start) if start.strip() else None, int(stop) if stop.strip() else None
    )


@dataclass(frozen=True, slots=True)
class CompiledEffect:
    action: Action
    target: Selector
    kind: str
    when: frozenset[str]
    unless: frozenset[str]
    when_all: frozenset[str]
    flags: frozenset[str]
    origin: Origin | None  # None: "input", resolved from what feeds the command
    data: Selector | None
    mode: Selector | None
    content: Selector | None = None
    match: re2._Regexp | None = None
    not_match: re2._Regexp | None = None

    def applies_to(self, word: str) -> bool:
        if self.match is not None and self.match.search(word) is None:
            return False
        return self.not_match is None or self.not_match.search(word) is None


@dataclass(slots=True)
class CompiledProgram:
    name: str  # "git push" for a subcommand
    value_options: frozenset[str]
    flag_names: dict[str, str]  # spelling -> named flag
    effects: tuple[CompiledEffect, ...]
    output: str
    output_when: frozenset[str]
    decodes_when: frozenset[str]
    runs_stdin: bool
    bundled_first_word: bool
    read_only: bool
    read_only_unless: frozenset[str]
    unknown_subcommand: str
    text_flags: tuple[tuple[str, re2._Regexp], ...] = ()
    runs_command: bool = False
    place_is_directory: bool = False
    operands_below: tuple[str, ...] = ()
    single_dash_words: bool = False
    slash_options: bool = False
    read_only_when: frozenset[str] = frozenset()
    read_only_twin: CompiledProgram | None = None  # the same spec, read-only
    prints_secrets: tuple[CompiledSecretOutput, ...] = ()  # its own and its parents'
    subcommands: dict[str, CompiledProgram] = field(default_factory=dict)
    subcommand_globs: list[tuple[re2._Regexp, CompiledProgram]] = field(default_factory=list)

    def subcommand(self, word: str) -> CompiledProgram | None:
        found = self.subcommands.get(word)
        if found is None and self.subcommand_globs:
            found = next((p for g, p in self.subcommand_globs if g.fullmatch(word)), None)
        return found


class ParsedCommand(NamedTuple):
    """A command read the way its program reads it."""

    spec: CompiledProgram  # the deepest subcommand's spec
    operands: tuple[str, ...]
    options: Mapping[str, tuple[str, ...]]  # spelling -> values ("" for a bare flag)
    named: frozenset[str]  # named flags given
    unknown_subcommand: bool = False
    # A program that runs another (`npx prisma migrate reset`): the words of the command it
    # runs; after Catalogue.parse, the parse is the inner command's and `outer` the runner's.
    runs: tuple[str, ...] = ()
    outer: ParsedCommand | None = None
    words: tuple[str, ...] = ()  # the inner command's program and arguments


def _compile(
    name: str,
    spec: ProgramSpec,
    inherited_values: frozenset[str] = frozenset(),
    inherited_flags: Mapping[str, str] | None = None,
    inherited_text: Mapping[str, re2._Regexp] | None = None,
    inherited_secrets: tuple[CompiledSecretOutput, ...] = (),
) -> CompiledProgram:
    values = inherited_values | frozenset(spec.value_options)
    flag_names = dict(inherited_flags or {})
    for flag, spellings in spec.flags.items():
        for spelling in spellings:
            flag_names[spelling] = flag
    # Compiled once where declared and handed down: recompiling each parent's patterns for
    # every subcommand was most of a policy compile.
    text_flags = {
        **(inherited_text or {}),
        **{flag: re2.compile(pattern) for flag, pattern in spec.text_flags.items()},
    }
    program = CompiledProgram(
        name=name,
        value_options=values,
        flag_names=flag_names,
        effects=tuple(_compile_effect(e) for e in spec.effects),
        output=spec.output,
        output_when=frozenset(spec.output_when),
        decodes_when=frozenset(spec.decodes_when),
        runs_stdin=spec.runs_stdin,
        bundled_first_word=spec.bundled_first_word,
        read_only=spec.read_only,
        single_dash_words=spec.single_dash_words,
        slash_options=spec.slash_options,
        read_only_unless=frozenset(spec.read_only_unless),
        unknown_subcommand=spec.unknown_subcommand,
        text_flags=tuple(text_flags.items()),
        runs_command=spec.runs_command,
        place_is_directory=spec.place_is_directory,
        operands_below=spec.operands_below,
        read_only_when=frozenset(spec.read_only_when),
        prints_secrets=inherited_secrets + compile_secret_outputs(spec.prints_secrets),
    )
    if spec.read_only_when:
        # Read-only when one of those flags is given, unless one of `read_only_unless` is
        # (psql -c SELECT ..., unless a writing statement or a remote host is named too).
        program.read_only_twin = replace(
            program, read_only=not program.read_only_unless, read_only_when=frozenset()
        )
        program.read_only_unless = frozenset()  # without the flag it is no reader at all
    for names, sub in spec.subcommands.items():
        for sub_name in names.split("|"):
            compiled = _compile(
                f"{name} {sub_name}", sub, values, flag_names, text_flags, program.prints_secrets
            )
            if "*" in sub_name:
                program.subcommand_globs.append((re2.compile(glob_to_re2(sub_name)), compiled))
            else:
                program.subcommands[sub_name] = compiled
    return program


def _compile_effect(spec: EffectSpec) -> CompiledEffect:
    return CompiledEffect(
        action=_ACTIONS[spec.action],
        target=compile_selector(spec.target),
        kind=spec.kind,
        when=frozenset(spec.when),
        unless=frozenset(spec.unless),
        when_all=frozenset(spec.when_all),
        flags=frozenset(spec.flags),
        origin=None if spec.origin == "input" else _ORIGINS[spec.origin],
        data=compile_selector(spec.data) if spec.data else None,
        mode=compile_selector(spec.mode) if spec.mode else None,
        content=compile_selector(spec.content) if spec.content else None,
        match=re2.compile(spec.match) if spec.match is not None else None,
        not_match=re2.compile(spec.not_match) if spec.not_match is not None else None,
    )


# What `Catalogue.read` remembers: commands of at most this many characters (words, input).
_READ_ENTRIES = 4096
_READ_BYTES = 8 * 1024 * 1024
_READ_MAX_CHARS = 4096

_Read = tuple[ParsedCommand | None, tuple[Effect, ...]]


class Catalogue:
    def __init__(
        self,
        programs: Mapping[str, ProgramSpec],
        trusted_index: Callable[[str], bool] = lambda host: False,
        text_patterns: Mapping[str, str] | None = None,
    ) -> None:
        self.trusted_index = trusted_index  # package indexes installs may use unasked
        # The policy's named patterns ("production"), for places named outside a program's
        # own words (the host or app a remote command runs on).
        self.text_patterns = {n: re2.compile(p) for n, p in (text_patterns or {}).items()}
        self._read: BoundedCache[tuple[object, ...], _Read] = BoundedCache(
            _READ_ENTRIES, _READ_BYTES
        )
        self._programs: dict[str, CompiledProgram] = {}
        for name, spec in programs.items():
            compiled = _compile(name, spec)
            self._programs[name] = compiled
            for alias in spec.aliases:
                self._programs.setdefault(alias, compiled)

    def pattern_matches(self, pattern: str, text: str) -> bool:
        """Whether the policy's named text pattern (`production`) matches `text`."""
        compiled = self.text_patterns.get(pattern)
        # Home folders name people, not places (`/home/dev/app/test.db` is no dev database).
        return compiled is not None and compiled.search(_HOME_PREFIX.sub("~/", text)) is not None

    def __contains__(self, program: str) -> bool:
        return program in self._programs

    def names(self) -> Iterable[str]:
        return self._programs.keys()

    def lookup(self, program: str) -> CompiledProgram | None:
        found = self._programs.get(program)
        if found is None and program[:6] == "python" and program[6:].replace(".", "").isdigit():
            found = self._programs.get("python3")  # python3.12, python3.11, ...
        if found is None and len(program) > 4 and program[-4:].lower() == ".exe":
            # `curl.exe`, `GIT.EXE`: Windows finds a program by its stem, in any case.
            found = self._programs.get(program[:-4].lower())
        return found

    def read(
        self,
        program: str,
        args: tuple[str, ...],
        environment: tuple[str, ...],
        input_origin: Origin,
        input_text: str,
    ) -> tuple[ParsedCommand | None, list[Effect]]:
        """`parse`, then `effects_of` where the catalogue knows the program: both depend on
        nothing else, so a familiar command in a new line is read once. The key holds each
        word's type too: a run-time `$X` (a str subclass from the walk) is not the text `$X`."""
        size = len(program) + len(input_text) + sum(map(len, args)) + sum(map(len, environment))
        if size > _READ_MAX_CHARS:
            return self._read_afresh(program, args, environment, input_origin, input_text)
        key = (program, args, tuple(map(type, args)), environment, input_origin, input_text)
        found = self._read.get(key)
        if found is None:
            parsed, effects = self._read_afresh(
                program, args, environment, input_origin, input_text
            )
            found = (parsed, tuple(effects))
            # Key and value hold the words a few times over; each effect adds its fields.
            self._read.put(key, found, 4 * size + 300 * len(effects))
        return found[0], list(found[1])

    def _read_afresh(
        self,
        program: str,
        args: tuple[str, ...],
        environment: tuple[str, ...],
        input_origin: Origin,
        input_text: str,
    ) -> tuple[ParsedCommand | None, list[Effect]]:
        parsed = self.parse(program, args, environment=environment)
        if parsed is None:
            return None, []
        return parsed, effects_of(parsed, program, args, input_origin, input_text)

    def parse(
        self,
        program: str,
        args: tuple[str, ...],
        depth: int = 0,
        environment: tuple[str, ...] = (),
    ) -> ParsedCommand | None:
        """Read a command's words; `environment` (`RAILS_ENV=test`) is seen by text flags."""
        spec = self.lookup(program)
        if spec is None:
            return None
        parsed = read_arguments(spec, args)
        if parsed.spec.text_flags:
            line = " ".join((program, *args))
            # Patterns anchored at the program (`^launchctl\s+unload`) see the command as
            # written without assignments too: `LANG=C launchctl unload` is that command.
            full = " ".join((*environment, line)) if environment else line
            # A home folder names a person, not a place: `/home/dev/...` is no dev place.
            placed = _HOME_PREFIX.sub("~/", full) if "/" in full else full
            given = frozenset(
                f
                for f, pattern in parsed.spec.text_flags
                if (
                    pattern.search(placed)
                    if f in _PLACE_FLAGS
                    else pattern.search(full) or (full is not line and pattern.search(line))
                )
            )
            if given:
                parsed = parsed._replace(named=parsed.named | given)
        twin = parsed.spec.read_only_twin
        if twin is not None and not parsed.spec.read_only_when.isdisjoint(parsed.named):
            parsed = parsed._replace(spec=twin)
        if parsed.runs and depth < _MAX_RUNS_DEPTH:
            inner_program = _basename(parsed.runs[0])
            inner = self.parse(inner_program, parsed.runs[1:], depth + 1, environment)
            if inner is not None:
                # The inner command's reading decides what the line does; the runner's own
                # effects (npx installs what it runs) are kept beside it.
                return inner._replace(outer=parsed, words=(inner_program, *parsed.runs[1:]))
        return parsed


_MAX_RUNS_DEPTH = 4  # npx env-cmd prisma ...: runners within runners, bounded
# Text flags that name where a command acts; they are matched with home folders written as ~.
_PLACE_FLAGS = frozenset({"production", "disposable", "staging", "everyday", "throwaway"})
_HOME_PREFIX = re2.compile(r"(?:/home|/Users)/[^/\s]+/")


def read_arguments(spec: CompiledProgram, args: tuple[str, ...]) -> ParsedCommand:
    """Split words into options (with their values) and operands, descending into
    subcommands named by the first operand."""
    operands: list[str] = []
    options: dict[str, list[str]] = {}
    unknown = False
    if spec.bundled_first_word and args and args[0][:1] != "-" and args[0].isalpha():
        args = ("-" + args[0], *args[1:])  # tar xzf a.tgz, ps aux
    index = 0
    options_done = False
    while index < len(args):
        word = args[index]
        index += 1
        if spec.slash_options and not options_done and _SLASH_SWITCH.fullmatch(word):
            name, _, value = word.lower().partition(":")
            if not value and name in spec.value_options and index < len(args):
                value, index = args[index], index + 1
            options.setdefault(name, []).append(value)
            continue
        if options_done or word == "-" or word[:1] != "-" or len(word) < 2:
            if not operands and (spec.subcommands or spec.subcommand_globs) and not options_done:
                sub = spec.subcommand(word)
                if sub is not None:
                    spec = sub
                    continue
                unknown = spec.unknown_subcommand == "unresolved"
            if not operands and spec.runs_command and word != "-":
                # Everything from here is the command it runs, with that command's options.
                operands.extend(args[index - 1 :])
                runs = tuple(args[index - 1 :])
                named = frozenset(spec.flag_names[o] for o in options if o in spec.flag_names)
                return ParsedCommand(
                    spec, tuple(operands), {k: tuple(v) for k, v in options.items()}, named,
                    unknown, runs,
                )  # fmt: skip
            operands.append(word)
            continue
        if word == "--":
            options_done = True
            continue
        if spec.single_dash_words:
            word = _whole_word_option(spec, word)
        name, equals, value = word.partition("=")
        if equals and (word.startswith("--") or name in spec.value_options):
            options.setdefault(name, []).append(value)
        elif word in spec.flag_names and word not in spec.value_options:
            options.setdefault(word, []).append("")  # a whole spelling: find -delete, pwsh -c
        elif word in spec.value_options or word.startswith("--"):
            if word in spec.value_options and index < len(args):
                options.setdefault(word, []).append(args[index])
                index += 1
            else:
                options.setdefault(word, []).append("")
        elif word in spec.flag_names or spec.single_dash_words:
            options.setdefault(word, []).append("")  # -delete, -destroy: one option, not letters
        else:
            index = _short_cluster(spec, word, args, index, options)
    named = frozenset(spec.flag_names[o] for o in options if o in spec.flag_names)
    return ParsedCommand(
        spec, tuple(operands), {k: tuple(v) for k, v in options.items()}, named, unknown
    )


# `/y`, `/MIR`, `/R:3`, `/grant:r`: a Windows switch (a path has a second slash or a dot).
_SLASH_SWITCH = re2.compile(r"/[A-Za-z?][A-Za-z0-9?-]*(?::[^/]*)?")


def _whole_word_option(spec: CompiledProgram, word: str) -> str:
    """`-COMMAND`, `-comm`: the option as the catalogue spells it, where that is one."""
    name, equals, value = word.partition(":") if ":" in word else word.partition("=")
    lowered = name.lower()
    known = [*spec.value_options, *spec.flag_names]
    exact = [o for o in known if o.lower() == lowered]
    if not exact:
        exact = list({o for o in known if o.lower().startswith(lowered)})
    if len(exact) != 1:
        return word
    return exact[0] + (("=" + value) if equals else "")


def _short_cluster(
    spec: CompiledProgram,
    word: str,
    args: tuple[str, ...],
    index: int,
    options: dict[str, list[str]],
) -> int:
    """`-rf`, `-ofile`, `-o file`: each letter is an option until one takes a value."""
    body = word[1:]
    for position, letter in enumerate(body):
        option = "-" + letter
        if option in spec.value_options:
            rest = body[position + 1 :]
            if rest:
                options.setdefault(option, []).append(rest)
            elif index < len(args):
                options.setdefault(option, []).append(args[index])
                index += 1
            else:
                options.setdefault(option, []).append("")
            return index
        options.setdefault(option, []).append("")
    return index


def select(
    selector: Selector, parsed: ParsedCommand, program: str, args: tuple[str, ...]
) -> list[str]:
    """The words a selector names in a parsed command."""
    words = _select(selector, parsed, program, args)
    refine = selector.refine
    if not refine:
        return words
    if refine == "basename":
        return [_basename(w) for w in words if _basename(w)]
    if refine == "remote":  # a bare run-time word (`scp f "$DEST"`) may name a host too
        return [w for w in words if _is_remote(w) or _may_be_remote(w)]
    if refine == "alias":  # `myminio/bucket/key`: a host mc was told of, unless written local
        return [w for w in words if _is_remote(w) or ("/" in w and w[:1] not in "/.~$")]
    if refine == "inside":  # `POD:/path`, `NAMESPACE/POD:/path`: the path in there
        return [path for w in words if (path := _inside(w))]
    if refine == "mount_source":
        return [source for w in words if (source := _mount_source(w))]
    if refine == "file_address":  # socat's `FILE:/path,opts`, `OPEN:`, `GOPEN:`, `CREATE:`
        return [path for w in words if (path := _file_address(w))]
    if refine == "field_file":  # HTTPie's `file@./a.db`, `doc=@notes.txt`, `cfg:=@c.json`
        return [path for w in words if (path := _field_file(w))]
    if refine == "text":  # literal text names no file; a run-time word carries its sources
        return [w for w in words if _is_dynamic(w)]
    if refine == "value":  # `KEY=PATH` or `PATH` (kubectl's --from-file)
        return [w.partition("=")[2] if "=" in w else w for w in words]
    return [w for w in words if not _is_remote(w)]


_FILE_ADDRESSES = ("file:", "open:", "gopen:", "create:", "pipe:")


def _file_address(word: str) -> str:
    """The path of a socat file address (`FILE:/home/u/.ssh/id_rsa,rdonly`), or ""."""
    lowered = word.lower()
    if not lowered.startswith(_FILE_ADDRESSES):
        return ""
    return word.partition(":")[2].split(",", 1)[0]


def _field_file(word: str) -> str:
    """The file an HTTPie request item sends (`name@PATH`, `name=@PATH`, `name:=@PATH`), or ""."""
    name, at, path = word.partition("@")
    if not at or not path or "://" in word or not _FIELD_NAME.fullmatch(name.rstrip("=:")):
        return ""
    return path.split(";", 1)[0]  # `file@a.png;type=image/png`


_FIELD_NAME = re2.compile(r"[\w.\[\]-]*")


def _mount_source(word: str) -> str:
    """The host path a container mount exposes: `-v ~/.ssh:/keys:ro`, `--mount
    type=bind,source=/etc,target=/x`. A named volume (`-v data:/var/lib`) is no host path."""
    if "=" in word.split(",", 1)[0]:
        fields = dict(f.partition("=")[::2] for f in word.split(","))
        source = fields.get("source") or fields.get("src") or ""
        return source if fields.get("type", "bind") == "bind" else ""
    source = word.split(":", 1)[0]
    return source if source.startswith(("/", "~", ".")) else ""


def _basename(word: str) -> str:
    return word.split("?", 1)[0].split("#", 1)[0].rstrip("/").rpartition("/")[2]


def _inside(word: str) -> str:
    """The path of a `CONTAINER:PATH` word (a pod may be `namespace/pod`), or ""."""
    head, colon, path = word.partition(":")
    if not colon or not head or head.startswith(("/", ".", "~")) or "://" in word:
        return ""
    return path


def _may_be_remote(word: str) -> bool:
    """A word known only at run time with no literal part that says it is local."""
    return _is_dynamic(word) and "/" not in word


def _is_remote(word: str) -> bool:
    """`host:path`, `user@host:path`, `rsync://...`, a URL, a Windows share (`\\\\host\\share`):
    not a local path."""
    if "://" in word or word.startswith("\\\\"):
        return True
    head, colon, _ = word.partition(":")
    drive = len(head) == 1 and head.isalpha()  # `C:\Users\x`: a Windows drive, not a host
    return bool(colon) and bool(head) and "/" not in head and not drive


def _select(
    selector: Selector, parsed: ParsedCommand, program: str, args: tuple[str, ...]
) -> list[str]:
    kind = selector.kind
    if kind == "operands":
        return list(parsed.operands[selector.start : selector.stop])
    if kind == "option":
        return [v for name in selector.names for v in parsed.options.get(name, ()) if v]
    if kind == "assign":
        prefix = selector.text
        return [w[len(prefix) :] for w in parsed.operands if w.startswith(prefix)]
    if kind == "literal":
        return [selector.text]
    if kind == "command":
        return [" ".join((program, *args))]
    return []  # stdin: resolved by the caller from what feeds the command


def reads_only(parsed: ParsedCommand) -> bool:
    """The catalogue reads this command as one that changes nothing."""
    spec = parsed.spec
    return spec.read_only or (
        bool(spec.read_only_unless) and spec.read_only_unless.isdisjoint(parsed.named)
    )


_RUNS_READ_ONLY = frozenset({"runs_read_only"})


def effects_of(
    parsed: ParsedCommand,
    program: str,
    args: tuple[str, ...],
    input_origin: Origin,
    input_text: str = "",
) -> list[Effect]:
    """The catalogue's effects for a parsed command (and for the program that runs it)."""
    found: list[Effect] = []
    if parsed.outer is not None:
        outer = effects_of(parsed.outer, program, args, input_origin, input_text)
        program, args = parsed.words[0], parsed.words[1:]
        if reads_only(parsed) and "custom_index" not in parsed.outer.named:
            # `npx eslint src/`: the runner fetches and runs a program the catalogue knows,
            # in a read-only reading; that is no change either (flag `runs_read_only`).
            outer = [
                e._replace(flags=e.flags | _RUNS_READ_ONLY)
                if e.target == _basename(program)
                and e.origin is not Origin.NETWORK
                and (e.action is Action.EXECUTE or "on_the_fly" in e.flags)
                else e
                for e in outer
            ]
        found.extend(outer)
    named = parsed.named
    for spec in parsed.spec.effects:
        if spec.when and spec.when.isdisjoint(named):
            continue
        if spec.unless and not spec.unless.isdisjoint(named):
            continue
        if spec.when_all and not spec.when_all <= named:
            continue
        origin = input_origin if spec.origin is None else spec.origin
        data: tuple[str, ...] = ()
        if spec.data is not None:
            if spec.data.kind == "stdin":
                data = (STDIN,)
            else:
                items = (data_item(d) for d in select(spec.data, parsed, program, args))
                data = tuple(item for item in items if item)
        flags = spec.flags | named
        if spec.mode is not None:
            flags = flags | mode_flags(select(spec.mode, parsed, program, args))
        content = ""
        if spec.content is not None:
            if spec.content.kind == "stdin":
                content = input_text
            else:
                content = " ".join(select(spec.content, parsed, program, args))
        targets = select(spec.target, parsed, program, args)
        if spec.target.kind == "stdin":
            targets = [input_text if spec.kind == "text" and input_text else "-"]
        if spec.match is not None or spec.not_match is not None:
            targets = [t for t in targets if spec.applies_to(t)]
        if parsed.spec.operands_below and spec.target.kind in ("operands", "operand"):
            targets = _below_directory(targets, parsed)
        for target in targets:
            found.append(
                Effect(
                    spec.action,
                    _target(target, spec.kind),
                    origin,
                    data,
                    flags | _unresolved(target),
                    parsed.spec.name,
                    content,
                )
            )
    return found


def _below_directory(targets: list[str], parsed: ParsedCommand) -> list[str]:
    """Relative operands in the directory an option names (`tar -C ~/.gnupg -cf - .`)."""
    values = [v for o in parsed.spec.operands_below for v in parsed.options.get(o, ()) if v]
    if not values:
        return targets
    base = values[-1].rstrip("/") or "/"
    return [t if t[:1] in ("/", "~", "$") else f"{base}/{t}" for t in targets]


def data_item(word: str) -> str:
    """What a data option names: `@file`, `name=@file;type=x`, `name=<file` (the file's
    text as the value), `-`/`@-` (standard input), a plain file (`-T file`); literal data
    (`-d a=1`) names no file and gives ""."""
    if "=@" in word:
        word = word.split("=@", 1)[1]
    elif "=<" in word:
        word = word.split("=<", 1)[1]
    elif word.startswith("@"):
        word = word[1:]
    elif "=" in word or word.startswith(("{", "[")) or " " in word:
        return ""  # literal form data or JSON
    word = word.split(";", 1)[0]
    if word in ("-", ""):
        return STDIN if word == "-" else ""
    if _is_dynamic(word):
        return UNRESOLVED
    return normalise(word)


def _target(word: str, kind: str) -> str:
    if word.startswith(("<(", "/dev/stdin", "/dev/fd/", "/proc/self/fd/")):
        return STDIN  # bash <(curl ...): runs what the substitution prints
    if _is_dynamic(word):
        if kind == "path":
            return dynamic_path(word)
        if kind in ("host", "url"):
            host = host_of(word)  # the host is often static: https://x.io/?k=$KEY
            return host if host and "$" not in host and "`" not in host else word
        return word
    if kind == "path":
        # `deno run https://...`, `pip install https://...`: a URL stays a URL.
        return word if "://" in word else normalise(word)
    if kind in ("host", "url"):
        return host_of(word) or word
    return word


def dynamic_path(word: str) -> str:
    """A path with run-time parts: `/tmp/pytest-of-$USER` is judged as the glob
    `/tmp/pytest-of-*` (its static directory decides); `$D/x` and `${X}` are unresolved."""
    first = word.find("$")
    if first <= 0 or "/" not in word[:first] or word.startswith(("$", "`")):
        # `$(git rev-parse --show-toplevel)/.sidecar/state.db`: where it starts is known only
        # at run time, but its end still names something (`?/` + the static tail).
        tail = _static_tail(word)
        return UNRESOLVED + "/" + tail if tail else UNRESOLVED
    static = word[:first]
    rest = word[first:]
    # Each run-time part stands for some text within one path segment.
    tail = "/".join("*" if ("$" in part or "`" in part) else part for part in rest.split("/"))
    return normalise(static + tail)


def _static_tail(word: str) -> str:
    """The path segments after the last run-time part: `$X/a/$Y/b/c` gives `b/c`."""
    parts = word.split("/")
    tail: list[str] = []
    for part in reversed(parts):
        if "$" in part or "`" in part or ")" in part or "(" in part:
            break
        tail.append(part)
    return "/".join(reversed(tail)).strip("/")


def _unresolved(word: str) -> frozenset[str]:
    if not _is_dynamic(word):
        return frozenset()
    path = dynamic_path(word)
    return _UNRESOLVED_FLAG if path == UNRESOLVED or path.startswith("?/") else frozenset()


_UNRESOLVED_FLAG = frozenset({"unresolved"})


def _is_dynamic(word: str) -> bool:
    # The walk hands run-time values over as str subclasses; their text starts with `$`
    # or holds a substitution. A plain `$` in a static word is rare and harmless to ask about.
    return type(word) is not str or word.startswith("$")


_OCTAL = frozenset("01234567")


def mode_flags(modes: list[str]) -> frozenset[str]:
    """What a chmod mode does: `loosen` (writable by group or others, or 777-like), `setuid`
    (setuid/setgid bits), `exec` (adds execute), `readable` (by group or others),
    `world_readable` (by others), `tighten` (only takes rights away from group and others,
    or sets none: `600`, `700`, `go-rwx`). Unknown or computed modes loosen."""
    flags: set[str] = set()
    private = bool(modes)
    for mode in modes:
        private = private and _private(mode)
        if _is_dynamic(mode):
            flags.add("loosen")
            continue
        if mode and set(mode) <= _OCTAL:
            value = int(mode, 8)
            if value & 0o022:
                flags.add("loosen")
            if value & 0o044:
                flags.add("readable")  # others may read it: fine for most files, not keys
            if value & 0o004:
                flags.add("world_readable")  # not just a group chosen for it (ssl-cert)
            if value & 0o6000:
                flags.add("setuid")
            if value & 0o111:
                flags.add("exec")
            continue
        for clause in mode.split(","):
            who, op, perms = _symbolic(clause)
            if op in "+=":
                if "s" in perms:
                    flags.add("setuid")
                if "x" in perms or "X" in perms:
                    flags.add("exec")
                if "w" in perms and (who == "" or who.strip("u") != ""):
                    flags.add("loosen")  # a+w, o+w, g+w, +w (umask aside: count it)
                if "r" in perms and (who == "" or who.strip("u") != ""):
                    flags.add("readable")
                if "r" in perms and (who == "" or "o" in who or "a" in who):
                    flags.add("world_readable")
    if private and not flags & {"loosen", "readable", "setuid"}:
        flags.add("tighten")
    return frozenset(flags)


def _private(mode: str) -> bool:
    """Whether a mode leaves group and others nothing new: an octal mode without their bits,
    or symbolic clauses that remove rights, give only the owner some, or clear them."""
    if _is_dynamic(mode) or not mode:
        return False
    if set(mode) <= _OCTAL:
        return int(mode, 8) & 0o7077 == 0
    for clause in mode.split(","):
        who, op, perms = _symbolic(clause)
        if op == "-" or (op in "+=" and who and set(who) <= {"u"}) or (op == "=" and not perms):
            continue
        return False
    return True


def _symbolic(clause: str) -> tuple[str, str, str]:
    for index, char in enumerate(clause):
        if char in "+-=":
            return clause[:index], char, clause[index + 1 :]
    return clause, "", ""


# --- What echo and printf print: the text that a redirect then writes (a script, a unit, a
# crontab line). Bounded: widths and output are capped so hostile formats stay cheap.
_MAX_PRINTED = 128 * 1024
_MAX_WIDTH = 256
_ESCAPES = {
    "\\": "\\", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n",
    "r": "\r", "t": "\t", "v": "\v", '"': '"', "'": "'", "?": "?",
}  # fmt: skip
_OCTAL_DIGITS = "01234567"
_HEX_DIGITS = "0123456789abcdefABCDEF"


def unescape(text: str, percent_b: bool = False) -> str:
    """Backslash escapes as printf's format (or, with `percent_b`, its %b and echo -e) reads
    them: `\\n`, `\\t`, `\\xHH`, octal `\\NNN` (`\\0NNN` for %b)."""
    if "\\" not in text:
        return text
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char != "\\" or index + 1 >= len(text):
            out.append(char)
            index += 1
            continue
        following = text[index + 1]
        if following in _ESCAPES:
            out.append(_ESCAPES[following])
            index += 2
        elif following == "x":
            digits = _run(text, index + 2, _HEX_DIGITS, 2)
            out.append(chr(int(digits, 16)) if digits else "\\x")
            index += 2 + len(digits)
        elif following in _OCTAL_DIGITS:
            start = index + 2 if (percent_b and following == "0") else index + 1
            digits = _run(text, start, _OCTAL_DIGITS, 3)
            out.append(chr(int(digits or "0", 8) & 0xFF))
            index = start + len(digits)
        elif following == "c" and percent_b:
            break  # \c: print nothing more
        else:
            out.append("\\" + following)
            index += 2
    return "".join(out)


def _run(text: str, start: int, allowed: str, limit: int) -> str:
    end = start
    while end < len(text) and end - start < limit and text[end] in allowed:
        end += 1
    return text[start:end]


_CONVERSIONS = "sbqcdiuoxXfFeEgGaA"


def printf_text(words: tuple[str, ...] | list[str]) -> str:
    """What `printf FORMAT ARGS...` prints: the format reused until the arguments run out."""
    if not words:
        return ""
    fmt, args = words[0], list(words[1:])
    out: list[str] = []
    while _format_once(fmt, args, out) and args and sum(map(len, out)) <= _MAX_PRINTED:
        pass
    return "".join(out)[:_MAX_PRINTED]


def _format_once(fmt: str, args: list[str], out: list[str]) -> bool:
    """One pass over the format; returns whether it has conversions that take arguments."""
    consumed = False
    index = 0
    literal_start = 0
    while index < len(fmt):
        if fmt[index] != "%":
            index += 1
            continue
        out.append(unescape(fmt[literal_start:index]))
        end = index + 1
        while end < len(fmt) and fmt[end] in "-+ #0'":
            end += 1
        flags = fmt[index + 1 : end]
        width_start = end
        while end < len(fmt) and (fmt[end].isdigit() or fmt[end] in ".*"):
            end += 1
        if end >= len(fmt):
            out.append(fmt[index:])
            index = literal_start = len(fmt)
            break
        conversion = fmt[end]
        if conversion == "%":
            out.append("%")
        elif conversion in _CONVERSIONS:
            value = args.pop(0) if args else ""
            consumed = True
            text = unescape(value, percent_b=True) if conversion == "b" else value
            if conversion in "diuoxX":
                text = str(_number(value))
            width_text = fmt[width_start:end].split(".", 1)[0]
            width = min(int(width_text), _MAX_WIDTH) if width_text.isdigit() else 0
            text = text.ljust(width) if "-" in flags else text.rjust(width)
            out.append(text)
        else:
            out.append(fmt[index : end + 1])
        index = literal_start = end + 1
    out.append(unescape(fmt[literal_start:]))
    return consumed


def _number(value: str) -> int:
    text = value.strip()
    try:
        return int(text, 0) if text[:2].lower() in ("0x", "0o") else int(text or "0")
    except ValueError:
        return 0


def literal_text(parsed: ParsedCommand) -> str:
    """The text a command that prints its words (echo, printf) prints."""
    if parsed.spec.output == "printf":
        return printf_text(parsed.operands)
    text = " ".join(parsed.operands)
    return unescape(text, percent_b=True) if "escapes" in parsed.named else text

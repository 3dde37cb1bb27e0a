"""The effects of each tool call, worked out once and shared by the inspectors.

A call's form comes from the tool adapters (`ShellCalls.form`): a shell line is walked and
turned into effects by the catalogue; file tools give writes, edits, reads, deletions and
moves; fetch tools give fetches (and sends when they carry a body). Content written where
another program will run it (scripts, startup files, hooks, cron, CI, manifests) is analysed
as the code it is: a reverse shell saved to deploy.sh is a reverse shell.
"""

from __future__ import annotations

import shlex
from typing import NamedTuple

import re2

from sidecar.code import analyse_code
from sidecar.code.powershell import is_powershell_program, names_windows_path
from sidecar.effects.adapters import CallForm, FileChange
from sidecar.effects.analyser import EffectAnalyser, Judged
from sidecar.effects.catalogue import Catalogue
from sidecar.effects.check_weakening import weakens_checks, weakens_guard
from sidecar.effects.directory_places import in_directory_place
from sidecar.effects.forge_writes import argument_secret_sends, forge_host, forge_sends
from sidecar.effects.hosts import host_of
from sidecar.effects.kube_context import runs_kubernetes_client
from sidecar.effects.mentioned_paths import possible_reads
from sidecar.effects.model import (
    ENVIRONMENT,
    EVERYDAY,
    PRODUCTION,
    STDIN,
    UNRESOLVED,
    Action,
    Effect,
    Origin,
    destroys_in,
)
from sidecar.effects.paths import normalise
from sidecar.effects.renames import mark_renames
from sidecar.effects.secret_output import is_secret_data
from sidecar.effects.shell_effects import (
    code_effects,
    in_named_place,
    rebased,
    script_language,
)
from sidecar.effects.startup_settings import only_settings
from sidecar.effects.written_code import commands_in, cron_commands, fed_file_name
from sidecar.inspection.model import ToolCall
from sidecar.inspection.session_flow import SessionFlow
from sidecar.inspection.shell_calls import ShellCalls
from sidecar.shell.walk import ShellAnalysis
from sidecar.shell.walk import analyse as shell_analyse
from sidecar.state.session_facts import FactStore

_MAX_REMEMBERED = 4096
_REMEMBERED_LENGTH = 2048  # longer lines are worked out afresh, not kept
_MAX_CONTENT = 128 * 1024  # written content analysed as code, at most
_MAX_NESTED_ANALYSES = 32  # code written by code written by ...: bounded
# Classes of paths whose content another program runs.
RUNS_LATER = frozenset({"runs_later", "startup", "persistence", "git_hooks"})
_SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".ksh", ".command", ".envrc")


class CallReport(NamedTuple):
    """What one call does."""

    form: CallForm
    effects: tuple[Effect, ...]
    judged: tuple[Judged, ...]
    analyses: tuple[ShellAnalysis, ...]  # shell code the call runs or writes for later
    unknown_programs: tuple[str, ...]
    read_only: bool  # only reads and fetches, nothing unknown
    problems: tuple[str, ...] = ()  # what code in other languages left unresolved
    moved_to: str = ""  # where a `cd` in the call leaves a persistent shell
    spawned: tuple[ShellAnalysis, ...] = ()  # command lines code in the call runs now


_WEAKENS_CHECKS = frozenset({"weakens_checks"})


def _malicious_anywhere(effect: Effect, whole_environment: bool) -> bool:
    """What no program's source does for its users: a reverse shell, or sending the whole
    environment (one variable, an app version, is telemetry) or a credential somewhere."""
    if "reverse_shell" in effect.flags:
        return True
    return effect.action is Action.SEND and any(
        (item == ENVIRONMENT and whole_environment) or is_secret_data(item) for item in effect.data
    )


# What a source needs to open a connection or send (a reverse shell, an exfiltration).
_CONNECTS = re2.compile(
    r"(?i)(socket|connect|dial|fetch|request|http|urlopen|tcp|udp|curl|wget|post\(|upload)"
)
# The whole environment as a value: JSON.stringify(process.env), dict(os.environ), ENV.to_h.
_WHOLE_ENVIRONMENT = re2.compile(
    r"(JSON\.stringify\(\s*process\.env\s*\)|\bprocess\.env\s*[,)}\]]|dict\(\s*os\.environ\s*\)|"
    r"\bos\.environ\s*[,)}\]]|\bos\.environ\.copy\(\)|ENV\.to_h\b|System\.getenv\(\s*\)|"
    r"(?i:get-childitem\s+env:)|\$_ENV\b|\bgetenv\(\s*\)|\benviron\(\s*\))"
)


_RECENT_CALLS = 512  # more than a batch holds (Limits.max_tool_calls)


class CallEffects:
    def __init__(
        self,
        shell_calls: ShellCalls,
        analyser: EffectAnalyser,
        facts: FactStore | None = None,
    ) -> None:
        self.shell_calls = shell_calls
        self.analyser = analyser
        self._scanner = analyser.scanner
        self._lines: dict[str, CallReport] = {}
        # The reports of the calls judged lately, by identity: each inspector of the chain
        # goes through the whole batch in turn, so a one-entry memory missed every call
        # after the first inspector (and recorded its facts again).
        self._recent: dict[int, tuple[ToolCall, str, CallReport]] = {}
        self._flow = (
            SessionFlow(
                facts,
                analyser.classes.classify,
                self._code_effects,
                analyser.catalogue.trusted_index,
                analyser.classes.runners,
                analyser.classes.run_programs,
            )
            if facts is not None
            else None
        )

    def of(self, call: ToolCall, session_id: str = "") -> CallReport:
        """The call's effects, resolved against what earlier calls of the session made
        (and recorded for later calls). Several inspectors ask about the same call in a row."""
        known = self._recent.get(id(call))
        if known is not None and known[0] is call and known[1] == session_id:
            return known[2]
        found = self._work_out(call)
        given = normalise(found.form.cwd) if found.form.cwd else ""
        # Two places: the workspace (where the runtime says the agent works; paths below it
        # are the workspace's) and where the call runs (relative paths are below it): a
        # persistent shell's `cd ~` moves the second, never the first.
        workspace = here = given
        resolved: tuple[list[Effect], list[ShellAnalysis]] | None = None
        if self._flow is not None and session_id:
            workspace = self._flow.working_directory(session_id, given)
            here = given or self._flow.shell_directory(session_id) or workspace
            found = self._with_kept_variables(found, session_id)
            found = self._in_kube_context(found, session_id)
            programs = (
                [c.program for c in found.analyses[0].commands]
                if found.form.kind == "shell" and found.analyses
                else []
            )
            resolved = self._flow.apply(session_id, found.effects, here, programs)
        if resolved is not None or here:
            # Judged again: with the session's facts, and where the call runs.
            effects = tuple(resolved[0]) if resolved is not None else found.effects
            if here:
                effects = tuple(rebased(e, here) for e in effects)
                effects = tuple(in_directory_place(effects, here, self.analyser.catalogue))
            found = found._replace(
                effects=effects, judged=tuple(self.analyser.judge(effects, workspace))
            )
            if resolved is not None and resolved[1]:
                # Shell code of files written earlier that this call runs: judged by the
                # named rules too, as code written for later.
                found = found._replace(analyses=found.analyses + tuple(resolved[1]))
        if self._flow is not None and session_id:
            self._flow.record(session_id, found.effects, found.analyses)
            if found.moved_to:
                # A persistent shell (Claude Code's Bash, OpenHands) stays where `cd` left it.
                self._flow.moved(session_id, found.moved_to)
        if len(self._recent) >= _RECENT_CALLS:
            # Emptied whole, as `_lines` is: inspectors run on worker threads, and one
            # clear is safe where picking an oldest entry to drop races another thread.
            self._recent.clear()
        self._recent[id(call)] = (call, session_id, found)
        return found

    def _with_kept_variables(self, found: CallReport, session_id: str) -> CallReport:
        """A shell line judged also with the variables earlier calls set (a persistent
        shell keeps them); its effects are added, never replace the line's own."""
        assert self._flow is not None
        line = found.form.shell if found.form.kind == "shell" else None
        sourced = [
            c.positionals[0]
            for a in found.analyses
            for c in a.commands
            if c.program in ("source", ".") and c.positionals and type(c.positionals[0]) is str
        ]
        cwd = self._flow.shell_directory(session_id) if sourced else ""
        bound = self._flow.bound_line(session_id, line, sourced, cwd) if line else None
        if bound is None:
            return found
        seen = set(found.effects)
        extra = [e for e in self.analyser.line(shell_analyse(bound)).effects if e not in seen]
        if not extra:
            return found
        effects = found.effects + tuple(extra)
        return found._replace(effects=effects, judged=tuple(self.analyser.judge(effects)))

    def _in_kube_context(self, found: CallReport, session_id: str) -> CallReport:
        """A shell line's Kubernetes clients judged against the context an earlier call
        made current: it is kept in the kubeconfig file, so it holds for this call too."""
        assert self._flow is not None
        if not found.analyses or not runs_kubernetes_client(found.analyses[0].commands):
            return found
        context = self._flow.kube_context(session_id)
        if not context:
            return found
        # The line's own effects lead the report (what code it wrote or runs follows them).
        own = len(self.analyser.line(found.analyses[0]).effects)
        there = self.analyser.line(found.analyses[0], kube_context=context).effects
        effects = there + found.effects[own:]
        return found._replace(effects=effects, judged=tuple(self.analyser.judge(effects)))

    def _code_effects(
        self, path: str, content: str, cron: bool, analyses: list[ShellAnalysis]
    ) -> list[Effect]:
        """What running a file written earlier does, judged from its content (the shell
        code it holds goes to `analyses`)."""
        if cron:
            return self._commands(cron_commands(content), analyses)
        if path.endswith(".sql"):
            # A SQL script a database client runs: its statements, as the client's model
            # reads them (DROP, TRUNCATE and DELETE without WHERE destroy data).
            return self._statements(content, analyses)
        if path.endswith(".pth"):
            # The site module runs a .pth file's `import` lines at every start of Python.
            code = "\n".join(line for line in content.splitlines() if line.startswith("import"))
            return self._code("python", code, analyses, [])
        language = script_language(path)
        if language == "powershell":
            content = with_script_folder(content, path)
        # A Makefile or a package.json holds command lines; a script is one; a Go file
        # holds both code and the directives `go generate` runs.
        commands = commands_in(path, content)
        if language:
            found = self._code(language, content, analyses, [])
            return found + self._commands(commands, analyses) if commands else found
        if not commands and _is_shell_text(path, content):
            commands = [with_script_path(content, path)]
        return self._commands(commands, analyses)

    def _work_out(self, call: ToolCall) -> CallReport:
        form = self.shell_calls.form(call)
        if form.kind == "shell":
            return self._shell(call, form)
        effects: list[Effect] = []
        analyses: list[ShellAnalysis] = []
        if form.kind == "files":
            for change in form.files:
                effects.extend(self._file_effects(change, analyses))
            host = forge_host(call.name, call.arguments)
            if host:
                effects.extend(
                    forge_sends(host, form.files, self.analyser.classes.classify, self._scanner)
                )
        elif form.kind == "fetch":
            effects.extend(_fetch_effects(form, self.analyser.catalogue))
        problems: list[str] = []
        code_reads = False
        if form.kind == "code":
            effects.extend(self._code(form.language, form.code, analyses, problems))
            # Code that leaves nothing unresolved, only reads or fetches, and starts only
            # programs that only read (`Get-ChildItem -Filter *.csproj | Select-Object
            # FullName`, `git status`) reads.
            code_reads = not problems and all(self.analyser.line(a).read_only for a in analyses)
        effects.extend(
            argument_secret_sends(call.name, call.server, form.kind, call.arguments, self._scanner)
        )
        judged = tuple(self.analyser.judge(effects))
        # A tool no adapter names is read by its arguments for analysis, but what it does
        # is a guess: it is never "only reads" (`deploy{target: prod}` is no read).
        read_only = (
            (form.kind in ("files", "fetch", "none") or (form.kind == "code" and code_reads))
            and form.adapter != "fallback"
            and all(e.action in (Action.READ, Action.FETCH) for e in effects)
        )
        return CallReport(
            form, tuple(effects), judged, tuple(analyses), (), read_only, tuple(problems)
        )

    def _code(
        self, language: str, code: str, analyses: list[ShellAnalysis], problems: list[str]
    ) -> list[Effect]:
        """Code a tool runs directly (a notebook cell, an automation script)."""
        if language in ("shell", "bash", "sh", "zsh", ""):
            analysis = shell_analyse(code[:_MAX_CONTENT])
            analyses.append(analysis)
            found = self.analyser.line(analysis)
            problems.extend(found.problems)
            return [*found.effects, *possible_reads(code, found.effects)]
        result = analyse_code(language, code)
        problems.extend(result.problems)
        effects = code_effects(result, code, self.analyser.catalogue)
        written = tuple(effects)  # a download the code saved, then runs through a shell
        for line in result.shell[:32]:
            effects.extend(self._commands([line], analyses, written))
        return effects

    def _shell(self, call: ToolCall, form: CallForm) -> CallReport:
        analysis = self.shell_calls.analyse(call)
        line = form.shell or ""
        remembered = self._lines.get(line)
        if remembered is not None and remembered.form == form:
            return remembered
        if analysis is None:
            return CallReport(form, (), (), (), (), False)
        found = self.analyser.line(analysis)
        effects = [*found.effects, *possible_reads(line, found.effects)]
        analyses = [analysis]
        problems = found.problems
        # Cmdlets the catalogue knows (Get-Content) are PowerShell too: their paths
        # (`$env:USERPROFILE\.ssh\id_rsa`) are only read right by the PowerShell analyser.
        # Only Verb-Noun names: a POSIX program that is also a PowerShell alias (echo, ls)
        # makes no line PowerShell.
        cmdlets = [c.program for c in analysis.commands if "-" in c.program]
        if any(map(is_powershell_program, [*found.unknown_programs, *cmdlets])) or (
            names_windows_path(line)
        ):
            # A Windows agent's shell is PowerShell: `iwr URL | iex` is no pair of unknown
            # programs. The line is judged as PowerShell too (bash dropped its backslashes).
            more: list[str] = []
            effects.extend(self._code("powershell", line, analyses, more))
            problems = tuple(dict.fromkeys((*problems, *more)))
        for effect in found.effects:
            if effect.action is Action.WRITE and effect.content:
                effects.extend(self._written_code(effect.target, effect.content, analyses))
            elif effect.action is Action.PERSIST and effect.content:
                effects.extend(self._commands(cron_commands(effect.content), analyses))
            elif (
                effect.action is Action.EXECUTE and "sql_script" in effect.flags and effect.content
            ):
                # A SQL file written earlier in the line and run (`psql -h prod -f x.sql`):
                # its statements, destroying in the place the client names.
                statements = self._statements(effect.content, analyses)
                effects.extend(destroys_in(statements, effect.flags & PRODUCTION))
            elif effect.action is Action.EXECUTE and effect.target == STDIN and effect.content:
                # A program fed its file on standard input (`make -f -`) runs what it holds.
                name = fed_file_name(effect.program)
                if name:
                    effects.extend(self._commands(commands_in(name, effect.content), analyses))
        report = CallReport(
            form,
            tuple(effects),
            tuple(self.analyser.judge(effects)),
            tuple(analyses),
            found.unknown_programs,
            found.read_only,
            problems,
            found.cwd if found.cwd.startswith(("/", "~")) else "",
            found.spawned,
        )
        if len(line) <= _REMEMBERED_LENGTH:
            if len(self._lines) >= _MAX_REMEMBERED:
                self._lines.clear()
            self._lines[line] = report
        return report

    def _file_effects(self, change: FileChange, analyses: list[ShellAnalysis]) -> list[Effect]:
        path = normalise(change.path)
        if not path:
            return []
        if change.action == "read":
            return [Effect(Action.READ, path, program="file tool")]
        if change.action == "delete":
            return [Effect(Action.DELETE, path, flags=_RECURSIVE, program="file tool")]
        if change.action == "move":
            found = [Effect(Action.MOVE, path, flags=_RECURSIVE, program="file tool")]
            if change.destination:
                found.append(
                    Effect(
                        Action.WRITE, normalise(change.destination), flags=_TRUNCATE,
                        program="file tool",
                    )
                )  # fmt: skip
            return mark_renames(found)
        flags = _TRUNCATE if change.action == "write" else _EDIT
        if change.removed:
            classes = self.analyser.classes.classify(path)
            kept = set(change.removed.splitlines())
            added = "\n".join(line for line in change.content.splitlines() if line not in kept)
            if "startup" in classes and only_settings(added):
                # An edit that keeps `export EDITOR=nvim` and adds a PATH entry adds settings:
                # the lines it keeps were there before.
                flags = flags | _SETTINGS_ONLY
            if "checks_config" in classes and weakens_checks(change.removed, change.content):
                flags = flags | _WEAKENS_CHECKS
            if "agent_config" in classes:
                taken = weakens_guard(change.removed, change.content)
                if taken:
                    flags = (
                        flags
                        | _WEAKENS_CHECKS
                        | ({"removes_sidecar"} if taken == "sidecar" else set())
                    )
        found = [
            Effect(
                Action.WRITE, path, Origin.LITERAL, flags=flags, program="file tool",
                content=change.content,
            )
        ]  # fmt: skip
        found.extend(self._written_code(path, change.content, analyses))
        return found

    def _written_code(self, path: str, content: str, analyses: list[ShellAnalysis]) -> list[Effect]:
        """Content another program will run is judged as if it ran (flag `written_code`)."""
        if not content.strip():
            return []
        classes = self.analyser.classes.classify(path)
        is_script = content.startswith("#!") or path.endswith(_SHELL_SUFFIXES)
        language = script_language(path)
        if language == "powershell":
            content = with_script_folder(content, path)
        commands = commands_in(path, content)
        if not is_script and RUNS_LATER.isdisjoint(classes) and not commands:
            if language and _CONNECTS.search(content) is not None:
                # A program's source: what any program may do is its business, but a reverse
                # shell is malicious in every program, whoever builds and runs it. Only code
                # that talks to the network is parsed: most sources written never do.
                found = self._code(language, content, analyses, [])
                whole = _WHOLE_ENVIRONMENT.search(content) is not None
                return [e._replace(flags=e.flags | _WRITTEN_CODE) for e in found
                        if _malicious_anywhere(e, whole)]  # fmt: skip
            return []
        if language:
            found = [
                e._replace(flags=e.flags | _WRITTEN_CODE)
                for e in self._code(language, content, analyses, [])
            ]
            if "test_code" in classes:  # a fixture's drop_all() drops the test database
                found = [
                    e._replace(flags=e.flags | EVERYDAY)
                    if e.action is Action.DESTROY and not PRODUCTION & e.flags
                    else e
                    for e in found
                ]
            return found + self._commands(commands, analyses) if commands else found
        # Units, desktop entries, cron tables, plists, package.json scripts, CI, editor
        # tasks, Makefiles and ssh configs hold command lines; a script is one.
        if not commands and _is_shell_text(path, content):
            commands = [with_script_path(content, path)]
        return self._commands(commands, analyses)

    def _statements(self, sql: str, analyses: list[ShellAnalysis]) -> list[Effect]:
        """A SQL script's effects, as the database client's model reads its statements."""
        return self._commands([f"psql -c {shlex.quote(sql[:_MAX_CONTENT])}"], analyses)

    def _commands(
        self, lines: list[str], analyses: list[ShellAnalysis], written: tuple[Effect, ...] = ()
    ) -> list[Effect]:
        """Effects of command lines written for later. What only the run can tell (a path
        from `$ROOT`) is left out: the code is judged for what it clearly does."""
        found: list[Effect] = []
        for line in lines[:64]:
            analysis = shell_analyse(line[:_MAX_CONTENT])
            analyses.append(analysis)
            for effect in self.analyser.line(analysis, written=written).effects:
                if (
                    effect.target == UNRESOLVED or "unresolved" in effect.flags
                ) and effect.action not in _DESCRIBED:
                    continue
                found.append(effect._replace(flags=effect.flags | _WRITTEN_CODE))
                if (
                    effect.action is Action.WRITE
                    and effect.content
                    and len(analyses) < _MAX_NESTED_ANALYSES
                ):
                    # A script that writes a hook or a unit: that file is code for later too.
                    found.extend(self._written_code(effect.target, effect.content, analyses))
        return found


_SCRIPT_PATH_WORD = re2.compile(r"\$\{?(0|BASH_SOURCE(\[0\])?)\}?")
_PLAIN_PATH = re2.compile(r"^[A-Za-z0-9_./~+-]+$")


def with_script_path(content: str, path: str) -> str:
    """A shell script knows its own path as `$0` (and `${BASH_SOURCE[0]}`): where it is
    going to live is known here, so `cd "$(dirname "$0")/.."` resolves."""
    if _PLAIN_PATH.match(path) is None:
        return content
    return _SCRIPT_PATH_WORD.sub(lambda _: path, content) if "$" in content else content


_PS_SCRIPT_ROOT = re2.compile(r"(?i)\$PSScriptRoot\b")


def with_script_folder(content: str, path: str) -> str:
    """A PowerShell script knows its own folder as `$PSScriptRoot`: known here too."""
    if _PLAIN_PATH.match(path) is None or "$" not in content:
        return content
    folder = path.rpartition("/")[0] or "."
    return str(_PS_SCRIPT_ROOT.sub(lambda _: f"'{folder}'", content))


# Actions whose target describes what is hit (`kill $(pidof auditd)`): the description
# holds even where the run fills in the rest.
_DESCRIBED = frozenset({Action.KILL, Action.DISABLE, Action.DESTROY})


def _is_shell_text(path: str, content: str) -> bool:
    first = content.split("\n", 1)[0]
    if first.startswith("#!"):
        return any(shell in first for shell in ("sh", "bash", "zsh", "ksh", "dash"))
    return not path.endswith(
        (".py", ".js", ".mjs", ".cjs", ".ts", ".json", ".yml", ".yaml", ".toml", ".rb", ".pl",
         ".php", ".ps1", ".service", ".plist", ".timer", ".desktop", ".xml", ".ini", ".cfg")
    )  # fmt: skip


def _fetch_effects(form: CallForm, catalogue: Catalogue) -> list[Effect]:
    found: list[Effect] = []
    sends = form.method not in ("GET", "HEAD", "OPTIONS") or bool(form.body or form.uploads)
    found.extend(Effect(Action.READ, path, program="fetch tool") for path in form.uploads)
    found.extend(
        Effect(Action.WRITE, path, Origin.NETWORK, program="fetch tool") for path in form.saves_to
    )
    for url in form.urls:
        host = host_of(url) or url
        found.append(Effect(Action.FETCH, host, program="fetch tool"))
        if sends:
            found.append(Effect(Action.SEND, host, data=form.uploads, program="fetch tool"))
        if sends and catalogue.pattern_matches("bulk_delete_api", url):
            # POST .../admin/tsdb/delete_series: an API that destroys data in bulk
            found.extend(in_named_place([_bulk_delete(url)], url, catalogue))
        elif form.method == "DELETE" and catalogue.pattern_matches("production", host):
            # DELETE on a production host removes what the URL names, there.
            found.extend(in_named_place([_bulk_delete(url)], host, catalogue))
    return found


def _bulk_delete(url: str) -> Effect:
    return Effect(Action.DESTROY, url[:200], flags=frozenset({"database"}), program="fetch tool")


_PATH_ACTIONS = frozenset(
    {Action.READ, Action.WRITE, Action.DELETE, Action.MOVE, Action.CHMOD, Action.CHOWN,
     Action.EXECUTE, Action.PERSIST}
)  # fmt: skip
_RECURSIVE = frozenset({"recursive"})
_TRUNCATE = frozenset({"truncate"})
_EDIT = frozenset({"edit"})
_SETTINGS_ONLY = frozenset({"settings_only"})
_WRITTEN_CODE = frozenset({"written_code"})

"""Data flow across the calls of a session: later calls are judged with what earlier ones made.

A file downloaded in one call and run in the next is network code; a script written in one
call is judged by its content when another call runs it; a file a call filled with secrets
carries them when a later call sends it; a remote added is new when it is pushed to; a
switched package registry makes later installs come from it. Facts are recorded from every
call (denied ones too: only stricter judgements can follow) in the state store.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Sequence

import re2

from sidecar.effects.hosts import host_of
from sidecar.effects.kube_context import switched_to
from sidecar.effects.line_facts import remote_pointed
from sidecar.effects.model import (
    ENVIRONMENT,
    HIDDEN_ORIGINS,
    PRODUCTION,
    STDIN,
    UNRESOLVED,
    Action,
    Effect,
    Origin,
    destroys_in,
)
from sidecar.effects.paths import normalise
from sidecar.effects.secret_output import is_secret_data
from sidecar.effects.shell_effects import UNSEEN_FILE
from sidecar.shell.compose_files import is_compose_file
from sidecar.shell.embedded_code import git_runs
from sidecar.shell.walk import SHELLS, ShellAnalysis, SimpleCommand
from sidecar.state.session_facts import Fact, FactStore

FILE, TREE, CARRIED, REMOTE, REGISTRY = "file", "tree", "carried", "remote", "registry"
VARIABLE = "variable"
LINK = "link"  # a symbolic link a call made: key the link, detail what it points at
_THROUGH_LINKS = frozenset(
    {Action.READ, Action.WRITE, Action.DELETE, Action.CHMOD, Action.CHOWN, Action.EXECUTE}
)
_THROUGH_LINK = frozenset({"through_link"})
_MAX_VARIABLE = 1024  # longer values are not kept
CWD = "cwd"
GIT_ALIAS = "git_alias"  # a `!` alias: NAME -> the shell command `git NAME` runs
DEFINED = "defined"  # a shell function or alias a call defined: NAME -> its definition
GIT_STAGED = "(git staged)"  # CARRIED: secrets `git add` staged, sent by the next push
KUBE = "kube"  # the Kubernetes context a call made current (kept in the kubeconfig file)
_RUNS = frozenset({Action.EXECUTE, Action.INSTALL, Action.PERSIST})
_HOOK = frozenset({"hook"})
_HOOK_PATH = re2.compile(r"(^|/)(\.git/hooks|\.husky)/[^/]+$")
_SECRET_CLASSES = frozenset({"credentials", "key_stores", "environment"})
MAX_RECORDED_CONTENT = 64 * 1024
_ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.bz2", ".tbz2", ".tar", ".zip")
_UNPACKERS = frozenset({"tar", "unzip", "7z"})
_MAX_PARTS = 16  # files one `cat` joins, followed
_COPIERS = frozenset({"cp", "mv", "install", "rsync", "ditto", "Copy-Item", "Move-Item"})
_ECOSYSTEMS = {
    "npm": "npm", "pnpm": "npm", "yarn": "npm", "npx": "npm", "bun": "npm", "pnpx": "npm",
    "pip": "pip", "pip3": "pip", "uv": "pip", "pipx": "pip", "poetry": "pip", "uvx": "pip",
    "gem": "gem", "bundle": "gem", "cargo": "cargo", "composer": "composer", "go": "go",
    "conda": "conda", "mamba": "conda", "micromamba": "conda",
}  # fmt: skip
# conda's public channels: adding one is no switch to an unknown source.
_PUBLIC_CONDA_CHANNELS = frozenset(
    {"conda-forge", "bioconda", "pytorch", "nvidia", "defaults", "main", "r", "msys2",
     "anaconda", "pytorch-nightly", "huggingface", "rapidsai", "fastai", "intel"}
)  # fmt: skip
_REGISTRY_KEYS = {
    "registry": "npm", "npmregistryserver": "npm", "global.index-url": "pip",
    "global.extra-index-url": "pip", "install.index-url": "pip", "index-url": "pip",
    "extra-index-url": "pip",
}  # fmt: skip
_REGISTRY_VARIABLES = {
    "PIP_INDEX_URL": "pip", "PIP_EXTRA_INDEX_URL": "pip", "UV_INDEX_URL": "pip",
    "UV_EXTRA_INDEX_URL": "pip", "NPM_CONFIG_REGISTRY": "npm", "YARN_REGISTRY": "npm",
    "GOPROXY": "go",
}  # fmt: skip


class SessionFlow:
    def __init__(
        self,
        facts: FactStore,
        classify: Callable[[str], frozenset[str]],
        code_effects: Callable[[str, str, bool, list[ShellAnalysis]], list[Effect]],
        trusted_index: Callable[[str], bool] = lambda host: False,
        runners: Callable[[str], frozenset[str]] = lambda path: frozenset(),
        run_programs: frozenset[str] = frozenset(),
    ) -> None:
        self._facts = facts
        self._classify = classify
        # Programs that run files by themselves (path classes' `run_by`), and which ones.
        self._runners = runners
        self._run_programs = run_programs
        self._trusted_index = trusted_index  # a registry the policy trusts is no switch
        # (path, content, is a cron table, analyses out) -> the effects of running it
        self._code_effects = code_effects

    def working_directory(self, session_id: str, given: str) -> str:
        """The call's working directory: the one it names (remembered for the session's
        later calls, as runtimes send it with some tools only), else the last one named."""
        if given:
            last = self._facts.fact(session_id, CWD, "last")
            if last is None or last.detail != given:
                self._facts.record(session_id, [Fact(CWD, "last", "", given)])
            return given
        last = self._facts.fact(session_id, CWD, "last")
        return last.detail if last is not None else ""

    def shell_directory(self, session_id: str) -> str:
        """Where a persistent shell was left by a `cd` in an earlier call, or ""."""
        moved = self._facts.fact(session_id, CWD, "shell")
        return moved.detail if moved is not None else ""

    def moved(self, session_id: str, directory: str) -> None:
        """A `cd` left the session's shell in `directory` (not a new workspace: `cd ~` does
        not make the home directory the agent's to change)."""
        if self.shell_directory(session_id) != directory:
            self._facts.record(session_id, [Fact(CWD, "shell", "", directory)])

    def kube_context(self, session_id: str) -> str:
        """The Kubernetes context an earlier call switched to, or "" (not known)."""
        current = self._facts.fact(session_id, KUBE, "context")
        return current.detail if current is not None else ""

    def apply(
        self,
        session_id: str,
        effects: Sequence[Effect],
        cwd: str = "",
        programs: Sequence[str] = (),
    ) -> tuple[list[Effect], list[ShellAnalysis]] | None:
        """The effects resolved against the session's facts, with the shell code of files
        an earlier call wrote that this call runs; None when nothing changed. `cwd`: the
        call's working directory (absolute), or "" when unknown; `programs`: those the
        call's shell line starts."""
        facts = self._facts
        made_here = list(_links_made(effects))
        if not facts.has_any(session_id) and not made_here:
            return None
        links = made_here + [
            (_absolute(f.key, cwd), f.detail) for f in facts.facts(session_id, LINK)
        ]
        changed = False
        result: list[Effect] = []
        analyses: list[ShellAnalysis] = []
        projects: set[str] = set()
        for effect in effects:
            if links:
                through = _through_links(effect, links, cwd)
                if through:
                    result.extend(through)
                    changed = True
            resolved, extra = self._resolve(session_id, effect, cwd, analyses)
            if resolved is not effect or extra:
                changed = True
            result.append(resolved)
            result.extend(extra)
            project = _project_directory(effect)
            if project is not None and project not in projects:
                projects.add(project)
                found = self._project_files(session_id, project, cwd, effect.program, analyses)
                if found:
                    result.extend(found)
                    changed = True
        ran = self._run_by(session_id, programs, cwd, analyses)
        if ran:
            result.extend(ran)
            changed = True
        if any(e.program.startswith("git") for e in effects):
            hooks = self._hooks(session_id, analyses)
            if hooks:
                result.extend(hooks)
                changed = True
        # Shell code of a file this call runs may only matter to the named rules (a
        # manifest's `kubectl run --overrides` equivalent has no effects of its own).
        return (result, analyses) if changed or analyses else None

    def _project_files(
        self,
        session_id: str,
        project: str,
        cwd: str,
        program: str,
        analyses: list[ShellAnalysis],
    ) -> list[Effect]:
        """A project command (make, npm install, pytest, pip install ., cargo build ...) runs
        the project files (class `project_code`, matched below the project directory) that
        earlier calls wrote or downloaded there."""
        directory = _absolute(project, cwd)
        found: list[Effect] = []
        for fact in self._facts.facts(session_id, FILE):
            if not (fact.detail or fact.origin in _HIDDEN_VALUES):
                continue
            if not any(
                "project_code" in self._classify(below) for below in _below(fact.key, directory)
            ):
                continue
            if is_compose_file(fact.key) != ("compose" in program):
                continue  # Compose files run by `docker compose`, and only by it
            origin = Origin(fact.origin) if fact.origin in _HIDDEN_VALUES else Origin.FILE
            found.append(
                Effect(Action.EXECUTE, fact.key, origin, flags=_FROM_PROJECT, program=program)
            )
            if fact.detail:
                found.extend(
                    self._ran_code(session_id, fact.key, fact.detail, False, cwd, analyses)
                )
        return found

    def _run_by(
        self, session_id: str, programs: Sequence[str], cwd: str, analyses: list[ShellAnalysis]
    ) -> list[Effect]:
        """Files the session wrote that this call's programs run without naming them: by
        themselves (ssh its configuration's ProxyCommand, every Python start the .pth files
        of site-packages: what they hold is judged as run, a downloaded one is network code
        run), or by name from a `bin` folder a download went to (`fmt-helper --check`)."""
        runs = {_runner_name(p) for p in programs} & self._run_programs
        bare = {p for p in programs if p and "/" not in p}
        if not runs and not bare:
            return []
        found: list[Effect] = []
        for fact in self._facts.facts(session_id, FILE):
            hidden = fact.origin in _HIDDEN_VALUES
            if not (fact.detail or hidden):
                continue
            directory, _, base = fact.key.rpartition("/")
            if hidden and base in bare and directory.rpartition("/")[2] in ("bin", "sbin"):
                found.append(Effect(Action.EXECUTE, fact.key, Origin(fact.origin), program=base))
                continue
            runners = runs & self._runners(fact.key) if runs else frozenset()
            if not runners:
                continue
            if hidden:
                program = min(runners)
                found.append(Effect(Action.EXECUTE, fact.key, Origin(fact.origin), program=program))
            else:
                found.extend(
                    self._ran_code(session_id, fact.key, fact.detail, False, cwd, analyses)
                )
        return found

    def _hooks(self, session_id: str, analyses: list[ShellAnalysis]) -> list[Effect]:
        """Git runs the hooks a session planted (post-checkout, pre-commit, ...)."""
        found: list[Effect] = []
        for fact in self._facts.facts(session_id, FILE):
            if _is_hook(fact.key) and fact.detail:
                found.append(Effect(Action.EXECUTE, fact.key, program="git hook"))
                found.extend(self._ran_code(session_id, fact.key, fact.detail, False, "", analyses))
        return found

    def _resolve(
        self, session_id: str, effect: Effect, cwd: str, analyses: list[ShellAnalysis]
    ) -> tuple[Effect, list[Effect]]:
        action = effect.action
        if action is Action.INSTALL and effect.program:
            ecosystem = _ECOSYSTEMS.get(effect.program.split()[0])
            registry = self._facts.fact(session_id, REGISTRY, ecosystem) if ecosystem else None
            # anaconda.org hosts anyone's channel: public conda channels were let through when
            # the fact was recorded, so its host says nothing.
            if registry is not None and (
                ecosystem == "conda" or not self._trusted_index(host_of(registry.detail) or "")
            ):
                return effect._replace(flags=effect.flags | _CUSTOM_INDEX), []
        if action is Action.EXECUTE and "project" in effect.flags and _builds_with_maven(effect):
            # Gradle and Maven fetch what the build lacks from the repositories the build
            # files name: a repository the session added is where they now install from.
            registry = self._facts.fact(session_id, REGISTRY, "maven")
            if registry is not None and not self._trusted_index(host_of(registry.detail) or ""):
                artifacts = Effect(
                    Action.INSTALL, "maven artifacts", flags=_CUSTOM_INDEX, program=effect.program
                )
                return effect, [artifacts]
        if action is Action.EXECUTE and "project" in effect.flags and effect.program[:3] == "go ":
            # go build, test and mod download fetch the modules they lack from the proxy.
            registry = self._facts.fact(session_id, REGISTRY, "go")
            if registry is not None and not self._trusted_index(host_of(registry.detail) or ""):
                modules = Effect(
                    Action.INSTALL, "go modules", flags=_CUSTOM_INDEX, program=effect.program
                )
                return effect, [modules]
        if action is Action.CHMOD and "exec" in effect.flags and _HOOK_PATH.search(effect.target):
            # `chmod +x .git/hooks/post-checkout` after writing it: git runs it from now on,
            # so the hook is planted by this call, judged by what the session wrote there.
            armed = Effect(Action.PERSIST, effect.target, flags=_HOOK, program=effect.program)
            resolved, extra = self._resolve(session_id, armed, cwd, analyses)
            # A downloaded hook is planted as it is; a written one is judged by its code (a
            # hook the session wrote to lint stays as allowed as writing it was).
            planted = [resolved] if resolved.origin in HIDDEN_ORIGINS else []
            return effect, [*planted, *extra]
        if action in _RUNS and effect.target not in (STDIN, UNRESOLVED):
            path = normalise(effect.target) if action is Action.INSTALL else effect.target
            fact = self._file_fact(session_id, path, cwd)
            if fact is None and "service" in effect.flags:
                fact = self._unit_fact(session_id, effect.target)
            if fact is None and "manifest" in effect.flags:
                return effect, self._manifests_below(session_id, effect.target, cwd, analyses)
            if fact is None:
                return effect, []
            effect = effect._replace(flags=effect.flags - UNSEEN_FILE)  # the session wrote it
            if fact.kind == TREE and "project" in effect.flags:
                return effect, []  # building a checkout is not running a download
            if fact.origin in (Origin.NETWORK.value, Origin.DECODED.value):
                return effect._replace(origin=Origin(fact.origin)), []
            if fact.detail and "from_session" not in effect.flags:
                # A script written earlier: judged by what it holds, now that it runs.
                # A unit enabled by name is read as the unit file it is; other files
                # installed to run later (crontab FILE) are cron tables.
                unit = (
                    "service" in effect.flags
                    or fact.key.rpartition("/")[2] != effect.target.rpartition("/")[2]
                )
                path = fact.key if unit else effect.target
                cron = (
                    action is Action.PERSIST
                    and not unit
                    and "hook" not in effect.flags
                    and not path.lower().endswith((".xml", ".reg"))  # a task's XML, a .reg file
                )
                extra = self._ran_code(session_id, path, fact.detail, cron, cwd, analyses)
                # What the file destroys is in the place the command named (`psql
                # "$PROD_URL" -f cleanup.sql`).
                return effect, destroys_in(extra, effect.flags & PRODUCTION)
            return effect, []
        if action is Action.SEND:
            return self._resolve_send(session_id, effect, cwd), []
        if action is Action.WRITE and "project_hook" in effect.flags:
            # A hook copied from a file this session made is that file's code, not the
            # project's: downloaded or written here, it is judged as unseen code again.
            folder = effect.target.rsplit("/", 1)[0] if "symbolic" in effect.flags else ""
            for source in effect.data:
                path = normalise(f"{folder}/{source}") if folder else source
                if self._file_fact(session_id, path, cwd) is not None:
                    return effect._replace(flags=effect.flags - {"project_hook"}), []
            return effect, []
        if (
            action is Action.READ
            and "stdin_file" in effect.flags
            and effect.program.split(" ")[0] in _RUNS_INPUT
        ):
            # `bash < setup.sh`, `mysql -h prod < cleanup.sql`: the file runs.
            fact = self._file_fact(session_id, effect.target, cwd)
            if fact is not None and fact.origin in _HIDDEN_VALUES:
                ran = Effect(
                    Action.EXECUTE, effect.target, Origin(fact.origin), program=effect.program
                )
                return effect, [ran]
            if fact is not None and fact.detail:
                extra = self._ran_code(session_id, fact.key, fact.detail, False, cwd, analyses)
                return effect, destroys_in(extra, effect.flags & PRODUCTION)
        return effect, []

    def _ran_code(
        self,
        session_id: str,
        path: str,
        content: str,
        cron: bool,
        cwd: str,
        analyses: list[ShellAnalysis],
        depth: int = 0,
    ) -> list[Effect]:
        """What running a file the session wrote does, with what it runs in turn: a file it
        sources that the session also wrote defines the functions it calls (the text is
        read first, as the shell would), and a file it runs that the session downloaded is
        network code. Nested `_MAX_SOURCED` deep at most."""
        start = len(analyses)
        found = [
            e._replace(flags=e.flags | _FROM_SESSION)
            for e in self._code_effects(path, content, cron, analyses)
        ]
        if depth >= _MAX_SOURCED:
            return found
        more: list[Effect] = []
        for effect in found:
            if effect.action in _RUNS and effect.target not in (STDIN, UNRESOLVED):
                nested = self._file_fact(session_id, effect.target, cwd)
                if nested is None or nested.kind != FILE or nested.key == path:
                    continue
                if nested.origin in _HIDDEN_VALUES:
                    more.append(effect._replace(origin=Origin(nested.origin)))
                elif nested.detail:  # `node tools/setup.js` in a package.json it wrote
                    more.extend(
                        self._ran_code(
                            session_id, nested.key, nested.detail, False, cwd, analyses, depth + 1
                        )
                    )
        definitions: list[str] = []
        for analysis in analyses[start:]:
            for command in analysis.commands:
                if command.program not in (".", "source") or not command.positionals:
                    continue
                word = command.positionals[0]
                nested = self._sourced_fact(session_id, str(word), cwd)
                if nested is not None and nested.detail and nested.detail not in definitions:
                    definitions.append(nested.detail)
        if definitions:
            text = "".join(d + "\n" for d in definitions) + content
            more.extend(self._ran_code(session_id, path, text, cron, cwd, analyses, depth + 1))
        return found + more

    def _sourced_fact(self, session_id: str, word: str, cwd: str) -> Fact | None:
        """The session file a script sources. A directory the script works out at run time
        (`$(cd "$(dirname "$0")" && pwd)/lib/x.sh`, `${BASH_SOURCE%/*}/lib/x.sh`) is
        unknown here: the segments after it must then end a path the session wrote."""
        if "$" not in word and "`" not in word:
            fact = self._file_fact(session_id, normalise(word), cwd)
            return fact if fact is not None and fact.kind == FILE else None
        segments = word.split("/")
        known: list[str] = []
        for segment in reversed(segments[1:]):
            if not segment or any(c in segment for c in "$`(){}"):
                break
            known.insert(0, segment)
        if not known:
            return None
        suffix = "/" + "/".join(known)
        for fact in self._facts.facts(session_id, FILE):
            if fact.key.endswith(suffix) or fact.key == suffix[1:]:
                return fact
        return None

    def _unit_fact(self, session_id: str, name: str) -> Fact | None:
        """The unit file an earlier call wrote for `systemctl enable NAME` (a name, not a
        path: `upd` is `.../systemd/.../upd.service`)."""
        names = {name, f"{name}.service", f"{name}.timer", f"{name}.socket", f"{name}.path"}
        for fact in self._facts.facts(session_id, FILE):
            directory, _, base = fact.key.rpartition("/")
            if base in names and "systemd" in directory and fact.detail:
                return fact
        return None

    def _manifests_below(
        self, session_id: str, directory: str, cwd: str, analyses: list[ShellAnalysis]
    ) -> list[Effect]:
        """`kubectl apply -f DIR`: the manifests earlier calls wrote below DIR."""
        found: list[Effect] = []
        absolute = _absolute(directory, cwd)
        for fact in self._facts.facts(session_id, FILE):
            if not fact.detail or not fact.key.endswith((".yaml", ".yml", ".json")):
                continue
            if not _below(fact.key, absolute) and not _below(fact.key, directory):
                continue
            found.extend(self._ran_code(session_id, fact.key, fact.detail, False, cwd, analyses))
        return found

    def _resolve_send(self, session_id: str, effect: Effect, cwd: str = "") -> Effect:
        if "git_remote" in effect.flags:
            remote = self._facts.fact(session_id, REMOTE, effect.target)
            if remote is not None:
                host = host_of(remote.detail) or remote.detail
                return effect._replace(target=host, flags=effect.flags | _NEW_REMOTE)
        data = [*effect.data, *self._secrets_in(session_id, effect.data, cwd)]
        if "git_remote" in effect.flags:
            staged = self._facts.fact(session_id, CARRIED, GIT_STAGED)
            if staged is not None:
                data.extend(staged.detail.split("\n"))
        if len(data) == len(effect.data):
            return effect
        return effect._replace(data=tuple(dict.fromkeys(data)))

    def _secrets_in(self, session_id: str, items: Sequence[str], cwd: str = "") -> list[str]:
        """The secrets `items` hold by the session's doing: a file it filled with them, a
        folder holding such a file (a copied `~/.ssh`), a file inside such a folder, or a
        link inside the folder to a secret place (zip and `tar -h` follow links); `.` holds
        everything relative. The session's facts are read once for all the items."""
        # A relative item is below where this call runs (recorded facts are absolute when
        # their call named its directory).
        given = [normalise(i) for i in items if i and i not in (UNRESOLVED, STDIN)]
        paths = list(dict.fromkeys([*given, *(_absolute(p, cwd) for p in given)]))
        if not paths or not self._facts.has_any(session_id):
            return []
        found: list[str] = []
        carried = [f for f in self._facts.facts(session_id, CARRIED) if f.key != GIT_STAGED]
        links = self._facts.facts(session_id, LINK)
        for here in paths:
            for fact in carried:
                if _holds(here, normalise(fact.key)):
                    found.extend(fact.detail.split("\n"))
            for fact in links:
                if _holds(here, normalise(fact.key), inside_only=True) and not (
                    _SECRET_CLASSES.isdisjoint(self._classify(fact.detail))
                ):
                    found.append(fact.detail)
        return found

    def _file_fact(self, session_id: str, path: str, cwd: str = "") -> Fact | None:
        """The fact recorded for `path`, however the two calls spelled it: a relative path
        is resolved against the call's working directory when known; a path recorded
        relative (its call named no directory) matches an absolute one ending with it, and
        without a working directory a relative path matches a recorded one ending with it.
        Whole segments only: `a/Makefile` is never `b/Makefile`."""
        absolute = _absolute(path, cwd)
        at_home = _home_folded(absolute)
        for key in dict.fromkeys((path, absolute, at_home)):
            fact = self._facts.fact(session_id, FILE, key)
            if fact is not None:
                return fact
        for recorded in self._facts.facts(session_id, FILE):
            if _same_file(recorded.key, absolute) or _home_folded(recorded.key) == at_home:
                return recorded
        for tree in self._facts.facts(session_id, TREE):
            for candidate in dict.fromkeys((path, absolute)):
                if candidate == tree.key or candidate.startswith(tree.key.rstrip("/") + "/"):
                    return tree
        return None

    def bound_line(
        self, session_id: str, line: str, sourced: Sequence[str] = (), cwd: str = ""
    ) -> str | None:
        """`line` after the assignments earlier calls made to the variables it uses (a
        persistent shell keeps them: OpenHands, Claude Code's Bash) and after the text of
        files earlier calls wrote that it sources (`source helpers.sh && cleanup "$HOME"`:
        the functions it calls are defined there), or None if there are none. Its effects
        are only added to the line's own, so nothing may become less strict."""
        if not self._facts.has_any(session_id):
            return None
        kept = [
            f
            for f in self._facts.facts(session_id, VARIABLE)
            if f"${f.key}" in line or f"${{{f.key}}}" in line
        ] if "$" in line else []  # fmt: skip
        definitions: list[str] = []
        if "git" in line:  # `git sync` runs the `!` alias an earlier call set
            definitions.extend(
                f.detail for f in self._facts.facts(session_id, GIT_ALIAS)
                if _runs_git_alias(line, f.key)
            )  # fmt: skip
        definitions.extend(
            f.detail for f in self._facts.facts(session_id, DEFINED) if _calls(line, f.key)
        )
        for path in sourced:
            fact = self._file_fact(session_id, normalise(path), cwd)
            if fact is not None and fact.kind == FILE and fact.origin == Origin.LITERAL.value:
                definitions.append(fact.detail)
        if not kept and not definitions:
            return None
        assignments = "".join(
            f"{f.key}={f.detail}\n"
            if f.origin == _SUBSTITUTED
            else f"{f.key}={shlex.quote(f.detail)}\n"
            for f in kept
        )
        return assignments + "".join(d + "\n" for d in definitions) + line

    def record(
        self, session_id: str, effects: Sequence[Effect], analyses: Sequence[ShellAnalysis]
    ) -> None:
        facts = list(self._facts_from(session_id, effects))
        for analysis in analyses[:1]:
            facts.extend(_command_facts(analysis.commands))
            facts.extend(self._concatenated(session_id, analysis.commands))
            # A persistent shell keeps the functions and aliases a call defined.
            facts.extend(Fact(DEFINED, name, "", text) for name, text in analysis.definitions)
        self._facts.record(session_id, facts)

    def _concatenated(self, session_id: str, commands: Sequence[SimpleCommand]) -> Iterable[Fact]:
        """`cat a.part b.part > run.sh`: the file holds what the session wrote into the parts,
        so running it later runs their joined text (a payload split to look harmless)."""
        for command in commands:
            if command.program != "cat" or not command.positionals:
                continue
            targets = [r.target for r in command.redirects if r.operator in (">", ">|", ">>")]
            if len(targets) != 1 or not _static(targets[0]):
                continue
            texts: list[str] = []
            origin = Origin.LITERAL.value
            for word in command.positionals[:_MAX_PARTS]:
                fact = self._file_fact(session_id, str(word)) if type(word) is str else None
                if fact is None or fact.kind != FILE:
                    break
                if fact.origin in _HIDDEN_VALUES:
                    origin = fact.origin
                texts.append(fact.detail)
            else:
                if origin != Origin.LITERAL.value:
                    yield Fact(FILE, targets[0], origin)
                elif sum(map(len, texts)) <= MAX_RECORDED_CONTENT:
                    yield Fact(FILE, targets[0], origin, "".join(texts))

    def _facts_from(self, session_id: str, effects: Sequence[Effect]) -> Iterable[Fact]:
        archives = [
            e.target
            for e in effects
            if e.action is Action.READ
            and (e.program in _UNPACKERS or "archive" in e.flags)
            and e.target != UNRESOLVED
        ]
        for effect in effects:
            if effect.action is not Action.WRITE or "written_code" in effect.flags:
                continue
            path = effect.target
            if "link" in effect.flags and "symbolic" in effect.flags and effect.data:
                pointed = _link_target(path, effect.data[0])
                if pointed:
                    yield Fact(LINK, path, "", pointed)
                continue
            if path in (UNRESOLVED, STDIN, "") or "unresolved" in effect.flags:
                continue
            if "unpack" in effect.flags and effect.program == "git clone":
                # A clone is a download: what a later call runs from it is network code,
                # as `git clone URL d && bash d/install.sh` in one line is.
                if "clone_default" in effect.flags:
                    path = path.removesuffix(".git")
                yield Fact(TREE, path, Origin.NETWORK.value)
                continue
            if "unpack" in effect.flags:
                yield from self._unpacked(session_id, path, archives)
                continue
            if effect.origin in HIDDEN_ORIGINS:
                yield Fact(FILE, path, effect.origin.value)
            elif effect.content and len(effect.content) <= MAX_RECORDED_CONTENT:
                # Kept to judge it if a later call runs it (a script, a cron table, a hook).
                yield Fact(FILE, path, Origin.LITERAL.value, effect.content)
            elif effect.data and effect.program in _COPIERS:
                # A download or a written script copied or renamed is still what it was.
                for item in effect.data:
                    was = self._file_fact(session_id, item)
                    if was is not None and was.kind == FILE:
                        yield Fact(FILE, path, was.origin, was.detail)
                        break
            secret_sources = [
                s
                for s in effect.data
                if s == ENVIRONMENT
                or is_secret_data(s)  # a credential a command printed (`gh auth token > f`)
                or not _SECRET_CLASSES.isdisjoint(self._classify(s))
            ]
            # Secrets the session put in what is copied, packed or staged travel with it.
            items = effect.data or ((".",) if effect.program == "git add" else ())
            secret_sources.extend(self._secrets_in(session_id, items))
            if secret_sources and effect.program == "git add":
                # Staged, then committed: the next push sends them.
                yield Fact(CARRIED, GIT_STAGED, "", "\n".join(dict.fromkeys(secret_sources)))
            elif secret_sources:
                yield Fact(CARRIED, path, "", "\n".join(dict.fromkeys(secret_sources)))
            name = path.rsplit("/", 1)[-1]
            if name in (".npmrc", "pip.conf", ".yarnrc", ".yarnrc.yml"):
                yield from _registry_in_config(path, effect.content)
            elif name.startswith("requirements") and name.endswith((".txt", ".in")):
                yield from _index_in_requirements(effect.content)
            elif name in _MAVEN_BUILD_FILES:
                for url in _MAVEN_REPOSITORY.findall(effect.content)[:_MAX_PARTS]:
                    yield Fact(REGISTRY, "maven", "", url)

    def _unpacked(self, session_id: str, destination: str, archives: list[str]) -> Iterable[Fact]:
        for archive in archives:
            fact = self._facts.fact(session_id, FILE, archive)
            if fact is None or fact.origin not in (Origin.NETWORK.value, Origin.DECODED.value):
                continue
            stem = _archive_stem(archive)
            base = "" if destination in (".", "") else destination.rstrip("/") + "/"
            yield Fact(TREE, normalise(base + stem), fact.origin)
            if base:
                yield Fact(TREE, destination, fact.origin)


_GIT_HOOKS = frozenset(
    {"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
     "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout",
     "post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive",
     "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc",
     "post-rewrite", "sendemail-validate", "fsmonitor-watchman", "post-index-change"}
)  # fmt: skip


def _runner_name(program: str) -> str:
    """`.venv/bin/python3.12` is `python`, `/usr/bin/ssh` is `ssh`: as `run_by` names them."""
    name = program.rpartition("/")[2]
    return "python" if name.startswith("python") else name


def _holds(item: str, key: str, inside_only: bool = False) -> bool:
    """Whether `item` (a path a command reads) holds what the session recorded at `key`:
    the same path, a folder above it (`.` holds every relative path), or, unless
    `inside_only`, a path inside it."""
    if item in ("", "."):
        return not _is_absolute(key)
    if key == item or key.startswith(item.rstrip("/") + "/"):
        return True
    if item.startswith(key + ".") and item[len(key) :].lower() in _TRANSFORMED:
        return True  # `gzip -f env.txt` leaves env.txt.gz: the same data, packed
    return not inside_only and item.startswith(key.rstrip("/") + "/")


def _is_hook(path: str) -> bool:
    """A git hook: in .git/hooks, or a hook-named file in a hooks directory that
    `core.hooksPath` can point at (.githooks, .husky, tools/hooks)."""
    if "/.git/hooks/" in "/" + path:
        return True
    directory, _, name = path.rpartition("/")
    return name in _GIT_HOOKS and "hook" in directory.rsplit("/", 1)[-1].lower()


def _link_target(link: str, target: str) -> str:
    """What a symbolic link points at, as a path: relative targets are below the link's
    directory (`ln -s ../x d/y` points at `x`)."""
    if target in (UNRESOLVED, STDIN, "") or "$" in target:
        return ""
    if _is_absolute(target):
        return normalise(target)
    directory = link.rsplit("/", 1)[0] if "/" in link else "."
    return normalise(f"{directory}/{target}")


def _links_made(effects: Sequence[Effect]) -> Iterable[tuple[str, str]]:
    for effect in effects:
        if effect.action is Action.WRITE and {"link", "symbolic"} <= effect.flags and effect.data:
            pointed = _link_target(effect.target, effect.data[0])
            if pointed:
                yield effect.target, pointed


def _through_links(effect: Effect, links: list[tuple[str, str]], cwd: str) -> list[Effect]:
    """What an effect reaches through the symbolic links the session made: `cat e/shadow`
    after `ln -s /etc e` reads /etc/shadow; `rm -rf k/` after `ln -s ~/.ssh k` deletes the
    keys. Removing or moving the link itself touches only the link (unless recursive)."""
    if effect.action is Action.SEND:
        data = [_via(item, links, cwd, exact=True) for item in effect.data]
        extra = tuple(d for d in data if d)
        if not extra:
            return []
        return [effect._replace(data=effect.data + extra, flags=effect.flags | _THROUGH_LINK)]
    if effect.action not in _THROUGH_LINKS or "link" in effect.flags:
        return []
    exact = effect.action is not Action.DELETE or "recursive" in effect.flags
    target = _via(effect.target, links, cwd, exact)
    return [effect._replace(target=target, flags=effect.flags | _THROUGH_LINK)] if target else []


def _via(path: str, links: list[tuple[str, str]], cwd: str, exact: bool) -> str:
    """`path` spelled through the first link it is, or is below; "" if none. `exact`: the
    link itself counts too (not for removing it)."""
    path = _absolute(path, cwd)
    for link, pointed in links:
        prefix = link.rstrip("/") + "/"
        if path == link and exact:
            return pointed
        if path.startswith(prefix):
            return normalise(f"{pointed.rstrip('/')}/{path[len(prefix) :]}")
    return ""


def _is_absolute(path: str) -> bool:
    return path.startswith(("/", "~"))


def _absolute(path: str, cwd: str) -> str:
    """`path` resolved against `cwd` when it is relative and `cwd` is known."""
    if _is_absolute(path) or not _is_absolute(cwd) or path in (STDIN, UNRESOLVED):
        return path
    return normalise(path, cwd) if not cwd.startswith("~") else normalise(f"{cwd}/{path}")


_HOME_DIRECTORY = re2.compile(r"^(?:/home/[^/]+|/Users/[^/]+|/root)(/.*)?$")


def _home_folded(path: str) -> str:
    """`/home/dev/.local/bin/x` as `~/.local/bin/x`: one call writes the home directory
    spelled out (a file tool's absolute path), another as `~` (a shell). The home directory
    is not known here, so any user's is taken as the agent's: only more files match."""
    found = _HOME_DIRECTORY.match(path)
    return path if found is None else "~" + (found.group(1) or "")


def _same_file(recorded: str, path: str) -> bool:
    """Two spellings of one file when one of them is relative to an unknown directory: the
    absolute one ends with the relative one, segment by segment."""
    if _is_absolute(recorded) == _is_absolute(path):
        return False  # both absolute or both relative: only equal spellings are one file
    short, long = (path, recorded) if _is_absolute(recorded) else (recorded, path)
    if short.startswith("../") or short in (".", ".."):
        return False
    return long.endswith("/" + short)


def _below(path: str, directory: str) -> list[str]:
    """`path` as spelled below `directory`: one spelling when both are known, every
    candidate tail when one is relative to a directory the calls did not name."""
    if _is_absolute(directory) and _is_absolute(path):
        prefix = directory.rstrip("/") + "/"
        return [path[len(prefix) :]] if path.startswith(prefix) else []
    if not _is_absolute(path):
        if _is_absolute(directory) or directory == ".":
            return [path]  # recorded without a directory: taken as this project's
        prefix = directory.rstrip("/") + "/"
        return [path[len(prefix) :]] if path.startswith(prefix) else []
    # An absolute file, a relative project directory: any tail could be the project's.
    parts = path.split("/")
    return ["/".join(parts[i:]) for i in range(1, len(parts)) if parts[i]]


def _project_directory(effect: Effect) -> str | None:
    """The directory whose project files the effect runs: `execute .` of a project command,
    or an install of a local directory (`pip install -e .`, `pip install ./pkg`)."""
    target = effect.target
    if effect.action is Action.EXECUTE and "project" in effect.flags:
        return target or "."
    if effect.action is Action.INSTALL and (
        target == "." or target.startswith(("./", "../", "/", "~/"))
    ):
        return target
    return None


def _conda_channel_added(args: Sequence[object]) -> str:
    """`conda config --add channels URL` (or --prepend, --append, `--set channel_alias`):
    later installs search there first; a public channel is no switch."""
    words = [w if type(w) is str else "?" for w in args]
    for index, word in enumerate(words[:-2]):
        if word in ("--add", "--prepend", "--append") and words[index + 1] == "channels":
            channel = str(words[index + 2])
            return "" if channel in _PUBLIC_CONDA_CHANNELS else channel
        if word == "--set" and words[index + 1] == "channel_alias":
            return str(words[index + 2])
    return ""


def _command_facts(commands: Sequence[SimpleCommand]) -> Iterable[Fact]:
    for command in commands:
        context = switched_to(command)
        if context is not None:
            yield Fact(KUBE, "context", "", context)  # "": switched to one not known here
        words = [w for w in command.positionals if type(w) is str]
        alias = _git_alias(command) if command.program == "git" else None
        if alias is not None:
            yield Fact(GIT_ALIAS, alias[0], "", alias[1])
        pointed = remote_pointed(command)
        if pointed is not None:
            yield Fact(REMOTE, pointed[0], "", pointed[1])
        elif command.program in ("npm", "pnpm", "yarn", "pip", "pip3", "uv") and "set" in words:
            at = words.index("set")
            rest = words[at + 1 :]
            if rest:
                key, _, value = rest[0].partition("=")
                value = value or (rest[1] if len(rest) > 1 else "")
                ecosystem = _REGISTRY_KEYS.get(_registry_key(key))
                if ecosystem and value:
                    yield Fact(REGISTRY, ecosystem, "", value)
        elif _ECOSYSTEMS.get(command.program) == "conda" and words[:1] == ["config"]:
            channel = _conda_channel_added(command.args)
            if channel:
                yield Fact(REGISTRY, "conda", "", channel)
        elif command.program == "gem" and words[:1] == ["sources"]:
            # `gem sources --add URL` (-a): later gem installs search there too.
            args = [w if type(w) is str else "?" for w in command.args]
            for index, word in enumerate(args[:-1]):
                if word in ("--add", "-a") and args[index + 1] != "https://rubygems.org/":
                    yield Fact(REGISTRY, "gem", "", args[index + 1])
                    break
        elif command.program == "go" and words[:1] == ["env"] and "-w" in command.args:
            for word in command.args:  # go env -w GOPROXY=URL: every later go command's
                name, equals, value = word.partition("=")
                if equals and _REGISTRY_VARIABLES.get(name) == "go" and value:
                    yield Fact(REGISTRY, "go", "", value.split(",")[0])
        elif command.program in ("export", "(assign)", "declare", "typeset", "readonly"):
            for word in command.args:
                name, equals, value = word.partition("=")
                ecosystem = _REGISTRY_VARIABLES.get(name)
                if equals and ecosystem and value:
                    yield Fact(REGISTRY, ecosystem, "", value)
                if equals and _VARIABLE_NAME.fullmatch(name) and _static(value):
                    yield Fact(VARIABLE, name, "", value)
                elif equals and _VARIABLE_NAME.fullmatch(name) and _substitution(value):
                    # `export T=$(cat ~/.aws/credentials)`: what T holds is worked out again
                    # wherever a later call uses it (the persistent shell kept it).
                    yield Fact(VARIABLE, name, _SUBSTITUTED, value)


def _git_alias(command: SimpleCommand) -> tuple[str, str] | None:
    """`git config [--global] alias.NAME '!CMD'`: NAME and the shell command it runs. A
    setting git runs on its own (`core.pager`, `core.sshCommand`, `core.fsmonitor`, a diff
    driver) is `*KEY`: every later git command may run it."""
    args = [a for a in command.args if type(a) is str]
    for index, word in enumerate(args[:-1]):
        value = args[index + 1]
        if not value or len(value) > _MAX_VARIABLE:
            continue
        key = word.lower()
        if key.startswith("alias.") and value.startswith("!"):
            name = word[len("alias.") :]
            if name and value[1:]:
                return name, value[1:]
        elif "." in key and not key.startswith(("alias.", "-")) and git_runs(key, value):
            return "*" + key, value.removeprefix("!")
    return None


def _runs_git_alias(line: str, name: str) -> bool:
    """Whether `line` runs `git NAME` (also inside `bash -lc '...'`); for `*KEY`, any git
    command but the one that sets KEY again."""
    if name.startswith("*"):
        return re2.search(r"(^|[\s;&|(\x22'])git(\s|$)", line) is not None and name[1:] not in line
    pattern = (
        r"(^|[\s;&|(\x22'])git\s+(?:-\S+\s+\S+\s+)*" + re2.escape(name) + r"(\s|$|[;&|)\x22'])"
    )
    return re2.search(pattern, line) is not None


_SUBSTITUTED = "substituted"  # a VARIABLE fact's origin: its detail is `$(...)` as written


def _substitution(value: str) -> bool:
    """One command substitution, as written (`$(cat ~/.aws/credentials)`), short enough."""
    return (
        len(value) <= _MAX_VARIABLE
        and value.startswith("$(")
        and value.endswith(")")
        and value.count("$(") == 1
        and "\n" not in value
    )


def _calls(line: str, name: str) -> bool:
    """Whether `line` may run the command NAME (a word in command position, roughly)."""
    pattern = r"(^|[\s;&|(`{])" + re2.escape(name) + r"(\s|$|[;&|)`}])"
    return name in line and re2.search(pattern, line) is not None


def _static(value: str) -> bool:
    """A value the walk resolved (`$HOME` is `~` by now), short enough to keep."""
    return (
        len(value) <= _MAX_VARIABLE
        and type(value) is str  # words computed at run time are a str subclass
        and "$" not in value
        and "`" not in value
    )


_MAVEN_BUILD_FILES = frozenset(
    {"settings.gradle", "settings.gradle.kts", "build.gradle", "build.gradle.kts", "pom.xml",
     "init.gradle", "settings.xml"}
)  # fmt: skip
# `maven { url "http://..." }`, `maven(url = "...")`, `url = uri("...")`, `<url>...</url>`
_MAVEN_REPOSITORY = re2.compile(
    r"(?i)(?:\burl\s*(?:=\s*(?:uri\s*\(\s*)?)?|<url>\s*)[\x22']?(https?://[^\s\x22'<)]+)"
)
_MAVEN_BUILDERS = frozenset({"gradle", "gradlew", "mvn", "mvnw"})


def _builds_with_maven(effect: Effect) -> bool:
    """`./gradlew build`, `mvn package`: the program's own name, wherever it lies."""
    return effect.program.split(" ", 1)[0].rsplit("/", 1)[-1] in _MAVEN_BUILDERS


def _registry_in_config(path: str, content: str) -> Iterable[Fact]:
    ecosystem = "pip" if path.endswith("pip.conf") else "npm"
    for line in content.splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            key, sep, value = line.partition(":")
        if sep and _registry_key(key) in _REGISTRY_KEYS:
            yield Fact(REGISTRY, ecosystem, "", value.strip().strip("\"'"))


_REQUIREMENTS_INDEX = re2.compile(
    r"(?m)^\s*(?:--index-url|--extra-index-url|-i|--find-links|-f)(?:\s+|=)(\S+)"
)


def _index_in_requirements(content: str) -> Iterable[Fact]:
    """`--extra-index-url URL` in a requirements file: pip installs from there too."""
    for match in _REQUIREMENTS_INDEX.finditer(content):
        yield Fact(REGISTRY, "pip", "", str(match.group(1)))


def _registry_key(key: str) -> str:
    """A registry setting's last part: a scope's registry (`@acme:registry`, yarn's
    `npmScopes.acme.npmRegistryServer`) is a switched registry too."""
    return key.strip().lower().lstrip("@").split(":")[-1].split(".")[-1]


def _archive_stem(archive: str) -> str:
    name = archive.rsplit("/", 1)[-1]
    for suffix in _ARCHIVE_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


_VARIABLE_NAME = re2.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FROM_SESSION = frozenset({"from_session"})
# Programs that run what they read on standard input: shells, interpreters, database clients.
_RUNS_INPUT = SHELLS | frozenset({
    "pwsh", "powershell", "python", "python3", "node", "ruby", "perl", "php", "psql", "mysql",
    "mariadb", "sqlite3", "sqlcmd", "mongosh", "mongo", "redis-cli", "cqlsh",
    "clickhouse-client", "duckdb", "osascript",
})  # fmt: skip
# What compressing, archiving, encrypting or encoding a file in place calls the result.
_TRANSFORMED = frozenset({
    ".gz", ".bz2", ".xz", ".zst", ".lz4", ".lzma", ".z", ".zip", ".7z", ".tar", ".tgz",
    ".tar.gz", ".gpg", ".asc", ".enc", ".age", ".b64", ".base64",
})  # fmt: skip
_MAX_SOURCED = 2  # files a written script sources, and what those source
_FROM_PROJECT = frozenset({"from_session", "project"})
_HIDDEN_VALUES = frozenset({Origin.NETWORK.value, Origin.DECODED.value})
_CUSTOM_INDEX = frozenset({"custom_index"})
_NEW_REMOTE = frozenset({"new_remote"})

"""Builds a CodeAnalysis from what an analyser finds: one method per kind of effect.

Every language calls the same builders with the values it computed, so a path that
cannot be resolved, a command computed at run time or a socket wired to a shell is
reported the same way whatever the language.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable

from sidecar.code.values import (
    ANY_ADDRESS,
    HOLE,
    UNKNOWN,
    Data,
    host_of,
    is_list,
    mode_flags,
    normal_path,
    sources_of,
    text_of,
)
from sidecar.effects.model import (
    STDIN,
    UNRESOLVED,
    Action,
    CodeAnalysis,
    Effect,
    Origin,
)

# Programs that give whoever talks to their standard input a shell.
SHELL_PROGRAMS = frozenset(
    {
        "sh",
        "bash",
        "dash",
        "zsh",
        "ksh",
        "mksh",
        "ash",
        "csh",
        "tcsh",
        "fish",
        "busybox",
        "cmd",
        "cmd.exe",
        "powershell",
        "powershell.exe",
        "pwsh",
        "pwsh.exe",
    }
)

MAX_NESTED = 6  # eval of eval of ...: deeper than this is a problem

# Analyses code of a language at a nesting depth: how eval("...") of a constant is followed.
Nested = Callable[[str, str, int], CodeAnalysis]


_MODEL_HUB = frozenset({"model_hub"})
_SETS_ID = frozenset({"sets_id"})  # setuid(0) and friends, called from code


class Collector:
    """Effects, shell lines and problems found in one piece of code."""

    def __init__(self, language: str, nested: Nested, depth: int = 0) -> None:
        self.language = language
        self._nested = nested
        self._depth = depth
        self.effects: list[Effect] = []
        self.shell: list[str] = []
        self.problems: list[str] = []
        self.parse_error = False
        self.cwd: str | None = None  # a working directory set by the code (os.chdir("/"))
        self._connections: list[int] = []  # indexes of CONNECT effects
        self._shell_spawns: list[str] = []  # shells started by the code
        self._stdio_to_socket = False  # a socket became a process's stdin/stdout (dup2, ...)
        self._network_code = False  # code received from the network was run
        self._computed_code: list[str] = []  # APIs that ran code computed at run time

    # --- files ------------------------------------------------------------------------

    def target(self, path: object) -> tuple[str, frozenset[str]]:
        """A path value as an effect target, with "unresolved" when it is not known."""
        text = text_of(path)
        if text is None or (isinstance(path, Data) and path.origin is not Origin.LITERAL):
            return UNRESOLVED, frozenset({"unresolved"})
        target = normal_path(text, self.cwd)
        if target == UNRESOLVED:
            return target, frozenset({"unresolved"})
        return target, frozenset()

    def file(
        self,
        action: Action,
        path: object,
        api: str,
        flags: Iterable[str] = (),
        content: object = None,
    ) -> int:
        target, extra = self.target(path)
        origin = Origin.NONE
        text = ""
        if action is Action.WRITE and content is not None:
            origin, text = _content(content)
        self.effects.append(Effect(action, target, origin, (), frozenset(flags) | extra, api, text))
        return len(self.effects) - 1

    def read(self, path: object, api: str, listing: bool = False) -> int:
        return self.file(Action.READ, path, api, ("list",) if listing else ())

    def write(
        self,
        path: object,
        api: str,
        content: object = None,
        *,
        append: bool = False,
        truncate: bool = False,
        flags: Iterable[str] = (),
    ) -> int:
        more = set(flags)
        if append:
            more.add("append")
        if truncate:
            more.add("truncate")
        return self.file(Action.WRITE, path, api, more, content)

    def add_content(self, index: int, content: object) -> None:
        """Text written later through a handle opened for writing (f.write(...))."""
        effect = self.effects[index]
        origin, text = _content(content)
        if effect.content and text:
            text = effect.content + text
        origin = max((effect.origin, origin), key=_ORIGIN_ORDER.index)
        self.effects[index] = effect._replace(origin=origin, content=text[:65536])

    def delete(self, path: object, api: str, recursive: bool = False) -> None:
        self.file(Action.DELETE, path, api, ("recursive",) if recursive else ())

    def move(self, source: object, destination: object, api: str) -> None:
        self.file(Action.MOVE, source, api)
        self.file(Action.WRITE, destination, api)

    def copy(self, source: object, destination: object, api: str, recursive: bool = False) -> None:
        read = self.file(Action.READ, source, api, ("recursive",) if recursive else ())
        written = self.file(Action.WRITE, destination, api, ("recursive",) if recursive else ())
        # The copy holds what it was copied from (`shutil.copy(~/.docker/config.json, x)`):
        # a later call that sends it sends that, as after `cp`.
        source_path = self.effects[read].target
        if source_path != UNRESOLVED:
            self.effects[written] = self.effects[written]._replace(data=(source_path,))

    def unpack(self, archive: object, destination: object, api: str) -> None:
        """An archive extracted into a directory: what it holds keeps the archive's origin."""
        self.file(Action.READ, archive, api, ("archive",))
        self.file(Action.WRITE, destination, api, ("unpack", "directory"))

    def chmod(self, path: object, mode: object, api: str) -> None:
        self.file(Action.CHMOD, path, api, mode_flags(mode))

    def chown(self, path: object, api: str) -> None:
        self.file(Action.CHOWN, path, api)

    # --- processes --------------------------------------------------------------------

    def spawn(self, command: object, api: str) -> None:
        """A command line (text) or an argv (tuple) handed to a shell or exec'd."""
        line = command_line(command)
        if isinstance(command, Data) and command.origin in (Origin.DECODED, Origin.NETWORK):
            # a command hidden by encoding, or sent by another machine
            self.effects.append(
                Effect(
                    Action.EXECUTE,
                    STDIN,
                    command.origin,
                    (),
                    frozenset(),
                    api,
                    (line or "")[:65536],
                )
            )
            if command.origin is Origin.NETWORK:
                self._network_code = True
        if line is None:
            known = _partial(command)
            suffix = f": {known[:200]}" if known else ""
            self.problems.append(f"{api} runs a command computed at run time{suffix}")
            if known:
                self._note_shell(known)
            return
        if not line.strip():
            return
        self.shell.append(line)
        self._note_shell(line)

    def _note_shell(self, line: str) -> None:
        """A shell started by the code; `sh -i <&3 >&3` puts it on a socket's descriptor."""
        if _program_of(line) in SHELL_PROGRAMS:
            self._shell_spawns.append(_first_word(line))
            if "<&" in line or ">&" in line:
                self._stdio_to_socket = True

    def feed(self, command: object, data: object, api: str) -> None:
        """Text written to a started program's standard input: for a shell or an
        interpreter it is code, so the command line is judged with it as a here-document."""
        line = command_line(command)
        text = text_of(data)
        if line is None or text is None:
            self.problems.append(f"{api}: writes computed text to a started program")
            if line is None or not isinstance(data, Data) or not data.partial:
                return
            # `crontab -` fed `current + job`: the known lines are still judged.
            text = data.partial.replace(HOLE, "\n")
        delimiter = "SIDECAR_EOF"
        while delimiter in text:
            delimiter += "_"
        self.spawn(f"{line} <<'{delimiter}'\n{text}\n{delimiter}", api)

    def stdio_to_socket(self) -> None:
        """A socket became a process's standard input or output (dup2, a spawn with the
        socket as stdin, `<&3` in a command): with a connection, that is a reverse shell."""
        self._stdio_to_socket = True

    def execute(self, code: object, api: str, language: str | None = None) -> None:
        """eval/exec of code in `language` (the analyser's own by default)."""
        language = language or self.language
        if isinstance(code, Data):
            target = STDIN
            if code.origin is Origin.FILE and len(code.sources) == 1:
                target = normal_path(code.sources[0], self.cwd)
            if code.origin is not Origin.LITERAL:
                self.effects.append(
                    Effect(
                        Action.EXECUTE,
                        target,
                        code.origin,
                        (),
                        frozenset(),
                        api,
                        (code.text or "")[:65536],
                    )
                )
            if code.origin is Origin.NETWORK:
                self._network_code = True
            if code.text is not None:
                self._nest(language, code.text, api)
            elif code.origin is not Origin.NETWORK and code.origin is not Origin.FILE:
                self.problems.append(f"{api} runs code that cannot be read before it runs")
            return
        text = text_of(code)
        if text is None or not isinstance(code, str):
            self.problems.append(f"{api} runs code computed at run time")
            self._computed_code.append(api)
            return
        self._nest(language, text, api)

    def run_published(self, where: str, api: str) -> None:
        """Code a model or dataset hub serves, run on loading (`trust_remote_code=True`,
        `torch.hub.load`): code from the network, from a publisher named in `where`."""
        self.effects.append(
            Effect(Action.EXECUTE, where[:200], Origin.NETWORK, (), _MODEL_HUB, api)
        )

    def _nest(self, language: str, code: str, api: str) -> None:
        if self._depth >= MAX_NESTED:
            self.problems.append(f"{api}: code nested too deeply to analyse")
            return
        found = self._nested(language, code, self._depth + 1)
        self.effects.extend(found.effects)
        self.shell.extend(found.shell)
        self.problems.extend(found.problems)
        for line in found.shell:
            if _program_of(line) in SHELL_PROGRAMS:
                self._shell_spawns.append(_first_word(line))
        if any(e.has("reverse_shell") for e in found.effects):
            self._stdio_to_socket = True
        self.parse_error = self.parse_error or found.parse_error

    # --- network ----------------------------------------------------------------------

    def _host(self, url: object) -> tuple[str, frozenset[str]]:
        host = host_of(url)
        if host is None:
            return UNRESOLVED, frozenset({"unresolved"})
        return host, frozenset()

    def fetch(self, url: object, api: str, saved_to: object = None) -> Data:
        """A download; returns the downloaded data (for exec(urlopen(u).read())). A URL
        that carries a file's contents or the environment sends them."""
        if sources_of(url):
            self.send(url, [url], api)
            return Data(Origin.NETWORK, (host_of(url) or UNRESOLVED,))
        host, flags = self._host(url)
        saved: tuple[str, ...] = ()
        if saved_to is not None:
            saved = (self.target(saved_to)[0],)
            self.write(saved_to, api, Data(Origin.NETWORK, (host,), None))
        self.effects.append(Effect(Action.FETCH, host, Origin.NONE, saved, flags, api))
        return Data(Origin.NETWORK, (host,), None)

    def send(self, url: object, data: Iterable[object], api: str) -> None:
        """Data leaving the machine: the paths and ENVIRONMENT it carries go into `data`."""
        host, flags = self._host(url)
        carried: list[str] = []
        for value in data:
            if value is None:
                continue
            found = sources_of(value)
            carried.extend(self.target(s)[0] if s.startswith(("/", "~", ".")) else s for s in found)
            if value is UNKNOWN:
                carried.append(UNRESOLVED)
                flags = flags | {"unresolved"}
        self.effects.append(
            Effect(Action.SEND, host, Origin.NONE, tuple(dict.fromkeys(carried)), flags, api)
        )

    def connect(self, host: object, port: object, api: str) -> None:
        name = host_of(host)
        port_text = text_of(port)
        if name is None:
            target, flags = UNRESOLVED, frozenset({"unresolved"})
        else:
            shown = f"[{name}]" if ":" in name else name  # IPv6 keeps its brackets
            target = f"{shown}:{port_text}" if port_text else name
            flags = frozenset()
        self.effects.append(Effect(Action.CONNECT, target, Origin.NONE, (), flags, api))
        self._connections.append(len(self.effects) - 1)

    def listen(self, address: object, api: str, served: object = None) -> None:
        text = text_of(address)
        target = text if text is not None and text != "" else ANY_ADDRESS
        data: tuple[str, ...] = ()
        if served is not None:
            data = (self.target(served)[0],)
        self.effects.append(Effect(Action.LISTEN, target, Origin.NONE, data, frozenset(), api))

    # --- the system -------------------------------------------------------------------

    def privilege(self, uid: object, api: str) -> None:
        """setuid(0) and friends: becoming root (another uid only drops privileges)."""
        if isinstance(uid, int) and not isinstance(uid, bool) and uid != 0:
            return
        flags = _SETS_ID if isinstance(uid, int) else _SETS_ID | {"unresolved"}
        self.effects.append(Effect(Action.PRIVILEGE, "root", Origin.NONE, (), flags, api))

    def kill(self, target: object, api: str) -> None:
        text = text_of(target)
        flags = frozenset() if text is not None else frozenset({"unresolved"})
        self.effects.append(
            Effect(
                Action.KILL, text if text is not None else UNRESOLVED, Origin.NONE, (), flags, api
            )
        )

    def problem(self, text: str) -> None:
        self.problems.append(text)

    # --- the result -------------------------------------------------------------------

    def result(self) -> CodeAnalysis:
        effects = list(self.effects)
        if self._computed_code and any(e.action is Action.FETCH for e in effects):
            # Code that downloads and evaluates code it computes (`https.get(u, r => ...
            # new Function(body)())`): what it runs is the download, as far as can be told.
            effects.append(
                Effect(
                    Action.EXECUTE, STDIN, Origin.NETWORK, (), frozenset(), self._computed_code[0]
                )
            )
        if self._connections and (self._stdio_to_socket or self._network_code):
            # A socket out, and a process's streams on it or code read from it: the far
            # end drives this machine.
            for index in self._connections:
                effect = effects[index]
                effects[index] = effect._replace(flags=effect.flags | {"reverse_shell"})
            shell = self._shell_spawns[0] if self._shell_spawns else STDIN
            origin = Origin.LITERAL if self._shell_spawns else Origin.NETWORK
            effects.append(
                Effect(
                    Action.EXECUTE,
                    shell,
                    origin,
                    (),
                    frozenset({"reverse_shell"}),
                    effects[self._connections[0]].program,
                )
            )
        return CodeAnalysis(
            tuple(dict.fromkeys(effects)),
            tuple(dict.fromkeys(self.shell)),
            tuple(dict.fromkeys(self.problems)),
            self.parse_error,
        )


_ORIGIN_ORDER = [
    Origin.NONE,
    Origin.LITERAL,
    Origin.FILE,
    Origin.UNKNOWN,
    Origin.DECODED,
    Origin.NETWORK,
]


def _content(content: object) -> tuple[Origin, str]:
    if isinstance(content, Data):
        return content.origin, (content.text or "")[:65536]
    text = text_of(content)
    if text is None:
        return Origin.UNKNOWN, ""
    return Origin.LITERAL, text[:65536]


def command_line(command: object) -> str | None:
    """A command as one shell line: text as is, an argv joined with shlex quoting."""
    if is_list(command):
        assert isinstance(command, tuple)
        words: list[str] = []
        for item in command:
            text = text_of(item)
            if text is None:
                return None
            words.append(text)
        return shlex.join(words)
    return text_of(command)


def _partial(command: object) -> str:
    """What is known of a computed command, `?` standing for the unknown parts."""
    if isinstance(command, Data) and command.partial is not None:
        return command.partial.replace(HOLE, "?")
    if is_list(command):
        assert isinstance(command, tuple)
        return " ".join(_partial(p) or text_of(p) or "?" for p in command)
    return ""


def _first_word(line: str) -> str:
    words = line.split(None, 1)
    return words[0] if words else ""


def _program_of(line: str) -> str:
    word = _first_word(line).strip("'\"")
    return word.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower()

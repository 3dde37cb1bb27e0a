"""Shell code that programs run from their arguments, settings and variables.

`python3 -c 'os.system("rm -rf /")'`, `git -c core.pager='rm -rf /' log`,
`GIT_SSH_COMMAND='...' git fetch`, `su -c '...'`, `tar --checkpoint-action=exec=...`,
`vim -c ':!...'`, `ssh host '...'`: the command line holds code as data, and some
program will hand it to a shell. This module finds that code; the shell walk parses
it like any other script. Pure string work: nothing here parses shell itself.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import re2

from sidecar.shell.remote_runners import REMOTE_RUNNERS, remote_commands


class Embedded(NamedTuple):
    script: str
    via: str  # how it is reached, for the finding: "python3 -c", "git core.pager"


# Interpreters' options for inline code; that code may hand strings to a shell.
INLINE_CODE_OPTIONS: Mapping[str, tuple[str, ...]] = {
    "python": ("-c",),
    "python2": ("-c",),
    "python3": ("-c",),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"),
    "bun": ("-e", "--eval"),
    "php": ("-r",),
    "lua": ("-e",),
    "pwsh": ("-c", "-Command", "-command"),
    "powershell": ("-c", "-Command", "-command"),
}
_AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
_VIMS = frozenset({"vim", "vi", "nvim", "ex", "view", "vimdiff"})
# Options whose value a program runs through a shell (`su -c CMD`, `rsync -e CMD`).
COMMAND_OPTIONS: Mapping[str, tuple[str, ...]] = {
    "su": ("-c", "--command"),
    "runuser": ("-c", "--command"),
    "sg": ("-c",),
    "script": ("-c", "--command"),
    "flock": ("-c", "--command"),
    "rsync": ("-e", "--rsh"),
    "tar": (
        "--checkpoint-action",
        "--to-command",
        "--use-compress-program",
        "-I",
        "--info-script",
        "--new-volume-script",
        "-F",
    ),
    "gdb": ("-ex", "--eval-command"),
    "zip": ("-TT", "--unzip-command"),
    "sbatch": ("--wrap",),  # Slurm runs the text as the job's script
}
_QUOTED = r"'(?:[^'\\]|\\.)*'" + "|" + r'"(?:[^"\\]|\\.)*"'  # a quoted string in code
# os.system("..."), subprocess.run(["rm", "-rf", "/"]), child_process.exec('...'), ...
_SHELL_CALL = re2.compile(
    r"\b(?:system|popen|exec|execSync|spawn|spawnSync|check_output|check_call|call|run|Popen"
    r"|getoutput|getstatusoutput|shell_exec|passthru|proc_open)\s*\(\s*(\[\s*)?"
    rf"({_QUOTED})((?:\s*,\s*(?:{_QUOTED}))*)"
)
_QUOTED_STRING = re2.compile(_QUOTED)
_BACKTICKS = re2.compile(r"`([^`]*)`")  # perl, ruby and php run these through a shell
# awk: print ... | "cmd", "cmd" | getline
_AWK_PIPE = re2.compile(rf"\|\s*({_QUOTED})|({_QUOTED})\s*\|\s*getline")

# git settings whose value git runs as a shell command (aliases and helpers with "!").
GIT_COMMAND_SETTINGS = frozenset({
    "core.pager", "core.editor", "core.sshcommand", "core.fsmonitor", "core.askpass",
    "core.gitproxy", "sequence.editor", "diff.external", "gpg.program", "gpg.ssh.program",
    "credential.helper", "uploadpack.packobjectshook",
})  # fmt: skip
_GIT_COMMAND_SUFFIXES = (".cmd", ".command", ".textconv", ".clean", ".smudge", ".process")

# Environment variables whose value some program runs as a shell command.
COMMAND_VARIABLES = frozenset({
    "GIT_SSH_COMMAND", "GIT_SSH", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
    "GIT_EXTERNAL_DIFF", "GIT_PROXY_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS",
    "PAGER", "MANPAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "FCEDIT", "PROMPT_COMMAND",
    "BASH_ENV", "ENV", "LESSOPEN", "LESSCLOSE", "RSYNC_RSH", "CVS_RSH", "BROWSER",
})  # fmt: skip
# Variables that load code into whatever runs next: kept as (assign) commands for rules.
LOADER_VARIABLES = frozenset({
    "LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES",
    "DYLD_LIBRARY_PATH", "PYTHONSTARTUP", "PYTHONPATH", "PERL5OPT", "PERL5LIB", "RUBYOPT",
    "NODE_OPTIONS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
})  # fmt: skip

# Files every new shell runs: text written there is code, and is judged as such.
_STARTUP_NAMES = frozenset({
    ".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshrc", ".zprofile", ".zshenv",
    ".bash_aliases", ".zsh_aliases", ".aliases",
    ".zlogin", ".kshrc", "bash.bashrc", "zshrc", "rc.local",
})  # fmt: skip

# ssh options that take a value, so the host and the remote command can be found.
_SSH_VALUE_OPTIONS = frozenset("bcDEeFIiJLlmOoPpQRSWw")

# Programs that run their command words as one shell script (`watch 'rm -rf ~'` runs
# `sh -c 'rm -rf ~'`), or run a command per input (`parallel ::: 'cmd'`, `fd -x cmd`). A
# wrapper's unwrapping would take the quoted script for a program name.
_WATCH_VALUE_OPTIONS = frozenset({"-n", "--interval", "-d", "-q", "--equexit", "--color"})
_PARALLEL_VALUE_OPTIONS = frozenset({
    "-j", "--jobs", "-S", "--sshlogin", "--joblog", "-a", "--arg-file", "-d", "--delimiter",
    "--colsep", "-I", "--replace", "-n", "--max-args", "--results", "--tmpdir", "--timeout",
    "--retries", "--env", "--workdir", "--basefile", "-L", "--max-lines", "--memfree",
    "--load", "--delay", "--sshloginfile", "--tagstring", "-E", "--eof",
})  # fmt: skip
_FD_EXEC = frozenset({"-x", "--exec", "-X", "--exec-batch"})
_SCRIPT_RUNNERS = frozenset(
    {"watch", "parallel", "sem", "fd", "fdfind", "cmd", "cmd.exe", "tmux", "screen", "zellij"}
)
# tmux commands that run a shell command (their last words, joined), and the key names
# send-keys turns into keystrokes rather than text.
_TMUX_RUNS = frozenset({
    "new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane",
    "respawnp", "respawn-window", "respawnw", "run-shell", "run", "if-shell", "if",
    "display-popup", "popup", "pipe-pane", "pipep",
})  # fmt: skip
_TMUX_TYPES = frozenset({"send-keys", "send"})
_TMUX_VALUES = frozenset(
    {"-t", "-s", "-n", "-c", "-e", "-x", "-y", "-F", "-l", "-p", "-w", "-N", "-T", "-f", "-L", "-S"}
)
_TMUX_TYPE_VALUES = frozenset({"-t", "-N"})  # send-keys: -l types literally, a flag
_TMUX_KEYS = frozenset({"Enter", "C-m", "KPEnter", "C-j", "Escape", "C-c", "C-d", "Tab", "Space"})
_SCREEN_VALUE_OPTIONS = frozenset(
    {"-S", "-c", "-e", "-h", "-p", "-T", "-t", "-s", "-L", "-Logfile"}
)
# Windows programs that run a command line given as an option's value (no POSIX shell: a
# `|` inside it is the started program's text, not a pipe of ours).
_WINDOWS_COMMAND_OPTIONS: Mapping[str, frozenset[str]] = {
    "cmd": frozenset({"/c", "/k", "/r"}),
    "cmd.exe": frozenset({"/c", "/k", "/r"}),
    "schtasks": frozenset({"/tr"}),
    "schtasks.exe": frozenset({"/tr"}),
    # `reg add ...\Run /v NAME /d LINE`: a Run key's data is a command line run at logon.
    "reg": frozenset({"/d"}),
    "reg.exe": frozenset({"/d"}),
    # `wmic process call create LINE` starts LINE as a new process.
    "wmic": frozenset({"create"}),
    "wmic.exe": frozenset({"create"}),
}

# Clients that run a command inside a container: `kubectl exec POD -- CMD`, `docker exec C
# CMD`. The command is judged like one run here (as ssh's remote command is): deleting a
# database's files or stopping a security agent in a pod is no safer than on this machine.
_CONTAINER_CLIENTS = frozenset(
    {"kubectl", "oc", "kubecolor", "docker", "podman", "nerdctl", "finch"}
)
_KUBECTLS = frozenset({"kubectl", "oc", "kubecolor"})
_DOCKER_EXEC_VALUES = frozenset(
    {"-e", "--env", "--env-file", "-u", "--user", "-w", "--workdir", "--detach-keys"}
)

# Database clients whose own commands run a shell: sqlite's `.shell`/`.system`, psql's and
# mysql's `\!` (and mysql's `system`).
_SQL_SHELLS: Mapping[str, re2._Regexp] = {
    name: re2.compile(pattern)
    for names, pattern in (
        (("sqlite3", "sqlite", "duckdb", "litecli"), r"(?m)(?:^|;)\s*\.(?:shell|system)\s+(.+)$"),
        (("psql", "pgcli"), r"(?m)^\s*\\!\s*(.+)$"),
        (("mysql", "mariadb", "mycli"), r"(?m)^\s*(?:\\!|system\s)\s*(.+)$"),
    )
    for name in names
}

# Every program this module looks inside.
PROGRAMS = frozenset({
    "git", "ssh", *INLINE_CODE_OPTIONS, *_AWKS, *_VIMS, *COMMAND_OPTIONS, *_SCRIPT_RUNNERS,
    *_WINDOWS_COMMAND_OPTIONS, "sed", "gsed", *_CONTAINER_CLIENTS, *REMOTE_RUNNERS,
    *_SQL_SHELLS,
})  # fmt: skip


def embedded_scripts(
    program: str, args: Sequence[str], heredoc: str | None
) -> tuple[list[Embedded], list[str]]:
    """The scripts a program runs from its arguments, and what cannot be resolved."""
    if program in INLINE_CODE_OPTIONS:
        return _interpreter(program, args, heredoc), []
    if program in _AWKS:
        return _awk(program, args), []
    if program == "git":
        return _git(args)
    if program in _VIMS:
        return _vim(program, args), []
    if program == "ssh":
        return _ssh(args), []
    if program == "watch":
        return _watch(args), []
    if program in ("tmux", "screen", "zellij"):
        return _multiplexer(program, args), []
    if program in ("parallel", "sem"):
        return _parallel(program, args), []
    if program in ("fd", "fdfind"):
        return _fd(program, args), []
    if program in _WINDOWS_COMMAND_OPTIONS:
        return _windows_command(program, args), []
    if program in _SEDS:
        return _sed(program, args)
    if program in _SQL_SHELLS:
        return _sql_client(program, args, heredoc), []
    if program in _CONTAINER_CLIENTS:
        found = _container_exec(program, args)
        if found:
            return found, []
    if program in REMOTE_RUNNERS or program in _CONTAINER_CLIENTS:
        return [Embedded(r.script, r.via) for r in remote_commands(program, args)], []
    return _option_values(program, args), []


def _container_exec(program: str, args: Sequence[str]) -> list[Embedded]:
    """The command `kubectl exec ... -- CMD` or `docker exec [options] C CMD` runs."""
    if program in _KUBECTLS:
        if "--" not in args:
            return []
        at = list(args).index("--")
        if "exec" not in args[:at]:
            return []
        command = list(args[at + 1 :])
        target = next((w for w in args[args.index("exec") + 1 : at] if not w.startswith("-")), "")
        target = " ".join([target[:60], *_kube_places(args[:at])])
    else:
        position = 0
        while position < len(args) and args[position].startswith("-"):
            position += 1  # global options (rarely with a value before `exec`)
        if position >= len(args) or args[position] not in ("exec", "container-exec"):
            return []
        position += 1
        while position < len(args) and args[position].startswith("-"):
            takes_value = args[position] in _DOCKER_EXEC_VALUES
            position += 2 if takes_value else 1
        if position >= len(args):
            return []
        target, command = args[position], list(args[position + 1 :])
    if not command:
        return []
    return [Embedded(shlex.join(command), f"{program} exec {target[:60]}".rstrip())]


def _kube_places(words: Sequence[str]) -> list[str]:
    """The namespace, context and cluster a kubectl command names: where its exec runs."""
    found: list[str] = []
    for index, word in enumerate(words):
        option, equals, value = word.partition("=")
        if option in ("-n", "--namespace", "--context", "--cluster"):
            value = value if equals else (words[index + 1] if index + 1 < len(words) else "")
            found.append(f"{option} {value[:60]}")
    return found


_SEDS = frozenset({"sed", "gsed"})
# A sed command after its address: `1e cmd`, `/x/,$ e cmd`, `$!s/a/b/e`.
_SED_ADDRESS = re2.compile(
    r"^\s*(?:(?:\d+|\$|/(?:[^/\\]|\\.)*/)(?:\s*,\s*(?:\d+|\$|/(?:[^/\\]|\\.)*/))?)?\s*!?\s*"
)


def sed_scripts(args: Sequence[str]) -> list[str]:
    """The scripts a sed command line gives (`-e S`, `--expression=S`, or the first operand);
    none when the script is in a file (`-f`)."""
    scripts: list[str] = []
    explicit = False
    index = 0
    while index < len(args):
        word = args[index]
        if word in ("-e", "--expression") and index + 1 < len(args):
            scripts.append(args[index + 1])
            explicit = True
            index += 2
            continue
        if word.startswith("--expression="):
            scripts.append(word.partition("=")[2])
            explicit = True
        elif word.startswith("-e") and len(word) > 2 and not word.startswith("--"):
            scripts.append(word[2:])
            explicit = True
        elif word in ("-f", "--file", "-l", "--line-length"):
            explicit = explicit or word in ("-f", "--file")  # a script in a file: not here
            index += 1
        elif not word.startswith("-") and not explicit:
            scripts.append(word)
            break
        index += 1
    return scripts


def _sed(program: str, args: Sequence[str]) -> tuple[list[Embedded], list[str]]:
    """GNU sed's `e CMD` runs CMD, and `s/.../REPLACEMENT/e` runs what it substituted;
    `w FILE` and `s/.../.../w FILE` write the lines to FILE (judged as `tee FILE` would)."""
    scripts = sed_scripts(args)
    found: list[Embedded] = []
    problems: list[str] = []
    for script in scripts:
        for line in script.replace(";", "\n").splitlines():
            command = line[_SED_ADDRESS.match(line).end() :] if _SED_ADDRESS.match(line) else line
            if command.startswith("e") and (len(command) == 1 or command[1] in " \t"):
                text = command[1:].strip()
                if text:
                    found.append(Embedded(text, f"{program} e"))
                else:
                    problems.append(f"{program} runs the text it reads as commands (e)")
            elif command.startswith("s") and len(command) > 1:
                parts = _sed_substitution(command)
                if parts is not None and "e" in parts[1].partition("w")[0]:
                    found.append(Embedded(parts[0], f"{program} s///e"))
                if parts is not None and "w" in parts[1]:
                    written = parts[1].partition("w")[2].strip()
                    if written:
                        found.append(Embedded(f"tee -a {shlex.quote(written)}", f"{program} s///w"))
            elif command[:1] in ("w", "W") and command[1:2] in (" ", "\t"):
                written = command[1:].strip()
                if written and written not in ("/dev/stdout", "/dev/stderr"):
                    found.append(Embedded(f"tee -a {shlex.quote(written)}", f"{program} w"))
    return found, problems


def _sed_substitution(command: str) -> tuple[str, str] | None:
    """`s<d>pattern<d>replacement<d>flags` -> (replacement, flags)."""
    delimiter = command[1]
    pieces: list[str] = []
    current: list[str] = []
    index = 2
    while index < len(command) and len(pieces) < 2:
        char = command[index]
        if char == "\\" and index + 1 < len(command):
            current.append(command[index : index + 2])
            index += 2
            continue
        if char == delimiter:
            pieces.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    if len(pieces) < 2:
        return None
    return pieces[1], command[index:].strip()


def script_in_variable(assignment: str) -> Embedded | None:
    """NAME=value where a program will run the value as a command."""
    name, _, value = assignment.partition("=")
    if name in COMMAND_VARIABLES and value:
        return Embedded(value, f"{name}=")
    return None


def is_startup_file(path: str) -> bool:
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return name in _STARTUP_NAMES or path.startswith("/etc/profile")


def shell_script_index(args: Sequence[str]) -> int | None:
    """Where a shell's -c script sits among its arguments (`sh -lc SCRIPT`), if it has one.
    The index may be past the end: `sh -c` with nothing after it."""
    for position, text in enumerate(args):
        if text == "--":
            return None
        if text.startswith("-") and not text.startswith("--") and "c" in text[1:]:
            return position + 1
        if not text.startswith("-") and not text.startswith("+"):
            return None
    return None


def inline_code(program: str, args: Sequence[str]) -> tuple[str, str] | None:
    """An interpreter's inline code and the option that gave it (`python3 -c CODE`)."""
    options = INLINE_CODE_OPTIONS.get(program, ())
    for position, word in enumerate(args):
        if word in options:
            return (args[position + 1] if position + 1 < len(args) else ""), word
    return None


def _interpreter(program: str, args: Sequence[str], heredoc: str | None) -> list[Embedded]:
    found = inline_code(program, args)
    if found is not None:
        code, option = found
        return [Embedded(s, f"{program} {option}") for s in _shell_strings(program, code)]
    if heredoc is not None:  # python3 - <<EOF ... EOF, perl <<< '...': the code is stdin
        return [Embedded(s, f"{program} here-document") for s in _shell_strings(program, heredoc)]
    return []


def paths_in_code(program: str, args: Sequence[str]) -> list[str]:
    """String literals in an interpreter's inline code that look like file paths:
    `python3 -c 'open("/home/u/.ssh/id_rsa").read()'` reads that file."""
    found = inline_code(program, args)
    if found is None:
        return []
    code = found[0]
    literals = (_unquote(q) for q in _QUOTED_STRING.findall(code))
    return [s for s in literals if s.startswith(("/", "~", "./", ".")) and " " not in s]


def _shell_strings(program: str, code: str) -> list[str]:
    """Strings that inline interpreter code passes to a shell (os.system, exec, `...`)."""
    found: list[str] = []
    for call in _SHELL_CALL.finditer(code):
        if call.group(1):  # a list of arguments: join its string items
            items = [_QUOTED_STRING.findall(call.group(2)), _QUOTED_STRING.findall(call.group(3))]
            found.append(shlex.join(_unquote(item) for part in items for item in part))
        else:
            found.append(_unquote(call.group(2)))
    if program in ("perl", "ruby", "php"):
        found += _BACKTICKS.findall(code)
    return found


def _awk(program: str, args: Sequence[str]) -> list[Embedded]:
    """awk's program text: system("..."), print | "cmd", "cmd" | getline."""
    code = next((a for a in args if not a.startswith("-")), "")
    found = [Embedded(s, f"{program} system()") for s in _shell_strings(program, code)]
    for pipe in _AWK_PIPE.finditer(code):
        literal = pipe.group(1) or pipe.group(2)
        found.append(Embedded(_unquote(literal), f"{program} pipe"))
    return found


def git_runs(key: str, value: str) -> bool:
    """Whether git runs the value of setting `key` (lower case) as a shell command."""
    return (
        key in GIT_COMMAND_SETTINGS
        or key.startswith("pager.")
        or key.endswith(_GIT_COMMAND_SUFFIXES)
        or (key.startswith("alias.") and value.startswith("!"))
        or (key.endswith(".helper") and value.startswith("!"))
    )


def _git(args: Sequence[str]) -> tuple[list[Embedded], list[str]]:
    """`git -c core.pager=CMD log`, `git config alias.x '!CMD'`: git runs these values."""
    settings: list[tuple[str, str]] = []
    for position, word in enumerate(args[:-1]):
        if word == "-c" and "=" in args[position + 1]:
            key, _, value = args[position + 1].partition("=")
            settings.append((key, value))
    if "config" in args:
        # git config [options] KEY VALUE: the first two words after "config" that are not options.
        words = [w for w in args[list(args).index("config") + 1 :] if not w.startswith("-")]
        if len(words) >= 2:
            settings.append((words[0], words[1]))
    found: list[Embedded] = []
    problems: list[str] = []
    for key, value in settings:
        key = key.lower()
        if key == "core.hookspath":
            if value.startswith(("/", "~", "$")) or ".." in value:  # outside the repository
                problems.append(f"git runs hooks from {value[:80] or 'another directory'}")
            continue
        if git_runs(key, value) and value.strip("!"):
            command = value.removeprefix("!")
            if key.startswith("credential") and key.endswith(".helper") and value[:1] == "!":
                # git hands a helper the credentials on its standard input and reads its
                # answer back: what it does with them besides is what matters.
                # (a command that prints a credential stands for what git hands over:
                # `git credential fill` would be the agent reading the password store)
                command = "gh auth token | { " + command + "\n} >/dev/null"
            found.append(Embedded(command, f"git {key}"))
    return found, problems


def _sql_client(program: str, args: Sequence[str], heredoc: str | None) -> list[Embedded]:
    """`sqlite3 app.db '.shell CMD'`, `psql -c '\\! CMD'`, a here-document of such lines."""
    shell_line = _SQL_SHELLS[program]
    texts = [a for a in args if not a.startswith("-")]
    texts += [
        args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-c", "--command", "-cmd", "-e")
    ]
    if heredoc:
        texts.append(heredoc)
    found: list[Embedded] = []
    for text in texts[:16]:
        found += [Embedded(m, f"{program} shell command") for m in shell_line.findall(text)]
    return found


def _vim(program: str, args: Sequence[str]) -> list[Embedded]:
    """`vim -c ':!CMD'`, `vim '+!CMD'`, `vim -c 'call system("CMD")'`."""
    found: list[Embedded] = []
    commands = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-c", "--cmd")]
    commands += [a[1:] for a in args if a.startswith("+")]
    for command in commands:
        command = command.lstrip(": ")
        if command.startswith("!"):
            found.append(Embedded(command[1:], f"{program} :!"))
        found += [Embedded(s, f"{program} system()") for s in _shell_strings(program, command)]
    return found


def _ssh(args: Sequence[str]) -> list[Embedded]:
    """The command ssh runs on the remote host, and ProxyCommand/LocalCommand it runs here."""
    found: list[Embedded] = []
    position = 0
    host = ""
    while position < len(args):
        word = args[position]
        if word == "--":
            position += 1
            continue
        if word.startswith("-") and len(word) > 1 and not host:
            if word[1:2] == "o" and (len(word) > 2 or position + 1 < len(args)):
                option = word[2:] if len(word) > 2 else args[position + 1]
                key, _, value = option.partition("=" if "=" in option else " ")
                if key.lower() in ("proxycommand", "localcommand") and value:
                    found.append(Embedded(value, f"ssh {key}"))
            takes_value = word[-1] in _SSH_VALUE_OPTIONS and len(word) == 2
            position += 2 if takes_value else 1
            continue
        if not host:
            host = word
            position += 1
            continue
        remote = " ".join(args[position:])
        if remote.strip():
            found.append(Embedded(remote, f"ssh {host[:60]}"))
        break
    return found


def _after_options(args: Sequence[str], value_options: frozenset[str]) -> int:
    """Index of the first word after a program's own options."""
    position = 0
    while position < len(args):
        word = args[position]
        if word == "--":
            return position + 1
        if not word.startswith("-") or word == "-":
            return position
        position += 2 if word in value_options else 1
    return position


def _multiplexer(program: str, args: Sequence[str]) -> list[Embedded]:
    """tmux, screen and zellij run what they are given in a new shell or pane: `tmux new -d
    'CMD'`, `tmux send-keys -t s 'CMD' Enter` (typed into a shell), `screen -dmS s CMD ARGS`,
    `screen -X stuff 'CMD^M'`, `zellij run -- CMD ARGS`."""
    words = list(args)
    if program == "zellij":
        if "--" not in words:
            return []
        return [Embedded(shlex.join(words[words.index("--") + 1 :]), program)]
    if program == "screen":
        return _screen(words)
    return _tmux(words)


def _screen(words: list[str]) -> list[Embedded]:
    if "-X" in words and "stuff" in words[words.index("-X") :]:
        typed = words[words.index("stuff") + 1 :]
        return [Embedded(" ".join(typed).replace("^M", "\n"), "screen")] if typed else []
    start = 0
    while start < len(words) and words[start].startswith("-"):
        flag = words[start]  # `-dmS name`: a cluster whose last letter takes a value
        takes = flag in _SCREEN_VALUE_OPTIONS or f"-{flag[-1]}" in _SCREEN_VALUE_OPTIONS
        start += 2 if takes and not flag.startswith("--") else 1
    command = words[start:]
    return [Embedded(shlex.join(command), "screen")] if command else []


def _tmux(words: list[str]) -> list[Embedded]:
    found: list[Embedded] = []
    index = 0
    while index < len(words):  # global options, then commands split by `;`
        word = words[index]
        if word == "-c" and index + 1 < len(words):  # `tmux -c CMD`: run as by a shell
            found.append(Embedded(words[index + 1], "tmux"))
            index += 2
            continue
        if word.startswith("-"):
            index += 2 if word in ("-f", "-L", "-S", "-T") else 1
            continue
        end = index + 1
        while end < len(words) and words[end] not in (";", "\\;"):
            end += 1
        typing = word in _TMUX_TYPES
        given = _tmux_operands(
            words[index + 1 : end], _TMUX_TYPE_VALUES if typing else _TMUX_VALUES
        )
        if word in _TMUX_RUNS and given:
            found.append(Embedded(" ".join(given), "tmux"))
        elif typing and given:
            typed = "".join("\n" if key in _TMUX_KEYS else key + " " for key in given)
            found.append(Embedded(typed, "tmux"))
        index = end + 1
    return found


def _tmux_operands(own: list[str], value_options: frozenset[str]) -> list[str]:
    """A tmux command's words after its options (`-t s -c dir 'CMD'` gives `CMD`)."""
    at = 0
    while at < len(own) and own[at].startswith("-") and len(own[at]) > 1:
        at += 2 if own[at] in value_options else 1
    return own[at:]


def _watch(args: Sequence[str]) -> list[Embedded]:
    """watch runs its words joined as `sh -c`; with -x/--exec, as an argv."""
    start = _after_options(args, _WATCH_VALUE_OPTIONS)
    words = list(args[start:])
    if not words:
        return []
    own = args[:start]
    exec_mode = "--exec" in own or any(
        w.startswith("-") and not w.startswith("--") and "x" in w[1:] for w in own
    )
    return [Embedded(shlex.join(words) if exec_mode else " ".join(words), "watch")]


def _parallel(program: str, args: Sequence[str]) -> list[Embedded]:
    """GNU parallel runs COMMAND once per input (`:::` lists them), through a shell; with
    no COMMAND, each input is itself the command line."""
    start = _after_options(args, _PARALLEL_VALUE_OPTIONS)
    command: list[str] = []
    inputs: list[str] = []
    separator = False
    for word in args[start:]:
        if word in (":::", "::::", ":::+", "::::+"):
            separator = True
            continue
        (inputs if separator else command).append(word)
    line = " ".join(command)
    if not inputs:
        return [Embedded(line, program)] if line else []
    scripts = []
    for item in inputs[:32]:
        if not line:
            scripts.append(item)
        elif "{}" in line:
            scripts.append(line.replace("{}", shlex.quote(item)))
        else:
            scripts.append(f"{line} {shlex.quote(item)}")
    return [Embedded(script, program) for script in scripts]


def _fd(program: str, args: Sequence[str]) -> list[Embedded]:
    """`fd PATTERN [PATH...] -x CMD ARGS`: fd runs CMD (no shell) on each match below the
    paths; `{}` (or the end of CMD) is the match, written here as a glob below the path so
    the rules see which tree it acts on."""
    for position, word in enumerate(args):
        if word not in _FD_EXEC:
            continue
        rest = [w for w in args[position + 1 :] if w != ";"]
        if not rest:
            return []
        operands = [w for w in args[:position] if not w.startswith("-")]
        roots = operands[1:] or ["."]
        scripts = []
        for root in roots[:8]:
            match = root.rstrip("/") + "/*" if _SIMPLE_WORD.fullmatch(root) else "./*"
            words = [shlex.quote(w) for w in rest]
            placeholders = [w for w in rest if w.startswith("{") and w.endswith("}")]
            if placeholders:
                pairs = zip(rest, words, strict=True)
                words = [match if w in placeholders else q for w, q in pairs]
            else:
                words.append(match)
            scripts.append(Embedded(" ".join(words), f"{program} {word}"))
        return scripts
    return []


_SIMPLE_WORD = re2.compile(r"[A-Za-z0-9._~/+@%-]+")


def _windows_command(program: str, args: Sequence[str]) -> list[Embedded]:
    """`cmd /c LINE...`, `schtasks /create /tr LINE`: LINE's words, each kept whole."""
    options = _WINDOWS_COMMAND_OPTIONS[program]
    for position, word in enumerate(args):
        if word.lower() not in options:
            continue
        if not program.startswith("cmd") and position + 1 < len(args):
            # One value (`reg ... /d LINE`, `schtasks ... /tr LINE`), the command line exactly
            # as Windows will run it.
            return [Embedded(windows_command_line(args[position + 1]), f"{program} {word}")]
        rest = args[position + 1 :]
        if rest:
            return [Embedded(windows_command_line(" ".join(rest)), f"{program} {word}")]
    return []


# cmd's own separators: `a & b`, `a && b`, `a || b` run one after the other; `a | b` pipes.
_CMD_SEPARATOR = re2.compile(r'("[^"]*"?)|(&&|\|\||&|\|)')


_POWERSHELL_START = re2.compile(r"(?i)\s*\S*(?:powershell|pwsh)(?:\.exe)?[\s\x22]")


def windows_command_line(line: str) -> str:
    """A cmd.exe command line as the shell walk can read it: split at cmd's `&`, `&&`, `||`
    and `|` outside double quotes, each command's words kept whole (backslashes separate
    folders; single quotes are no quotes), PowerShell's `-Command` code as one argument."""
    parts: list[str] = []
    start = 0
    for match in _CMD_SEPARATOR.finditer(line):
        if match.group(2) is None:
            continue  # a quoted stretch: separators inside it are text
        if _POWERSHELL_START.match(line, start):
            # `powershell iwr URL|iex`: cmd would pipe into a program `iex`, but whoever
            # wrote it meant PowerShell's pipe; read the rest as PowerShell's code.
            break
        parts.append(line[start : match.start()])
        parts.append(" | " if match.group(2) == "|" else " ; ")
        start = match.end()
    parts.append(line[start:])
    out: list[str] = []
    for part in parts:
        if part in (" | ", " ; "):
            out.append(part)
            continue
        converted = _windows_line(part.strip())
        if converted != part.strip():
            out.append(converted)  # PowerShell with its code kept as one argument
            continue
        try:
            out.append(shlex.join(_windows_words(part)))
        except ValueError:
            out.append(part)
    return "".join(out).strip(" ;|")


def _windows_words(text: str) -> list[str]:
    """Windows splits a command line on spaces and quotes; `\\` separates folders there
    and escapes nothing (`%LOCALAPPDATA%\\Agent\\run.ps1` keeps its backslashes)."""
    lexer = shlex.shlex(text, posix=True)
    lexer.whitespace_split = True
    lexer.quotes = '"'  # a single quote is a character to Windows
    lexer.escape = ""
    lexer.commenters = ""
    return list(lexer)


def _windows_line(line: str) -> str:
    """A Windows command line as the shell walk can read it: PowerShell's code after
    `-Command` is one argument (Windows does not split it as a POSIX shell would)."""
    words = line.split()
    if not words or words[0].lower().rsplit("\\", 1)[-1].rsplit("/", 1)[-1].removesuffix(
        ".exe"
    ) not in ("powershell", "pwsh"):
        return line
    for index, word in enumerate(words[1:], start=1):
        if word.lower() in ("-c", "-command", "/c", "/command"):
            code = " ".join(words[index + 1 :]).strip().strip('"')
            return " ".join([*words[: index + 1], shlex.quote(code)])
    return line


def _option_values(program: str, args: Sequence[str]) -> list[Embedded]:
    """`su -c CMD`, `rsync -e CMD`, `tar --checkpoint-action=exec=CMD`, `gdb -ex 'shell CMD'`."""
    options = COMMAND_OPTIONS.get(program, ())
    found: list[Embedded] = []
    short = {o[1] for o in options if len(o) == 2}
    for position, word in enumerate(args):
        value: str | None = None
        cluster = word[:1] == "-" and word[1:2] != "-" and word[1:].isalpha() and word[-1] in short
        if (word in options or cluster) and position + 1 < len(args):
            value = args[position + 1]
        elif word.startswith("--") and word.split("=", 1)[0] in options and "=" in word:
            value = word.split("=", 1)[1]
        if value is None:
            continue
        value = value.removeprefix("exec=")  # tar --checkpoint-action=exec=CMD
        if program == "gdb":
            if not value.startswith(("shell ", "!")):
                continue
            value = value.removeprefix("shell ").removeprefix("!")
        if value.strip():
            found.append(Embedded(value, f"{program} {word.split('=', 1)[0]}"))
    return found


def _unquote(literal: str) -> str:
    body = literal[1:-1]
    if "\\" not in body:
        return body
    return body.replace("\\n", "\n").replace('\\"', '"').replace("\\'", "'").replace("\\\\", "\\")

"""Command lines inside files that other programs run: service units, desktop entries, cron
tables, launchd plists, package.json scripts, CI workflows, editor tasks, Makefiles.

A call that writes such a file is judged by what the file will run: a systemd unit whose
ExecStart pipes a download into a shell is remote code execution, whoever writes it.
Formats are read leniently (an edit may hold only a fragment of the file).
"""

from __future__ import annotations

import json
import shlex

import re2

from sidecar.shell.compose_files import compose_lines, is_compose_file
from sidecar.shell.embedded_code import git_runs, windows_command_line
from sidecar.shell.manifests import is_workload, manifest_lines

_MAX_LINES = 2000
_UNIT_EXEC = re2.compile(r"(?m)^\s*Exec[A-Za-z]*\s*=\s*[-@:+!]*(.+)$")
_DESKTOP_FIELD_CODES = re2.compile(r"%[fFuUdDnNickvm]")
_PLIST_ARGUMENTS = re2.compile(r"(?s)<key>\s*ProgramArguments\s*</key>\s*<array>(.*?)</array>")
_PLIST_PROGRAM = re2.compile(r"(?s)<key>\s*Program\s*</key>\s*<string>(.*?)</string>")
_PLIST_STRING = re2.compile(r"(?s)<string>(.*?)</string>")
_PACKAGE_SCRIPT = re2.compile(
    r'"((?:pre|post)?(?:install|uninstall|publish|pack|prepare|prepublish|prepublishOnly|test|'
    r'start|build|dev|lint|serve|version|shrinkwrap))"\s*:\s*"((?:[^"\\]|\\.)*)"'
)
_PKG_SET_SCRIPT = re2.compile(
    r"^((?:pre|post)?(?:install|uninstall|publish|pack|prepare|prepublish|prepublishOnly|test|"
    r"start|build|dev|lint|serve|version|shrinkwrap))=(.*)$"
)
_WORKFLOW_RUN = re2.compile(r"(?m)^(\s*)-?\s*run:\s*(.*)$")
_TASK_COMMAND = re2.compile(r'"command"\s*:\s*"((?:[^"\\]|\\.)*)"')
_CRON_LINE = re2.compile(
    r"^\s*(?:@(?:reboot|yearly|annually|monthly|weekly|daily|midnight|hourly)|"
    r"(?:\S+\s+){4}\S+)\s+(.+)$"
)
_MAKE_VARIABLE = re2.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
_GO_GENERATE = re2.compile(r"(?m)^//go:generate\s+(.+)$")
_USER_FIELD = re2.compile(r"^[a-z_][a-z0-9_-]*\s+(.+)$")


_MAX_AWK_CHARS = 16 * 1024


def commands_in(path: str, content: str, cron: bool = False) -> list[str]:
    """Command lines that the file at `path` makes some program run, or [] if none found."""
    name = path.rsplit("/", 1)[-1]
    if cron or _is_cron_path(path):
        return cron_commands(content, system=_is_system_cron(path))
    if name.endswith((".service", ".socket", ".timer", ".path", ".mount")):
        return [m for m in _UNIT_EXEC.findall(content)]
    if name.endswith(".desktop"):
        return [
            _DESKTOP_FIELD_CODES.sub("", line.split("=", 1)[1]).strip()
            for line in content.splitlines()
            if line.strip().startswith(("Exec=", "TryExec="))
        ]
    if name.endswith(".plist"):
        return plist_commands(content)
    if name.lower().endswith(".xml") and "<Task" in content:
        return task_commands(content)
    if name.lower().endswith(".reg"):
        return registry_run_commands(content)
    if name.endswith(".rules") and "udev/rules.d/" in path:
        return udev_commands(content)
    if name in (".pre-commit-config.yaml", ".pre-commit-config.yml"):
        return pre_commit_commands(content)
    if name in ("devcontainer.json", ".devcontainer.json"):
        return devcontainer_commands(content)
    if name.endswith(".awk"):
        # An awk program file runs as the same program given inline: `awk 'PROGRAM'`.
        return [f"awk {shlex.quote(content[:_MAX_AWK_CHARS])}"]
    if name == "package.json":
        found = [_json_unescape(m[1]) for m in _PACKAGE_SCRIPT.findall(content)]
        # `npm pkg set scripts.postinstall='...'` writes `scripts.NAME=VALUE` pairs.
        for pair in (" " + content).split(" scripts.")[1:]:
            match = _PKG_SET_SCRIPT.match(pair.strip())
            if match is not None:
                found.append(str(match.group(2)))
        return found
    if name in ("tasks.json", "launch.json", "settings.json") and "/.vscode/" in "/" + path:
        return [_json_unescape(m) for m in _TASK_COMMAND.findall(content)]
    if name.endswith((".yml", ".yaml")) and (
        "workflows/" in path or name in (".gitlab-ci.yml", "config.yml", "azure-pipelines.yml")
    ):
        return workflow_commands(content)
    if is_compose_file(name):
        return compose_lines(content)
    if name.endswith((".yml", ".yaml", ".json")) and is_workload(content):
        return manifest_lines(content)
    if is_agent_config(path):
        return agent_config_commands(content)
    if is_ssh_config(path):
        return ssh_config_commands(content)
    if is_git_config(path):
        return git_config_commands(content)
    if name == "tox.ini":
        return tox_commands(content)
    if name.endswith((".tf", ".tf.json")):
        return terraform_commands(content)
    if name.endswith(".go"):  # go generate runs these directives
        return [m.strip() for m in _GO_GENERATE.findall(content)]
    if name in ("Makefile", "makefile", "GNUmakefile") or name.endswith(".mk"):
        return make_commands(content)
    return []


# `include rules.mk`, `-include .build/*.mk`: make reads the file as more of the Makefile
# (its recipes run, its `$(shell ...)` runs at parse time), as a shell sources a script.
_MAKE_INCLUDE = re2.compile(r"^[-s]?include\s+(.+?)\s*$")


def make_commands(content: str) -> list[str]:
    found: list[str] = []
    for line in content.splitlines()[:_MAX_LINES]:
        if line.startswith("\t"):
            if line.strip():
                found.append(_make_variables(line.strip().lstrip("@-+").strip()))
            continue
        included = _MAKE_INCLUDE.match(line)
        if included is not None:
            found.extend(". " + _make_variables(f) for f in included.group(1).split()[:8])
    return found


# Terraform runs programs at plan and apply: `data "external"` runs its `program`, a
# `local-exec` provisioner its `command`.
_TF_COMMAND = re2.compile(r'(?m)^\s*command\s*=\s*"((?:[^"\\]|\\.)*)"')
_TF_PROGRAM = re2.compile(r"(?s)\bprogram\s*=\s*\[([^\]]*)\]")
_TF_STRING = re2.compile(r'"((?:[^"\\]|\\.)*)"')


def terraform_commands(content: str) -> list[str]:
    found = [_json_unescape(m) for m in _TF_COMMAND.findall(content[:_MAX_AGENT_CONFIG])]
    for block in _TF_PROGRAM.findall(content[:_MAX_AGENT_CONFIG]):
        argv = [_json_unescape(m) for m in _TF_STRING.findall(block)]
        if not argv:
            continue
        shell = argv[0].rsplit("/", 1)[-1] in ("sh", "bash", "zsh", "dash")
        found.append(
            argv[2] if shell and len(argv) > 2 and argv[1] in ("-c", "-lc") else shlex.join(argv)
        )
    return found


# Agent runtimes' own settings: hooks they run around tool calls (Claude Code) and the MCP
# servers they start (Cursor, VS Code, Claude Desktop, Gemini CLI, Windsurf, Cline, Roo).
_AGENT_CONFIG = re2.compile(
    r"(^|/)(\.claude/settings(\.local)?\.json|\.mcp\.json|\.(cursor|vscode|roo|kiro)/mcp\.json|"
    r"claude_desktop_config\.json|\.gemini/settings\.json|\.codeium/windsurf/mcp_config\.json|"
    r"cline_mcp_settings\.json|mcp_settings\.json)$"
)
_MAX_AGENT_CONFIG = 256 * 1024


def is_agent_config(path: str) -> bool:
    return _AGENT_CONFIG.search(path) is not None


def agent_config_commands(content: str) -> list[str]:
    """Command lines an agent runtime's settings make it run: hooks' `command` values, and
    each MCP server's `command` with its `args` (started with the editor or the agent)."""
    found = [_json_unescape(m) for m in _TASK_COMMAND.findall(content[:_MAX_AGENT_CONFIG])]
    try:
        settings = json.loads(content[:_MAX_AGENT_CONFIG])
    except ValueError:
        return found  # a fragment (an edit): its `command` values are what can be read
    servers = settings.get("mcpServers") if isinstance(settings, dict) else None
    if not isinstance(servers, dict):
        return found
    for server in list(servers.values())[:64]:
        if not isinstance(server, dict) or not isinstance(server.get("command"), str):
            continue
        args = server.get("args")
        words = (
            [server["command"]] + [a for a in args if isinstance(a, str)]
            if isinstance(args, list)
            else [server["command"]]
        )
        found = [f for f in found if f != server["command"]]
        found.append(shlex.join(words))
    return found


# Programs that read a file of command lines from standard input when told to (`make -f -`):
# the name the file would have, for `commands_in`.
_FED_FILES = {"make": "Makefile", "gmake": "Makefile"}


def fed_file_name(program: str) -> str:
    """The file name under which `program`'s standard input holds command lines, or ""."""
    return _FED_FILES.get(program, "")


def is_ssh_config(path: str) -> bool:
    """An ssh client configuration: ~/.ssh/config (and files it includes), ssh_config."""
    full = "/" + path.lstrip("/")
    name = full.rsplit("/", 1)[-1]
    if "/.ssh/" in full:
        return name == "config" or "/config.d/" in full or name.endswith(".conf")
    return full.startswith(("/etc/ssh/ssh_config", "/usr/etc/ssh/ssh_config"))


def holds_command_values(path: str) -> bool:
    """Configuration files some of whose values are command lines (not scripts)."""
    return is_ssh_config(path) or is_git_config(path)


def is_git_config(path: str) -> bool:
    full = "/" + path.lstrip("/")
    name = full.rsplit("/", 1)[-1]
    return (
        name == ".gitconfig"
        or full.endswith(("/.git/config", "/.config/git/config"))
        or full in ("/etc/gitconfig",)
    )


_GIT_SECTION = re2.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"([^"]*)")?\s*\]')
_GIT_VALUE = re2.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*=\s*(.*?)\s*$")


_GIT_HOOK_DIRECTORIES = frozenset({"core.hookspath", "init.templatedir"})


def git_config_commands(content: str) -> list[str]:
    """Values git runs as shell commands: aliases and helpers starting with `!`, pagers,
    editors, core.sshCommand, core.fsmonitor, filters, diff drivers, ..."""
    found: list[str] = []
    section = ""
    for line in content.splitlines()[:_MAX_LINES]:
        header = _GIT_SECTION.search(line)
        if header is not None:
            name, sub = header.group(1).lower(), header.group(2)
            section = f"{name}.{sub.lower()}" if sub else name
            continue
        value = _GIT_VALUE.search(line)
        if value is None or not section:
            continue
        key, text = f"{section}.{value.group(1).lower()}", value.group(2)
        if len(text) >= 2 and text[0] == text[-1] == '"':
            text = text[1:-1].replace('\\"', '"')
        if key in _GIT_HOOK_DIRECTORIES and text.strip():
            # hooksPath = /tmp/shared-hooks: git runs that folder's hooks on every command,
            # as `git config core.hooksPath` makes it.
            found.append(f"git config {key} {shlex.quote(text)}")
            continue
        if git_runs(key, text) and text.strip("!"):
            command = text.removeprefix("!")
            if key.startswith("credential") and key.endswith(".helper"):
                # git hands the helper the credentials on its standard input.
                # (a command that prints a credential stands for what git hands over:
                # `git credential fill` would be the agent reading the password store)
                command = "gh auth token | { " + command + "\n} >/dev/null"
            found.append(command)
    return found


# ssh runs these values with the user's shell: on connecting (ProxyCommand), after
# connecting (LocalCommand, with PermitLocalCommand), to list host keys (KnownHostsCommand),
# and to decide whether a Match block applies (`Match exec "..."`).
_SSH_COMMAND = re2.compile(
    r"(?i)^\s*(?:ProxyCommand|LocalCommand|KnownHostsCommand)\s*(?:=\s*|\s)\s*(.+?)\s*$"
)
_SSH_MATCH_EXEC = re2.compile(r'(?i)\bexec\s+(?:"([^"]*)"|(\S+))')
_SSH_TOKENS = (("%%", "%"), ("%h", "host.example"), ("%p", "22"), ("%r", "user"), ("%n", "host"))


# Forwardings a config sets up on every connection to its host, as `ssh -R/-L/-D` would.
_SSH_FORWARD = re2.compile(
    r"(?i)^\s*(RemoteForward|LocalForward|DynamicForward)\s*(?:=\s*|\s)\s*(.+?)\s*$"
)
_SSH_FORWARD_OPTION = {"remoteforward": "-R", "localforward": "-L", "dynamicforward": "-D"}


def ssh_config_commands(content: str) -> list[str]:
    found: list[str] = []
    forwards: list[str] = []
    for line in content.splitlines()[:_MAX_LINES]:
        command = _SSH_COMMAND.search(line)
        forward = _SSH_FORWARD.match(line)
        if forward is not None:
            # `RemoteForward 0.0.0.0:2222 localhost:22` is `-R 0.0.0.0:2222:localhost:22`
            spec = ":".join(forward.group(2).split()[:2])
            forwards.append(f"ssh -fN {_SSH_FORWARD_OPTION[forward.group(1).lower()]} {spec} host")
        if command is not None:
            found.append(command.group(1))
        elif line.strip().lower().startswith("match"):
            found.extend(quoted or bare for quoted, bare in _SSH_MATCH_EXEC.findall(line))
    result: list[str] = []
    for text in found:
        if text.lower() == "none":
            continue
        for token, value in _SSH_TOKENS:
            text = text.replace(token, value)
        result.append(text)
    return result + forwards


def _make_variables(line: str) -> str:
    """A recipe line as the shell gets it: make expands `$(HOME)` / `${HOME}` from the
    environment and turns `$$` into `$`."""
    line = _MAKE_VARIABLE.sub(r"${\1}", line.replace("$$", "\0"))
    return line.replace("\0", "$")


def tox_commands(content: str) -> list[str]:
    """`commands =` (and commands_pre/_post) of tox environments, with continuation lines."""
    found: list[str] = []
    inside = False
    for line in content.splitlines()[:_MAX_LINES]:
        if inside and line[:1] in (" ", "\t") and line.strip():
            found.append(line.strip())
            continue
        inside = False
        key, equals, value = line.partition("=")
        if equals and key.strip() in ("commands", "commands_pre", "commands_post"):
            inside = True
            if value.strip():
                found.append(value.strip())
    return found


def cron_commands(content: str, system: bool = False) -> list[str]:
    found: list[str] = []
    for line in content.splitlines()[:_MAX_LINES]:
        text = line.strip()
        if not text or text.startswith("#") or "=" in text.split(None, 1)[0]:
            continue  # comments and VAR=value lines
        match = _CRON_LINE.search(text)
        if match is None:
            continue
        command = match.group(1)
        if system:  # /etc/crontab and cron.d name the user first
            user = _USER_FIELD.search(command)
            if user is not None:
                command = user.group(1)
        found.append(command)
    return found


_TASK_EXEC = re2.compile(
    r"(?s)<Exec>\s*<Command>([^<]*)</Command>(?:\s*<Arguments>([^<]*)</Arguments>)?"
)


def task_commands(content: str) -> list[str]:
    """A Windows scheduled task's XML (`schtasks /create /xml`): each action's command line."""
    found: list[str] = []
    for command, arguments in _TASK_EXEC.findall(content[:_MAX_TASK_CHARS]):
        line = f"{_xml_unescape(command.strip())} {_xml_unescape(arguments.strip())}".strip()
        if line:
            found.append(windows_command_line(line))
    return found


# A .reg file's value under a Run key: `"Name"="command line"` (`\\` and `\"` escaped).
_REG_KEY = re2.compile(r"^\[([^\]]*)\]\s*$")
_REG_STRING = re2.compile(r'^"[^"]*"\s*=\s*"((?:[^"\\]|\\.)*)"')
_RUN_KEY = re2.compile(r"(?i)\\(Run|RunOnce|RunServices|RunServicesOnce)$|\\Winlogon$")
_MAX_TASK_CHARS = 256 * 1024


def registry_run_commands(content: str) -> list[str]:
    """What a .reg file (`reg import`) makes Windows start at logon: its Run keys' values."""
    found: list[str] = []
    key = ""
    for line in content[:_MAX_TASK_CHARS].splitlines():
        line = line.strip()
        header = _REG_KEY.match(line)
        if header:
            key = header.group(1)
            continue
        value = _REG_STRING.match(line)
        if value and _RUN_KEY.search(key):
            text = value.group(1).replace('\\"', '"').replace("\\\\", "\\")
            found.append(windows_command_line(text))
    return found


def plist_commands(content: str) -> list[str]:
    found: list[str] = []
    for block in _PLIST_ARGUMENTS.findall(content):
        argv = [_xml_unescape(s) for s in _PLIST_STRING.findall(block)]
        if argv:
            found.append(shlex.join(argv))
    for program in _PLIST_PROGRAM.findall(content):
        found.append(shlex.quote(_xml_unescape(program.strip())))
    return found


# `${{ toJSON(secrets) }}`: the runner puts every secret of the repository there; as a variable
# with a secret's name the line's data flow sees it as one. A named secret becomes the shell
# variable of that name, judged as in a shell line: `${{ secrets.NPM_TOKEN }}` sent to a
# collector is a vendor's token sent away; into `docker login --password-stdin` it is used.
_CI_SECRET = re2.compile(r"(?i)\$\{\{\s*(?:tojson\s*\(\s*secrets\s*\)|secrets)\s*\}\}")
_CI_NAMED_SECRET = re2.compile(r"(?i)\$\{\{\s*secrets\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


_CI_ENV_ENTRY = re2.compile(r"(?m)^\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*[\x22']?(\$\{\{[^}\n]*\}\})")


def workflow_commands(content: str) -> list[str]:
    """`run: cmd` and `run: |` blocks of a CI workflow (all CI secrets as `${ALL_CI_SECRETS}`,
    a named one as the variable of its name). An `env:` entry set from secrets
    (`ALL: ${{ toJSON(secrets) }}`) makes its variable those secrets in every run."""
    carried: dict[str, str] = {}
    for name, expression in _CI_ENV_ENTRY.findall(content[:_MAX_AGENT_CONFIG]):
        secret = _secrets_in(expression)
        if secret != expression:
            carried[name] = secret
    found = []
    for line in _workflow_runs(content):
        line = _secrets_in(line)
        for name, secret in carried.items():
            line = line.replace("${" + name + "}", secret).replace("$" + name, secret)
        found.append(line)
    return found


def _secrets_in(text: str) -> str:
    return str(_CI_NAMED_SECRET.sub(r"${\1}", _CI_SECRET.sub("${ALL_CI_SECRETS}", text)))


def _workflow_runs(content: str) -> list[str]:
    lines = content.splitlines()[:_MAX_LINES]
    found: list[str] = []
    index = 0
    while index < len(lines):
        match = _WORKFLOW_RUN.search(lines[index])
        index += 1
        if match is None:
            continue
        value = match.group(2).strip()
        if value in ("|", ">", "|-", ">-", "|+", ">+"):
            indent = len(match.group(1)) + 1
            block: list[str] = []
            while index < len(lines) and (
                not lines[index].strip() or len(lines[index]) - len(lines[index].lstrip()) > indent
            ):
                block.append(lines[index].strip())
                index += 1
            found.append("\n".join(block))
        elif value:
            found.append(value.strip("'\""))
    return found


# RUN+="..." and PROGRAM="..." of a udev rule run as root when a device event matches
# (`udevadm trigger` replays them all).
_UDEV_PROGRAM = re2.compile(r'\b(?:RUN|PROGRAM|IMPORT\{program\})\s*\+?=\s*"((?:[^"\\]|\\.)*)"')
_UDEV_BUILTIN = re2.compile(r"^(?:builtin|kernel|socket):")


def udev_commands(content: str) -> list[str]:
    found = []
    for command in _UDEV_PROGRAM.findall(content[:_MAX_AGENT_CONFIG]):
        command = _UDEV_BUILTIN.sub("", command.replace('\\"', '"')).strip()
        if command:
            found.append(command.replace("%k", "dev").replace("$kernel", "dev"))
    return found


# A pre-commit config: each `repo:` is fetched and its hooks run on every commit (what
# `pre-commit try-repo URL` does); a hook's `entry:` is the command it runs.
_PRE_COMMIT_REPO = re2.compile(r"(?m)^\s*-?\s*repo:\s*[\x22']?(\S+?)[\x22']?\s*(?:#.*)?$")
_PRE_COMMIT_ENTRY = re2.compile(r"(?m)^\s*-?\s*entry:\s*(.+?)\s*$")


def pre_commit_commands(content: str) -> list[str]:
    text = content[:_MAX_AGENT_CONFIG]
    found = [
        f"pre-commit try-repo {shlex.quote(repo)}"
        for repo in _PRE_COMMIT_REPO.findall(text)
        if repo not in ("local", "meta")
    ]
    found += [_yaml_unquoted(entry) for entry in _PRE_COMMIT_ENTRY.findall(text)]
    return found


def _yaml_unquoted(value: str) -> str:
    """A YAML scalar without the quotes around the whole of it (`'a b'` -> a b); quotes
    inside it (`sh -c 'x | sh'`) are the command's own."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\x22'":
        return value[1:-1]
    return value


# Lifecycle commands a dev container runs (initializeCommand on the host itself): a string
# is a shell line, an array an argv, an object several named commands.
_DEVCONTAINER_HOOKS = (
    "initializeCommand", "onCreateCommand", "updateContentCommand", "postCreateCommand",
    "postStartCommand", "postAttachCommand",
)  # fmt: skip


def devcontainer_commands(content: str) -> list[str]:
    try:
        document = json.loads(_without_json_comments(content[:_MAX_AGENT_CONFIG]))
    except (ValueError, RecursionError):  # nested past Python's limit: read by lines below
        return [_json_unescape(m) for m in _DEVCONTAINER_LINE.findall(content[:_MAX_AGENT_CONFIG])]
    if not isinstance(document, dict):
        return []
    found: list[str] = []
    for hook in _DEVCONTAINER_HOOKS:
        value = document.get(hook)
        for item in value.values() if isinstance(value, dict) else [value]:
            if isinstance(item, str):
                found.append(item)
            elif isinstance(item, list) and all(isinstance(v, str) for v in item):
                found.append(shlex.join(item))
    return found


_DEVCONTAINER_LINE = re2.compile(
    r'"(?:initialize|onCreate|updateContent|postCreate|postStart|postAttach)Command"\s*:\s*"((?:[^"\\]|\\.)*)"'
)
_JSON_LINE_COMMENT = re2.compile(r"(?m)^\s*//[^\n]*$")


def _without_json_comments(text: str) -> str:
    """devcontainer.json is JSONC: whole-line comments are dropped (inline ones stay)."""
    return str(_JSON_LINE_COMMENT.sub("", text))


def _is_cron_path(path: str) -> bool:
    return path.startswith(("/etc/cron", "/var/spool/cron", "/etc/anacrontab")) or path in (
        "/etc/crontab",
    )


def _is_system_cron(path: str) -> bool:
    return path == "/etc/crontab" or path.startswith("/etc/cron.d/")


def _json_unescape(text: str) -> str:
    try:
        value = json.loads(f'"{text}"')
    except ValueError:
        return text
    return value if isinstance(value, str) else text


def _xml_unescape(text: str) -> str:
    for escaped, plain in (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&apos;", "'")):
        text = text.replace(escaped, plain)
    return text.replace("&amp;", "&")

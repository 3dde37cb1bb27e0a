"""Tool adapters: what a runtime's tool call is, whatever the runtime names it.

`Bash{command}`, `run_terminal_cmd{command}`, `shell{command: [argv...]}`,
`Write{file_path, content}`, `apply_patch{input}`, `mcp__filesystem__write_file{path,
content}`... each becomes one form: a shell line, file writes, reads, deletions, a fetch, or
code in a language. Profiles are policy data (`tool_adapters:`); tools no profile names are
read by their arguments (a `command` string is a shell line, a `path` with `content` is a
write, a `url` is a fetch), so no tool name ever skips analysis.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import re2

from sidecar.effects.command_templates import render_template
from sidecar.effects.hosts import URL
from sidecar.effects.service_tools import (
    aws_call_line,
    aws_line,
    is_aws_server,
    is_kubernetes_server,
    kubernetes_line,
    program_of_server,
    scheduled_line,
    vault_line,
    wrapped_cli_line,
)
from sidecar.json_depth import deeper_than
from sidecar.matching.globs import glob_to_re2
from sidecar.policy.schema import ToolAdapter

_MAX_REMEMBERED = 4096
_URL_IN_TEXT = re2.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")
# Keys that hold these things in tools no profile names (lower-case).
_FALLBACK_COMMAND = ("command", "cmd", "commandline", "cmdline", "shell_command", "script", "argv")
_PROGRAM_KEYS = ("program", "executable", "binary", "bin", "exe")
_NESTED_KEYS = ("params", "parameters", "options", "input", "arguments", "payload", "request")
# `spawn{command: "python3", args: [...]}`: a program and its arguments, apart.
_FALLBACK_ARGUMENTS = ("args", "arguments", "argv")
_FALLBACK_PATH = (
    "file_path", "path", "filepath", "filename", "file", "target_file", "absolute_path",
    "absolutepath", "notebook_path", "dir_path", "directory", "destination", "target",
    "source", "src", "artifact", "local_path", "attachment", "paths", "file_paths",
    "folder_path", "folder", "local_dir", "local_folder", "local_file",
)  # fmt: skip
_FALLBACK_CONTENT = ("content", "contents", "file_text", "text", "code_edit", "data", "body")
_FALLBACK_URL = ("url", "uri", "urls", "endpoint", "href", "link")
_SQL_START = re2.compile(
    r"(?i)^\s*(?:--[^\n]*\n\s*)*(?:select|insert|update|delete|drop|truncate|alter|create|with|"
    r"grant|revoke|merge|replace|call|exec|set|show|describe|explain|begin|commit|vacuum|copy|"
    r"rename|comment|analyze|upsert)\b"
)
_UPLOAD_KEY = re2.compile(r"(?i)(file|path|attach|upload)")
_SAVE_KEY = re2.compile(r"(?i)(output|^out|save|dest|download)")  # where a response goes
_SENDING_TOOL = re2.compile(
    r"(?i)(post|put|upload|send|share|publish|submit|attach|paste|webhook|deploy|release|ship)"
)
_UPLOADING_TOOL = re2.compile(r"(?i)(upload|attach|send_?file|share_?file)")
_HOST_UNSAFE = re2.compile(r"[^A-Za-z0-9-]+")
_RECEIVING_TOOL = re2.compile(r"(?i)(download|fetch|get|save|clone|pull|read)")
_PATH_LIKE = re2.compile(r"^(~|\.{1,2})?/?[^\s/]*[/.][^\s]*$|^~$")
_CWD_KEYS = ("workdir", "working_directory", "workingDirectory", "cwd", "dir_path")


class FileChange(NamedTuple):
    action: str  # "write", "edit", "read", "delete", "move"
    path: str
    content: str = ""
    destination: str = ""  # move
    removed: str = ""  # edit: the text it replaces (old_string, a patch's - lines)


class CallForm(NamedTuple):
    """What a tool call is, for the effect model."""

    kind: str  # shell | files | fetch | code | unknown
    shell: str | None = None  # the command line (argv lists joined with shlex)
    files: tuple[FileChange, ...] = ()
    urls: tuple[str, ...] = ()
    method: str = "GET"
    body: str = ""
    uploads: tuple[str, ...] = ()  # fetch: local files the request sends (body_file, attachments)
    language: str = ""
    code: str = ""
    adapter: str = ""  # which profile (or "fallback")
    cwd: str = ""  # the working directory the call names (workdir, cwd, dir_path, ...)
    saves_to: tuple[str, ...] = ()  # fetch: local files the response is written to


_UNKNOWN = CallForm("unknown")
_PYTHON_NAMES = frozenset({"python", "python3", "py", "ipython"})
# The text an edit replaces, by the runtimes' names for it (MultiEdit's edits hold it too).
_REPLACED = ("old_string", "old_str", "oldString", "old_text", "search", "find", "edits")
# Arguments of database tools that say where a statement runs.
_PLACE_KEYS = frozenset({
    "project_id", "project", "project_ref", "database", "db", "dbname", "database_name",
    "connection", "connection_string", "connection_name", "dsn", "url", "host", "server",
    "instance", "cluster", "env", "environment", "target", "profile", "account",
})  # fmt: skip


class ToolAdapters:
    def __init__(self, adapters: Sequence[ToolAdapter]) -> None:
        self._adapters = tuple(adapters)
        self._globs = [
            re2.compile("(?i)^(?:" + "|".join(glob_to_re2(t) for t in a.tools) + ")$")
            for a in self._adapters
        ]
        self._by_name: dict[str, ToolAdapter | None] = {}

    def adapter_for(self, name: str) -> ToolAdapter | None:
        """The profile for a tool name; MCP-prefixed names also match by their tool part."""
        found = self._by_name.get(name, False)
        if found is not False:
            return found  # type: ignore[return-value]
        adapter = self._lookup(name)
        if adapter is None:
            for bare in bare_names(name):
                adapter = self._lookup(bare)
                if adapter is not None:
                    break
        if len(self._by_name) >= _MAX_REMEMBERED:
            self._by_name.clear()
        self._by_name[name] = adapter
        return adapter

    def _lookup(self, name: str) -> ToolAdapter | None:
        for adapter, glob in zip(self._adapters, self._globs, strict=True):
            if glob.search(name):
                return adapter
        return None

    def form(self, name: str, arguments: Mapping[str, Any], depth: int = 0) -> CallForm:
        action = arguments.get("action")
        if isinstance(action, dict) and "command" in action and "command" not in arguments:
            # Codex's local_shell: {"action": {"type": "exec", "command": [...]}}.
            arguments = {**{k: v for k, v in arguments.items() if k != "action"}, **action}
        form = self._form(name, arguments, depth)
        cwd = named_cwd(arguments)
        return form._replace(cwd=cwd) if cwd else form

    def _form(self, name: str, arguments: Mapping[str, Any], depth: int = 0) -> CallForm:
        adapter = self.adapter_for(name)
        service = _service_form(name, adapter, arguments)
        if service is not None:
            return service
        if adapter is None:
            return _fallback(arguments, name)
        kind = adapter.kind
        if kind == "dispatch":
            sub = str(arguments.get(adapter.dispatch_key, "")).lower()
            chosen = adapter.dispatch.get(sub)
            if chosen is None:
                return _fallback(arguments, name)
            kind = chosen
        if kind == "mcp_wrapper" and depth < 2:
            return self._unwrapped(adapter, arguments, depth)
        if kind == "shell" and _first(arguments, adapter.command) is None:
            # `mcp__prod-postgres__execute{sql}`: a generic verb whose arguments say it is a
            # database statement, not a command line.
            database = self.adapter_for("sql")
            statement = _first(arguments, database.sql) if database is not None else None
            if database is not None and isinstance(statement, str) and _SQL_START.match(statement):
                return _read_form("sql", database, arguments, _server_of(name))
        return _read_form(kind, adapter, arguments, _server_of(name))

    def _unwrapped(
        self, adapter: ToolAdapter, arguments: Mapping[str, Any], depth: int
    ) -> CallForm:
        """`use_mcp_tool{server_name, tool_name, arguments}`: judge the tool it wraps."""
        tool = str(arguments.get(adapter.tool_key, ""))
        server = str(arguments.get(adapter.server_key, ""))
        inner = arguments.get(adapter.arguments_key, {})
        if isinstance(inner, str):
            try:
                # Deeper text is not a tool's arguments, and would recurse past the limit.
                inner = {} if deeper_than(inner) else json.loads(inner)
            except (ValueError, RecursionError):
                inner = {}
        if not isinstance(inner, dict):
            inner = {}
        return self.form(f"mcp__{server}__{tool}", inner, depth + 1)


def _service_form(
    name: str, adapter: ToolAdapter | None, arguments: Mapping[str, Any]
) -> CallForm | None:
    """A service's structured tool as the CLI line it amounts to (service_tools.py). A
    profile's own template is used when it can be filled; a profile other than a shell or a
    template (a file tool, a fetch) keeps the call."""
    if adapter is not None and adapter.kind not in ("shell", "template"):
        return None
    if adapter is not None and adapter.kind == "template":
        line = render_template(adapter.template, arguments)
        if line is not None:
            return CallForm("shell", shell=line, adapter=adapter.name)
    server = _server_of(name)
    tool = name.rsplit("__", 1)[-1] if server else name
    line = None
    if is_kubernetes_server(server, tool):
        line = kubernetes_line(tool, arguments)
    if line is None and is_aws_server(server) and "service" in arguments:
        line = aws_call_line(arguments)  # call_aws{service, operation, params}
    if line is None and adapter is None and is_aws_server(server):
        line = aws_line(tool, arguments)
    if line is None and adapter is None and program_of_server(server) == "vault":
        line = vault_line(tool, arguments)
    if line is None and adapter is None:
        line = scheduled_line(tool, server, arguments)
    if line is None:
        line = wrapped_cli_line(tool, server, arguments)
    return None if line is None else CallForm("shell", shell=line, adapter="service tool")


# `database_url`, `dbHost`, `connectionUri`: any spelling of where a statement runs.
_PLACE_KEY = re2.compile(r"(?i)(url|uri|dsn|host|database|connection|conn_?str|server|cluster)")


def _names_place(key: str) -> bool:
    return key.lower() in _PLACE_KEYS or _PLACE_KEY.search(key) is not None


def _server_of(name: str) -> str:
    """The MCP server a tool name carries (`mcp__prod-db__query` -> prod-db), or ""."""
    parts = name.split("__")
    return parts[1][:200] if len(parts) >= 3 and parts[0].lower() == "mcp" else ""


def bare_names(name: str) -> list[str]:
    """`mcp__github__create_issue` -> create_issue; `mcp_fs_write_file` -> write_file;
    `developer__shell` -> shell; `github.get_issue`, `github/get_issue` -> get_issue."""
    names: list[str] = []
    if "__" in name:
        names.append(name.rsplit("__", 1)[1])
    elif "." in name or "/" in name:
        names.append(name.replace("/", ".").rsplit(".", 1)[1])
    if name.lower().startswith("mcp_") and "__" not in name:
        parts = name.split("_")
        for cut in range(2, len(parts)):
            names.append("_".join(parts[cut:]))
    return [n for n in names if n]


def _first(arguments: Mapping[str, Any], keys: Iterable[str]) -> Any:
    """The value of the first of `keys` present; runtimes spell keys as they like
    (`CommandLine`, `command_line`, `command-line`), so case, `_` and `-` do not count."""
    for key in keys:
        if key in arguments:
            return arguments[key]
    spelled = {_key_spelling(k): v for k, v in arguments.items()}
    for key in keys:
        found = spelled.get(_key_spelling(key))
        if found is not None:
            return found
    return None


def _key_spelling(key: object) -> str:
    return str(key).lower().replace("_", "").replace("-", "")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _read_form(
    kind: str, adapter: ToolAdapter, arguments: Mapping[str, Any], server: str = ""
) -> CallForm:
    name = adapter.name or kind
    if kind == "shell":
        return _shell_form(arguments, adapter.command, adapter.commands, name)
    if kind in ("write", "edit", "read", "delete", "move"):
        return _file_form(kind, adapter, arguments, name)
    if kind == "patch":
        patch = _first(arguments, adapter.patch)
        if isinstance(patch, list):
            patch = next((p for p in patch if isinstance(p, str) and "***" in p), "")
        return CallForm("files", files=tuple(patch_changes(_text(patch))), adapter=name)
    if kind == "fetch":
        return _fetch_form(arguments, adapter.url, name)
    if kind == "code":
        code = _text(_first(arguments, adapter.code))
        # `run_code{language: "javascript", code}`: the language the call names wins over the
        # profile's default (a notebook kernel's Python keeps its shell escapes).
        given = _text(_first(arguments, (adapter.language_key, "lang"))).lower().strip()
        if given in _PYTHON_NAMES and adapter.language == "ipython":
            given = ""
        language = given or adapter.language
        return CallForm("code", language=language.lower(), code=code, adapter=name)
    if kind == "sql":
        # A database tool is a database client: the catalogue's model of one judges the
        # statement (DROP, TRUNCATE, DELETE without WHERE; read-only SELECTs).
        statement = _first(arguments, adapter.sql)
        if isinstance(statement, list) and all(isinstance(s, str) for s in statement):
            statement = ";\n".join(statement)
        if not isinstance(statement, str):
            return CallForm("shell", shell=None, adapter=name)  # cannot tell
        line = _argv_line([adapter.sql_client, "-c", statement])
        # Where the statement runs (a project, database or host argument): the client's text
        # flags see it as they see `-h db.prod.internal`, so production is named here too.
        places = [
            v for k, v in arguments.items()
            if _names_place(str(k)) and isinstance(v, str) and 0 < len(v) <= 200
        ]  # fmt: skip
        if server:  # `mcp__prod-postgres__query`: the server is configured for one database
            places.append(server)
        if places:
            line = f"SQL_PLACE={shlex.quote(' '.join(places))} {line}"
        return CallForm("shell", shell=line, adapter=name)
    if kind == "template":
        # A CLI in disguise: judged as the line it amounts to; a missing argument the line
        # needs leaves it unknown (the caller asks).
        return CallForm("shell", shell=render_template(adapter.template, arguments), adapter=name)
    if kind == "none":
        return CallForm("none", adapter=name)
    return _fallback(arguments)


def _shell_form(
    arguments: Mapping[str, Any],
    command_keys: Sequence[str],
    list_keys: Sequence[str],
    name: str,
    depth: int = 0,
) -> CallForm:
    value = _first(arguments, command_keys)
    if value is None:
        program = _first(arguments, _PROGRAM_KEYS)
        if isinstance(program, str) and program.strip():
            # run{program: "bash", args: ["-c", ...]}: a program and its arguments, apart.
            value = program
    if value is None and depth == 0:
        for key in _NESTED_KEYS:
            inner = arguments.get(key)
            if isinstance(inner, Mapping):  # exec{params: {cmd: ...}}
                return _shell_form(inner, command_keys, list_keys, name, depth + 1)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return CallForm("shell", shell=_argv_line(value), adapter=name)
    if isinstance(value, str):
        extra = _first(arguments, _FALLBACK_ARGUMENTS)
        if isinstance(extra, list) and extra and all(isinstance(v, str) for v in extra):
            value = " ".join([value, shlex.join(extra)])  # run_command{command: "rm", args}
        return CallForm("shell", shell=value, adapter=name)
    commands = _first(arguments, list_keys)
    if isinstance(commands, list):
        lines: list[str] = []
        for item in commands:
            if isinstance(item, str):
                lines.append(item)
            elif isinstance(item, dict):
                argv = [item.get("command", ""), *(item.get("args", []) or [])]
                if all(isinstance(a, str) for a in argv):
                    lines.append(_argv_line(argv))
        return CallForm("shell", shell="\n".join(lines), adapter=name)
    # A shell tool whose command is missing or not text: cannot tell, so the line is empty
    # and marked unknown by the caller.
    return CallForm("shell", shell=None, adapter=name)


def _argv_line(argv: Sequence[str]) -> str:
    """An argv list as one shell line; `["bash", "-lc", SCRIPT]` stays readable."""
    return shlex.join(argv)


def _file_form(
    kind: str, adapter: ToolAdapter, arguments: Mapping[str, Any], name: str
) -> CallForm:
    # `fs.write{target, data}`: a file tool that spells its path unusually is read by the
    # names any tool's path goes by, so the spelling never hides the file.
    paths = _paths(arguments, adapter.path) or _paths(arguments, _FALLBACK_PATH)
    if kind == "read":
        return CallForm("files", files=tuple(FileChange("read", p) for p in paths), adapter=name)
    if kind == "delete":
        return CallForm("files", files=tuple(FileChange("delete", p) for p in paths), adapter=name)
    if kind == "move":
        destination = _text(_first(arguments, adapter.destination))
        return CallForm(
            "files",
            files=tuple(FileChange("move", p, destination=destination) for p in paths),
            adapter=name,
        )
    listed = _first(arguments, adapter.path)
    if isinstance(listed, list) and any(isinstance(item, dict) for item in listed):
        # files: [{path, content}, ...] (push_files): each file with its own content.
        return CallForm(
            "files",
            files=tuple(
                FileChange(kind, path, _content(item, adapter.content))
                for item in listed
                if isinstance(item, dict)
                for path in _paths(item, adapter.path)
            ),
            adapter=name,
        )
    content = _content(arguments, adapter.content) or _content(arguments, _FALLBACK_CONTENT)
    if not content and kind == "write":
        content = _unnamed_content(arguments, adapter)
    removed = _content(arguments, _REPLACED) if kind == "edit" else ""
    return CallForm(
        "files",
        files=tuple(FileChange(kind, p, content, removed=removed) for p in paths),
        adapter=name,
    )


def _paths(arguments: Mapping[str, Any], keys: Sequence[str]) -> list[str]:
    value = _first(arguments, keys)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        found: list[str] = []
        for item in value:
            if isinstance(item, str):
                found.append(item)
            elif isinstance(item, dict):
                inner = _first(item, keys)
                if isinstance(inner, str):
                    found.append(inner)
        return found
    return []


def _unnamed_content(arguments: Mapping[str, Any], adapter: ToolAdapter) -> str:
    """A write tool whose content key we do not know (`save_file{filename, data}`): what it
    writes is its other text, so no key name lets content skip analysis."""
    skipped = {*adapter.path, *adapter.destination, *_CWD_KEYS, *_FALLBACK_PATH}
    texts = [
        value for key, value in arguments.items()
        if isinstance(value, str) and key not in skipped and value.strip()
    ]  # fmt: skip
    return max(texts, key=len) if texts else ""


def _content(arguments: Mapping[str, Any], keys: Sequence[str]) -> str:
    """The text a write or edit puts in the file (edits: every replacement text)."""
    value = _first(arguments, keys)
    if isinstance(value, str):
        return replacement_text(value)
    if isinstance(value, list):  # MultiEdit edits, or several contents
        parts: list[str] = []
        for item in value:
            if isinstance(item, str):
                parts.append(item)
            elif isinstance(item, dict):
                inner = _first(item, keys)
                if isinstance(inner, str):
                    parts.append(inner)
        return "\n".join(parts)
    return ""


def replacement_text(text: str) -> str:
    """Cline's SEARCH/REPLACE blocks: only the replacing lines go into the file."""
    if "+++++++ REPLACE" not in text and ">>>>>>> REPLACE" not in text:
        return text
    kept: list[str] = []
    keeping = False
    for line in text.splitlines():
        marker = line.strip()
        if marker == "=======":
            keeping = True
        elif marker.endswith("REPLACE") and marker[:1] in "+>":
            keeping = False
        elif keeping:
            kept.append(line)
    return "\n".join(kept)


def patch_changes(patch: str) -> list[FileChange]:
    """Codex's patch format: `*** Add File: p`, `*** Update File: p` (+ lines added),
    `*** Delete File: p`, `*** Move to: q`; also a unified diff's `+++ b/p`."""
    changes: list[FileChange] = []
    current: list[str] | None = None
    path = ""
    action = ""
    destination = ""

    gone: list[str] = []

    def close() -> None:
        if action:
            content = "\n".join(current or [])
            changes.append(FileChange(action, path, content, destination, "\n".join(gone)))

    for line in patch.splitlines():
        for marker, kind in (
            ("*** Add File: ", "write"),
            ("*** Update File: ", "edit"),
            ("*** Delete File: ", "delete"),
            ("+++ b/", "edit"),
            ("+++ ", "edit"),
        ):
            if line.startswith(marker):
                close()
                action, path, destination, current = kind, line[len(marker) :].strip(), "", []
                gone = []
                break
        else:
            if line.startswith("*** Move to: ") and action:
                destination = line[len("*** Move to: ") :].strip()
                changes.append(FileChange("move", path, destination=destination))
                path = destination  # the update's lines land in the moved file
            elif current is not None and line.startswith("+") and not line.startswith("+++"):
                current.append(line[1:])
            elif current is not None and line.startswith("-") and not line.startswith("---"):
                gone.append(line[1:])
    close()
    return [c for c in changes if c.path and c.path != "/dev/null"]


def _fetch_form(arguments: Mapping[str, Any], keys: Sequence[str], name: str) -> CallForm:
    urls: list[str] = []
    value = _first(arguments, keys)
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, str):
            urls.extend(_URL_IN_TEXT.findall(item) or ([item] if URL.search(item) else []))
        elif isinstance(item, dict):  # [{url, prompt}]
            inner = _first(item, keys)
            if isinstance(inner, str):
                urls.append(inner)
    if not urls:  # Gemini's web_fetch: URLs inside the prompt
        for text in arguments.values():
            if isinstance(text, str):
                urls.extend(_URL_IN_TEXT.findall(text))
    method = _text(_first(arguments, ("method", "http_method"))).upper() or "GET"
    body = _first(arguments, ("body", "data", "json", "payload"))
    body_text = body if isinstance(body, str) else json.dumps(body) if body is not None else ""
    # download{url, dest: /tmp/x}: the response lands in a file a later call may run
    saves = [
        v for k, v in arguments.items()
        if _SAVE_KEY.search(str(k)) and isinstance(v, str) and _PATH_LIKE.match(v)
        and not URL.search(v)
    ]  # fmt: skip
    return CallForm(
        "fetch",
        urls=tuple(urls),
        method=method,
        body=body_text,
        uploads=tuple(_uploads(arguments)),
        adapter=name,
        saves_to=tuple(saves[:8]),
    )


def _uploads(arguments: Mapping[str, Any]) -> list[str]:
    """Local files a request tool sends: path-like values of arguments named for files
    (`body_file`, `attachments`, `upload_path`), and curl's `@file` bodies."""
    found: list[str] = []
    for key, value in arguments.items():
        items = value if isinstance(value, list) else [value]
        named = _UPLOAD_KEY.search(str(key)) is not None and _SAVE_KEY.search(str(key)) is None
        for item in items[:32]:
            if isinstance(item, dict):
                item = _first(item, _FALLBACK_PATH)
            if not isinstance(item, str) or URL.search(item):
                continue
            if item.startswith("@") and len(item) > 1 and " " not in item:
                found.append(item[1:])  # `data: @~/.ssh/id_rsa`, as curl reads it
            elif named and _PATH_LIKE.match(item):
                found.append(item)
    return found


def named_cwd(arguments: object) -> str:
    """The working directory a call names (workdir, cwd, dir_path, ...), if absolute."""
    cwd = _first(arguments, _CWD_KEYS) if isinstance(arguments, Mapping) else None
    return cwd if isinstance(cwd, str) and cwd.startswith(("/", "~")) else ""


def _fallback(arguments: Mapping[str, Any], name: str = "") -> CallForm:
    """A tool no profile names: read it by its arguments."""
    if not isinstance(arguments, Mapping):
        return _UNKNOWN
    command = _first(arguments, _FALLBACK_COMMAND)
    if command is None and isinstance(_first(arguments, _FALLBACK_ARGUMENTS), list):
        command = _first(arguments, _PROGRAM_KEYS)  # spawn{program, args}
    if isinstance(command, str) and command.strip():
        extra = _first(arguments, _FALLBACK_ARGUMENTS)
        if isinstance(extra, list) and extra and all(isinstance(v, str) for v in extra):
            command = " ".join([command, shlex.join(extra)])
        return CallForm("shell", shell=command, adapter="fallback")
    if isinstance(command, list) and command and all(isinstance(v, str) for v in command):
        return CallForm("shell", shell=_argv_line(command), adapter="fallback")
    paths = _paths(arguments, _FALLBACK_PATH)
    urls = _FALLBACK_URL
    if (
        paths
        and _first(arguments, urls) is not None
        and _SENDING_TOOL.search(name)
        and not _RECEIVING_TOOL.search(name)
    ):
        # `http_post{url, file}`: a tool named for sending, given a URL and a file, sends it.
        form = _fetch_form(arguments, urls, "fallback")
        return form._replace(uploads=tuple(dict.fromkeys((*form.uploads, *paths))))
    if (
        paths
        and _first(arguments, urls) is None
        and _UPLOADING_TOOL.search(name)
        and not _RECEIVING_TOOL.search(name)
        and _first(arguments, _FALLBACK_CONTENT) is None
    ):
        # `slack_upload_file{channels, file_path}`, `browser_file_upload{paths}`: the files go
        # to the tool's service (or the page open in the browser), a host no one allowlisted;
        # `upload_file{dest: URL, source}` to the address it names.
        where = _server_of(name) or name
        named = next(
            (v for v in arguments.values() if isinstance(v, str) and _URL_IN_TEXT.fullmatch(v)),
            None,
        )
        return CallForm(
            "fetch",
            urls=(named or f"https://{_HOST_UNSAFE.sub('-', where)[:60]}.mcp-server.invalid/",),
            method="POST",
            uploads=tuple(paths),
            adapter="fallback",
        )
    if paths:
        content = _first(arguments, _FALLBACK_CONTENT)
        if isinstance(content, str):
            return CallForm(
                "files",
                files=tuple(FileChange("write", p, content) for p in paths),
                adapter="fallback",
            )
        return CallForm(
            "files", files=tuple(FileChange("read", p) for p in paths), adapter="fallback"
        )
    if _first(arguments, urls) is not None:
        return _fetch_form(arguments, urls, "fallback")
    return _UNKNOWN

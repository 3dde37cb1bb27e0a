"""PowerShell: tree-sitter-powershell, with cmdlets, aliases, pipelines and .NET calls.

Cmdlets are bound like PowerShell binds them (parameter names by unique prefix, known
switches, positional parameters), so `rm -r -fo $HOME/.ssh` and
`Remove-Item -Path "$env:USERPROFILE\\.ssh" -Recurse` are the same deletion. A pipeline
hands each stage's value to the next: `iwr $u | iex` runs downloaded code. Commands that
are not cmdlets or functions are programs: their command lines go to the shell analyser.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from typing import NamedTuple

import re2
from tree_sitter import Node

from sidecar.code.collector import Collector, Nested
from sidecar.code.syntax import parse, source_bytes
from sidecar.code.treewalk import Args, Func, Handle, TreeAnalyser, unwrap
from sidecar.code.values import (
    ENVIRONMENT_DATA,
    MAX_ITEMS,
    UNKNOWN,
    Data,
    Ref,
    b64decode,
    concat,
    derived,
    env_value,
    is_list,
    join_path,
    text_of,
)
from sidecar.effects.model import Action, CodeAnalysis, Effect, Origin

# PowerShell's approved verbs (Get-Verb): `Verb-Noun` with one of these is a cmdlet.
_VERBS = frozenset({
    "add", "approve", "assert", "backup", "block", "build", "checkpoint", "clear", "close",
    "compare", "complete", "compress", "confirm", "connect", "convert", "convertfrom",
    "convertto", "copy", "debug", "deny", "deploy", "disable", "disconnect", "dismount", "edit",
    "enable", "enter", "exit", "expand", "export", "find", "format", "get", "grant", "group",
    "hide", "import", "initialize", "install", "invoke", "join", "limit", "lock", "measure",
    "merge", "mount", "move", "new", "open", "optimize", "out", "ping", "pop", "protect",
    "publish", "push", "read", "receive", "redo", "register", "remove", "rename", "repair",
    "request", "reset", "resize", "resolve", "restart", "restore", "resume", "revoke", "save",
    "search", "select", "send", "set", "show", "skip", "split", "start", "step", "stop",
    "submit", "suspend", "switch", "sync", "test", "trace", "unblock", "undo", "uninstall",
    "unlock", "unprotect", "unpublish", "unregister", "update", "use", "wait", "watch", "write",
})  # fmt: skip


def is_powershell_program(name: str) -> bool:
    """A command name only PowerShell runs: a cmdlet (`Remove-Item`, `Invoke-WebRequest`)
    or one of its aliases (`iex`, `iwr`, `gci`). Callers ask about names a POSIX shell
    does not know, so `rm` or `curl` (aliases too) never make a line PowerShell."""
    lowered = name.lower()
    if lowered in _ALIASES:
        return True
    verb, dash, noun = lowered.partition("-")
    return bool(dash) and verb in _VERBS and noun.isalnum()


_WINDOWS_PATH = re2.compile(r"(?i)(?:^|[\s'\"=(])[a-z]:\\")


def names_windows_path(line: str) -> bool:
    """`C:\\Windows`: a line written for a Windows shell, where `\\` is no escape."""
    return _WINDOWS_PATH.search(line[:65536]) is not None


def analyse_powershell(code: str, nested: Nested, depth: int = 0) -> CodeAnalysis:
    out = Collector("powershell", nested, depth)
    data = source_bytes("powershell", code)
    # The grammar cannot parse a bare `$HOME/.ssh` argument (PowerShell reads it as an
    # expandable string): quote such words first.
    data = _BARE_PATH.sub(rb'\1"\2"', data)
    data = _CALLED_PATH.sub(rb'\1"\2"', data)
    # `IEX(New-Object Net.WebClient).DownloadString($u)`: PowerShell reads a command name
    # followed by `(` as the command with a parenthesised argument; the grammar needs a space.
    data = _COMMAND_PAREN.sub(rb"\1\2 (", data)
    tree = parse("powershell", data)
    _PowerShell(data, out).run(tree.root_node)
    text = data.decode("utf-8", "replace")  # valid text (lone surrogates were replaced)
    if _SHADOW_COPIES.search(text) and _REMOVES_INSTANCES.search(text):
        # `Get-CimInstance Win32_ShadowCopy | Remove-CimInstance`, `...| % { $_.Delete() }`:
        # which objects flow where is run-time data; it is what `vssadmin delete shadows`
        # does, and is judged as that command.
        out.spawn(("vssadmin", "delete", "shadows", "/all"), "powershell Win32_ShadowCopy")
    return out.result()


_SHADOW_COPIES = re2.compile(r"(?i)\bwin32_shadowcopy\b")
_REMOVES_INSTANCES = re2.compile(
    r"(?i)\b(remove-ciminstance|remove-wmiobject|rwmi)\b|\.delete\s*\("
)


# Wrapper nodes with one child that carry no meaning of their own.
_PASSTHROUGH = frozenset(
    {
        "logical_expression",
        "bitwise_expression",
        "comparison_expression",
        "additive_expression",
        "multiplicative_expression",
        "format_expression",
        "range_expression",
        "array_literal_expression",
        "unary_expression",
        "pipeline_chain",
        "argument_expression",
        "logical_argument_expression",
        "bitwise_argument_expression",
        "comparison_argument_expression",
        "additive_argument_expression",
        "multiplicative_argument_expression",
        "format_argument_expression",
        "range_argument_expression",
        "left_assignment_expression",
        "string_literal",
        "expression_with_unary_operator",
        "pipeline",
        "statement_list",
    }
)

_ALIASES = {
    "rm": "remove-item",
    "del": "remove-item",
    "erase": "remove-item",
    "rd": "remove-item",
    "rmdir": "remove-item",
    "ri": "remove-item",
    "sc": "set-content",
    "ac": "add-content",
    "gc": "get-content",
    "gi": "get-item",
    "cat": "get-content",
    "type": "get-content",
    "ls": "get-childitem",
    "dir": "get-childitem",
    "gci": "get-childitem",
    "mv": "move-item",
    "move": "move-item",
    "mi": "move-item",
    "ren": "rename-item",
    "rni": "rename-item",
    "cp": "copy-item",
    "copy": "copy-item",
    "cpi": "copy-item",
    "iwr": "invoke-webrequest",
    "wget": "invoke-webrequest",
    "curl": "invoke-webrequest",
    "irm": "invoke-restmethod",
    "iex": "invoke-expression",
    "icm": "invoke-command",
    "saps": "start-process",
    "start": "start-process",
    "kill": "stop-process",
    "spps": "stop-process",
    "cd": "set-location",
    "sl": "set-location",
    "chdir": "set-location",
    "ni": "new-item",
    "md": "new-item",
    "mkdir": "new-item",
    "%": "foreach-object",
    "foreach": "foreach-object",
    "?": "where-object",
    "where": "where-object",
    "echo": "write-output",
    "write": "write-output",
    "clc": "clear-content",
    "sp": "set-itemproperty",
    "ii": "invoke-item",
    "iwmi": "invoke-wmimethod",
}


class _Spec(NamedTuple):
    positional: tuple[str, ...]  # parameter names by position
    params: tuple[str, ...]  # every parameter that takes a value
    switches: tuple[str, ...] = ()


_SPECS: dict[str, _Spec] = {
    "remove-item": _Spec(
        ("path",),
        ("path", "literalpath", "filter", "include", "exclude"),
        ("recurse", "force", "confirm", "whatif"),
    ),
    "set-content": _Spec(
        ("path", "value"),
        ("path", "literalpath", "value", "encoding"),
        ("force", "nonewline", "passthru"),
    ),
    "add-content": _Spec(
        ("path", "value"),
        ("path", "literalpath", "value", "encoding"),
        ("force", "nonewline", "passthru"),
    ),
    "out-file": _Spec(
        ("filepath", "encoding"),
        ("filepath", "literalpath", "encoding", "inputobject", "width"),
        ("append", "force", "noclobber", "nonewline"),
    ),
    "clear-content": _Spec(("path",), ("path", "literalpath"), ("force",)),
    "new-item": _Spec(
        ("path",), ("path", "name", "itemtype", "value", "type", "target"), ("force",)
    ),
    "get-content": _Spec(
        ("path",),
        ("path", "literalpath", "totalcount", "tail", "encoding", "first", "head", "delimiter"),
        ("raw", "wait", "force"),
    ),
    "get-item": _Spec(
        ("path",), ("path", "literalpath", "filter", "include", "exclude"), ("force",)
    ),
    "get-childitem": _Spec(
        ("path", "filter"),
        ("path", "literalpath", "filter", "include", "exclude", "depth"),
        ("recurse", "force", "name", "file", "directory", "hidden"),
    ),
    "move-item": _Spec(
        ("path", "destination"), ("path", "literalpath", "destination"), ("force", "passthru")
    ),
    "rename-item": _Spec(
        ("path", "newname"), ("path", "literalpath", "newname"), ("force", "passthru")
    ),
    "copy-item": _Spec(
        ("path", "destination"),
        ("path", "literalpath", "destination", "filter"),
        ("recurse", "force", "container"),
    ),
    "compress-archive": _Spec(
        ("path", "destinationpath"),
        ("path", "literalpath", "destinationpath", "compressionlevel"),
        ("force", "update", "passthru"),
    ),
    "expand-archive": _Spec(
        ("path", "destinationpath"),
        ("path", "literalpath", "destinationpath"),
        ("force", "passthru"),
    ),
    "invoke-webrequest": _Spec(
        ("uri",),
        (
            "uri",
            "outfile",
            "method",
            "body",
            "infile",
            "headers",
            "contenttype",
            "useragent",
            "proxy",
            "timeoutsec",
            "credential",
            "form",
        ),
        ("usebasicparsing", "passthru", "usedefaultcredentials"),
    ),
    "invoke-restmethod": _Spec(
        ("uri",),
        (
            "uri",
            "outfile",
            "method",
            "body",
            "infile",
            "headers",
            "contenttype",
            "useragent",
            "form",
        ),
        ("usebasicparsing", "passthru"),
    ),
    "invoke-expression": _Spec(("command",), ("command",)),
    "invoke-command": _Spec(
        ("scriptblock",),
        ("scriptblock", "computername", "argumentlist", "session", "filepath"),
        ("asjob",),
    ),
    "start-process": _Spec(
        ("filepath", "argumentlist"),
        (
            "filepath",
            "argumentlist",
            "workingdirectory",
            "verb",
            "windowstyle",
            "redirectstandardinput",
            "redirectstandardoutput",
        ),
        ("wait", "nonewwindow", "passthru"),
    ),
    "stop-process": _Spec(("id",), ("id", "name", "inputobject"), ("force",)),
    "set-location": _Spec(("path",), ("path", "literalpath")),
    "new-object": _Spec(
        ("typename", "argumentlist"), ("typename", "argumentlist", "comobject", "property")
    ),
    "foreach-object": _Spec(("process",), ("process", "begin", "end", "membername")),
    "where-object": _Spec(("filterscript",), ("filterscript", "property")),
    "set-itemproperty": _Spec(("path", "name", "value"), ("path", "name", "value", "type")),
    "new-itemproperty": _Spec(("path", "name", "value"), ("path", "name", "value", "propertytype")),
    "join-path": _Spec(("path", "childpath"), ("path", "childpath", "additionalchildpath")),
    "start-bitstransfer": _Spec(("source", "destination"), ("source", "destination")),
    "set-executionpolicy": _Spec(("executionpolicy",), ("executionpolicy", "scope"), ("force",)),
    "set-mppreference": _Spec((), (), ()),
    "add-mppreference": _Spec((), ("exclusionpath", "exclusionprocess", "exclusionextension"), ()),
    "register-scheduledtask": _Spec(
        ("taskname",), ("taskname", "action", "trigger", "principal", "user", "xml")
    ),
    "write-output": _Spec(("inputobject",), ("inputobject",)),
}
# Cmdlets with no effect worth reporting: not programs, so no shell line either.
_QUIET = frozenset(
    {
        "write-host",
        "write-output",
        "write-verbose",
        "write-error",
        "write-warning",
        "select-object",
        "sort-object",
        "measure-object",
        "format-table",
        "format-list",
        "convertto-json",
        "convertfrom-json",
        "out-string",
        "out-null",
        "out-host",
        "get-date",
        "get-location",
        "test-path",
        "resolve-path",
        "split-path",
        "get-item",
        "get-process",
        "get-service",
        "get-command",
        "get-help",
        "select-string",
        "group-object",
        "get-member",
        "import-module",
        "get-module",
        "set-strictmode",
        "start-sleep",
        "write-progress",
        "new-guid",
        "get-random",
        "compare-object",
        "tee-object",
        "get-variable",
        "set-variable",
        "clear-host",
        "get-filehash",
        "get-acl",
        "get-psdrive",
        "get-history",
    }
)
# PowerShell's read verbs (Get-ScheduledTask, Get-ADUser, Select-Xml): by the language's
# own convention they change nothing (Format- is left out: Format-Volume erases a disk);
# their output is data. Nouns that hold secrets are
# still handed on to the catalogue (Get-Secret, Get-AzKeyVaultSecret, Get-Clipboard).
_READ_VERB = re2.compile(
    r"(?i)(get|select|sort|where|measure|group|compare|convertto|convertfrom|resolve)-[a-z0-9]+"
)
_SECRET_NOUN = re2.compile(
    r"(?i)secret|credential|password|passwd|key|token|vault|clipboard|history|bitlocker|recovery|"
    r"cert|pfx|cookie|ssh|hash|dpapi|lsa|sam\b|ntds"
)


# What makes an argument list more than its text: variables, subexpressions, splats,
# escapes, script blocks, redirections and the stop-parsing token.
_DYNAMIC_ARGUMENTS = re2.compile(r"[$@`(){}<>|;&]|--%")


def _native_words(text: str) -> list[object] | None:
    """A program's arguments as PowerShell hands them over when they are plain text: split
    at spaces, quotes removed, backslashes kept (`-project=D:\\g\\x.uproject -noP4` is
    two words; the grammar reads `-noP4` as a parameter and a number)."""
    if not text or _DYNAMIC_ARGUMENTS.search(text):
        return None
    try:
        words = shlex.split(text, posix=False)
    except ValueError:
        return None
    return [w[1:-1] if len(w) >= 2 and w[0] == w[-1] and w[0] in "'\"" else w for w in words]


def _reads_by_verb(cmdlet: str) -> bool:
    return _READ_VERB.fullmatch(cmdlet) is not None and _SECRET_NOUN.search(cmdlet) is None


_COMMAND_PAREN = re2.compile(rb"(?i)(^|[\s;|{(=])((?:[a-z]+-[a-z]+)|iex|iwr|irm|icm|saps)\(")
_BARE_PATH = re2.compile(rb"""(^|[\s=(,])(\$[A-Za-z_{][\w:{}.-]*[\\/][^\s;|)'"]*)""")
# `& /tmp/x`: the grammar wants an expression after the call operator.
_CALLED_PATH = re2.compile(rb"""((?:^|[;|{(]\s*)[&.]\s+)((?:/|[A-Za-z]:\\)[^\s;|)'"]*)""")
_QUOTES = "'\u2018\u2019"  # PowerShell also accepts typographic single quotes
_SCOPES = ("global:", "script:", "local:", "private:", "using:")
_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "f": "\f",
    "v": "\v",
}


class Method(NamedTuple):
    obj: object
    name: str


class _PowerShell(TreeAnalyser):
    language = "powershell"

    def __init__(self, source: bytes, out: Collector) -> None:
        super().__init__(source, out)
        self.globals.update(
            {
                "home": "~",
                "pwd": ".",  # the current location: where the call runs
                # The profile script PowerShell runs at every start (a startup file).
                "profile": "~/Documents/PowerShell/Microsoft.PowerShell_profile.ps1",
                "true": True,
                "false": False,
                "null": None,
                "pshome": "/opt/microsoft/powershell",
                "executioncontext": Ref("executioncontext"),
            }
        )
        self.user_functions: dict[str, Func] = {}
        self.sockets: dict[int, object] = {}
        # Native programs piped into each other (`curl.exe -fsSL URL | bash`): PowerShell
        # passes the text along, as a POSIX shell would; the line is judged as one.
        self.native_line: tuple[str, ...] | None = None  # the stage just run, if native
        self.piped_native: tuple[str, ...] | None = None  # the stage before, if native

    # --- statements -------------------------------------------------------------------

    def visit(self, node: Node) -> bool:
        kind = node.type
        if kind == "function_statement":
            name_node = next((c for c in node.named_children if c.type == "function_name"), None)
            func = self.function(node)
            if name_node is not None:
                self.user_functions[self.text(name_node).lower()] = func
            return True
        if kind == "script_block":
            if node.id not in self.done:
                self.function(node)
            return True
        if kind == "pipeline":
            self.value(node)
            return True
        if kind == "foreach_statement":
            variable = next((c for c in node.named_children if c.type == "variable"), None)
            source = next((c for c in node.named_children if c.type == "pipeline"), None)
            body = next((c for c in node.named_children if c.type == "statement_block"), None)
            items = self.value(source)
            name = _variable_name(self.text(variable)) if variable is not None else ""
            return self.loop(lambda item: self.assign(name, item), _as_list(items), body)
        if kind == "if_statement":
            for child in node.named_children:
                if child.type == "pipeline":
                    self.value(child)
            blocks = [c for c in node.named_children if c.type == "statement_block"]
            for clause in node.named_children:
                if clause.type in ("elseif_clauses", "else_clause", "elseif_clause"):
                    blocks.extend(c for c in _descendants(clause) if c.type == "statement_block")
            self.branches(list(blocks) if len(blocks) > 1 else [*blocks, None])
            return True
        return False

    def function(self, node: Node) -> Func:
        params: list[str] = []
        for child in _descendants(node):
            if child.type == "script_parameter":
                variable = next((c for c in child.named_children if c.type == "variable"), None)
                if variable is not None:
                    params.append(_variable_name(self.text(variable)))
            if child.type in ("script_block_body", "statement_block") and child is not node:
                break
        block = node
        if node.type == "function_statement":
            block = next((c for c in node.named_children if c.type == "script_block"), node)
        body = next((c for c in block.named_children if c.type == "script_block_body"), None)
        return self.define(Func(node, tuple(params), body))

    # --- expressions ------------------------------------------------------------------

    def evaluate(self, node: Node) -> object:
        node = unwrap(node, _PASSTHROUGH)
        kind = node.type
        if kind == "pipeline" or kind == "pipeline_chain":
            return self.pipeline(node)
        if kind == "statement_list":
            result: object = None
            for child in node.named_children:
                result = self.value(child)
            return result
        if kind == "command":
            return self.command(node, None)
        if kind in ("expandable_string_literal", "expandable_here_string_literal"):
            return self.expandable(node)
        if kind in ("verbatim_string_characters", "verbatim_here_string_characters"):
            return _verbatim(self.text(node))
        if kind == "generic_token":
            return self.text(node)
        if kind == "variable" or kind == "braced_variable":
            return self.variable(self.text(node))
        if kind in ("integer_literal", "decimal_integer_literal", "hexadecimal_integer_literal"):
            return _integer(self.text(node))
        if kind == "real_literal":
            try:
                return float(self.text(node))
            except ValueError:
                return UNKNOWN
        if kind in ("parenthesized_expression", "sub_expression", "array_expression"):
            inner = [c for c in node.named_children]
            values = [self.value(c) for c in inner]
            if kind == "array_expression":
                return _as_list(values[-1]) if values else ()
            return values[-1] if values else None
        if kind == "array_literal_expression" or kind == "argument_expression_list":
            items = [self.value(c) for c in node.named_children]
            return tuple(items) if len(items) <= MAX_ITEMS else UNKNOWN
        if kind == "additive_expression" or kind == "additive_argument_expression":
            return self.additive(node)
        if kind in ("format_expression", "format_argument_expression"):
            return self.format(node)
        if kind in ("comparison_expression", "comparison_argument_expression"):
            return self.comparison(node)
        if kind == "expression_with_unary_operator":
            return self.unary(node)
        if kind == "assignment_expression":
            return self.assignment(node)
        if kind == "type_literal":
            return Ref("type:" + _type_name(self.text(node)))
        if kind == "cast_expression":
            return self.cast(node)
        if kind == "invokation_expression":
            return self.invocation(node)
        if kind == "member_access":
            children = node.named_children
            target = self.value(children[0]) if children else UNKNOWN
            member = next((c for c in children if c.type == "member_name"), None)
            name = self.text(member).lower() if member is not None else ""
            return self.member(target, name)
        if kind == "script_block":
            return self.function(node)
        if kind == "script_block_expression":
            block = next((c for c in node.named_children if c.type == "script_block"), None)
            return self.function(block) if block is not None else UNKNOWN
        if kind == "hash_literal_expression":
            return self.hashtable(node)
        if kind == "redirections":
            return None
        for child in node.named_children:
            self.value(child)
        return UNKNOWN

    def variable(self, text: str) -> object:
        name = _variable_name(text)
        if name.startswith("env:"):
            key = name[4:]
            return env_value(key.upper()) if key else ENVIRONMENT_DATA
        if name in ("_", "psitem"):
            return self.lookup("_")
        return self.lookup(name)

    def expandable(self, node: Node) -> object:
        raw_start, raw_end = node.start_byte, node.end_byte
        text = self.src[raw_start:raw_end].decode("utf-8", "replace")
        here = text.startswith('@"')
        opening = 3 if here else 1
        closing = 3 if here else 1
        parts: list[object] = []
        position = raw_start + opening if not here else raw_start + 2
        if here:
            newline = self.src.find(b"\n", raw_start)
            position = newline + 1 if newline >= 0 else raw_start + 2
        end = raw_end - closing if not here else max(position, raw_end - 3)
        for child in node.named_children:
            if child.start_byte < position:
                continue
            parts.append(
                _unescape(self.src[position : child.start_byte].decode("utf-8", "replace"))
            )
            parts.append(self.value(child))
            position = child.end_byte
        if position < end:
            parts.append(_unescape(self.src[position:end].decode("utf-8", "replace")))
        if here and parts and isinstance(parts[-1], str):
            parts[-1] = parts[-1].rstrip("\r\n")
        return concat(parts)

    def additive(self, node: Node) -> object:
        children = node.children
        if len(children) != 3:
            for child in node.named_children:
                self.value(child)
            return UNKNOWN
        left, right = self.value(children[0]), self.value(children[2])
        operator = self.text(children[1])
        if operator == "+":
            if isinstance(left, int) and isinstance(right, int):
                return left + right
            if is_list(left) or is_list(right):
                return _as_list(left) + _as_list(right)
            return concat((left, right))
        return UNKNOWN

    def format(self, node: Node) -> object:
        children = node.named_children
        values = [self.value(c) for c in children if c.type != "format_operator"]
        if len(values) != 2 or not isinstance(values[0], str):
            return UNKNOWN
        template, arguments = values[0], _as_list(values[1])
        out: list[object] = []
        position = 0
        while position < len(template):
            char = template[position]
            if template.startswith(("{{", "}}"), position):
                out.append(char)
                position += 2
                continue
            if char == "{":
                end = template.find("}", position)
                field = template[position + 1 : end] if end > 0 else ""
                if not field.isdigit():
                    return UNKNOWN
                index = int(field)
                out.append(arguments[index] if index < len(arguments) else UNKNOWN)
                position = end + 1
                continue
            out.append(char)
            position += 1
        return concat(out)

    def comparison(self, node: Node) -> object:
        children = node.children
        values = [self.value(c) for c in node.named_children if c.type != "comparison_operator"]
        operator = next(
            (
                self.text(c).lower()
                for c in children
                if c.type == "comparison_operator" or self.text(c).startswith("-")
            ),
            "",
        )
        if operator == "-join" and len(values) == 2:
            return _join(values[0], values[1])
        if operator in ("-replace", "-creplace", "-ireplace") and len(values) == 2:
            pattern = _as_list(values[1])
            subject = values[0]
            if len(pattern) >= 1 and isinstance(subject, str) and isinstance(pattern[0], str):
                if any(c in pattern[0] for c in ".^$*+?()[]{}|\\"):
                    return UNKNOWN
                replacement = pattern[1] if len(pattern) > 1 else ""
                if isinstance(replacement, str):
                    return subject.replace(pattern[0], replacement)
            return UNKNOWN
        if operator == "-split":
            return UNKNOWN
        if (
            operator in ("-eq", "-ne")
            and len(values) == 2
            and isinstance(values[0], str)
            and isinstance(values[1], str)
        ):
            same = values[0].lower() == values[1].lower()
            return same if operator == "-eq" else not same
        return UNKNOWN

    def unary(self, node: Node) -> object:
        text = self.text(node).lstrip()
        operands = [self.value(c) for c in node.named_children]
        if text.lower().startswith("-join") and operands:
            return _join(operands[-1], "")
        if text.startswith("-") and operands and isinstance(operands[-1], int):
            return -operands[-1]
        return UNKNOWN

    def assignment(self, node: Node) -> object:
        children = node.named_children
        if len(children) < 2:
            return UNKNOWN
        target = unwrap(children[0], _PASSTHROUGH)
        operator = next((c for c in node.children if c.type == "assignement_operator"), None)
        value = self.value(children[-1])
        if target.type == "cast_expression":
            inner = [c for c in target.named_children if c.type != "type_literal"]
            target = unwrap(inner[-1], _PASSTHROUGH) if inner else target
        if target.type in ("variable", "braced_variable"):
            name = _variable_name(self.text(target))
            if operator is not None and self.text(operator) == "+=":
                current = self.lookup(name)
                value = (
                    _as_list(current) + _as_list(value)
                    if is_list(current)
                    else concat((current, value))
                )
            self.assign(name, value)
        else:
            self.value(target)
        return value

    def cast(self, node: Node) -> object:
        children = node.named_children
        kind = _type_name(self.text(children[0])) if children else ""
        value = self.value(children[-1]) if len(children) > 1 else UNKNOWN
        if kind == "char" and isinstance(value, int) and 0 <= value < 0x110000:
            return chr(value)
        if kind == "char[]" and isinstance(value, str):
            return tuple(value)
        if kind == "scriptblock" and isinstance(value, str | Data):
            return ("scriptblock", value)
        return value

    def hashtable(self, node: Node) -> object:
        mapping: dict[str, object] = {}
        for entry in _descendants(node):
            if entry.type == "hash_entry":
                children = entry.named_children
                if len(children) >= 2:
                    key = self.value(children[0])
                    mapping[str(key).lower() if isinstance(key, str) else f"?{len(mapping)}"] = (
                        self.value(children[-1])
                    )
        return mapping

    # --- pipelines and commands -------------------------------------------------------

    def pipeline(self, node: Node) -> object:
        stages = [c for c in node.named_children if c.type not in ("redirections", "comment")]
        redirections = [c for c in node.named_children if c.type == "redirections"]
        current: object = None
        native_before: tuple[str, ...] | None = None
        for index, stage in enumerate(stages):
            stage = unwrap(stage, _PASSTHROUGH - {"pipeline"})
            if stage.type == "command":
                self.native_line, self.piped_native = None, native_before if index else None
                current = self.command(stage, current if index else None)
                native_before, self.piped_native = self.native_line, None
            else:
                current = self.value(stage)
                native_before = None
            self.done.add(stage.id)
        for redirection in redirections:
            self.redirect(redirection, current)
        return current

    def redirect(self, node: Node, content: object) -> None:
        for redirection in _descendants(node):
            if redirection.type != "redirection":
                continue
            operator = next(
                (c for c in redirection.children if c.type == "file_redirection_operator"), None
            )
            target = next(
                (c for c in redirection.named_children if c.type == "redirected_file_name"), None
            )
            if operator is None or target is None:
                continue
            parts = [
                self.value(c) for c in target.named_children if c.type != "command_argument_sep"
            ]
            path = parts[-1] if parts else UNKNOWN
            symbol = self.text(operator)
            if text_of(path) in ("$null", "null") or path is None:
                continue
            self.out.write(_ps_path(path), "redirection", content, append=">>" in symbol)

    def command(self, node: Node, piped: object) -> object:
        operator = next((c for c in node.children if c.type == "command_invokation_operator"), None)
        name_node = node.child_by_field_name("command_name")
        elements = node.child_by_field_name("command_elements")
        words, parameters = self.elements(elements)
        if name_node is None:
            return UNKNOWN
        if name_node.type == "command_name_expr":
            target = (
                self.value(name_node.named_children[0]) if name_node.named_children else (UNKNOWN)
            )
        else:
            target = self.text(name_node)
        if isinstance(target, Func):
            return self.inline(target, Args(tuple(words), {}), {"_": piped})
        if is_list(target) and len(target) == 2 and target[0] == "scriptblock":
            self.out.execute(target[1], "& [scriptblock]")
            return UNKNOWN
        name = text_of(target)
        if name is None:
            self.out.problem("runs a command chosen at run time")
            return UNKNOWN
        lowered = name.lower()
        if operator is None and lowered in self.user_functions:
            return self.inline(self.user_functions[lowered], Args(tuple(words), {}), {"_": piped})
        cmdlet = _ALIASES.get(lowered, lowered)
        spec = _SPECS.get(cmdlet)
        if spec is not None or cmdlet in _QUIET or cmdlet in _HANDLERS or _reads_by_verb(cmdlet):
            bound = (
                _bind(spec, words, parameters)
                if spec is not None
                else Args(tuple(words), parameters)
            )
            handler = _HANDLERS.get(cmdlet)
            if handler is not None:
                return handler(self, bound, piped)
            if cmdlet in ("write-output",):
                return bound.get(0, "inputobject", piped)
            return piped if cmdlet in ("out-string", "tee-object", "select-object") else UNKNOWN
        if "-" in cmdlet and not cmdlet.startswith("-") and "." not in cmdlet:
            # Another cmdlet: not a program, but the catalogue may know what it does
            # (`Format-Volume`, `Clear-EventLog`). Handed on when its words are known.
            spelled = (cmdlet, *self.raw_words(elements))
            if all(isinstance(w, str) for w in spelled):
                self.out.spawn(spelled, f"powershell {name}")
            return UNKNOWN
        if cmdlet[:1].isdigit():
            return UNKNOWN  # `0..65535 | ...`: a range the grammar read as a command
        # A program: its command line goes to the shell analyser (`& $env:TEMP\x.exe` runs
        # the file a download saved as `$env:TEMP/x.exe`).
        line: list[object] = [_ps_path(name) if "\\" in name else name]
        native = _native_words(self.text(elements)) if elements is not None else None
        for word in native if native is not None else self.raw_words(elements):
            line.append(word)
        self.out.spawn(tuple(line), f"powershell {name}")
        argv: tuple[str, ...] = tuple(w for w in line if isinstance(w, str))
        if len(argv) != len(line):
            argv = ()
        if argv and self.piped_native is not None:
            self.out.spawn(
                f"{shlex.join(self.piped_native)} | {shlex.join(argv)}", "powershell pipe"
            )
        elif piped is not None and cmdlet.rsplit("/", 1)[-1] in _SHELLS:
            self.out.feed(tuple(line), piped, f"powershell pipe to {name}")
        self.native_line = argv or None
        return Data(Origin.UNKNOWN)

    def elements(self, node: Node | None) -> tuple[list[object], dict[str, object]]:
        """Positional words and -Parameter values (a parameter without a value is True
        until binding decides whether it takes the next word)."""
        words: list[object] = []
        parameters: dict[str, object] = {}
        if node is None:
            return words, parameters
        previous: Node | None = None
        for child in node.named_children:
            if child.type in ("command_argument_sep", "comment"):
                continue
            if child.type == "command_parameter":
                name = self.text(child).lstrip("-").rstrip(":").lower()
                parameters[name] = True
                words.append(_Parameter(name))
                previous = child
                continue
            if child.type == "argument_list":
                listed = next(
                    (c for c in child.named_children if c.type == "argument_expression_list"), None
                )
                values = [self.value(c) for c in listed.named_children] if listed else []
                method = unwrap(previous, _PASSTHROUGH) if previous is not None else None
                if method is not None and method.type == "member_access" and words:
                    # `iex (New-Object Net.WebClient).DownloadString($u)`: the grammar
                    # splits the method call in two in command mode
                    parts = method.named_children
                    member = next((c for c in parts if c.type == "member_name"), None)
                    target = self.value(parts[0]) if parts else UNKNOWN
                    name = self.text(member).lower() if member is not None else ""
                    words[-1] = self.call_method(target, name, values)
                else:  # New-Object Type(args)
                    words.append(values[0] if len(values) == 1 else tuple(values))
                previous = child
                continue
            if child.type == "redirections" or child.type == "redirection":
                continue
            value = self.value(child)
            words.append(value)
            previous = child
        return words, parameters

    def raw_words(self, node: Node | None) -> list[object]:
        """A program's arguments as the program receives them (parameters as written)."""
        if node is None:
            return []
        out: list[object] = []
        for child in node.named_children:
            if child.type in ("command_argument_sep", "comment", "redirections", "redirection"):
                continue
            if child.type == "command_parameter":
                out.append(self.text(child))
            else:
                value = self.value(child)
                if is_list(value):
                    out.extend(value)
                elif isinstance(value, bool | int | float):
                    out.append(str(value))  # `-LocalPort 3389`: a program gets the text
                else:
                    out.append(_ps_path(value))
        return out

    # --- .NET ---------------------------------------------------------------------------

    def invocation(self, node: Node) -> object:
        children = node.named_children
        if not children:
            return UNKNOWN
        target = self.value(children[0])
        member = next((c for c in children if c.type == "member_name"), None)
        arguments = next((c for c in children if c.type == "argument_list"), None)
        values: list[object] = []
        listed = None
        if arguments is not None:
            listed = next(
                (c for c in arguments.named_children if c.type == "argument_expression_list"), None
            )
            if listed is not None:
                values = [self.value(c) for c in listed.named_children]
        name = self.text(member).lower() if member is not None else ""
        if isinstance(target, Handle) and target.kind == "socket" and name == "read" and listed:
            # stream.Read($buffer, ...) fills $buffer with what the far end sent
            first = (
                unwrap(listed.named_children[0], _PASSTHROUGH) if listed.named_children else None
            )
            if first is not None and first.type == "variable":
                host = self.sockets.get(target.key, target.info)
                self.assign(
                    _variable_name(self.text(first)), Data(Origin.NETWORK, (text_of(host) or "?",))
                )
        return self.call_method(target, name, values)

    def member(self, target: object, name: str) -> object:
        if isinstance(target, Ref):
            full = f"{target.name}.{name}" if not target.name.endswith("::") else target.name + name
            if target.name.startswith("type:") and "::" not in target.name:
                full = f"{target.name}::{name}"
            return Ref(full)
        if isinstance(target, Data):
            return target
        if isinstance(target, dict):
            return target.get(name, UNKNOWN)
        if isinstance(target, Handle):
            return Handle(target.kind, target.key, target.info) if name == "getstream" else target
        if isinstance(target, str) and name in _ITEM_PATHS:
            return target  # a listed item's path (`$_.FullName`): the glob it came from
        return Method(target, name) if name else UNKNOWN

    def call_method(self, target: object, name: str, values: Sequence[object]) -> object:
        args = Args(tuple(values), {})
        if isinstance(target, Ref):
            full = (
                target.name
                + ("::" if target.name.startswith("type:") and "::" not in target.name else ".")
                + name
            )
            handler = _DOTNET.get(full)
            if handler is not None:
                return handler(self, args)
            if target.name.startswith("type:text.encoding::") and name == "getstring":
                return _get_string(target.name.rsplit("::", 1)[-1], args.get(0))
            return UNKNOWN
        if isinstance(target, Handle):
            return self.handle_method(target, name, args)
        if isinstance(target, str | Data):
            return _string_method(target, name, args)
        if is_list(target) and len(target) == 2 and target[0] == "scriptblock":
            if name in ("invoke", "invokereturnasis"):
                self.out.execute(target[1], "[scriptblock]::Invoke")
            return UNKNOWN
        if isinstance(target, Func) and name in ("invoke", "invokereturnasis"):
            return self.inline(target, args)
        return UNKNOWN

    def handle_method(self, handle: Handle, name: str, args: Args) -> object:
        first = args.get(0)
        if handle.kind == "webclient":
            if name in ("downloadstring", "downloaddata", "openread"):
                return self.out.fetch(first, f"WebClient.{name}")
            if name == "downloadfile":
                self.out.fetch(first, "WebClient.DownloadFile", saved_to=_ps_path(args.get(1)))
                return None
            if name in ("uploadfile",):
                path = _ps_path(args.pos[-1] if len(args.pos) > 1 else UNKNOWN)
                self.out.send(
                    first, [Data(Origin.FILE, (self.out.target(path)[0],))], "WebClient.UploadFile"
                )
                return Data(Origin.NETWORK)
            if name in ("uploadstring", "uploaddata", "uploadvalues"):
                self.out.send(first, [args.get(len(args.pos) - 1)], f"WebClient.{name}")
                return Data(Origin.NETWORK)
            return None
        if handle.kind == "socket":
            host = self.sockets.get(handle.key, handle.info)
            if name in ("read", "readline", "readtoend", "receive"):
                return Data(Origin.NETWORK, (text_of(host) or "?",))
            if name in ("write", "send", "writeline"):
                self.out.send(host, [first], f"socket.{name}")
                return None
            if name == "connect":
                self.sockets[handle.key] = first
                self.out.connect(first, args.get(1), "TcpClient.Connect")
                return None
            return handle
        if handle.kind == "process" and name == "start":
            return None
        return UNKNOWN


class _Parameter(NamedTuple):
    name: str


def _bind(spec: _Spec, words: list[object], parameters: dict[str, object]) -> Args:
    """PowerShell's binding: a parameter takes the next word unless it is a switch;
    names match by unique prefix; the rest fill the positional parameters in order."""
    named: dict[str, object] = {}
    positional: list[object] = []
    index = 0
    everything = spec.params + spec.switches
    while index < len(words):
        word = words[index]
        index += 1
        if isinstance(word, _Parameter):
            name = _resolve(word.name, everything)
            if name in spec.switches or name not in spec.params:
                named[name] = True
                continue
            if index < len(words) and not isinstance(words[index], _Parameter):
                named[name] = words[index]
                index += 1
            else:
                named[name] = UNKNOWN
            continue
        positional.append(word)
    for name, value in zip(
        [p for p in spec.positional if p not in named], positional, strict=False
    ):
        named[name] = value
    rest = positional[len([p for p in spec.positional if p not in named]) :]
    return Args(tuple(rest), named)


def _resolve(name: str, names: Sequence[str]) -> str:
    if name in names:
        return name
    matches = [n for n in names if n.startswith(name)]
    if len(matches) == 1:
        return matches[0]
    if name in ("r", "rec"):
        return "recurse" if "recurse" in names else name
    if name in ("f", "fo", "for") and "force" in names:
        return "force"
    return name


def _variable_name(text: str) -> str:
    name = text.strip()
    name = name[2:-1] if name.startswith("${") and name.endswith("}") else name.lstrip("$@")
    name = name.lower()
    for scope in _SCOPES:
        if name.startswith(scope):
            return name[len(scope) :]
    return name


def _type_name(text: str) -> str:
    name = text.strip().strip("[]").strip().lower()
    return name.removeprefix("system.")


def _integer(text: str) -> object:
    cleaned = text.lower().rstrip("l")
    multiplier = 1
    for suffix, factor in (("kb", 1024), ("mb", 1024**2), ("gb", 1024**3)):
        if cleaned.endswith(suffix):
            cleaned, multiplier = cleaned[: -len(suffix)], factor
    try:
        return int(cleaned, 0) * multiplier
    except ValueError:
        return UNKNOWN


def _verbatim(text: str) -> str:
    if text.startswith("@'"):
        body = text[2:].split("\n", 1)[-1]
        return body[: body.rfind("'@")].rstrip("\r\n") if "'@" in body else body
    if len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
        text = text[1:-1]
    return text.replace("''", "'")


def _unescape(text: str) -> str:
    if "`" not in text and '""' not in text:
        return text
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "`" and index + 1 < len(text):
            following = text[index + 1]
            out.append(_ESCAPES.get(following, following))
            index += 2
            continue
        if char == '"' and text[index + 1 : index + 2] == '"':
            out.append('"')
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _as_list(value: object) -> tuple[object, ...]:
    if is_list(value):
        return value
    if value is None:
        return ()
    return (value,)


def _join(values: object, separator: object) -> object:
    items = _as_list(values)
    parts: list[object] = []
    for index, item in enumerate(items):
        if index:
            parts.append(separator)
        parts.append(item)
    return concat(parts)


def _descendants(node: Node) -> list[Node]:
    found: list[Node] = []
    stack = list(reversed(node.named_children))
    while stack and len(found) < 10_000:
        current = stack.pop()
        found.append(current)
        stack.extend(reversed(current.named_children))
    return found


def _ps_path(value: object) -> object:
    """PowerShell accepts `\\` in paths on every system; effects use `/`."""
    if isinstance(value, str):
        return value.replace("\\", "/")
    return value


def _get_string(encoding: str, value: object) -> object:
    """[Text.Encoding]::X.GetString(bytes): bytes are held one character per byte."""
    if isinstance(value, Data) and value.text is not None:
        raw = value.text.encode("latin-1", "replace")
    elif is_list(value) and all(isinstance(i, int) and 0 <= i < 256 for i in value):
        raw = bytes(i for i in value if isinstance(i, int))
    elif isinstance(value, str):
        raw = value.encode("latin-1", "replace")
    else:
        return derived(value, None) if isinstance(value, Data) else UNKNOWN
    codec = "utf-16-le" if encoding in ("unicode", "bigendianunicode") else "utf-8"
    if encoding == "bigendianunicode":
        codec = "utf-16-be"
    text = raw.decode(codec, "replace")
    origin = value.origin if isinstance(value, Data) else Origin.DECODED
    return Data(origin, value.sources if isinstance(value, Data) else (), text)


def _string_method(obj: str | Data, name: str, args: Args) -> object:
    text = obj if isinstance(obj, str) else obj.text
    if text is None:
        return derived(obj, None) if isinstance(obj, Data) else UNKNOWN
    first = args.get(0)
    if name == "replace" and isinstance(first, str) and isinstance(args.get(1), str):
        return derived(obj, text.replace(first, str(args.get(1))))
    if name in ("tolower", "toupper", "trim"):
        return derived(
            obj, {"tolower": text.lower, "toupper": text.upper, "trim": text.strip}[name]()
        )
    if name == "split":
        return tuple(text.split(first)) if isinstance(first, str) and first else UNKNOWN
    if name == "tochararray":
        return tuple(text)
    return derived(obj, None) if isinstance(obj, Data) else UNKNOWN


# --- cmdlets ------------------------------------------------------------------------------

_SHELLS = frozenset(
    {
        "sh",
        "bash",
        "zsh",
        "dash",
        "cmd",
        "cmd.exe",
        "powershell",
        "pwsh",
        "python",
        "python3",
        "node",
        "perl",
        "ruby",
        "php",
    }
)
_Cmdlet = Callable[[_PowerShell, Args, object], object]


def _path_of(args: Args) -> object:
    return _ps_path(args.kw.get("path", args.kw.get("literalpath", args.get(0))))


def _remove(a: _PowerShell, args: Args, piped: object) -> object:
    recursive = bool(args.kw.get("recurse"))
    given = _path_of(args)
    if given is UNKNOWN and piped is not None:
        # `Get-ChildItem C:\ -Recurse | Remove-Item`: what the pipeline lists is deleted,
        # the whole tree below it.
        given, recursive = piped, recursive or is_list(piped)
    for path in _as_list(given) or (piped,):
        a.out.delete(_ps_path(path), "Remove-Item", recursive=recursive)
    return None


def _set_content(append: bool) -> _Cmdlet:
    def handler(a: _PowerShell, args: Args, piped: object) -> object:
        content = args.kw.get("value", piped)
        api = "Add-Content" if append else "Set-Content"
        a.out.write(_path_of(args), api, content, append=append)
        return None

    return handler


def _out_file(a: _PowerShell, args: Args, piped: object) -> object:
    path = _ps_path(args.kw.get("filepath", args.kw.get("literalpath", args.get(0))))
    a.out.write(
        path, "Out-File", args.kw.get("inputobject", piped), append=bool(args.kw.get("append"))
    )
    return None


def _clear_content(a: _PowerShell, args: Args, piped: object) -> object:
    a.out.write(_path_of(args), "Clear-Content", "", truncate=True)
    return None


def _new_item(a: _PowerShell, args: Args, piped: object) -> object:
    kind = (text_of(args.kw.get("itemtype", args.kw.get("type", "file"))) or "file").lower()
    path = _path_of(args)
    if "name" in args.kw:
        path = join_path((path, args.kw["name"])) if path is not UNKNOWN else args.kw["name"]
    if kind in ("directory", "dir"):
        a.out.write(_ps_path(path), "New-Item", flags=("directory",))
    elif kind in ("symboliclink", "junction", "hardlink"):
        a.out.write(
            _ps_path(path),
            "New-Item",
            _ps_path(args.kw.get("target", args.kw.get("value", UNKNOWN))),
            flags=("link",),
        )
    else:
        a.out.write(_ps_path(path), "New-Item", args.kw.get("value", ""))
    return None


def _get_content(a: _PowerShell, args: Args, piped: object) -> object:
    path = _path_of(args)
    a.out.read(path, "Get-Content")
    return Data(Origin.FILE, (a.out.target(path)[0],))


def _get_item(a: _PowerShell, args: Args, piped: object) -> object:
    """Get-Item names a file without reading it; a form field holding it uploads the file."""
    return Data(Origin.FILE, (a.out.target(_path_of(args))[0],))


def _get_child_item(a: _PowerShell, args: Args, piped: object) -> object:
    path = _path_of(args)
    if isinstance(path, str) and path.lower().rstrip("/\\") in ("env:", "env:/"):
        return ENVIRONMENT_DATA
    named = bool(args.pos) or any(k in args.kw for k in ("path", "literalpath"))
    if path is UNKNOWN and not named:
        path = "."  # no path: the current directory
    a.out.read(path if path is not UNKNOWN else ".", "Get-ChildItem", listing=True)
    base = text_of(path)
    if base is None:
        return UNKNOWN
    pattern = text_of(args.kw.get("filter", args.kw.get("include"))) or "*"
    below = "/**/" if args.kw.get("recurse") else "/"
    # What it lists, as a glob: `$_.FullName` of each item is a path it matches.
    return (base.rstrip("/") + below + pattern,)


def _move(a: _PowerShell, args: Args, piped: object) -> object:
    destination = args.kw.get("destination", args.kw.get("newname", args.get(0)))
    source = _path_of(args)
    if "newname" in args.kw and isinstance(source, str) and isinstance(destination, str):
        destination = join_path((source.rsplit("/", 1)[0] if "/" in source else ".", destination))
    a.out.move(source, _ps_path(destination), "Move-Item")
    return None


def _copy(a: _PowerShell, args: Args, piped: object) -> object:
    a.out.copy(
        _path_of(args),
        _ps_path(args.kw.get("destination", args.get(0))),
        "Copy-Item",
        recursive=bool(args.kw.get("recurse")),
    )
    return None


def _expand_archive(a: _PowerShell, args: Args, piped: object) -> object:
    destination = args.kw.get("destinationpath", args.get(1, default=None))
    a.out.unpack(
        _path_of(args),
        "." if destination is None else _ps_path(destination),
        "Expand-Archive",
    )
    return None


def _compress_archive(a: _PowerShell, args: Args, piped: object) -> object:
    """Compress-Archive -Path A,B -DestinationPath x.zip: reads what it packs."""
    sources = args.kw.get("path", args.kw.get("literalpath", args.get(0)))
    for source in _as_list(sources):
        a.out.file(Action.READ, _ps_path(source), "Compress-Archive", ("recursive",))
    destination = args.kw.get("destinationpath", args.get(1, default=None))
    if destination is not None:
        a.out.write(_ps_path(destination), "Compress-Archive")
    return None


def _web_request(a: _PowerShell, args: Args, piped: object) -> object:
    url = args.kw.get("uri", args.get(0))
    method = (text_of(args.kw.get("method", "GET")) or "GET").upper()
    api = "Invoke-WebRequest"
    if "infile" in args.kw:
        path = _ps_path(args.kw["infile"])
        a.out.send(url, [Data(Origin.FILE, (a.out.target(path)[0],))], api)
        return Data(Origin.NETWORK)
    if "body" in args.kw or "form" in args.kw or method in ("POST", "PUT", "PATCH"):
        a.out.send(url, [args.kw.get("body"), args.kw.get("form")], api)
        return Data(Origin.NETWORK)
    saved = args.kw.get("outfile")
    return a.out.fetch(url, api, saved_to=_ps_path(saved) if saved is not None else None)


def _bits(a: _PowerShell, args: Args, piped: object) -> object:
    a.out.fetch(
        args.kw.get("source", UNKNOWN),
        "Start-BitsTransfer",
        saved_to=_ps_path(args.kw.get("destination", UNKNOWN)),
    )
    return None


def _invoke_expression(a: _PowerShell, args: Args, piped: object) -> object:
    code = args.kw.get("command", args.get(0, "", piped))
    if code is None:
        code = piped
    a.out.execute(code, "Invoke-Expression")
    return UNKNOWN


def _invoke_command(a: _PowerShell, args: Args, piped: object) -> object:
    block = args.kw.get("scriptblock", args.get(0))
    if "computername" in args.kw or "session" in args.kw:
        a.out.problem("runs commands on another machine (Invoke-Command -ComputerName)")
    if isinstance(block, Func):
        return a.inline(block, Args(_as_list(args.kw.get("argumentlist", ())), {}))
    if is_list(block) and len(block) == 2 and block[0] == "scriptblock":
        a.out.execute(block[1], "Invoke-Command")
    return UNKNOWN


def _start_process(a: _PowerShell, args: Args, piped: object) -> object:
    program = _ps_path(args.kw.get("filepath", UNKNOWN))
    arguments = args.kw.get("argumentlist", ())
    if "verb" in args.kw and (text_of(args.kw["verb"]) or "").lower() == "runas":
        a.out.privilege(0, "Start-Process -Verb RunAs")
    if isinstance(arguments, str):
        line = concat((program, " ", arguments)) if arguments else program
        a.out.spawn(line, "Start-Process")
    elif is_list(arguments):
        a.out.spawn((program, *arguments), "Start-Process")
    else:
        a.out.spawn(
            UNKNOWN if program is UNKNOWN else concat((program, " ", arguments)), "Start-Process"
        )
    return Handle("process")


def _stop_process(a: _PowerShell, args: Args, piped: object) -> object:
    target = args.kw.get("name", args.kw.get("id", args.get(0, "", piped)))
    for item in _as_list(target):
        a.out.kill(item, "Stop-Process")
    return None


def _set_location(a: _PowerShell, args: Args, piped: object) -> object:
    path = text_of(_path_of(args))
    a.out.cwd = a.out.target(path)[0] if path is not None else None
    if a.out.cwd == "?":
        a.out.cwd = None
    return None


def _new_object(a: _PowerShell, args: Args, piped: object) -> object:
    type_name = _type_name(text_of(args.kw.get("typename", UNKNOWN)) or "")
    arguments = _as_list(args.kw.get("argumentlist", ()))
    return _construct(a, type_name, arguments)


def _construct(a: _PowerShell, type_name: str, arguments: Sequence[object]) -> object:
    type_name = type_name.removeprefix("system.")
    if type_name in ("net.webclient",):
        return Handle("webclient")
    if type_name in ("net.sockets.tcpclient", "net.sockets.socket"):
        handle = a.new_handle("socket")
        if len(arguments) >= 2:
            a.sockets[handle.key] = arguments[0]
            a.out.connect(arguments[0], arguments[1], "TcpClient")
        return handle
    if type_name in ("net.httplistener", "net.sockets.tcplistener"):
        port = arguments[-1] if arguments else UNKNOWN
        a.out.listen(f"0.0.0.0:{text_of(port) or '?'}", type_name)
        return Handle("server")
    if type_name in ("io.streamreader",):
        return arguments[0] if arguments else UNKNOWN
    if type_name in ("text.asciiencoding", "text.utf8encoding"):
        return Ref("type:text.encoding::utf8")
    return UNKNOWN


_ITEM_PATHS = frozenset({"fullname", "pspath", "fullpath", "path"})


def _foreach(a: _PowerShell, args: Args, piped: object) -> object:
    block = args.kw.get("process", args.get(0))
    if not isinstance(block, Func):
        return UNKNOWN
    items = _as_list(piped) if is_list(piped) else None
    if items is not None and len(items) <= MAX_ITEMS and not a.cheap:
        return tuple(a.inline(block, Args((), {}), {"_": item}) for item in items)
    a.inline(block, Args((), {}), {"_": piped if not is_list(piped) else UNKNOWN})
    return UNKNOWN


def _where(a: _PowerShell, args: Args, piped: object) -> object:
    block = args.kw.get("filterscript", args.get(0))
    if isinstance(block, Func):
        a.inline(block, Args((), {}), {"_": UNKNOWN})
    return piped


def _item_property(a: _PowerShell, args: Args, piped: object) -> object:
    path = text_of(_path_of(args)) or ""
    hive = _MACHINE_HIVE.match(path)
    if hive:
        # HKLM is the machine's own configuration (Remote Desktop, Defender, services): a
        # change there is a change inside the system, spelt as a path under C:\Windows.
        key = path[hive.end() :].replace("\\", "/")
        a.out.write(f"/c/Windows/registry/HKLM/{key}", "Set-ItemProperty")
    if "run" in path.lower().replace("\\", "/").split("/"):
        a.out.effects.append(
            Effect(
                Action.PERSIST,
                path.replace("\\", "/"),
                Origin.LITERAL,
                (),
                frozenset(),
                "Set-ItemProperty",
                text_of(args.kw.get("value")) or "",
            )
        )
        a.out.spawn(args.kw.get("value", UNKNOWN), "registry Run key")
    return None


_MACHINE_HIVE = re2.compile(r"(?i)^(?:registry::)?(?:HKLM:?|HKEY_LOCAL_MACHINE)[\\/]*")


def _scheduled_task(a: _PowerShell, args: Args, piped: object) -> object:
    a.out.effects.append(
        Effect(
            Action.PERSIST,
            text_of(args.kw.get("taskname")) or "?",
            Origin.UNKNOWN,
            (),
            frozenset(),
            "Register-ScheduledTask",
        )
    )
    return None


def _execution_policy(a: _PowerShell, args: Args, piped: object) -> object:
    policy = (text_of(args.kw.get("executionpolicy")) or "").lower()
    if policy in ("bypass", "unrestricted"):
        a.out.effects.append(
            Effect(
                Action.DISABLE,
                "powershell execution policy",
                Origin.NONE,
                (),
                frozenset(),
                "Set-ExecutionPolicy",
            )
        )
    return None


def _defender(a: _PowerShell, args: Args, piped: object) -> object:
    switched = [k for k, v in args.kw.items() if k.startswith("disable") and v not in (False,)]
    excluded = [k for k in args.kw if k.startswith("exclusion")]
    if switched or excluded:
        a.out.effects.append(
            Effect(
                Action.DISABLE,
                "windows defender",
                Origin.NONE,
                (),
                frozenset({"security_tool"}),
                "Set-MpPreference",
            )
        )
    return None


def _join_path(a: _PowerShell, args: Args, piped: object) -> object:
    return _ps_path(join_path((args.kw.get("path", UNKNOWN), args.kw.get("childpath", UNKNOWN))))


_HANDLERS: dict[str, _Cmdlet] = {
    "remove-item": _remove,
    "set-content": _set_content(append=False),
    "add-content": _set_content(append=True),
    "out-file": _out_file,
    "clear-content": _clear_content,
    "new-item": _new_item,
    "get-content": _get_content,
    "get-item": _get_item,
    "get-childitem": _get_child_item,
    "move-item": _move,
    "rename-item": _move,
    "copy-item": _copy,
    "expand-archive": _expand_archive,
    "compress-archive": _compress_archive,
    "invoke-webrequest": _web_request,
    "invoke-restmethod": _web_request,
    "start-bitstransfer": _bits,
    "invoke-expression": _invoke_expression,
    "invoke-command": _invoke_command,
    "start-process": _start_process,
    "stop-process": _stop_process,
    "set-location": _set_location,
    "new-object": _new_object,
    "foreach-object": _foreach,
    "where-object": _where,
    "set-itemproperty": _item_property,
    "new-itemproperty": _item_property,
    "register-scheduledtask": _scheduled_task,
    "set-executionpolicy": _execution_policy,
    "set-mppreference": _defender,
    "add-mppreference": _defender,
    "join-path": _join_path,
}

_DotNet = Callable[[_PowerShell, Args], object]


def _from_base64(a: _PowerShell, args: Args) -> object:
    value = args.get(0)
    text = text_of(value)
    if text is None or (isinstance(value, Data) and value.text is None):
        return Data(Origin.DECODED)
    raw = b64decode(text)
    if raw is None:
        return Data(Origin.DECODED)
    return Data(Origin.DECODED, (), raw.decode("latin-1"))


def _scriptblock_create(a: _PowerShell, args: Args) -> object:
    return ("scriptblock", args.get(0))


def _invoke_script(a: _PowerShell, args: Args) -> object:
    a.out.execute(args.get(0), "InvokeScript")
    return UNKNOWN


def _file_method(kind: str) -> _DotNet:
    def handler(a: _PowerShell, args: Args) -> object:
        path = _ps_path(args.get(0))
        if kind == "read":
            a.out.read(path, "[IO.File]::Read")
            return Data(Origin.FILE, (a.out.target(path)[0],))
        if kind == "write":
            a.out.write(path, "[IO.File]::Write", args.get(1))
        elif kind == "append":
            a.out.write(path, "[IO.File]::Append", args.get(1), append=True)
        elif kind == "delete":
            a.out.delete(path, "[IO.File]::Delete")
        elif kind == "rmtree":
            a.out.delete(path, "[IO.Directory]::Delete", recursive=args.get(1) is True)
        elif kind == "move":
            a.out.move(path, _ps_path(args.get(1)), "[IO.File]::Move")
        elif kind == "copy":
            a.out.copy(path, _ps_path(args.get(1)), "[IO.File]::Copy")
        return None

    return handler


def _environment(a: _PowerShell, args: Args) -> object:
    return env_value(args.get(0))


def _webrequest_create(a: _PowerShell, args: Args) -> object:
    return a.out.fetch(args.get(0), "WebRequest.Create")


def _tcpclient_new(a: _PowerShell, args: Args) -> object:
    return _construct(a, "net.sockets.tcpclient", args.pos)


def _webclient_new(a: _PowerShell, args: Args) -> object:
    return Handle("webclient")


_DOTNET: dict[str, _DotNet] = {
    "type:convert::frombase64string": _from_base64,
    "type:scriptblock::create": _scriptblock_create,
    "type:management.automation.scriptblock::create": _scriptblock_create,
    "executioncontext.invokecommand.invokescript": _invoke_script,
    "type:io.file::readalltext": _file_method("read"),
    "type:io.file::readallbytes": _file_method("read"),
    "type:io.file::readalllines": _file_method("read"),
    "type:io.file::writealltext": _file_method("write"),
    "type:io.file::writeallbytes": _file_method("write"),
    "type:io.file::writealllines": _file_method("write"),
    "type:io.file::appendalltext": _file_method("append"),
    "type:io.file::delete": _file_method("delete"),
    "type:io.directory::delete": _file_method("rmtree"),
    "type:io.file::move": _file_method("move"),
    "type:io.file::copy": _file_method("copy"),
    "type:environment::getenvironmentvariable": _environment,
    "type:environment::getenvironmentvariables": lambda a, args: ENVIRONMENT_DATA,
    "type:environment::getfolderpath": lambda a, args: "~",
    "type:net.webrequest::create": _webrequest_create,
    "type:net.httpwebrequest::create": _webrequest_create,
    "type:net.sockets.tcpclient::new": _tcpclient_new,
    "type:net.webclient::new": _webclient_new,
    "type:diagnostics.process::start": lambda a, args: _start_process(
        a, Args((), {"filepath": args.get(0), "argumentlist": args.get(1, "", ())}), None
    ),
}

"""PHP: tree-sitter-php, walked with constant propagation.

Program execution (`system`, `exec`, `shell_exec`, `passthru`, `popen`, `proc_open`,
`pcntl_exec`, backticks), file functions, curl and URL wrappers, sockets
(`fsockopen`, `stream_socket_client`), remote includes and eval of decoded text
(`base64_decode`, `str_rot13`, `gzinflate`, `hex2bin`, `strrev`) become effects.
"""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from sidecar.code import apis
from sidecar.code.collector import Collector, Nested
from sidecar.code.syntax import parse, source_bytes
from sidecar.code.treewalk import Args, Func, Handle, Handler, TreeAnalyser, items_of
from sidecar.code.values import (
    ENVIRONMENT_DATA,
    MAX_ITEMS,
    UNKNOWN,
    Data,
    carried_through,
    concat,
    derived,
    env_value,
    host_of,
    is_list,
    printf,
    rot13,
    sources_of,
    text_of,
)
from sidecar.effects.model import CodeAnalysis, Origin


def analyse_php(code: str, nested: Nested, depth: int = 0) -> CodeAnalysis:
    out = Collector("php", nested, depth)
    data = source_bytes("php", code)
    tree = parse("php", data)
    _Php(data, out).run(tree.root_node)
    return out.result()


_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "0": "\0",
    "e": "\x1b",
    "v": "\v",
    "f": "\f",
    "$": "$",
    '"': '"',
    "\\": "\\",
}
_FUNCTIONS = frozenset(
    {"function_definition", "anonymous_function", "arrow_function", "method_declaration"}
)
_STATEMENTS = frozenset(
    {
        "program",
        "compound_statement",
        "if_statement",
        "else_clause",
        "else_if_clause",
        "while_statement",
        "do_statement",
        "for_statement",
        "try_statement",
        "catch_clause",
        "finally_clause",
        "switch_statement",
        "switch_block",
        "case_statement",
        "default_statement",
        "class_declaration",
        "declaration_list",
        "namespace_definition",
        "colon_block",
    }
)
_SUPERGLOBALS = ("_GET", "_POST", "_REQUEST", "_COOKIE", "_FILES")


class _Php(TreeAnalyser):
    language = "php"

    def __init__(self, source: bytes, out: Collector) -> None:
        super().__init__(source, out)
        self.user_functions: dict[str, Func] = {}
        self.curl: dict[int, dict[str, object]] = {}
        self.wired = False

    # --- statements -------------------------------------------------------------------

    def visit(self, node: Node) -> bool:
        kind = node.type
        if kind in _FUNCTIONS:
            if node.id not in self.done:
                func = self.function(node)
                name = node.child_by_field_name("name")
                if name is not None and kind == "function_definition":
                    self.user_functions[self.text(name).lower()] = func
            return True
        if kind == "foreach_statement":
            children = [
                c
                for c in node.named_children
                if c.type not in ("compound_statement", "colon_block")
            ]
            body = node.child_by_field_name("body")
            if len(children) >= 2:
                items = self.value(children[0])
                target = children[-1]
                if target.type == "pair":
                    target = target.named_children[-1]
                return self.loop(lambda item: self.bind(target, item), items, body)
            return False
        if kind in _STATEMENTS or kind in ("text", "php_tag", "text_interpolation", "comment"):
            return kind in ("text", "php_tag", "comment")
        if kind == "return_statement":
            children = node.named_children
            self.returned(self.value(children[0]) if children else None)
            return True
        self.value(node)
        return True

    def function(self, node: Node) -> Func:
        params: list[str] = []
        parameters = node.child_by_field_name("parameters")
        if parameters is not None:
            for part in parameters.named_children:
                name = part.child_by_field_name("name")
                params.append(self.text(name).lstrip("$") if name is not None else "")
        body = node.child_by_field_name("body")
        return self.define(Func(node, tuple(params), body))

    def is_expression_body(self, body: Node) -> bool:
        return body.type != "compound_statement"

    def bind(self, target: Node | None, value: object) -> None:
        if target is None:
            return
        if target.type == "variable_name":
            self.assign(self.text(target).lstrip("$"), value)
        elif target.type in ("list_literal", "array_creation_expression"):
            items = items_of(value)
            for index, part in enumerate(target.named_children):
                inner = part.named_children[0] if part.named_children else part
                self.bind(inner, items[index] if items and index < len(items) else UNKNOWN)
        else:
            self.value(target)

    # --- expressions ------------------------------------------------------------------

    def evaluate(self, node: Node) -> object:
        kind = node.type
        if kind in ("encapsed_string", "heredoc", "heredoc_body"):
            if kind == "heredoc":
                body = node.child_by_field_name("value")
                return self.string(body) if body is not None else ""
            return self.string(node)
        if kind in ("string", "nowdoc"):
            return self.single(node)
        if kind == "shell_command_expression":
            command = self.string(node)
            self.spawn(command, "`...`")
            return Data(Origin.UNKNOWN)
        if kind == "integer":
            text = self.text(node).replace("_", "")
            try:
                return (
                    int(text, 8)
                    if text.startswith("0") and text.isdigit() and len(text) > 1
                    else int(text, 0)
                )
            except ValueError:
                return UNKNOWN
        if kind == "boolean":
            return self.text(node).lower() == "true"
        if kind == "null":
            return None
        if kind == "variable_name":
            name = self.text(node).lstrip("$")
            if name == "_ENV":
                return ENVIRONMENT_DATA
            if name in _SUPERGLOBALS:
                return Data(Origin.NETWORK, ("(request)",))
            return self.lookup(name)
        if kind == "name":
            return self.text(node)
        if kind == "assignment_expression":
            value = self.value(node.child_by_field_name("right"))
            self.bind(node.child_by_field_name("left"), value)
            return value
        if kind == "augmented_assignment_expression":
            left = node.child_by_field_name("left")
            value = concat((self.value(left), self.value(node.child_by_field_name("right"))))
            self.bind(left, value)
            return value
        if kind == "binary_expression":
            operator_node = node.child_by_field_name("operator")
            symbol = self.text(operator_node) if operator_node is not None else ""
            first = self.value(node.child_by_field_name("left"))
            second = self.value(node.child_by_field_name("right"))
            if symbol == ".":
                return concat((first, second))
            if symbol in ("|", "+") and isinstance(first, int) and isinstance(second, int):
                return first | second if symbol == "|" else first + second
            return UNKNOWN
        if kind == "parenthesized_expression":
            children = node.named_children
            return self.value(children[-1]) if children else UNKNOWN
        if kind == "array_creation_expression":
            return self.array(node)
        if kind == "subscript_expression":
            children = node.named_children
            container = self.value(children[0]) if children else UNKNOWN
            key = self.value(children[1]) if len(children) > 1 else UNKNOWN
            if children and self.text(children[0]) in ("$_SERVER", "$_ENV"):
                return env_value(key)
            if isinstance(container, dict) and isinstance(key, str | int):
                return container.get(str(key), UNKNOWN)
            if is_list(container) and isinstance(key, int):
                items = items_of(container) or ()
                return items[key] if 0 <= key < len(items) else None
            return derived(container, None) if isinstance(container, Data) else UNKNOWN
        if kind == "function_call_expression":
            return self.call(node)
        if kind in (
            "member_call_expression",
            "scoped_call_expression",
            "nullsafe_member_call_expression",
        ):
            return self.method_call(node)
        if kind == "object_creation_expression":
            return UNKNOWN
        if kind in (
            "include_expression",
            "include_once_expression",
            "require_expression",
            "require_once_expression",
        ):
            children = node.named_children
            target = self.value(children[0]) if children else UNKNOWN
            location = text_of(target)
            if location is not None and "://" in location and host_of(location):
                self.out.execute(self.out.fetch(target, "include"), "include")
            elif location is None:
                self.out.problem("includes a file chosen at run time")
            return UNKNOWN
        if kind in _FUNCTIONS:
            return self.function(node)
        if kind == "echo_statement" or kind == "print_intrinsic":
            for child in node.named_children:
                self.value(child)
            return None
        if kind == "conditional_expression":
            values = [self.value(c) for c in node.named_children]
            if len(values) == 3 and values[1] == values[2]:
                return values[1]
            return UNKNOWN
        if kind == "cast_expression":
            children = node.named_children
            return self.value(children[-1]) if children else UNKNOWN
        for child in node.named_children:
            self.value(child)
        return UNKNOWN

    def string(self, node: Node) -> object:
        parts: list[object] = []
        for child in node.named_children:
            if child.type == "string_content":
                parts.append(self.text(child))
            elif child.type == "escape_sequence":
                parts.append(_unescape(self.text(child)))
            elif child.type == "heredoc_body":
                parts.append(self.string(child))
            elif child.type in ("heredoc_start", "heredoc_end"):
                continue
            else:
                parts.append(self.value(child))
        return concat(parts)

    def single(self, node: Node) -> object:
        parts = [self.text(c) for c in node.named_children if c.type == "string_content"]
        text = "".join(parts)
        return text.replace("\\'", "'").replace("\\\\", "\\")

    def array(self, node: Node) -> object:
        items: list[object] = []
        mapping: dict[str, object] = {}
        for element in node.named_children:
            children = element.named_children
            if len(children) == 2:
                key = self.value(children[0])
                mapping[str(key) if isinstance(key, str | int) else f"?{len(mapping)}"] = (
                    self.value(children[1])
                )
            elif children:
                items.append(self.value(children[0]))
        if mapping:
            mapping.update({str(i): v for i, v in enumerate(items)})
            return mapping
        return tuple(items) if len(items) <= MAX_ITEMS else UNKNOWN

    # --- calls ------------------------------------------------------------------------

    def arguments(self, node: Node | None) -> Args:
        if node is None:
            return Args((), {})
        pos: list[object] = []
        kw: dict[str, object] = {}
        for argument in node.named_children:
            children = argument.named_children
            name = argument.child_by_field_name("name") if argument.type == "argument" else None
            if argument.type == "argument" and name is not None and len(children) > 1:
                kw[self.text(name)] = self.value(children[-1])
                continue
            if argument.type == "argument" and children:
                pos.append(self.value(children[-1]))
            elif argument.type == "variadic_placeholder":
                pos.append(UNKNOWN)
            else:
                pos.append(self.value(argument))
        return Args(tuple(pos), kw)

    def call(self, node: Node) -> object:
        function = node.child_by_field_name("function")
        args = self.arguments(node.child_by_field_name("arguments"))
        if function is None:
            return UNKNOWN
        if function.type in ("name", "qualified_name"):
            name = self.text(function).lstrip("\\").rsplit("\\", 1)[-1].lower()
        else:
            target = self.value(function)
            if isinstance(target, Func):
                return self.inline(target, args)
            text = text_of(target)
            if text is None:
                self.out.problem("calls a function chosen at run time")
                return UNKNOWN
            name = text.lower()
        if name in self.user_functions:
            return self.inline(self.user_functions[name], args)
        handler = _API.get(name)
        if handler is not None:
            return handler(self, args)
        return carried_through((*args.pos, *args.kw.values()))

    def method_call(self, node: Node) -> object:
        obj = node.child_by_field_name("object") or node.child_by_field_name("scope")
        name_node = node.child_by_field_name("name")
        target = self.value(obj) if obj is not None else UNKNOWN
        name = self.text(name_node).lower() if name_node is not None else ""
        args = self.arguments(node.child_by_field_name("arguments"))
        if isinstance(target, str):
            handler = _API.get(f"{target.lower()}::{name}")
            if handler is not None:
                return handler(self, args)
        return UNKNOWN

    def spawn(self, command: object, api: str) -> None:
        if self.wired:
            self.out.stdio_to_socket()
        self.out.spawn(command, api)


def _unescape(sequence: str) -> str:
    body = sequence[1:]
    if not body:
        return ""
    if body[0] == "x":
        try:
            return chr(int(body[1:3], 16))
        except ValueError:
            return sequence
    if body[0] == "u":
        try:
            return chr(int(body[1:].strip("{}"), 16))
        except (ValueError, OverflowError):
            return sequence
    if body[0].isdigit():
        try:
            return chr(int(body[:3], 8))
        except ValueError:
            return sequence
    return _ESCAPES.get(body[0], sequence)


# --- the effect APIs ----------------------------------------------------------------------


def _exec(a: TreeAnalyser, args: Args) -> object:
    assert isinstance(a, _Php)
    a.spawn(args.get(0), "exec")
    return Data(Origin.UNKNOWN)


def _pcntl_exec(a: TreeAnalyser, args: Args) -> object:
    assert isinstance(a, _Php)
    rest = args.get(1, "", ())
    a.spawn((args.get(0), *rest) if is_list(rest) else UNKNOWN, "pcntl_exec")
    return None


def _proc_open(a: TreeAnalyser, args: Args) -> object:
    assert isinstance(a, _Php)
    descriptors = args.get(1)
    if isinstance(descriptors, dict) or is_list(descriptors):
        values = descriptors.values() if isinstance(descriptors, dict) else descriptors
        if any(isinstance(v, Handle) and v.kind == "socket" for v in values):
            a.wired = True
    command = args.get(0)
    a.spawn(command, "proc_open")
    return Handle("process", 0, command)


def _url_text(value: object) -> str | None:
    """What is known of a value that may be a URL (URL wrappers make file functions
    network functions)."""
    if isinstance(value, Data) and value.text is None:
        return value.partial
    return text_of(value)


def _file_get_contents(a: TreeAnalyser, args: Args) -> object:
    path = args.get(0)
    text = _url_text(path)
    if text is not None and "://" in text and not text.startswith("file://"):
        if text.startswith(("php://input", "php://stdin")):
            return Data(Origin.UNKNOWN)
        return a.out.fetch(path, "file_get_contents")
    a.out.read(path, "file_get_contents")
    return Data(Origin.FILE, (a.out.target(path)[0],))


def _file_put_contents(a: TreeAnalyser, args: Args) -> object:
    flags = args.get(2, "", 0)
    append = (isinstance(flags, int) and bool(flags & 8)) or flags == "FILE_APPEND"
    a.out.write(args.get(0), "file_put_contents", args.get(1), append=append)
    return None


def _fopen(a: TreeAnalyser, args: Args) -> object:
    path, mode = args.get(0), text_of(args.get(1)) or "r"
    text = _url_text(path)
    if text is not None and "://" in text and not text.startswith(("file://", "php://")):
        return a.out.fetch(path, "fopen")
    if any(c in mode for c in "wax+c"):
        index = a.out.write(path, "fopen", append="a" in mode, truncate="w" in mode)
        return Handle("wfile", index, path)
    a.out.read(path, "fopen")
    return Data(Origin.FILE, (a.out.target(path)[0],))


def _fwrite(a: TreeAnalyser, args: Args) -> object:
    handle = args.get(0)
    if isinstance(handle, Handle) and handle.kind == "wfile":
        a.out.add_content(handle.key, args.get(1))
    elif isinstance(handle, Handle) and handle.kind == "socket":
        a.out.send(handle.info, [args.get(1)], "fwrite")
    return None


def _fread(a: TreeAnalyser, args: Args) -> object:
    handle = args.get(0)
    if isinstance(handle, Handle) and handle.kind == "socket":
        return Data(Origin.NETWORK, (text_of(handle.info) or "?",))
    return handle if isinstance(handle, Data) else UNKNOWN


def _fsockopen(a: TreeAnalyser, args: Args) -> object:
    host = args.get(0)
    text = text_of(host)
    if text is not None and "://" in text:
        host = text.split("://", 1)[1]
    a.out.connect(host, args.get(1), "fsockopen")
    return Handle("socket", 0, host)


def _stream_socket_client(a: TreeAnalyser, args: Args) -> object:
    address = text_of(args.get(0))
    if address is None:
        a.out.connect(UNKNOWN, UNKNOWN, "stream_socket_client")
        return Handle("socket", 0, UNKNOWN)
    target = address.split("://", 1)[-1]
    host, _, port = target.rpartition(":")
    a.out.connect(host or target, port or UNKNOWN, "stream_socket_client")
    return Handle("socket", 0, host or target)


def _socket_connect(a: TreeAnalyser, args: Args) -> object:
    a.out.connect(args.get(1), args.get(2), "socket_connect")
    return True


def _curl_init(a: TreeAnalyser, args: Args) -> object:
    assert isinstance(a, _Php)
    handle = a.new_handle("curl")
    a.curl[handle.key] = {"url": args.get(0, "", UNKNOWN)}
    return handle


def _curl_setopt(a: TreeAnalyser, args: Args) -> object:
    assert isinstance(a, _Php)
    handle, option = args.get(0), text_of(args.get(1)) or ""
    if isinstance(handle, Handle) and handle.key in a.curl:
        a.curl[handle.key][option.upper()] = args.get(2)
    return True


def _curl_setopt_array(a: TreeAnalyser, args: Args) -> object:
    options = args.get(1)
    if isinstance(options, dict):
        for key, value in options.items():
            _curl_setopt(a, Args((args.get(0), key, value), {}))
    return True


def _curl_exec(a: TreeAnalyser, args: Args) -> object:
    assert isinstance(a, _Php)
    handle = args.get(0)
    if not isinstance(handle, Handle) or handle.key not in a.curl:
        return Data(Origin.NETWORK)
    options = a.curl[handle.key]
    url = options.get("CURLOPT_URL", options.get("url", UNKNOWN))
    data = options.get("CURLOPT_POSTFIELDS")
    if data is not None or options.get("CURLOPT_POST") or options.get("CURLOPT_UPLOAD"):
        a.out.send(url, [data, options.get("CURLOPT_INFILE")], "curl_exec")
        return Data(Origin.NETWORK)
    return a.out.fetch(url, "curl_exec")


def _stream_context(a: TreeAnalyser, args: Args) -> object:
    return args.get(0)


def _eval(a: TreeAnalyser, args: Args) -> object:
    a.out.execute(args.get(0), "eval")
    return UNKNOWN


def _assert(a: TreeAnalyser, args: Args) -> object:
    if isinstance(args.get(0), str | Data):  # PHP before 8 evaluates a string assertion
        a.out.execute(args.get(0), "assert")
    return None


def _create_function(a: TreeAnalyser, args: Args) -> object:
    a.out.execute(args.get(1), "create_function")
    return UNKNOWN


def _preg_replace(a: TreeAnalyser, args: Args) -> object:
    pattern = text_of(args.get(0))
    if pattern is not None and len(pattern) > 1:
        delimiter = pattern[0]
        modifiers = pattern.rsplit(delimiter, 1)[-1]
        if "e" in modifiers:  # /e evaluates the replacement as PHP
            a.out.execute(args.get(1), "preg_replace /e")
    return UNKNOWN


def _decode(kind: str) -> Handler:
    return apis.decode(kind, 0, binary=True)


def _str_rot13(a: TreeAnalyser, args: Args) -> object:
    value = args.get(0)
    text = text_of(value)
    return Data(Origin.DECODED, (), rot13(text)) if text is not None else Data(Origin.DECODED)


def _strrev(a: TreeAnalyser, args: Args) -> object:
    value = args.get(0)
    text = text_of(value)
    if text is None:
        return derived(value, None) if isinstance(value, Data) else UNKNOWN
    return derived(value, text[::-1])


def _implode(a: TreeAnalyser, args: Args) -> object:
    separator, pieces = args.get(0), args.get(1, "", None)
    if pieces is None:
        separator, pieces = "", separator
    items = items_of(pieces) or (list(pieces.values()) if isinstance(pieces, dict) else None)
    if items is None:
        return UNKNOWN
    parts: list[object] = []
    for index, item in enumerate(items):
        if index:
            parts.append(separator)
        parts.append(item)
    return concat(parts)


def _chr(a: TreeAnalyser, args: Args) -> object:
    number = args.get(0)
    return chr(number % 256) if isinstance(number, int) else UNKNOWN


def _getenv(a: TreeAnalyser, args: Args) -> object:
    return env_value(args.get(0)) if args.pos else ENVIRONMENT_DATA


def _json_encode(a: TreeAnalyser, args: Args) -> object:
    value = args.get(0)
    sources = sources_of(value)
    return (
        Data(Origin.UNKNOWN, sources) if sources else (value if isinstance(value, str) else UNKNOWN)
    )


def _kill(a: TreeAnalyser, args: Args) -> object:
    a.out.kill(args.get(0), "posix_kill")
    return None


def _mail(a: TreeAnalyser, args: Args) -> object:
    a.out.send(UNKNOWN, [args.get(2)], "mail")
    return True


def _unserialize(a: TreeAnalyser, args: Args) -> object:
    """unserialize() of data from elsewhere can run code (object injection)."""
    value = args.get(0)
    if isinstance(value, Data) and value.origin in (Origin.NETWORK, Origin.DECODED):
        a.out.execute(value, "unserialize")
    return UNKNOWN


def _text_method(value: object, method: Callable[[str], str]) -> object:
    return method(value) if isinstance(value, str) else UNKNOWN


def _sprintf(args: Args) -> object:
    template = args.get(0)
    return printf(template, args.pos[1:]) if isinstance(template, str) else UNKNOWN


_API: dict[str, Handler] = {
    "system": _exec,
    "exec": _exec,
    "shell_exec": _exec,
    "passthru": _exec,
    "popen": _exec,
    "proc_open": _proc_open,
    "pcntl_exec": _pcntl_exec,
    "unlink": apis.deletes(0, name="unlink"),
    "rmdir": apis.deletes(0, name="rmdir"),
    "rename": apis.moves(0, 1, name="rename"),
    "copy": apis.copies(0, 1, name="copy"),
    "chmod": apis.chmods(0, 1, name="chmod"),
    "chown": apis.chowns(0, name="chown"),
    "chgrp": apis.chowns(0, name="chgrp"),
    "symlink": lambda a, args: a.out.write(args.get(1), "symlink", args.get(0), flags=("link",)),
    "link": lambda a, args: a.out.write(args.get(1), "link", args.get(0), flags=("link",)),
    "mkdir": apis.writes(0, None, name="mkdir", flags=("directory",)),
    "touch": apis.writes(0, None, name="touch"),
    "file_put_contents": _file_put_contents,
    "file_get_contents": _file_get_contents,
    "file": _file_get_contents,
    "readfile": _file_get_contents,
    "fopen": _fopen,
    "fwrite": _fwrite,
    "fputs": _fwrite,
    "fread": _fread,
    "fgets": _fread,
    "stream_get_contents": _fread,
    "scandir": apis.reads(0, listing=True, name="scandir"),
    "glob": lambda a, args: (a.out.read(args.get(0), "glob", listing=True), (args.get(0),))[1],
    "opendir": apis.reads(0, listing=True, name="opendir"),
    "chdir": lambda a, args: setattr(
        a.out, "cwd", a.out.target(args.get(0))[0] if text_of(args.get(0)) else None
    ),
    "getcwd": lambda a, args: a.out.cwd or ".",
    "sys_get_temp_dir": apis.returns("/tmp"),  # noqa: S108
    "getenv": _getenv,
    "fsockopen": _fsockopen,
    "pfsockopen": _fsockopen,
    "stream_socket_client": _stream_socket_client,
    "socket_create": lambda a, args: Handle("rawsocket"),
    "socket_connect": _socket_connect,
    "socket_bind": lambda a, args: a.out.listen(
        f"{text_of(args.get(1)) or '0.0.0.0'}:"  # noqa: S104
        f"{text_of(args.get(2)) or '?'}",
        "socket_bind",
    ),
    "stream_socket_server": lambda a, args: a.out.listen(
        text_of(args.get(0)) or "?", "stream_socket_server"
    ),
    "curl_init": _curl_init,
    "curl_setopt": _curl_setopt,
    "curl_setopt_array": _curl_setopt_array,
    "curl_exec": _curl_exec,
    "stream_context_create": _stream_context,
    "mail": _mail,
    "eval": _eval,
    "assert": _assert,
    "create_function": _create_function,
    "preg_replace": _preg_replace,
    "base64_decode": _decode("base64"),
    "hex2bin": _decode("hex"),
    "str_rot13": _str_rot13,
    "gzinflate": apis.returns(Data(Origin.DECODED)),
    "gzuncompress": apis.returns(Data(Origin.DECODED)),
    "gzdecode": apis.returns(Data(Origin.DECODED)),
    "convert_uudecode": apis.returns(Data(Origin.DECODED)),
    "unserialize": _unserialize,
    "strrev": _strrev,
    "implode": _implode,
    "join": _implode,
    "chr": _chr,
    "urldecode": lambda a, args: apis.decode_value(args.get(0), "uri"),
    "rawurldecode": lambda a, args: apis.decode_value(args.get(0), "uri"),
    "json_encode": _json_encode,
    "serialize": _json_encode,
    "http_build_query": _json_encode,
    "posix_kill": _kill,
    "posix_setuid": apis.privileges(0, name="posix_setuid"),
    "posix_seteuid": apis.privileges(0, name="posix_seteuid"),
    "strtolower": lambda a, args: _text_method(args.get(0), str.lower),
    "trim": lambda a, args: _text_method(args.get(0), str.strip),
    "sprintf": lambda a, args: _sprintf(args),
}

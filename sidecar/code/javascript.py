"""JavaScript (Node, Deno, Bun): tree-sitter-javascript, walked with constant propagation.

Modules are followed from `require(...)`, `import ... from` and `await import(...)`, so
`const {execSync: x} = require("node:child_process"); x(cmd)` is a spawn however it
is named. Template strings, `+`, `path.join`, `os.homedir()` and `process.env.HOME`
fold; `atob`, `Buffer.from(s, "base64")` and `String.fromCharCode` decode.
"""

from __future__ import annotations

import posixpath
from typing import NamedTuple

from tree_sitter import Node

from sidecar.code import apis
from sidecar.code.collector import Collector, Nested
from sidecar.code.syntax import parse, source_bytes
from sidecar.code.treewalk import Args, Func, Handle, Handler, TreeAnalyser, items_of
from sidecar.code.values import (
    ANY_ADDRESS,
    ENVIRONMENT_DATA,
    MAX_ITEMS,
    TEMP_DIR,
    UNKNOWN,
    Data,
    Ref,
    concat,
    derived,
    env_value,
    is_list,
    join_path,
    sources_of,
    text_of,
)
from sidecar.effects.model import CodeAnalysis, Origin


def analyse_javascript(code: str, nested: Nested, depth: int = 0) -> CodeAnalysis:
    out = Collector("javascript", nested, depth)
    data = source_bytes("javascript", code)
    tree = parse("javascript", data)
    _JavaScript(data, out).run(tree.root_node)
    return out.result()


_MODULE_ALIASES = {
    "fs/promises": "fs",
    "node:fs/promises": "fs",
    "fs-extra": "fs",
    "graceful-fs": "fs",
    "https": "http",
    "http2": "http",
    "node-fetch": "fetch",
    "cross-fetch": "fetch",
    "undici": "fetch",
    "shelljs": "shelljs",
    "execa": "execa",
    "rimraf": "rimraf",
    "child-process-promise": "child_process",
    "tls": "net",
    "dgram": "net",
}
_GLOBALS = {
    "require": Ref("require"),
    "process": Ref("process"),
    "eval": Ref("eval"),
    "Function": Ref("Function"),
    "atob": Ref("atob"),
    "Buffer": Ref("Buffer"),
    "String": Ref("String"),
    "fetch": Ref("fetch.fetch"),
    "setTimeout": Ref("setTimeout"),
    "setInterval": Ref("setTimeout"),
    "Deno": Ref("Deno"),
    "Bun": Ref("Bun"),
    "decodeURIComponent": Ref("decodeURIComponent"),
    "unescape": Ref("decodeURIComponent"),
    "XMLHttpRequest": Ref("XMLHttpRequest"),
    "WebSocket": Ref("WebSocket"),
    "globalThis": Ref("globalThis"),
    "global": Ref("globalThis"),
    "__dirname": ".",
    "JSON": Ref("JSON"),
    "$": Ref("zx.$"),
    "Object": Ref("Object"),
    "await": Ref("await"),  # `await (x)` outside a known async function parses as a call
}
_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "function_expression",
        "arrow_function",
        "generator_function_declaration",
        "generator_function",
        "method_definition",
    }
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "b": "\b", "f": "\f", "v": "\v"}


class Method(NamedTuple):
    """obj.name, not yet called."""

    obj: object
    name: str


class _JavaScript(TreeAnalyser):
    language = "javascript"

    def __init__(self, source: bytes, out: Collector) -> None:
        super().__init__(source, out)
        self.globals.update(_GLOBALS)
        self.sockets: dict[int, object] = {}
        self.requests: dict[int, object] = {}  # XMLHttpRequest: the URL open() named

    # --- statements -------------------------------------------------------------------

    def visit(self, node: Node) -> bool:
        kind = node.type
        if kind in _FUNCTIONS:
            if node.id not in self.done:
                func = self.function(node)
                name = node.child_by_field_name("name")
                if name is not None and kind.endswith("declaration"):
                    self.assign(self.text(name), func)
            return True
        if kind == "variable_declarator":
            value_node = node.child_by_field_name("value")
            value = self.value(value_node) if value_node is not None else None
            self.bind(node.child_by_field_name("name"), value)
            return True
        if kind in ("expression_statement", "return_statement", "throw_statement"):
            for child in node.named_children:
                if child.type not in ("comment",):
                    value = self.value(child)
                    if kind == "return_statement":
                        self.returned(value)
            return True
        if kind == "import_statement":
            self.import_statement(node)
            return True
        if kind == "for_in_statement":
            right = node.child_by_field_name("right")
            left = node.child_by_field_name("left")
            iterable = self.value(right)
            operator = node.child_by_field_name("operator")
            if operator is not None and self.text(operator) == "in":
                iterable = tuple(iterable) if isinstance(iterable, dict) else UNKNOWN
            body = node.child_by_field_name("body")
            handled = self.loop(lambda item: self.bind(left, item), iterable, body)
            return handled
        if kind == "if_statement":
            self.value(node.child_by_field_name("condition"))
            alternative = node.child_by_field_name("alternative")
            self.branches([node.child_by_field_name("consequence"), alternative])
            return True
        if kind in ("while_statement", "do_statement", "for_statement"):
            self.forget(node)
            return False
        return False

    def forget(self, node: Node) -> None:
        """Names assigned in a loop change between iterations."""
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type in ("assignment_expression", "augmented_assignment_expression"):
                left = current.child_by_field_name("left")
                if left is not None and left.type == "identifier":
                    self.assign(self.text(left), UNKNOWN)
            if current.type not in _FUNCTIONS:
                stack.extend(current.named_children)

    def import_statement(self, node: Node) -> None:
        source = node.child_by_field_name("source")
        module = _module(text_of(self.value(source)) if source is not None else None)
        for clause in node.named_children:
            if clause.type != "import_clause":
                continue
            for part in clause.named_children:
                if part.type == "identifier":  # import fs from "fs"
                    self.assign(self.text(part), Ref(module))
                elif part.type == "namespace_import":
                    for name in part.named_children:
                        self.assign(self.text(name), Ref(module))
                elif part.type == "named_imports":
                    for spec in part.named_children:
                        imported = spec.child_by_field_name("name")
                        alias = spec.child_by_field_name("alias") or imported
                        if imported is not None and alias is not None:
                            self.assign(self.text(alias), Ref(f"{module}.{self.text(imported)}"))

    def bind(self, target: Node | None, value: object) -> None:
        if target is None:
            return
        if target.type == "identifier":
            self.assign(self.text(target), value)
        elif target.type == "object_pattern":
            for part in target.named_children:
                if part.type == "shorthand_property_identifier_pattern":
                    name = self.text(part)
                    self.assign(name, self.member(value, name))
                elif part.type == "pair_pattern":
                    key = part.child_by_field_name("key")
                    inner = part.child_by_field_name("value")
                    if key is not None:
                        self.bind(inner, self.member(value, self.text(key).strip("'\"")))
                elif part.type == "object_assignment_pattern":
                    left = part.child_by_field_name("left")
                    if left is not None:
                        self.bind(left, self.member(value, self.text(left)))
        elif target.type == "array_pattern":
            items = items_of(value)
            for index, part in enumerate(target.named_children):
                self.bind(part, items[index] if items and index < len(items) else UNKNOWN)
        elif target.type in ("member_expression", "subscript_expression"):
            self.value(target)
        elif target.type == "assignment_pattern":
            self.bind(target.child_by_field_name("left"), value)

    def function(self, node: Node) -> Func:
        params: list[str] = []
        parameters = node.child_by_field_name("parameters") or node.child_by_field_name("parameter")
        if parameters is not None:
            if parameters.type == "identifier":
                params.append(self.text(parameters))
            for part in parameters.named_children:
                if part.type == "identifier":
                    params.append(self.text(part))
                elif part.type == "assignment_pattern":
                    left = part.child_by_field_name("left")
                    params.append(self.text(left) if left is not None else "")
                elif part.type == "rest_pattern":
                    params.append(self.text(part).lstrip("."))
                else:
                    params.append("")
        return self.define(Func(node, tuple(params), node.child_by_field_name("body")))

    def is_expression_body(self, body: Node) -> bool:
        return body.type != "statement_block"

    # --- expressions ------------------------------------------------------------------

    def evaluate(self, node: Node) -> object:
        kind = node.type
        if kind == "string":
            return self.string(node)
        if kind == "template_string":
            return self.string(node)
        if kind == "number":
            return _number(self.text(node))
        if kind in ("true", "false"):
            return kind == "true"
        if kind in ("null", "undefined"):
            return None
        if kind == "identifier":
            return self.lookup(self.text(node))
        if kind in ("parenthesized_expression", "await_expression", "non_null_expression"):
            children = node.named_children
            return self.value(children[-1]) if children else UNKNOWN
        if kind == "sequence_expression":
            result: object = UNKNOWN
            for child in node.named_children:
                result = self.value(child)
            return result
        if kind == "call_expression":
            return self.call(node)
        if kind == "new_expression":
            constructor = self.value(node.child_by_field_name("constructor"))
            return self.invoke(
                constructor, self.arguments(node.child_by_field_name("arguments")), new=True
            )
        if kind == "member_expression":
            obj = self.value(node.child_by_field_name("object"))
            prop = node.child_by_field_name("property")
            return self.member(obj, self.text(prop) if prop is not None else "")
        if kind == "subscript_expression":
            obj = self.value(node.child_by_field_name("object"))
            index = self.value(node.child_by_field_name("index"))
            if isinstance(index, str):
                return self.member(obj, index)
            if isinstance(index, int | float) and (isinstance(obj, str) or is_list(obj)):
                position = int(index)
                return obj[position] if 0 <= position < len(obj) else None
            return derived(obj, None) if isinstance(obj, Data) else UNKNOWN
        if kind == "binary_expression":
            return self.binary(node)
        if kind == "unary_expression":
            operand = self.value(node.child_by_field_name("argument"))
            operator = node.child_by_field_name("operator")
            symbol = self.text(operator) if operator is not None else ""
            if symbol == "-" and isinstance(operand, int | float) and not isinstance(operand, bool):
                return -operand
            if symbol == "!" and isinstance(operand, bool | int | str):
                return not operand
            return UNKNOWN
        if kind == "ternary_expression":
            self.value(node.child_by_field_name("condition"))
            first = self.value(node.child_by_field_name("consequence"))
            second = self.value(node.child_by_field_name("alternative"))
            return first if first == second and type(first) is type(second) else UNKNOWN
        if kind in ("assignment_expression", "augmented_assignment_expression"):
            left = node.child_by_field_name("left")
            value = self.value(node.child_by_field_name("right"))
            if kind == "augmented_assignment_expression" and left is not None:
                operator = node.child_by_field_name("operator")
                if operator is not None and self.text(operator) == "+=":
                    value = concat((self.value(left), value))
                else:
                    value = UNKNOWN
            self.bind(left, value)
            return value
        if kind == "array":
            return self.array(node)
        if kind == "object":
            return self.obj(node)
        if kind in _FUNCTIONS:
            return self.function(node)
        if kind == "spread_element":
            children = node.named_children
            return self.value(children[0]) if children else UNKNOWN
        for child in node.named_children:
            self.value(child)
        return UNKNOWN

    def string(self, node: Node) -> object:
        parts: list[object] = []
        for child in node.named_children:
            if child.type == "string_fragment":
                parts.append(self.text(child))
            elif child.type == "escape_sequence":
                parts.append(_unescape(self.text(child)))
            elif child.type == "template_substitution":
                inner = child.named_children
                value = self.value(inner[0]) if inner else UNKNOWN
                parts.append(
                    value if not is_list(value) else ",".join(text_of(v) or "" for v in value)
                )
        return concat(parts)

    def array(self, node: Node) -> object:
        items: list[object] = []
        for child in node.named_children:
            if child.type == "spread_element":
                inner = child.named_children
                spread = items_of(self.value(inner[0])) if inner else None
                if spread is None:
                    return UNKNOWN
                items.extend(spread)
            elif child.type != "comment":
                items.append(self.value(child))
            if len(items) > MAX_ITEMS:
                return UNKNOWN
        return tuple(items)

    def obj(self, node: Node) -> object:
        mapping: dict[str, object] = {}
        for child in node.named_children:
            if child.type == "pair":
                key = child.child_by_field_name("key")
                value = self.value(child.child_by_field_name("value"))
                if key is None:
                    continue
                name = (
                    self.value(key)
                    if key.type in ("string", "computed_property_name")
                    else self.text(key)
                )
                mapping[name if isinstance(name, str) else f"?{len(mapping)}"] = value
            elif child.type == "shorthand_property_identifier":
                mapping[self.text(child)] = self.lookup(self.text(child))
            elif child.type == "spread_element":
                inner = child.named_children
                spread = self.value(inner[0]) if inner else UNKNOWN
                if isinstance(spread, dict):
                    mapping.update(spread)
                elif spread is not UNKNOWN:
                    mapping[f"...{len(mapping)}"] = spread
            elif child.type == "method_definition":
                self.function(child)
        return mapping

    def binary(self, node: Node) -> object:
        operator_node = node.child_by_field_name("operator")
        operator = self.text(operator_node) if operator_node is not None else ""
        left = self.value(node.child_by_field_name("left"))
        right = self.value(node.child_by_field_name("right"))
        if operator == "+":
            if _number_like(left) and _number_like(right):
                return left + right  # type: ignore[operator]
            return concat((left, right))
        if operator in ("||", "??"):
            if left is None or left is False or left == "":
                return right
            if isinstance(left, str | int | float) and not isinstance(left, bool):
                return left
            if isinstance(left, Data) and left.sources == ENVIRONMENT_DATA.sources:
                return right if isinstance(right, str) else UNKNOWN
            return UNKNOWN
        if operator in ("|", "&") and isinstance(left, int) and isinstance(right, int):
            return left | right if operator == "|" else left & right
        if operator in ("===", "==") and isinstance(left, str) and isinstance(right, str):
            return left == right
        return UNKNOWN

    # --- members and calls ------------------------------------------------------------

    def member(self, obj: object, name: str) -> object:
        if isinstance(obj, Ref):
            full = f"{obj.name}.{name}"
            if full in _CONSTANTS:
                return _CONSTANTS[full]
            if obj.name in ("process.env", "Bun.env"):
                return env_value(name)
            return Ref(_canonical(full))
        if isinstance(obj, dict):
            return obj.get(name, UNKNOWN)
        if isinstance(obj, Data):
            return obj  # response.body, data.toString: still that data
        if isinstance(obj, str) and name == "length":
            return len(obj)
        if isinstance(obj, str) and name == "js":
            return obj  # JXA: an Objective-C string's JavaScript value
        if isinstance(obj, Handle) and name in ("stdin", "stdout", "stderr"):
            return obj
        return Method(obj, name)

    def arguments(self, node: Node | None) -> Args:
        if node is None:
            return Args((), {})
        if node.type == "template_string":  # tag`...`: the template is the argument
            return Args((self.value(node),), {})
        items: list[object] = []
        for child in node.named_children:
            if child.type == "spread_element":
                inner = child.named_children
                spread = items_of(self.value(inner[0])) if inner else None
                items.extend(spread if spread is not None else (UNKNOWN,))
            elif child.type != "comment":
                items.append(self.value(child))
        return Args(tuple(items), {})

    def call(self, node: Node) -> object:
        callee = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        if callee is not None and callee.type == "import":  # await import("fs")
            args = self.arguments(arguments)
            name = text_of(args.get(0))
            return Ref(_module(name)) if name is not None else UNKNOWN
        if callee is not None and callee.type == "member_expression":
            # obj.name(...): a method call, even where obj.name alone reads a property
            target = callee.child_by_field_name("object")
            prop = callee.child_by_field_name("property")
            obj = self.value(target)
            self.done.add(callee.id)
            name = self.text(prop) if prop is not None else ""
            if not isinstance(obj, Ref | dict):
                return self.method(obj, name, self.arguments(arguments))
            func = self.member(obj, name)
        else:
            func = self.value(callee)
        args = self.arguments(arguments)
        return self.invoke(func, args, new=False)

    def invoke(self, func: object, args: Args, *, new: bool) -> object:
        if isinstance(func, Ref):
            name = func.name
            if name == "require":
                module = text_of(args.get(0))
                if module is None:
                    self.out.problem("requires a module chosen at run time")
                    return UNKNOWN
                return Ref(_module(module))
            handler = _API.get(name) or _API.get(_canonical(name))
            if handler is not None:
                return handler(self, args)
            return UNKNOWN
        if isinstance(func, Func):
            return self.inline(func, args)
        if isinstance(func, Method):
            return self.method(func.obj, func.name, args)
        if isinstance(func, Data):
            return func
        return UNKNOWN

    def method(self, obj: object, name: str, args: Args) -> object:
        first = args.get(0)
        if name == "then" and isinstance(first, Func):  # promise.then(value => ...)
            return self.inline(first, Args((obj,), {}))
        # JavaScript for Automation (osascript -l JavaScript): any application object's
        # doShellScript runs a shell line; $.NSHomeDirectory() is the home folder.
        if name == "doShellScript":
            self.out.spawn(first, "doShellScript")
            return Data(Origin.UNKNOWN)
        if name == "NSHomeDirectory":
            return "~"
        if isinstance(obj, str | Data):
            return _string_method(obj, name, args)
        if is_list(obj):
            assert isinstance(obj, tuple)
            if name == "join":
                separator = text_of(first) if args.pos else ","
                parts: list[object] = []
                for index, item in enumerate(obj):
                    if index:
                        parts.append(separator if separator is not None else UNKNOWN)
                    parts.append(item)
                return concat(parts)
            if name == "reverse":
                return tuple(reversed(obj))
            if name == "map" and isinstance(first, Func | Ref):
                return tuple(self.invoke(first, Args((item,), {}), new=False) for item in obj)
            if name == "forEach" and isinstance(first, Func):
                for item in obj:
                    self.inline(first, Args((item,), {}))
                return None
            if name in ("concat",):
                more = items_of(first)
                return obj + more if more is not None else UNKNOWN
            return UNKNOWN
        if isinstance(obj, Handle):
            return self.handle_method(obj, name, args)
        if isinstance(obj, Func) and name in ("call", "apply", "bind"):
            return self.inline(obj, Args(args.pos[1:], {}))
        if isinstance(obj, dict) and isinstance(obj.get(name), Func):
            method = obj[name]
            assert isinstance(method, Func)
            return self.inline(method, args)
        return UNKNOWN

    def handle_method(self, handle: Handle, name: str, args: Args) -> object:
        first = args.get(0)
        if handle.kind == "socket":
            if name == "connect":
                port, host = first, args.get(1, "", "localhost")
                if isinstance(first, dict):
                    port, host = first.get("port", UNKNOWN), first.get("host", "localhost")
                self.sockets[handle.key] = host
                self.out.connect(host, port, "net.Socket.connect")
                return handle
            if name in ("write", "end", "send") and args.pos:
                self.out.send(self.sockets.get(handle.key, handle.info), [first], f"socket.{name}")
                return None
            if name == "pipe":
                if isinstance(first, Handle) and first.kind == "process":
                    self.out.stdio_to_socket()
                return first
            if name == "on" and isinstance(args.get(1), Func):
                func = args.get(1)
                assert isinstance(func, Func)
                self.inline(func, Args((Data(Origin.NETWORK, (text_of(handle.info) or "?",)),), {}))
                return handle
            return handle
        if handle.kind == "server" and name == "listen":
            port = first
            host = args.get(1) if isinstance(args.get(1), str) else ""
            self.out.listen(f"{host or ANY_ADDRESS}:{text_of(port) or '?'}", "listen")
            return handle
        if handle.kind == "process":
            if name == "pipe" and isinstance(first, Handle) and first.kind == "socket":
                self.out.stdio_to_socket()
            if name in ("write", "end") and args.pos and handle.info is not None:
                self.out.feed(handle.info, first, "child stdin")
            return handle
        if handle.kind in ("request", "xhr"):
            return self.request_method(handle, name, args)
        if handle.kind == "wfile" and name in ("write", "end") and args.pos:
            self.out.add_content(handle.key, first)
            return None
        if handle.kind == "command" and name in ("output", "outputSync", "spawn", "spawnSync"):
            self.out.spawn(handle.info, "Deno.Command")
            return Data(Origin.UNKNOWN)
        return UNKNOWN

    def request_method(self, handle: Handle, name: str, args: Args) -> object:
        """An HTTP request object: its body goes to its host. XMLHttpRequest names the
        host in `open(method, url)` and carries the body in `send(x)`."""
        if handle.kind == "xhr" and name == "open":
            self.requests[handle.key] = args.get(1)
            return None
        host = self.requests.get(handle.key, handle.info) if handle.kind == "xhr" else handle.info
        if name in ("write", "end", "send") and _has_body(args):
            self.out.send(host, [args.get(0)], f"{handle.kind}.{name}")
        elif name == "send" and handle.kind == "xhr":
            self.out.fetch(host, "xhr.send")
        return handle


def _has_body(args: Args) -> bool:
    """write(x) / end(x) / send(x) with data, not end() or end(callback)."""
    first = args.get(0, "", None)
    return first is not None and not isinstance(first, Func) and first != ""


def _module(name: str | None) -> str:
    if name is None:
        return "?"
    name = name.removeprefix("node:")
    return _MODULE_ALIASES.get(name, name)


def _canonical(name: str) -> str:
    """One name per API: fs.promises.rm and fs.rmSync are fs.rm; globalThis.eval is eval."""
    if name.startswith("fs.promises."):
        name = "fs." + name.removeprefix("fs.promises.")
    if name.startswith("globalThis."):
        known = _GLOBALS.get(name.removeprefix("globalThis."))
        if isinstance(known, Ref):
            return known.name
    if name.endswith("Sync") and name.split(".")[0] in ("fs", "child_process"):
        return name[: -len("Sync")]
    return name


def _number(text: str) -> object:
    cleaned = text.replace("_", "")
    try:
        if cleaned.lower().startswith(("0x", "0o", "0b")):
            return int(cleaned, 0)
        if cleaned.startswith("0") and cleaned.isdigit() and len(cleaned) > 1:
            return int(cleaned, 8)
        number = float(cleaned)
        return int(number) if number.is_integer() and abs(number) < 2**53 else number
    except ValueError:
        return UNKNOWN


def _number_like(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _unescape(sequence: str) -> str:
    body = sequence[1:]
    if not body:
        return ""
    if body[0] == "x" and len(body) == 3:
        try:
            return chr(int(body[1:], 16))
        except ValueError:
            return body
    if body[0] == "u":
        digits = body[1:].strip("{}")
        try:
            return chr(int(digits, 16))
        except (ValueError, OverflowError):
            return body
    if body[0] in "\r\n":
        return ""
    return _ESCAPES.get(body[0], body)


def _string_method(obj: str | Data, name: str, args: Args) -> object:
    text = obj if isinstance(obj, str) else obj.text
    first = args.get(0)
    if name == "toString":
        encoding = text_of(first) if args.pos else None
        if encoding in ("base64", "base64url", "hex"):
            # Encoded data still carries what it was made of (an encoded environment).
            return derived(obj, None) if isinstance(obj, Data) else UNKNOWN
        if isinstance(obj, Data) and obj.text is not None and encoding in (None, "utf8", "utf-8"):
            raw = obj.text.encode("latin-1", "replace")
            return derived(obj, raw.decode("utf-8", "replace"))
        return obj
    if text is None:
        return derived(obj, None) if isinstance(obj, Data) else UNKNOWN
    if name == "split":
        separator = text_of(first)
        if separator is None:
            return UNKNOWN
        pieces = list(text) if separator == "" else text.split(separator)
        if len(pieces) > MAX_ITEMS:
            return UNKNOWN
        return tuple(derived(obj, p) for p in pieces)
    if name in ("replace", "replaceAll") and isinstance(first, str):
        second = args.get(1)
        if isinstance(second, str):
            count = 1 if name == "replace" else -1
            return derived(obj, text.replace(first, second, count))
        return UNKNOWN
    if name in ("trim", "trimStart", "trimEnd"):
        method = {"trim": str.strip, "trimStart": str.lstrip, "trimEnd": str.rstrip}[name]
        return derived(obj, method(text))
    if name in ("toLowerCase", "toUpperCase"):
        return derived(obj, text.lower() if name == "toLowerCase" else text.upper())
    if name == "concat":
        return concat((obj, *args.pos))
    if name in ("slice", "substring", "substr") and all(isinstance(a, int) for a in args.pos):
        numbers = [int(a) for a in args.pos]  # type: ignore[call-overload]
        if name == "substr" and len(numbers) == 2:
            numbers = [numbers[0], numbers[0] + numbers[1]]
        return derived(obj, text[slice(*numbers[:2])])
    if name in ("startsWith", "endsWith", "includes") and isinstance(first, str):
        return {
            "startsWith": text.startswith,
            "endsWith": text.endswith,
            "includes": text.__contains__,
        }[name](first)
    return derived(obj, None) if isinstance(obj, Data) else UNKNOWN


# --- the effect APIs ----------------------------------------------------------------------

_CONSTANTS: dict[str, object] = {
    "process.env.HOME": "~",
    "Bun.env.HOME": "~",
    "path.sep": "/",
    "process.platform": "linux",
    "process.execPath": "node",
}


def _home(a: TreeAnalyser, args: Args) -> object:
    return "~"


def _path_join(a: TreeAnalyser, args: Args) -> object:
    joined = join_path(args.pos)
    if joined is UNKNOWN:
        parts: list[object] = []
        for index, part in enumerate(args.pos):
            if index:
                parts.append("/")
            parts.append(part)
        return concat(parts)
    return posixpath.normpath(joined) if isinstance(joined, str) and joined else joined


def _path_resolve(a: TreeAnalyser, args: Args) -> object:
    joined = join_path(args.pos) if args.pos else "."
    return posixpath.normpath(joined) if isinstance(joined, str) and joined else joined


def _exec(a: TreeAnalyser, args: Args) -> object:
    command = args.get(0)
    a.out.spawn(command, "child_process.exec")
    return Handle("process", 0, command)


def _spawn(a: TreeAnalyser, args: Args) -> object:
    return apis.spawns(0, argv=1, name="child_process.spawn")(a, args)


def _fork(a: TreeAnalyser, args: Args) -> object:
    path = args.get(0)
    a.out.spawn(("node", path) if isinstance(path, str) else UNKNOWN, "child_process.fork")
    return Handle("process", 0, None)


def _eval(a: TreeAnalyser, args: Args) -> object:
    a.out.execute(args.get(0), "eval")
    return UNKNOWN


def _function(a: TreeAnalyser, args: Args) -> object:
    """new Function(..., body): the body is code."""
    if args.pos:
        a.out.execute(args.pos[-1], "Function")
    return UNKNOWN


def _set_timeout(a: TreeAnalyser, args: Args) -> object:
    first = args.get(0)
    if isinstance(first, str | Data):  # setTimeout("code") evaluates the string
        a.out.execute(first, "setTimeout")
    elif isinstance(first, Func):
        assert isinstance(a, _JavaScript)
        a.inline(first, Args(args.pos[2:], {}))
    return None


def _atob(a: TreeAnalyser, args: Args) -> object:
    return apis.decode_value(args.get(0), "base64", binary=True)


def _buffer_from(a: TreeAnalyser, args: Args) -> object:
    value, encoding = args.get(0), text_of(args.get(1, "", "utf8"))
    if encoding in ("base64", "base64url", "hex"):
        return apis.decode_value(value, encoding, binary=True)
    items = items_of(value)
    if items is not None and all(isinstance(i, int) and 0 <= i < 256 for i in items):
        return Data(Origin.DECODED, (), "".join(chr(int(i)) for i in items))  # type: ignore[call-overload]
    return value if isinstance(value, str | Data) else UNKNOWN


def _from_char_code(a: TreeAnalyser, args: Args) -> object:
    if args.pos and all(isinstance(i, int) and 0 <= i < 0x110000 for i in args.pos):
        return Data(Origin.DECODED, (), "".join(chr(int(i)) for i in args.pos))  # type: ignore[call-overload]
    return Data(Origin.DECODED)


def _fetch(a: TreeAnalyser, args: Args) -> object:
    url, options = args.get(0), args.get(1, "", {})
    if isinstance(options, dict):
        method = (text_of(options.get("method", "GET")) or "GET").upper()
        body = options.get("body")
        if body is not None or method in ("POST", "PUT", "PATCH"):
            a.out.send(url, [body], "fetch")
            return Data(Origin.NETWORK)
    return a.out.fetch(url, "fetch")


def _axios(verb: str) -> Handler:
    def handler(a: TreeAnalyser, args: Args) -> object:
        url = args.get(0)
        if verb in ("post", "put", "patch"):
            a.out.send(url, [args.get(1, "", None)], f"axios.{verb}")
            return Data(Origin.NETWORK)
        params = args.option("params")
        if params is not None and sources_of(params):
            a.out.send(url, [params], f"axios.{verb}")
            return Data(Origin.NETWORK)
        return a.out.fetch(url, f"axios.{verb}")

    return handler


def _http_request(a: TreeAnalyser, args: Args) -> object:
    """http(s).request(options | url[, options][, callback]): a request whose body is what
    `.write(x)` / `.end(x)` carry (handled in `handle_method`), sent to the request's host."""
    first, second = args.get(0), args.get(1, "", None)
    options = first if isinstance(first, dict) else second if isinstance(second, dict) else {}
    url = first
    if isinstance(first, dict):
        url = first.get("hostname", first.get("host", first.get("url", UNKNOWN)))
    method = (text_of(options.get("method", "GET")) or "GET").upper()
    if method not in _BODY_METHODS:
        a.out.fetch(url, "http.request")
    return a.new_handle("request", url)


def _http_get(a: TreeAnalyser, args: Args) -> object:
    """http(s).get(...): a download, and a request that `.write(x)` still sends with."""
    first = args.get(0)
    url = first.get("hostname", first.get("host", UNKNOWN)) if isinstance(first, dict) else first
    a.out.fetch(url, "http.get")
    return a.new_handle("request", url)


def _client_call(verb: str, api: str) -> Handler:
    """got/ky/needle/superagent-style clients: `client.post(url, body | {body, json, form})`;
    superagent's `.send(x)` on the returned request sends too."""

    def handler(a: TreeAnalyser, args: Args) -> object:
        url, second = args.get(0), args.get(1, "", None)
        if isinstance(url, dict):
            url, second = url.get("url", url.get("uri", UNKNOWN)), url
        body: object = second
        if isinstance(second, dict) and any(k in second for k in _BODY_KEYS):
            body = next(second[k] for k in _BODY_KEYS if k in second)
        elif isinstance(second, dict) and api in ("got", "ky", "request"):
            body = None  # an options object, no body
        if verb in _BODY_METHODS and body is not None:
            a.out.send(url, [body], f"{api}.{verb.lower()}")
        elif verb not in _BODY_METHODS:
            a.out.fetch(url, f"{api}.{verb.lower()}")
        return a.new_handle("request", url)

    return handler


_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_BODY_KEYS = ("body", "json", "form", "data", "searchParams", "formData")


def _net_connect(a: TreeAnalyser, args: Args) -> object:
    first = args.get(0)
    port, host = first, args.get(1, "", "localhost")
    if isinstance(first, dict):
        port, host = first.get("port", UNKNOWN), first.get("host", "localhost")
    if isinstance(host, Func):
        host = "localhost"
    a.out.connect(host, port, "net.connect")
    assert isinstance(a, _JavaScript)
    handle = a.new_handle("socket", host)
    a.sockets[handle.key] = host
    return handle


def _net_socket(a: TreeAnalyser, args: Args) -> object:
    return a.new_handle("socket")


def _server(a: TreeAnalyser, args: Args) -> object:
    return a.new_handle("server")


def _deno_run(a: TreeAnalyser, args: Args) -> object:
    options = args.get(0)
    command = options.get("cmd", UNKNOWN) if isinstance(options, dict) else UNKNOWN
    a.out.spawn(command, "Deno.run")
    return Handle("process", 0, command)


def _deno_command(a: TreeAnalyser, args: Args) -> object:
    program, options = args.get(0), args.get(1, "", {})
    rest = options.get("args", ()) if isinstance(options, dict) else UNKNOWN
    command = (program, *rest) if is_list(rest) else UNKNOWN
    return Handle("command", 0, command)


def _bun_spawn(a: TreeAnalyser, args: Args) -> object:
    first = args.get(0)
    command = first.get("cmd", UNKNOWN) if isinstance(first, dict) else first
    a.out.spawn(command, "Bun.spawn")
    return Handle("process", 0, command)


def _zx(a: TreeAnalyser, args: Args) -> object:
    a.out.spawn(args.get(0), "$`...`")
    return Data(Origin.UNKNOWN)


def _xhr(a: TreeAnalyser, args: Args) -> object:
    return a.new_handle("xhr")


def _json_stringify(a: TreeAnalyser, args: Args) -> object:
    value = args.get(0)
    if value in (Ref("process.env"), Ref("Bun.env")):
        return ENVIRONMENT_DATA
    sources = sources_of(value)
    if sources:
        return Data(Origin.UNKNOWN, sources)
    return value if isinstance(value, str) else UNKNOWN


def _write_stream(a: TreeAnalyser, args: Args) -> object:
    path, options = args.get(0), args.get(1, "", {})
    flags = text_of(options.get("flags", "w")) if isinstance(options, dict) else "w"
    index = a.out.write(path, "fs.createWriteStream", append=(flags or "").startswith("a"))
    return Handle("wfile", index, path)


def _open_sync(a: TreeAnalyser, args: Args) -> object:
    path, flags = args.get(0), text_of(args.get(1, "", "r"))
    if flags is None or any(c in flags for c in "wa+"):
        index = a.out.write(path, "fs.open", append=(flags or "").startswith("a"))
        return Handle("wfile", index, path)
    a.out.read(path, "fs.open")
    return Data(Origin.FILE, (a.out.target(path)[0],))


def _mkdir(a: TreeAnalyser, args: Args) -> object:
    a.out.write(args.get(0), "fs.mkdir", flags=("directory",))
    return None


def _symlink(a: TreeAnalyser, args: Args) -> object:
    a.out.write(args.get(1), "fs.symlink", args.get(0), flags=("link",))
    return None


def _process_env(a: TreeAnalyser, args: Args) -> object:
    return ENVIRONMENT_DATA


_API: dict[str, Handler] = {
    # files
    "fs.readFile": apis.reads(0, name="fs.readFile"),
    "fs.createReadStream": apis.reads(0, name="fs.createReadStream"),
    "fs.readdir": apis.reads(0, listing=True, name="fs.readdir"),
    "fs.writeFile": apis.writes(0, 1, name="fs.writeFile"),
    "fs.outputFile": apis.writes(0, 1, name="fs.outputFile"),
    "fs.appendFile": apis.writes(0, 1, append=True, name="fs.appendFile"),
    "fs.truncate": apis.writes(0, None, name="fs.truncate", flags=("truncate",)),
    "fs.createWriteStream": _write_stream,
    "fs.open": _open_sync,
    "fs.unlink": apis.deletes(0, name="fs.unlink"),
    "fs.rm": apis.deletes(0, recursive="recursive", name="fs.rm"),
    "fs.rmdir": apis.deletes(0, recursive="recursive", name="fs.rmdir"),
    "fs.remove": apis.deletes(0, recursive=True, name="fs.remove"),
    "fs.emptyDir": apis.deletes(0, recursive=True, name="fs.emptyDir"),
    "rimraf": apis.deletes(0, recursive=True, name="rimraf"),
    "rimraf.sync": apis.deletes(0, recursive=True, name="rimraf"),
    "rimraf.rimraf": apis.deletes(0, recursive=True, name="rimraf"),
    "rimraf.rimrafSync": apis.deletes(0, recursive=True, name="rimraf"),
    "fs.rename": apis.moves(0, 1, name="fs.rename"),
    "fs.move": apis.moves(0, 1, name="fs.move"),
    "fs.copyFile": apis.copies(0, 1, name="fs.copyFile"),
    "fs.cp": apis.copies(0, 1, recursive="recursive", name="fs.cp"),
    "fs.copy": apis.copies(0, 1, recursive=True, name="fs.copy"),
    "fs.chmod": apis.chmods(0, 1, name="fs.chmod"),
    "fs.lchmod": apis.chmods(0, 1, name="fs.chmod"),
    "fs.chown": apis.chowns(0, name="fs.chown"),
    "fs.lchown": apis.chowns(0, name="fs.chown"),
    "fs.symlink": _symlink,
    "fs.link": _symlink,
    "fs.mkdir": _mkdir,
    "fs.mkdirs": _mkdir,
    "fs.ensureDir": _mkdir,
    "Deno.readTextFile": apis.reads(0, name="Deno.readTextFile"),
    "Deno.readFile": apis.reads(0, name="Deno.readFile"),
    "Deno.writeTextFile": apis.writes(0, 1, name="Deno.writeTextFile"),
    "Deno.writeFile": apis.writes(0, 1, name="Deno.writeFile"),
    "Deno.remove": apis.deletes(0, recursive="recursive", name="Deno.remove"),
    "Deno.rename": apis.moves(0, 1, name="Deno.rename"),
    "Deno.chmod": apis.chmods(0, 1, name="Deno.chmod"),
    "Deno.readTextFileSync": apis.reads(0, name="Deno.readTextFile"),
    "Deno.writeTextFileSync": apis.writes(0, 1, name="Deno.writeTextFile"),
    "Deno.removeSync": apis.deletes(0, recursive="recursive", name="Deno.remove"),
    "Bun.write": apis.writes(0, 1, name="Bun.write"),
    "Bun.file": apis.reads(0, name="Bun.file"),
    "shelljs.rm": apis.deletes(1, recursive=True, name="shelljs.rm"),
    "shelljs.exec": apis.spawns(0, name="shelljs.exec"),
    # paths and the environment
    "os.homedir": _home,
    "os.tmpdir": lambda a, args: TEMP_DIR,
    "path.join": _path_join,
    "path.resolve": _path_resolve,
    "path.normalize": _path_resolve,
    "path.dirname": lambda a, args: _dirname(args.get(0)),
    "process.cwd": lambda a, args: a.out.cwd or ".",
    "process.chdir": lambda a, args: _chdir(a, args.get(0)),
    "Deno.env.get": lambda a, args: env_value(args.get(0)),
    "Deno.env.toObject": _process_env,
    "Deno.homeDir": _home,
    "zx.$.NSHomeDirectory": _home,  # JXA: `$` is the Objective-C bridge there
    "JSON.stringify": _json_stringify,
    # processes
    "child_process.exec": _exec,
    "child_process.execFile": apis.spawns(0, argv=1, name="child_process.execFile"),
    "child_process.spawn": _spawn,
    "child_process.fork": _fork,
    "execa": apis.spawns(0, argv=1, name="execa"),
    "execa.execa": apis.spawns(0, argv=1, name="execa"),
    "execa.execaCommand": apis.spawns(0, name="execa"),
    "execa.$": _zx,
    "zx.$": _zx,
    "Bun.$": _zx,
    "Deno.run": _deno_run,
    "Deno.Command": _deno_command,
    "Bun.spawn": _bun_spawn,
    "Bun.spawnSync": _bun_spawn,
    "process.kill": apis.kills(0, name="process.kill"),
    "Deno.kill": apis.kills(0, name="Deno.kill"),
    "process.setuid": apis.privileges(0, name="process.setuid"),
    "process.setgid": apis.privileges(0, name="process.setgid"),
    "process.seteuid": apis.privileges(0, name="process.seteuid"),
    # code
    "eval": _eval,
    "await": apis.identity(0),
    "Function": _function,
    "vm.runInThisContext": _eval,
    "vm.runInNewContext": _eval,
    "vm.runInContext": _eval,
    "vm.Script": _eval,
    "setTimeout": _set_timeout,
    "atob": _atob,
    "Buffer.from": _buffer_from,
    "String.fromCharCode": _from_char_code,
    "decodeURIComponent": lambda a, args: apis.decode_value(args.get(0), "uri"),
    # network
    "fetch.fetch": _fetch,
    "fetch": _fetch,
    "fetch.default": _fetch,
    "http.get": _http_get,
    "http.request": _http_request,
    "axios.get": _axios("get"),
    "axios.head": _axios("head"),
    "axios.post": _axios("post"),
    "axios.put": _axios("put"),
    "axios.patch": _axios("patch"),
    "axios": _fetch,
    "got.get": _client_call("GET", "got"),
    "got.post": _client_call("POST", "got"),
    "got.put": _client_call("PUT", "got"),
    "got.patch": _client_call("PATCH", "got"),
    "got.delete": _client_call("DELETE", "got"),
    "ky.get": _client_call("GET", "ky"),
    "ky.post": _client_call("POST", "ky"),
    "ky.put": _client_call("PUT", "ky"),
    "ky.patch": _client_call("PATCH", "ky"),
    "ky.delete": _client_call("DELETE", "ky"),
    "needle.get": _client_call("GET", "needle"),
    "needle.post": _client_call("POST", "needle"),
    "needle.put": _client_call("PUT", "needle"),
    "needle.patch": _client_call("PATCH", "needle"),
    "needle.delete": _client_call("DELETE", "needle"),
    "superagent.get": _client_call("GET", "superagent"),
    "superagent.post": _client_call("POST", "superagent"),
    "superagent.put": _client_call("PUT", "superagent"),
    "superagent.patch": _client_call("PATCH", "superagent"),
    "superagent.delete": _client_call("DELETE", "superagent"),
    "request.get": _client_call("GET", "request"),
    "request.post": _client_call("POST", "request"),
    "request.put": _client_call("PUT", "request"),
    "request.patch": _client_call("PATCH", "request"),
    "request.delete": _client_call("DELETE", "request"),
    "net.connect": _net_connect,
    "net.createConnection": _net_connect,
    "net.Socket": _net_socket,
    "net.createServer": _server,
    "http.createServer": _server,
    "express": _server,
    "WebSocket": apis.connects(0, 1, name="WebSocket"),
    "XMLHttpRequest": _xhr,
    "Deno.connect": lambda a, args: _net_connect(
        a, Args((args.option("port", UNKNOWN), args.option("hostname", "localhost")), {})
    ),
}


def _dirname(path: object) -> object:
    return posixpath.dirname(path) if isinstance(path, str) else UNKNOWN


def _chdir(a: TreeAnalyser, path: object) -> None:
    text = text_of(path)
    a.out.cwd = a.out.target(path)[0] if text is not None else None
    if a.out.cwd == "?":
        a.out.cwd = None

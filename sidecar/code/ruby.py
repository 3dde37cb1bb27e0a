"""Ruby: tree-sitter-ruby, walked with constant propagation.

Kernel's ways to run commands (`system`, `exec`, `spawn`, backticks, `%x{}`,
`IO.popen`, `Open3`), FileUtils and File, Net::HTTP and open-uri, sockets, and
eval of decoded text (`Base64.decode64`, `unpack("m")`, `tr` rot13) become effects.
"""

from __future__ import annotations

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
    Ref,
    carried_through,
    concat,
    derived,
    env_value,
    is_list,
    join_path,
    printf,
    rot13,
    text_of,
)
from sidecar.effects.model import CodeAnalysis, Origin


def analyse_ruby(code: str, nested: Nested, depth: int = 0) -> CodeAnalysis:
    out = Collector("ruby", nested, depth)
    data = source_bytes("ruby", code)
    tree = parse("ruby", data)
    _Ruby(data, out).run(tree.root_node)
    return out.result()


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "e": "\x1b", "s": " ", "a": "\a"}
_FUNCTIONS = frozenset({"method", "singleton_method", "lambda"})


class _Ruby(TreeAnalyser):
    language = "ruby"

    def __init__(self, source: bytes, out: Collector) -> None:
        super().__init__(source, out)
        self.methods: dict[str, Func] = {}
        self.heredocs: list[Node] = []
        self.heredoc_index = 0
        self.sockets: dict[int, object] = {}
        self.fd_taken = False

    def run(self, root: Node) -> None:
        stack = [root]
        while stack and len(self.heredocs) < 1000:
            node = stack.pop()
            if node.type == "heredoc_body":
                self.heredocs.append(node)
            stack.extend(reversed(node.named_children))
        super().run(root)

    # --- statements -------------------------------------------------------------------

    def visit(self, node: Node) -> bool:
        kind = node.type
        if kind in _FUNCTIONS:
            if node.id not in self.done:
                func = self.function(node)
                name = node.child_by_field_name("name")
                if name is not None and kind != "lambda":
                    self.methods[self.text(name)] = func
            return True
        if kind in ("block", "do_block") and node.id not in self.done:
            self.function(node)
            return True
        if kind == "heredoc_body":
            return True
        if kind == "for":
            pattern = node.child_by_field_name("pattern")
            source = node.child_by_field_name("value")
            iterable = (
                self.value(source.named_children[0])
                if source is not None and source.named_children
                else UNKNOWN
            )
            body = node.child_by_field_name("body")
            return self.loop(lambda item: self.bind(pattern, item), iterable, body)
        if kind in ("if", "unless", "if_modifier", "unless_modifier"):
            condition = node.child_by_field_name("condition")
            self.value(condition)
            self.branches(
                [
                    node.child_by_field_name("consequence") or node.child_by_field_name("body"),
                    node.child_by_field_name("alternative"),
                ]
            )
            return True
        if kind in (
            "program",
            "body_statement",
            "block_body",
            "begin",
            "then",
            "else",
            "do",
            "parenthesized_statements",
            "ensure",
            "rescue",
            "while",
            "until",
            "case",
            "when",
            "class",
            "module",
            "begin_block",
            "end_block",
        ):
            return False
        if kind in ("comment", "empty_statement"):
            return True
        self.value(node)
        return True

    def function(self, node: Node) -> Func:
        params: list[str] = []
        parameters = node.child_by_field_name("parameters")
        if parameters is not None:
            for part in parameters.named_children:
                if part.type == "identifier":
                    params.append(self.text(part))
                else:
                    name = part.child_by_field_name("name")
                    params.append(self.text(name) if name is not None else "")
        body = node.child_by_field_name("body")
        return self.define(Func(node, tuple(params), body))

    def bind(self, target: Node | None, value: object) -> None:
        if target is None:
            return
        if target.type == "identifier" or target.type in (
            "instance_variable",
            "global_variable",
            "class_variable",
            "constant",
        ):
            self.assign(self.text(target), value)
        elif target.type in ("left_assignment_list", "destructured_left_assignment"):
            items = items_of(value)
            for index, part in enumerate(target.named_children):
                self.bind(part, items[index] if items and index < len(items) else UNKNOWN)
        else:
            self.value(target)

    # --- expressions ------------------------------------------------------------------

    def evaluate(self, node: Node) -> object:
        kind = node.type
        if kind in ("string", "bare_string", "subshell", "heredoc_body"):
            value = self.string(node)
            if kind == "subshell":
                self.spawn(value, "`...`")
                return Data(Origin.UNKNOWN)
            return value
        if kind == "heredoc_beginning":
            if self.heredoc_index < len(self.heredocs):
                body = self.heredocs[self.heredoc_index]
                self.heredoc_index += 1
                value = self.string(body)
                if self.text(node).strip("<~-").startswith("`"):
                    self.spawn(value, "<<`...`")
                return value
            return UNKNOWN
        if kind in ("simple_symbol", "hash_key_symbol", "delimited_symbol"):
            return self.text(node).lstrip(":").strip("\"'")
        if kind == "integer":
            try:
                return int(self.text(node).replace("_", ""), 0)
            except ValueError:
                text = self.text(node).replace("_", "")
                return int(text, 8) if text.startswith("0") and text.isdigit() else UNKNOWN
        if kind in ("true", "false"):
            return kind == "true"
        if kind == "nil":
            return None
        if kind == "identifier":
            name = self.text(node)
            value = self.lookup(name)
            if value is UNKNOWN and name not in self.scopes[-1] and name not in self.globals:
                return self.call_named(None, name, Args((), {}), None)
            return value
        if kind in ("instance_variable", "global_variable", "class_variable"):
            return self.lookup(self.text(node))
        if kind == "constant":
            name = self.text(node)
            value = self.lookup(name)
            return value if value is not UNKNOWN else Ref(name)
        if kind == "scope_resolution":
            scope = node.child_by_field_name("scope")
            name_node = node.child_by_field_name("name")
            prefix = self.value(scope) if scope is not None else Ref("")
            text = self.text(name_node) if name_node is not None else ""
            return Ref(f"{prefix.name}::{text}" if isinstance(prefix, Ref) else text)
        if kind == "assignment":
            value = self.value(node.child_by_field_name("right"))
            self.bind(node.child_by_field_name("left"), value)
            return value
        if kind == "operator_assignment":
            left = node.child_by_field_name("left")
            value = concat((self.value(left), self.value(node.child_by_field_name("right"))))
            self.bind(left, value)
            return value
        if kind == "call":
            return self.call(node)
        if kind == "element_reference":
            obj = self.value(node.child_by_field_name("object"))
            keys = [self.value(c) for c in node.named_children[1:]]
            key = keys[0] if keys else UNKNOWN
            if obj == Ref("ENV"):
                return env_value(key)
            if isinstance(obj, dict) and isinstance(key, str):
                return obj.get(key, UNKNOWN)
            if is_list(obj) and isinstance(key, int):
                items = items_of(obj) or ()
                return items[key] if -len(items) <= key < len(items) else None
            if obj == Ref("Dir"):  # Dir["~/.ssh/*"] globs
                self.out.read(key, "Dir[]", listing=True)
                return (key,) if isinstance(key, str) else UNKNOWN
            return derived(obj, None) if isinstance(obj, Data) else UNKNOWN
        if kind == "binary":
            return self.binary(node)
        if kind == "array":
            elements = [self.value(c) for c in node.named_children]
            return tuple(elements) if len(elements) <= MAX_ITEMS else UNKNOWN
        if kind in ("string_array", "symbol_array"):
            return tuple(self.text(c) for c in node.named_children)
        if kind == "hash":
            mapping: dict[str, object] = {}
            for pair in node.named_children:
                if pair.type == "pair":
                    key = self.value(pair.child_by_field_name("key"))
                    value = self.value(pair.child_by_field_name("value"))
                    mapping[str(key) if isinstance(key, str) else f"?{len(mapping)}"] = value
            return mapping
        if kind in ("parenthesized_statements", "begin", "block_body", "body_statement"):
            result: object = None
            for child in node.named_children:
                result = self.value(child)
            return result
        if kind in ("lambda", "block", "do_block"):
            return self.function(node)
        if kind == "conditional":
            self.value(node.child_by_field_name("condition"))
            first = self.value(node.child_by_field_name("consequence"))
            second = self.value(node.child_by_field_name("alternative"))
            return first if first == second and type(first) is type(second) else UNKNOWN
        for child in node.named_children:
            self.value(child)
        return UNKNOWN

    def string(self, node: Node) -> object:
        parts: list[object] = []
        for child in node.named_children:
            if child.type in ("string_content", "heredoc_content"):
                parts.append(self.text(child))
            elif child.type == "escape_sequence":
                parts.append(_unescape(self.text(child)))
            elif child.type == "interpolation":
                inner = child.named_children
                parts.append(self.value(inner[-1]) if inner else "")
            elif child.type == "heredoc_end":
                continue
        if node.type == "heredoc_body" and parts and isinstance(parts[0], str):
            parts[0] = parts[0].removeprefix("\n")
        return concat(parts)

    def binary(self, node: Node) -> object:
        operator = node.child_by_field_name("operator")
        symbol = self.text(operator) if operator is not None else ""
        left = self.value(node.child_by_field_name("left"))
        right = self.value(node.child_by_field_name("right"))
        if symbol == "+":
            if isinstance(left, int) and isinstance(right, int):
                return left + right
            if is_list(left) and is_list(right):
                return left + right
            return concat((left, right))
        if symbol == "<<" and isinstance(left, str | Data):
            return concat((left, right))
        if symbol == "%" and isinstance(left, str):
            return printf(left, right if is_list(right) else (right,))
        if symbol in ("|", "&") and isinstance(left, int) and isinstance(right, int):
            return left | right if symbol == "|" else left & right
        if symbol == "==" and isinstance(left, str) and isinstance(right, str):
            return left == right
        return UNKNOWN

    # --- calls ------------------------------------------------------------------------

    def call(self, node: Node) -> object:
        receiver_node = node.child_by_field_name("receiver")
        method = node.child_by_field_name("method")
        name = self.text(method) if method is not None else ""
        receiver = self.value(receiver_node) if receiver_node is not None else None
        arguments = node.child_by_field_name("arguments")
        args = self.arguments(arguments)
        block_node = node.child_by_field_name("block")
        block = self.function(block_node) if block_node is not None else None
        if block_node is not None:
            self.done.add(block_node.id)
        return self.call_named(receiver, name, args, block)

    def arguments(self, node: Node | None) -> Args:
        if node is None:
            return Args((), {})
        pos: list[object] = []
        kw: dict[str, object] = {}
        for child in node.named_children:
            if child.type == "pair":
                key = self.value(child.child_by_field_name("key"))
                kw[str(key)] = self.value(child.child_by_field_name("value"))
            elif child.type == "splat_argument":
                inner = child.named_children
                spread = items_of(self.value(inner[0])) if inner else None
                pos.extend(spread if spread is not None else (UNKNOWN,))
            elif child.type == "block_argument":
                inner = child.named_children
                pos.append(self.value(inner[0]) if inner else UNKNOWN)
            elif child.type != "comment":
                pos.append(self.value(child))
        return Args(tuple(pos), kw)

    def call_named(self, receiver: object, name: str, args: Args, block: Func | None) -> object:
        if receiver is None:
            if name in self.methods:
                return self.inline(self.methods[name], args)
            handler = _KERNEL.get(name)
            if handler is not None:
                return handler(self, args)
            if block is not None:
                self.inline(block, Args((UNKNOWN,), {}))
            return UNKNOWN
        if isinstance(receiver, Ref):
            full = f"{receiver.name}.{name}"
            handler = _API.get(full)
            if handler is not None:
                result = handler(self, args)
                if block is not None:
                    self.inline(block, Args((result,), {}))
                return result
            if block is not None:
                self.inline(block, Args((UNKNOWN,), {}))
            return carried_through((*args.pos, *args.kw.values()))
        if isinstance(receiver, Handle):
            return self.handle_method(receiver, name, args, block)
        if isinstance(receiver, str | Data):
            return _string_method(receiver, name, args)
        if is_list(receiver):
            items = items_of(receiver) or ()
            if name in ("each", "map", "each_with_index") and block is not None:
                if len(items) <= MAX_ITEMS and not self.cheap:
                    return tuple(self.inline(block, Args((item,), {})) for item in items)
                self.inline(block, Args((UNKNOWN,), {}))
                return UNKNOWN
            if name == "join":
                separator = args.get(0, "", "")
                parts: list[object] = []
                for index, item in enumerate(items):
                    if index:
                        parts.append(separator)
                    parts.append(item)
                return concat(parts)
            if name == "pack" and text_of(args.get(0)) in ("U*", "c*", "C*"):
                return _chars(items)
            if name == "pack" and text_of(args.get(0)) in ("H*",) and items:
                return apis.decode_value(items[0], "hex")
            if name == "pack" and text_of(args.get(0)) in ("m", "m0") and items:
                return apis.decode_value(items[0], "base64")
            if name == "reverse":
                return tuple(reversed(items))
            return UNKNOWN
        if isinstance(receiver, Func) and name in ("call", "()"):
            return self.inline(receiver, args)
        if block is not None:
            self.inline(block, Args((UNKNOWN,), {}))
        return UNKNOWN

    def handle_method(self, handle: Handle, name: str, args: Args, block: Func | None) -> object:
        first = args.get(0)
        if handle.kind == "wfile" and name in ("write", "puts", "print", "<<", "syswrite"):
            self.out.add_content(handle.key, first)
            return None
        if handle.kind == "socket":
            host = self.sockets.get(handle.key, handle.info)
            if name in ("to_i", "fileno"):
                self.fd_taken = True
                return UNKNOWN
            if name in ("gets", "read", "recv", "readline", "readpartial", "each_line"):
                data = Data(Origin.NETWORK, (text_of(host) or "?",))
                if block is not None:
                    self.inline(block, Args((data,), {}))
                return data
            if name in ("write", "puts", "print", "send", "<<"):
                self.out.send(host, [first], f"socket.{name}")
            return None
        if handle.kind == "http" and name in ("post", "put", "patch", "request_post"):
            self.out.send(handle.info, list(args.pos[1:]), f"Net::HTTP#{name}")
            return Data(Origin.NETWORK)
        if handle.kind == "http" and name in ("get", "request_get", "get2"):
            return self.out.fetch(handle.info, f"Net::HTTP#{name}")
        if handle.kind == "process" and name in ("write", "puts", "print", "<<"):
            self.out.feed(handle.info, first, "IO.popen write")
        return UNKNOWN

    def spawn(self, command: object, api: str) -> None:
        if self.fd_taken:
            self.out.stdio_to_socket()
        self.out.spawn(command, api)


def _unescape(sequence: str) -> str:
    body = sequence[1:]
    if not body:
        return ""
    if body[0] == "x" and len(body) >= 2:
        try:
            return chr(int(body[1:3], 16))
        except ValueError:
            return body
    if body[0] == "u":
        try:
            return chr(int(body[1:].strip("{}"), 16))
        except (ValueError, OverflowError):
            return body
    if body[0].isdigit():
        try:
            return chr(int(body, 8))
        except ValueError:
            return body
    return _ESCAPES.get(body[0], body)


def _chars(items: tuple[object, ...]) -> object:
    """[104, 105].pack("c*"): characters from their codes."""
    codes = [i for i in items if isinstance(i, int) and 0 <= i < 0x110000]
    if len(codes) != len(items):
        return Data(Origin.DECODED)
    return Data(Origin.DECODED, (), "".join(chr(c) for c in codes))


def _tr(text: str, source: str, target: str) -> str | None:
    """String#tr with ranges (enough for rot13: tr('A-Za-z', 'N-ZA-Mn-za-m'))."""
    left, right = _expand(source), _expand(target)
    if not left or not right or len(left) > 512 or len(right) > 512:
        return None
    right = right + right[-1] * (len(left) - len(right))
    table = dict(zip(left, right, strict=False))
    return "".join(table.get(c, c) for c in text)


def _expand(spec: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(spec):
        if index + 2 < len(spec) and spec[index + 1] == "-":
            start, end = ord(spec[index]), ord(spec[index + 2])
            if end - start > 512:
                return ""
            out.extend(chr(c) for c in range(start, end + 1))
            index += 3
        else:
            out.append(spec[index])
            index += 1
    return "".join(out)


def _string_method(obj: str | Data, name: str, args: Args) -> object:
    text = obj if isinstance(obj, str) else obj.text
    if text is None:
        if name in ("unpack", "unpack1") and text_of(args.get(0)) in ("m", "m0", "H*", "u"):
            return Data(Origin.DECODED)
        return derived(obj, None) if isinstance(obj, Data) else UNKNOWN
    first = args.get(0)
    if name in ("unpack", "unpack1"):
        form = text_of(first)
        value: object = UNKNOWN
        if form in ("m", "m0"):
            value = apis.decode_value(text, "base64")
        elif form == "H*":
            value = apis.decode_value(text, "hex")
        else:
            return Data(Origin.DECODED)
        return value if name == "unpack1" else (value,)
    if name == "reverse":
        return derived(obj, text[::-1])
    if name == "tr" and isinstance(first, str) and isinstance(args.get(1), str):
        result = _tr(text, first, str(args.get(1)))
        if result is None:
            return UNKNOWN
        if first in ("A-Za-z", "a-zA-Z") and result == rot13(text):
            return Data(Origin.DECODED, (), result)
        return derived(obj, result)
    if name in (
        "strip",
        "chomp",
        "downcase",
        "upcase",
        "to_s",
        "dup",
        "freeze",
        "lstrip",
        "rstrip",
    ):
        method = {
            "strip": str.strip,
            "chomp": lambda s: s.rstrip("\r\n"),
            "downcase": str.lower,
            "upcase": str.upper,
            "lstrip": str.lstrip,
            "rstrip": str.rstrip,
        }.get(name)
        return derived(obj, method(text) if method is not None else text)
    if name in ("gsub", "sub") and isinstance(first, str) and isinstance(args.get(1), str):
        count = 1 if name == "sub" else -1
        return derived(obj, text.replace(first, str(args.get(1)), count))
    if name == "split" and isinstance(first, str):
        pieces = list(text) if first == "" else text.split(first)
        return tuple(pieces) if len(pieces) <= MAX_ITEMS else UNKNOWN
    if name == "chars":
        return tuple(text) if len(text) <= MAX_ITEMS else UNKNOWN
    return derived(obj, None) if isinstance(obj, Data) else UNKNOWN


# --- the effect APIs ----------------------------------------------------------------------


def _system(a: TreeAnalyser, args: Args) -> object:
    words = tuple(p for p in args.pos if not isinstance(p, dict))
    if words and isinstance(args.pos[0], dict):
        pass  # an environment hash first: system({"A" => "1"}, "cmd")
    assert isinstance(a, _Ruby)
    if len(words) == 1:
        a.spawn(words[0], "system")
    elif words:
        a.spawn(words, "system")
    return Handle("process", 0, words[0] if len(words) == 1 else words)


def _popen(a: TreeAnalyser, args: Args) -> object:
    command = args.get(0)
    if is_list(command):
        command = tuple(c for c in command if not isinstance(c, dict))
    assert isinstance(a, _Ruby)
    a.spawn(command, "IO.popen")
    return Handle("process", 0, command)


def _eval(a: TreeAnalyser, args: Args) -> object:
    a.out.execute(args.get(0), "eval")
    return UNKNOWN


def _file_open(a: TreeAnalyser, args: Args) -> object:
    path, mode = args.get(0), text_of(args.get(1, "", "r")) or "r"
    text = text_of(path)
    if text is not None and text.startswith("|"):  # open("|cmd") runs cmd
        assert isinstance(a, _Ruby)
        a.spawn(text[1:], "open(|...)")
        return Handle("process", 0, text[1:])
    if text is not None and text.startswith(("http://", "https://", "ftp://")):
        return a.out.fetch(path, "open-uri")
    if any(c in mode for c in "wa+"):
        index = a.out.write(path, "File.open", append="a" in mode, truncate="w" in mode)
        return Handle("wfile", index, path)
    a.out.read(path, "File.open")
    return Data(Origin.FILE, (a.out.target(path)[0],))


def _chmod(a: TreeAnalyser, args: Args) -> object:
    mode = args.get(0)
    for path in args.pos[1:]:
        for item in items_of(path) or (path,):
            a.out.chmod(item, mode, "chmod")
    return None


def _chown(a: TreeAnalyser, args: Args) -> object:
    for path in args.pos[2:]:
        for item in items_of(path) or (path,):
            a.out.chown(item, "chown")
    return None


def _each_path(handler: Handler) -> Handler:
    """FileUtils takes a path or a list of paths."""

    def each(a: TreeAnalyser, args: Args) -> object:
        first = args.get(0)
        for item in items_of(first) or (first,):
            handler(a, Args((item, *args.pos[1:]), args.kw))
        return None

    return each


def _tcp(a: TreeAnalyser, args: Args) -> object:
    assert isinstance(a, _Ruby)
    host, port = args.get(0), args.get(1)
    a.out.connect(host, port, "TCPSocket")
    handle = a.new_handle("socket", host)
    a.sockets[handle.key] = host
    return handle


def _http_post(a: TreeAnalyser, args: Args) -> object:
    a.out.send(args.get(0), list(args.pos[1:]), "Net::HTTP.post")
    return Data(Origin.NETWORK)


def _webrick(a: TreeAnalyser, args: Args) -> object:
    port = args.option("Port", 80)
    root = args.option("DocumentRoot")
    a.out.listen(f"0.0.0.0:{text_of(port) or '?'}", "WEBrick", served=root)
    return Handle("server")


def _process_kill(a: TreeAnalyser, args: Args) -> object:
    for pid in args.pos[1:]:
        a.out.kill(pid, "Process.kill")
    return None


def _uri(a: TreeAnalyser, args: Args) -> object:
    return args.get(0)


def _expand_path(a: TreeAnalyser, args: Args) -> object:
    path = args.get(0)
    base = args.get(1, "", None)
    if isinstance(path, str) and isinstance(base, str) and not path.startswith(("/", "~")):
        return join_path((base, path))
    return path


_KERNEL: dict[str, Handler] = {
    "system": _system,
    "exec": _system,
    "spawn": _system,
    "fork": apis.returns(UNKNOWN),
    "eval": _eval,
    "instance_eval": _eval,
    "class_eval": _eval,
    "module_eval": _eval,
    "open": _file_open,
    "require": apis.returns(None),
    "require_relative": apis.returns(None),
    "load": lambda a, args: a.out.execute(
        Data(Origin.FILE, (a.out.target(args.get(0))[0],)), "load"
    ),
    "sprintf": lambda a, args: (
        printf(text_of(args.get(0)) or "%?", args.pos[1:])
        if isinstance(args.get(0), str)
        else UNKNOWN
    ),
    "format": lambda a, args: (
        printf(text_of(args.get(0)) or "%?", args.pos[1:])
        if isinstance(args.get(0), str)
        else UNKNOWN
    ),
    "URI": _uri,
    "httpd": lambda a, args: a.out.listen("0.0.0.0:8080", "un httpd", served="."),
}

_API: dict[str, Handler] = {
    "Kernel.system": _system,
    "Kernel.exec": _system,
    "Kernel.spawn": _system,
    "Process.spawn": _system,
    "Kernel.eval": _eval,
    "Kernel.open": _file_open,
    "IO.popen": _popen,
    "Open3.capture2": _system,
    "Open3.capture2e": _system,
    "Open3.capture3": _system,
    "Open3.popen3": _system,
    "Open3.popen2": _system,
    "Open3.popen2e": _system,
    "PTY.spawn": _system,
    "FileUtils.rm_rf": _each_path(apis.deletes(0, recursive=True, name="FileUtils.rm_rf")),
    "FileUtils.rm_r": _each_path(apis.deletes(0, recursive=True, name="FileUtils.rm_r")),
    "FileUtils.remove_dir": _each_path(
        apis.deletes(0, recursive=True, name="FileUtils.remove_dir")
    ),
    "FileUtils.remove_entry": _each_path(
        apis.deletes(0, recursive=True, name="FileUtils.remove_entry")
    ),
    "FileUtils.rmtree": _each_path(apis.deletes(0, recursive=True, name="FileUtils.rmtree")),
    "FileUtils.rm": _each_path(apis.deletes(0, name="FileUtils.rm")),
    "FileUtils.rm_f": _each_path(apis.deletes(0, name="FileUtils.rm_f")),
    "FileUtils.remove_file": _each_path(apis.deletes(0, name="FileUtils.remove_file")),
    "FileUtils.rmdir": _each_path(apis.deletes(0, name="FileUtils.rmdir")),
    "File.delete": _each_path(apis.deletes(0, name="File.delete")),
    "File.unlink": _each_path(apis.deletes(0, name="File.unlink")),
    "Dir.rmdir": apis.deletes(0, name="Dir.rmdir"),
    "Dir.delete": apis.deletes(0, name="Dir.delete"),
    "FileUtils.mv": apis.moves(0, 1, name="FileUtils.mv"),
    "FileUtils.move": apis.moves(0, 1, name="FileUtils.mv"),
    "File.rename": apis.moves(0, 1, name="File.rename"),
    "FileUtils.cp": apis.copies(0, 1, name="FileUtils.cp"),
    "FileUtils.cp_r": apis.copies(0, 1, recursive=True, name="FileUtils.cp_r"),
    "FileUtils.chmod": _chmod,
    "FileUtils.chmod_R": _chmod,
    "File.chmod": _chmod,
    "FileUtils.chown": _chown,
    "FileUtils.chown_R": _chown,
    "File.chown": _chown,
    "File.symlink": lambda a, args: a.out.write(
        args.get(1), "File.symlink", args.get(0), flags=("link",)
    ),
    "FileUtils.ln_s": lambda a, args: a.out.write(
        args.get(1), "FileUtils.ln_s", args.get(0), flags=("link",)
    ),
    "FileUtils.ln_sf": lambda a, args: a.out.write(
        args.get(1), "FileUtils.ln_sf", args.get(0), flags=("link",)
    ),
    "FileUtils.touch": _each_path(apis.writes(0, None, name="FileUtils.touch")),
    "FileUtils.mkdir_p": _each_path(
        apis.writes(0, None, name="FileUtils.mkdir_p", flags=("directory",))
    ),
    "Dir.mkdir": apis.writes(0, None, name="Dir.mkdir", flags=("directory",)),
    "File.write": apis.writes(0, 1, name="File.write"),
    "IO.write": apis.writes(0, 1, name="IO.write"),
    "File.truncate": apis.writes(0, None, name="File.truncate", flags=("truncate",)),
    "File.open": _file_open,
    "File.new": _file_open,
    "File.read": apis.reads(0, name="File.read"),
    "IO.read": apis.reads(0, name="IO.read"),
    "File.readlines": apis.reads(0, name="File.readlines"),
    "IO.readlines": apis.reads(0, name="IO.readlines"),
    "File.foreach": apis.reads(0, name="File.foreach"),
    "File.binread": apis.reads(0, name="File.binread"),
    "Dir.glob": lambda a, args: (a.out.read(args.get(0), "Dir.glob", listing=True), (args.get(0),))[
        1
    ],
    "Dir.entries": apis.reads(0, listing=True, name="Dir.entries"),
    "Dir.children": apis.reads(0, listing=True, name="Dir.children"),
    "Dir.home": apis.returns("~"),
    "Dir.pwd": lambda a, args: a.out.cwd or ".",
    "Dir.chdir": lambda a, args: setattr(
        a.out, "cwd", a.out.target(args.get(0))[0] if text_of(args.get(0)) else None
    ),
    "Dir.tmpdir": apis.returns("/tmp"),  # noqa: S108
    "File.join": lambda a, args: join_path(args.pos),
    "File.expand_path": _expand_path,
    "ENV.fetch": lambda a, args: env_value(args.get(0)),
    "ENV.to_h": apis.returns(ENVIRONMENT_DATA),
    "ENV.to_hash": apis.returns(ENVIRONMENT_DATA),
    "Base64.decode64": apis.decode("base64", binary=True),
    "Base64.strict_decode64": apis.decode("base64", binary=True),
    "Base64.urlsafe_decode64": apis.decode("base64url", binary=True),
    "Zlib::Inflate.inflate": apis.returns(Data(Origin.DECODED)),
    "Marshal.load": lambda a, args: (
        a.out.execute(args.get(0), "Marshal.load") if isinstance(args.get(0), Data) else None
    ),
    "Net::HTTP.get": apis.fetches(0, name="Net::HTTP.get"),
    "Net::HTTP.get_response": apis.fetches(0, name="Net::HTTP.get_response"),
    "Net::HTTP.post": _http_post,
    "Net::HTTP.post_form": _http_post,
    "Net::HTTP.new": lambda a, args: Handle("http", 0, args.get(0)),
    "Net::HTTP.start": lambda a, args: Handle("http", 0, args.get(0)),
    "URI.open": _file_open,
    "URI.parse": _uri,
    "TCPSocket.new": _tcp,
    "TCPSocket.open": _tcp,
    "Socket.tcp": _tcp,
    "TCPServer.new": lambda a, args: a.out.listen(
        f"0.0.0.0:{text_of(args.get(-1)) or '?'}",
        "TCPServer",
    ),
    "WEBrick::HTTPServer.new": _webrick,
    "Process.kill": _process_kill,
    "Process::Sys.setuid": apis.privileges(0, name="Process::Sys.setuid"),
    "Process::Sys.seteuid": apis.privileges(0, name="Process::Sys.seteuid"),
    "Process::UID.change_privilege": apis.privileges(0, name="Process::UID.change_privilege"),
    "Process.uid=": apis.privileges(0, name="Process.uid="),
}

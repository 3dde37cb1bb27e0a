"""Perl: tree-sitter-perl, walked with constant propagation.

`system`, `exec`, backticks and `qx`, pipe opens (`open(F, "|cmd")`), `unlink`,
`rmtree`, `rename`, `chmod`, sockets wired to STDIN (`open(STDIN, ">&S")`), LWP and
HTTP::Tiny, and eval of decoded text (`decode_base64`, `pack("H*")`, `unpack("u")`)
become effects. Subroutines are inlined with `@_` bound at their call sites.
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
    is_list,
    printf,
    text_of,
)
from sidecar.effects.model import CodeAnalysis, Origin


def analyse_perl(code: str, nested: Nested, depth: int = 0) -> CodeAnalysis:
    out = Collector("perl", nested, depth)
    data = source_bytes("perl", code)
    tree = parse("perl", data)
    _Perl(data, out).run(tree.root_node)
    return out.result()


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "e": "\x1b", "a": "\a", "f": "\f"}
_CALLS = frozenset(
    {
        "function_call_expression",
        "ambiguous_function_call_expression",
        "func1op_call_expression",
        "func0op_call_expression",
        "method_call_expression",
    }
)
_STATEMENTS = frozenset(
    {
        "source_file",
        "block",
        "expression_statement",
        "conditional_statement",
        "loop_statement",
        "cstyle_for_statement",
        "package_statement",
    }
)


class _Perl(TreeAnalyser):
    language = "perl"

    def __init__(self, source: bytes, out: Collector) -> None:
        super().__init__(source, out)
        self.subs: dict[str, Func] = {}
        self.sockets: dict[str, object] = {}  # file handle or variable → host
        self.wired = False
        self.last_read: object = None  # the file last opened for reading (what `<$f>` reads)

    # --- statements -------------------------------------------------------------------

    def visit(self, node: Node) -> bool:
        kind = node.type
        if kind in ("subroutine_declaration_statement", "anonymous_subroutine_expression"):
            if node.id not in self.done:
                func = self.define(Func(node, ("@_",), node.child_by_field_name("body")))
                name = node.child_by_field_name("name")
                if name is not None:
                    self.subs[self.text(name)] = func
            return True
        if kind == "for_statement":
            variable = node.child_by_field_name("variable")
            items = self.value(node.child_by_field_name("list"))
            loop_name = self.text(variable) if variable is not None else "$_"
            body = node.child_by_field_name("block")
            return self.loop(lambda item: self.assign(loop_name, item), _as_list(items), body)
        if kind == "conditional_statement":
            self.value(node.child_by_field_name("condition"))
            return False
        if kind in _STATEMENTS or kind in ("comment", "use_statement", "pod"):
            return kind in ("comment", "pod", "use_statement")
        self.value(node)
        return True

    # --- expressions ------------------------------------------------------------------

    def evaluate(self, node: Node) -> object:
        kind = node.type
        if kind == "interpolated_string_literal":
            return self.string(node, interpolate=True)
        if kind == "string_literal":
            return self.string(node, interpolate=False)
        if kind in ("command_string",):
            command = self.string(node, interpolate=True)
            self.spawn(command, "`...`")
            return Data(Origin.UNKNOWN)
        if kind == "heredoc_token" or kind == "heredoc_content":
            return UNKNOWN
        if kind == "number":
            text = self.text(node).replace("_", "")
            try:
                return (
                    int(text, 0) if not (text.startswith("0") and text.isdigit()) else int(text, 8)
                )
            except ValueError:
                try:
                    return float(text)
                except ValueError:
                    return UNKNOWN
        if kind in ("autoquoted_bareword", "bareword", "filehandle"):
            return self.text(node)
        if kind == "scalar" or kind == "array" or kind == "hash":
            name = self.text(node).replace(" ", "")
            if name in ("%ENV",):
                return ENVIRONMENT_DATA
            return self.lookup(name)
        if kind == "variable_declaration":
            children = node.named_children
            return self.value(children[-1]) if children else UNKNOWN
        if kind == "assignment_expression":
            value = self.value(node.child_by_field_name("right"))
            self.bind(node.child_by_field_name("left"), value)
            return value
        if kind == "hash_element_expression":
            hash_node = node.child_by_field_name("hash")
            key = self.value(node.child_by_field_name("key"))
            if hash_node is not None and self.text(hash_node).replace(" ", "") in ("$ENV",):
                return env_value(key)
            container = self.lookup("%" + self.text(hash_node).lstrip("$")) if hash_node else None
            if isinstance(container, dict) and isinstance(key, str):
                return container.get(key, UNKNOWN)
            return UNKNOWN
        if kind == "array_element_expression":
            array = node.child_by_field_name("array")
            index = self.value(node.child_by_field_name("index"))
            items = items_of(self.lookup("@" + self.text(array).lstrip("$"))) if array else None
            if items is not None and isinstance(index, int) and -len(items) <= index < len(items):
                return items[index]
            return UNKNOWN
        if kind == "binary_expression":
            return self.binary(node)
        if kind in ("list_expression", "anonymous_array_expression"):
            flat: list[object] = []
            for child in node.named_children:
                value = self.value(child)
                flat.extend(value if is_list(value) else (value,))
            return tuple(flat) if len(flat) <= MAX_ITEMS else UNKNOWN
        if kind == "parenthesized_expression":
            children = node.named_children
            if not children:
                return ()
            return self.value(children[-1])
        if kind == "readline_expression":
            read = self.last_read
            return Data(Origin.FILE, (text_of(read) or "?",)) if read is not None else UNKNOWN
        if kind == "anonymous_hash_expression":
            values = _as_list(self.value(node.named_children[0])) if node.named_children else ()
            return _pairs(values)
        if kind in _CALLS:
            return self.call(node)
        if kind == "eval_expression":
            children = node.named_children
            value = self.value(children[-1]) if children else UNKNOWN
            if children and children[-1].type != "block":
                self.out.execute(value, "eval")
            return UNKNOWN
        if kind == "anonymous_subroutine_expression":
            return self.define(Func(node, ("@_",), node.child_by_field_name("body")))
        if kind == "stub_expression":
            return ()
        if kind in ("substitution_regexp", "transliteration_expression"):
            return UNKNOWN
        for child in node.named_children:
            self.value(child)
        return UNKNOWN

    def string(self, node: Node, *, interpolate: bool) -> object:
        content = node.child_by_field_name("content")
        if content is None:
            return ""
        # The content node may leave out leading and trailing blanks: read between the
        # delimiters instead.
        start, end = content.start_byte, content.end_byte
        before = [c for c in node.children if c.end_byte <= content.start_byte]
        after = [c for c in node.children if c.start_byte >= content.end_byte]
        if before and after:
            start, end = before[-1].end_byte, after[0].start_byte
        parts: list[object] = []
        position = start
        for child in content.named_children if interpolate else ():
            parts.append(self.src[position : child.start_byte].decode("utf-8", "replace"))
            if child.type == "escape_sequence":
                parts.append(_unescape(self.text(child)))
            else:
                parts.append(self.value(child))
            position = child.end_byte
        parts.append(self.src[position:end].decode("utf-8", "replace"))
        if not interpolate:
            parts = [
                p.replace("\\\\", "\\").replace("\\'", "'") if isinstance(p, str) else p
                for p in parts
            ]
        return concat(parts)

    def binary(self, node: Node) -> object:
        operator = node.child_by_field_name("operator")
        symbol = self.text(operator) if operator is not None else ""
        left = self.value(node.child_by_field_name("left"))
        right = self.value(node.child_by_field_name("right"))
        if symbol == ".":
            return concat((left, right))
        if symbol == "x" and isinstance(left, str) and isinstance(right, int):
            return left * right if len(left) * right <= 65536 else UNKNOWN
        if symbol == "+" and isinstance(left, int) and isinstance(right, int):
            return left + right
        if symbol in ("|", "&") and isinstance(left, int) and isinstance(right, int):
            return left | right if symbol == "|" else left & right
        return UNKNOWN

    def bind(self, target: Node | None, value: object) -> None:
        if target is None:
            return
        if target.type == "variable_declaration":
            variables = [c for c in target.named_children if c.type in ("scalar", "array", "hash")]
            if target.child_by_field_name("variables") is not None or len(variables) > 1:
                items = _as_list(value)
                for index, variable in enumerate(variables):
                    name = self.text(variable).replace(" ", "")
                    if name.startswith("@"):
                        self.assign(name, tuple(items[index:]))
                        break
                    self.assign(name, items[index] if index < len(items) else None)
                return
            for variable in variables:
                self.bind(variable, value)
            return
        if target.type in ("scalar", "array", "hash"):
            name = self.text(target).replace(" ", "")
            if name.startswith("%") and is_list(value):
                value = _pairs(_as_list(value))
            if name in ("$<", "$>"):  # the real or effective user id
                self.out.privilege(value, f"{name} =")
            self.assign(name, value)
            return
        if target.type in ("parenthesized_expression", "list_expression"):
            items = _as_list(value)
            for index, part in enumerate(target.named_children):
                self.bind(part, items[index] if index < len(items) else None)
            return
        self.value(target)

    # --- calls ------------------------------------------------------------------------

    def call(self, node: Node) -> object:
        if node.type == "method_call_expression":
            return self.method_call(node)
        function = node.child_by_field_name("function")
        if function is not None:
            name = self.text(function)
        else:
            name = next((self.text(c) for c in node.children if not c.is_named), "")
        name = name.removeprefix("&").removeprefix("CORE::").removeprefix("main::")
        arguments = node.child_by_field_name("arguments")
        if arguments is None:
            rest = [c for c in node.named_children if c is not function]
            arguments = rest[-1] if rest else None
        values = self.value(arguments) if arguments is not None else ()
        args = Args(
            _as_list(values)
            if arguments is None
            or arguments.type in ("list_expression", "parenthesized_expression")
            else (values,),
            {},
        )
        if name in self.subs:
            return self.inline(self.subs[name], Args((args.pos,), {}))
        if name == "shift" and not args.pos:
            items = _as_list(self.lookup("@_"))
            if items:
                self.assign("@_", items[1:])
                return items[0]
            return UNKNOWN
        handler = _API.get(name) or _API.get(name.rsplit("::", 1)[-1])
        if handler is not None:
            return handler(self, args)
        return carried_through((*args.pos, *args.kw.values()))

    def method_call(self, node: Node) -> object:
        invocant = self.value(node.child_by_field_name("invocant"))
        method = node.child_by_field_name("method")
        name = self.text(method) if method is not None else ""
        arguments = node.child_by_field_name("arguments")
        values = _as_list(self.value(arguments)) if arguments is not None else ()
        args = Args(values, _pairs(values) if len(values) % 2 == 0 else {})
        if isinstance(invocant, str):  # Class->method
            handler = _CLASS_METHODS.get(f"{invocant}->{name}")
            if handler is not None:
                return handler(self, args)
            return Handle("object", 0, invocant) if name == "new" else UNKNOWN
        if isinstance(invocant, Handle):
            return self.handle_method(invocant, name, args)
        return UNKNOWN

    def handle_method(self, handle: Handle, name: str, args: Args) -> object:
        first = args.get(0)
        if handle.info in ("HTTP::Tiny", "LWP::UserAgent", "Mojo::UserAgent"):
            if name in ("get", "mirror", "head"):
                return self.out.fetch(first, f"{handle.info}->{name}")
            if name in ("post", "put", "post_form", "request", "patch"):
                self.out.send(first, list(args.pos[1:]), f"{handle.info}->{name}")
                return Data(Origin.NETWORK)
        if handle.kind == "socket":
            if name in ("send", "print", "syswrite"):
                self.out.send(handle.info, [first], f"socket->{name}")
            if name in ("recv", "getline", "getlines", "sysread"):
                return Data(Origin.NETWORK, (text_of(handle.info) or "?",))
            if name == "fileno":
                self.wired = True
        return UNKNOWN

    def spawn(self, command: object, api: str) -> None:
        if self.wired:
            self.out.stdio_to_socket()
        self.out.spawn(command, api)


def _as_list(value: object) -> tuple[object, ...]:
    if is_list(value):
        return value
    if value is None:
        return ()
    return (value,)


def _pairs(values: tuple[object, ...]) -> dict[str, object]:
    mapping: dict[str, object] = {}
    for index in range(0, len(values) - 1, 2):
        key = values[index]
        if isinstance(key, str):
            mapping[key] = values[index + 1]
    return mapping


def _unescape(sequence: str) -> str:
    body = sequence[1:]
    if not body:
        return ""
    if body[0] == "x":
        digits = body[1:].strip("{}")
        try:
            return chr(int(digits, 16))
        except (ValueError, OverflowError):
            return body
    if body[0].isdigit():
        try:
            return chr(int(body, 8))
        except ValueError:
            return body
    return _ESCAPES.get(body[0], body)


# --- the effect APIs ----------------------------------------------------------------------


def _system(a: TreeAnalyser, args: Args) -> object:
    words = args.pos
    assert isinstance(a, _Perl)
    if len(words) == 1:
        a.spawn(words[0], "system")
    elif words:
        a.spawn(words, "system")
    return UNKNOWN


def _open(a: TreeAnalyser, args: Args) -> object:
    """open(FH, MODE, PATH) or open(FH, "MODEPATH"): files, pipes, dups of sockets."""
    assert isinstance(a, _Perl)
    handle = args.get(0)
    if len(args.pos) >= 3:
        mode, target = text_of(args.get(1)) or "", args.get(2)
    else:
        spec = text_of(args.get(1)) or ""
        stripped = spec.strip()
        mode = next(
            (m for m in ("+<", "+>", ">>", ">&", "<&", ">", "<", "|") if stripped.startswith(m)), ""
        )
        target = stripped[len(mode) :].strip() if mode else stripped
        if stripped.endswith("|"):
            mode, target = "-|", stripped[:-1].strip()
    if text_of(handle) in ("STDIN", "STDOUT", "STDERR") and "&" in mode:
        a.wired = True
        a.out.stdio_to_socket()
        return 1
    if mode in ("|", "|-", "-|"):
        a.spawn(target, "open pipe")
        return Handle("process", 0, target)
    if any(c in mode for c in ">+"):
        index = a.out.write(target, "open", append=">>" in mode, truncate=mode == ">")
        if isinstance(handle, str):
            a.assign("fh:" + handle, Handle("wfile", index, target))
        return 1
    a.out.read(target, "open")
    # `<$f>` later reads what the file holds (the handle a lexical `my $f` names is not
    # followed; the file last opened for reading stands for it)
    a.last_read = target
    return 1


def _print(a: TreeAnalyser, args: Args) -> object:
    return None


def _socket(a: TreeAnalyser, args: Args) -> object:
    return 1


def _connect(a: TreeAnalyser, args: Args) -> object:
    address = args.get(1)
    host: object = UNKNOWN
    port: object = UNKNOWN
    if isinstance(address, Handle) and address.kind == "sockaddr" and is_list(address.info):
        host, port = address.info
    assert isinstance(a, _Perl)
    a.out.connect(host, port, "connect")
    name = text_of(args.get(0))
    if name:
        a.sockets[name] = host
    return 1


def _sockaddr_in(a: TreeAnalyser, args: Args) -> object:
    return Handle("sockaddr", 0, (args.get(1), args.get(0)))


def _inet_aton(a: TreeAnalyser, args: Args) -> object:
    return args.get(0)


def _io_socket(a: TreeAnalyser, args: Args) -> object:
    options = args.kw or _pairs(args.pos)
    peer = options.get(
        "PeerAddr", options.get("PeerHost", args.get(0) if len(args.pos) == 1 else UNKNOWN)
    )
    port = options.get("PeerPort", UNKNOWN)
    text = text_of(peer)
    if text is not None and ":" in text and port is UNKNOWN:
        text, _, port_text = text.rpartition(":")
        peer, port = text, port_text
    if "LocalPort" in options and "PeerAddr" not in options:
        a.out.listen(f"0.0.0.0:{text_of(options['LocalPort']) or '?'}", "IO::Socket")
        return Handle("server")
    a.out.connect(peer, port, "IO::Socket::INET")
    return Handle("socket", 0, peer)


def _kill(a: TreeAnalyser, args: Args) -> object:
    for pid in args.pos[1:]:
        a.out.kill(pid, "kill")
    return None


def _chmod(a: TreeAnalyser, args: Args) -> object:
    for path in args.pos[1:]:
        a.out.chmod(path, args.get(0), "chmod")
    return None


def _unlink(a: TreeAnalyser, args: Args) -> object:
    for path in args.pos or (UNKNOWN,):
        a.out.delete(path, "unlink")
    return None


def _rmtree(a: TreeAnalyser, args: Args) -> object:
    for path in args.pos:
        for item in _as_list(path):
            if not isinstance(item, dict):
                a.out.delete(item, "rmtree", recursive=True)
    return None


def _pack(a: TreeAnalyser, args: Args) -> object:
    template = text_of(args.get(0))
    if template in ("H*", "h*"):
        return apis.decode_value(args.get(1), "hex")
    if template in ("C*", "c*", "U*"):
        numbers = args.pos[1:]
        if numbers and all(isinstance(n, int) and 0 <= n < 0x110000 for n in numbers):
            return Data(Origin.DECODED, (), "".join(chr(int(n)) for n in numbers))  # type: ignore[call-overload]
    return Data(Origin.DECODED)


def _unpack(a: TreeAnalyser, args: Args) -> object:
    template = text_of(args.get(0))
    if template in ("m", "m0"):
        return apis.decode_value(args.get(1), "base64")
    return Data(Origin.DECODED)


def _reverse(a: TreeAnalyser, args: Args) -> object:
    value = args.get(0)
    if isinstance(value, str):
        return value[::-1]
    if isinstance(value, Data) and value.text is not None:
        return derived(value, value.text[::-1])
    return UNKNOWN


def _join(a: TreeAnalyser, args: Args) -> object:
    separator = args.get(0)
    parts: list[object] = []
    for index, item in enumerate(args.pos[1:]):
        if index:
            parts.append(separator)
        parts.append(item)
    return concat(parts)


def _sprintf(a: TreeAnalyser, args: Args) -> object:
    template = args.get(0)
    return printf(template, args.pos[1:]) if isinstance(template, str) else UNKNOWN


def _eval(a: TreeAnalyser, args: Args) -> object:
    a.out.execute(args.get(0), "eval")
    return UNKNOWN


def _user_agent(a: TreeAnalyser, args: Args) -> object:
    return Handle("object", 0, "LWP::UserAgent")


def _each(values: tuple[object, ...], action: Callable[[object], None]) -> object:
    for value in values:
        action(value)
    return None


def _text_method(value: object, method: Callable[[str], str]) -> object:
    return method(value) if isinstance(value, str) else UNKNOWN


_API: dict[str, Handler] = {
    "system": _system,
    "exec": _system,
    "qx": _system,
    "readpipe": _system,
    "open": _open,
    "sysopen": _open,
    "print": _print,
    "socket": _socket,
    "connect": _connect,
    "sockaddr_in": _sockaddr_in,
    "pack_sockaddr_in": _sockaddr_in,
    "inet_aton": _inet_aton,
    "unlink": _unlink,
    # glob("/etc/*") stands for what it matches: the pattern, judged as a glob.
    "glob": lambda a, args: args.get(0) if isinstance(args.get(0), str) else UNKNOWN,
    "rmdir": lambda a, args: _unlink(a, args),
    "rmtree": _rmtree,
    "remove_tree": _rmtree,
    "rename": apis.moves(0, 1, name="rename"),
    "move": apis.moves(0, 1, name="File::Copy::move"),
    "mv": apis.moves(0, 1, name="File::Copy::move"),
    "copy": apis.copies(0, 1, name="File::Copy::copy"),
    "cp": apis.copies(0, 1, name="File::Copy::copy"),
    "chmod": _chmod,
    "chown": lambda a, args: _each(args.pos[2:], lambda p: a.out.chown(p, "chown")),
    "symlink": lambda a, args: a.out.write(args.get(1), "symlink", args.get(0), flags=("link",)),
    "link": lambda a, args: a.out.write(args.get(1), "link", args.get(0), flags=("link",)),
    "mkdir": apis.writes(0, None, name="mkdir", flags=("directory",)),
    "make_path": apis.writes(0, None, name="make_path", flags=("directory",)),
    "mkpath": apis.writes(0, None, name="mkpath", flags=("directory",)),
    "truncate": apis.writes(0, None, name="truncate", flags=("truncate",)),
    "kill": _kill,
    "decode_base64": apis.decode("base64", binary=True),
    "pack": _pack,
    "unpack": _unpack,
    "reverse": _reverse,
    "join": _join,
    "sprintf": _sprintf,
    "chr": lambda a, args: (
        chr(args.pos[0])
        if args.pos and isinstance(args.pos[0], int) and 0 <= args.pos[0] < 0x110000
        else UNKNOWN
    ),
    "lc": lambda a, args: _text_method(args.get(0), str.lower),
    "uc": lambda a, args: _text_method(args.get(0), str.upper),
    "eval": _eval,
    "do": lambda a, args: a.out.execute(
        Data(Origin.FILE, (a.out.target(args.get(0))[0],)), "do FILE"
    ),
    "get": apis.fetches(0, name="LWP::Simple::get"),
    "getstore": lambda a, args: a.out.fetch(
        args.get(0), "LWP::Simple::getstore", saved_to=args.get(1)
    ),
    "mirror": lambda a, args: a.out.fetch(args.get(0), "LWP::Simple::mirror", saved_to=args.get(1)),
    "getprint": apis.fetches(0, name="LWP::Simple::getprint"),
    "chdir": lambda a, args: setattr(
        a.out, "cwd", a.out.target(args.get(0))[0] if text_of(args.get(0)) else None
    ),
    "setuid": apis.privileges(0, name="POSIX::setuid"),
    "home": apis.returns("~"),
    "slurp": apis.reads(0, name="slurp"),
    "read_file": apis.reads(0, name="read_file"),
    "write_file": apis.writes(0, 1, name="write_file"),
}

_CLASS_METHODS: dict[str, Handler] = {
    "IO::Socket::INET->new": _io_socket,
    "IO::Socket::IP->new": _io_socket,
    "LWP::UserAgent->new": _user_agent,
    "HTTP::Tiny->new": lambda a, args: Handle("object", 0, "HTTP::Tiny"),
    "Mojo::UserAgent->new": lambda a, args: Handle("object", 0, "Mojo::UserAgent"),
    "MIME::Base64->decode_base64": apis.decode("base64", binary=True),
    "File::Path->remove_tree": _rmtree,
}

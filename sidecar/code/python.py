"""Python: the standard library's `ast`, walked once in order with constant propagation.

Assignments, f-strings, `%` and `.format`, `os.path.join` and `pathlib`, loops over
literal lists and functions called with constant arguments are folded, so
`p = os.path.expanduser("~") + "/.ssh"; shutil.rmtree(p)` deletes `~/.ssh` however it is
spelled. Calls into the standard library's effect APIs (and requests, httpx, paramiko)
become effects; commands become shell lines; code run by exec/eval is analysed too.
"""

from __future__ import annotations

import ast
import posixpath
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple

import re2

from sidecar.code.cloud_sdks import SECRET_READERS, cloud_destruction
from sidecar.code.collector import Collector, Nested
from sidecar.code.values import (
    ANY_ADDRESS,
    ENVIRONMENT_DATA,
    MAX_ITEMS,
    MAX_TEXT,
    TEMP_DIR,
    UNKNOWN,
    Data,
    Ref,
    b32decode,
    b64decode,
    carried_through,
    concat,
    decoded,
    decompress,
    derived,
    env_value,
    hexdecode,
    home_form,
    is_list,
    join_path,
    rot13,
    sources_of,
    text_of,
)
from sidecar.effects.model import CodeAnalysis, Origin
from sidecar.effects.secret_output import secret_data

MAX_DEPTH = 120  # nesting of expressions and statements followed; deeper is a problem
MAX_INLINE = 3  # user functions inlined within each other at their call sites


class PathObj(NamedTuple):
    """A pathlib.Path."""

    path: object


class Handle(NamedTuple):
    """A run-time object the analysis follows: a file opened for writing (key: its WRITE
    effect), a socket (key: its number), a process, an HTTP connection or session."""

    kind: str
    key: int = 0
    info: object = None


class Bound(NamedTuple):
    """A method of a value, not yet called."""

    obj: object
    name: str


class Func(NamedTuple):
    """A function defined in the code."""

    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


class Partial(NamedTuple):
    """functools.partial(f, ...)."""

    func: object
    args: tuple[object, ...]
    kwargs: dict[str, object]


class Args(NamedTuple):
    pos: tuple[object, ...]
    kw: dict[str, object]

    def get(self, index: int, name: str, default: object = UNKNOWN) -> object:
        if index < len(self.pos):
            return self.pos[index]
        return self.kw.get(name, default)


class _Return(NamedTuple):
    values: list[object]


# Other spellings of the same modules.
_ALIASES = {
    "posix": "os",
    "nt": "os",
    "posixpath": "os.path",
    "ntpath": "os.path",
    "commands": "subprocess",
    "urllib2": "urllib.request",
    "__builtin__": "builtins",
    "io.open": "builtins.open",
    "codecs.open": "builtins.open",
    "urllib.urlopen": "urllib.request.urlopen",
    "urllib.urlretrieve": "urllib.request.urlretrieve",
    "pathlib.PosixPath": "pathlib.Path",
    "pathlib.PurePath": "pathlib.Path",
    "pathlib.PurePosixPath": "pathlib.Path",
    "pathlib.WindowsPath": "pathlib.Path",
    "base64.decodebytes": "base64.b64decode",
    "base64.decodestring": "base64.b64decode",
    "base64.standard_b64decode": "base64.b64decode",
    "binascii.a2b_base64": "base64.b64decode",
    "binascii.unhexlify": "bytes.fromhex",
    "binascii.a2b_hex": "bytes.fromhex",
    "base64.b16decode": "bytes.fromhex",
    "builtins.bytes.fromhex": "bytes.fromhex",
    "builtins.bytearray.fromhex": "bytes.fromhex",
    "httpx": "requests",
    "requests.api": "requests",
    "http.server.ThreadingHTTPServer": "http.server.HTTPServer",
    "socketserver.TCPServer": "http.server.HTTPServer",
    "socketserver.ThreadingTCPServer": "http.server.HTTPServer",
    "ssl.wrap_socket": "socket.wrap",
}
_BUILTINS = frozenset(
    {
        "open",
        "exec",
        "eval",
        "compile",
        "__import__",
        "getattr",
        "chr",
        "ord",
        "bytes",
        "bytearray",
        "str",
        "int",
        "list",
        "tuple",
        "reversed",
        "map",
        "dict",
        "len",
        "print",
        "execfile",
        "input",
        "globals",
        "vars",
        "sorted",
        "set",
        "repr",
        "iter",
        "next",
        "range",
    }
)
_SHELL_MODULES = ("os", "subprocess", "pty", "shutil", "builtins", "socket", "ctypes")
# Stat constants, for chmod(path, stat.S_ISUID | 0o755).
_STAT = {
    "S_ISUID": 0o4000,
    "S_ISGID": 0o2000,
    "S_ISVTX": 0o1000,
    "S_IRWXU": 0o700,
    "S_IRUSR": 0o400,
    "S_IWUSR": 0o200,
    "S_IXUSR": 0o100,
    "S_IRWXG": 0o070,
    "S_IRGRP": 0o040,
    "S_IWGRP": 0o020,
    "S_IXGRP": 0o010,
    "S_IRWXO": 0o007,
    "S_IROTH": 0o004,
    "S_IWOTH": 0o002,
    "S_IXOTH": 0o001,
}
_SAFE_INT = 1 << 64


def analyse_python(code: str, nested: Nested, depth: int = 0) -> CodeAnalysis:
    collector = Collector("python", nested, depth)
    tree = _parse(code, collector)
    if tree is not None:
        analyser = _Analyser(collector, len(code))
        try:
            analyser.run(tree)
            collector.effects.extend(cloud_destruction(tree))
        except RecursionError:
            collector.problem("python code nested too deeply to analyse")
    return collector.result()


def _parse(code: str, collector: Collector) -> ast.Module | None:
    """The module, or what can be salvaged line by line when it does not parse (Python 2
    code run by a `python` that may be Python 2)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings about the code are not ours to log
            return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        pass
    collector.parse_error = True
    body: list[ast.stmt] = []
    for line in code.splitlines()[:2000]:
        line = line.strip()
        if not line:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                body.extend(ast.parse(line).body)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            continue
    return ast.Module(body=body, type_ignores=[])


class _Analyser:
    def __init__(self, out: Collector, size: int) -> None:
        self.out = out
        self.globals: dict[str, object] = {"__name__": "__main__", "__file__": "<string>"}
        self.scopes: list[dict[str, object]] = [self.globals]
        self.star_modules: list[str] = []
        self.budget = 5_000 + 10 * size  # steps before unrolling and inlining stop
        self.limit = 100_000 + 100 * size  # steps before analysis stops altogether
        self.steps = 0
        self.depth = 0
        self.inlined = 0
        self.analysed: set[int] = set()  # ids of function nodes whose bodies were walked
        self.functions: list[ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda] = []
        self.returns: list[_Return] = []
        self.sockets: dict[int, object] = {}  # socket number → the host it connected to
        self.socket_count = 0
        # names a process's name or command line was matched against (`if p.name() in
        # WATCH`): the processes a later kill of a listed process picks
        self.process_names: list[str] = []
        self.stopped = False
        self.inlining: list[ast.AST] = []  # functions being inlined, innermost last
        # name -> the names its object was built on (`t = tarfile.open(fileobj=buf)`): what
        # is put into t lands in buf too
        self.built_on: dict[str, set[str]] = {}

    # --- driving ----------------------------------------------------------------------

    def run(self, tree: ast.Module) -> None:
        self.built_on = _built_on(tree)
        self.block(tree.body)
        # Functions never called with known arguments: their bodies still run somewhere.
        index = 0
        while index < len(self.functions) and not self.stopped:
            node = self.functions[index]
            index += 1
            if id(node) in self.analysed:
                continue
            self.analysed.add(id(node))
            scope: dict[str, object] = dict.fromkeys(_params(node.args), UNKNOWN)
            self.scopes.append(scope)
            try:
                if isinstance(node, ast.Lambda):
                    self.value(node.body)
                else:
                    self.block(node.body)
            finally:
                self.scopes.pop()

    @property
    def cheap(self) -> bool:
        return self.steps > self.budget

    def step(self) -> bool:
        self.steps += 1
        if self.steps > self.limit:
            if not self.stopped:
                self.out.problem("python code too complex to analyse in full")
            self.stopped = True
        return not self.stopped

    def block(self, body: Sequence[ast.stmt]) -> None:
        for statement in body:
            if not self.step():
                return
            self.statement(statement)

    # --- scopes -----------------------------------------------------------------------

    def lookup(self, name: str) -> object:
        scope = self.scopes[-1]
        if name in scope:
            return scope[name]
        if name in self.globals:
            return self.globals[name]
        for module in self.star_modules:
            return Ref(_canonical(f"{module}.{name}"))
        if name in _BUILTINS:
            return Ref(f"builtins.{name}")
        return UNKNOWN

    def bind(self, target: ast.expr, value: object) -> None:
        if isinstance(target, ast.Name):
            self.scopes[-1][target.id] = value
        elif isinstance(target, ast.Tuple | ast.List):
            items = value if is_list(value) else None
            plain = [e for e in target.elts if not isinstance(e, ast.Starred)]
            if items is not None and len(items) == len(target.elts) == len(plain):
                for element, item in zip(target.elts, items, strict=True):
                    self.bind(element, item)
            else:
                for element in target.elts:
                    inner = element.value if isinstance(element, ast.Starred) else element
                    self.bind(inner, UNKNOWN)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, UNKNOWN)
        else:  # attribute or subscript: evaluate its parts for their effects
            self.value(target)

    def assigned_names(self, body: Sequence[ast.stmt]) -> set[str]:
        names: set[str] = set()
        for statement in body:
            for node in ast.walk(statement):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    names.add(node.id)
        return names

    # --- statements -------------------------------------------------------------------

    def statement(self, node: ast.stmt) -> None:
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                self.out.problem("python code nested too deeply to analyse")
                return
            self._statement(node)
        finally:
            self.depth -= 1

    def _statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Expr):
            self.value(node.value)
        elif isinstance(node, ast.Assign):
            value = self.value(node.value)
            for target in node.targets:
                self.bind(target, value)
        elif isinstance(node, ast.AugAssign):
            current = self.value(node.target) if isinstance(node.target, ast.Name) else UNKNOWN
            value = self.binop(node.op, current, self.value(node.value))
            self.bind(node.target, value)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.bind(node.target, self.value(node.value))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                name = _canonical(alias.name)
                if alias.asname:
                    self.scopes[-1][alias.asname] = Ref(name)
                else:
                    top = alias.name.split(".")[0]
                    self.scopes[-1][top] = Ref(_canonical(top))
        elif isinstance(node, ast.ImportFrom):
            module = _canonical(node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    self.star_modules.append(module)
                else:
                    self.scopes[-1][alias.asname or alias.name] = Ref(
                        _canonical(f"{module}.{alias.name}")
                    )
        elif isinstance(node, ast.If):
            test = self.value(node.test)
            if _constant(test) and isinstance(node.test, ast.Constant | ast.Compare):
                self.block(node.body if test else node.orelse)
            else:
                self.branches([node.body, node.orelse])
        elif isinstance(node, ast.For | ast.AsyncFor):
            self.loop(node.target, self.value(node.iter), node.body)
            self.block(node.orelse)
        elif isinstance(node, ast.While):
            self.value(node.test)
            self.forget(node.body)
            self.block(node.body)
            self.block(node.orelse)
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                value = self.value(item.context_expr)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, value)
            self.block(node.body)
        elif isinstance(node, ast.Try | ast.TryStar):
            self.block(node.body)
            for handler in node.handlers:
                if handler.name:
                    self.scopes[-1][handler.name] = UNKNOWN
                self.block(handler.body)
            self.block(node.orelse)
            self.block(node.finalbody)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                self.value(decorator)
            self.functions.append(node)
            self.scopes[-1][node.name] = Func(node)
        elif isinstance(node, ast.ClassDef):
            for base in node.bases:
                self.value(base)
            scope: dict[str, object] = {}
            self.scopes.append(scope)
            try:
                self.block(node.body)
            finally:
                self.scopes.pop()
            self.scopes[-1][node.name] = UNKNOWN
        elif isinstance(node, ast.Return):
            value = self.value(node.value) if node.value is not None else None
            if self.returns:
                self.returns[-1].values.append(value)
        elif isinstance(node, ast.Match):
            self.value(node.subject)
            self.branches([case.body for case in node.cases])
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.value(child)
                elif isinstance(child, ast.stmt):
                    self.statement(child)

    def branches(self, bodies: Sequence[Sequence[ast.stmt]]) -> None:
        """Every branch may run: each starts from the same values; afterwards a name any
        branch assigned differently is unknown."""
        before = dict(self.scopes[-1])
        outcomes: list[dict[str, object]] = []
        for body in bodies:
            self.scopes[-1].clear()
            self.scopes[-1].update(before)
            self.block(body)
            outcomes.append(dict(self.scopes[-1]))
        if len(bodies) == 1 or not bodies[-1]:
            outcomes.append(before)  # a branch may not run at all
        merged: dict[str, object] = {}
        for name in set().union(*outcomes):
            values = [o.get(name, UNKNOWN) for o in outcomes]
            first = values[0]
            merged[name] = first if all(_same(first, v) for v in values[1:]) else UNKNOWN
        self.scopes[-1].clear()
        self.scopes[-1].update(merged)

    def forget(self, body: Sequence[ast.stmt]) -> None:
        """Names a loop body assigns change between iterations: unknown inside the loop."""
        for name in self.assigned_names(body):
            self.scopes[-1][name] = UNKNOWN

    def loop(self, target: ast.expr, iterable: object, body: Sequence[ast.stmt]) -> None:
        items = _items(iterable)
        if items is not None and not self.cheap and len(items) <= MAX_ITEMS:
            for item in items:
                self.bind(target, item)
                self.block(body)
                if self.stopped:
                    return
            return
        self.bind(target, UNKNOWN)
        self.forget(body)
        self.bind(target, UNKNOWN)
        self.block(body)

    # --- expressions ------------------------------------------------------------------

    def value(self, node: ast.expr | None) -> object:
        if node is None:
            return None
        if not self.step():
            return UNKNOWN
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                self.out.problem("python code nested too deeply to analyse")
                return UNKNOWN
            return self._value(node)
        finally:
            self.depth -= 1

    def _value(self, node: ast.expr) -> object:
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bytes):
                return value.decode("latin-1")
            if isinstance(value, str | int | float | bool) or value is None:
                return value
            return UNKNOWN
        if isinstance(node, ast.Name):
            return self.lookup(node.id)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Attribute):
            return self.attribute(self.value(node.value), node.attr)
        if isinstance(node, ast.JoinedStr):
            return concat(self.formatted(part) for part in node.values)
        if isinstance(node, ast.FormattedValue):
            return self.formatted(node)
        if isinstance(node, ast.BinOp):
            return self.binop(node.op, self.value(node.left), self.value(node.right))
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            return self.sequence(node.elts)
        if isinstance(node, ast.Dict):
            mapping: dict[str, object] = {}
            for key, item in zip(node.keys, node.values, strict=True):
                entry = self.value(item)
                if key is None:
                    if isinstance(entry, dict):
                        mapping.update(entry)
                    elif isinstance(entry, Data):
                        mapping[f"**{len(mapping)}"] = entry
                    continue
                name = self.value(key)
                mapping[str(name) if _constant(name) else f"?{len(mapping)}"] = entry
            return mapping
        if isinstance(node, ast.BoolOp):
            values = [self.value(v) for v in node.values]
            if all(_constant(v) for v in values):
                if isinstance(node.op, ast.And):
                    return next((v for v in values if not v), values[-1])
                return next((v for v in values if v), values[-1])
            return UNKNOWN
        if isinstance(node, ast.UnaryOp):
            operand = self.value(node.operand)
            if isinstance(node.op, ast.Not) and _constant(operand):
                return not operand
            if isinstance(operand, int) and not isinstance(operand, bool):
                if isinstance(node.op, ast.USub):
                    return -operand
                if isinstance(node.op, ast.Invert):
                    return ~operand
                if isinstance(node.op, ast.UAdd):
                    return operand
            return UNKNOWN
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.IfExp):
            test = self.value(node.test)
            if _constant(test) and isinstance(node.test, ast.Constant | ast.Compare):
                return self.value(node.body if test else node.orelse)
            body, orelse = self.value(node.body), self.value(node.orelse)
            return body if _same(body, orelse) else UNKNOWN
        if isinstance(node, ast.ListComp | ast.GeneratorExp | ast.SetComp):
            return self.comprehension(node.elt, node.generators)
        if isinstance(node, ast.DictComp):
            held = self.comprehension(node.value, node.generators)
            return held if isinstance(held, Data) else UNKNOWN
        if isinstance(node, ast.Lambda):
            self.functions.append(node)
            return Func(node)
        if isinstance(node, ast.NamedExpr):
            named = self.value(node.value)
            self.bind(node.target, named)
            return named
        if isinstance(node, ast.Await | ast.Yield | ast.YieldFrom | ast.Starred):
            return self.value(node.value)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.value(child)
        return UNKNOWN

    def formatted(self, node: ast.expr) -> object:
        if not isinstance(node, ast.FormattedValue):
            return self.value(node)
        value = self.value(node.value)
        if node.format_spec is not None:
            spec = self.value(node.format_spec)
            if spec != "":
                return UNKNOWN
        if node.conversion == ord("r"):
            return repr(value) if isinstance(value, str) else UNKNOWN
        if isinstance(value, PathObj):
            return value.path
        return value if isinstance(value, str | int | float | Data) else UNKNOWN

    def sequence(self, elements: Sequence[ast.expr]) -> object:
        items: list[object] = []
        for element in elements:
            if isinstance(element, ast.Starred):
                inner = self.value(element.value)
                spread = _items(inner)
                if spread is None:
                    return UNKNOWN
                items.extend(spread)
            else:
                items.append(self.value(element))
            if len(items) > MAX_ITEMS:
                return UNKNOWN
        return tuple(items)

    def comprehension(self, element: ast.expr, generators: list[ast.comprehension]) -> object:
        first = generators[0]
        iterable = self.value(first.iter)
        items = _items(iterable)
        self.scopes.append(dict(self.scopes[-1]))
        try:
            if (
                len(generators) == 1
                and not first.ifs
                and items is not None
                and len(items) <= MAX_ITEMS
                and not self.cheap
            ):
                results = []
                for item in items:
                    self.bind(first.target, item)
                    results.append(self.value(element))
                return tuple(results)
            self.bind(first.target, UNKNOWN)
            for generator in generators[1:]:
                self.value(generator.iter)
                self.bind(generator.target, UNKNOWN)
            for generator in generators:
                for condition in generator.ifs:
                    self.value(condition)
            # What each element holds, even when how many cannot be told: `{k: os.environ[k]
            # for k in keys}` still holds the environment.
            return carried_through((self.value(element),))
        finally:
            self.scopes.pop()

    def compare(self, node: ast.Compare) -> object:
        left = self.value(node.left)
        rights = [self.value(c) for c in node.comparators]
        if len(rights) == 1 and isinstance(node.ops[0], ast.Eq | ast.In):
            self._note_process_names(left, rights[0])
        if len(rights) != 1 or not _constant(left) or not _constant(rights[0]):
            return UNKNOWN
        right = rights[0]
        op = node.ops[0]
        try:
            if isinstance(op, ast.Eq):
                return left == right
            if isinstance(op, ast.NotEq):
                return left != right
            if isinstance(op, ast.In) and isinstance(right, str) and isinstance(left, str):
                return left in right
            if isinstance(op, ast.NotIn) and isinstance(right, str) and isinstance(left, str):
                return left not in right
        except TypeError:
            return UNKNOWN
        return UNKNOWN

    def _note_process_names(self, left: object, right: object) -> None:
        """`p.name() == "x"`, `p.info["name"] in {...}`, `"miner" in p.cmdline()`: which
        processes the code picks (only picks: `not in` and `!=` exclude)."""
        for field, names in ((left, right), (right, left)):
            if isinstance(field, Handle) and field.kind == "process_field":
                listed = (names,) if isinstance(names, str) else _items(names) or ()
                found = [n for n in listed if isinstance(n, str) and n]
                self.process_names.extend(found[: MAX_ITEMS - len(self.process_names)])

    def binop(self, op: ast.operator, left: object, right: object) -> object:
        if isinstance(op, ast.Add):
            if is_list(left) and is_list(right):
                assert isinstance(left, tuple) and isinstance(right, tuple)
                joined = left + right
                return joined if len(joined) <= MAX_ITEMS else UNKNOWN
            if _is_number(left) and _is_number(right):
                return _bounded(left + right)  # type: ignore[operator]
            if _textual(left) or _textual(right):
                return concat((left, right))
            return UNKNOWN
        if isinstance(op, ast.Div) and isinstance(left, PathObj):
            return PathObj(join_path((left.path, _path_text(right))))
        if isinstance(op, ast.Mod) and isinstance(left, str):
            return _printf(left, right)
        if isinstance(op, ast.Mult):
            if isinstance(left, str) and isinstance(right, int) and not isinstance(right, bool):
                return left * right if 0 <= len(left) * right <= MAX_TEXT else UNKNOWN
            if _is_number(left) and _is_number(right):
                return _bounded(left * right)  # type: ignore[operator]
            return UNKNOWN
        if _is_int(left) and _is_int(right):
            assert isinstance(left, int) and isinstance(right, int)
            if isinstance(op, ast.BitOr):
                return left | right
            if isinstance(op, ast.BitAnd):
                return left & right
            if isinstance(op, ast.BitXor):
                return left ^ right
            if isinstance(op, ast.Sub):
                return _bounded(left - right)
            if isinstance(op, ast.LShift) and 0 <= right < 64:
                return _bounded(left << right)
        return UNKNOWN

    def subscript(self, node: ast.Subscript) -> object:
        container = self.value(node.value)
        if isinstance(node.slice, ast.Slice):
            lower = self.value(node.slice.lower)
            upper = self.value(node.slice.upper)
            stride = self.value(node.slice.step)
            if not all(v is None or _is_int(v) for v in (lower, upper, stride)) or stride == 0:
                return derived(container, None) if isinstance(container, Data) else UNKNOWN
            cut = slice(_int_or_none(lower), _int_or_none(upper), _int_or_none(stride))
            if isinstance(container, str) or is_list(container):
                return container[cut]
            if isinstance(container, Data) and container.text is not None:
                return derived(container, container.text[cut])
            return derived(container, None) if isinstance(container, Data) else UNKNOWN
        key = self.value(node.slice)
        if isinstance(container, Handle) and container.kind == "process_field":
            return container  # p.info["name"]
        if container == Ref("os.environ"):
            return env_value(key)
        if (isinstance(container, str) or is_list(container)) and _is_int(key):
            assert isinstance(key, int)
            try:
                return container[key]
            except IndexError:
                return UNKNOWN
        if isinstance(container, dict) and isinstance(key, str):
            return container.get(key, UNKNOWN)
        if isinstance(container, Data):
            return derived(container, None)
        return UNKNOWN

    def attribute(self, obj: object, name: str) -> object:
        if isinstance(obj, Ref):
            full = _canonical(f"{obj.name}.{name}")
            if full in _CONSTANTS:
                return _CONSTANTS[full]
            if obj.name == "stat" and name in _STAT:
                return _STAT[name]
            return Ref(full)
        if isinstance(obj, Data):
            return obj  # resp.text, resp.content: still the downloaded data
        if isinstance(obj, PathObj):
            text = text_of(obj.path)
            if name in ("parent", "name", "stem", "suffix") and text is not None:
                if name == "parent":
                    return PathObj(posixpath.dirname(text.rstrip("/")) or ".")
                base = posixpath.basename(text.rstrip("/"))
                if name == "name":
                    return base
                stem, suffix = posixpath.splitext(base)
                return stem if name == "stem" else suffix
            return Bound(obj, name)
        if isinstance(obj, Handle) and obj.kind in ("listed_process", "process_field"):
            return Handle("process_field") if name in ("info", "pid") else Bound(obj, name)
        if isinstance(obj, Handle) and obj.kind == "process" and name in ("stdin",):
            return Handle("stdin", 0, obj.info)
        if isinstance(obj, Handle) and obj.kind == "wfile" and name == "name":
            return obj.info  # the path it writes
        return Bound(obj, name)

    # --- calls ------------------------------------------------------------------------

    def arguments(self, node: ast.Call) -> Args:
        pos: list[object] = []
        for argument in node.args:
            if isinstance(argument, ast.Starred):
                spread = _items(self.value(argument.value))
                if spread is None:
                    pos.append(UNKNOWN)
                else:
                    pos.extend(spread)
            else:
                pos.append(self.value(argument))
        kw: dict[str, object] = {}
        for keyword in node.keywords:
            value = self.value(keyword.value)
            if keyword.arg is None:
                if isinstance(value, dict):
                    kw.update(value)
                elif isinstance(value, Data):
                    kw[f"**{len(kw)}"] = value
            else:
                kw[keyword.arg] = value
        return Args(tuple(pos), kw)

    def call(self, node: ast.Call) -> object:
        callee = node.func
        if isinstance(callee, ast.Attribute) and callee.attr in SECRET_READERS:
            # `vault.secrets.kv.v2.read_secret_version(...)`: whatever the client, a secret.
            self.arguments(node)
            return Data(Origin.UNKNOWN, (secret_data(f"python {callee.attr}"),))
        hub_loader = callee.attr if isinstance(callee, ast.Attribute) else None
        if isinstance(callee, ast.Name):
            hub_loader = callee.id
        if hub_loader in _HUB_CODE_LOADERS:
            _hub_code(self, node, 1 if hub_loader == "pipeline" else 0)
        if isinstance(callee, ast.Attribute):
            # obj.name(...): a method call, even where obj.name alone reads a property
            obj = self.value(callee.value)
            if not isinstance(obj, Ref | PathObj):
                given = self.arguments(node)
                if callee.attr in _FILLS and isinstance(callee.value, ast.Name):
                    self.fill(callee.value.id, given)
                return self.method(obj, callee.attr, given)
            func = self.attribute(obj, callee.attr)
        else:
            func = self.value(callee)
        args = self.arguments(node)
        return self.invoke(func, args, node)

    def invoke(self, func: object, args: Args, node: ast.Call | None) -> object:
        if isinstance(func, Partial):
            return self.invoke(
                func.func, Args(func.args + args.pos, {**func.kwargs, **args.kw}), node
            )
        if isinstance(func, Ref):
            handler = _API.get(func.name)
            if handler is not None:
                return handler(self, args)
            module = func.name.rsplit(".", 1)[0]
            if func.name.endswith(".?") and module.split(".")[0] in _SHELL_MODULES:
                self.out.problem(f"calls a function of {module} chosen at run time")
            return carried_through((*args.pos, *args.kw.values()))
        if isinstance(func, Bound):
            return self.method(func.obj, func.name, args)
        if isinstance(func, Func):
            return self.inline(func, args)
        if isinstance(func, PathObj):
            return UNKNOWN
        return UNKNOWN

    def fill(self, name: str, args: Args) -> None:
        """`t.add(Path.home() / ".ssh")`, `buf.write(key)`: the object now holds what it was
        given (a path added is read into it), and so does what it was built on."""
        carried: list[str] = []
        for value in (*args.pos, *args.kw.values()):
            if isinstance(value, PathObj) or (
                isinstance(value, str) and value.startswith(("/", "~"))
            ):
                path = _path_text(value)
                self.out.read(path, "fill")
                carried.append(_source(self.out, path))
            carried.extend(sources_of(value))
        if not carried:
            return
        names, pending = {name}, [name]
        while pending and len(names) < _MAX_FILLED:
            for other in self.built_on.get(pending.pop(), ()):
                if other not in names:
                    names.add(other)
                    pending.append(other)
        for each in names:
            held = self.lookup(each)
            if held is not UNKNOWN and not isinstance(held, Data):
                continue  # lists, text, open files the analysis follows keep what they are
            had = held.sources if isinstance(held, Data) else ()
            origin = held.origin if isinstance(held, Data) else Origin.FILE
            scope = next((s for s in reversed(self.scopes) if each in s), self.scopes[-1])
            scope[each] = Data(origin, tuple(dict.fromkeys((*had, *carried))))

    def inline(self, func: Func, args: Args) -> object:
        node = func.node
        if self.cheap or self.inlined >= MAX_INLINE or any(r is node for r in self.inlining):
            return UNKNOWN
        self.analysed.add(id(node))
        scope = _bind_params(node.args, args)
        self.scopes.append(scope)
        self.returns.append(_Return([]))
        self.inlined += 1
        self.inlining.append(node)
        try:
            if isinstance(node, ast.Lambda):
                return self.value(node.body)
            self.block(node.body)
            values = self.returns[-1].values
            if values and all(_same(values[0], v) for v in values[1:]):
                return values[0]
            return None if not values else UNKNOWN
        finally:
            self.inlining.pop()
            self.inlined -= 1
            self.returns.pop()
            self.scopes.pop()

    def method(self, obj: object, name: str, args: Args) -> object:
        if isinstance(obj, str):
            return _string_method(self, obj, name, args)
        if isinstance(obj, Data):
            return _data_method(self, obj, name, args)
        if isinstance(obj, PathObj):
            return _path_method(self, obj, name, args)
        if isinstance(obj, Handle):
            return _handle_method(self, obj, name, args)
        if isinstance(obj, dict) and name in ("get", "copy", "items", "values", "keys"):
            if name == "get":
                key = args.get(0, "key")
                return (
                    obj.get(key, args.get(1, "default", None))
                    if isinstance(key, str)
                    else (UNKNOWN)
                )
            return obj if name == "copy" else UNKNOWN
        if isinstance(obj, Ref):
            if obj.name == "os.environ":
                if name in ("get", "setdefault"):
                    return env_value(args.get(0, "key"))
                if name in ("copy", "items", "values", "keys"):
                    return ENVIRONMENT_DATA
            return UNKNOWN
        return UNKNOWN


# --- helpers ---------------------------------------------------------------------------


_FILLS = frozenset(
    {"add", "addfile", "write", "writestr", "writelines", "append", "extend", "update", "put",
     "insert", "feed", "write_bytes", "write_text"}
)  # fmt: skip
_MAX_FILLED = 16


def _built_on(tree: ast.Module) -> dict[str, set[str]]:
    """For `t = f(..., buf, ...)` and `with f(fileobj=buf) as t`: t -> {buf}."""
    links: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        pairs: list[tuple[ast.expr, ast.expr]] = []
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            pairs.append((node.targets[0], node.value))
        elif isinstance(node, ast.With | ast.AsyncWith):
            pairs.extend(
                (item.optional_vars, item.context_expr)
                for item in node.items
                if item.optional_vars is not None
            )
        for target, value in pairs:
            if isinstance(target, ast.Name) and isinstance(value, ast.Call):
                given = [*value.args, *(k.value for k in value.keywords)]
                names = {a.id for a in given if isinstance(a, ast.Name)}
                if names:
                    links.setdefault(target.id, set()).update(names)
        if len(links) >= _MAX_FILLED * 8:
            break
    return links


def _canonical(name: str) -> str:
    if name in _ALIASES:
        return _ALIASES[name]
    head, _, rest = name.partition(".")
    if head in _ALIASES and rest:
        return f"{_ALIASES[head]}.{rest}"
    for prefix in ("os.path", "pathlib"):
        if name.startswith(prefix + ".") and name.count(".") > prefix.count(".") + 1:
            return name
    return name


def _params(arguments: ast.arguments) -> list[str]:
    names = [a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]
    if arguments.vararg:
        names.append(arguments.vararg.arg)
    if arguments.kwarg:
        names.append(arguments.kwarg.arg)
    return names


def _bind_params(arguments: ast.arguments, args: Args) -> dict[str, object]:
    scope: dict[str, object] = {name: UNKNOWN for name in _params(arguments)}
    positional = [a.arg for a in arguments.posonlyargs + arguments.args]
    for index, name in enumerate(positional):
        if index < len(args.pos):
            scope[name] = args.pos[index]
        elif name in args.kw:
            scope[name] = args.kw[name]
    for argument in arguments.kwonlyargs:
        if argument.arg in args.kw:
            scope[argument.arg] = args.kw[argument.arg]
    if arguments.vararg:
        scope[arguments.vararg.arg] = tuple(args.pos[len(positional) :])
    return scope


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) else None


def _constant(value: object) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _bounded(value: object) -> object:
    if isinstance(value, int) and abs(value) > _SAFE_INT:
        return UNKNOWN
    return value


def _textual(value: object) -> bool:
    return isinstance(value, str | Data)


def _same(a: object, b: object) -> bool:
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def _items(value: object) -> tuple[object, ...] | None:
    """The elements a value iterates over, when known."""
    if is_list(value):
        assert isinstance(value, tuple)
        return value
    if isinstance(value, str) and len(value) <= MAX_ITEMS:
        return tuple(value)
    if isinstance(value, dict):
        return tuple(value)
    return None


def _path_text(value: object) -> object:
    return value.path if isinstance(value, PathObj) else value


def _printf(template: str, values: object) -> object:
    """`"%s %d" % (a, b)` for plain conversions; anything fancier is not folded."""
    items = values if is_list(values) else (values,)
    assert isinstance(items, tuple)
    out: list[object] = []
    index = 0
    position = 0
    while position < len(template):
        char = template[position]
        if char != "%":
            out.append(char)
            position += 1
            continue
        conversion = template[position + 1 : position + 2]
        position += 2
        if conversion == "%":
            out.append("%")
            continue
        if conversion not in ("s", "d", "i", "r") or index >= len(items):
            return UNKNOWN
        item = items[index]
        index += 1
        if conversion == "r":
            out.append(repr(item) if isinstance(item, str) else UNKNOWN)
        else:
            out.append(_path_text(item))
    return concat(out)


def _format(template: str, args: Args) -> object:
    """`"{} {0} {name}".format(...)` without conversions or format specs."""
    out: list[object] = []
    automatic = 0
    position = 0
    while position < len(template):
        char = template[position]
        if char in "{}" and template[position : position + 2] in ("{{", "}}"):
            out.append(char)
            position += 2
            continue
        if char == "}":
            return UNKNOWN
        if char != "{":
            out.append(char)
            position += 1
            continue
        end = template.find("}", position)
        if end < 0:
            return UNKNOWN
        field = template[position + 1 : end]
        position = end + 1
        if any(c in field for c in "!:.[{"):
            return UNKNOWN
        if field == "":
            value = args.pos[automatic] if automatic < len(args.pos) else UNKNOWN
            automatic += 1
        elif field.isdigit():
            number = int(field)
            value = args.pos[number] if number < len(args.pos) else UNKNOWN
        else:
            value = args.kw.get(field, UNKNOWN)
        out.append(_path_text(value))
    return concat(out)


def _to_bytes(value: object) -> bytes | None:
    """A value's bytes (bytes are held one character per byte)."""
    text = text_of(value)
    if text is None or (isinstance(value, Data) and value.text is None):
        return None
    try:
        return text.encode("latin-1")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


def _decoded(raw: bytes | None, source: object) -> object:
    """The result of decoding `source`: always data from DECODED (hidden from a reader),
    unless the input was not known either."""
    if raw is None and not isinstance(source, str | Data):
        return Data(Origin.DECODED)
    return decoded(raw, binary=True)


def _codec(value: object, encoding: object) -> object:
    """codecs.decode / str.decode with a named codec."""
    name = (text_of(encoding) or "utf-8").lower().replace("-", "_")
    text = text_of(value)
    if name in ("rot13", "rot_13"):
        return Data(Origin.DECODED, (), rot13(text)) if text is not None else Data(Origin.DECODED)
    if name in ("hex", "hex_codec"):
        return _decoded(hexdecode(text) if text is not None else None, value)
    if name in ("base64", "base64_codec", "base_64"):
        return _decoded(b64decode(text) if text is not None else None, value)
    if name in ("zlib", "zlib_codec", "zip"):
        raw = _to_bytes(value)
        return _decoded(decompress(raw, "zlib") if raw is not None else None, value)
    if name in ("bz2", "bz2_codec"):
        raw = _to_bytes(value)
        return _decoded(decompress(raw, "bz2") if raw is not None else None, value)
    raw = _to_bytes(value)
    if raw is None:
        return derived(value, None) if isinstance(value, Data) else UNKNOWN
    return derived(value, raw.decode("utf-8", "replace"))


def _string_method(analyser: _Analyser, text: str, name: str, args: Args) -> object:
    first = args.get(0, "")
    if name == "join":
        items = _items(first)
        if items is None:
            return derived(first, None) if isinstance(first, Data) else UNKNOWN
        parts: list[object] = []
        for index, item in enumerate(items):
            if index:
                parts.append(text)
            parts.append(_path_text(item))
        return concat(parts)
    if name == "format":
        return _format(text, args)
    if name == "replace" and isinstance(first, str):
        second = args.get(1, "new")
        if not isinstance(second, str):
            return UNKNOWN
        result = text.replace(first, second)
        return result if len(result) <= MAX_TEXT else UNKNOWN
    if name in ("strip", "lstrip", "rstrip"):
        chars = first if isinstance(first, str) and first else None
        return getattr(text, name)(chars)
    if name in ("lower", "upper", "title", "capitalize", "swapcase", "casefold"):
        return str(getattr(text, name)())
    if name in ("encode",):
        return text.encode("utf-8", "surrogatepass").decode("latin-1")
    if name == "decode":
        return _codec(text, args.get(0, "encoding", "utf-8"))
    if name in ("split", "rsplit", "splitlines"):
        separator = first if isinstance(first, str) and first else None
        pieces = text.splitlines() if name == "splitlines" else getattr(text, name)(separator)
        return tuple(pieces) if len(pieces) <= MAX_ITEMS else UNKNOWN
    if name == "translate" and isinstance(first, dict):
        table = {k: v for k, v in first.items() if isinstance(v, str)}
        return "".join(table.get(c, c) for c in text)
    if name == "maketrans" and isinstance(first, str):
        second = args.get(1, "y")
        if isinstance(second, str) and len(first) == len(second):
            return dict(zip(first, second, strict=True))
        return UNKNOWN
    if name in ("startswith", "endswith") and isinstance(first, str):
        return bool(getattr(text, name)(first))
    if name in ("zfill", "center", "ljust", "rjust"):
        return UNKNOWN
    return UNKNOWN


def _data_method(analyser: _Analyser, data: Data, name: str, args: Args) -> object:
    if name == "decode":
        return _codec(data, args.get(0, "encoding", "utf-8"))
    if name == "encode":
        return data
    if name in ("strip", "lstrip", "rstrip", "lower", "upper", "replace", "join", "split"):
        if data.text is not None and name in ("strip", "lstrip", "rstrip", "lower", "upper"):
            return derived(data, str(getattr(data.text, name)()))
        return derived(data, None)
    if name == "write" and data.origin is not Origin.LITERAL:
        return UNKNOWN
    return Data(data.origin, data.sources, data.text if name in ("read", "getvalue") else None)


def _path_method(analyser: _Analyser, path: PathObj, name: str, args: Args) -> object:
    out = analyser.out
    api = f"Path.{name}"
    target = path.path
    first = args.get(0, "")
    if name in ("read_text", "read_bytes"):
        out.read(target, api)
        return Data(Origin.FILE, (_source(out, target),))
    if name in ("write_text", "write_bytes"):
        out.write(target, api, first)
        return None
    if name == "open":
        return _open(analyser, target, args.get(0, "mode", "r"), api)
    if name == "unlink" or name == "rmdir":
        out.delete(target, api)
    elif name in ("rename", "replace"):
        out.move(target, _path_text(first), api)
        return PathObj(_path_text(first))
    elif name == "chmod" or name == "lchmod":
        out.chmod(target, first, api)
    elif name == "touch":
        out.write(target, api, "")
    elif name == "mkdir":
        out.write(target, api, flags=("directory",))
    elif name in ("symlink_to", "hardlink_to"):
        out.write(target, api, _path_text(first), flags=("link",))
    elif name in ("iterdir", "glob", "rglob"):
        out.read(target, api, listing=True)
        pattern = first if name != "iterdir" else "*"
        base = text_of(target)
        pattern_text = text_of(pattern)
        if base is not None and pattern_text is not None:
            prefix = "**/" if name == "rglob" else ""
            return (PathObj(posixpath.join(base, prefix + pattern_text)),)
        return UNKNOWN
    elif name in ("expanduser", "resolve", "absolute"):
        text = text_of(target)
        if text is None:
            return path
        return PathObj(posixpath.normpath(text) if name != "expanduser" else text)
    elif name in ("joinpath", "with_name", "with_suffix"):
        if name == "joinpath":
            return PathObj(join_path((target, *(_path_text(a) for a in args.pos))))
        return PathObj(UNKNOWN)
    elif name in ("exists", "is_file", "is_dir", "stat", "samefile", "is_symlink"):
        return UNKNOWN
    return UNKNOWN


def _source(out: Collector, path: object) -> str:
    return out.target(path)[0]


def _open(analyser: _Analyser, path: object, mode: object, api: str) -> object:
    out = analyser.out
    mode_text = text_of(mode)
    if mode_text is None or isinstance(mode, Data):
        index = out.write(path, api, flags=("unresolved_mode",))
        return Handle("wfile", index, path)
    if any(c in mode_text for c in "wxa+"):
        if "+" in mode_text and "r" in mode_text:
            out.read(path, api)
        index = out.write(path, api, append="a" in mode_text, truncate="w" in mode_text)
        return Handle("wfile", index, path)
    out.read(path, api)
    return Data(Origin.FILE, (_source(out, path),))


def _handle_method(analyser: _Analyser, handle: Handle, name: str, args: Args) -> object:
    out = analyser.out
    first = args.get(0, "data")
    kind = handle.kind
    if kind == "listed_process":
        if name in ("kill", "terminate", "send_signal", "suspend"):
            _kill_listed(analyser, f"psutil.Process.{name}")
            return None
        if name in ("children", "parent", "parents"):
            return (handle,) if name != "parent" else handle
        return Handle("process_field")  # name(), cmdline(), exe(), username(), as_dict()
    if kind == "process_field":
        return handle  # p.name().lower(), p.info.get("name")
    if kind == "native":
        # libc through ctypes does what the os module's function of that name does
        handler = _API.get(f"os.{name}") if name in _LIBC_AS_OS else None
        return handler(analyser, args) if handler is not None else UNKNOWN
    if kind == "known_process" and name in ("kill", "terminate", "send_signal", "suspend"):
        analyser.out.kill(handle.info, f"psutil.Process.{name}")
        return None
    if kind == "wfile":
        if name in ("write", "writelines"):
            content = concat(_items(first) or (UNKNOWN,)) if name == "writelines" else first
            out.add_content(handle.key, content)
        elif name in ("read", "readline", "readlines"):
            return Data(Origin.FILE, (_source(out, handle.info),))
        return None
    if kind == "socket":
        host = analyser.sockets.get(handle.key)
        if name in ("connect", "connect_ex"):
            address = _items(first) or (UNKNOWN, UNKNOWN)
            host_value = address[0] if address else UNKNOWN
            port = address[1] if len(address) > 1 else UNKNOWN
            analyser.sockets[handle.key] = host_value
            out.connect(host_value, port, f"socket.{name}")
            return None
        if name == "bind":
            address = _items(first) or (UNKNOWN, UNKNOWN)
            analyser.sockets[-handle.key - 1] = address
            return None
        if name == "listen":
            listening = analyser.sockets.get(-handle.key - 1, (UNKNOWN, UNKNOWN))
            bound = _items(listening) or (UNKNOWN, UNKNOWN)
            out.listen(_address(bound), "socket.listen")
            return None
        if name in ("send", "sendall", "sendfile", "write"):
            out.send(host, [first], f"socket.{name}")
            return None
        if name == "sendto":
            address = _items(args.get(1, "address")) or (UNKNOWN,)
            out.send(address[0], [first], "socket.sendto")
            return None
        if name in ("recv", "recvfrom", "read", "readline", "makefile"):
            if name == "makefile":
                return handle
            return Data(Origin.NETWORK, (text_of(host) or "?",))
        if name == "accept":
            # (connection, address): what the connection receives comes from the network;
            # what it sends goes back to a peer of the bound address (loopback stays here).
            bound = _items(analyser.sockets.get(-handle.key - 1, (UNKNOWN,))) or (UNKNOWN,)
            analyser.sockets[handle.key] = bound[0]
            return (handle, UNKNOWN)
        if name == "fileno":
            return Handle("fd", handle.key)
        if name in ("wrap_socket",):
            return handle
        return None
    if kind == "http":
        method = text_of(first) or "GET"
        if name == "request":
            body = args.get(2, "body", None)
            if body is not None or method.upper() in ("POST", "PUT", "PATCH"):
                out.send(handle.info, [body], "http.client")
            else:
                out.fetch(handle.info, "http.client")
        if name == "getresponse":
            return Data(Origin.NETWORK, (text_of(handle.info) or "?",))
        return None
    if kind == "session":
        if name in _REQUEST_METHODS or name == "request":
            return _request(analyser, name, args)
        return None
    if kind == "server" and name in ("serve_forever", "handle_request"):
        return None
    if kind == "process" and name == "communicate":
        _feed(analyser, handle.info, args.get(0, "input", None))
        return Data(Origin.UNKNOWN)
    if kind == "stdin" and name == "write":
        _feed(analyser, handle.info, first)
        return None
    if kind == "ftp":
        if name.startswith("stor"):
            out.send(handle.info, [args.get(1, "fp")], f"ftplib.{name}")
        elif name.startswith("retr"):
            out.fetch(handle.info, f"ftplib.{name}")
        return None
    if kind == "smtp" and name in ("sendmail", "send_message"):
        out.send(handle.info, list(args.pos) + list(args.kw.values()), f"smtplib.{name}")
        return None
    if kind == "ssh":
        if name == "connect":
            out.connect(first, args.get(1, "port", 22), "paramiko.connect")
            return None
        if name == "exec_command":
            out.problem("runs a command on another machine over ssh")
            return Data(Origin.NETWORK)
    if kind == "request":
        return None
    return None


def _feed(analyser: _Analyser, command: object, data: object) -> None:
    """Text written to a started process's standard input: for a shell or an
    interpreter it is code, so the command line is judged with it as a here-document."""
    if data is None:
        return
    analyser.out.feed(command, data, "subprocess stdin")


def _address(items: tuple[object, ...]) -> object:
    host = text_of(items[0]) if items else None
    port = text_of(items[1]) if len(items) > 1 else None
    if port is None:
        return UNKNOWN
    return f"{host or ANY_ADDRESS}:{port}"


# --- the effect APIs ----------------------------------------------------------------------

Handler = Callable[[_Analyser, Args], object]
_API: dict[str, Handler] = {}
_CONSTANTS: dict[str, object] = {
    "os.sep": "/",
    "os.path.sep": "/",
    "os.curdir": ".",
    "sys.executable": "python3",
    "os.name": "posix",
    "sys.platform": "linux",
}


def _api(*names: str) -> Callable[[Handler], Handler]:
    def register(function: Handler) -> Handler:
        for name in names:
            _API[name] = function
        return function

    return register


def _ref_of(name: str) -> Handler:
    return lambda analyser, args: Ref(name)


@_api("builtins.open")
def _builtin_open(a: _Analyser, args: Args) -> object:
    return _open(a, _path_text(args.get(0, "file")), args.get(1, "mode", "r"), "open")


@_api("os.open")
def _os_open(a: _Analyser, args: Args) -> object:
    flags = args.get(1, "flags")
    path = _path_text(args.get(0, "path"))
    if not isinstance(flags, int) or flags & 0o3103:  # O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND
        a.out.write(path, "os.open")
    else:
        a.out.read(path, "os.open")
    return UNKNOWN


for _flag, _bits in {
    "O_RDONLY": 0,
    "O_WRONLY": 1,
    "O_RDWR": 2,
    "O_CREAT": 0o100,
    "O_TRUNC": 0o1000,
    "O_APPEND": 0o2000,
}.items():
    _CONSTANTS[f"os.{_flag}"] = _bits


@_api("os.remove", "os.unlink", "os.rmdir", "os.removedirs")
def _remove(a: _Analyser, args: Args) -> object:
    a.out.delete(_path_text(args.get(0, "path")), "os.remove")
    return None


@_api("shutil.rmtree")
def _rmtree(a: _Analyser, args: Args) -> object:
    a.out.delete(_path_text(args.get(0, "path")), "shutil.rmtree", recursive=True)
    return None


@_api("os.rename", "os.replace", "os.renames", "shutil.move")
def _rename(a: _Analyser, args: Args) -> object:
    a.out.move(_path_text(args.get(0, "src")), _path_text(args.get(1, "dst")), "rename")
    return None


@_api("shutil.copy", "shutil.copy2", "shutil.copyfile")
def _copy(a: _Analyser, args: Args) -> object:
    a.out.copy(_path_text(args.get(0, "src")), _path_text(args.get(1, "dst")), "shutil.copy")
    return None


@_api("shutil.copytree")
def _copytree(a: _Analyser, args: Args) -> object:
    a.out.copy(
        _path_text(args.get(0, "src")),
        _path_text(args.get(1, "dst")),
        "shutil.copytree",
        recursive=True,
    )
    return None


@_api("shutil.unpack_archive")
def _unpack_archive(a: _Analyser, args: Args) -> object:
    destination = args.get(1, "extract_dir", None)
    a.out.unpack(
        _path_text(args.get(0, "filename")),
        "." if destination is None else _path_text(destination),
        "shutil.unpack_archive",
    )
    return None


@_api("os.chmod", "os.lchmod")
def _chmod(a: _Analyser, args: Args) -> object:
    a.out.chmod(_path_text(args.get(0, "path")), args.get(1, "mode"), "os.chmod")
    return None


@_api("os.chown", "os.lchown", "shutil.chown")
def _chown(a: _Analyser, args: Args) -> object:
    a.out.chown(_path_text(args.get(0, "path")), "chown")
    return None


@_api("os.symlink", "os.link")
def _link(a: _Analyser, args: Args) -> object:
    a.out.write(
        _path_text(args.get(1, "dst")),
        "os.symlink",
        _path_text(args.get(0, "src")),
        flags=("link",),
    )
    return None


@_api("os.truncate")
def _truncate(a: _Analyser, args: Args) -> object:
    a.out.write(_path_text(args.get(0, "path")), "os.truncate", truncate=True)
    return None


@_api("sqlite3.connect", "sqlite3.dbapi2.connect", "aiosqlite.connect")
def _sqlite_connect(a: _Analyser, args: Args) -> object:
    """A database file opened read-write, like `sqlite3 FILE` in a shell."""
    path = args.get(0, "database")
    if path != ":memory:":
        a.out.write(_path_text(path), "sqlite3.connect", flags=("database",))
    return UNKNOWN


@_api("os.mkdir", "os.makedirs")
def _mkdir(a: _Analyser, args: Args) -> object:
    a.out.write(_path_text(args.get(0, "path")), "os.mkdir", flags=("directory",))
    return None


@_api("os.listdir", "os.scandir")
def _listdir(a: _Analyser, args: Args) -> object:
    path = _path_text(args.get(0, "path", "."))
    a.out.read(path, "os.listdir", listing=True)
    return ("*",)


@_api("os.walk")
def _walk(a: _Analyser, args: Args) -> object:
    path = _path_text(args.get(0, "top"))
    a.out.read(path, "os.walk", listing=True)
    text = text_of(path)
    if text is None:
        return UNKNOWN
    root = posixpath.join(text, "**")
    return ((root, ("*",), ("*",)),)


@_api("glob.glob", "glob.iglob")
def _glob(a: _Analyser, args: Args) -> object:
    pattern = _path_text(args.get(0, "pathname"))
    a.out.read(pattern, "glob.glob", listing=True)
    return (pattern,) if isinstance(pattern, str) else UNKNOWN


@_api("os.chdir")
def _chdir(a: _Analyser, args: Args) -> object:
    path = text_of(_path_text(args.get(0, "path")))
    a.out.cwd = a.out.target(path)[0] if path is not None else None
    if a.out.cwd == "?":
        a.out.cwd = None
    return None


@_api("os.getcwd")
def _getcwd(a: _Analyser, args: Args) -> object:
    return a.out.cwd or "."


@_api("pathlib.Path.cwd")
def _path_cwd(a: _Analyser, args: Args) -> object:
    return PathObj(a.out.cwd or ".")  # a Path: `Path.cwd().rglob(...)` is followed


@_api("os.path.join")
def _join(a: _Analyser, args: Args) -> object:
    parts = [_path_text(p) for p in args.pos]
    joined = join_path(parts)
    if joined is UNKNOWN:
        return concat(_interleave(parts, "/"))
    return joined


def _interleave(parts: Sequence[object], separator: str) -> Iterator[object]:
    for index, part in enumerate(parts):
        if index:
            yield separator
        yield part


@_api("os.path.expanduser", "os.path.expandvars")
def _expanduser(a: _Analyser, args: Args) -> object:
    path = _path_text(args.get(0, "path"))
    text = text_of(path)
    if text is None or isinstance(path, Data):
        return path
    return home_form(text)


@_api("os.path.abspath", "os.path.realpath", "os.path.normpath")
def _normpath(a: _Analyser, args: Args) -> object:
    path = _path_text(args.get(0, "path"))
    if isinstance(path, str) and path:
        return posixpath.normpath(path)
    return path


@_api("os.path.dirname")
def _dirname(a: _Analyser, args: Args) -> object:
    path = _path_text(args.get(0, "p"))
    return posixpath.dirname(path) if isinstance(path, str) else UNKNOWN


@_api("os.path.basename")
def _basename(a: _Analyser, args: Args) -> object:
    path = _path_text(args.get(0, "p"))
    return posixpath.basename(path) if isinstance(path, str) else UNKNOWN


@_api("os.path.exists", "os.path.isfile", "os.path.isdir", "os.path.getsize")
def _stat(a: _Analyser, args: Args) -> object:
    return UNKNOWN


@_api("pathlib.Path")
def _path(a: _Analyser, args: Args) -> object:
    if not args.pos:
        return PathObj(".")
    return PathObj(join_path(_path_text(p) for p in args.pos))


@_api("pathlib.Path.home")
def _home(a: _Analyser, args: Args) -> object:
    return PathObj("~")


@_api("os.getenv", "os.environ.get")
def _getenv(a: _Analyser, args: Args) -> object:
    return env_value(args.get(0, "key"))


@_api("tempfile.gettempdir")
def _tempdir(a: _Analyser, args: Args) -> object:
    return TEMP_DIR


@_api("tempfile.mkstemp")
def _mkstemp(a: _Analyser, args: Args) -> object:
    return (UNKNOWN, _mkdtemp(a, args))  # (descriptor, path)


@_api("tempfile.mkdtemp", "tempfile.mktemp")
def _mkdtemp(a: _Analyser, args: Args) -> object:
    """A fresh name in the temp directory (or `dir=`) built from `prefix` and `suffix`: the
    name matters when it is later deleted, since `tmp*` could be anyone's temp files."""
    suffix, prefix = args.get(0, "suffix", None), args.get(1, "prefix", None)
    directory = args.get(2, "dir", None)
    base = text_of(directory) if directory is not None else TEMP_DIR
    start = "tmp" if prefix is None else (text_of(prefix) or "")
    name = start + "*" + ((text_of(suffix) or "") if suffix is not None else "")
    return posixpath.join(base, name) if base is not None else concat((directory, "/", name))


@_api("tempfile.NamedTemporaryFile", "tempfile.TemporaryFile", "tempfile.SpooledTemporaryFile")
def _temporary_file(a: _Analyser, args: Args) -> object:
    """An open file in the temp directory (or `dir=`); its `.name` is that path, so code
    that writes a download into it and then runs it is seen doing both."""
    directory = args.kw.get("dir")
    suffix = args.kw.get("suffix", "")
    base = text_of(directory) if directory is not None else TEMP_DIR
    name = "tmp*" + (text_of(suffix) or "")
    path = posixpath.join(base, name) if base is not None else concat((directory, "/", name))
    return _open(a, path, args.get(0, "mode", "w+b"), "tempfile")


# processes


@_api(
    "os.system",
    "os.popen",
    "subprocess.getoutput",
    "subprocess.getstatusoutput",
    "asyncio.create_subprocess_shell",
    "platform.popen",
)
def _system(a: _Analyser, args: Args) -> object:
    a.out.spawn(args.get(0, "cmd"), "os.system")
    return Data(Origin.UNKNOWN)


@_api(
    "subprocess.run",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.Popen",
)
def _subprocess(a: _Analyser, args: Args) -> object:
    command = args.get(0, "args")
    shell = args.kw.get("shell", False)
    if is_list(command) and shell and command:
        assert isinstance(command, tuple)
        command = command[0]  # the rest are the shell's $0, $1, ...
    for stream in ("stdin", "stdout", "stderr"):
        value = args.kw.get(stream)
        if isinstance(value, Handle) and value.kind in ("socket", "fd"):
            a.out.stdio_to_socket()
    a.out.spawn(command, "subprocess")
    given = args.kw.get("input")
    if given is not None:
        _feed(a, command, given)
    return Handle("process", 0, command)


@_api("asyncio.create_subprocess_exec")
def _subprocess_exec(a: _Analyser, args: Args) -> object:
    a.out.spawn(tuple(args.pos), "asyncio.create_subprocess_exec")
    return Handle("process", 0, tuple(args.pos))


def _exec_family(a: _Analyser, args: Args, name: str, offset: int) -> None:
    """os.execl(path, arg0, ...), os.execv(path, argv), os.spawnv(mode, path, argv), ..."""
    variant = name.rsplit(".", 1)[-1]
    path = _path_text(args.get(offset, "path"))
    rest = args.pos[offset + 1 :]
    if "v" in variant.removeprefix("spawn").removeprefix("exec"):
        argv = _items(rest[0]) if rest else None
    else:
        argv = rest[:-1] if variant.endswith("e") else rest
    if argv is None:
        a.out.spawn(UNKNOWN, name)
        return
    a.out.spawn((path, *argv[1:]), name)


for _variant in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe"):
    _API[f"os.exec{_variant}"] = (lambda name: lambda a, args: _exec_family(a, args, name, 0))(
        f"os.exec{_variant}"
    )
    _API[f"os.spawn{_variant}"] = (lambda name: lambda a, args: _exec_family(a, args, name, 1))(
        f"os.spawn{_variant}"
    )


@_api("os.posix_spawn", "os.posix_spawnp")
def _posix_spawn(a: _Analyser, args: Args) -> object:
    argv = _items(args.get(1, "argv"))
    path = _path_text(args.get(0, "path"))
    a.out.spawn((path, *argv[1:]) if argv is not None else UNKNOWN, "os.posix_spawn")
    return UNKNOWN


@_api("pty.spawn")
def _pty_spawn(a: _Analyser, args: Args) -> object:
    argv = args.get(0, "argv")
    if isinstance(argv, str):
        argv = (argv,)
    a.out.spawn(argv, "pty.spawn")
    return None


@_api("os.dup2", "os.dup")
def _dup2(a: _Analyser, args: Args) -> object:
    descriptor = args.get(0, "fd")
    if isinstance(descriptor, Handle) and descriptor.kind in ("fd", "socket"):
        a.out.stdio_to_socket()
    return UNKNOWN


@_api("os.kill", "os.killpg")
def _kill(a: _Analyser, args: Args) -> object:
    pid = args.get(0, "pid")
    signal = args.get(1, "sig")
    if signal == 0 or pid == Ref("os.getpid"):
        return None
    if isinstance(pid, Handle) and pid.kind == "process_field":
        _kill_listed(a, "os.kill")
        return None
    a.out.kill(pid, "os.kill")
    return None


# C library functions that ctypes code calls, named as the os module names them.
_LIBC_AS_OS = frozenset(
    {
        "system", "popen", "execv", "execve", "execvp", "execl", "execlp", "unlink",
        "remove", "rmdir", "chmod", "chown", "rename", "setuid", "seteuid", "setreuid",
        "setresuid", "kill",
    }
)  # fmt: skip


@_api("psutil.process_iter")
def _process_iter(a: _Analyser, args: Args) -> object:
    """Every process on the machine, as one stand-in the loop body is walked with."""
    return (Handle("listed_process"),)


@_api("psutil.pids")
def _pids(a: _Analyser, args: Args) -> object:
    return (Handle("process_field"),)


@_api("psutil.Process")
def _psutil_process(a: _Analyser, args: Args) -> object:
    pid = args.get(0, "pid", None)
    if pid is None or pid == Ref("os.getpid"):
        return Handle("own_process")
    if isinstance(pid, Handle) and pid.kind == "process_field":
        return Handle("listed_process")
    return Handle("known_process", 0, pid)


def _kill_listed(a: _Analyser, api: str) -> None:
    """A kill of a process taken from the machine's list: those the code matched by name,
    or, with no name matched, every process (`kill -1`)."""
    for name in dict.fromkeys(a.process_names) or ("-1",):
        a.out.kill(name, api)


@_api("os.getpid")
def _getpid(a: _Analyser, args: Args) -> object:
    return Ref("os.getpid")


@_api(
    "os.setuid",
    "os.seteuid",
    "os.setreuid",
    "os.setresuid",
    "os.setgid",
    "os.setegid",
    "os.setregid",
    "os.setresgid",
)
def _setuid(a: _Analyser, args: Args) -> object:
    a.out.privilege(args.get(0, "uid"), "os.setuid")
    return None


# code


@_api(
    "builtins.exec",
    "builtins.eval",
    "builtins.execfile",
    "runpy.run_path",
    "pickle.loads",
    "marshal.loads",
    "code.InteractiveInterpreter.runsource",
)
def _exec(a: _Analyser, args: Args) -> object:
    code = args.get(0, "source")
    if isinstance(code, Func):
        return a.inline(code, Args((), {}))
    if isinstance(code, Handle) and code.kind == "wfile":
        code = Data(Origin.FILE, (_source(a.out, code.info),))
    if isinstance(code, str) and len(args.pos) == 1 and code.endswith(".py") and "\n" not in code:
        code = Data(Origin.FILE, (code,))  # execfile / run_path take a path
    a.out.execute(code, "exec")
    return UNKNOWN


# Loaders that run the code a model hub repository ships when told to trust it.
_HUB_CODE_LOADERS = frozenset(
    {"from_pretrained", "pipeline", "load_dataset", "SentenceTransformer"}
)
_HUB_ID = re2.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?$")


def _hub_code(a: _Analyser, node: ast.Call, position: int) -> None:
    """`AutoModel.from_pretrained("org/name", trust_remote_code=True)` runs the repository's
    Python; a local folder (`./out`, the session's own output) is the project's code."""
    trusted = next((k.value for k in node.keywords if k.arg == "trust_remote_code"), None)
    if not (isinstance(trusted, ast.Constant) and trusted.value is True):
        return
    # pipeline(task, model, ...): the model comes second
    first = node.args[position] if len(node.args) > position else None
    if first is None:
        first = next(
            (
                k.value
                for k in node.keywords
                if k.arg in ("pretrained_model_name_or_path", "model", "path", "model_name_or_path")
            ),
            None,
        )
    # Only names and literals are looked at again: evaluating a call twice would count twice.
    plain = isinstance(first, ast.Constant | ast.Name | ast.JoinedStr)
    value = a.value(first) if plain else UNKNOWN
    name = text_of(value)
    if isinstance(value, Data) or name is None:
        a.out.run_published("huggingface.co/?", "trust_remote_code")
    elif _HUB_ID.match(name) and not name.startswith((".", "/", "~")):
        a.out.run_published(f"huggingface.co/{name}", "trust_remote_code")


@_api("torch.hub.load")
def _torch_hub(a: _Analyser, args: Args) -> object:
    repo = text_of(args.get(0, "repo_or_dir"))
    source = args.kw.get("source", "github")
    if source != "local":
        a.out.run_published(f"github.com/{repo if repo else '?'}", "torch.hub.load")
    return UNKNOWN


# Unpickling runs whatever code the pickle holds: loading one is running it. What runs is
# the file's content, judged by where the file came from (a download saved earlier is code
# from the network; the project's own model is the project's code).
@_api(
    "pickle.load",
    "pickle.Unpickler",
    "_pickle.load",
    "cPickle.load",
    "dill.load",
    "cloudpickle.load",
    "joblib.load",
    "pandas.read_pickle",
)
def _unpickle(a: _Analyser, args: Args) -> object:
    _run_loaded_file(a, args.get(0, "file", args.kw.get("filepath_or_buffer", UNKNOWN)))
    return UNKNOWN


@_api("torch.load")
def _torch_load(a: _Analyser, args: Args) -> object:
    # Since torch 2.6 only weights load unless the caller turns that off.
    if args.kw.get("weights_only") is False:
        _run_loaded_file(a, args.get(0, "f"))
    return UNKNOWN


@_api("numpy.load")
def _numpy_load(a: _Analyser, args: Args) -> object:
    if args.get(2, "allow_pickle", False) is True:
        _run_loaded_file(a, args.get(0, "file"))
    return UNKNOWN


def _run_loaded_file(a: _Analyser, source: object) -> None:
    """Only a known file is judged: an unknown one is most often the project's model."""
    source = _path_text(source)
    if isinstance(source, Data) and source.origin is Origin.FILE and len(source.sources) == 1:
        a.out.execute(source, "unpickle")
    elif isinstance(source, str) and source and "\n" not in source:
        a.out.read(source, "unpickle")
        a.out.execute(Data(Origin.FILE, (_source(a.out, source),)), "unpickle")


@_api("builtins.compile")
def _compile(a: _Analyser, args: Args) -> object:
    return args.get(0, "source")


@_api("ctypes.CDLL", "ctypes.PyDLL", "ctypes.cdll.LoadLibrary", "ctypes.CDLL.LoadLibrary")
def _cdll(a: _Analyser, args: Args) -> object:
    """A native library: one loaded from a path runs its code; its functions named like the
    os module's (`libc.system`, `libc.unlink`) do what those do."""
    name = args.get(0, "name", None)
    text = text_of(_path_text(name)) if name is not None else ""
    if text is None or "/" in text:
        a.out.execute(Data(Origin.FILE, (a.out.target(_path_text(name))[0],)), "ctypes.CDLL")
    return Handle("native")  # a system library by name (libc.so.6), or the process itself


@_api("ctypes.util.find_library")
def _find_library(a: _Analyser, args: Args) -> object:
    name = args.get(0, "name")
    return f"lib{name}.so" if isinstance(name, str) else UNKNOWN


@_api("builtins.__import__", "importlib.import_module")
def _import(a: _Analyser, args: Args) -> object:
    name = args.get(0, "name")
    if isinstance(name, str):
        return Ref(_canonical(name.split(".")[0] if "fromlist" not in args.kw else name))
    a.out.problem("imports a module chosen at run time")
    return UNKNOWN


@_api("builtins.getattr")
def _getattr(a: _Analyser, args: Args) -> object:
    obj, name = args.get(0, "o"), args.get(1, "name")
    if isinstance(name, str):
        return a.attribute(obj, name)
    if isinstance(obj, Ref):
        return Ref(f"{obj.name}.?")
    return UNKNOWN


@_api("builtins.globals", "builtins.vars")
def _globals(a: _Analyser, args: Args) -> object:
    return {"__builtins__": Ref("builtins"), **{k: v for k, v in a.globals.items()}}


# text


@_api("builtins.chr")
def _chr(a: _Analyser, args: Args) -> object:
    number = args.get(0, "i")
    if _is_int(number) and 0 <= number < 0x110000:  # type: ignore[operator]
        return chr(number)  # type: ignore[arg-type]
    return UNKNOWN


@_api("builtins.ord")
def _ord(a: _Analyser, args: Args) -> object:
    text = args.get(0, "c")
    return ord(text) if isinstance(text, str) and len(text) == 1 else UNKNOWN


@_api("builtins.str", "builtins.repr")
def _str(a: _Analyser, args: Args) -> object:
    value = args.get(0, "object", "")
    if len(args.pos) > 1 or "encoding" in args.kw:
        return _codec(value, args.get(1, "encoding", "utf-8"))
    if value == Ref("os.environ"):
        return ENVIRONMENT_DATA  # str(os.environ): every variable, as text
    if isinstance(value, PathObj):
        return value.path
    if isinstance(value, str | Data):
        return value
    text = text_of(value)
    return text if text is not None and not isinstance(value, bool) else UNKNOWN


@_api("builtins.int")
def _int(a: _Analyser, args: Args) -> object:
    value, base = args.get(0, "x", 0), args.get(1, "base", 10)
    if isinstance(value, str) and _is_int(base) and len(value) < 64:
        try:
            return int(value, base if isinstance(base, int) else 10)
        except ValueError:
            return UNKNOWN
    return value if _is_int(value) else UNKNOWN


@_api("builtins.bytes", "builtins.bytearray")
def _bytes(a: _Analyser, args: Args) -> object:
    value = args.get(0, "source", "")
    if is_list(value):
        codes = [i for i in value if isinstance(i, int) and 0 <= i < 256]
        return "".join(chr(i) for i in codes) if len(codes) == len(value) else UNKNOWN
    if isinstance(value, str) and len(args.pos) > 1:
        return value.encode("utf-8", "surrogatepass").decode("latin-1")
    return value if isinstance(value, str | Data) else UNKNOWN


@_api("builtins.list", "builtins.tuple", "builtins.sorted", "builtins.set", "builtins.iter")
def _list(a: _Analyser, args: Args) -> object:
    items = _items(args.get(0, "iterable", ()))
    if items is None:
        return UNKNOWN
    return tuple(items)


@_api("builtins.reversed")
def _reversed(a: _Analyser, args: Args) -> object:
    items = _items(args.get(0, "seq"))
    return tuple(reversed(items)) if items is not None else UNKNOWN


@_api("builtins.range")
def _range(a: _Analyser, args: Args) -> object:
    bounds = [v for v in args.pos if isinstance(v, int)]
    if len(bounds) == len(args.pos) and 1 <= len(bounds) <= 3 and 0 not in bounds[2:]:
        numbers = range(*bounds)
        if len(numbers) <= MAX_ITEMS:
            return tuple(numbers)
    return UNKNOWN


@_api("builtins.map")
def _map(a: _Analyser, args: Args) -> object:
    func = args.get(0, "func")
    items = _items(args.get(1, "iterable"))
    if items is None:
        a.invoke(func, Args((UNKNOWN,), {}), None)
        return UNKNOWN
    return tuple(a.invoke(func, Args((item,), {}), None) for item in items)


@_api("builtins.dict")
def _dict(a: _Analyser, args: Args) -> object:
    first = args.get(0, "mapping", None)
    if first == Ref("os.environ") or isinstance(first, Data):
        return ENVIRONMENT_DATA if first == Ref("os.environ") else first
    mapping = dict(first) if isinstance(first, dict) else {}
    mapping.update(args.kw)
    return mapping


@_api("builtins.len")
def _len(a: _Analyser, args: Args) -> object:
    value = args.get(0, "obj")
    return len(value) if isinstance(value, str) or is_list(value) else UNKNOWN


@_api("functools.partial")
def _partial(a: _Analyser, args: Args) -> object:
    if not args.pos:
        return UNKNOWN
    return Partial(args.pos[0], args.pos[1:], dict(args.kw))


@_api("os.environ.copy")
def _environ_copy(a: _Analyser, args: Args) -> object:
    return ENVIRONMENT_DATA


@_api("json.dumps", "pickle.dumps", "urllib.parse.urlencode", "json.load", "json.loads")
def _serialise(a: _Analyser, args: Args) -> object:
    """Serialising keeps what the value carries (a file's contents, the environment)."""
    value = args.get(0, "obj")
    if value == Ref("os.environ"):
        return ENVIRONMENT_DATA
    sources = _carried(value)
    if sources:
        return Data(Origin.UNKNOWN, sources)
    return value if isinstance(value, str) else UNKNOWN


def _carried(value: object) -> tuple[str, ...]:
    if value == Ref("os.environ"):
        return ENVIRONMENT_DATA.sources
    return sources_of(value)


# decoding


@_api("base64.b64decode")
def _b64(a: _Analyser, args: Args) -> object:
    value = args.get(0, "s")
    text = text_of(value)
    return _decoded(b64decode(text) if text is not None else None, value)


@_api("base64.urlsafe_b64decode")
def _b64url(a: _Analyser, args: Args) -> object:
    value = args.get(0, "s")
    text = text_of(value)
    return _decoded(b64decode(text, altchars=True) if text is not None else None, value)


@_api("base64.b32decode")
def _b32(a: _Analyser, args: Args) -> object:
    value = args.get(0, "s")
    text = text_of(value)
    return _decoded(b32decode(text) if text is not None else None, value)


@_api("base64.b85decode", "base64.a85decode")
def _b85(a: _Analyser, args: Args) -> object:
    return Data(Origin.DECODED)


@_api("bytes.fromhex")
def _fromhex(a: _Analyser, args: Args) -> object:
    value = args.get(0, "string")
    text = text_of(value)
    return _decoded(hexdecode(text) if text is not None else None, value)


@_api("codecs.decode")
def _codecs_decode(a: _Analyser, args: Args) -> object:
    return _codec(args.get(0, "obj"), args.get(1, "encoding", "utf-8"))


@_api("zlib.decompress", "gzip.decompress", "bz2.decompress", "lzma.decompress")
def _decompress(a: _Analyser, args: Args) -> object:
    value = args.get(0, "data")
    raw = _to_bytes(value)
    return _decoded(decompress(raw, "auto") if raw is not None else None, value)


_API["bz2.decompress"] = lambda a, args: _decoded(
    decompress(_to_bytes(args.get(0, "data")) or b"", "bz2"), args.get(0, "data")
)
_API["lzma.decompress"] = lambda a, args: _decoded(
    decompress(_to_bytes(args.get(0, "data")) or b"", "lzma"), args.get(0, "data")
)


# network

_REQUEST_METHODS = ("get", "head", "options", "post", "put", "patch", "delete")


def _request(a: _Analyser, method: str, args: Args) -> object:
    if method == "request":
        verb = (text_of(args.get(0, "method")) or "GET").lower()
        args = Args(args.pos[1:], args.kw)
    else:
        verb = method
    url = args.get(0, "url")
    carried = [args.kw.get(k) for k in ("data", "json", "files", "params", "content", "body")]
    carried += [args.pos[1]] if len(args.pos) > 1 else []
    if verb in ("post", "put", "patch") or any(_carried(v) for v in carried if v is not None):
        a.out.send(url, [v for v in carried if v is not None], f"requests.{verb}")
        return Data(Origin.NETWORK, (text_of(url) or "?",))
    return a.out.fetch(url, f"requests.{verb}")


for _method in (*_REQUEST_METHODS, "request"):
    _API[f"requests.{_method}"] = (lambda m: lambda a, args: _request(a, m, args))(_method)
    _API[f"aiohttp.request.{_method}"] = _API[f"requests.{_method}"]


@_api(
    "requests.Session",
    "requests.session",
    "requests.Client",
    "requests.AsyncClient",
    "aiohttp.ClientSession",
    "urllib3.PoolManager",
)
def _session(a: _Analyser, args: Args) -> object:
    return Handle("session")


@_api("urllib.request.Request")
def _request_object(a: _Analyser, args: Args) -> object:
    return Handle("request", 0, (args.get(0, "url"), args.get(1, "data", None)))


@_api("urllib.request.urlopen")
def _urlopen(a: _Analyser, args: Args) -> object:
    target = args.get(0, "url")
    data = args.get(1, "data", None)
    if isinstance(target, Handle) and target.kind == "request":
        url, request_data = target.info if is_list(target.info) else (UNKNOWN, None)
        target, data = url, data if data is not None else request_data
    if data is not None:
        a.out.send(target, [data], "urllib.request.urlopen")
        return Data(Origin.NETWORK, (text_of(target) or "?",))
    return a.out.fetch(target, "urllib.request.urlopen")


@_api("urllib.request.urlretrieve")
def _urlretrieve(a: _Analyser, args: Args) -> object:
    saved = args.get(1, "filename", None)
    a.out.fetch(args.get(0, "url"), "urllib.request.urlretrieve", saved_to=saved)
    return UNKNOWN


@_api("http.client.HTTPConnection", "http.client.HTTPSConnection")
def _http_connection(a: _Analyser, args: Args) -> object:
    return Handle("http", 0, args.get(0, "host"))


@_api("socket.socket")
def _socket(a: _Analyser, args: Args) -> object:
    a.socket_count += 1
    return Handle("socket", a.socket_count)


@_api("socket.create_connection")
def _create_connection(a: _Analyser, args: Args) -> object:
    a.socket_count += 1
    address = _items(args.get(0, "address")) or (UNKNOWN, UNKNOWN)
    a.sockets[a.socket_count] = address[0]
    a.out.connect(
        address[0], address[1] if len(address) > 1 else UNKNOWN, "socket.create_connection"
    )
    return Handle("socket", a.socket_count)


@_api(
    "grpc.insecure_channel",
    "grpc.secure_channel",
    "grpc.aio.insecure_channel",
    "grpc.aio.secure_channel",
)
def _grpc_channel(a: _Analyser, args: Args) -> object:
    """A gRPC channel's target: `host:port`, `dns:///host:port`, `ipv4:host:port`."""
    target = args.get(0, "target")
    text = text_of(target)
    if text is None:
        a.out.connect(target, UNKNOWN, "grpc.channel")
        return UNKNOWN
    for scheme in ("dns:///", "dns:", "ipv4:", "ipv6:"):
        text = text.removeprefix(scheme)
    host, _, port = text.rpartition(":")
    a.out.connect(host or text, port if host else UNKNOWN, "grpc.channel")
    return UNKNOWN


@_api("socket.wrap", "ssl.SSLContext.wrap_socket")
def _wrap(a: _Analyser, args: Args) -> object:
    return args.get(0, "sock")


@_api("telnetlib.Telnet")
def _telnet(a: _Analyser, args: Args) -> object:
    a.out.connect(args.get(0, "host"), args.get(1, "port", 23), "telnetlib.Telnet")
    a.socket_count += 1
    return Handle("socket", a.socket_count)


@_api("ftplib.FTP", "ftplib.FTP_TLS")
def _ftp(a: _Analyser, args: Args) -> object:
    return Handle("ftp", 0, args.get(0, "host"))


@_api("smtplib.SMTP", "smtplib.SMTP_SSL")
def _smtp(a: _Analyser, args: Args) -> object:
    return Handle("smtp", 0, args.get(0, "host"))


@_api("paramiko.SSHClient")
def _ssh(a: _Analyser, args: Args) -> object:
    return Handle("ssh")


@_api("http.server.HTTPServer", "http.server.test")
def _server(a: _Analyser, args: Args) -> object:
    address = _items(args.get(0, "server_address", ("", 8000))) or (UNKNOWN, UNKNOWN)
    handler = args.get(1, "RequestHandlerClass", None)
    if "port" in args.kw:
        address = (args.kw.get("bind", ""), args.kw["port"])
    served: object = a.out.cwd or "."
    if isinstance(handler, Partial) and "directory" in handler.kwargs:
        served = _path_text(handler.kwargs["directory"])
    a.out.listen(_address(address), "http.server", served=served)
    return Handle("server")

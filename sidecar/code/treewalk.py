"""What the tree-sitter languages share: one ordered walk over the syntax tree with
scopes, loops over literal lists, functions inlined at call sites with known arguments,
and the bounds that keep every analysis linear.

A language subclasses TreeAnalyser and says how to evaluate an expression (`evaluate`)
and what a statement does (`visit`). The walk visits every node in document order once;
an expression evaluated as part of another one is remembered (`done`) so its effects
are counted once. Function bodies are walked where they are called with known arguments,
and once more at the end, with unknown arguments, if nothing called them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from tree_sitter import Node

from sidecar.code.collector import Collector
from sidecar.code.values import MAX_ITEMS, UNKNOWN, Data, Ref, is_list

__all__ = ["Args", "Func", "Handle", "Handler", "Ref", "TreeAnalyser", "items_of", "unwrap"]

MAX_DEPTH = 100  # nesting of expressions followed; deeper is a problem
MAX_INLINE = 3  # user functions inlined within each other


class Handle(NamedTuple):
    """A run-time object the analysis follows (a socket, a file opened for writing, a
    process, an HTTP client)."""

    kind: str
    key: int = 0
    info: object = None


class Func(NamedTuple):
    """A function defined in the code: its parameter names and its body."""

    node: Node
    params: tuple[str, ...]
    body: Node | None


class Args(NamedTuple):
    pos: tuple[object, ...]
    kw: dict[str, object]

    def get(self, index: int, name: str = "", default: object = UNKNOWN) -> object:
        if index >= 0 and index < len(self.pos):
            return self.pos[index]
        if name and name in self.kw:
            return self.kw[name]
        return default

    def option(self, name: str, default: object = None) -> object:
        """A named option, from keyword arguments or a trailing options object."""
        if name in self.kw:
            return self.kw[name]
        for value in reversed(self.pos):
            if isinstance(value, dict) and name in value:
                return value[name]
        return default


Handler = Callable[["TreeAnalyser", Args], object]


def items_of(value: object) -> tuple[object, ...] | None:
    if is_list(value):
        assert isinstance(value, tuple)
        return value
    return None


class TreeAnalyser:
    """The walk; languages override `visit`, `evaluate` and `function_of`."""

    language = ""

    def __init__(self, source: bytes, out: Collector) -> None:
        self.src = source
        self.out = out
        self.globals: dict[str, object] = {}
        self.scopes: list[dict[str, object]] = [self.globals]
        self.budget = 5_000 + 10 * len(source)  # steps before unrolling and inlining stop
        self.limit = 100_000 + 100 * len(source)  # steps before the analysis stops
        self.steps = 0
        self.depth = 0
        self.stopped = False
        self.done: set[int] = set()
        self.functions: list[Func] = []
        self.analysed: set[int] = set()
        self.returns: list[list[object]] = []
        self.inlining: list[int] = []
        self.counter = 0  # numbers handles (sockets, files)

    # --- driving ----------------------------------------------------------------------

    def run(self, root: Node) -> None:
        if root.has_error:
            self.out.parse_error = True
        self.walk(root)
        index = 0
        while index < len(self.functions) and not self.stopped:
            func = self.functions[index]
            index += 1
            if func.node.id in self.analysed or func.body is None:
                continue
            self.analysed.add(func.node.id)
            self.scopes.append(dict.fromkeys(func.params, UNKNOWN))
            try:
                if self.is_expression_body(func.body):
                    self.value(func.body)
                else:
                    self.subwalk(func.body)
            finally:
                self.scopes.pop()

    @property
    def cheap(self) -> bool:
        return self.steps > self.budget

    def step(self) -> bool:
        self.steps += 1
        if self.steps > self.limit:
            if not self.stopped:
                self.out.problem(f"{self.language} code too complex to analyse in full")
            self.stopped = True
        return not self.stopped

    def walk(self, root: Node) -> None:
        stack = [root]
        while stack:
            if not self.step():
                return
            node = stack.pop()
            if node.id not in self.done and self.visit(node):
                continue
            stack.extend(reversed(node.named_children))

    def subwalk(self, node: Node) -> None:
        """Walk a body again (a loop iteration, an inlined call): its expressions count anew."""
        saved = self.done
        self.done = set()
        try:
            self.walk(node)
        finally:
            self.done = saved | self.done

    def visit(self, node: Node) -> bool:
        """A statement's effect; True when its children need no further walk."""
        raise NotImplementedError

    def evaluate(self, node: Node) -> object:
        raise NotImplementedError

    # --- values -----------------------------------------------------------------------

    def text(self, node: Node) -> str:
        return self.src[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def value(self, node: Node | None) -> object:
        if node is None:
            return None
        if not self.step():
            return UNKNOWN
        self.done.add(node.id)
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                self.out.problem(f"{self.language} code nested too deeply to analyse")
                return UNKNOWN
            return self.evaluate(node)
        finally:
            self.depth -= 1

    def lookup(self, name: str) -> object:
        scope = self.scopes[-1]
        if name in scope:
            return scope[name]
        return self.globals.get(name, UNKNOWN)

    def assign(self, name: str, value: object, *, global_: bool = False) -> None:
        (self.globals if global_ else self.scopes[-1])[name] = value

    def new_handle(self, kind: str, info: object = None) -> Handle:
        self.counter += 1
        return Handle(kind, self.counter, info)

    # --- control flow -----------------------------------------------------------------

    def loop(self, bind: Callable[[object], None], iterable: object, body: Node | None) -> bool:
        """A loop over a literal list runs its body once per item; otherwise the body is
        walked once with the loop variable unknown (by the caller's walk)."""
        items = items_of(iterable)
        if body is None or items is None or self.cheap or len(items) > MAX_ITEMS:
            bind(UNKNOWN)
            return False
        for item in items:
            bind(item)
            self.subwalk(body)
            if self.stopped:
                break
        return True

    def define(self, func: Func) -> Func:
        self.functions.append(func)
        return func

    def inline(self, func: Func, args: Args, bind_extra: dict[str, object] | None = None) -> object:
        """Run a function's body with its arguments bound; its return value if one."""
        if (
            func.body is None
            or self.cheap
            or len(self.inlining) >= MAX_INLINE
            or func.node.id in self.inlining
        ):
            return UNKNOWN
        self.analysed.add(func.node.id)
        scope: dict[str, object] = dict.fromkeys(func.params, UNKNOWN)
        for index, name in enumerate(func.params):
            if index < len(args.pos):
                scope[name] = args.pos[index]
        if bind_extra:
            scope.update(bind_extra)
        self.scopes.append(scope)
        self.returns.append([])
        self.inlining.append(func.node.id)
        try:
            if self.is_expression_body(func.body):
                saved = self.done
                self.done = set()
                try:
                    return self.value(func.body)
                finally:
                    self.done = saved
            self.subwalk(func.body)
            values = self.returns[-1]
            if values and all(_same(values[0], v) for v in values[1:]):
                return values[0]
            return UNKNOWN
        finally:
            self.inlining.pop()
            self.returns.pop()
            self.scopes.pop()

    def is_expression_body(self, body: Node) -> bool:
        return False

    def returned(self, value: object) -> None:
        if self.returns:
            self.returns[-1].append(value)

    def branches(self, bodies: Sequence[Node | None]) -> None:
        """if/else: each branch from the same values; a name assigned differently by the
        branches (or by a branch that may not run) is unknown afterwards."""
        before = dict(self.scopes[-1])
        outcomes: list[dict[str, object]] = []
        for body in bodies:
            self.scopes[-1].clear()
            self.scopes[-1].update(before)
            if body is not None:
                self.subwalk(body)
            outcomes.append(dict(self.scopes[-1]))
        if len(bodies) < 2 or bodies[-1] is None:
            outcomes.append(before)
        merged: dict[str, object] = {}
        for name in set().union(*outcomes):
            values = [o.get(name, UNKNOWN) for o in outcomes]
            merged[name] = values[0] if all(_same(values[0], v) for v in values[1:]) else UNKNOWN
        self.scopes[-1].clear()
        self.scopes[-1].update(merged)


def _same(a: object, b: object) -> bool:
    if a is b:
        return True
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def unwrap(node: Node, passthrough: frozenset[str]) -> Node:
    """Skip chains of wrapper nodes with one named child (PowerShell nests ten deep)."""
    while node.type in passthrough and node.named_child_count == 1:
        child = node.named_children[0]
        if node.child_count != 1 and node.type not in ("parenthesized_expression",):
            break
        node = child
    return node


def first_data(values: Sequence[object]) -> Data | None:
    for value in values:
        if isinstance(value, Data):
            return value
    return None

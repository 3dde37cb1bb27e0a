"""A small mutation tester for the security core (make mutate).

Why our own: the modules keep their knowledge in module-level tables (regex patterns,
verdict orders) that function-level mutators do not reach, and every mutant must run
against real parts (a gRPC server, SQLite), which a fork per mutant makes cheap: the
parent imports the heavy third-party libraries once, each child imports the project
afresh with one module replaced by its mutant, runs that module's tests, and exits.

What is mutated and which tests must notice is listed in one place, pyproject.toml's
[tool.sidecar.mutation]. Mutants judged equivalent (no test could tell them apart) are
listed with a reason in docs/MUTATION.md; their ids are stable across unrelated edits
(file, enclosing function, operator, and a counter within that function).

Usage: python -m tools.mutate [--module PATH] [--jobs N] [--list] [--report FILE]
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import importlib.abc
import importlib.util
import json
import os
import re
import signal
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENTS_DOC = ROOT / "docs" / "MUTATION.md"
# Libraries imported once in the parent, so each child starts warm.
WARM_IMPORTS = (
    "grpc", "grpc_health.v1.health", "grpc_reflection.v1alpha.reflection", "google.protobuf",
    "pydantic", "re2", "tree_sitter", "tree_sitter_bash", "yaml", "prometheus_client", "httpx",
    "pytest", "hypothesis", "pytest_asyncio", "sqlite3", "asyncio",
)  # fmt: skip
_REGEX_HINT = re.compile(r"\\b|\\s|\(\?|\[[^\]]*\]|\{\d")
_MAX_CLASS_ITEMS = 6
_EQUIVALENT_ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|")


@dataclass(frozen=True)
class Target:
    path: str  # relative to the repository root
    tests: tuple[str, ...]

    @property
    def module(self) -> str:
        return self.path.removesuffix(".py").replace("/", ".")


@dataclass
class Mutant:
    id: str
    line: int
    description: str
    source: str = field(repr=False)


def load_targets() -> list[Target]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["sidecar"]["mutation"]
    return [Target(m["path"], tuple(m["tests"])) for m in config["modules"]]


def load_equivalents() -> dict[str, str]:
    found: dict[str, str] = {}
    if EQUIVALENTS_DOC.exists():
        for line in EQUIVALENTS_DOC.read_text().splitlines():
            match = _EQUIVALENT_ROW.match(line)
            if match and "::" in match.group(1):
                found[match.group(1)] = line
    return found


# -- mutation operators ---------------------------------------------------------------

_COMPARE_SWAPS: dict[type[ast.cmpop], tuple[type[ast.cmpop], ...]] = {
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.Lt: (ast.LtE, ast.Gt),
    ast.LtE: (ast.Lt, ast.Gt),
    ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt, ast.Lt),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
}
_BINOP_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
}


def regex_mutations(pattern: str) -> Iterator[tuple[str, str]]:
    """Loosen or tighten a regular expression one step at a time."""
    for match in re.finditer(r"\{(\d+)(,?)(\d*)\}", pattern):
        low, comma, high = int(match.group(1)), match.group(2), match.group(3)
        for new_low in (low - 1, low + 1):
            if new_low < 0 or (high and new_low > int(high)):
                continue
            text = "{" + str(new_low) + comma + high + "}"
            yield f"quantifier {match.group(0)}->{text}", _splice(pattern, match, text)
        if high:
            text = "{" + str(low) + comma + str(int(high) - 1) + "}"
            if int(high) - 1 >= low:
                yield f"quantifier {match.group(0)}->{text}", _splice(pattern, match, text)
    for match in re.finditer(r"\\b", pattern):
        yield "drop \\b", _splice(pattern, match, "")
    for match in re.finditer(r"(?<=[\])])\+", pattern):
        yield "+ -> *", _splice(pattern, match, "*")
    for match in re.finditer(r"(?<=[\])])\*", pattern):
        yield "* -> +", _splice(pattern, match, "+")
    for match in re.finditer(r"(?<=[\])])\?", pattern):
        yield "drop ?", _splice(pattern, match, "")
    for start, end in _alternatives(pattern):
        yield f"drop alternative {pattern[start:end]!r}", pattern[:start] + pattern[end:]
    for match in re.finditer(r"\[(\^?)((?:\\.|[^\]\\])+)\]", pattern):
        body = match.group(2)
        items = re.findall(r"\\.|.-.|.", body)
        # Small positive classes only: a negated class lists what ends a value, where one
        # dropped character is one more sample per character, for little insight.
        if 1 < len(items) <= _MAX_CLASS_ITEMS and not match.group(1):
            for index, item in enumerate(items):
                rest = "".join(items[:index] + items[index + 1 :])
                text = f"[{match.group(1)}{rest}]"
                yield f"class drops {item!r}", _splice(pattern, match, text)


def _splice(pattern: str, match: re.Match[str], text: str) -> str:
    return pattern[: match.start()] + text + pattern[match.end() :]


def _alternatives(pattern: str) -> Iterator[tuple[int, int]]:
    """Spans `|alt` (or `alt|` for the first) of each alternative, at any depth."""
    depth_starts: list[int] = [0]
    bars: dict[int, list[int]] = {0: []}
    index = 0
    spans: list[tuple[int, int]] = []
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "[":
            close = pattern.find("]", index + 2)
            index = (close if close != -1 else len(pattern) - 1) + 1
            continue
        if char == "(":
            depth_starts.append(index + 1)
            bars[len(depth_starts) - 1] = []
        elif char == ")" and len(depth_starts) > 1:
            spans += _group_alternatives(
                pattern, depth_starts.pop(), index, bars.pop(len(depth_starts))
            )
        elif char == "|":
            bars[len(depth_starts) - 1].append(index)
        index += 1
    spans += _group_alternatives(pattern, 0, len(pattern), bars[0])
    return iter(spans)


def _group_alternatives(
    pattern: str, start: int, end: int, bars: list[int]
) -> list[tuple[int, int]]:
    if not bars:
        return []
    if pattern.startswith("?:", start):
        start += 2
    elif pattern.startswith("?", start):
        return []
    cuts = [start - 1, *bars, end]
    spans = [(cuts[0] + 1, cuts[1] + 1)]  # the first alternative and its bar
    spans += [(cuts[i], cuts[i + 1]) for i in range(1, len(cuts) - 1)]
    return spans


class _Collector(ast.NodeVisitor):
    """Finds mutation points; each is (node, kind, replacement factory, description)."""

    def __init__(self) -> None:
        self.points: list[tuple[ast.AST, str, Any, str]] = []
        self.scope: list[str] = []
        self._skip: set[int] = set()

    def _scoped(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            self._skip.add(id(body[0].value))  # docstring
        for decorator in node.decorator_list:
            self._skip_all(decorator)
        if not isinstance(node, ast.ClassDef):
            self._skip_all(node.args)
            if node.returns is not None:
                self._skip_all(node.returns)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _scoped

    def _skip_all(self, node: ast.AST) -> None:
        for child in ast.walk(node):
            self._skip.add(id(child))

    def visit_Module(self, node: ast.Module) -> None:
        if node.body and isinstance(node.body[0], ast.Expr):
            self._skip.add(id(node.body[0].value))
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._skip_all(node.annotation)
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        return None

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        # Log text is not behaviour: log calls keep their strings.
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("log", "logging", "logger")
        ):
            for arg in node.args:
                if isinstance(arg, ast.Constant):
                    self._skip.add(id(arg))
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        for value in node.values:
            if isinstance(value, ast.Constant):
                self._skip.add(id(value))
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        # Type expressions such as dict[str, int] are not behaviour.
        if isinstance(node.value, ast.Name) and node.value.id in (
            "dict", "list", "tuple", "set", "frozenset", "type", "Callable", "Sequence",
            "OrderedDict", "Iterable", "Mapping", "Coroutine", "Generator", "Literal",
        ):  # fmt: skip
            self._skip_all(node)
        self.generic_visit(node)

    def _add(self, node: ast.AST, kind: str, make: Any, description: str) -> None:
        if id(node) not in self._skip:
            self.points.append((node, kind, make, description))

    def visit_Compare(self, node: ast.Compare) -> None:
        for index, op in enumerate(node.ops):
            for swap in _COMPARE_SWAPS.get(type(op), ()):
                self._add(node, f"{type(op).__name__}->{swap.__name__}", ("cmp", index, swap), "")
        self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        other = ast.Or if isinstance(node.op, ast.And) else ast.And
        self._add(node, f"{type(node.op).__name__}->{other.__name__}", ("boolop", other), "")
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        swap = _BINOP_SWAPS.get(type(node.op))
        if swap is not None and not _is_string_concat(node):
            self._add(node, f"{type(node.op).__name__}->{swap.__name__}", ("binop", swap), "")
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        swap = _BINOP_SWAPS.get(type(node.op))
        if swap is not None:
            self._add(node, f"aug {type(node.op).__name__}->{swap.__name__}", ("aug", swap), "")
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self._add(node, "drop not", ("unwrap",), "")
        elif isinstance(node.op, ast.USub):
            self._add(node, "drop -", ("unwrap",), "")
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        self._add(node.test, "condition->True", ("const", True), "")
        self._add(node.test, "condition->False", ("const", False), "")
        self.generic_visit(node)

    def visit_Break(self, node: ast.Break) -> None:
        self._add(node, "break->continue", ("stmt", ast.Continue), "")

    def visit_Continue(self, node: ast.Continue) -> None:
        self._add(node, "continue->break", ("stmt", ast.Break), "")

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None
        ):
            self._add(node, "return->None", ("return_none",), "")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, bool):
            self._add(node, f"{value}->{not value}", ("const", not value), "")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            self._add(node, f"{value}->{value + 1}", ("const", value + 1), "")
            if value != 0:
                self._add(node, f"{value}->0", ("const", type(value)(0)), "")
        elif isinstance(value, str) and value:
            if _REGEX_HINT.search(value):
                for description, mutated in regex_mutations(value):
                    self._add(node, f"regex {description}", ("const", mutated), "")
            else:
                self._add(node, "string->XX", ("const", f"XX{value}XX"), "")


def _is_string_concat(node: ast.BinOp) -> bool:
    sides = (node.left, node.right)
    return isinstance(node.op, ast.Add) and any(
        (isinstance(s, ast.Constant) and isinstance(s.value, str)) or isinstance(s, ast.JoinedStr)
        for s in sides
    )


def _apply(tree: ast.Module, target_index: int, make: Any) -> ast.Module:
    mutated = copy.deepcopy(tree)
    node: Any = list(_walk_in_order(mutated))[target_index]
    kind = make[0]
    if kind == "cmp":
        node.ops[make[1]] = make[2]()
    elif kind in ("boolop", "binop", "aug"):
        node.op = make[1]()
    elif kind == "unwrap":
        _replace(mutated, node, node.operand)
    elif kind == "const":
        _replace(mutated, node, ast.Constant(make[1]))
    elif kind == "stmt":
        _replace(mutated, node, make[1]())
    elif kind == "return_none":
        node.value = ast.Constant(None)
    return ast.fix_missing_locations(mutated)


def _walk_in_order(tree: ast.AST) -> Iterator[ast.AST]:
    yield tree
    for child in ast.iter_child_nodes(tree):
        yield from _walk_in_order(child)


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    ast.copy_location(new, old)
    for parent in ast.walk(tree):
        for name, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, name, new)
                return
            if isinstance(value, list):
                for index, item in enumerate(value):
                    if item is old:
                        value[index] = new
                        return
    raise RuntimeError("node to replace not found")


def mutants_of(target: Target) -> list[Mutant]:
    source = (ROOT / target.path).read_text()
    tree = ast.parse(source)
    collector = _Collector()
    scopes: dict[int, str] = {}
    _record_scopes(tree, [], scopes)
    collector.visit(tree)
    order = {id(node): index for index, node in enumerate(_walk_in_order(tree))}
    counters: dict[str, int] = {}
    mutants: list[Mutant] = []
    name = Path(target.path).name
    for node, kind, make, _ in collector.points:
        scope = scopes.get(id(node), "<module>")
        key = f"{name}::{scope}::{kind}"
        counters[key] = counters.get(key, 0) + 1
        mutated = _apply(tree, order[id(node)], make)
        try:
            text = ast.unparse(mutated)
        except Exception:  # noqa: S112 (an unprintable mutant is skipped)
            continue
        line = getattr(node, "lineno", 0)
        mutants.append(Mutant(f"{key}::{counters[key]}", line, kind, text))
    return mutants


def _record_scopes(node: ast.AST, scope: list[str], scopes: dict[int, str]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            inner = [*scope, child.name]
            scopes[id(child)] = ".".join(inner)
            _record_scopes(child, inner, scopes)
        else:
            scopes[id(child)] = ".".join(scope) or "<module>"
            _record_scopes(child, scope, scopes)


# -- running ---------------------------------------------------------------------------


class _MutantLoader(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, module: str, path: Path, source: str) -> None:
        self._module, self._path, self._source = module, path, source

    def find_spec(self, name: str, path: Any, target: ModuleType | None = None) -> Any:
        if name != self._module:
            return None
        return importlib.util.spec_from_loader(name, self, origin=str(self._path))

    def create_module(self, spec: Any) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        module.__file__ = str(self._path)
        exec(compile(self._source, str(self._path), "exec"), module.__dict__)  # noqa: S102


def _run_child(target: Target, source: str | None, basetemp: Path) -> None:
    """In the forked child: replace the module, run its tests, exit with pytest's code."""
    os.setpgrp()  # a timed-out child is killed with everything it started
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    if source is not None:
        sys.meta_path.insert(0, _MutantLoader(target.module, ROOT / target.path, source))
    import pytest

    args = ["-x", "-q", "-p", "no:cacheprovider", f"--basetemp={basetemp}", *target.tests]
    code = pytest.main(args)
    os._exit(int(code))


@dataclass
class Outcome:
    id: str
    line: int
    description: str
    status: str  # killed, survived, timeout, equivalent
    seconds: float


def run_one(target: Target, source: str | None, timeout: float, scratch: Path) -> str:
    pid = _spawn(target, source, scratch)
    deadline = time.monotonic() + timeout
    while True:
        finished, status = os.waitpid(pid, os.WNOHANG)
        if finished:
            return "survived" if os.waitstatus_to_exitcode(status) == 0 else "killed"
        if time.monotonic() > deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout"
        time.sleep(0.02)


def run_target(
    target: Target,
    jobs: int,
    equivalents: dict[str, str],
    scratch: Path,
    only: set[str] | None = None,
) -> list[Outcome]:
    started = time.monotonic()
    baseline = run_one(target, None, 600, scratch)
    took = time.monotonic() - started
    if baseline != "survived":
        raise SystemExit(f"{target.path}: its tests fail without any mutation; fix them first")
    timeout = max(30.0, took * 5)
    mutants = [m for m in mutants_of(target) if only is None or m.id in only]
    print(f"{target.path}: {len(mutants)} mutants, tests take {took:.1f}s", flush=True)
    outcomes: list[Outcome] = []
    running: dict[int, tuple[Mutant, float]] = {}
    queue = [m for m in mutants if m.id not in equivalents]
    outcomes += [
        Outcome(m.id, m.line, m.description, "equivalent", 0.0)
        for m in mutants
        if m.id in equivalents
    ]
    # Simple pool of forked children.
    pending = list(queue)
    while pending or running:
        while pending and len(running) < jobs:
            mutant = pending.pop(0)
            pid = _spawn(target, mutant.source, scratch)
            running[pid] = (mutant, time.monotonic())
        for pid, (mutant, begun) in list(running.items()):
            finished, status = os.waitpid(pid, os.WNOHANG)
            elapsed = time.monotonic() - begun
            if finished:
                code = os.waitstatus_to_exitcode(status)
                result = "survived" if code == 0 else "killed"
            elif elapsed > timeout:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                result = "timeout"
            else:
                continue
            del running[pid]
            outcomes.append(Outcome(mutant.id, mutant.line, mutant.description, result, elapsed))
            if result == "survived":
                print(f"  survived: {mutant.id} (line {mutant.line})", flush=True)
        time.sleep(0.02)
    return outcomes


def _spawn(target: Target, source: str | None, scratch: Path) -> int:
    basetemp = Path(tempfile.mkdtemp(dir=scratch))
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        try:
            _run_child(target, source, basetemp)
        finally:
            os._exit(99)
    return pid


def summarise(target: Target, outcomes: list[Outcome]) -> dict[str, Any]:
    counts = {
        s: sum(o.status == s for o in outcomes)
        for s in ("killed", "timeout", "survived", "equivalent")
    }
    judged = counts["killed"] + counts["timeout"] + counts["survived"]
    score = (counts["killed"] + counts["timeout"]) / judged if judged else 1.0
    return {"module": target.path, **counts, "score": round(score, 4)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="mutate", description=__doc__.splitlines()[0])
    parser.add_argument("--module", action="append", help="only these module paths")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--report", type=Path, default=ROOT / ".mutation" / "report.json")
    parser.add_argument("--threshold", type=float, default=0.90)
    parser.add_argument(
        "--survivors-of", type=Path, help="only rerun the mutants that survived in this report"
    )
    args = parser.parse_args(argv)
    targets = [t for t in load_targets() if not args.module or t.path in args.module]
    if args.list:
        for target in targets:
            for mutant in mutants_of(target):
                print(f"{mutant.id}\tline {mutant.line}")
        return 0
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    for name in WARM_IMPORTS:
        __import__(name)
    equivalents = load_equivalents()
    only: set[str] | None = None
    if args.survivors_of is not None:
        previous = json.loads(args.survivors_of.read_text())["mutants"]
        only = {m["id"] for ms in previous.values() for m in ms if m["status"] == "survived"}
    summaries = []
    all_outcomes: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="mutate-") as scratch:
        for target in targets:
            outcomes = run_target(target, args.jobs, equivalents, Path(scratch), only)
            summaries.append(summarise(target, outcomes))
            all_outcomes[target.path] = [asdict(o) for o in sorted(outcomes, key=lambda o: o.id)]
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(json.dumps({"summary": summaries, "mutants": all_outcomes}, indent=1))
    print(
        f"\n{'module':<36} {'killed':>7} {'timeout':>8} {'survived':>9} {'equiv':>6} {'score':>7}"
    )
    failing = False
    for row in summaries:
        print(
            f"{row['module']:<36} {row['killed']:>7} {row['timeout']:>8} {row['survived']:>9} "
            f"{row['equivalent']:>6} {row['score']:>7.1%}"
        )
        failing |= row["score"] < args.threshold
    print(f"report: {args.report}")
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())

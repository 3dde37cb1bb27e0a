"""Cheap structural limits on a command line, checked before it is parsed.

tree-sitter's error recovery is super-linear on some broken shapes: a 128 KiB line of
`cat f | ` ending in a dangling pipe took 11 s and 3.2 GB. Counting characters costs
microseconds (str.count runs in C), so a line is sorted before any parsing:

- `inline`: small and simple; parsed on the calling thread, which costs less than
  handing it anywhere (a typical agent command is a few hundred bytes);
- `isolated`: parsed in the analysis worker process, which is killed at its budget;
- `too_complex`: not parsed at all; the call needs approval.

Counts are taken over the raw text, quotes included, so they can only overstate.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Route(Enum):
    INLINE = "inline"
    ISOLATED = "isolated"
    TOO_COMPLEX = "too_complex"


@dataclass(frozen=True, slots=True)
class StructuralLimits:
    # Lines up to this size with at most this many operators parse in well under a
    # millisecond or two whatever their shape (bench/inspect_bench.py measures the
    # worst shapes found); anything larger goes to the worker.
    inline_bytes: int = 4096
    inline_operators: int = 128
    # Past these the line is not parsed: no agent writes 4,096 pipes, and the broken
    # shapes that make the parser slow are built from exactly these operators.
    max_pipes: int = 4096  # `|`, which also counts `||` and `|&`
    max_and: int = 4096  # `&&`
    max_separators: int = 32768  # `;` and newlines
    max_nesting: int = 1024  # `(`, `{`, `$(`, backticks inside one another
    max_heredocs: int = 256  # `<<` (here-documents and here-strings)

    def route(self, line: str) -> tuple[Route, str]:
        """Where the line is analysed, and for TOO_COMPLEX the limit it passed."""
        if len(line) <= self.inline_bytes:
            operators = line.count("|") + line.count("&") + line.count(";") + line.count("\n")
            if operators <= self.inline_operators:
                return Route.INLINE, ""
        problem = self.problem(line)
        if problem:
            return Route.TOO_COMPLEX, problem
        return Route.ISOLATED, ""

    def problem(self, line: str) -> str:
        """The first limit the line passes, as a sentence; empty when within all."""
        pipes = line.count("|")
        if pipes > self.max_pipes:
            return f"the command line has {pipes} pipes (limit {self.max_pipes})"
        ands = line.count("&&")
        if ands > self.max_and:
            return f"the command line has {ands} '&&' operators (limit {self.max_and})"
        separators = line.count(";") + line.count("\n")
        if separators > self.max_separators:
            return (
                f"the command line has {separators} separators and newlines "
                f"(limit {self.max_separators})"
            )
        heredocs = line.count("<<")
        if heredocs > self.max_heredocs:
            return f"the command line has {heredocs} here-documents (limit {self.max_heredocs})"
        openers = line.count("(") + line.count("{") + line.count("`")
        if openers > self.max_nesting:
            depth = nesting_depth(line)
            if depth > self.max_nesting:
                return f"the command line nests {depth} levels deep (limit {self.max_nesting})"
        return ""


# Every byte but the brackets; they are ASCII, so never part of a multi-byte character.
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"(){}`")


def nesting_depth(line: str) -> int:
    """Deepest nesting of (), {} and backticks; quotes are not understood, so this
    can overstate, never understate, what the shell would see."""
    brackets = line.encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
    depth = deepest = 0
    in_backticks = False
    for char in brackets:
        if char == 0x60:  # a backtick opens or closes
            in_backticks = not in_backticks
            depth += 1 if in_backticks else -1
        elif char in (0x28, 0x7B):
            depth += 1
        else:
            depth = max(depth - 1, 0)
        deepest = max(deepest, depth)
    return deepest


DEFAULT_LIMITS = StructuralLimits()

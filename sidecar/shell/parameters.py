"""What bash's parameter expansion (`${x%pat}`, `${x/a/b}`, `${x:1:3}`, `${x,,}`) makes of a
value known statically.

An attacker who knows the analysis follows `x=/etc/shadow; cat "$x"` writes `cat "${x%X}"` or
`"${p,,}"` instead; computing the result keeps such words judged. Every function returns None
where it cannot tell (an extended glob, an operand computed at run time, a value too long to
match cheaply): the caller then reports the word as unresolved, which asks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

MAX_OPERAND = 256  # longer values or patterns are not matched: pattern trims are quadratic
_MAX_STEPS = 200_000  # bound on value length squared times pattern pieces, per expansion


def matching_cost(value: str, pattern: str) -> int:
    """An upper bound on the glob steps a trim or replacement of `value` may take."""
    return (len(value) + 1) * (len(value) + 1) * (len(pattern) + 1)


_MAX_SCANNED_REPLACE = 64  # values scanned position by position for a glob replacement

_POSIX_CLASSES: dict[str, Callable[[str], bool]] = {
    "alpha": str.isalpha,
    "digit": str.isdigit,
    "alnum": str.isalnum,
    "upper": str.isupper,
    "lower": str.islower,
    "space": str.isspace,
    "xdigit": lambda c: c in "0123456789abcdefABCDEF",
    "punct": lambda c: c.isprintable() and not c.isalnum() and not c.isspace(),
}


class _Token(NamedTuple):
    """One piece of a glob: a literal character, `?`, `*` or a bracket set."""

    kind: str  # "lit", "any", "star", "set"
    char: str = ""
    negated: bool = False
    ranges: tuple[tuple[str, str], ...] = ()
    predicates: tuple[Callable[[str], bool], ...] = ()


_STAR = _Token("star")
_ANY = _Token("any")


def _class_at(pattern: str, index: int) -> tuple[_Token, int] | None:
    """`[...]` starting at index: the set it matches and where it ends."""
    j = index + 1
    negated = j < len(pattern) and pattern[j] in "!^"
    if negated:
        j += 1
    ranges: list[tuple[str, str]] = []
    predicates: list[Callable[[str], bool]] = []
    first = True
    while j < len(pattern):
        char = pattern[j]
        if char == "]" and not first:
            return _Token("set", "", negated, tuple(ranges), tuple(predicates)), j + 1
        first = False
        if pattern.startswith("[:", j):
            end = pattern.find(":]", j + 2)
            name = pattern[j + 2 : end] if end > 0 else ""
            if name not in _POSIX_CLASSES:
                return None
            predicates.append(_POSIX_CLASSES[name])
            j = end + 2
            continue
        if char == "\\" and j + 1 < len(pattern):
            j += 1
            char = pattern[j]
        if j + 2 < len(pattern) and pattern[j + 1] == "-" and pattern[j + 2] != "]":
            ranges.append((char, pattern[j + 2]))
            j += 3
        else:
            ranges.append((char, char))
            j += 1
    return None  # no closing bracket: bash matches "[" literally; too rare to model


def _tokens(pattern: str) -> list[_Token] | None:
    tokens: list[_Token] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char in "@!+" and pattern.startswith("(", index + 1):
            return None  # extended globs: not modelled
        if char == "*":
            if not tokens or tokens[-1].kind != "star":
                tokens.append(_STAR)
            index += 1
        elif char == "?":
            if pattern.startswith("(", index + 1):
                return None
            tokens.append(_ANY)
            index += 1
        elif char == "[":
            found = _class_at(pattern, index)
            if found is None:
                return None
            tokens.append(found[0])
            index = found[1]
        elif char == "\\" and index + 1 < len(pattern):
            tokens.append(_Token("lit", pattern[index + 1]))
            index += 2
        else:
            tokens.append(_Token("lit", char))
            index += 1
    return tokens


def _matches_one(token: _Token, char: str) -> bool:
    if token.kind == "any":
        return True
    if token.kind == "lit":
        return token.char == char
    inside = any(low <= char <= high for low, high in token.ranges) or any(
        p(char) for p in token.predicates
    )
    return inside != token.negated


def _match(tokens: list[_Token], text: str) -> bool:
    """Whole-text glob match; backtracks only to the last star, so O(len(text) * len(tokens))."""
    t = s = 0
    star_t = star_s = -1
    while s < len(text):
        if t < len(tokens) and tokens[t].kind == "star":
            star_t, star_s = t, s
            t += 1
        elif t < len(tokens) and _matches_one(tokens[t], text[s]):
            t += 1
            s += 1
        elif star_t >= 0:
            t = star_t + 1
            star_s += 1
            s = star_s
        else:
            return False
    while t < len(tokens) and tokens[t].kind == "star":
        t += 1
    return t == len(tokens)


def glob_matches(pattern: str, text: str) -> bool | None:
    tokens = _tokens(pattern)
    if tokens is None or len(text) > MAX_OPERAND:
        return None
    return _match(tokens, text)


def trim(value: str, operator: str, pattern: str) -> str | None:
    """`${x#p}` `${x##p}` strip a prefix, `${x%p}` `${x%%p}` a suffix (shortest / longest)."""
    tokens = _tokens(pattern)
    if tokens is None or len(value) > MAX_OPERAND or len(pattern) > MAX_OPERAND:
        return None
    size = len(value)
    if (size + 1) * (size + 1) * (len(tokens) + 1) > _MAX_STEPS:
        return None
    if operator in ("#", "##"):
        cuts = range(size + 1) if operator == "#" else range(size, -1, -1)
        for cut in cuts:
            if _match(tokens, value[:cut]):
                return value[cut:]
    else:
        cuts = range(size, -1, -1) if operator == "%" else range(size + 1)
        for cut in cuts:
            if _match(tokens, value[cut:]):
                return value[:cut]
    return value


_GLOB_CHARS = frozenset("*?[\\(")  # "(": extended globs are left unknown


def replace(value: str, operator: str, pattern: str, replacement: str) -> str | None:
    """`${x/p/r}` first match, `${x//p/r}` every match, `${x/#p/r}` at the start,
    `${x/%p/r}` at the end. The longest match at the leftmost position wins, as in bash."""
    if not pattern:  # an empty pattern matches only where it is anchored
        if operator == "/#":
            return replacement + value
        return value + replacement if operator == "/%" else value
    if len(value) > MAX_OPERAND or len(pattern) > MAX_OPERAND:
        return None
    if not any(c in _GLOB_CHARS for c in pattern):
        if operator == "/":
            return value.replace(pattern, replacement, 1)
        if operator == "//":
            return value.replace(pattern, replacement)
        if operator == "/#":
            return replacement + value[len(pattern) :] if value.startswith(pattern) else value
        return value[: -len(pattern)] + replacement if value.endswith(pattern) else value
    tokens = _tokens(pattern)
    if tokens is None:
        return None
    size = len(value)
    if (size + 1) * (size + 1) * (len(tokens) + 1) > _MAX_STEPS:
        return None
    if operator == "/#":
        for end in range(size, -1, -1):
            if _match(tokens, value[:end]):
                return replacement + value[end:]
        return value
    if operator == "/%":
        for start in range(size + 1):
            if _match(tokens, value[start:]):
                return value[:start] + replacement
        return value
    if size > _MAX_SCANNED_REPLACE:
        return None
    out: list[str] = []
    position = 0
    while position <= size:
        for end in range(size, position, -1):
            if _match(tokens, value[position:end]):
                out.append(replacement)
                position = end
                break
        else:
            if position < size:
                out.append(value[position])
            position += 1
            continue
        if operator == "/":
            out.append(value[position:])
            return "".join(out)
    return "".join(out)


def substring(value: str, offset: str, length: str | None) -> str | None:
    """`${x:offset}` and `${x:offset:length}`; negative numbers count from the end."""
    start = _integer(offset)
    if start is None:
        return None
    if start < 0:
        start = max(len(value) + start, 0)
    if length is None:
        return value[start:]
    count = _integer(length)
    if count is None:
        return None
    if count < 0:
        end = len(value) + count
        return value[start:end] if end >= start else None  # bash: an error
    return value[start : start + count]


def _integer(text: str) -> int | None:
    cleaned = text.strip().strip("()").strip()
    if cleaned.startswith("-") and cleaned[1:].strip().isdigit():
        return -int(cleaned[1:].strip())
    return int(cleaned) if cleaned.isdigit() and len(cleaned) < 12 else None


def change_case(value: str, operator: str) -> str | None:
    """`${x,,}` `${x,}` `${x^^}` `${x^}` `${x~~}` `${x~}`, and `${x@U}` `${x@L}` `${x@u}`."""
    if operator in (",,", "@L"):
        return value.lower()
    if operator in ("^^", "@U"):
        return value.upper()
    if operator == ",":
        return value[:1].lower() + value[1:]
    if operator in ("^", "@u"):
        return value[:1].upper() + value[1:]
    if operator == "~~":
        return value.swapcase()
    if operator == "~":
        return value[:1].swapcase() + value[1:]
    return None

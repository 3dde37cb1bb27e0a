"""What echo and printf print, so code written with them can be read back.

`printf '%s\\n' 'rm -rf /etc' > job.sh` writes `rm -rf /etc`; `printf '\\x72\\x6d'` prints
`rm`. Only the common forms are modelled: %s, %b, %d, %c, %q with their arguments (the format
reused while arguments remain), and backslash escapes (octal, hex, \\n, \\t, ...).
"""

from __future__ import annotations

_ECHO_FLAGS = frozenset("neE")
_MAX_OUTPUT = 256 * 1024


def printed_text(program: str, args: tuple[str, ...] | list[str]) -> str:
    """The text echo or printf writes to standard output."""
    words = list(args)
    if program == "echo":
        escapes = False
        while (
            words and len(words[0]) > 1 and words[0][0] == "-" and set(words[0][1:]) <= _ECHO_FLAGS
        ):
            escapes = escapes or "e" in words[0]
            words.pop(0)
        text = " ".join(words)
        return _unescape(text) if escapes or "\\x" in text else text
    if words and words[0] == "--":
        words.pop(0)
    if words and words[0] == "-v" and len(words) > 1:
        words = words[2:]  # printf -v VAR: prints nothing (the walk sees the assignment)
        return ""
    if not words:
        return ""
    return printf(words[0], words[1:])


def _echo_options(word: str) -> bool:
    return set(word[1:]) <= _ECHO_FLAGS


_HEX = frozenset("0123456789abcdefABCDEF")


def printf(template: str, arguments: list[str]) -> str:
    """A small printf: enough to read back code written through it."""
    pieces: list[str] = []
    remaining = list(arguments)
    first = True
    while first or remaining:
        first = False
        used = False
        index = 0
        while index < len(template):
            char = template[index]
            if char == "%" and index + 1 < len(template):
                spec_end = index + 1
                while spec_end < len(template) and template[spec_end] in "-+ #0123456789.":
                    spec_end += 1
                if spec_end >= len(template):
                    pieces.append(template[index:])
                    break
                conversion = template[spec_end]
                if conversion == "%":
                    pieces.append("%")
                else:
                    value = remaining.pop(0) if remaining else ""
                    used = True
                    pieces.append(_unescape(value) if conversion == "b" else value)
                index = spec_end + 1
                continue
            if char == "\\" and index + 1 < len(template):
                end, text = _escape_at(template, index)
                pieces.append(text)
                index = end
                continue
            pieces.append(char)
            index += 1
        if not used or sum(map(len, pieces)) > _MAX_OUTPUT:
            break
    return "".join(pieces)[:_MAX_OUTPUT]


def _escape_at(text: str, index: int) -> tuple[int, str]:
    """The backslash escape at `index`: where it ends and what it stands for."""
    following = text[index + 1]
    simple = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "a": "\a", "b": "\b", "f": "\f",
              "v": "\v", "e": "\x1b", '"': '"', "'": "'"}  # fmt: skip
    if following in simple:
        return index + 2, simple[following]
    if following == "x":
        digits = ""
        position = index + 2
        while (
            position < len(text) and len(digits) < 2 and text[position] in "0123456789abcdefABCDEF"
        ):
            digits += text[position]
            position += 1
        if digits:
            return position, chr(int(digits, 16))
    if following in "01234567":
        digits = ""
        position = index + 1
        if following == "0":
            position += 1
        while position < len(text) and len(digits) < 3 and text[position] in "01234567":
            digits += text[position]
            position += 1
        return position, chr(int(digits or "0", 8))
    return index + 1, "\\"


def _unescape(text: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(text):
        if text[index] == "\\" and index + 1 < len(text):
            index, piece = _escape_at(text, index)
            out.append(piece)
        else:
            out.append(text[index])
            index += 1
    return "".join(out)

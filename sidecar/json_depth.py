"""How deeply JSON text nests, told from the text before it is parsed.

Python's parser and everything that walks its result recurse once per level: deep enough
input is a RecursionError (an internal error, and the whole batch lost) wherever it is
walked. So text from clients is measured first, with C string methods and C loops (no regex),
in time linear in its length.
"""

from __future__ import annotations

from array import array
from itertools import accumulate

# Objects and arrays inside one another; no real tool's arguments come near it.
MAX_JSON_DEPTH = 64

# Outside strings, JSON has brackets and these (Python's parser also takes NaN and
# Infinity). Deleting them leaves the brackets; any other character is not JSON.
_NOT_BRACKETS = str.maketrans("", "", " \t\n\r,:0123456789+-.eEtruefalsnNaIinfity")
_ONE_KIND = str.maketrans("{}", "[]")
_STEPS = bytes.maketrans(b"[]", b"\x01\xff")


def deeper_than(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when objects and arrays in `text` nest more than `limit` deep. Text that is
    not JSON may answer either way; the parser refuses it next."""
    if text.count("[") + text.count("{") <= limit:
        return False  # cannot nest deeper than it has openers
    # Escaped backslashes, then escaped quotes: every quote left opens or closes a
    # string, and what is between them nests nothing.
    unescaped = text.replace("\\\\", "").replace('\\"', "")
    outside = "".join(unescaped.split('"')[::2])
    brackets = outside.translate(_NOT_BRACKETS).translate(_ONE_KIND)
    opened = brackets.count("[")
    if opened + brackets.count("]") != len(brackets):
        return False  # something else outside strings: not JSON
    if opened <= limit:
        return False
    # Depth is the highest running count of open brackets: +1 and -1 as signed bytes,
    # summed by C loops (accumulate, max) rather than a Python one.
    steps = array("b", brackets.encode("ascii").translate(_STEPS))
    return max(accumulate(steps)) > limit

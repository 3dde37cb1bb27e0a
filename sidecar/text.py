"""Text from clients (and text decoded from it), made valid before anything looks at it.

JSON may spell a lone surrogate (`"\\udcff"`), which Python decodes into a str that
cannot be encoded as UTF-8. Left in, it made RE2 raise inside the security inspector,
so `sudo rm -rf / \\udcff` was asked about (security.exception) instead of denied, and
the decision log could not write the record. Replaced at the edge by U+FFFD, a verdict
never depends on whether text can be encoded. (Strings in protobuf messages are
already valid: the protobuf runtime rejects invalid UTF-8 when it parses a message.)
"""

from __future__ import annotations

from typing import Any

REPLACEMENT = "\ufffd"


def valid_text(text: str) -> str:
    """text with every lone surrogate replaced by U+FFFD (a valid pair is joined)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def valid_json(value: Any) -> Any:
    """A parsed JSON value with valid_text applied to every string, keys included.
    Iterative: arguments may nest as deep as the JSON parser allows."""
    if isinstance(value, str):
        return valid_text(value)
    if not isinstance(value, (dict, list)):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]  # (container, key) whose value to clean
    while stack:
        container, key = stack.pop()
        item = container[key]
        if isinstance(item, str):
            container[key] = valid_text(item)
        elif isinstance(item, list):
            stack.extend((item, index) for index in range(len(item)))
        elif isinstance(item, dict):
            cleaned = {valid_text(k): v for k, v in item.items()}
            if cleaned.keys() != item.keys():
                item.clear()
                item.update(cleaned)
            stack.extend((item, k) for k in item)
    return root[0]

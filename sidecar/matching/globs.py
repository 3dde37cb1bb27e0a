"""Many shell-style globs compiled into one RE2 expression, once per policy load."""

from __future__ import annotations

from collections.abc import Iterable

import re2


def glob_to_re2(glob: str) -> str:
    """`*` matches any run of characters, `?` one character; everything else is literal."""
    return "".join(".*" if c == "*" else "." if c == "?" else re2.escape(c) for c in glob)


class GlobSet:
    """Matches a name (untrusted: it comes from the model) against any of several globs.

    Agents use a handful of tool names over and over, so answers are remembered
    (bounded): most calls then cost a dictionary lookup instead of an RE2 search.
    """

    MAX_REMEMBERED = 4096
    REMEMBERED_LENGTH = 256  # longer names (hosts from commands, say) are matched afresh

    def __init__(self, globs: Iterable[str], ignore_case: bool = False) -> None:
        """`ignore_case`: for names a runtime spells as it likes (`WebFetch`, `web_fetch`)
        where matching more names only makes a check stricter."""
        self.globs = tuple(globs)
        joined = "|".join(f"(?:{glob_to_re2(g)})" for g in self.globs)
        flags = "(?si)" if ignore_case else "(?s)"
        self._regex = re2.compile(f"{flags}^(?:{joined})$") if self.globs else None
        self._answers: dict[str, bool] = {}

    def matches(self, name: str) -> bool:
        answer = self._answers.get(name)
        if answer is None:
            answer = self._regex is not None and self._regex.search(name) is not None
            if len(name) <= self.REMEMBERED_LENGTH:
                if len(self._answers) >= self.MAX_REMEMBERED:
                    self._answers.clear()
                self._answers[name] = answer
        return answer

"""Several RE2 patterns over one text in a single call.

re2.Filter (RE2's FilteredRE2) first looks for the literal pieces ("atoms") each
pattern needs, with one case-insensitive literal automaton, and then confirms
every candidate with its full pattern, so the answer is exact. The automaton's
states are bounded by the atoms' total length; still, very long texts go through
the plain one-pattern-at-a-time path, whose behaviour is the reference.
"""

from __future__ import annotations

from collections.abc import Sequence

import re2

LARGE_TEXT = 16 * 1024
_NONE: frozenset[int] = frozenset()


class PatternFilter:
    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns = tuple(patterns)
        self._each = [re2.compile(p) for p in self.patterns]
        self._filter: re2.Filter | None = None
        if self.patterns:
            self._filter = re2.Filter()
            for pattern in self.patterns:
                self._filter.Add(pattern)
            self._filter.Compile()

    def matching(self, text: str) -> frozenset[int]:
        """Indexes of the patterns found in `text`."""
        if self._filter is None:
            return frozenset()
        if len(text) > LARGE_TEXT:
            return self.matching_one_by_one(text)
        found = self._filter.Match(text)
        return frozenset(found) if found else _NONE

    def matching_one_by_one(self, text: str) -> frozenset[int]:
        return frozenset(i for i, regex in enumerate(self._each) if regex.search(text))

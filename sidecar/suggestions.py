"""Suggestions ("did you mean …?") for misspelt setting names and policy keys."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def nearest(word: str, known: Iterable[str]) -> str | None:
    """The known name closest to `word`, if one is close enough to be a likely typo."""
    candidates = sorted(set(known))
    folded = {candidate.lower(): candidate for candidate in candidates}
    if word.lower() in folded:  # a case slip: MODE for mode
        return folded[word.lower()]
    found = difflib.get_close_matches(word.lower(), list(folded), n=1, cutoff=0.6)
    return folded[found[0]] if found else None


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """' (did you mean X?)' or '' when nothing known is close."""
    found = nearest(word, known)
    return f" (did you mean {found}?)" if found is not None and found != word else ""

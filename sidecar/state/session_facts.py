"""What a session's calls created, kept so that later calls are judged with it.

Attackers split steps across calls precisely because each step alone looks harmless:
download, then chmod, then run; write a script, then run it; stage a secret in a file, then
send the file; add a git remote, then push to it; switch a package registry, then install.
Facts live in the state store (they survive restarts, and every worker and replica sees
them), keyed by session. During an Inspect they are read from the session's snapshot,
loaded before the chain, and what the chain records is written after it
(sidecar/store/states.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple, Protocol

MAX_DETAIL = 64 * 1024  # content of a script written, kept to judge it when it runs
MAX_FACTS_PER_SESSION = 10_000
# Details (script contents) a session keeps in all; past it, new facts keep no detail.
# Every Inspect of the session loads them, so they are bounded in bytes too.
MAX_DETAIL_BYTES_PER_SESSION = 4 * 1024 * 1024


class Fact(NamedTuple):
    kind: str  # "file", "tree", "carried", "remote", "registry", "cwd"
    key: str  # a path, a directory, a remote name, an ecosystem
    origin: str  # an Origin value, or "" where it does not apply
    detail: str = ""  # written content, carried sources (newline-separated), a URL


class FactStore(Protocol):
    """A session's facts, as the effect model reads and records them."""

    def has_any(self, session_id: str) -> bool: ...

    def facts(self, session_id: str, kind: str) -> list[Fact]: ...

    def fact(self, session_id: str, kind: str, key: str) -> Fact | None: ...

    def record(self, session_id: str, facts: Iterable[Fact]) -> None: ...

    def forget(self, session_id: str) -> bool: ...

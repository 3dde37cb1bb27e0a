"""A least-recently-used cache bounded in bytes as well as in entries.

A count alone does not bound memory when keys and values come from clients: 2,048
entries of 128 KiB command lines are a quarter of a gigabyte. Every entry therefore
carries a weight (an estimate of its bytes, given by the caller, who knows the shape
of what it stores), and the oldest entries leave when either bound is passed.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

ENTRY_OVERHEAD = 200  # bytes of dict slot, tuple and object headers per entry, roughly


class BoundedCache(Generic[K, V]):
    """Thread-safe: the policy-compiling thread and analysis threads may share one."""

    def __init__(self, max_entries: int, max_bytes: int) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        # No lock: each OrderedDict operation is atomic under the GIL, and a get is on
        # every call's path. An entry dropped between the two steps is simply not moved.
        found = self._items.get(key)
        if found is None:
            return None
        with contextlib.suppress(KeyError):
            self._items.move_to_end(key)
        return found[0]

    def put(self, key: K, value: V, weight: int) -> None:
        """Remember value; an entry heavier than a quarter of the budget is not kept."""
        weight += ENTRY_OVERHEAD
        if weight * 4 > self.max_bytes:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._items[key] = (value, weight)
            self._bytes += weight
            while len(self._items) > self.max_entries or self._bytes > self.max_bytes:
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= dropped

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

"""Giving freed memory back to the system, keeping long-lived objects out of the cyclic
collector's walks, and reading how much the process holds.

glibc keeps memory that Python and tree-sitter freed in its arenas, so after one
large request the resident size stays high although nothing uses it. malloc_trim(0)
returns those pages; it costs about a millisecond on a large heap, so it runs only
after heavy work, never per call.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os

_libc: ctypes.CDLL | None
try:
    _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    _trim = _libc.malloc_trim
    _trim.argtypes = [ctypes.c_size_t]
    _trim.restype = ctypes.c_int
except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
    _libc = None


def release_freed_memory() -> None:
    if _libc is not None:
        _trim(0)


def settle_long_lived_objects() -> None:
    """Collect what is garbage now, then freeze the rest (gc.freeze).

    A compiled policy is some 400,000 tracked objects that live until the next reload.
    Left in the collector's view, every full collection walks them all: a stall of
    ~160 ms every few hundred requests. Frozen, a full collection walks only what
    requests made since. Run after startup and after an old policy is retired; the
    collection here is the one stall, and it frees the old policy's reference cycles,
    which a frozen heap would otherwise keep.
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()


def die_with_parent() -> None:
    """Linux: this process gets SIGKILL when its parent dies (PR_SET_PDEATHSIG), so a
    worker cannot outlive a sidecar that was killed with -9 while it parsed."""
    if _libc is not None:
        _libc.prctl(1, 9, 0, 0, 0)


def resident_bytes(pid: int | None = None) -> int:
    """Resident set size, from /proc (Linux); 0 where it cannot be read."""
    try:
        with open(f"/proc/{pid or os.getpid()}/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0

"""Caches and trackers are bounded in bytes, not only in entries: keys and values come
from clients, and 2,048 entries of 128 KiB lines are a quarter of a gigabyte."""

from __future__ import annotations

from sidecar.bounded_cache import BoundedCache
from sidecar.inspection.model import ToolCall
from sidecar.inspection.repetition import RepetitionTracker
from sidecar.inspection.shell_calls import CACHE_BYTES, ShellCalls
from sidecar.matching.globs import GlobSet
from sidecar.policy.schema import ShellTool
from sidecar.shell import walk


def test_the_bounded_cache_drops_the_oldest_past_either_bound() -> None:
    cache: BoundedCache[str, str] = BoundedCache(max_entries=100, max_bytes=10_000)
    for i in range(50):
        cache.put(f"k{i}", "v", 800)
    assert cache.bytes <= 10_000
    assert len(cache) == 10_000 // 1000  # 800 + the per-entry overhead each
    assert cache.get("k49") == "v" and cache.get("k0") is None
    cache.get("k40")  # used: now the newest
    cache.put("new", "v", 800)
    assert cache.get("k40") == "v" and cache.get("k41") is None
    cache.put("huge", "v", 5_000)  # over a quarter of the budget: not kept at all
    assert cache.get("huge") is None and cache.get("new") == "v"


def test_the_analysis_cache_holds_its_byte_budget_against_large_lines() -> None:
    calls = ShellCalls((ShellTool(tool="shell", argument="command"),), ())
    for i in range(120):  # 120 lines of ~4 KiB, each with ~500 commands: past 16 MiB
        line = f"echo {i}; " + "; ".join(f"ls d{i}-{j}" for j in range(500))
        assert calls.analyse(ToolCall(str(i), "shell", {"command": line})) is not None
    assert 0 < calls._cache.bytes <= CACHE_BYTES


def test_the_walk_memo_holds_its_byte_budget() -> None:
    walk._DEFAULT_MEMO.clear()
    walk._DEFAULT_MEMO.weight = 0
    # find with 64 starting points and many -exec: each short command expands to a
    # great many words, the shape a count alone does not bound.
    roots = " ".join(f"r{i}" for i in range(64))
    for i in range(400):
        walk.analyse(f"find {roots} " + f"-exec echo {i} {{}} \\; " * 10 + f"# {i}")
    assert walk._DEFAULT_MEMO.weight <= walk._MEMO_BYTES
    assert len(walk._DEFAULT_MEMO) > 0


def test_repetition_streaks_are_bounded_in_bytes_and_still_count_large_calls() -> None:
    tracker = RepetitionTracker(max_bytes=1024 * 1024)
    content = "x" * (1 << 20)  # a 1 MiB file write, in 1,000 sessions
    for i in range(1000):
        tracker.observe(f"s{i}", ToolCall("1", "write_file", {"path": "a", "content": content}))
    assert tracker.bytes <= 1024 * 1024
    # Large arguments are remembered by digest: repeats still count, changes still reset.
    call = ToolCall("1", "write_file", {"path": "a", "content": content})
    counts = [tracker.observe("same", call) for _ in range(3)]
    assert counts == [1, 2, 3]
    changed = ToolCall("1", "write_file", {"path": "a", "content": content + "y"})
    assert tracker.observe("same", changed) == 1


def test_long_names_are_matched_but_not_remembered() -> None:
    globs = GlobSet(["*.example.com"])
    long_host = "a" * 10_000 + ".example.com"
    assert globs.matches(long_host)
    assert long_host not in globs._answers
    assert globs.matches("api.example.com") and "api.example.com" in globs._answers

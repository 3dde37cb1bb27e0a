"""The state file holds answers and every session's history in plaintext: it and its
directories are private (0600 / 0700) whatever the umask, and the answer cache is
bounded in bytes."""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from sidecar.inspection.verdict import Verdict
from sidecar.observability.decision_log import DecisionLog
from sidecar.secrets import SecretScanner
from sidecar.state.approvals import ApprovalStore
from sidecar.state.store import StateStore
from sidecar.store.sqlite import SqliteStore


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(params=[0o000, 0o022, 0o277], ids=["umask 000", "umask 022", "umask 277"])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    previous = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(previous)


def test_state_files_and_directories_are_private_whatever_the_umask(
    tmp_path: Path, umask: int
) -> None:
    path = tmp_path / "a" / "b" / "state.db"
    tmp_path.chmod(0o755)
    sqlite = SqliteStore(str(path))
    store = sqlite.file
    asyncio.run(
        ApprovalStore(sqlite.database).set_standing("s", "shell", "always_allow", Verdict.ALLOW)
    )
    try:
        assert mode(tmp_path / "a") == 0o700
        assert mode(tmp_path / "a" / "b") == 0o700
        assert mode(path) == 0o600
        # SQLite's write-ahead log and shared memory hold the same data.
        for companion in ("state.db-wal", "state.db-shm"):
            assert mode(path.parent / companion) == 0o600, companion
    finally:
        store.close()
    assert mode(tmp_path) == 0o755  # not created by the sidecar: left alone


def test_a_state_file_readable_by_others_is_made_private(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.touch()
    path.chmod(0o644)
    StateStore(str(path)).close()
    assert mode(path) == 0o600


def test_the_decision_log_file_is_private_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    path = tmp_path / "decisions.jsonl"
    DecisionLog(str(path), SecretScanner()).close()
    assert mode(path) == 0o600


async def test_the_snapshot_cache_is_bounded_in_bytes_and_stays_exact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sidecar.store.sqlite.CACHE_BYTES", 64 * 1024)
    store = SqliteStore(":memory:")
    answers = ApprovalStore(store.database, changed=store.changed)
    sessions = [f"session-{i:04d}-" + "x" * 240 for i in range(400)]  # 256-character ids
    for session in sessions:
        await answers.set_standing(session, "t" * 256, "always_deny", Verdict.DENY, "d")
    for session in sessions:
        assert (await store.load_session(session)).standing == {"t" * 256: Verdict.DENY}
        assert store.cache_bytes <= 64 * 1024
    assert (await store.load_session("other")).empty
    await store.close()


def _open_state(path: str) -> str:
    try:
        StateStore(path).connection.close()
    except Exception as error:  # reported to the parent, which asserts on it
        return str(error)
    return ""


def test_workers_opening_a_new_state_file_together_all_open_it(tmp_path: Path) -> None:
    """Worker processes open one new file at once: switching it to WAL raced, and SQLite
    answered the loser "database is locked" without waiting (a worker then failed to start).
    Each round is a fresh file; every process must open it."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    with context.Pool(6) as pool:
        for round_ in range(12):
            path = str(tmp_path / f"state-{round_}.db")
            errors = [e for e in pool.map(_open_state, [path] * 6) if e]
            assert errors == [], errors

"""Hot reload with last-known-good: a new policy replaces the old one only once it
has loaded and compiled completely; otherwise the old one keeps serving."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sidecar.engine import ActivePolicy, EngineParts, compile_policy
from sidecar.inspection.verdict import Mode
from sidecar.observability.metrics import Metrics
from sidecar.policy.loader import PolicyError, load_policy

log = logging.getLogger("sidecar.policy")


@dataclass(frozen=True, slots=True)
class ReloadOutcome:
    ok: bool
    error: str
    attempted_at: float


def fingerprint(directories: Sequence[Path]) -> tuple[tuple[str, int, int, int], ...]:
    """What the policy files look like now. Stats follow symlinks, so a Kubernetes
    ConfigMap update (an atomic swap of the ..data symlink) changes it too."""
    seen: list[tuple[str, int, int, int]] = []
    for directory in directories:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            seen.append((str(directory), -1, -1, -1))
            continue
        for entry in entries:
            if not entry.name.endswith((".yaml", ".yml")):
                continue
            try:
                st = os.stat(entry.path)
            except OSError:
                continue
            seen.append((entry.path, st.st_mtime_ns, st.st_size, st.st_ino))
    return tuple(seen)


class PolicyReloader:
    """Loads one slot (the active policy, or the shadow candidate) from directories."""

    def __init__(
        self,
        directories: Sequence[Path],
        parts: EngineParts,
        metrics: Metrics,
        mode_override: Mode | None,
        install: Callable[[ActivePolicy], Awaitable[None]],
        on_outcome: Callable[[ReloadOutcome], Awaitable[None]],
        slot: str = "active",
    ) -> None:
        self.directories = list(directories)
        self._parts = parts
        self._metrics = metrics
        self._mode = mode_override
        self._install = install
        self._on_outcome = on_outcome
        self._slot = slot
        self._lock = asyncio.Lock()
        self._seen = fingerprint(self.directories)
        self.last: ReloadOutcome | None = None

    def compile(self) -> ActivePolicy:
        """Load and compile fully; raises PolicyError. Runs off the event loop."""
        return compile_policy(load_policy(self.directories), self._parts, self._mode)

    async def reload(self, reason: str) -> bool:
        async with self._lock:  # one reload at a time; a SIGHUP storm queues up
            self._seen = fingerprint(self.directories)
            attempted = time.time()
            try:
                active = await asyncio.to_thread(self.compile)
            except PolicyError as error:
                outcome = ReloadOutcome(False, str(error), attempted)
                log.error(
                    "%s policy reload (%s) rejected; the last good policy keeps serving:\n%s",
                    self._slot, reason, error,
                )  # fmt: skip
            except Exception as error:  # an unexpected bug must not take the server down
                outcome = ReloadOutcome(False, f"{type(error).__name__}: {error}", attempted)
                log.exception("%s policy reload (%s) failed", self._slot, reason)
            else:
                await self._install(active)
                outcome = ReloadOutcome(True, "", attempted)
                log.info(
                    "%s policy reloaded (%s): revision %s", self._slot, reason, active.revision
                )
            self.last = outcome
            if self._slot == "active":
                self._metrics.policy_reloads.labels(
                    result="success" if outcome.ok else "failure"
                ).inc()
                if outcome.ok:
                    self._metrics.policy_last_reload_success.set(outcome.attempted_at)
            await self._on_outcome(outcome)
            return outcome.ok

    async def watch(self, interval: float) -> None:
        """Poll the directories; reload when their files change."""
        while True:
            await asyncio.sleep(interval)
            if fingerprint(self.directories) != self._seen:
                await self.reload("files changed")

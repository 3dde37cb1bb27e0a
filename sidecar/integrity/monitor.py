"""What a session reads: tool results and fetched content, checked for prompt injection.

Runs on Append and Project (messages of role tool that the agent sees) and on the
`recent_tool_outputs` of Inspect. A message with a sign at or above the policy's
`injection.taint_risk` taints the session (SessionTaint). With the classifier enabled, a
message the rules did not flag is sent to the model in the background; until it answers the
session is unchecked, and if it fails the session stays unchecked: risky calls ask.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import NamedTuple

from sidecar.integrity.checks import IntegrityChecks
from sidecar.integrity.classifier import classify
from sidecar.integrity.scanner import Sign
from sidecar.model_client import ChatModelClient, ModelError
from sidecar.observability.metrics import Metrics
from sidecar.policy.schema import InjectionClassifier
from sidecar.state.injection_taint import SessionTaint, Source
from sidecar.store.errors import StoreUnavailable

log = logging.getLogger("sidecar.injection")
# Texts larger than this are scanned in a worker thread, off the event loop.
LARGE_TEXT = 64 * 1024
_SEEN_OUTPUTS = 4096  # recent_tool_outputs already scanned (runtimes resend them)


class Untrusted(NamedTuple):
    """One piece of text the agent read, to check."""

    message_id: str
    text: str
    origin: str  # for the classifier and logs: "tool result of call c1", "tool output"


class InjectionMonitor:
    def __init__(
        self,
        taint: SessionTaint,
        metrics: Metrics,
        checks: Callable[[], IntegrityChecks | None],
    ) -> None:
        self._taint = taint
        self._metrics = metrics
        self._checks = checks
        self._clients: dict[InjectionClassifier, ChatModelClient] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()

    async def check(self, session_id: str, items: Sequence[Untrusted], source: Source) -> None:
        checks = self._checks()
        if checks is None or not items:
            return
        if source == "inspect":
            items = [item for item in items if not self._seen_before(session_id, item)]
        size = sum(len(item.text) for item in items)
        try:
            if size > LARGE_TEXT:
                results = await asyncio.to_thread(_scan_all, checks, items)
            else:
                results = _scan_all(checks, items)
        except Exception:  # a scan that fails must not pass as clean
            log.exception("injection scan failed (session %r)", session_id)
            for item in items:
                await self._taint.pending(session_id, item.message_id, source)
                await self._taint.resolve(session_id, item.message_id, "failed")
            return
        for item, signs in zip(items, results, strict=True):
            flagged = checks.flagged(signs)
            if flagged:
                await self._flag(session_id, item, flagged, source)
                continue  # checked again when sent again: a replica may delete the session
            if checks.injection.classifier.enabled:
                await self._classify_later(session_id, item, checks.injection.classifier, source)
            if source == "inspect":
                self._remember(session_id, item)

    @staticmethod
    def _key(session_id: str, item: Untrusted) -> tuple[str, str]:
        return (session_id, hashlib.sha256(item.text.encode("utf-8", "replace")).hexdigest())

    def _seen_before(self, session_id: str, item: Untrusted) -> bool:
        key = self._key(session_id, item)
        if key in self._seen:
            self._seen.move_to_end(key)
            return True
        return False

    def _remember(self, session_id: str, item: Untrusted) -> None:
        """An output that raised no flag (stored nothing, or its pending check): not
        scanned again when the runtime resends it."""
        self._seen[self._key(session_id, item)] = None
        while len(self._seen) > _SEEN_OUTPUTS:
            self._seen.popitem(last=False)

    async def _flag(
        self, session_id: str, item: Untrusted, signs: list[Sign], source: Source
    ) -> None:
        worst = max(signs, key=lambda s: s.risk)
        rules = tuple(dict.fromkeys(s.rule_id for s in signs))
        excerpt = worst.excerpt or worst.message
        newly = await self._taint.flag(session_id, item.message_id, source, rules, excerpt)
        self._metrics.injection_flagged.labels(source=source).inc()
        if newly:
            self._metrics.sessions_tainted.labels(source=source).inc()
        log.warning(
            "untrusted input in session %r: message %r (%s) looks like a prompt injection (%s)",
            session_id,
            item.message_id,
            item.origin,
            ", ".join(rules),
        )

    async def _classify_later(
        self, session_id: str, item: Untrusted, settings: InjectionClassifier, source: Source
    ) -> None:
        # Stored before the call returns: the next Inspect, on any replica, asks until the
        # classifier answers.
        await self._taint.pending(session_id, item.message_id, source)
        task = asyncio.get_running_loop().create_task(self._classify(session_id, item, settings))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _classify(
        self, session_id: str, item: Untrusted, settings: InjectionClassifier
    ) -> None:
        try:
            await self._judge(session_id, item, settings)
        except StoreUnavailable as error:
            # The message stays pending in the store: its session keeps asking.
            log.warning(
                "the classifier's answer for message %r of session %r could not be stored: %s",
                item.message_id,
                session_id,
                error,
            )

    async def _judge(self, session_id: str, item: Untrusted, settings: InjectionClassifier) -> None:
        try:
            client = self._client(settings)
            judgement = await classify(client, item.text, item.origin, settings.max_chars)
        except (ModelError, OSError) as error:
            self._metrics.injection_classifier.labels(result="failed").inc()
            log.warning(
                "injection classifier failed for message %r of session %r: %s; risky calls "
                "in the session ask",
                item.message_id,
                session_id,
                error,
            )
            await self._taint.resolve(session_id, item.message_id, "failed")
            return
        if not judgement.injection:
            self._metrics.injection_classifier.labels(result="clean").inc()
            await self._taint.resolve(session_id, item.message_id, "clean")
            return
        self._metrics.injection_classifier.labels(result="injection").inc()
        self._metrics.injection_flagged.labels(source="classifier").inc()
        excerpt = f"{judgement.reason} ({item.text[:160]})"
        if await self._taint.resolve(
            session_id, item.message_id, "flagged", ("injection.classifier",), excerpt
        ):
            self._metrics.sessions_tainted.labels(source="classifier").inc()
        log.warning(
            "untrusted input in session %r: the classifier flagged message %r",
            session_id,
            item.message_id,
        )

    def _client(self, settings: InjectionClassifier) -> ChatModelClient:
        client = self._clients.get(settings)
        if client is None:
            client = ChatModelClient.for_endpoint(settings, settings.timeout_ms / 1000)
            self._clients[settings] = client
        return client

    async def drain(self) -> None:
        """Wait for classifications in flight (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
        for client in self._clients.values():
            await client.close()
        self._clients.clear()

    def forget(self, session_id: str) -> None:
        """A deleted session: outputs seen in it are checked again if they come back."""
        for key in [k for k in self._seen if k[0] == session_id]:
            del self._seen[key]


def _scan_all(checks: IntegrityChecks, items: Sequence[Untrusted]) -> list[list[Sign]]:
    return [checks.scanner.scan(item.text, "content") for item in items]

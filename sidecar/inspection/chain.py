"""Run inspectors in order, isolate their failures, and merge verdicts strictest first.

Before the first inspector, the batch's shell command lines are analysed within their
budget (ShellCalls.prepare). A light batch (the usual few hundred bytes) then runs its
local inspectors right on the event loop: it costs tens of microseconds, less than any
hand-off. A heavy batch runs each local inspector in a worker thread under the link's
timeout, so the event loop keeps answering health checks and other calls, and a
timeout is real: the chain stops waiting, applies on_error, and the thread stops at
its next deadline check.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import time
from collections.abc import Callable, Coroutine, Generator, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any, cast

from sidecar.inspection import deadline
from sidecar.inspection.inspector import Inspector
from sidecar.inspection.model import (
    CallVerdict,
    Finding,
    InspectionContext,
    ToolCall,
)
from sidecar.inspection.nested_calls import MAX_CARRIED, expanded
from sidecar.inspection.shell_calls import Preparation, ShellCalls
from sidecar.inspection.verdict import Mode, Risk, Verdict
from sidecar.memory import release_freed_memory
from sidecar.observability.hot_metrics import CounterChild, HistogramChild
from sidecar.observability.metrics import Metrics
from sidecar.policy.schema import OnError
from sidecar.shell.isolation import IsolatedAnalyser

log = logging.getLogger("sidecar.chain")

_ON_ERROR_VERDICT = {"require_approval": Verdict.REQUIRE_APPROVAL, "deny": Verdict.DENY}
# Arguments past this many bytes (a file's content to write, say) make a batch heavy
# even without shell: secret and argument patterns run over all of it.
HEAVY_ARGUMENT_BYTES = 64 * 1024
TRIM_EVERY_SECONDS = 1.0  # give freed memory back at most this often, after heavy batches
_NO_PREPARATION = Preparation()


@dataclass(frozen=True, slots=True)
class ChainLink:
    inspector: Inspector
    timeout_seconds: float
    on_error: OnError = "skip"


@dataclass(slots=True)
class ChainResult:
    verdicts: list[CallVerdict]
    failures: dict[str, str]  # inspector -> "exception" or "timeout"; empty when all ran


class InspectorChain:
    def __init__(
        self,
        links: Sequence[ChainLink],
        metrics: Metrics,
        shell_calls: ShellCalls | None = None,
        isolated: IsolatedAnalyser | None = None,
        offload: Executor | None = None,
    ) -> None:
        """shell_calls: whose analyses to prepare per batch; isolated: where large command
        lines are analysed (None: cooperatively, here); offload: the threads heavy
        batches run their local inspectors on (None: the event loop, as the CLI does)."""
        self.links = tuple(links)
        self._metrics = metrics
        self.shell_calls = shell_calls
        self._isolated = isolated
        self._offload = offload
        self._trimmed_at = 0.0
        self._series_by_inspector: dict[str, _InspectorSeries] = {}
        self._finding_counters: dict[tuple[str, str], CounterChild] = {}
        # Looked up once: per call, each link then costs a call and two clock reads.
        self._steps = [
            (link, self._series(link.inspector.name), getattr(link.inspector, "inspect_now", None))
            for link in self.links
        ]

    def with_links(self, links: Sequence[ChainLink]) -> InspectorChain:
        """The same chain (analysis, threads) with other links: for tests and tools."""
        return InspectorChain(links, self._metrics, self.shell_calls, self._isolated, self._offload)

    async def aclose(self) -> None:
        """Release what inspectors hold (a model client's connections)."""
        for link in self.links:
            close = getattr(link.inspector, "aclose", None)
            if close is not None:
                await close()

    async def run(
        self, calls: Sequence[ToolCall], context: InspectionContext, arguments_bytes: int = 0
    ) -> ChainResult:
        """arguments_bytes: the size of the calls' arguments as received, when known."""
        if context.mode is Mode.CHAT:
            return ChainResult([_skipped(call) for call in calls], {})
        # No verdict may depend on whether a string can be encoded (lone surrogates); the
        # service edge makes text valid too, this covers callers inside the process.
        calls = [call.sanitised() for call in calls]
        carrying = expanded(calls)
        if carrying is not None:
            # A call that carries others (a parallel or batch tool): each is judged as made,
            # and the carrier gets the strictest of their verdicts.
            result = await self._run_expanded(carrying.calls, context, arguments_bytes)
            findings: list[list[Finding]] = [[] for _ in calls]
            for owner, verdict in zip(carrying.owners, result.verdicts, strict=True):
                findings[owner].extend(verdict.findings)
            for owner in carrying.cut:
                findings[owner].append(_carried_cut())
            verdicts = [merge(call, found) for call, found in zip(calls, findings, strict=True)]
            return ChainResult(verdicts, result.failures)
        return await self._run_expanded(calls, context, arguments_bytes)

    async def _run_expanded(
        self, calls: Sequence[ToolCall], context: InspectionContext, arguments_bytes: int
    ) -> ChainResult:
        shell_calls = self.shell_calls
        if shell_calls is None:
            return await self._run_links(calls, context, None, _NO_PREPARATION)
        prepared = shell_calls.prepare_now(calls)  # most batches: all done here
        try:
            if prepared.done < len(calls):
                await shell_calls.prepare_rest(calls, prepared, self._isolated)
            offload = None
            if prepared.cut or prepared.heavy or arguments_bytes > HEAVY_ARGUMENT_BYTES:
                offload = self._heavy(prepared, arguments_bytes)
            return await self._run_links(calls, context, offload, prepared)
        finally:
            shell_calls.release(calls)
            if prepared.heavy:
                self._trim()

    def _heavy(self, prepared: Preparation, arguments_bytes: int) -> Executor | None:
        """Count what was cut; where a heavy batch's local inspectors run."""
        if prepared.cut:
            for reason, _ in prepared.cut.values():
                self._metrics.shell_not_analysed.labels(reason=reason).inc()
        if self._offload is None or not (prepared.heavy or arguments_bytes > HEAVY_ARGUMENT_BYTES):
            return None
        self._metrics.offloaded_batches.inc()
        return self._offload

    async def _run_links(
        self,
        calls: Sequence[ToolCall],
        context: InspectionContext,
        offload: Executor | None,
        prepared: Preparation,
    ) -> ChainResult:
        per_call: list[list[Finding]] = [[] for _ in calls]
        failures: dict[str, str] = {}
        clock = time.perf_counter
        for link, series, inspect_now in self._steps:
            started = clock()
            if inspect_now is not None and offload is not None:
                results, failure = await self._in_thread(offload, link, inspect_now, calls, context)
            elif inspect_now is not None:
                try:
                    results = inspect_now(calls, context)
                except Exception:
                    results, failure = self._raised(link, None, context)
                else:
                    failure = None
                    if type(results) is not list or len(results) != len(calls):
                        results, failure = self._checked(link, results, calls, context)
            else:
                # A timeout could not interrupt synchronous code anyway, so the
                # coroutine is driven by hand first: only an inspector that really
                # waits (a model call) gets a timer.
                work = link.inspector.inspect(calls, context)
                try:
                    pending = work.send(None)
                except StopIteration as finished:
                    results, failure = self._checked(link, finished.value, calls, context)
                except Exception:
                    results, failure = self._raised(link, work, context)
                else:
                    results, failure = await self._wait(link, work, pending, calls, context)
            elapsed = clock() - started
            if failure is not None:
                results = self._failed(link, failure, len(calls), context)
                failures[link.inspector.name] = failure
            self._record(link.inspector.name, series, elapsed, results)
            for findings, found in zip(per_call, results, strict=True):
                if found:
                    findings.extend(found)
        verdicts = [merge(call, findings) for call, findings in zip(calls, per_call, strict=True)]
        if prepared.cut:
            _never_allow_unanalysed(verdicts, per_call, prepared.cut)
        return ChainResult(verdicts, failures)

    async def _in_thread(
        self,
        offload: Executor,
        link: ChainLink,
        inspect_now: Callable[[Sequence[ToolCall], InspectionContext], list[list[Finding]]],
        calls: Sequence[ToolCall],
        context: InspectionContext,
    ) -> tuple[list[list[Finding]], str | None]:
        """A local inspector on a worker thread, under its timeout."""
        timeout = link.timeout_seconds
        work = functools.partial(inspect_now, calls, context)
        # Each run gets its own copy of the context, hence its own deadline.
        running = contextvars.copy_context().run
        future = asyncio.get_running_loop().run_in_executor(
            offload, running, deadline.run_with_deadline, time.perf_counter() + timeout, work
        )
        try:
            async with asyncio.timeout(timeout):
                value = await future
        except (TimeoutError, deadline.InspectorTimeout):
            return [], "timeout"
        except Exception:
            return self._raised(link, None, context)
        return self._checked(link, value, calls, context)

    def _trim(self) -> None:
        """Heavy batches leave freed memory in glibc's arenas: hand it back, now and then."""
        now = time.monotonic()
        if now - self._trimmed_at < TRIM_EVERY_SECONDS:
            return
        self._trimmed_at = now
        try:
            if self._offload is not None:
                self._offload.submit(release_freed_memory)
                return
        except RuntimeError:  # the threads are shutting down with the server
            pass
        release_freed_memory()

    async def _wait(
        self,
        link: ChainLink,
        work: Coroutine[Any, Any, list[list[Finding]]],
        pending: Any,
        calls: Sequence[ToolCall],
        context: InspectionContext,
    ) -> tuple[list[list[Finding]], str | None]:
        """An inspector that suspended continues under its timeout."""
        try:
            async with asyncio.timeout(link.timeout_seconds):
                value = await _Resume(work, pending)
        except TimeoutError:
            return [], "timeout"
        except Exception:
            return self._raised(link, work, context)
        return self._checked(link, value, calls, context)

    def _checked(
        self, link: ChainLink, value: Any, calls: Sequence[ToolCall], context: InspectionContext
    ) -> tuple[list[list[Finding]], str | None]:
        results: list[list[Finding]] = value
        if isinstance(results, list) and len(results) == len(calls):
            return results, None
        log.error(
            "inspector %s returned %s results for %d calls (decision %s)",
            link.inspector.name,
            len(results) if isinstance(results, list) else type(results).__name__,
            len(calls),
            context.decision_id,
        )
        return [], "exception"

    def _raised(
        self,
        link: ChainLink,
        work: Coroutine[Any, Any, list[list[Finding]]] | None,
        context: InspectionContext,
    ) -> tuple[list[list[Finding]], str | None]:
        if work is not None:
            work.close()
        log.exception("inspector %s failed (decision %s)", link.inspector.name, context.decision_id)
        return [], "exception"

    def _failed(
        self, link: ChainLink, failure: str, count: int, context: InspectionContext
    ) -> list[list[Finding]]:
        name = link.inspector.name
        if failure == "timeout":
            log.warning(
                "inspector %s timed out after %.3fs (decision %s)",
                name,
                link.timeout_seconds,
                context.decision_id,
            )
        self._metrics.inspector_failures.labels(inspector=name, reason=failure).inc()
        return [_on_error(link, failure) for _ in range(count)]

    def _record(
        self,
        inspector: str,
        series: _InspectorSeries,
        elapsed: float,
        results: list[list[Finding]],
    ) -> None:
        series.seconds.observe(elapsed)
        verdicts = series.verdicts
        for found in results:
            if not found:
                series.allowed.value += 1  # inc(), inlined: this runs per call and link
            elif len(found) == 1:
                finding = found[0]
                verdicts[finding.verdict].inc()
                self._finding_counter(inspector, finding.rule_id).inc()
            else:
                verdicts[max(f.verdict for f in found)].inc()
                for finding in found:
                    self._finding_counter(inspector, finding.rule_id).inc()

    def _finding_counter(self, inspector: str, rule_id: str) -> CounterChild:
        key = (inspector, rule_id)
        counter = self._finding_counters.get(key)
        if counter is None:
            counter = self._metrics.findings.labels(inspector=inspector, rule_id=rule_id)
            self._finding_counters[key] = counter
        return counter

    def _series(self, inspector: str) -> _InspectorSeries:
        series = self._series_by_inspector.get(inspector)
        if series is None:
            verdicts = {
                v: self._metrics.inspector_verdicts.labels(inspector=inspector, verdict=v.label)
                for v in Verdict
            }
            series = _InspectorSeries(
                self._metrics.inspector_seconds.labels(inspector=inspector),
                verdicts,
                verdicts[Verdict.ALLOW],
            )
            self._series_by_inspector[inspector] = series
        return series


@dataclass(frozen=True, slots=True)
class _InspectorSeries:
    """Labelled metric children, looked up once instead of on every call."""

    seconds: HistogramChild
    verdicts: dict[Verdict, CounterChild]
    allowed: CounterChild  # verdicts[ALLOW], the one counted on almost every call


class _Resume:
    """Awaitable that continues a coroutine already started by hand."""

    def __init__(self, work: Coroutine[Any, Any, list[list[Finding]]], pending: Any) -> None:
        self._work = work
        self._pending = pending

    def __await__(self) -> Generator[Any, Any, list[list[Finding]]]:
        pending = self._pending
        while True:
            try:
                sent = yield pending
            except BaseException as error:  # cancellation and timeouts go to the inspector
                try:
                    pending = self._work.throw(error)
                except StopIteration as finished:
                    return cast(list[list[Finding]], finished.value)
                continue
            try:
                pending = self._work.send(sent)
            except StopIteration as finished:
                return cast(list[list[Finding]], finished.value)


def _on_error(link: ChainLink, failure: str) -> list[Finding]:
    verdict = _ON_ERROR_VERDICT.get(link.on_error)
    if verdict is None:
        return []
    name = link.inspector.name
    message = f"inspector {name} failed ({failure}); its on_error policy is {link.on_error}"
    return [
        Finding(
            inspector=name,
            verdict=verdict,
            rule_id=f"{name}.{failure}",
            message=message,
            risk=Risk.MEDIUM,
            confidence=0.0,
            approval_prompt=f"The {name} check could not run ({failure}). Allow anyway?",
        )
    ]


_NO_OBJECTION = "no inspector objected"


def _carried_cut() -> Finding:
    why = f"it carries more than {MAX_CARRIED} calls; the rest were not checked"
    return _unchecked("tool.carried_calls_cut", why, "This call")


def _unchecked(rule_id: str, why: str, what: str) -> Finding:
    """What was not looked at cannot be allowed: a person decides."""
    return Finding(
        inspector="security",
        verdict=Verdict.REQUIRE_APPROVAL,
        rule_id=rule_id,
        message=why,
        risk=Risk.HIGH,
        confidence=0.0,
        approval_prompt=f"{what} could not be fully checked ({why}). Allow it?",
    )


def merge(call: ToolCall, findings: list[Finding]) -> CallVerdict:
    """The strictest finding decides; the first inspector to reach it gives the reason."""
    if not findings:
        return CallVerdict(call, Verdict.ALLOW, _NO_OBJECTION, "", findings)
    if len(findings) == 1:  # often just the permission inspector's word
        verdict = findings[0].verdict
        deciding = findings
    else:
        verdict = max(f.verdict for f in findings)
        deciding = [f for f in findings if f.verdict is verdict]
    reason = deciding[0].message
    prompt = ""
    if verdict is Verdict.REQUIRE_APPROVAL:
        prompts = dict.fromkeys(f.approval_prompt or f.message for f in deciding)
        prompt = "\n".join(prompts)
    return CallVerdict(call, verdict, reason, prompt, findings)


def _never_allow_unanalysed(
    verdicts: list[CallVerdict], per_call: list[list[Finding]], cut: dict[int, tuple[str, str]]
) -> None:
    """A command line that was not fully analysed needs approval, whatever the policy
    says about unresolved shell: what was not looked at cannot be allowed."""
    for index, (_, why) in cut.items():
        if verdicts[index].verdict is not Verdict.ALLOW:
            continue
        per_call[index].append(_unchecked("shell.not_analysed", why, "This command line"))
        verdicts[index] = merge(verdicts[index].call, per_call[index])


def _skipped(call: ToolCall) -> CallVerdict:
    message = f"{call.name} was skipped: chat mode runs no tools"
    finding = Finding(
        inspector="permission",
        verdict=Verdict.DENY,
        rule_id="permission.mode_chat",
        message=message,
    )
    return CallVerdict(call, Verdict.DENY, message, "", [finding])

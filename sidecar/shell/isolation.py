"""Shell analysis in a separate process that is killed when it runs past its budget.

Why a process: tree-sitter's error recovery on some broken shapes is super-linear and
runs to the end of the input without calling back (measured: with a progress callback
set to stop at 100 ms, a 16,000-stage dangling pipeline still parsed for 6.2 s and
3.7 GB), and a thread cannot be stopped. A process can: it is killed at its deadline,
its memory is capped with RLIMIT_AS, and whatever it allocated goes back to the
system with it. Only large or operator-heavy lines come here (see limits.py); typical
calls are analysed on the calling thread without any hand-off.

The two sides speak length-prefixed JSON frames over the child's stdin and stdout.
JSON, not pickle: the child parses hostile input, and the parent must never run code
because of what a child sends back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import struct
import sys
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from sidecar.observability.rate_limited_log import RateLimitedLog
from sidecar.shell.walk import (
    AnalysisBudgetExceeded,
    Redirect,
    ShellAnalysis,
    SimpleCommand,
    _Dynamic,
    _split_flags,
    analyse,
)
from sidecar.shell.wrappers import DEFAULT_WRAPPERS, WrapperSpec

_log = RateLimitedLog(logging.getLogger("sidecar.shell.isolation"))

_HEADER = struct.Struct(">I")
_READY = b'{"ready":true}'
DECODE_INLINE_BYTES = 16 * 1024  # larger answers are decoded off the event loop
MAX_FRAME_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class IsolationSettings:
    budget_seconds: float = 0.25  # per command line, in the child
    request_budget_seconds: float = 1.0  # all of one batch's lines, waiting included
    memory_bytes: int = 1024 * 1024 * 1024  # the child's address space (RLIMIT_AS)
    max_commands: int = 4096  # more than this many commands: the rest are not returned
    workers: int = 1


class Outcome:
    """Why an isolated analysis gave no result (the call then needs approval)."""

    TIMEOUT = "the command line took too long to analyse"
    MEMORY = "the command line needed too much memory to analyse"
    BUSY = "the shell analyser was busy for longer than this call's budget"


# Metric labels for the sentences above.
OUTCOME_REASONS = {Outcome.TIMEOUT: "timeout", Outcome.MEMORY: "memory", Outcome.BUSY: "busy"}
TRUNCATED = "the command line holds"  # how the problem of a cut-off command list begins


def truncation(analysis: ShellAnalysis) -> str:
    """The problem saying the analysis holds only the first commands; empty if whole."""
    return next((p for p in analysis.problems if p.startswith(TRUNCATED)), "")


# -- encoding: flat tables, so 16,000 piped commands do not nest 16,000 levels deep ----
# An answer is JSON lines: a head, then the command table in chunks. json.loads is one C
# call that holds the GIL throughout, so each chunk is kept to about a millisecond of
# decoding: the event loop's thread gets its turn between chunks.
_ROWS_PER_LINE = 256


def _word(text: str) -> Any:
    return [text] if type(text) is _Dynamic else text


def _unword(value: Any) -> str:
    return _Dynamic(value[0]) if isinstance(value, list) else str(value)


def encode(analysis: ShellAnalysis, max_commands: int) -> bytes:
    commands = analysis.commands
    problems = list(analysis.problems)
    if len(commands) > max_commands:
        problems.append(
            f"{TRUNCATED} {len(commands)} commands; only the first {max_commands} were analysed"
        )
        commands = commands[:max_commands]
    index: dict[int, int] = {}
    table: list[list[Any]] = []
    for command in commands:
        chain: list[SimpleCommand] = []
        current: SimpleCommand | None = command
        while current is not None and id(current) not in index:
            chain.append(current)
            current = current.input_from
        for item in reversed(chain):  # whatever feeds a command is numbered first
            feed = item.input_from
            # Flags and positionals follow from the words (as the walk splits them);
            # sent only where they do not, and rebuilt otherwise, sharing the words.
            derived = _split_flags(item.args) == (item.flags, item.positionals)
            table.append(
                [
                    item.program,
                    [_word(a) for a in item.args],
                    None if derived else sorted(item.flags),
                    None if derived else [_word(p) for p in item.positionals],
                    [[r.operator, _word(r.target)] for r in item.redirects],
                    index[id(feed)] if feed is not None else -1,
                    list(item.wrappers),
                    item.via,
                ]
            )
            index[id(item)] = len(table) - 1
    head = {
        "commands": [index[id(c)] for c in commands],
        "problems": problems,
        "parse_error": analysis.parse_error,
        "recursive_functions": list(analysis.recursive_functions),
        "definitions": [list(d) for d in analysis.definitions],
    }
    lines = [_json(head)]
    lines += (_json(table[i : i + _ROWS_PER_LINE]) for i in range(0, len(table), _ROWS_PER_LINE))
    return b"\n".join(lines)  # JSON escapes newlines inside strings: a safe separator


def _json(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode("ascii")


def decode(body: bytes) -> ShellAnalysis | str:
    """The analysis, or the Outcome sentence the child sent instead."""
    head, *chunks = body.split(b"\n")
    data = json.loads(head)
    if "failed" in data:
        return str(data["failed"])
    built: list[SimpleCommand] = []
    intern = sys.intern  # names, operators and "via" repeat: one object each
    for chunk in chunks:
        for program, args, flags, positionals, redirects, feed, wrappers, via in json.loads(chunk):
            words = tuple(_unword(a) for a in args)
            if flags is None:
                split = _split_flags(words)
            else:
                split = (frozenset(str(f) for f in flags), tuple(_unword(p) for p in positionals))
            built.append(
                SimpleCommand(
                    intern(str(program)),
                    words,
                    split[0],
                    split[1],
                    tuple(Redirect(intern(str(op)), _unword(t)) for op, t in redirects),
                    built[feed] if feed >= 0 else None,
                    tuple(intern(str(w)) for w in wrappers),
                    intern(str(via)),
                )
            )
    return ShellAnalysis(
        tuple(built[i] for i in data["commands"]),
        tuple(str(p) for p in data["problems"]),
        bool(data["parse_error"]),
        tuple(str(f) for f in data["recursive_functions"]),
        tuple((str(n), str(t)) for n, t in data.get("definitions", ())),
    )


def wrappers_with(extra: tuple[str, ...]) -> Mapping[str, WrapperSpec]:
    if not extra:
        return DEFAULT_WRAPPERS
    return {**DEFAULT_WRAPPERS, **{w: WrapperSpec() for w in extra}}


# -- the child ---------------------------------------------------------------------


def serve(memory_bytes: int) -> None:
    """The child's main loop: one request in, one answer out, until stdin closes."""
    import resource
    import signal

    from sidecar.memory import die_with_parent, release_freed_memory

    # The parent decides when this process ends (it closes stdin or kills it): a Ctrl-C
    # sent to the whole process group must not interrupt an answer half-written.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    die_with_parent()
    # Background work: on a busy node the sidecar's event loop (health checks, every
    # other call) should get the CPU before a hostile command line does.
    os.nice(10)
    # In a container near its memory limit, the kernel should kill this process, never
    # the sidecar: raising one's own OOM score needs no privilege.
    with (
        contextlib.suppress(OSError),
        open("/proc/self/oom_score_adj", "w", encoding="ascii") as score,
    ):
        score.write("1000")
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    stdout.write(_HEADER.pack(len(_READY)) + _READY)  # imports done: calls wait no more
    stdout.flush()
    wrapper_sets: dict[tuple[str, ...], Mapping[str, WrapperSpec]] = {}
    while True:
        header = stdin.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        request = json.loads(stdin.read(_HEADER.unpack(header)[0]))
        extra = tuple(request["wrappers"])
        wrappers = wrapper_sets.setdefault(extra, wrappers_with(extra))
        try:
            analysis = analyse(request["line"], wrappers, float(request["budget"]))
            body = encode(analysis, int(request["max_commands"]))
        except AnalysisBudgetExceeded:
            body = _json({"failed": Outcome.TIMEOUT})
        except MemoryError:
            body = _json({"failed": Outcome.MEMORY})
        stdout.write(_HEADER.pack(len(body)) + body)
        stdout.flush()
        del body
        release_freed_memory()


# -- the parent --------------------------------------------------------------------


class _Worker:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def ask(self, request: dict[str, Any]) -> bytes:
        stdin = self.process.stdin
        assert stdin is not None
        body = json.dumps(request, separators=(",", ":")).encode("ascii")
        stdin.write(_HEADER.pack(len(body)) + body)
        await stdin.drain()
        return await self.read()

    async def read(self) -> bytes:
        stdout = self.process.stdout
        assert stdout is not None
        header = await stdout.readexactly(_HEADER.size)
        size = _HEADER.unpack(header)[0]
        if size > MAX_FRAME_BYTES:
            raise ValueError(f"answer of {size} bytes")
        return await stdout.readexactly(size)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()


class IsolatedAnalyser:
    """A small pool of analysis processes, started with the server.

    A worker that runs past its deadline or dies (its memory cap) is killed and a
    fresh one is started in the background; calls waiting meanwhile count that wait
    against their own deadline.
    """

    def __init__(
        self,
        settings: IsolationSettings | None = None,
        decode_in: Executor | None = None,
        on_restart: Callable[[str], None] | None = None,
    ) -> None:
        """decode_in: threads that turn large answers back into objects (tens of ms
        for thousands of commands), so the event loop does not. on_restart: told why a
        worker was replaced ("timeout" or "died"), for a metric."""
        self.settings = settings or IsolationSettings()
        self._decode_in = decode_in
        self._on_restart = on_restart
        self._idle: asyncio.Queue[_Worker] | None = None
        self._workers: set[_Worker] = set()  # idle or busy
        self._starting: set[asyncio.Task[None]] = set()
        self._closed = False
        self.kills = 0  # workers killed at their deadline or lost (read by tests and metrics)

    async def start(self) -> None:
        if self._idle is not None:
            return
        self._idle = asyncio.Queue()
        for _ in range(self.settings.workers):
            await self._spawn()

    async def _spawn(self) -> None:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "sidecar.shell.isolation",
            str(self.settings.memory_bytes),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            # tree-sitter reports a failed allocation on stderr before it aborts: once
            # per hostile line. The parent logs one rate-limited line instead.
            stderr=asyncio.subprocess.DEVNULL,
            limit=MAX_FRAME_BYTES,
        )
        worker = _Worker(process)
        self._workers.add(worker)
        try:
            async with asyncio.timeout(30):
                ready = json.loads(await worker.read())
        except (TimeoutError, asyncio.IncompleteReadError, ValueError):
            ready = {}
        if self._closed or not ready.get("ready"):
            self._workers.discard(worker)
            worker.kill()
            await process.wait()
            if not self._closed:
                raise OSError("the shell analysis worker did not start")
            return
        assert self._idle is not None
        self._idle.put_nowait(worker)

    def _replace(self, worker: _Worker, reason: str) -> None:
        worker.kill()
        self._workers.discard(worker)
        self.kills += 1
        _log.warning(reason, "shell analysis worker replaced (%s)", reason)
        if self._on_restart is not None:
            self._on_restart(reason)
        task = asyncio.get_running_loop().create_task(self._respawn(worker))
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)

    async def _respawn(self, worker: _Worker) -> None:
        await worker.process.wait()  # reap it
        if not self._closed:
            try:
                await self._spawn()
            except OSError as error:
                _log.warning("spawn", "cannot start a shell analysis worker: %s", error)

    async def analyse(
        self, line: str, extra_wrappers: tuple[str, ...], deadline: float
    ) -> ShellAnalysis | str:
        """The analysis, or the Outcome sentence saying why there is none.

        deadline: time.perf_counter() value by which the caller needs an answer.
        """
        await self.start()
        assert self._idle is not None
        try:
            async with asyncio.timeout(max(deadline - time.perf_counter(), 0.0)):
                worker = await self._idle.get()
        except TimeoutError:
            return Outcome.BUSY
        budget = min(self.settings.budget_seconds, max(deadline - time.perf_counter(), 0.001))
        request = {
            "line": line,
            "wrappers": list(extra_wrappers),
            "budget": budget,
            "max_commands": self.settings.max_commands,
        }
        try:
            # The child stops itself at its budget; the margin covers the time to
            # answer. A parse that never calls back is what the kill is for.
            async with asyncio.timeout(budget + 0.1):
                answer = await worker.ask(request)
        except TimeoutError:
            self._replace(worker, "timeout")
            return Outcome.TIMEOUT
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            # The child died: over its memory cap (tree-sitter aborts when malloc fails).
            self._replace(worker, "died")
            return Outcome.MEMORY
        except BaseException:
            # Cancelled mid-request: its answer would be out of step with the next question.
            self._replace(worker, "cancelled")
            raise
        self._idle.put_nowait(worker)
        if len(answer) > DECODE_INLINE_BYTES and self._decode_in is not None:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._decode_in, decode, answer)
        return decode(answer)

    async def close(self) -> None:
        self._closed = True
        for task in list(self._starting):
            task.cancel()
        for worker in list(self._workers):
            stdin = worker.process.stdin
            if stdin is not None:
                stdin.close()  # the child exits at end of input
            try:
                async with asyncio.timeout(1.0):
                    await worker.process.wait()
            except TimeoutError:
                worker.kill()  # busy with a parse that never calls back
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(1.0):
                        await worker.process.wait()
        self._workers.clear()


if __name__ == "__main__":
    serve(int(sys.argv[1]))

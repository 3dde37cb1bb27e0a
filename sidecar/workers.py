"""More than one core: `--workers N` runs N server processes on the same address.

Python runs one thread of Python at a time per process, so one process uses one core and
one CPU-heavy call holds up every call behind it. The supervisor (this process) starts N
workers, each a whole sidecar; they listen on the same TCP addresses with SO_REUSEPORT and
the kernel spreads connections over them. What the workers share lives in the store: a
PostgreSQL database, or the SQLite file in WAL mode with busy timeouts (each worker then
keeps no copy of shared facts in memory).

- Unix sockets cannot be shared that way: a `unix:` address is served by worker 0 alone
  (so at least one TCP address is needed).
- Metrics: each worker serves its own registry on a private Unix socket; the supervisor
  serves /metrics on `metrics_listen`, merging them: counters and histograms are summed
  (one series, as one process would show), gauges get a `worker` label (each worker's
  value: policy revision, cache bytes, store up).
- Policy reload: every worker watches the policy directories itself; SIGHUP to the
  supervisor is passed on to every worker.
- A worker that exits is started again (counted); SIGTERM drains every worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import Collector

from sidecar.config import Settings
from sidecar.observability.metrics import WorkerMetrics
from sidecar.observability.metrics_http import MetricsHTTP

log = logging.getLogger("sidecar.workers")

SCRAPE_TIMEOUT_SECONDS = 2.0
# A worker that exits this soon after its start, this many times in a row, is not started
# again: it cannot start at all (an address in use, a state it cannot open).
FAST_EXIT_SECONDS = 10.0
FAST_EXITS = 3


def _free_port(host: str) -> int:
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    with socket.socket(family) as probe:
        probe.bind((host.strip("[]"), 0))
        return int(probe.getsockname()[1])


def resolve_ports(settings: Settings) -> Settings:
    """Port 0 means "any free port": the supervisor picks it once, so that every worker
    listens on the same one."""

    def resolve(address: str) -> str:
        if address.startswith("unix:") or address == "off":
            return address
        host, _, port = address.rpartition(":")
        return f"{host}:{_free_port(host)}" if port == "0" else address

    return settings.model_copy(
        update={
            "listen": tuple(resolve(a) for a in settings.listen),
            "health_listen": resolve(settings.health_listen),
        }
    )


def worker_settings(settings: Settings, index: int) -> Settings:
    listen = tuple(a for a in settings.listen if index == 0 or not a.startswith("unix:"))
    return settings.model_copy(update={"listen": listen, "metrics_listen": "off"})


# -- merging the workers' metrics ----------------------------------------------------------


def merge(texts: dict[str, str]) -> Iterator[Metric]:
    """Workers' expositions (by worker name) as one: sums, or per-worker gauges."""
    merged: dict[str, Metric] = {}
    sums: dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], float]] = {}
    for worker, text in texts.items():
        for family in text_string_to_metric_families(text):
            metric = merged.get(family.name)
            if metric is None:
                metric = merged[family.name] = Metric(
                    family.name, family.documentation, family.type, family.unit
                )
                sums[family.name] = {}
            values = sums[family.name]
            for sample in family.samples:
                labels = dict(sample.labels)
                if family.type == "gauge":
                    labels["worker"] = worker
                key = (sample.name, tuple(sorted(labels.items())))
                if family.type == "info":
                    values[key] = sample.value  # the same in every worker
                elif sample.name.endswith("_created"):
                    values[key] = min(values.get(key, sample.value), sample.value)
                else:
                    values[key] = values.get(key, 0.0) + sample.value
    for name, metric in merged.items():
        for (sample_name, pairs), value in sums[name].items():
            metric.add_sample(sample_name, dict(pairs), value)
        yield metric


class WorkersCollector(Collector):
    """Reads every worker's metrics when Prometheus scrapes the supervisor."""

    def __init__(self, sockets: dict[str, Path], metrics: WorkerMetrics) -> None:
        self._sockets = sockets
        self._metrics = metrics

    def collect(self) -> Iterator[Metric]:
        texts: dict[str, str] = {}
        for worker, path in self._sockets.items():
            try:
                texts[worker] = _read(path)
            except OSError:
                self._metrics.scrape_failures.labels(worker=worker).inc()
        yield from merge(texts)


def _read(path: Path) -> str:
    with socket.socket(socket.AF_UNIX) as connection:
        connection.settimeout(SCRAPE_TIMEOUT_SECONDS)
        connection.connect(str(path))
        chunks = []
        while chunk := connection.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8")


async def serve_worker_metrics(registry: CollectorRegistry, path: Path) -> asyncio.AbstractServer:
    """A worker's registry in the text format, to whoever connects (the supervisor).
    Rendered on the event loop, the only thread that updates the hot series."""

    async def answer(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            writer.write(generate_latest(registry))
            await writer.drain()
        finally:
            writer.close()

    server = await asyncio.start_unix_server(answer, str(path))
    os.chmod(path, 0o600)  # the directory is the supervisor's (0700) anyway
    return server


# -- the supervisor ------------------------------------------------------------------------


class Supervisor:
    def __init__(self, settings: Settings) -> None:
        self.settings = resolve_ports(settings)
        self.count = settings.worker_count
        self.directory = Path(tempfile.mkdtemp(prefix="sidecar-workers-"))
        self.directory.chmod(0o700)
        self.registry = CollectorRegistry()
        self.metrics = WorkerMetrics(self.registry)
        self.sockets = {str(i): self.directory / f"worker-{i}.metrics" for i in range(self.count)}
        self.registry.register(WorkersCollector(self.sockets, self.metrics))
        self.processes: dict[int, subprocess.Popen[bytes]] = {}
        self._started: dict[int, float] = {}
        self._fast_exits: dict[int, int] = {}
        self.metrics.workers.labels(state="expected").set(self.count)
        self.metrics.workers.labels(state="running").set_function(
            lambda: sum(p.poll() is None for p in self.processes.values())
        )

    def _start(self, index: int) -> None:
        settings = worker_settings(self.settings, index)
        process = subprocess.Popen(
            [sys.executable, "-m", "sidecar.workers", str(index), str(self.sockets[str(index)])],
            stdin=subprocess.PIPE,
        )
        assert process.stdin is not None
        # Settings go by a pipe: a DSN with a password stays out of argv and the environment.
        process.stdin.write(settings.model_dump_json().encode("utf-8"))
        process.stdin.close()
        self.processes[index] = process
        self._started[index] = time.monotonic()

    def _signal_all(self, signum: int) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.send_signal(signum)

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        loop.add_signal_handler(signal.SIGHUP, lambda: self._signal_all(signal.SIGHUP))
        metrics_http = None
        if self.settings.metrics_listen != "off":
            host, _, port = self.settings.metrics_listen.rpartition(":")
            try:
                metrics_http = MetricsHTTP(host.strip("[]"), int(port), self.registry)
            except OSError as error:
                print(
                    f"sidecar: cannot serve metrics on {self.settings.metrics_listen}: "
                    f"{error.strerror}",
                    file=sys.stderr,
                )
                return 1
        for index in range(self.count):
            self._start(index)
        log.info(
            "%d workers on %s; metrics %s",
            self.count,
            ", ".join(self.settings.listen),
            self.settings.metrics_listen,
        )
        code = 0
        try:
            while not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.2)
                if stop.is_set():
                    break
                if not self._keep_running():
                    code = 1
                    break
        finally:
            self._signal_all(signal.SIGTERM)
            deadline = time.monotonic() + self.settings.grace_seconds + 10
            for process in self.processes.values():
                try:
                    process.wait(max(deadline - time.monotonic(), 0.1))
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            if metrics_http is not None:
                metrics_http.close()
            for path in self.sockets.values():
                path.unlink(missing_ok=True)
            self.directory.rmdir()
        return code

    def _keep_running(self) -> bool:
        """Start exited workers again; False when one cannot start at all."""
        for index, process in list(self.processes.items()):
            status = process.poll()
            if status is None:
                continue
            lived = time.monotonic() - self._started[index]
            fast = self._fast_exits.get(index, 0) + 1 if lived < FAST_EXIT_SECONDS else 0
            self._fast_exits[index] = fast
            if fast >= FAST_EXITS:
                log.error("worker %d cannot start (exit status %s); stopping", index, status)
                return False
            log.warning("worker %d exited (status %s); starting it again", index, status)
            self.metrics.restarts.inc()
            self._start(index)
        return True


async def run_supervisor(settings: Settings) -> int:
    return await Supervisor(settings).run()


# -- a worker --------------------------------------------------------------------------------


async def _run_worker(settings: Settings, index: int, metrics_socket: Path) -> int:
    from sidecar.server import ListenError, Sidecar, serve_until_signalled
    from sidecar.store.errors import StateError

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    sidecar = Sidecar(settings, owns_process=True)
    loop.add_signal_handler(signal.SIGHUP, sidecar.request_reload)
    metrics_server = await serve_worker_metrics(sidecar.metrics.registry, metrics_socket)
    try:
        await serve_until_signalled(sidecar, stop)
    except (ListenError, StateError, OSError) as error:
        print(f"sidecar worker {index}: {error}", file=sys.stderr)
        return 1
    finally:
        metrics_server.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(metrics_socket)
    return 0


def worker_main(argv: list[str]) -> int:
    from sidecar.observability.logs import configure_logging
    from sidecar.secrets import SecretScanner

    index, metrics_socket = int(argv[0]), Path(argv[1])
    settings = Settings.model_validate_json(sys.stdin.buffer.read())
    configure_logging(settings.log_level, settings.log_format, secrets=SecretScanner())
    os.environ["SIDECAR_WORKER"] = str(index)
    return asyncio.run(_run_worker(settings, index, metrics_socket))


if __name__ == "__main__":
    sys.exit(worker_main(sys.argv[1:]))

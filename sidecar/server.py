"""Assemble the sidecar's parts and run the grpc.aio server: services, health, reflection,
policy reload and shadow evaluation."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from sidecar.config import Settings
from sidecar.context.manager import ContextManager
from sidecar.context.store import SqlSessionStore
from sidecar.effects.analyser import CODE_PREFIX
from sidecar.effects.own_endpoints import DEFAULT_PORTS, OwnEndpoints
from sidecar.engine import ActivePolicy, EngineParts, PolicyEngine
from sidecar.integrity.monitor import InjectionMonitor
from sidecar.memory import settle_long_lived_objects
from sidecar.observability.decision_log import DecisionLog
from sidecar.observability.interceptors import MetricsInterceptor
from sidecar.observability.metrics import Metrics
from sidecar.observability.metrics_http import MetricsHTTP
from sidecar.policy.loader import bundled_policy_dir
from sidecar.policy.reloader import PolicyReloader, ReloadOutcome
from sidecar.policy.schema import MAX_TOOL_CALLS, ContextPolicy
from sidecar.policy.shadow import ShadowEvaluator
from sidecar.secrets import SecretScanner
from sidecar.service.approval_auth import ApprovalGate, read_token
from sidecar.service.context_service import (
    MAX_MESSAGES_PER_CALL,
    MAX_PARTS_PER_CALL,
    ContextService,
    add_context_service,
)
from sidecar.service.drain import DrainGate
from sidecar.service.errors import EdgeGuard
from sidecar.service.policy_service import (
    MAX_RECENT_OUTPUTS,
    MAX_RECENT_USER_MESSAGES,
    MAX_TOOLS,
    PolicyService,
    SlotStatus,
    StatusReport,
)
from sidecar.service.preflight import Preflight
from sidecar.shell.isolation import IsolatedAnalyser, IsolationSettings
from sidecar.state.approvals import ApprovalStore
from sidecar.state.injection_taint import SessionTaint
from sidecar.state.tool_registry import ToolRegistry
from sidecar.store.dsn import is_postgres
from sidecar.store.errors import StateError, StoreUnavailable
from sidecar.store.open import StoreHealth, open_store
from sidecar.store.postgres import PostgresStore
from sidecar.store.sqlite import SqliteStore
from sidecar.store.states import SessionStates, WithIntegrity
from sidecar.v1 import sidecar_pb2, sidecar_pb2_grpc

log = logging.getLogger("sidecar.server")

POLICY_SERVICE = sidecar_pb2.DESCRIPTOR.services_by_name["PolicyService"].full_name
CONTEXT_SERVICE = sidecar_pb2.DESCRIPTOR.services_by_name["ContextService"].full_name
OVERALL = ""  # the health service's name for the whole server
# Health entry that reports the last reload: NOT_SERVING while a rejected policy
# sits on disk (the last good one still serves, so the overall status stays SERVING).
POLICY_RELOAD = "sidecar.policy"
# Health entry of the state store: NOT_SERVING while it cannot be reached (at start the
# whole server waits for it; while serving, Inspect fails closed and context calls answer
# UNAVAILABLE, and the server log says why).
STATE = "sidecar.state"
ALL_SERVICES = (OVERALL, POLICY_SERVICE, CONTEXT_SERVICE, POLICY_RELOAD, STATE)
SERVICES = (OVERALL, POLICY_SERVICE, CONTEXT_SERVICE, POLICY_RELOAD)
PRUNE_EVERY_SECONDS = 60.0
FLUSH_EVERY_SECONDS = 1.0
# On shutdown, grpc is stopped once no call has reached the drain gate for this long:
# grpc cancels calls it has taken but not yet handed over, so they are let through first.
DRAIN_QUIET_SECONDS = 0.2
# ...unless clients keep retrying at once: refusing them this long after the last call in
# progress finished is enough.
DRAIN_REFUSING_AT_MOST = 2.0
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


class ListenError(Exception):
    """An address could not be bound; the message names it."""


def policy_directories(settings: Settings, extra: tuple[Path, ...] | None = None) -> list[Path]:
    bundled = [bundled_policy_dir()] if settings.bundled_policies else []
    return bundled + list(settings.policies if extra is None else extra)


@dataclass
class Sidecar:
    """One running sidecar. Build with `Sidecar(settings)`, then `await start()`."""

    settings: Settings
    metrics: Metrics = field(default_factory=Metrics)
    addresses: list[str] = field(default_factory=list)
    metrics_port: int | None = None
    metrics_address: str | None = None
    health_address: str | None = None
    engine: PolicyEngine | None = None
    reloader: PolicyReloader | None = None
    shadow: ShadowEvaluator | None = None
    shadow_reloader: PolicyReloader | None = None
    _server: grpc.aio.Server | None = None
    _health_server: grpc.aio.Server | None = None
    _health: health.aio.HealthServicer | None = None
    store: SqliteStore | PostgresStore | None = None
    store_health: StoreHealth | None = None
    _shadow_store: SqliteStore | None = None
    _deferred: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    _metrics_http: MetricsHTTP | None = None
    _decision_log: DecisionLog | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)
    context: ContextManager | None = None
    approvals: ApprovalStore | None = None
    isolated: IsolatedAnalyser | None = None
    # The process is this sidecar's alone (`sidecar serve` and its workers): it may set
    # process-wide collector state. Embedded in tests or benches, it leaves that alone.
    owns_process: bool = False
    _offload: ThreadPoolExecutor | None = None
    _gate: DrainGate | None = None
    injection: InjectionMonitor | None = None
    tools: ToolRegistry | None = None

    async def start(self) -> None:
        settings = self.settings
        gate = ApprovalGate(
            read_token(settings.approval_token_file) if settings.approval_token_file else None
        )
        if not gate.required:
            log.warning(
                "no approval credential is configured (approval_token_file): any client that "
                "reaches this server, the agent included, can answer approval prompts"
            )
        store = self.store = open_store(
            settings.state,
            self.metrics,
            settings.state_password_file,
            settings.worker_count,
            settings.state_pool_size,
            settings.state_timeout_seconds,
        )
        self._gate = DrainGate((POLICY_SERVICE, CONTEXT_SERVICE))
        self.approvals = ApprovalStore(
            store.database,
            question_ttl_seconds=settings.approval_question_ttl_seconds,
            once_ttl_seconds=settings.approval_once_ttl_seconds,
            max_questions=settings.approval_max_questions,
            changed=store.changed,
        )
        secrets = SecretScanner()
        # Heavy batches run their local inspectors here, off the event loop. Two threads:
        # more would only take turns at the GIL with the loop that answers health checks.
        sys.setswitchinterval(0.001)
        self._offload = ThreadPoolExecutor(max_workers=2, thread_name_prefix="sidecar-inspect")
        if settings.analysis_workers:
            self.isolated = IsolatedAnalyser(
                IsolationSettings(
                    budget_seconds=settings.analysis_budget_ms / 1000,
                    # A batch may hold 50 calls; four lines' worth bounds the whole.
                    request_budget_seconds=max(1.0, 4 * settings.analysis_budget_ms / 1000),
                    memory_bytes=settings.analysis_memory_mb * 1024 * 1024,
                    workers=settings.analysis_workers,
                ),
                decode_in=self._offload,
                on_restart=lambda reason: self.metrics.analysis_worker_restarts.labels(
                    reason=reason
                ).inc(),
            )
            await self.isolated.start()
        self.own_endpoints = _own_endpoints(settings)

        def changed(session_id: str) -> None:
            """A session's registered tools or taint were written: copies read them again."""
            store.changed(session_id)
            states.changed(session_id)

        tools = self.tools = ToolRegistry(store.database, changed)
        untrusted = SessionTaint(store.database, changed)
        if isinstance(store, SqliteStore):
            await untrusted.open()  # the file is open; PostgreSQL's shared store skips it
        states = SessionStates(store, settings.approval_once_ttl_seconds, registry=tools)
        parts = EngineParts(
            self.metrics,
            states,
            secrets,
            own_paths=_own_paths(settings),
            own_endpoints=self.own_endpoints,
            isolated=self.isolated,
            offload=self._offload,
            state_unavailable=settings.state_unavailable,
        )
        self._decision_log = DecisionLog(settings.decision_log, secrets, self.metrics)
        self.engine = PolicyEngine(parts, self._decision_log)
        engine = self.engine
        injection = self.injection = InjectionMonitor(
            untrusted, self.metrics, lambda: engine.active.integrity if engine.ready else None
        )
        self.reloader = PolicyReloader(
            policy_directories(settings),
            parts,
            self.metrics,
            settings.permission_mode,
            self._install,
            self._reload_health,
        )

        server = grpc.aio.server(
            # Inside the metrics, so what the gate and the guard answer is counted as such.
            interceptors=[MetricsInterceptor(self.metrics), self._gate, EdgeGuard(_preflight())],
            options=[
                ("grpc.max_receive_message_length", settings.max_message_bytes),
                ("grpc.max_send_message_length", settings.max_message_bytes),
                # Workers share the address (the kernel spreads connections over them).
                ("grpc.so_reuseport", 1 if settings.worker_count > 1 else 0),
                # A connection stays with the worker that took it; ageing connections
                # out makes clients reconnect, and so spreads them again (after a
                # worker restarts, say). Clients reconnect by themselves on GOAWAY.
                *([("grpc.max_connection_age_ms", 60_000)] if settings.worker_count > 1 else []),
            ],
        )

        def context_policy() -> ContextPolicy:
            # Before the first policy loads, context calls are UNAVAILABLE (nothing stored).
            if not engine.ready:
                raise StoreUnavailable("not ready yet: the policy is still loading")
            return engine.active.policy.context

        self.context = ContextManager(
            SqlSessionStore(store.database, store.delete_sessions),
            context_policy,
            self.metrics,
            cache_bytes=settings.context_cache_mib * 1024 * 1024,
        )
        self.context.on_deleted(injection.forget)
        self._health = health.aio.HealthServicer()
        await self._set_health(NOT_SERVING, *ALL_SERVICES)
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        sidecar_pb2_grpc.add_PolicyServiceServicer_to_server(
            PolicyService(
                self.engine,
                self.approvals,
                self.metrics,
                self.status,
                secrets,
                gate,
                tools=tools,
                injection=injection,
            ),
            server,
        )
        add_context_service(
            ContextService(
                self.context,
                self.metrics,
                settings.context_cache_mib * 1024 * 1024,
                gate if gate.required else None,
                injection=injection,
            ),
            server,
        )
        reflection.enable_server_reflection(
            (POLICY_SERVICE, CONTEXT_SERVICE, health.SERVICE_NAME, reflection.SERVICE_NAME), server
        )
        self._server = server
        # One of several workers binds its addresses only once it can serve (grpc listens
        # as it binds): the kernel hands connections to listening sockets alone, so its
        # siblings take them meanwhile.
        if settings.worker_count > 1:
            self._deferred.append(self._listen)
        else:
            await self._listen()
        if settings.metrics_listen != "off":
            host, _, port_text = settings.metrics_listen.rpartition(":")
            try:
                self._metrics_http = MetricsHTTP(
                    host.strip("[]"), int(port_text), self.metrics.registry
                )
            except OSError as error:
                await self.stop(grace=0)
                raise ListenError(
                    f"cannot serve metrics on {settings.metrics_listen}: {error.strerror}"
                ) from None
            self.metrics_port = self._metrics_http.port
            self.metrics_address = f"{host}:{self.metrics_port}"
        if settings.health_listen != "off":
            if settings.worker_count > 1:
                self._deferred.append(lambda: self._start_health_server(settings.health_listen))
            else:
                await self._start_health_server(settings.health_listen)
        try:
            # Off the event loop: health and other RPCs keep answering meanwhile.
            active = await asyncio.to_thread(self.reloader.compile)
        except BaseException:
            await self.stop(grace=0)
            raise
        await self._install(active)
        await self._start_shadow(parts)
        if settings.policy_watch_seconds > 0:
            for reloader in (self.reloader, self.shadow_reloader):
                if reloader is not None:
                    self._spawn(reloader.watch(settings.policy_watch_seconds))
        self.store_health = StoreHealth(
            store.database, store.describe, self.metrics, self._state_health
        )
        try:
            await store.open()
        except StoreUnavailable as error:
            # Keep answering health checks (NOT_SERVING, and why in the log); retry.
            log.warning("state store %s cannot be reached yet: %s", store.describe, error)
            self._spawn(self._open_store_later())
        except StateError:
            await self.stop(grace=0)
            raise
        else:
            await self._store_opened()
        metrics = f"http://{self.metrics_address}/metrics" if self.metrics_address else "off"
        log.info(
            "serving on %s; metrics %s; health-only %s; policy revision %s, mode %s",
            ", ".join(self.addresses),
            metrics,
            self.health_address or "off",
            active.revision,
            active.mode.name.lower(),
            extra={
                "fields": {
                    "grpc_addresses": self.addresses,
                    "metrics_address": self.metrics_address,
                    "health_address": self.health_address,
                    "policy_revision": active.revision,
                }
            },
        )

    async def _listen(self) -> None:
        assert self._server is not None
        server = self._server
        credentials = self._credentials()
        for address in self.settings.listen:
            try:
                if address.startswith("unix:") or credentials is None:
                    port = server.add_insecure_port(address)
                else:
                    port = server.add_secure_port(address, credentials)
            except RuntimeError:
                self._server = None  # never started: nothing to stop
                await self.stop(grace=0)
                raise ListenError(
                    f"cannot listen on {address} (in use, or not permitted)"
                ) from None
            self.addresses.append(_bound(address, port))
            if not address.startswith("unix:"):
                self.own_endpoints.add_ports([port])
        await server.start()

    async def _open_store_later(self) -> None:
        """Retry with backoff until the store opens; the server stays NOT_SERVING."""
        assert self.store is not None
        delay = 0.5
        while True:
            await asyncio.sleep(delay)
            try:
                await self.store.open()
            except StoreUnavailable as error:
                delay = min(delay * 2, 30.0)
                log.warning(
                    "state store %s cannot be reached yet: %s; next try in %.0fs",
                    self.store.describe, error, delay,
                )  # fmt: skip
                continue
            except StateError as error:
                delay = 30.0
                log.error("state store %s cannot be used: %s", self.store.describe, error)
                continue
            try:
                await self._store_opened()
            except ListenError as error:
                # A worker that cannot bind stops; its supervisor starts it again.
                log.error("%s", error)
                os.kill(os.getpid(), signal.SIGTERM)
            return

    async def _store_opened(self) -> None:
        """The store answers: serve, expire idle sessions, prune what expired."""
        assert self.store is not None and self.store_health is not None
        assert self.context is not None
        await self.store_health.opened()
        while self._deferred:
            await self._deferred.pop(0)()
        self._spawn(self.context.expire_idle_sessions())  # context.retention in the policy
        self._spawn(self._prune())
        self._spawn(self._flush())
        await self._set_health(SERVING, *SERVICES)
        log.info("state store %s (%s) is open", self.store.describe, self.store.engine)

    async def _state_health(self, up: bool) -> None:
        if self._health is not None:
            await self._set_health(SERVING if up else NOT_SERVING, STATE)

    async def _flush(self) -> None:
        """What the SQLite store's copy holds ahead of its file, every second."""
        assert self.store is not None
        while True:
            await asyncio.sleep(FLUSH_EVERY_SECONDS)
            try:
                await self.store.flush()
            except StoreUnavailable:
                pass  # reported by the store's health; tried again next time
            except Exception:
                log.exception("writing streaks to the state store failed; will try again")

    async def _prune(self) -> None:
        """Expired questions and once answers, old repetition streaks: every minute."""
        assert self.store is not None and self.approvals is not None
        while True:
            await asyncio.sleep(PRUNE_EVERY_SECONDS)
            try:
                await self.approvals.prune()
                await self.store.prune()
                if self._shadow_store is not None:
                    await self._shadow_store.prune()
            except StoreUnavailable:
                pass  # reported by the store's health; tried again next time
            except Exception:
                log.exception("pruning the state store failed; will try again")

    async def _start_health_server(self, address: str) -> None:
        """grpc.health.v1 alone, in plaintext, for kubelet probes. The API itself may listen
        on loopback only (sidecar mode) or need TLS, and a kubelet gRPC probe can reach
        neither; this port answers health checks and nothing else."""
        assert self._health is not None
        reuse = 1 if self.settings.worker_count > 1 else 0  # every worker answers probes
        server = grpc.aio.server(options=[("grpc.so_reuseport", reuse)])
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        try:
            port = server.add_insecure_port(address)
        except RuntimeError:
            await self.stop(grace=0)
            raise ListenError(
                f"cannot serve health checks on {address} (in use, or not permitted)"
            ) from None
        await server.start()
        self._health_server = server
        self.health_address = _bound(address, port)

    async def _start_shadow(self, parts: EngineParts) -> None:
        if not self.settings.shadow_policies:
            return
        # Own trackers and an unexported registry: the candidate must not change
        # what the active policy sees, nor mix into its per-inspector series.
        # Its own in-memory store: its streaks, taint and flow facts come from the same
        # calls; people's answers are not in it (an answered re-Inspect may disagree).
        self._shadow_store = SqliteStore(":memory:")
        shadow_parts = EngineParts(
            Metrics(),
            # Its own streaks and facts; the tools and taint the store knows.
            SessionStates(
                WithIntegrity(self._shadow_store, parts.states.store),
                registry=parts.states.registry,
            ),
            parts.secrets,
            own_paths=parts.own_paths,
            own_endpoints=parts.own_endpoints,
            isolated=parts.isolated,
            offload=parts.offload,
        )
        self.shadow = ShadowEvaluator(shadow_parts, self.metrics)
        self.shadow_reloader = PolicyReloader(
            policy_directories(self.settings, self.settings.shadow_policies),
            shadow_parts,
            self.metrics,
            self.settings.permission_mode,
            self._install_shadow,
            self._shadow_outcome,
            slot="shadow",
        )
        await self.shadow_reloader.reload("startup")
        assert self.engine is not None
        self.engine.shadow = self.shadow

    async def _install(self, active: ActivePolicy) -> None:
        assert self.engine is not None
        previous = self.engine.active if self.engine.ready else None
        self.engine.replace(active)  # atomic: calls in flight keep their policy
        if previous is None:
            if self.owns_process:
                gc.freeze()  # see settle_long_lived_objects; nothing to retire yet
        else:
            # Give calls that started on the old policy time to finish first.
            self._spawn(_close_later(previous, 30.0, settle=self.owns_process))

    async def _install_shadow(self, candidate: ActivePolicy) -> None:
        assert self.shadow is not None
        await self.shadow.install(candidate)
        self.metrics.set_shadow_revision(candidate.revision)

    async def _reload_health(self, outcome: ReloadOutcome) -> None:
        if self._health is not None and self.engine is not None and self.engine.ready:
            await self._set_health(SERVING if outcome.ok else NOT_SERVING, POLICY_RELOAD)

    async def _shadow_outcome(self, outcome: ReloadOutcome) -> None:
        return None  # reported through GetStatus and the log

    def request_reload(self, reason: str = "SIGHUP") -> None:
        """Reload every slot from disk (the SIGHUP handler)."""
        for reloader in (self.reloader, self.shadow_reloader):
            if reloader is not None:
                self._spawn(_ignore_result(reloader.reload(reason)))

    def _spawn(self, work: Coroutine[object, object, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def status(self) -> StatusReport:
        assert self.engine is not None and self.reloader is not None
        active = self.engine.active
        shadow = None
        if self.shadow is not None and self.shadow.candidate is not None:
            candidate = self.shadow.candidate
            shadow = SlotStatus(candidate.revision, candidate.loaded.sources, candidate.loaded_at)
        return StatusReport(
            active=SlotStatus(active.revision, active.loaded.sources, active.loaded_at),
            last_reload=self.reloader.last,
            shadow=shadow,
            last_shadow_reload=self.shadow_reloader.last if self.shadow_reloader else None,
        )

    async def stop(self, grace: float | None = None) -> None:
        """NOT_SERVING first, so load balancers stop sending; new calls get UNAVAILABLE;
        calls in progress finish within the grace period; then the server stops."""
        grace = self.settings.grace_seconds if grace is None else grace
        for task in list(self._tasks):
            task.cancel()
        if self._health is not None:
            await self._health.enter_graceful_shutdown()
        if self._gate is not None:
            self._gate.close()
            started = time.monotonic()
            settled = await self._gate.settled(DRAIN_QUIET_SECONDS, grace, DRAIN_REFUSING_AT_MOST)
            if not settled and self._gate.in_progress:
                log.warning(
                    "%d calls still running after the %ss grace period; cancelling them",
                    self._gate.in_progress,
                    grace,
                )
            grace = max(grace - (time.monotonic() - started), 0.0)
        if self._server is not None:
            await self._server.stop(grace)
            self._server = None
        if self._health_server is not None:  # answered NOT_SERVING while the API drained
            await self._health_server.stop(0)
            self._health_server = None
        if self.shadow is not None:
            await self.shadow.drain()
        if self.context is not None:
            await self.context.close()
        if self.injection is not None:
            await self.injection.close()
        if self.engine is not None and self.engine.ready:
            await self.engine.active.chain.aclose()
        if self._metrics_http is not None:
            self._metrics_http.close()
            self._metrics_http = None
        if self.isolated is not None:
            await self.isolated.close()
        if self._offload is not None:
            self._offload.shutdown(wait=False, cancel_futures=True)
        if self._decision_log is not None:
            self._decision_log.close()
        if self.store_health is not None:
            await self.store_health.close()
        if self.store is not None:
            await self.store.close()
            self.store = None

    async def wait_for_termination(self) -> None:
        if self._server is not None:
            await self._server.wait_for_termination()

    async def _set_health(
        self, status: health_pb2.HealthCheckResponse.ServingStatus.ValueType, *services: str
    ) -> None:
        assert self._health is not None
        for service in services:
            await self._health.set(service, status)

    def _credentials(self) -> grpc.ServerCredentials | None:
        settings = self.settings
        if settings.tls_cert is None or settings.tls_key is None:
            return None
        pair = (settings.tls_key.read_bytes(), settings.tls_cert.read_bytes())
        client_ca = settings.tls_client_ca.read_bytes() if settings.tls_client_ca else None
        return grpc.ssl_server_credentials(
            [pair], root_certificates=client_ca, require_client_auth=client_ca is not None
        )


async def _close_later(policy: ActivePolicy, delay: float, settle: bool = False) -> None:
    await asyncio.sleep(delay)
    await policy.chain.aclose()
    if settle:
        del policy  # the last reference: the old policy's cycles are collected, not frozen
        settle_long_lived_objects()


async def _ignore_result(work: Awaitable[object]) -> None:
    await work


def _preflight() -> Preflight:
    """Repeated fields counted on the wire before a request is parsed (see preflight)."""
    return Preflight(
        tool_calls=MAX_TOOL_CALLS,  # the policy's own limit is checked after parsing
        recent_user_messages=MAX_RECENT_USER_MESSAGES,
        messages=MAX_MESSAGES_PER_CALL,
        parts=MAX_PARTS_PER_CALL,
        recent_tool_outputs=MAX_RECENT_OUTPUTS,
        tools=MAX_TOOLS,
    )


def _own_paths(settings: Settings) -> tuple[str, ...]:
    """The sidecar's own files: calls that reach them are denied (self-protection)."""
    paths = [str(Path(p).resolve()) for p in settings.policies]
    paths += [str(Path(p).resolve()) for p in settings.shadow_policies]
    if settings.bundled_policies:
        paths.append(str(bundled_policy_dir().resolve()))
    if settings.state != ":memory:" and not is_postgres(settings.state):
        paths.append(str(Path(settings.state).resolve().parent))
    paths += [
        str(Path(a.removeprefix("unix:")).resolve())
        for a in settings.listen
        if a.startswith("unix:")
    ]
    # The approval credential, keys and passwords (an agent that reads the token answers
    # its own prompts), the audit trail, and the sidecar's own code.
    secrets = (
        settings.approval_token_file,
        settings.tls_cert,
        settings.tls_key,
        settings.tls_client_ca,
        settings.state_password_file,
    )
    paths += [str(Path(p).resolve()) for p in secrets if p is not None]
    if settings.decision_log not in ("stderr", "off", "-"):
        paths.append(str(Path(settings.decision_log).resolve()))
    paths.append(CODE_PREFIX + str(Path(__file__).resolve().parent))
    return tuple(paths)


def _own_endpoints(settings: Settings) -> OwnEndpoints:
    """The ports the API listens on, always with the default one (policy examples are written
    against it, and a sidecar there is the usual one), and this machine's names: an agent that
    reaches them could answer its own prompts."""
    ports = set(DEFAULT_PORTS)
    for address in settings.listen:
        if not address.startswith("unix:"):
            port = address.rpartition(":")[2]
            if port.isdigit() and int(port):
                ports.add(int(port))
    hosts = {socket.gethostname()}
    # A worker's parent is the supervisor: stopping it stops every worker.
    pids = {os.getpid(), os.getppid()} if settings.worker_count > 1 else {os.getpid()}
    return OwnEndpoints(ports, hosts, pids)


def _bound(address: str, port: int) -> str:
    if address.startswith("unix:"):
        return address
    host = address.rpartition(":")[0]
    return f"{host}:{port}"


async def serve_until_signalled(sidecar: Sidecar, stop: asyncio.Event) -> None:
    await sidecar.start()
    await stop.wait()
    log.info("shutting down; draining for up to %ss", sidecar.settings.grace_seconds)
    await sidecar.stop()

"""Assemble the sidecar's parts and run the grpc.aio server: services, health, reflection."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from wsgiref.simple_server import WSGIServer

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from prometheus_client import start_http_server

from sidecar.config import Settings
from sidecar.engine import EngineParts, PolicyEngine, compile_policy
from sidecar.inspection.repetition import RepetitionTracker
from sidecar.observability.decision_log import DecisionLog
from sidecar.observability.interceptors import MetricsInterceptor
from sidecar.observability.metrics import Metrics
from sidecar.policy.loader import bundled_policy_dir, load_policy
from sidecar.secrets import SecretScanner
from sidecar.service.policy_service import PolicyService
from sidecar.state.store import StateStore
from sidecar.v1 import sidecar_pb2, sidecar_pb2_grpc

log = logging.getLogger("sidecar.server")

POLICY_SERVICE = sidecar_pb2.DESCRIPTOR.services_by_name["PolicyService"].full_name
OVERALL = ""  # the health service's name for the whole server


def policy_directories(settings: Settings) -> list[Path]:
    bundled = [bundled_policy_dir()] if settings.bundled_policies else []
    return bundled + list(settings.policies)


@dataclass
class Sidecar:
    """One running sidecar. Build with `Sidecar(settings)`, then `await start()`."""

    settings: Settings
    metrics: Metrics = field(default_factory=Metrics)
    addresses: list[str] = field(default_factory=list)
    metrics_port: int | None = None
    _server: grpc.aio.Server | None = None
    _health: health.aio.HealthServicer | None = None
    _store: StateStore | None = None
    _metrics_http: WSGIServer | None = None
    _decision_log: DecisionLog | None = None
    engine: PolicyEngine | None = None

    async def start(self) -> None:
        settings = self.settings
        self._store = StateStore(settings.state)
        secrets = SecretScanner()
        parts = EngineParts(self.metrics, self._store, secrets, RepetitionTracker())
        self._decision_log = DecisionLog(settings.decision_log, secrets)
        self.engine = PolicyEngine(parts, self._decision_log)

        options = [
            ("grpc.max_receive_message_length", settings.max_message_bytes),
            ("grpc.max_send_message_length", settings.max_message_bytes),
            ("grpc.so_reuseport", 0),
        ]
        server = grpc.aio.server(interceptors=[MetricsInterceptor(self.metrics)], options=options)
        self._health = health.aio.HealthServicer()
        await self._set_health(health_pb2.HealthCheckResponse.NOT_SERVING)
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        sidecar_pb2_grpc.add_PolicyServiceServicer_to_server(
            PolicyService(self.engine, self._store, self.metrics), server
        )
        reflection.enable_server_reflection(
            (POLICY_SERVICE, health.SERVICE_NAME, reflection.SERVICE_NAME), server
        )
        credentials = self._credentials()
        for address in settings.listen:
            if address.startswith("unix:") or credentials is None:
                port = server.add_insecure_port(address)
            else:
                port = server.add_secure_port(address, credentials)
            self.addresses.append(_bound(address, port))
        await server.start()
        self._server = server
        if settings.metrics_listen != "off":
            host, _, port_text = settings.metrics_listen.rpartition(":")
            self._metrics_http, _ = start_http_server(
                int(port_text), addr=host.strip("[]"), registry=self.metrics.registry
            )
            self.metrics_port = self._metrics_http.server_port
        try:
            # Off the event loop: health and other RPCs keep answering meanwhile.
            active = await asyncio.to_thread(
                lambda: compile_policy(
                    load_policy(policy_directories(settings)), parts, settings.permission_mode
                )
            )
        except BaseException:
            await self.stop(grace=0)
            raise
        self.engine.replace(active)
        await self._set_health(health_pb2.HealthCheckResponse.SERVING)
        log.info(
            "serving on %s, policy revision %s, mode %s",
            ", ".join(self.addresses),
            active.revision,
            active.mode.name.lower(),
        )

    async def stop(self, grace: float | None = None) -> None:
        """NOT_SERVING first, so load balancers stop sending; then drain in-flight calls."""
        grace = self.settings.grace_seconds if grace is None else grace
        if self._health is not None:
            await self._health.enter_graceful_shutdown()
        if self._server is not None:
            await self._server.stop(grace)
            self._server = None
        if self.engine is not None and self.engine.ready:
            await self.engine.active.chain.aclose()
        if self._metrics_http is not None:
            self._metrics_http.shutdown()
            self._metrics_http.server_close()
            self._metrics_http = None
        if self._decision_log is not None:
            self._decision_log.close()
        if self._store is not None:
            self._store.close()
            self._store = None

    async def wait_for_termination(self) -> None:
        if self._server is not None:
            await self._server.wait_for_termination()

    async def _set_health(
        self, status: health_pb2.HealthCheckResponse.ServingStatus.ValueType
    ) -> None:
        assert self._health is not None
        for service in (OVERALL, POLICY_SERVICE):
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

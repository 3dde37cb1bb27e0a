"""The /metrics endpoint: prometheus_client's WSGI app on a threaded HTTP server of our own.

prometheus_client's `start_http_server` polls for shutdown every half second, so every stop
(each test's, each worker's) waited up to 0.5 s in the event loop. This one polls every 50 ms.
"""

from __future__ import annotations

import socket
import threading
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app

_SHUTDOWN_POLL_SECONDS = 0.05


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Scrapes are not news: no line per request on stderr."""


class MetricsHTTP:
    """A running /metrics server; `close()` stops it and frees the port."""

    def __init__(self, host: str, port: int, registry: CollectorRegistry) -> None:
        # The address decides the family, so `[::1]:9090` binds IPv6 and `127.0.0.1` IPv4.
        family, _, _, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]

        class Server(ThreadingMixIn, WSGIServer):
            address_family = family
            daemon_threads = True  # a stuck scrape never holds up exit

        self._httpd = make_server(
            str(address[0]), port, make_wsgi_app(registry), Server, handler_class=_QuietHandler
        )
        self.port: int = self._httpd.server_port
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": _SHUTDOWN_POLL_SECONDS},
            name="sidecar-metrics",
            daemon=True,
        )
        self._thread.start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

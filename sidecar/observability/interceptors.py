"""RPC metrics in go-grpc-prometheus style, recorded by a server interceptor."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from sidecar.observability.metrics import Metrics

Continuation = Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]]


def _split_method(full_method: str) -> tuple[str, str]:
    _, service, method = [*full_method.split("/"), "", ""][:3]
    return service or "unknown", method or "unknown"


def _go_name(code: grpc.StatusCode) -> str:
    """go-grpc-prometheus labels codes as Go names them: InvalidArgument, Canceled."""
    if code is grpc.StatusCode.CANCELLED:
        return "Canceled"
    if code is grpc.StatusCode.OK:
        return "OK"
    return "".join(word.capitalize() for word in str(code.name).split("_"))


def _code_of(context: grpc.aio.ServicerContext, error: BaseException | None) -> str:
    code = context.code()  # set by context.abort() and set_code()
    if isinstance(code, grpc.StatusCode):
        return _go_name(code)
    if error is None:
        return "OK"
    return "Canceled" if isinstance(error, asyncio.CancelledError) else "Unknown"


class MetricsInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    async def intercept_service(
        self, continuation: Continuation, details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler | None:
        handler = await continuation(details)
        if handler is None:
            return None
        service, method = _split_method(details.method)
        if handler.unary_unary:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(handler.unary_unary, "unary", service, method),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream:
            return grpc.unary_stream_rpc_method_handler(
                self._streaming(handler.unary_stream, "server_stream", service, method),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.stream_stream:
            return grpc.stream_stream_rpc_method_handler(
                self._streaming(handler.stream_stream, "bidi_stream", service, method),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.stream_unary:
            return grpc.stream_unary_rpc_method_handler(
                self._unary(handler.stream_unary, "client_stream", service, method),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler  # pragma: no cover

    def _unary(
        self, behaviour: Callable[..., Any], kind: str, service: str, method: str
    ) -> Callable[[Any, grpc.aio.ServicerContext], Awaitable[Any]]:
        labels = {"grpc_type": kind, "grpc_service": service, "grpc_method": method}

        async def wrapped(request: Any, context: grpc.aio.ServicerContext) -> Any:
            self._metrics.rpc_started.labels(**labels).inc()
            started = time.perf_counter()
            error: BaseException | None = None
            try:
                return await behaviour(request, context)
            except BaseException as caught:
                error = caught
                raise
            finally:
                self._finish(labels, context, error, started)

        return wrapped

    def _streaming(
        self, behaviour: Callable[..., Any], kind: str, service: str, method: str
    ) -> Callable[[Any, grpc.aio.ServicerContext], AsyncIterator[Any]]:
        labels = {"grpc_type": kind, "grpc_service": service, "grpc_method": method}

        async def wrapped(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            self._metrics.rpc_started.labels(**labels).inc()
            started = time.perf_counter()
            error: BaseException | None = None
            try:
                result = behaviour(request, context)
                if hasattr(result, "__aiter__"):
                    async for response in result:
                        yield response
                else:
                    await result  # handlers that write with context.write()
            except BaseException as caught:
                error = caught
                raise
            finally:
                self._finish(labels, context, error, started)

        return wrapped

    def _finish(
        self,
        labels: dict[str, str],
        context: grpc.aio.ServicerContext,
        error: BaseException | None,
        started: float,
    ) -> None:
        self._metrics.rpc_seconds.labels(**labels).observe(time.perf_counter() - started)
        self._metrics.rpc_handled.labels(**labels, grpc_code=_code_of(context, error)).inc()

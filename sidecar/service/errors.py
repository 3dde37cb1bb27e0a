"""Bad input is reported as INVALID_ARGUMENT naming the field, never as a crash.

`EdgeGuard` is the server interceptor that makes this hold for every unary method,
whatever a handler forgets:

- a body that is not a valid message (corrupt wire format, bad UTF-8 in a string)
  is INVALID_ARGUMENT naming the message type, instead of grpc's UNKNOWN;
- an `InvalidArgument` raised by a handler is INVALID_ARGUMENT with its message;
- anything else a handler raises is INTERNAL, and the traceback is logged once per
  method and exception type every ten minutes, not once per request;
- every rejection is one log line, rate-limited, so garbage cannot flood the log.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from sidecar.observability.rate_limited_log import RateLimitedLog
from sidecar.service.preflight import Preflight

log = logging.getLogger("sidecar.service")

Continuation = Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]]


class InvalidArgument(Exception):
    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")


class _Undecodable:
    """Stands in for a request that was not parsed: its bytes did not parse (field
    "request"), or a repeated field held more items than its limit."""

    __slots__ = ("field", "problem")

    def __init__(self, problem: str, field: str = "request") -> None:
        self.field = field
        self.problem = problem


def _tolerant(
    deserializer: Callable[[bytes], Any] | None, method: str, preflight: Preflight | None
) -> Callable[[bytes], Any] | None:
    if deserializer is None:
        return None

    def deserialize(data: bytes) -> Any:
        if preflight is not None:
            too_many = preflight.check(method, data)
            if too_many is not None:
                return _Undecodable(too_many.problem, too_many.field)
        try:
            return deserializer(data)
        except Exception as error:  # DecodeError, and anything a parser may raise
            return _Undecodable(str(error) or type(error).__name__)

    return deserialize


class EdgeGuard(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    def __init__(self, preflight: Preflight | None = None) -> None:
        self._preflight = preflight
        self._rejections = RateLimitedLog(log, every_seconds=10.0)
        self._failures = RateLimitedLog(log, every_seconds=10.0)
        self._tracebacks = RateLimitedLog(log, every_seconds=600.0)

    async def intercept_service(
        self, continuation: Continuation, details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler | None:
        handler = await continuation(details)
        if handler is None:
            return None
        method = details.method
        if handler.unary_unary:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(handler.unary_unary, method),
                request_deserializer=_tolerant(
                    handler.request_deserializer, method, self._preflight
                ),
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream:
            return grpc.unary_stream_rpc_method_handler(
                self._unary_stream(handler.unary_stream, method),
                request_deserializer=_tolerant(
                    handler.request_deserializer, method, self._preflight
                ),
                response_serializer=handler.response_serializer,
            )
        return handler  # streaming requests (reflection): left to their own handling

    def _unary(
        self, behaviour: Callable[..., Any], method: str
    ) -> Callable[[Any, grpc.aio.ServicerContext], Awaitable[Any]]:
        async def guarded(request: Any, context: grpc.aio.ServicerContext) -> Any:
            if isinstance(request, _Undecodable):
                await self._reject(context, method, request.field, request.problem)
            try:
                return await behaviour(request, context)
            except InvalidArgument as error:
                await self._reject(context, method, error.field, error.problem)
            except (grpc.aio.AbortError, asyncio.CancelledError):
                raise
            except Exception as error:
                await self._fail(context, method, error)

        return guarded

    def _unary_stream(
        self, behaviour: Callable[..., Any], method: str
    ) -> Callable[[Any, grpc.aio.ServicerContext], AsyncIterator[Any]]:
        async def guarded(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            if isinstance(request, _Undecodable):
                await self._reject(context, method, request.field, request.problem)
            try:
                result = behaviour(request, context)
                if hasattr(result, "__aiter__"):
                    async for response in result:
                        yield response
                else:
                    await result  # handlers that write with context.write()
            except InvalidArgument as error:
                await self._reject(context, method, error.field, error.problem)
            except (grpc.aio.AbortError, asyncio.CancelledError):
                raise
            except Exception as error:
                await self._fail(context, method, error)

        return guarded

    async def _reject(
        self, context: grpc.aio.ServicerContext, method: str, field: str, problem: str
    ) -> None:
        message = f"{field}: {problem}"
        # The key is the method and field, never the client's text: a fixed vocabulary.
        self._rejections.log(
            logging.INFO, f"{method} {field}", "rejected %s: %s", method, message[:300]
        )
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, message)

    async def _fail(self, context: grpc.aio.ServicerContext, method: str, error: Exception) -> None:
        name = type(error).__name__
        key = f"{method} {name}"
        if not self._tracebacks.log(logging.ERROR, key, "%s failed", method, exc_info=error):
            self._failures.log(logging.ERROR, key, "%s failed: %s", method, name)
        await context.abort(grpc.StatusCode.INTERNAL, f"internal error ({type(error).__name__})")

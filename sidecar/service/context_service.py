"""sidecar.v1.ContextService: Append, Project, History, DeleteSession."""

from __future__ import annotations

import logging
import math
from collections import OrderedDict
from collections.abc import Sequence

import grpc

from sidecar.context.manager import (
    DEFAULT_CACHE_BYTES,
    CompactionResult,
    ContextError,
    ContextExhausted,
    ContextManager,
    NewMessage,
    SessionConflict,
    SessionNotFound,
)
from sidecar.context.messages import (
    Kind,
    Media,
    Message,
    Part,
    Reasoning,
    Role,
    Text,
    ToolCall,
    ToolResult,
    Usage,
)
from sidecar.integrity.monitor import InjectionMonitor, Untrusted
from sidecar.observability.metrics import Metrics
from sidecar.service.approval_auth import AUTH_CODES, ApprovalGate
from sidecar.service.policy_service import MAX_ID_LENGTH
from sidecar.store.errors import StoreUnavailable
from sidecar.v1 import sidecar_pb2 as pb

log = logging.getLogger("sidecar.context_service")

# Counted before anything is converted (1.9 million empty messages fit in 4 MiB, and
# each becomes objects once read): messages, and their parts, in one Append or Project.
MAX_MESSAGES_PER_CALL = 1_000
MAX_PARTS_PER_CALL = 10_000
DEFAULT_PAGE = 100
MAX_PAGE = 1_000
# Token counts are added up and stored as SQLite integers: an int64-max "usage" would
# overflow the sum. No model has a context window near a billion tokens.
MAX_TOKENS = 1_000_000_000
_INT64_MAX = 2**63 - 1

_ROLE_FROM_PB = {
    pb.ROLE_SYSTEM: Role.SYSTEM,
    pb.ROLE_DEVELOPER: Role.DEVELOPER,
    pb.ROLE_USER: Role.USER,
    pb.ROLE_ASSISTANT: Role.ASSISTANT,
    pb.ROLE_TOOL: Role.TOOL,
}
_ROLE_TO_PB = {role: value for value, role in _ROLE_FROM_PB.items()}
_KIND_FROM_PB = {
    pb.MESSAGE_KIND_UNSPECIFIED: Kind.ORDINARY,
    pb.MESSAGE_KIND_ORDINARY: Kind.ORDINARY,
    pb.MESSAGE_KIND_REMINDER: Kind.REMINDER,
    pb.MESSAGE_KIND_SUMMARY: Kind.SUMMARY,
    pb.MESSAGE_KIND_CONTINUATION: Kind.CONTINUATION,
    pb.MESSAGE_KIND_RECEIPT: Kind.RECEIPT,
    pb.MESSAGE_KIND_REFUSAL: Kind.REFUSAL,
}
_KIND_TO_PB = {kind: value for value, kind in _KIND_FROM_PB.items() if value}
_TRIGGER_TO_PB = {
    "threshold": pb.COMPACTION_TRIGGER_THRESHOLD,
    "context_exceeded": pb.COMPACTION_TRIGGER_CONTEXT_EXCEEDED,
}


def _check_session(session_id: str) -> None:
    if not session_id:
        raise ContextError("session_id", "must not be empty")
    if len(session_id) > MAX_ID_LENGTH or not session_id.isprintable():
        raise ContextError("session_id", "too long or contains control characters")


def message_from_pb(message: pb.Message, where: str) -> NewMessage:
    if len(message.id) > MAX_ID_LENGTH or not message.id.isprintable():
        raise ContextError(f"{where}.id", "too long or contains control characters")
    if len(message.response_id) > MAX_ID_LENGTH:
        raise ContextError(f"{where}.response_id", f"longer than {MAX_ID_LENGTH} characters")
    role = _ROLE_FROM_PB.get(message.role)
    if role is None:
        raise ContextError(f"{where}.role", f"message {message.id!r} needs a role")
    kind = _KIND_FROM_PB.get(message.kind)
    if kind is None:
        raise ContextError(f"{where}.kind", f"unknown kind {message.kind}")
    parts: list[Part] = []
    for index, part in enumerate(message.parts):
        which = part.WhichOneof("part")
        if which == "text":
            parts.append(Text(part.text.text))
        elif which == "media":
            media = part.media
            if not media.mime_type:
                raise ContextError(f"{where}.parts[{index}].media.mime_type", "must be set")
            parts.append(Media(media.mime_type, media.url, media.data))
        elif which == "tool_call":
            call = part.tool_call
            parts.append(ToolCall(call.id, call.name, call.arguments))
        elif which == "tool_result":
            result = part.tool_result
            parts.append(ToolResult(result.tool_call_id, result.content, result.is_error))
        elif which == "reasoning":
            r = part.reasoning
            parts.append(Reasoning(r.provider, r.text, r.signature, r.encrypted))
        else:
            raise ContextError(f"{where}.parts[{index}]", "is empty")
    return NewMessage(
        id=message.id,
        role=role,
        parts=tuple(parts),
        kind=kind,
        response_id=message.response_id,
        created_at_ms=message.created_at_unix_ms,
        user_visible=message.user_visible if message.HasField("user_visible") else None,
        agent_visible=message.agent_visible if message.HasField("agent_visible") else None,
    )


def message_to_pb(message: Message) -> pb.Message:
    out = pb.Message(
        id=message.id,
        role=_ROLE_TO_PB[message.role],
        response_id=message.response_id,
        created_at_unix_ms=message.created_at_ms,
        kind=_KIND_TO_PB[message.kind],
        user_visible=message.user_visible,
        agent_visible=message.agent_visible,
    )
    for part in message.parts:
        if isinstance(part, Text):
            out.parts.add(text=pb.TextPart(text=part.text))
        elif isinstance(part, Media):
            media = pb.MediaPart(mime_type=part.mime_type)
            if part.url:
                media.url = part.url
            else:
                media.data = part.data
            out.parts.add(media=media)
        elif isinstance(part, ToolCall):
            out.parts.add(
                tool_call=pb.ToolCallPart(id=part.id, name=part.name, arguments=part.arguments)
            )
        elif isinstance(part, ToolResult):
            out.parts.add(
                tool_result=pb.ToolResultPart(
                    tool_call_id=part.tool_call_id, content=part.content, is_error=part.is_error
                )
            )
        else:
            out.parts.add(
                reasoning=pb.ReasoningPart(
                    provider=part.provider,
                    text=part.text,
                    signature=part.signature,
                    encrypted=part.encrypted,
                )
            )
    return out


def _usage(request_usage: pb.Usage, present: bool) -> Usage | None:
    if not present:
        return None
    usage = Usage(
        request_usage.input_tokens,
        request_usage.cache_read_tokens,
        request_usage.cache_creation_tokens,
        request_usage.output_tokens,
        request_usage.context_limit,
        request_usage.through_message_id,
    )
    if min(usage.input_tokens, usage.cache_read_tokens, usage.cache_creation_tokens,
           usage.output_tokens, usage.context_limit) < 0:  # fmt: skip
        raise ContextError("usage", "token counts must not be negative")
    for name in (
        "input_tokens", "cache_read_tokens", "cache_creation_tokens", "output_tokens",
        "context_limit",
    ):  # fmt: skip
        if getattr(usage, name) > MAX_TOKENS:
            raise ContextError(f"usage.{name}", f"larger than {MAX_TOKENS:,}")
    return usage


def _check_context_limit(value: int) -> None:
    if value < 0:
        raise ContextError("context_limit", "must not be negative")
    if value > MAX_TOKENS:
        raise ContextError("context_limit", f"larger than {MAX_TOKENS:,}")


def _check_page_token(token: str) -> None:
    """A token is `position:seq` as History hands it out (see ContextManager.history);
    anything else, or numbers SQLite cannot hold, is refused here, before a query."""
    if not token:
        return
    position, colon, seq = token.partition(":")
    try:
        valid = (
            bool(colon)
            and len(token) <= 64
            and math.isfinite(float(position))
            and seq.isdigit()
            and int(seq) <= _INT64_MAX
        )
    except ValueError:
        valid = False
    if not valid:
        raise ContextError("page_token", "not a token from a previous response")


def _messages(request_messages: Sequence[pb.Message]) -> list[NewMessage]:
    count = len(request_messages)  # reads no item
    if count > MAX_MESSAGES_PER_CALL:
        raise ContextError(
            "messages", f"{count:,} messages exceed the limit of {MAX_MESSAGES_PER_CALL:,}"
        )
    items = list(request_messages)
    parts = sum(len(m.parts) for m in items)
    if parts > MAX_PARTS_PER_CALL:
        raise ContextError(
            "messages.parts", f"{parts:,} parts exceed the limit of {MAX_PARTS_PER_CALL:,}"
        )
    return [message_from_pb(m, f"messages[{i}]") for i, m in enumerate(items)]


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _messages_field(message: Message) -> bytes:
    """One `repeated Message messages = 1` entry, encoded as on the wire."""
    data = message_to_pb(message).SerializeToString()
    return b"\x0a" + _varint(len(data)) + data


class _EncodedViews:
    """Each session's agent view, already encoded, within a byte budget (least recently
    used sessions go first). Messages never change (a change is a new message object)
    and a session's view list only grows at its end until it is replaced, so each
    Project encodes only what was appended since the last one; after a replacement,
    only what follows the first message that differs."""

    def __init__(self, max_bytes: int, metrics: Metrics) -> None:
        self._views: OrderedDict[str, _Encoded] = OrderedDict()
        self._max_bytes = max_bytes
        self.bytes = 0
        metrics.context_cache_bytes.labels(cache="encoded_views").set_function(lambda: self.bytes)

    def prefix(self, session_id: str, view: list[Message], length: int) -> bytes:
        entry = self._views.pop(session_id, None)
        if entry is None:
            entry = _Encoded(view, [], bytearray(), [0])
        else:
            self.bytes -= entry.size
            if entry.source is not view:
                entry.rebase(view)
        entry.extend(view)
        self._views[session_id] = entry
        self.bytes += entry.size
        while self.bytes > self._max_bytes and len(self._views) > 1:
            _, oldest = self._views.popitem(last=False)
            self.bytes -= oldest.size
        if self.bytes > self._max_bytes:  # one view alone is over budget: keep none
            self._views.clear()
            self.bytes = 0
        return bytes(entry.buffer[: entry.ends[length]])

    def drop(self, session_id: str) -> None:
        entry = self._views.pop(session_id, None)
        if entry is not None:
            self.bytes -= entry.size


class _Encoded:
    def __init__(
        self, source: list[Message], done: list[Message], buffer: bytearray, ends: list[int]
    ) -> None:
        self.source = source  # the session's view list these bytes were made from
        self.done = done  # the messages encoded, in order (a copy of the view's prefix)
        self.buffer = buffer
        self.ends = ends  # ends[i]: where the first i messages end in buffer

    @property
    def size(self) -> int:
        return len(self.buffer) + 8 * (len(self.done) + len(self.ends)) + 200

    def rebase(self, view: list[Message]) -> None:
        """Keep the bytes of the messages the new view starts with."""
        same = 0
        limit = min(len(view), len(self.done))
        while same < limit and view[same] is self.done[same]:
            same += 1
        del self.done[same:]
        del self.ends[same + 1 :]
        del self.buffer[self.ends[same] :]
        self.source = view

    def extend(self, view: list[Message]) -> None:
        for message in view[len(self.done) :]:
            self.buffer += _messages_field(message)
            self.ends.append(len(self.buffer))
            self.done.append(message)


class ContextService:
    """Registered with add_context_service (Project answers with encoded bytes)."""

    def __init__(
        self,
        manager: ContextManager,
        metrics: Metrics,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        gate: ApprovalGate | None = None,
        injection: InjectionMonitor | None = None,
    ) -> None:
        self._manager = manager
        self._metrics = metrics
        # Deleting a session erases its answers, counters and data-flow facts: an agent
        # that could do it would reset what the sidecar knows about it. With an approval
        # credential configured, DeleteSession needs it, like RecordDecision.
        self._gate = gate
        self._encoded = _EncodedViews(cache_bytes, metrics)
        self._injection = injection
        manager.on_deleted(self._encoded.drop)

    async def _check_untrusted(self, session_id: str, messages: list[NewMessage]) -> None:
        """Tool results the agent will read, once stored: a prompt injection taints the
        session (sidecar/integrity/monitor.py)."""
        if self._injection is not None and messages:
            await self._injection.check(session_id, untrusted_in(messages), "append")

    async def _check_or_abort(
        self, session_id: str, messages: list[NewMessage], context: grpc.aio.ServicerContext
    ) -> None:
        try:
            await self._check_untrusted(session_id, messages)
        except StoreUnavailable as error:
            # The messages are stored; what the check found is not: the caller must know.
            await context.abort(
                grpc.StatusCode.UNAVAILABLE,
                "the messages were stored, but their check for prompt injection could not "
                f"be: {error}",
            )

    async def Append(
        self, request: pb.AppendRequest, context: grpc.aio.ServicerContext
    ) -> pb.AppendResponse:
        try:
            _check_session(request.session_id)
            messages = _messages(request.messages)
            count = await self._manager.append(
                request.session_id,
                messages,
                _usage(request.usage, request.HasField("usage")),
                request.options.provider_managed,
            )
        except ContextError as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        except SessionNotFound as error:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(error))
        except SessionConflict as error:
            await context.abort(grpc.StatusCode.ABORTED, str(error))
        except StoreUnavailable as error:  # nothing of this call was stored
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(error))
        await self._check_or_abort(request.session_id, messages, context)
        return pb.AppendResponse(message_count=count)

    async def Project(self, request: pb.ProjectRequest, context: grpc.aio.ServicerContext) -> bytes:
        """Returns the encoded ProjectResponse (see add_context_service)."""
        try:
            _check_session(request.session_id)
            _check_context_limit(request.context_limit)
            if request.reason not in (
                pb.PROJECT_REASON_UNSPECIFIED,
                pb.PROJECT_REASON_NORMAL,
                pb.PROJECT_REASON_CONTEXT_EXCEEDED,
            ):
                raise ContextError("reason", f"unknown reason {request.reason}")
            messages = _messages(request.messages)
            projection = await self._manager.project(
                request.session_id,
                messages,
                _usage(request.usage, request.HasField("usage")),
                request.context_limit,
                request.reason == pb.PROJECT_REASON_CONTEXT_EXCEEDED,
                request.options.provider_managed,
            )
        except ContextError as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        except SessionNotFound as error:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(error))
        except SessionConflict as error:
            await context.abort(grpc.StatusCode.ABORTED, str(error))
        except StoreUnavailable as error:  # nothing of this call was stored
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(error))
        except ContextExhausted as error:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(error))
        await self._check_or_abort(request.session_id, messages, context)
        tokens = projection.tokens
        rest = pb.ProjectResponse(
            tokens=pb.TokenAccounting(
                tokens=tokens.tokens,
                limit=projection.limit,
                source=(
                    pb.TOKEN_SOURCE_PROVIDER
                    if tokens.source == "provider"
                    else pb.TOKEN_SOURCE_ESTIMATE
                ),
                provider_tokens=tokens.provider,
                estimated_tokens=tokens.estimated,
                usage_through_message_id=tokens.through,
            ),
            compaction=_compaction_to_pb(projection.compaction),
            elided_message_ids=projection.elided,
        )
        # Fields may come in any order on the wire: the cached messages, then the rest.
        head = self._encoded.prefix(request.session_id, projection.view, projection.prefix)
        tail = b"".join(_messages_field(m) for m in projection.tail)
        return head + tail + rest.SerializeToString()

    async def History(
        self, request: pb.HistoryRequest, context: grpc.aio.ServicerContext
    ) -> pb.HistoryResponse:
        try:
            _check_session(request.session_id)
            if request.page_size < 0:
                raise ContextError("page_size", "must not be negative")
            _check_page_token(request.page_token)
            size = min(request.page_size or DEFAULT_PAGE, MAX_PAGE)
            page, token = await self._manager.history(request.session_id, request.page_token, size)
        except ContextError as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        except SessionNotFound as error:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(error))
        except SessionConflict as error:
            await context.abort(grpc.StatusCode.ABORTED, str(error))
        except StoreUnavailable as error:  # nothing of this call was stored
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(error))
        return pb.HistoryResponse(messages=[message_to_pb(m) for m in page], next_page_token=token)

    async def DeleteSession(
        self, request: pb.DeleteSessionRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteSessionResponse:
        if self._gate is not None:
            failure = self._gate.check(context.invocation_metadata())
            if failure is not None:
                self._metrics.refused_answers.labels(reason=failure.value).inc()
                log.warning("DeleteSession refused: %s approval token", failure.value)
                code, message = AUTH_CODES[failure]
                await context.abort(code, message)
        try:
            _check_session(request.session_id)
            deleted = await self._manager.delete(request.session_id)
        except ContextError as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        except SessionNotFound as error:
            await context.abort(grpc.StatusCode.NOT_FOUND, str(error))
        except SessionConflict as error:
            await context.abort(grpc.StatusCode.ABORTED, str(error))
        except StoreUnavailable as error:  # nothing of this call was stored
            await context.abort(grpc.StatusCode.UNAVAILABLE, str(error))
        return pb.DeleteSessionResponse(messages_deleted=deleted)


def untrusted_in(messages: list[NewMessage]) -> list[Untrusted]:
    """What the agent reads from outside: tool messages (results, fetched content) that
    it sees. The person's and the model's own messages are not untrusted input."""
    found: list[Untrusted] = []
    for message in messages:
        if message.role is not Role.TOOL or message.agent_visible is False:
            continue
        texts: list[str] = []
        calls: list[str] = []
        for part in message.parts:
            if isinstance(part, ToolResult):
                texts.append(part.content)
                calls.append(part.tool_call_id)
            elif isinstance(part, Text):
                texts.append(part.text)
        text = "\n".join(t for t in texts if t)
        if text:
            origin = f"result of call {calls[0]}" if calls else "tool message"
            found.append(Untrusted(message.id, text, origin))
    return found


def _compaction_to_pb(result: CompactionResult | None) -> pb.CompactionReport:
    if result is None:
        return pb.CompactionReport(compacted=False)
    return pb.CompactionReport(
        compacted=result.hidden > 0,
        trigger=_TRIGGER_TO_PB[result.trigger],
        messages_hidden=result.hidden,
        inserted_message_ids=list(result.inserted),
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
    )


def add_context_service(service: ContextService, server: grpc.aio.Server) -> None:
    """Like the generated add_ContextServiceServicer_to_server, except that Project
    returns its response already encoded, so it is passed through as bytes."""
    name = pb.DESCRIPTOR.services_by_name["ContextService"].full_name
    handlers = {
        "Append": grpc.unary_unary_rpc_method_handler(
            service.Append,
            request_deserializer=pb.AppendRequest.FromString,
            response_serializer=pb.AppendResponse.SerializeToString,
        ),
        "Project": grpc.unary_unary_rpc_method_handler(
            service.Project,
            request_deserializer=pb.ProjectRequest.FromString,
            response_serializer=_already_encoded,
        ),
        "History": grpc.unary_unary_rpc_method_handler(
            service.History,
            request_deserializer=pb.HistoryRequest.FromString,
            response_serializer=pb.HistoryResponse.SerializeToString,
        ),
        "DeleteSession": grpc.unary_unary_rpc_method_handler(
            service.DeleteSession,
            request_deserializer=pb.DeleteSessionRequest.FromString,
            response_serializer=pb.DeleteSessionResponse.SerializeToString,
        ),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))


def _already_encoded(payload: bytes) -> bytes:
    return payload

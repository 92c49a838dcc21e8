"""The one server interceptor: log context per RPC, one log line per RPC, errors -> rich status.

``grpc.aio.ServerInterceptor.intercept_service`` sees only the method name and metadata, not the
request or the context, so it wraps the returned method handler: the wrapper runs inside the
RPC's own task, where it can read the deserialized request, bind structlog context variables
(isolated per task) and ``await context.abort(...)`` with the mapped status. ``context.abort`` is
used rather than ``abort_with_status`` so tracing interceptors see the code (grpc.md §1.3).

Bound per RPC: ``rpc`` (full method), ``request_id`` (the request's ``request_id`` field, else
the ``x-request-id`` metadata), ``table_id`` and ``hand_id`` (from ``table_id``/``hand_id``
fields or a ``tables/{table}[/hands/{hand}]`` resource name in ``name``/``table``/``parent``).
Authenticated per RPC on a TLS server: the caller (``shell.identity.authenticate``: the client
certificate's SAN URI, else a bearer token, else anonymous) is bound for the handlers
(``shell.callers``); a bad token is refused here (with keys from a JWKS URL, after awaiting the
fetch of a key it names that is not held yet), and so is a caller over its requests per second
(``requests_per_second``: RESOURCE_EXHAUSTED ``QUOTA_EXCEEDED``, ``shell.quotas``). Health and
reflection calls are passed through untouched.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

import grpc
import structlog
from grpc import aio
from grpc_status import rpc_status

from openpoker.shell import identity, quotas
from openpoker.shell.errors import MappedError, to_status
from openpoker.shell.logs import debug_enabled, get_logger
from openpoker.shell.tokens import TokenVerifier, bearer

_PASSTHROUGH = ("/grpc.health.v1.Health/", "/grpc.reflection.")
_RESOURCE_FIELDS = ("name", "table", "parent")


_ID_FIELDS = ("request_id", "table_id", "hand_id", *_RESOURCE_FIELDS)
_fields_of: dict[type, tuple[str, ...]] = {}  # request type -> which of _ID_FIELDS it has


def _id_fields(request: object) -> tuple[str, ...]:
    """The identifier fields a request type has, once per type: asking a protobuf message for a
    field it lacks raises inside ``getattr`` (microseconds on every RPC)."""
    kind = type(request)
    fields = _fields_of.get(kind)
    if fields is None:
        descriptor = getattr(kind, "DESCRIPTOR", None)
        names = getattr(descriptor, "fields_by_name", None)
        if names is None:  # not a protobuf message: look every field up each time
            return _ID_FIELDS
        fields = _fields_of[kind] = tuple(f for f in _ID_FIELDS if f in names)
    return fields


def request_ids(request: object, metadata: Iterable[tuple[str, str | bytes]] | None) -> dict[str, str]:
    """The identifiers to bind for one request (pure; tested directly)."""
    ids: dict[str, str] = {}
    values = {f: getattr(request, f, "") for f in _id_fields(request)}
    request_id = values.get("request_id", "")
    if not (isinstance(request_id, str) and request_id):
        request_id = next((str(v) for k, v in metadata or () if k == "x-request-id"), "")
    if request_id:
        ids["request_id"] = request_id
    for field in ("table_id", "hand_id"):
        value = values.get(field, "")
        if isinstance(value, str) and value:
            ids[field] = value
    for field in _RESOURCE_FIELDS:
        value = values.get(field, "")
        if isinstance(value, str) and value.startswith("tables/"):
            parts = value.split("/")
            if len(parts) >= 2 and parts[1]:
                ids.setdefault("table_id", parts[1])
            if len(parts) >= 4 and parts[2] == "hands" and parts[3]:
                ids.setdefault("hand_id", parts[3])
            break
    return ids


_log = get_logger()


def bind_request(method: str, request: object, context: aio.ServicerContext[Any, Any]) -> float:
    """Fresh log context for one request (an RPC, or one message of a request stream); returns
    its start time."""
    structlog.contextvars.clear_contextvars()
    structlog.contextvars.bind_contextvars(rpc=method, **request_ids(request, context.invocation_metadata()))
    return time.perf_counter()


def refused(exc: Exception, *, domain: str, started: float) -> MappedError:
    """Map a handler's exception to its status and log it as the interceptor does for a failed
    RPC (``rpc.rejected``, or ``rpc.failed`` with the traceback for an unexpected error). Used
    directly by stream handlers that answer a refused message in-band and keep the stream open."""
    mapped = to_status(exc, domain=domain)
    elapsed_ms = round((time.perf_counter() - started) * 1000, 3)
    if mapped.internal:
        _log.exception("rpc.failed", code=mapped.code.name, ms=elapsed_ms)
    else:
        _log.info(
            "rpc.rejected", code=mapped.code.name, reason=mapped.reason, error=mapped.message, ms=elapsed_ms
        )
    return mapped


class ShellInterceptor(aio.ServerInterceptor):
    """Wraps unary-unary, unary-stream and stream-stream handlers (the kinds our APIs use)."""

    def __init__(
        self,
        *,
        domain: str,
        secure: bool = False,
        verifier: TokenVerifier | None = None,
        requests: quotas.RateLimit | None = None,
    ) -> None:
        self._domain = domain
        self._secure = secure
        self._verifier = verifier
        self._requests = requests  # per identity, on a TLS server only
        self._log = get_logger()
        # Method -> wrapped handler, built once: the registered handlers never change, and a
        # new handler (and closure) per RPC is measurable on the hot path.
        self._wrapped: dict[str, grpc.RpcMethodHandler[Any, Any]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        method: str = handler_call_details.method
        wrapped = self._wrapped.get(method)
        if wrapped is not None:
            return wrapped
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        wrapped = handler if method.startswith(_PASSTHROUGH) else self._wrap(method, handler)
        self._wrapped[method] = wrapped
        return wrapped

    def _wrap(self, method: str, handler: grpc.RpcMethodHandler[Any, Any]) -> grpc.RpcMethodHandler[Any, Any]:
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._wrap_unary(method, handler.unary_unary),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._wrap_stream(method, handler.unary_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.stream_stream is not None:
            return grpc.stream_stream_rpc_method_handler(
                self._wrap_stream(method, handler.stream_stream, request_stream=True),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler

    def _begin(self, method: str, request: object, context: aio.ServicerContext[Any, Any]) -> float:
        return bind_request(method, request, context)

    async def _authenticate(self, context: aio.ServicerContext[Any, Any]) -> None:
        if not self._secure:
            return
        peer, metadata = identity.peer_context(context), context.invocation_metadata()
        verifier = self._verifier
        if verifier is not None and verifier.fetches and not peer.get("peer_spiffe_id"):
            # Keys from a URL: a token naming a kid not yet held waits here, off the event loop,
            # for at most one rate-limited fetch (shell.jwks.UrlKeys).
            headers = {k: v for k, v in metadata or () if k == "authorization" and isinstance(v, str)}
            await verifier.prepare(bearer(headers))
        principal = identity.authenticate(peer, metadata, verifier)
        identity.bind(principal)
        structlog.contextvars.bind_contextvars(caller=principal.name or principal.kind.value)
        if self._requests is not None:
            key = quotas.key_of(principal, context.peer)
            if key is not None:
                self._requests.take(key)

    async def _fail(self, exc: Exception, context: aio.ServicerContext[Any, Any], started: float) -> None:
        mapped = refused(exc, domain=self._domain, started=started)
        trailer = rpc_status.to_status(mapped.status).trailing_metadata
        await context.abort(mapped.code, mapped.message, trailing_metadata=trailer)

    def _wrap_unary(self, method: str, behaviour: Any) -> Any:
        async def wrapper(request: object, context: aio.ServicerContext[Any, Any]) -> object:
            started = self._begin(method, request, context)
            try:
                await self._authenticate(context)
                response = await behaviour(request, context)
            except aio.AbortError:
                raise  # the handler aborted by itself; its status stands
            except Exception as exc:
                await self._fail(exc, context, started)
                raise  # unreachable: abort raises
            if debug_enabled():  # one line per RPC at debug: skipped cheaply when filtered
                self._log.debug("rpc.ok", ms=round((time.perf_counter() - started) * 1000, 3))
            return response

        return wrapper

    def _wrap_stream(self, method: str, behaviour: Any, *, request_stream: bool = False) -> Any:
        # With a request stream the handler binds each message's ids itself (``shell.logs.bind``)
        # and answers refusals in-band (``refused``); what reaches here ends the whole stream.
        async def wrapper(argument: object, context: aio.ServicerContext[Any, Any]) -> AsyncIterator[object]:
            started = self._begin(method, None if request_stream else argument, context)
            try:
                await self._authenticate(context)
                async for item in behaviour(argument, context):
                    yield item
            except aio.AbortError:
                raise
            except Exception as exc:
                await self._fail(exc, context, started)
                raise
            if debug_enabled():
                self._log.debug("rpc.stream_ended", ms=round((time.perf_counter() - started) * 1000, 3))

        return wrapper

"""Unary-style calls over one long-lived bidi stream (``TableService.ActStream``).

A message on an open gRPC stream costs both ends a fraction of a unary call (grpc.aio sets up
and tears down a whole call, its task and its metadata per unary RPC), so a client that sends
many small commands (a bot, a game server relaying its players' actions) keeps one stream open
and uses ``StreamedCalls.call`` like a unary stub method:

* the request is wrapped into the stream's request message, the answer unwrapped: its
  ``response`` is returned; its ``error`` (a ``poker.common.v1.Status``, wire-identical to
  ``google.rpc.Status``) is raised as the same ``grpc.aio.AioRpcError`` a failed unary call
  raises, with the status in the ``grpc-status-details-bin`` trailer, so ``shell.client.
  rich_error`` and every ``except grpc.RpcError`` treat both transports alike;
* the stream is opened on first use and again after it broke; a call interrupted in flight
  (timeout, cancellation, a broken stream) drops the stream, because its answer could
  otherwise be read as the next call's. The interrupted request's outcome is then unknown, as
  for a unary call that timed out: retry it with the same ``request_id``.

Calls on one ``StreamedCalls`` are sent one at a time (a lock), matching the server, which
decides a stream's requests in order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import grpc
from google.rpc import status_pb2
from grpc import aio

_CODES = {code.value[0]: code for code in grpc.StatusCode}
_DETAILS_KEY = "grpc-status-details-bin"


def stream_error(status: Any) -> aio.AioRpcError:
    """The ``AioRpcError`` a unary call would have raised for this in-band status."""
    rpc = status_pb2.Status.FromString(status.SerializeToString())
    return aio.AioRpcError(
        code=_CODES.get(rpc.code, grpc.StatusCode.UNKNOWN),
        initial_metadata=aio.Metadata(),
        trailing_metadata=aio.Metadata((_DETAILS_KEY, rpc.SerializeToString())),
        details=rpc.message,
    )


def _local_error(code: grpc.StatusCode, details: str) -> aio.AioRpcError:
    return aio.AioRpcError(
        code=code, initial_metadata=aio.Metadata(), trailing_metadata=aio.Metadata(), details=details
    )


class StreamedCalls:
    """Calls over one bidi stream whose answers have ``oneof result { response; error }``."""

    def __init__(
        self,
        method: Any,
        *,
        wrap: Callable[[Any], Any],
        metadata: Sequence[tuple[str, str]] = (),
    ) -> None:
        self._method = method  # a grpc.aio StreamStreamMultiCallable
        self._wrap = wrap
        self._metadata = tuple(metadata)
        self._call: Any = None
        self._lock = asyncio.Lock()

    async def call(self, request: Any, *, deadline: float | None = None) -> Any:
        async with self._lock:
            call = self._call
            if call is None or call.done():
                call = self._call = self._method(metadata=self._metadata)
            try:
                # asyncio.timeout, not wait_for: in 3.11 wait_for can swallow a cancellation that
                # arrives as the answer does, and a caller being stopped would then go on.
                async with asyncio.timeout(deadline):
                    answer = await self._exchange(call, request)
            except TimeoutError:
                self._drop(call)
                raise _local_error(
                    grpc.StatusCode.DEADLINE_EXCEEDED, "no answer on the stream in time"
                ) from None
            except BaseException:
                self._drop(call)
                raise
        if answer.WhichOneof("result") == "error":
            raise stream_error(answer.error)
        return answer.response

    async def _exchange(self, call: Any, request: Any) -> Any:
        await call.write(self._wrap(request))
        answer = await call.read()
        if answer is aio.EOF:  # the server ended the stream: its status says why
            code = await call.code()
            raise _local_error(
                code if code != grpc.StatusCode.OK else grpc.StatusCode.UNAVAILABLE, "the stream ended"
            )
        if answer.request_id != getattr(request, "request_id", answer.request_id):
            raise _local_error(grpc.StatusCode.INTERNAL, "an answer to another request")
        return answer

    def _drop(self, call: Any) -> None:
        call.cancel()
        if self._call is call:
            self._call = None

    def cancel(self) -> None:
        """End the stream now (a client shutting down; an answer in flight is lost)."""
        call, self._call = self._call, None
        if call is not None:
            call.cancel()

    async def close(self) -> None:
        """Half-close the stream (the server ends it after its last answer)."""
        async with self._lock:
            call, self._call = self._call, None
            if call is not None and not call.done():
                try:
                    await call.done_writing()
                except (grpc.RpcError, asyncio.InvalidStateError):
                    call.cancel()

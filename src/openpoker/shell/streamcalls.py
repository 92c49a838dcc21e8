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
import contextlib
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


def result_of(answer: Any) -> Any:
    """What an answer with ``oneof result { response; error; ... }`` holds: its ``error`` raised
    as ``stream_error``, else the result that is set (``response`` for an act, ``start_hand``
    for a StartHand sent on the stream), else an empty ``response``."""
    which = answer.WhichOneof("result")
    if which == "error":
        raise stream_error(answer.error)
    return getattr(answer, which or "response")


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
        return result_of(answer)

    async def _exchange(self, call: Any, request: Any) -> Any:
        try:
            await call.write(self._wrap(request))
        except asyncio.InvalidStateError:  # the stream ended since ``call`` looked open: a fault
            raise _local_error(grpc.StatusCode.UNAVAILABLE, "the stream ended") from None
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


class BatchedCalls:
    """Unary-style calls gathered into the messages of one bidi stream
    (``TableService.ActBatchStream``): a client acting at many tables at once (a bot farm, a
    game server relaying its players) calls ``call`` from as many tasks as it likes, and the
    requests made while earlier messages are in flight leave together as the next message.

    * No timer: a message leaves as soon as fewer than ``depth`` are in flight, right after the
      tasks already due to run have run (``loop.call_soon``), so the callers an answer wakes
      put their next requests in the same message; an idle client's call leaves at once, alone.
      Under load messages grow by themselves, and the gRPC cost of a message (both ends) is
      shared by its requests. At most ``max_batch`` requests per message (the service takes 256).
    * Answers come back in the message's order and are matched by position; each caller gets
      its ``response``, or its ``error`` raised as the ``AioRpcError`` a unary call raises
      (``stream_error``), exactly as with ``StreamedCalls``.
    * A caller that times out or is cancelled just stops waiting: its request may still be
      decided (retry it with the same ``request_id``), and the stream stays up for the others.
    * If the stream breaks, every call in flight or queued fails (UNAVAILABLE, or the status the
      stream ended with; the outcome unknown: retry with the same ``request_id``); the next call
      opens a new stream.

    The service decides a stream's messages one after another and, within a message, a table's
    requests in the order they were made, so calls at one table keep their order.
    """

    def __init__(
        self,
        method: Any,
        *,
        wrap: Callable[[Any], Any],
        batch: Callable[[list[Any]], Any],
        metadata: Sequence[tuple[str, str]] = (),
        depth: int = 2,
        max_batch: int = 256,
    ) -> None:
        self._method = method  # a grpc.aio StreamStreamMultiCallable
        self._wrap = wrap  # request -> the stream's per-request message
        self._batch = batch  # list of those -> the stream's request message
        self._metadata = tuple(metadata)
        self._depth = depth
        self._max_batch = max_batch
        self._queued: list[tuple[Any, asyncio.Future[Any]]] = []
        self._in_flight: list[list[asyncio.Future[Any]]] = []  # per message sent, in order
        self._call: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._sender: asyncio.Task[None] | None = None
        self._flush_due = False
        self.messages = 0  # messages sent, for tests and figures
        self.requests = 0

    async def call(self, request: Any, *, deadline: float | None = None) -> Any:
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queued.append((request, waiter))
        self._kick()
        try:
            async with asyncio.timeout(deadline):
                answer = await waiter
        except TimeoutError:
            raise _local_error(grpc.StatusCode.DEADLINE_EXCEEDED, "no answer on the stream in time") from None
        finally:
            # A caller that stops waiting (deadline, cancellation) leaves its future cancelled:
            # the reader then skips its answer, and nothing is set on a future no one awaits.
            waiter.cancel()
        return result_of(answer)

    def _kick(self) -> None:
        """Send what is queued once the tasks already due have run (they may add to it)."""
        if not self._flush_due and self._sender is None:
            self._flush_due = True
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_due = False
        if self._sender is None and self._queued and len(self._in_flight) < self._depth:
            self._sender = asyncio.get_running_loop().create_task(self._send())

    async def _send(self) -> None:
        """Send queued requests while fewer than ``depth`` messages are in flight."""
        try:
            while self._queued and len(self._in_flight) < self._depth:
                take, self._queued = self._queued[: self._max_batch], self._queued[self._max_batch :]
                take = [item for item in take if not item[1].done()]  # callers that gave up
                if not take:
                    continue
                call = self._open()
                self._in_flight.append([w for _, w in take])
                self.messages += 1
                self.requests += len(take)
                try:
                    await call.write(self._batch([self._wrap(r) for r, _ in take]))
                except (grpc.RpcError, asyncio.InvalidStateError) as exc:  # the stream ended
                    self._broken(call, exc)
                except asyncio.CancelledError:
                    self._broken(call, _local_error(grpc.StatusCode.CANCELLED, "the stream was closed"))
                    raise
        finally:
            self._sender = None

    def _open(self) -> Any:
        if self._call is None:
            self._call = self._method(metadata=self._metadata)
            self._reader = asyncio.get_running_loop().create_task(self._read(self._call))
        return self._call

    async def _read(self, call: Any) -> None:
        try:
            while True:
                message = await call.read()
                if message is aio.EOF:
                    code = await call.code()
                    raise _local_error(
                        code if code != grpc.StatusCode.OK else grpc.StatusCode.UNAVAILABLE,
                        "the stream ended",
                    )
                waiters = self._in_flight.pop(0)
                answers = message.answers
                if len(answers) != len(waiters):
                    raise _local_error(grpc.StatusCode.INTERNAL, "an answer for another batch")
                for waiter, answer in zip(waiters, answers, strict=True):
                    if not waiter.done():
                        waiter.set_result(answer)
                self._kick()
        except asyncio.CancelledError:
            self._broken(call, _local_error(grpc.StatusCode.CANCELLED, "the stream was closed"))
            raise
        except Exception as exc:  # every waiter must hear of it
            self._broken(call, exc)

    def _broken(self, call: Any, exc: BaseException) -> None:
        """Fail every call in flight or queued on ``call`` and forget the stream."""
        if self._call is not call:
            return
        self._call = None
        call.cancel()
        error = (
            exc
            if isinstance(exc, grpc.RpcError)
            else _local_error(grpc.StatusCode.UNAVAILABLE, f"the stream broke: {exc!r}")
        )
        # Calls not yet sent fail too: their callers retry them (same request_id) as they would
        # a call that was in flight, and no queue is left waiting for a stream that is gone.
        waiting = [w for waiters in self._in_flight for w in waiters] + [w for _, w in self._queued]
        self._in_flight, self._queued = [], []
        for waiter in waiting:
            if not waiter.done():
                waiter.set_exception(error)

    async def close(self) -> None:
        """End the stream: calls still in flight fail (CANCELLED); the next call opens a new one."""
        for task in (self._sender, self._reader):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if self._call is not None:
            self._call.cancel()
        self._call = self._reader = self._sender = None

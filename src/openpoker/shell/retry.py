"""Retrying a gRPC call that failed for want of a service, never one the service answered.

Theory of operation. A failed call's status is either a fault on the way (the service, or the
road to it, is away: ``TRANSIENT_CODES``) or the service's answer about the request
(INVALID_ARGUMENT, FAILED_PRECONDITION, PERMISSION_DENIED, ABORTED for a stale version, ...),
which asking again cannot change. A fault is tried again with the SAME request, so the same
request id: every command is idempotent under its id, so a command that did land before its
answer was lost is answered as a duplicate, never applied twice. Between tries the wait is
capped exponential back-off with full jitter (uniform in ``[0, min(cap, first * 2**n)]``, as in
the AWS Architecture Blog's "Exponential Backoff and Jitter"), so clients cut off by one restart
do not all come back in the same instant. A caller bounds the tries (``attempts``) or the time
(``within`` seconds from the first try), or both; past the bound the last error is raised.

Each retry is logged at debug, a give-up at warning with the code and reason. gRPC aio has no
retry helper for streams, and the channel's own retry policy never retries a call whose request
may have reached the server, so this stays ours. Used by ``pokerctl``'s bots and the dealer's
clients (``services.dealer.clients``).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc

from openpoker.shell.client import rich_error
from openpoker.shell.logs import get_logger

T = TypeVar("T")

# Faults, not answers: the service is away or restarting (UNAVAILABLE), did not answer in time
# (DEADLINE_EXCEEDED: the outcome is unknown, hence the same request id), or sheds load for now
# (RESOURCE_EXHAUSTED: a quota refills).
TRANSIENT_CODES = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.RESOURCE_EXHAUSTED}
)


def transient(err: BaseException) -> bool:
    """Is ``err`` a fault worth trying again (rather than the service's answer)?"""
    return isinstance(err, grpc.RpcError) and err.code() in TRANSIENT_CODES


@dataclass(frozen=True, slots=True, kw_only=True)
class Backoff:
    """Waits of ``first`` seconds doubling to ``cap``, each drawn uniformly below that ceiling."""

    first: float = 0.05
    cap: float = 2.0

    def ceiling(self, attempt: int) -> float:
        """The longest wait after failed try ``attempt + 1`` (attempt 0 follows the first)."""
        return min(self.cap, self.first * 2.0 ** min(attempt, 64))

    def delay(self, attempt: int, rand: Callable[[], float] = random.random) -> float:
        return rand() * self.ceiling(attempt)


BACKOFF = Backoff()


async def retry(
    attempt: Callable[[], Awaitable[T]],
    *,
    what: str,
    backoff: Backoff = BACKOFF,
    attempts: int | None = None,
    within: float | None = None,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
    rand: Callable[[], float] = random.random,
    **fields: object,
) -> T:
    """``await attempt()`` until it answers, fails with an answer (raised at once), or fails
    transiently past ``attempts`` tries or ``within`` seconds (the last error raised). With
    neither bound it tries for ever (until cancelled). ``attempt`` must send the same request
    each time (``retry_unary`` does)."""
    started = clock()
    tries = 0
    while True:
        try:
            return await attempt()
        except grpc.RpcError as err:
            if not transient(err):
                raise
            tries += 1
            wait = backoff.delay(tries - 1, rand)
            elapsed = clock() - started
            if (attempts is not None and tries >= attempts) or (
                within is not None and elapsed + wait > within
            ):
                info = rich_error(err)
                get_logger().warning(
                    "retry.gave_up",
                    what=what,
                    code=info.code.name,
                    reason=info.reason,
                    message=info.message,
                    tries=tries,
                    seconds=round(elapsed, 3),
                    **fields,
                )
                raise
            get_logger().debug(
                "retry.again", what=what, code=err.code().name, tries=tries, delay=round(wait, 3), **fields
            )
            await sleep(wait)


async def retry_unary(
    method: Any,
    request: Any,
    *,
    timeout: float,  # noqa: ASYNC109 - each try's gRPC deadline, handed to the call
    metadata: Sequence[tuple[str, str]] = (),
    what: str,
    **options: Any,
) -> Any:
    """A unary call (``method``: a stub's multi-callable) sent again, the very same ``request``
    object each time, as ``retry`` decides; each try has its own ``timeout``."""

    async def once() -> Any:
        return await method(request, timeout=timeout, metadata=metadata)

    return await retry(once, what=what, **options)

"""Background cash-outs and refunds: retried until done, refused for good, or handed over.

A cash-out for a player who left (id ``<table>:<version>:left:<seat>``) or a refund of a
join's buy-in (``<rid>:refund``) carries a deterministic request id, so sending it again can
never pay twice. The wallet may be away, or refuse for now (HAND_NOT_CLOSED, PLAYER_IN_HAND:
the hand the chips come out of is not settled there yet, which lasts as long as the dealer is
away): such a call is tried again with capped exponential back-off (0.2 s doubling to 30 s)
for as long as this instance owns the table. It stops when

* the wallet accepts it (or answers that it already did: a duplicate);
* the wallet refuses it for good (a bad argument, a reused id, no such chips): logged as an
  error, since retrying cannot change the answer;
* this instance no longer owns the table: the next owner sends every recent cash-out again
  when it takes the table over, and its escrow reconciliation returns what no log accounts for
  (``services.table.reconcile``).

Cancelling the task (shutdown) stops it between or during tries.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from enum import StrEnum

import grpc

from openpoker.services.table.wallet import WalletRefused
from openpoker.shell.logs import get_logger

RETRY_FIRST = 0.2  # seconds before the second try
RETRY_CAP = 30.0  # the longest wait between two tries

# Statuses that say nothing about the request itself: the wallet (or the way to it) is away.
TRANSIENT_CODES = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.INTERNAL,
    }
)
# Refusals that end by themselves once the dealer settles or voids the hand in the wallet.
WAITING_REASONS = frozenset({"HAND_NOT_CLOSED", "PLAYER_IN_HAND"})


class Ended(StrEnum):
    DONE = "done"
    REFUSED = "refused"
    HANDED_OVER = "handed_over"


def retry_delay(attempt: int) -> float:
    """The wait before try ``attempt + 2`` (attempt 0 follows the first failure)."""
    return min(RETRY_CAP, RETRY_FIRST * (1 << min(attempt, 32)))


def permanent(exc: BaseException) -> bool:
    """Does retrying the same request stand no chance? Only a wallet refusal about the request
    itself; anything else (a connection error, an unexpected exception) is tried again."""
    if not isinstance(exc, WalletRefused):
        return False
    return exc.code not in TRANSIENT_CODES and exc.reason not in WAITING_REASONS


async def retry_money(
    send: Callable[[], Awaitable[object]],
    *,
    owned: Callable[[], Awaitable[bool]],
    what: str,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    **fields: object,
) -> Ended:
    """Call ``send`` until it succeeds, is refused for good, or ``owned()`` says the table has a
    new owner (checked before every try but the first: the caller owns the table then)."""
    log = get_logger()
    attempt = 0
    while True:
        try:
            await send()
            return Ended.DONE
        except Exception as exc:
            if permanent(exc):
                log.error(
                    f"table.{what}_refused", error=str(exc), reason=getattr(exc, "reason", ""), **fields
                )
                return Ended.REFUSED
            log.info(f"table.{what}_retry", attempt=attempt + 1, error=str(exc), **fields)
        await sleep(retry_delay(attempt))
        attempt += 1
        if not await owned():
            log.info(f"table.{what}_handed_over", **fields)
            return Ended.HANDED_OVER

"""Durable buy-in intents: a join or top-up whose chips the wallet moved is seated or refunded,
whoever crashes when.

Theory of operation. A join or top-up appends ``BuyInIntended{request_id, player, amount, kind}``
to the table's log before it asks the wallet for anything (``services.table.money``). From then
on the log says what is owed, and exactly one of two things closes the intent:

* the request's own envelope (command id ``request_id``): the chips back a seat. Its decider
  refuses unless the intent is still open (``IntentClosed``);
* ``BuyInCancelled`` (appended only while the intent is open), then the refund, then
  ``BuyInRefunded{chips}``. The refund is sent only once the cancel is in the log, so the seat
  can no longer land; ``BuyInRefunded`` only after the wallet confirmed it.

Settling an intent (``settle``) is idempotent and may run in several processes at once: cancel
it if it is open; if a refund is owed, make the wallet's state under the intent's ids certain by
sending the buy-in again under its own id (``<rid>:<kind>``: "already done", or done now, or
refused for good, in which case nothing ever moved), then the refund under ``<rid>:refund``,
then record it. Every step is keyed by the request id, so a repeat moves nothing.

Who settles. The flow that wrote the intent, when the table refuses the request (a top-up that
raced a hand's start), when the append's outcome is unknown (the re-read log tells), or when the
wallet's answer was "seen before". Every instance that loads the table for writing (start-up,
failover, a reload after a conflict) settles each intent the log leaves open or owed, except
those this process is driving (``Intents.live``); it does so in the background, retried while it
owns the table, because a refund may have to wait until the wallet closes the hand the player's
stack is reserved for, which needs this table to keep serving writes.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

from openpoker.services.table import retrying
from openpoker.services.table.background import Background, settled
from openpoker.services.table.wallet import Wallet
from openpoker.services.table.writer import Writer
from openpoker.shell.errors import FailedPrecondition
from openpoker.shell.logs import get_logger
from openpoker.tablelog.events import BuyInCancelled, BuyInIntended, BuyInRefunded
from openpoker.tablelog.model import LogEvent, TableModel


def intent_id(request_id: str) -> str:
    """The command id of the envelope that records the intent."""
    return f"{request_id}:intent"


def refund_id(request_id: str) -> str:
    """The wallet's id of the refund (the same as before intents existed)."""
    return f"{request_id}:refund"


def intent_holders(model: TableModel) -> frozenset[str]:
    """Players whose escrow may hold chips of an intent not closed yet."""
    return frozenset(i.player for i in (*model.intents.values(), *model.owed.values()))


class IntentClosed(FailedPrecondition):
    """The request's buy-in was cancelled (its chips are being refunded) before it could seat:
    send the request again with a new request id."""

    reason = "BUY_IN_CANCELLED"

    def __init__(self, *, request_id: str) -> None:
        super().__init__(
            f"request {request_id} was cancelled and its chips refunded: use a new id", request_id=request_id
        )


async def unmove(wallet: Wallet, table_id: str, intent: BuyInIntended) -> int:
    """Undo the intent's move in the wallet: the chips refunded (0 when none ever moved)."""
    try:
        await wallet.buy_in(
            request_id=f"{intent.request_id}:{intent.kind}",
            table_id=table_id,
            player=intent.player,
            amount=intent.amount,
        )
    except Exception as exc:
        if retrying.permanent(exc):
            return 0  # the wallet checks an id before the funds: nothing ever moved under it
        raise
    await wallet.cash_out(
        request_id=refund_id(intent.request_id), table_id=table_id, player=intent.player, amount=intent.amount
    )
    return intent.amount


class Intents:
    def __init__(
        self,
        *,
        wallet: Wallet,
        writer: Writer,
        background: Background,
        moving: Callable[[str, str], AbstractContextManager[None]],
    ) -> None:
        self._wallet = wallet
        self._writer = writer
        self._background = background
        self._moving = moving  # marks the player's money in flight (reconciliation skips them)
        self._live: Counter[tuple[str, str]] = Counter()  # (table, request id) driven here
        self._log = get_logger()

    @contextlib.contextmanager
    def driving(self, table_id: str, request_id: str) -> Iterator[None]:
        """Mark an intent as driven by this process (a reload does not settle it behind us)."""
        key = (table_id, request_id)
        self._live[key] += 1
        try:
            yield
        finally:
            self._live[key] -= 1
            if self._live[key] <= 0:
                del self._live[key]

    def live(self, table_id: str, request_id: str) -> bool:
        return (table_id, request_id) in self._live

    def resume(self, table_id: str, intent: BuyInIntended) -> None:
        """Followup of a load: settle ``intent`` in the background unless this process drives it."""
        if self.live(table_id, intent.request_id):
            return
        self.settle_later(table_id, intent)

    def settle_later(self, table_id: str, intent: BuyInIntended, *, cancelled: bool = False) -> None:
        """``settle`` in the background, retried while we own the table (``cancelled`` kept:
        a retry must not refund what the caller knows never moved)."""
        # Marked before the task runs: a pass of the reconciliation between now and then must
        # already see the player's money in flight.
        driving = self.driving(table_id, intent.request_id)
        moving = self._moving(table_id, intent.player)
        driving.__enter__()
        moving.__enter__()

        async def run() -> None:
            try:
                await retrying.retry_money(
                    lambda: self.settle(table_id, intent, cancelled=cancelled),
                    owned=lambda: self._writer.still_owned(table_id),
                    what="refund",
                    table_id=table_id,
                    player=intent.player,
                    chips=intent.amount,
                    request_id=refund_id(intent.request_id),
                )
            finally:
                moving.__exit__(None, None, None)
                driving.__exit__(None, None, None)

        self._background.spawn(run()).add_done_callback(settled)

    async def settle(self, table_id: str, intent: BuyInIntended, *, cancelled: bool = False) -> int:
        """Cancel ``intent`` if open, refund what is owed, record it: the chips refunded now (0
        when the request seated, or someone refunded already). ``cancelled``: the caller knows no
        chip moved under the intent (the wallet had seen its buy-in id before): cancel and record
        it as refunded with 0 at once."""
        rid = intent.request_id

        def cancel(model: TableModel) -> tuple[LogEvent, ...]:
            if rid not in model.intents:
                return ()
            if cancelled:
                return (BuyInCancelled(request_id=rid), BuyInRefunded(request_id=rid, chips=0))
            return (BuyInCancelled(request_id=rid),)

        done = await self._writer.execute(table_id, request_id=f"{rid}:cancel", decide=cancel)
        if rid not in done.model.owed:
            return 0  # seated, or refunded by someone else already
        try:
            chips = await unmove(self._wallet, table_id, intent)
        except Exception as exc:
            if not retrying.permanent(exc):
                raise
            # Refused for good (no such chips in escrow?): recorded as none returned, so that
            # the escrow reconciliation may return whatever is left, under its own ids.
            self._log.error("table.refund_refused", table_id=table_id, request_id=rid, error=str(exc))
            chips = 0

        def record(model: TableModel) -> tuple[LogEvent, ...]:
            return (BuyInRefunded(request_id=rid, chips=chips),) if rid in model.owed else ()

        await self._writer.execute(table_id, request_id=f"{rid}:refunded", decide=record)
        return chips

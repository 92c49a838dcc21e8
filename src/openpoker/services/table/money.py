"""Money flows between the table and the wallet: buy-ins, refunds and cash-outs.

Join and top-up first append a ``BuyInIntended`` to the table's log, then move chips cash ->
escrow in the wallet (request id ``<rid>:buy-in`` or ``:top-up``), then append the request,
which closes the intent. If the table refuses the request, or its outcome is unknown, or the
wallet had seen the buy-in id before, the intent is settled: cancelled in the log, refunded
(``<rid>:refund``), recorded (``services.table.intents``); a crash at any point leaves the intent
in the log for whichever instance loads the table next. If the wallet says the buy-in id was
seen before while the table never recorded the request, the request is refused
(REQUEST_ID_SPENT) and that earlier attempt's chips go back by the escrow reconciliation
(refunded here only when it is off). Leaving appends first, then cashes out each ``PlayerLeft``
with the id ``<table>:<version>:left:<seat>`` (deterministic, so the retried request, the
background retry for players who leave when a hand ends, and a new owner's re-sending of recent
leaves never pay twice). Background cash-outs and refunds retry with capped back-off while we own
the table (``services.table.retrying``); escrow no log accounts for goes back to cash by
``services.table.reconcile``, which skips the players whose flows are in flight here
(``in_flight``) and those with an intent not closed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Iterator, Sequence

from openpoker.services.table import retrying
from openpoker.services.table.background import Background, settled
from openpoker.services.table.errors import RequestSpent
from openpoker.services.table.intents import IntentClosed, Intents, intent_id
from openpoker.services.table.wallet import Wallet
from openpoker.services.table.writer import Committed, Decider, Writer
from openpoker.tablelog.events import BuyInIntended
from openpoker.tablelog.model import Left, LogEvent, TableModel


def cash_out_id(table_id: str, version: int, seat: int) -> str:
    return f"{table_id}:{version}:left:{seat}"


class MoneyFlows:
    def __init__(self, *, wallet: Wallet, writer: Writer, background: Background, reconciling: bool) -> None:
        self._wallet = wallet
        self._writer = writer
        self._background = background
        self._reconciling = reconciling  # escrow reconciliation is on (it returns spent buy-ins)
        self._flows: Counter[tuple[str, str]] = Counter()  # (table, player) -> money flows in flight
        self._running: dict[tuple[str, str], asyncio.Task[Committed]] = {}  # (table, rid) -> flow
        self.intents = Intents(wallet=wallet, writer=writer, background=background, moving=self._moving)

    def in_flight(self, table_id: str) -> frozenset[str]:
        """Players with a buy-in, refund or cash-out in flight at the table."""
        return frozenset(p for (t, p) in self._flows if t == table_id)

    # -- cash-outs --------------------------------------------------------------------------

    async def cash_out(self, table_id: str, version: int, left: Left) -> None:
        await self._wallet.cash_out(
            request_id=cash_out_id(table_id, version, left.seat),
            table_id=table_id,
            player=left.player,
            amount=left.chips,
            after_hand=self._after_hand(table_id, left),
        )

    def _after_hand(self, table_id: str, left: Left) -> int:
        """The hand the wallet must have closed before paying ``left`` out. A hand voided here
        may never have been reserved in the wallet (that can be why it was voided), so its number
        would hold the chips forever: the wallet's own rule (no cash-out while the stack is
        reserved) is then enough."""
        model = self._writer.tables.get(table_id)
        n = left.after_hand
        record = model.hand_number(n) if n and model is not None else None
        return 0 if record is not None and record.voided else n

    def cash_out_later(self, table_id: str, version: int, left: Left) -> None:
        """``cash_out`` in the background, retried while we own the table."""
        self._background.spawn(self._cash_out_retrying(table_id, version, left))

    async def _cash_out_retrying(self, table_id: str, version: int, left: Left) -> None:
        # The wallet refuses until the hand the chips come out of is settled or voided there
        # (HAND_NOT_CLOSED, PLAYER_IN_HAND); the id is deterministic, so retrying is safe.
        with self._moving(table_id, left.player):
            await retrying.retry_money(
                lambda: self.cash_out(table_id, version, left),
                owned=lambda: self._writer.still_owned(table_id),
                what="cash_out",
                table_id=table_id,
                seat=left.seat,
                chips=left.chips,
            )

    async def _refund(self, request_id: str, table_id: str, player: str, amount: int) -> None:
        rid = f"{request_id}:refund"

        async def send() -> None:
            await self._wallet.cash_out(request_id=rid, table_id=table_id, player=player, amount=amount)

        try:
            await send()
        except Exception:

            async def retry() -> None:
                with self._moving(table_id, player):
                    await retrying.retry_money(
                        send,
                        owned=lambda: self._writer.still_owned(table_id),
                        what="refund",
                        table_id=table_id,
                        player=player,
                        chips=amount,
                        request_id=rid,
                    )

            self._background.spawn(retry())

    @contextlib.contextmanager
    def _moving(self, table_id: str, player: str) -> Iterator[None]:
        """Mark a money flow of ``player`` at the table in flight (reconciliation skips them)."""
        self._flows[(table_id, player)] += 1
        try:
            yield
        finally:
            self._moving_done(table_id, player)

    def _moving_done(self, table_id: str, player: str) -> None:
        self._flows[(table_id, player)] -= 1
        if self._flows[(table_id, player)] <= 0:
            del self._flows[(table_id, player)]

    # -- buy-ins ----------------------------------------------------------------------------

    async def with_escrow(
        self,
        table_id: str,
        *,
        request_id: str,
        player: str,
        amount: int,
        kind: str,
        decide: Decider,
    ) -> Committed:
        """Intent in the log, then the wallet (cash -> escrow), then the table; the intent is
        settled (cancelled and refunded) if the table refuses (``services.table.intents``)."""
        running = self._running.get((table_id, request_id))
        if running is not None:  # a retry while the first attempt is still under way here
            return await asyncio.shield(running)
        intent = BuyInIntended(request_id=request_id, player=player, amount=amount, kind=kind)

        def intend(model: TableModel) -> tuple[LogEvent, ...]:
            known = request_id in model.requests or intent_id(request_id) in model.requests
            if known or request_id in model.intents or request_id in model.owed:
                return ()
            decide(model)  # dry run: an illegal request touches no money and records nothing
            return (intent,)

        # Marked before the intent is appended: a reload of the table (which settles the intents
        # it finds open) must leave this one to this flow.
        driving = self.intents.driving(table_id, request_id)
        moving = self._moving(table_id, player)
        driving.__enter__()
        moving.__enter__()
        try:
            recorded = await self._writer.execute(table_id, request_id=intent_id(request_id), decide=intend)
        except BaseException:
            moving.__exit__(None, None, None)
            driving.__exit__(None, None, None)
            raise
        if not recorded.events:
            moving.__exit__(None, None, None)
            driving.__exit__(None, None, None)
            model = recorded.model
            prior = model.requests.get(request_id)
            if prior is not None:
                return Committed(model=model, outcome=prior, duplicate=True, events=())
            raise RequestSpent(request_id=request_id)  # cancelled, or driven by another instance
        # Once the intent is written, the flow runs to its end (seated, or settled) even if the
        # caller goes away; a crash leaves the intent for the next load to settle.
        flow = self._background.spawn(self._buy_in_then_append(table_id, intent, decide))
        self._running[(table_id, request_id)] = flow

        def done(_: object) -> None:
            self._running.pop((table_id, request_id), None)
            moving.__exit__(None, None, None)
            driving.__exit__(None, None, None)

        flow.add_done_callback(settled)
        flow.add_done_callback(done)
        return await asyncio.shield(flow)

    async def _buy_in_then_append(self, table_id: str, intent: BuyInIntended, decide: Decider) -> Committed:
        request_id = intent.request_id
        try:
            seen = await self._wallet.buy_in(
                request_id=f"{request_id}:{intent.kind}",
                table_id=table_id,
                player=intent.player,
                amount=intent.amount,
            )
        except asyncio.CancelledError:
            raise  # shutting down: the next load settles the intent
        except BaseException:
            await self._settle(table_id, intent)  # moved or not, the wallet is asked again
            raise
        if seen:
            # An attempt before this intent (the table forgot the request id since) moved the
            # chips: nothing moved under this intent. The escrow reconciliation returns that
            # attempt's chips; without it, the refund is sent here (the id it always had).
            await self._settle(table_id, intent, cancelled=True)
            if not self._reconciling:
                await self._refund(request_id, table_id, intent.player, intent.amount)
            raise RequestSpent(request_id=request_id)

        def seat(model: TableModel) -> Sequence[LogEvent]:
            if request_id not in model.intents:  # cancelled by a new owner: its chips go back
                raise IntentClosed(request_id=request_id)
            return decide(model)

        try:
            return await self._writer.execute(table_id, request_id=request_id, decide=seat)
        except asyncio.CancelledError:
            raise
        except BaseException:
            # Refused, stale, fenced, or unknown: ``settle`` re-reads the log, which says
            # whether the request seated; if not, it is cancelled and refunded.
            await self._settle(table_id, intent)
            raise

    async def _settle(self, table_id: str, intent: BuyInIntended, *, cancelled: bool = False) -> None:
        """Settle now if possible, else in the background (retried while we own the table)."""
        try:
            await self.intents.settle(table_id, intent, cancelled=cancelled)
        except Exception:
            self.intents.settle_later(table_id, intent, cancelled=cancelled)

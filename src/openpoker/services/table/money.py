"""Money flows between the table and the wallet: buy-ins, refunds and cash-outs.

Join and top-up move chips cash -> escrow in the wallet first (request id ``<rid>:buy-in``),
then append. If the append definitely failed, the same flow refunds (``<rid>:refund``) before
answering; if its outcome is unknown, the re-read log decides. If the wallet says the buy-in id
was seen before while the table never recorded the request, the request is refused
(REQUEST_ID_SPENT) and the earlier attempt's chips go back by the escrow reconciliation
(refunded here only when it is off): escrow is never stranded and never backs chips twice. A
refund that cannot reach the wallet is retried in the background. Leaving appends first, then
cashes out each ``PlayerLeft`` with the id ``<table>:<version>:left:<seat>`` (deterministic, so
the retried request, and the background retry for players who leave when a hand ends, never pay
twice). Background cash-outs and refunds retry with capped back-off while we own the table
(``services.table.retrying``); escrow no log accounts for (a crash between a buy-in and its
append) goes back to cash by ``services.table.reconcile``, which skips the players whose flows
are in flight here (``in_flight``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Iterator

from openpoker.engine.errors import EngineError
from openpoker.eventstore.loading import LogQuarantined
from openpoker.services.table import retrying
from openpoker.services.table.background import Background, settled
from openpoker.services.table.errors import RequestSpent
from openpoker.services.table.wallet import Wallet
from openpoker.services.table.writer import Committed, Decider, Writer, wire_seats
from openpoker.shell.errors import ServiceError
from openpoker.tablelog.model import Left


def cash_out_id(table_id: str, version: int, seat: int) -> str:
    return f"{table_id}:{version}:left:{seat}"


class MoneyFlows:
    def __init__(self, *, wallet: Wallet, writer: Writer, background: Background, reconciling: bool) -> None:
        self._wallet = wallet
        self._writer = writer
        self._background = background
        self._reconciling = reconciling  # escrow reconciliation is on (it returns spent buy-ins)
        self._flows: Counter[tuple[str, str]] = Counter()  # (table, player) -> money flows in flight

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
        """Wallet first (cash -> escrow), then the table; refund if the table refuses."""
        async with self._writer.lock(table_id):
            model, _ = await self._writer.owned(table_id)
            prior = model.requests.get(request_id)
            if prior is not None:
                return Committed(model=model, outcome=prior, duplicate=True, events=())
            try:
                decide(model)  # dry run: an illegal request touches no money
            except EngineError as exc:
                wire_seats(exc)  # refused here, not in the writer: the API's seat numbers too
                raise
            self._flows[(table_id, player)] += 1  # marked under the lock: see reconcile.py
        # Once money moves, the flow runs to its end (seated, or refunded) even if the caller
        # goes away: a client cancelled between the wallet's buy-in and the append would leave
        # the chips in escrow with no seat behind them.
        flow = self._background.spawn(
            self._buy_in_then_append(
                table_id, request_id=request_id, player=player, amount=amount, kind=kind, decide=decide
            )
        )
        flow.add_done_callback(settled)
        flow.add_done_callback(lambda _: self._moving_done(table_id, player))
        return await asyncio.shield(flow)

    async def _buy_in_then_append(
        self, table_id: str, *, request_id: str, player: str, amount: int, kind: str, decide: Decider
    ) -> Committed:
        seen = await self._wallet.buy_in(
            request_id=f"{request_id}:{kind}", table_id=table_id, player=player, amount=amount
        )
        if seen:
            async with self._writer.lock(table_id):
                model, _ = await self._writer.owned(table_id)
                prior = model.requests.get(request_id)
            if prior is not None:
                return Committed(model=model, outcome=prior, duplicate=True, events=())
            if not self._reconciling:
                await self._refund(request_id, table_id, player, amount)
            # else the escrow reconciliation returns the earlier attempt's chips, under one id per
            # orphan: a refund here, under another id, could come after that return (a late
            # retry) and take chips that back a seat taken since, or race the first attempt.
            raise RequestSpent(request_id=request_id)
        try:
            return await self._writer.execute(table_id, request_id=request_id, decide=decide)
        except (EngineError, ServiceError):
            # Refused by the engine, stale, fenced, or every append lost its race: nothing of
            # this request is in the log, so the chips go back.
            await self._refund(request_id, table_id, player, amount)
            raise
        except BaseException:
            # Ambiguous (e.g. the append's outcome is unknown): refund only if the log says the
            # request did not land; if the log cannot be read either, keep the escrow: a retry
            # with the same request id either finds the request or refunds (REQUEST_ID_SPENT).
            if not await self._landed(table_id, request_id):
                await self._refund(request_id, table_id, player, amount)
            raise

    async def _landed(self, table_id: str, request_id: str) -> bool:
        """Is ``request_id`` in the table's log? (True when that cannot be known.)"""
        self._writer.forget(table_id)
        try:
            async with self._writer.lock(table_id):
                model, _ = await self._writer.owned(table_id)
                return request_id in model.requests
        except LogQuarantined:
            pass  # nothing is written past the foreign message: the good prefix tells
        except Exception:
            return True
        try:
            good = await self._writer.store.load(table_id)
        except Exception:
            return True
        return good is not None and request_id in good.requests

"""The table application, as the handlers see it: one writer per table, load -> fold -> decide
-> append -> evolve, with the wallet first where chips come in.

``TableApp`` is a facade over collaborators that each hold one concern:

* ``writer.Writer``: the command path and fencing (the cached models, their locks, the epochs
  and partitions we hold, appends and retries, snapshots after replies);
* ``money.MoneyFlows``: intent, buy-in then append, refunds, cash-outs retried, money in flight
  (``intents.Intents``: buy-in intents settled from the log);
* ``hand_index.HandIndex``: where finished hands are in the log, for hands older than a model's
  own index;
* ``reconcile_side.ReconcileSide``: what the escrow reconciliation asks of this instance (and
  its ``Reconciler``, when on);
* ``commands.Commands`` and ``queries.Queries``: the commands and the reads;
* ``background.Background``: the tasks nobody awaits, cancelled or drained together.

The writer starts the work that follows a load or an append (cash-outs, hand index entries,
reconciling a table taken over, sweeping a partition taken) through its ``Followups``, wired
here. Each module's docstring says how its part works.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncGenerator, Callable
from typing import TypeVar

from openpoker.engine import table
from openpoker.engine.cards import Card
from openpoker.engine.rules import Rules
from openpoker.services.table.background import Background
from openpoker.services.table.commands import Commands
from openpoker.services.table.hand_index import HandIndex
from openpoker.services.table.money import MoneyFlows, cash_out_id
from openpoker.services.table.ownership import Ownership
from openpoker.services.table.queries import HandAt, Queries
from openpoker.services.table.reconcile_side import ReconcileSide
from openpoker.services.table.site_allowance import SiteAllowances
from openpoker.services.table.wallet import Wallet
from openpoker.services.table.watchers import LocalWatchers, Render
from openpoker.services.table.writer import Committed, Decider, Followups, Precheck, Writer
from openpoker.tablelog.allowances import AllowanceRecords, MemoryAllowanceRecords
from openpoker.tablelog.model import TableModel
from openpoker.tablelog.store import TableStore

T = TypeVar("T")  # what a watcher renders for each version


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class TableApp:
    def __init__(
        self,
        *,
        store: TableStore,
        ownership: Ownership,
        wallet: Wallet,
        clock: Callable[[], dt.datetime] = _now,
        snapshot_every: int = 1,
        max_attempts: int = 3,
        reconcile_every: float = 0.0,  # 0: no escrow reconciliation (see services.table.reconcile)
        reconcile_grace: float = 30.0,
        # Take the free partitions of existing tables, so that every table has an owner that
        # reconciles its escrow, used or not (``claim``); with reconciliation only.
        reconcile_claim: bool = False,
        # The site-wide record of all-ins due to disconnection (``services.table.site_allowance``);
        # by default one of this app's own, for tests that play a single instance.
        allowances: AllowanceRecords | None = None,
    ) -> None:
        self.store = store
        self.ownership = ownership
        self.wallet = wallet
        self.watchers = LocalWatchers()  # WatchTable streams on tables this instance writes
        self.background = Background()
        self.writer = Writer(
            store=store,
            ownership=ownership,
            watchers=self.watchers,
            background=self.background,
            clock=clock,
            snapshot_every=snapshot_every,
            max_attempts=max_attempts,
        )
        self.hand_index = HandIndex(store=store, models=self.writer.tables, background=self.background)
        self.money = MoneyFlows(
            wallet=wallet, writer=self.writer, background=self.background, reconciling=reconcile_every > 0
        )
        self.side = ReconcileSide(
            writer=self.writer,
            money=self.money,
            wallet=wallet,
            background=self.background,
            every=reconcile_every,
            grace=reconcile_grace,
            claim=reconcile_claim,
        )
        self.reconciler = self.side.reconciler
        self.writer.followups = Followups(
            cash_out=self.money.cash_out_later,
            index=self.hand_index.later,
            fenced=self.side.gained,
            took_partition=self.side.took_partition,
            intent=self.money.intents.resume,
        )
        self.allowances = SiteAllowances(allowances if allowances is not None else MemoryAllowanceRecords())
        self.commands = Commands(
            writer=self.writer, money=self.money, hands=self.hand_index, allowances=self.allowances
        )
        self.queries = Queries(writer=self.writer, hands=self.hand_index)

    def now(self) -> dt.datetime:
        return self.writer.clock()

    def forget(self, table_id: str) -> None:
        """Drop the cached model of ``table_id`` (re-read on next use)."""
        self.writer.forget(table_id)

    def drop_partition(self, partition: int) -> None:
        """Our lease of ``partition`` is gone: forget its tables (re-read on next use)."""
        self.writer.drop_partition(partition)

    async def execute(
        self,
        table_id: str,
        *,
        request_id: str,
        decide: Decider,
        expected_version: int | None = None,
        precheck: Precheck | None = None,
    ) -> Committed:
        """Decide and append one command (``Writer.execute``)."""
        return await self.writer.execute(
            table_id,
            request_id=request_id,
            decide=decide,
            expected_version=expected_version,
            precheck=precheck,
        )

    @staticmethod
    def cash_out_id(table_id: str, version: int, seat: int) -> str:
        return cash_out_id(table_id, version, seat)

    async def close(self) -> None:
        self.watchers.close()
        if self.reconciler is not None:
            await self.reconciler.close()
        await self.background.cancel()
        await self.ownership.close()

    async def drain(self) -> None:
        """Wait for background work (snapshots, cash-outs) to finish (tests, shutdown)."""
        await self.background.drain()

    # -- commands (``services.table.commands``) ---------------------------------------------

    async def create_table(self, *, request_id: str, table_id: str, rules: Rules) -> Committed:
        return await self.commands.create_table(request_id=request_id, table_id=table_id, rules=rules)

    async def join(
        self, *, request_id: str, table_id: str, player: str, seat: int | None, buy_in: int, wait: bool
    ) -> Committed:
        return await self.commands.join(
            request_id=request_id, table_id=table_id, player=player, seat=seat, buy_in=buy_in, wait=wait
        )

    async def top_up(self, *, request_id: str, table_id: str, player: str, amount: int) -> Committed:
        return await self.commands.top_up(
            request_id=request_id, table_id=table_id, player=player, amount=amount
        )

    async def seat_command(
        self, *, request_id: str, table_id: str, player: str, make: Callable[[int], table.Command]
    ) -> Committed:
        """A player's command about their own seat (sit out, sit in, post or wait)."""
        return await self.commands.seat_command(
            request_id=request_id, table_id=table_id, player=player, make=make
        )

    async def sit_out(self, *, request_id: str, table_id: str, player: str) -> Committed:
        return await self.commands.sit_out(request_id=request_id, table_id=table_id, player=player)

    async def sit_in(self, *, request_id: str, table_id: str, player: str, wait: bool) -> Committed:
        return await self.commands.sit_in(request_id=request_id, table_id=table_id, player=player, wait=wait)

    async def leave(self, *, request_id: str, table_id: str, player: str) -> tuple[Committed, int, bool]:
        """Leave: (committed, chips cashed out, pending). Cash-outs follow the append."""
        return await self.commands.leave(request_id=request_id, table_id=table_id, player=player)

    async def act(
        self,
        *,
        request_id: str,
        table_id: str,
        player: str,
        hand_id: str,
        kind: str,
        amount: int,
        expected_version: int | None,
    ) -> Committed:
        return await self.commands.act(
            request_id=request_id,
            table_id=table_id,
            player=player,
            hand_id=hand_id,
            kind=kind,
            amount=amount,
            expected_version=expected_version,
        )

    async def start_hand(
        self,
        *,
        request_id: str,
        table_id: str,
        hand_id: str,
        deck: tuple[Card, ...],
        commitment: str,
        expected_version: int | None,
    ) -> Committed:
        return await self.commands.start_hand(
            request_id=request_id,
            table_id=table_id,
            hand_id=hand_id,
            deck=deck,
            commitment=commitment,
            expected_version=expected_version,
        )

    async def time_out(
        self, *, request_id: str, table_id: str, hand_id: str, seat: int, expected_version: int, at_ms: int
    ) -> Committed:
        return await self.commands.time_out(
            request_id=request_id,
            table_id=table_id,
            hand_id=hand_id,
            seat=seat,
            expected_version=expected_version,
            at_ms=at_ms,
        )

    async def report_connection(
        self,
        *,
        request_id: str,
        table_id: str,
        player: str,
        connected: bool,
        at_ms: int,
        expected_version: int | None = None,
    ) -> Committed:
        return await self.commands.report_connection(
            request_id=request_id,
            table_id=table_id,
            player=player,
            connected=connected,
            at_ms=at_ms,
            expected_version=expected_version,
        )

    async def void_hand(self, *, request_id: str, table_id: str, hand_id: str, reason: str) -> Committed:
        return await self.commands.void_hand(
            request_id=request_id, table_id=table_id, hand_id=hand_id, reason=reason
        )

    async def reset_allowance(self, *, request_id: str, table_id: str, player: str) -> Committed:
        """Reset ``player``'s all-in allowance at the table, as of now."""
        at_ms = int(self.now().timestamp() * 1000)
        return await self.commands.reset_allowance(
            request_id=request_id, table_id=table_id, player=player, at_ms=at_ms
        )

    async def reset_allowance_everywhere(self, *, request_id: str, player: str) -> int:
        """Reset ``player``'s all-in allowance at every table, as of now (the protections that
        counted in the site-wide record)."""
        at_ms = int(self.now().timestamp() * 1000)
        return await self.commands.reset_allowance_everywhere(
            request_id=request_id, player=player, at_ms=at_ms
        )

    # -- queries (``services.table.queries``) -----------------------------------------------

    async def model(self, table_id: str) -> TableModel:
        """The folded table: from the cache when we own it, else a fresh fold of the log."""
        return await self.queries.model(table_id)

    async def tables(self) -> list[str]:
        return await self.queries.tables()

    async def hand(self, table_id: str, hand_id: str) -> tuple[TableModel, HandAt]:
        return await self.queries.hand(table_id, hand_id)

    async def history(self, table_id: str, hand_id: str) -> tuple[TableModel, HandAt, list[object]]:
        """A finished hand: its log and the raw stored envelopes (first to last version)."""
        return await self.queries.history(table_id, hand_id)

    def watch(
        self, table_id: str, from_version: int, render: Render[T], *, key: object = None
    ) -> AsyncGenerator[T, None]:
        """``render(table, actions added)`` after ``from_version`` and after every later
        envelope (``Queries.watch``)."""
        return self.queries.watch(table_id, from_version, render, key=key)

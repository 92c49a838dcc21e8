"""What the escrow reconciliation (``services.table.reconcile``) needs of this instance's tables
(its ``TableSide``): the tables of the partitions we hold, who the log says holds chips at each,
the money flows in flight; and the sweep of every table of a partition when we take it, so a
table nobody uses is reconciled too. Owns the ``Reconciler`` when reconciliation is on."""

from __future__ import annotations

import asyncio
import contextvars

from openpoker.services.table.background import Background
from openpoker.services.table.errors import TooManyConflicts
from openpoker.services.table.intents import intent_holders
from openpoker.services.table.money import MoneyFlows
from openpoker.services.table.ownership import PartitionHeld
from openpoker.services.table.reconcile import Reconciler, Seats, holders, seats_of
from openpoker.services.table.wallet import Wallet
from openpoker.services.table.writer import Writer
from openpoker.shell.logs import get_logger


class ReconcileSide:
    def __init__(
        self,
        *,
        writer: Writer,
        money: MoneyFlows,
        wallet: Wallet,
        background: Background,
        every: float,  # 0: no escrow reconciliation
        grace: float,
        claim: bool,
    ) -> None:
        self._writer = writer
        self._money = money
        self._background = background
        self._claim = claim
        # Partitions taken since the last sweep of their tables, and who holds chips at tables
        # we have not loaded, by the log's last sequence.
        self._to_sweep: set[int] = set()
        self._sweeper: asyncio.Task[None] | None = None
        self._log_holders: dict[str, tuple[int, frozenset[str], Seats]] = {}
        self.reconciler = (
            Reconciler(wallet=wallet, side=self, every=every, grace=grace) if every > 0 else None
        )
        self._log = get_logger()

    def gained(self, table_id: str) -> None:
        """We took ``table_id`` over: reconcile it (now and after the grace period)."""
        if self.reconciler is not None:
            self.reconciler.gained(table_id)

    def took_partition(self, partition: int) -> None:
        """We hold ``partition`` (again, or with a new epoch): reconcile every table in it soon,
        not only those something loads."""
        if self.reconciler is None or not self.reconciler.started:
            return  # sweeps are background work of a started reconciler (as the server runs it)
        self._to_sweep.add(partition)
        if self._sweeper is None or self._sweeper.done():
            # A fresh context: the sweep is not part of the RPC that happened to take the lease.
            self._sweeper = self._background.spawn(self._sweep_partitions(), context=contextvars.Context())

    async def _sweep_partitions(self) -> None:
        """Hand the tables of the partitions taken since the last sweep to the reconciler: one
        listing of the tables for all the partitions taken meanwhile (a restart takes many)."""
        while self._to_sweep and self.reconciler is not None:
            await asyncio.sleep(0)  # let the partitions taken at the same moment join this sweep
            partitions, self._to_sweep = self._to_sweep, set()
            try:
                tables = await self._writer.store.events.tables()
            except Exception as exc:  # the periodic pass lists them again
                self._log.warning("table.reconcile_sweep_failed", error=str(exc))
                return
            self.reconciler.sweep([t for t in tables if self._writer.partition(t) in partitions])

    # -- reconcile.TableSide ----------------------------------------------------------------

    async def claim(self) -> None:
        """Take each free partition that holds a table whose escrow its log does not account for
        (``reconcile_claim``): a table nobody uses after a restart then gets an owner, which
        returns the orphan. A free partition with nothing to return stays free (partitions go
        to the instances their traffic reaches first, so several instances share the tables),
        and one another instance holds stays theirs; a partition we take is swept
        (``took_partition``)."""
        if not self._claim or self.reconciler is None:
            return
        writer = self._writer
        free: dict[int, list[str]] = {}
        for table_id in await writer.store.events.tables():
            partition = writer.partition(table_id)
            if partition not in writer.partitions:
                free.setdefault(partition, []).append(table_id)
        looked: list[str] = []
        for partition, tables in sorted(free.items()):
            if await writer.ownership.holder_of(partition) in (None, writer.ownership.name):
                looked.extend(tables)  # else another instance's: it reconciles them
        orphaned = await self.reconciler.orphaned(looked)
        for partition in sorted({writer.partition(t) for t in orphaned}):
            try:
                epoch = await writer.ownership.epoch(partition)
            except PartitionHeld:
                continue
            if writer.partitions.get(partition) != epoch:
                writer.took_partition(partition, epoch)

    async def reconcilable_tables(self) -> list[str]:
        """Every table of the partitions we hold, loaded or not, and the loaded ones."""
        held = set(self._writer.partitions)
        listed = [t for t in await self._writer.store.events.tables() if self._writer.partition(t) in held]
        seen = set(listed)
        return listed + [t for t in self._writer.tables if t not in seen]

    async def log_holders(self, table_id: str) -> frozenset[str] | None:
        """Who the log says holds chips at a table we have not loaded, without loading it for
        writing (no fence, nothing cached but this answer, kept while the log's last entry is the
        same: an idle table costs one read per pass). None for a loaded table."""
        if table_id in self._writer.tables:
            return None
        return (await self._log_view(table_id))[0]

    async def _log_view(self, table_id: str) -> tuple[frozenset[str], Seats | None]:
        """``holders`` and ``seats_of`` of the log as it is now (remembered by its last sequence)."""
        store = self._writer.store
        last = await store.events.last(store.subject(table_id))
        if last is None:
            return frozenset(), None
        known = self._log_holders.get(table_id)
        if known is not None and known[0] == last.sequence:
            return known[1], known[2]
        model = await store.load(table_id)
        if model is None:
            return frozenset(), None
        found, seats = holders(model), seats_of(model)
        self._log_holders[table_id] = (model.sequence, found, seats)
        return found, seats

    async def seats(self, table_id: str, *, read: bool) -> Seats | None:
        model = self._writer.tables.get(table_id)
        if model is not None:
            return seats_of(model)
        if not read:
            known = self._log_holders.get(table_id)
            if known is None or not known[2].stacks:
                return None  # nobody seated as last read (or never read): no read for this
        return (await self._log_view(table_id))[1]

    def money_in_flight(self, table_id: str) -> frozenset[str]:
        return self._money.in_flight(table_id)

    async def escrow_holders(self, table_id: str) -> frozenset[str]:
        """Players the log says have chips here, from a model checked against the log's last
        entry under the table's lock (a lagging model would not know who just sat down)."""
        writer = self._writer
        async with writer.lock(table_id):
            for _ in range(writer.max_attempts):
                model, _ = await writer.owned(table_id)
                last = await writer.store.events.last(writer.store.subject(table_id))
                if last is not None and last.sequence == model.sequence:
                    # A buy-in intent not closed yet accounts for its chips: its settling (which
                    # loading the table started) returns them under the intent's own ids.
                    return holders(model) | intent_holders(model)
                writer.forget(table_id)
        raise TooManyConflicts(table_id=table_id, attempts=writer.max_attempts)

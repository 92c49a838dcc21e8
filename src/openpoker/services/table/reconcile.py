"""Escrow reconciliation: chips in a table's escrow that the table's log does not account for
go back to the player's cash.

Why. JoinTable and TopUp move the chips cash -> escrow in the wallet first, then append to the
table log. A process that dies between the two (or whose refund after a refused append fails
before it dies) leaves the chips in ``escrow/{table}/{player}`` with no seat and no log record;
nothing else would ever return them.

What. For one table this instance owns, the wallet's escrows (``ListTableEscrows``) are
compared with what the log says each player has there: a seated player's stack (and what
they committed to a live hand), a player who left the live hand (their chips wait in its pot),
and the cash-outs and buy-ins this process has in flight for the table. A player the log does
not seat, with nothing in flight here and nothing reserved by a hand in the wallet, is owed
nothing by the table: their whole escrow is surplus and is cashed out.

Safety (no chip moved twice):

* **Deterministic ids.** The return's request id is a digest of the table, the player and the
  escrow's posted totals (credits and debits, which only grow): every pass, or instance, that
  sees the same orphan sends the same id and amount, and the wallet pays it once. A return
  whose reply was lost changes those totals, so the next pass sees nothing left.
* **Grace.** The same escrow (same totals) must be seen unaccounted for on two passes at least
  ``grace`` seconds apart. A join in flight elsewhere (a fenced previous owner whose buy-in
  landed and whose append is being refused, then refunded with its own id) finishes well
  within it; its refund changes the totals and the sighting starts over.
* **Fresh log, this process's flows.** The holders are read under the table's lock from a
  model checked against the log's last entry, and players with a join, top-up, refund or
  cash-out in flight in this process are skipped (their flow finishes first). A join that
  starts after the decision only adds its own buy-in to the escrow: the return takes the
  orphan it measured, never more (the wallet refuses an overdraft).
* **Hands.** Escrow reserved by a hand (pending debits) is skipped until the wallet settles
  or voids that hand.

A seated player whose escrow holds more than their stack (an orphaned top-up) gets the rest
back the same way once they have left and their cash-out has gone through.

Drifts. Each pass also compares every seated player's stack with their escrow's posted balance
(``dispute.escrow.drifts``: during a hand the stack is the one it started with, which is what
the wallet holds posted while it reserves it). Not compared: players with a money flow in
flight here, and, between hands in the log, players whose escrow a hand still reserves (the
wallet settles right after the table). A drift seen unchanged on two passes ``grace`` apart is
logged once (``escrow.drift`` with ``table_id``, ``player``, ``table_stack`` and ``escrow``,
as a warning) and kept in ``Reconciler.drifts`` until it goes away; no chip is moved for it:
an operator must act (an escrow changed behind the table's back, or a table showing chips the
wallet does not hold).
A table with no escrow at all is compared only when it is loaded here or its log, as last
read, seats someone (an emptied escrow is not listed by the wallet).

``plan`` is the pure decision; ``Reconciler`` runs it when this instance takes a table over
(and once more after the grace period), for every table of a partition when this instance
takes the partition's lease (``sweep``: a table nobody uses after a restart is reconciled too),
and every ``every`` seconds for every table of the partitions it holds, loaded or not.

Many tables, few orphans. A pass asks the wallet first (one ``ListTableEscrows``); a table with
no escrow costs nothing more. Otherwise, for a table this instance has not loaded, it reads who
holds chips there from the log without loading the table for writing (``TableSide.log_holders``:
snapshot + tail, remembered by the log's last sequence, so an idle table costs one read of its
last entry per pass). Only when that leaves an escrow unaccounted for does the pass take the
table over and read the holders from the checked, fenced model (``TableSide.escrow_holders``)
that the decision is made on: reading the log is enough to see nothing to do, never to return
chips. At most ``concurrency`` tables are reconciled at once per instance, whatever the passes.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from openpoker.dispute.escrow import EscrowDrift, drifts, in_hand, seat_stacks
from openpoker.engine.table_events import PlayerLeft
from openpoker.services.table.wallet import Escrow
from openpoker.shell.logs import get_logger
from openpoker.tablelog.model import TableModel

RETURN_PREFIX = "reconcile:"
CONCURRENCY = 4  # tables reconciled at once by one instance (wallet calls, log reads)


@dataclass(frozen=True, slots=True, kw_only=True)
class Sighting:
    """An escrow seen unaccounted for, first at ``since`` (seconds, monotonic)."""

    escrow: Escrow
    since: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Return:
    player: str
    amount: int
    request_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    returns: tuple[Return, ...]
    sightings: Mapping[str, Sighting]  # by player: the next pass compares with these


@dataclass(frozen=True, slots=True, kw_only=True)
class Seats:
    """The seated players' stacks as the log says (during a hand: at its start)."""

    stacks: Mapping[str, int]
    in_hand: bool


def seats_of(model: TableModel) -> Seats:
    return Seats(stacks=seat_stacks(model), in_hand=in_hand(model))


def seat_drifts(
    table_id: str, *, escrows: Sequence[Escrow], seats: Seats, busy: frozenset[str]
) -> list[EscrowDrift]:
    """The seated players whose escrow is not their stack, but those not comparable now: with a
    money flow in flight here, or (between hands in the log) with escrow a hand still reserves."""
    skip = set(busy)
    if not seats.in_hand:
        skip.update(e.player for e in escrows if e.reserved)
    balances = {e.player: e.balance for e in escrows}
    return drifts(table_id, stacks=seats.stacks, escrows=balances, skip=skip)


def return_id(table_id: str, escrow: Escrow) -> str:
    """The request id of the return of ``escrow``'s surplus: the same for the same orphan,
    whoever computes it (fits the wallet's 128-character id alphabet whatever the ids)."""
    key = f"{table_id}/{escrow.player}/{escrow.credited}/{escrow.debited}".encode()
    return RETURN_PREFIX + hashlib.sha256(key).hexdigest()[:32]


def holders(model: TableModel) -> frozenset[str]:
    """Players the log says have chips at the table: seated ones, and those who left the live
    hand (what they committed waits in its pot until the wallet settles it)."""
    state = model.state
    if state is None:
        return frozenset()
    out = {occ.player for occ in state.seats.values()}
    if model.current_hand is not None:
        out.update(e.player for e in model.hand_log if isinstance(e, PlayerLeft))
    return frozenset(out)


def _unaccounted(escrow: Escrow, holders: frozenset[str], busy: frozenset[str]) -> bool:
    """Chips in the escrow, none reserved by a hand, and no seat nor flow here to explain them."""
    return (
        escrow.balance > 0
        and escrow.reserved == 0
        and escrow.player not in holders
        and escrow.player not in busy
    )


def unaccounted(escrows: Sequence[Escrow], *, holders: frozenset[str], busy: frozenset[str]) -> bool:
    """Whether ``plan`` would sight (or return) any of ``escrows``."""
    return any(_unaccounted(e, holders, busy) for e in escrows)


def plan(
    *,
    table_id: str,
    escrows: Sequence[Escrow],
    holders: frozenset[str],
    busy: frozenset[str],
    sightings: Mapping[str, Sighting],
    now: float,
    grace: float,
) -> Plan:
    """Which escrows to return now, and what to remember for the next pass (see the module
    docstring). An escrow that changed, or is accounted for again, starts over."""
    returns: list[Return] = []
    seen: dict[str, Sighting] = {}
    for escrow in escrows:
        if not _unaccounted(escrow, holders, busy):
            continue
        before = sightings.get(escrow.player)
        if before is None or before.escrow != escrow:
            seen[escrow.player] = Sighting(escrow=escrow, since=now)
            continue
        seen[escrow.player] = before
        if now - before.since >= grace:
            returns.append(
                Return(player=escrow.player, amount=escrow.balance, request_id=return_id(table_id, escrow))
            )
    return Plan(returns=tuple(returns), sightings=seen)


# -- shell -------------------------------------------------------------------------------------


class EscrowWallet(Protocol):
    async def escrows(self, table_id: str) -> tuple[Escrow, ...]: ...

    async def cash_out(
        self, *, request_id: str, table_id: str, player: str, amount: int, after_hand: int = 0
    ) -> None: ...


class TableSide(Protocol):
    """What the reconciler needs of the table application."""

    async def claim(self) -> None:
        """Take the free partitions of existing tables, if so configured (their tables are then
        swept, as for any partition taken)."""
        ...

    async def reconcilable_tables(self) -> list[str]:
        """Every table of the partitions this instance holds, loaded or not."""
        ...

    async def log_holders(self, table_id: str) -> frozenset[str] | None:
        """``holders`` as the log says now, for a table not loaded here, without loading it for
        writing; None for a loaded one (use ``escrow_holders``)."""
        ...

    def money_in_flight(self, table_id: str) -> frozenset[str]:
        """Players with a buy-in, refund or cash-out in flight at the table in this process."""
        ...

    async def escrow_holders(self, table_id: str) -> frozenset[str]:
        """``holders`` of a fresh model of a table we own (raises if we do not)."""
        ...

    async def seats(self, table_id: str, *, read: bool) -> Seats | None:
        """The seated players' stacks as the log says now: a loaded table's model, else the log
        read as ``log_holders`` does. With ``read`` false, only when that costs little (loaded,
        or its log as last read seats someone); None when not known."""
        ...


class Reconciler:
    def __init__(
        self,
        *,
        wallet: EscrowWallet,
        side: TableSide,
        every: float,
        grace: float,
        clock: Callable[[], float] = time.monotonic,
        concurrency: int = CONCURRENCY,
    ) -> None:
        self._wallet = wallet
        self._side = side
        self._every = every
        self._grace = grace
        self._clock = clock
        self._sightings: dict[str, Mapping[str, Sighting]] = {}
        self._drift_seen: dict[str, dict[str, tuple[EscrowDrift, float]]] = {}
        # The drifts seen unchanged for the grace, by table (reported; cleared when gone).
        self.drifts: dict[str, tuple[EscrowDrift, ...]] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._gaining: set[str] = set()
        self._periodic: asyncio.Task[None] | None = None
        self._concurrency = max(1, concurrency)
        self._slots = asyncio.Semaphore(self._concurrency)
        self._log = get_logger()

    @property
    def started(self) -> bool:
        """``start`` was called: passes run in the background (partition sweeps too)."""
        return self._periodic is not None

    def start(self) -> None:
        """Claim free partitions (if configured) now, then reconcile every table we hold every
        ``every`` seconds (call from a running loop)."""
        if self._periodic is None:
            self._periodic = asyncio.get_running_loop().create_task(self._every_so_often())

    def sweep(self, table_ids: Sequence[str]) -> None:
        """We just took the partitions of ``table_ids``: reconcile them now, and again once the
        grace is over, ``concurrency`` at a time (a new task; call from a running loop)."""
        if not table_ids:
            return
        tables = list(table_ids)
        task = asyncio.get_running_loop().create_task(self._sweep(tables), context=contextvars.Context())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def gained(self, table_id: str) -> None:
        """We just took ``table_id`` over: reconcile now, and again once the grace is over."""
        if table_id in self._gaining:
            return
        self._gaining.add(table_id)
        # A fresh context: the pass is not part of the RPC that happened to load the table.
        task = asyncio.get_running_loop().create_task(
            self._after_gain(table_id), context=contextvars.Context()
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Wait for the passes under way (sweeps, take-overs) to end (tests)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        tasks = [*self._tasks, *([self._periodic] if self._periodic is not None else [])]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._periodic = None

    async def _after_gain(self, table_id: str) -> None:
        try:
            await self.run_all([table_id])
            # A little past the grace, so that the second sighting is old enough by any clock.
            await asyncio.sleep(self._grace * 1.05 + 0.05)
            await self.run_all([table_id])
        finally:
            self._gaining.discard(table_id)

    async def _sweep(self, tables: list[str]) -> None:
        self._log.info("table.reconcile_sweep", tables=len(tables))
        await self.run_all(tables)
        await asyncio.sleep(self._grace * 1.05 + 0.05)
        await self.run_all(tables)

    async def _every_so_often(self) -> None:
        while True:
            try:
                await self._side.claim()
            except Exception as exc:  # NATS away: the next round tries again
                self._log.info("table.claim_skipped", error=str(exc))
            await asyncio.sleep(self._every)
            try:
                tables = await self._side.reconcilable_tables()
            except Exception as exc:
                self._log.info("table.reconcile_skipped", error=str(exc))
                continue
            await self.run_all(tables)

    async def run_all(self, table_ids: Sequence[str]) -> None:
        """``run_once`` for each table, at most ``concurrency`` at once across every pass."""
        pending = iter(table_ids)

        async def worker() -> None:
            for table_id in pending:
                async with self._slots:
                    await self.run_once(table_id)

        await asyncio.gather(*(worker() for _ in range(min(self._concurrency, len(table_ids)))))

    async def orphaned(self, table_ids: Sequence[str]) -> set[str]:
        """Those of ``table_ids`` (tables of partitions nobody holds) with escrow their log does
        not account for, read without taking the tables: a wallet call per table, the log only
        where there is escrow, a few tables at a time (their partitions are worth taking, to
        return it)."""
        pending = iter(table_ids)
        found: set[str] = set()

        async def worker() -> None:
            for table_id in pending:
                if await self._orphaned(table_id):
                    found.add(table_id)

        await asyncio.gather(*(worker() for _ in range(min(self._concurrency, len(table_ids)))))
        return found

    async def _orphaned(self, table_id: str) -> bool:
        try:
            async with self._slots:
                escrows = await self._wallet.escrows(table_id)
                if not escrows:
                    return False
                seen = await self._side.log_holders(table_id)
        except Exception as exc:  # the next pass looks again
            self._log.info("table.reconcile_skipped", table_id=table_id, error=str(exc))
            return False
        return seen is None or unaccounted(escrows, holders=seen, busy=self._side.money_in_flight(table_id))

    async def run_once(self, table_id: str) -> tuple[Return, ...]:
        """One pass over ``table_id``: the returns it made (or tried). Never raises but for
        cancellation: a pass that cannot complete forgets what it saw and tries next time."""
        lock = self._locks.setdefault(table_id, asyncio.Lock())
        async with lock:
            try:
                busy = self._side.money_in_flight(table_id)
                escrows = await self._wallet.escrows(table_id)
                await self._check_drifts(table_id, escrows, busy)
                if not escrows:
                    self._sightings.pop(table_id, None)
                    return ()
                seen = await self._side.log_holders(table_id)
                if seen is not None and not unaccounted(escrows, holders=seen, busy=busy):
                    self._sightings.pop(table_id, None)  # nothing to do, nothing loaded
                    return ()
                holding = await self._side.escrow_holders(table_id)
            except Exception as exc:
                self._sightings.pop(table_id, None)
                self._log.info("table.reconcile_skipped", table_id=table_id, error=str(exc))
                return ()
            decided = plan(
                table_id=table_id,
                escrows=escrows,
                holders=holding,
                busy=busy | self._side.money_in_flight(table_id),
                sightings=self._sightings.get(table_id, {}),
                now=self._clock(),
                grace=self._grace,
            )
            self._sightings[table_id] = decided.sightings
            for r in decided.returns:
                try:
                    await self._wallet.cash_out(
                        request_id=r.request_id, table_id=table_id, player=r.player, amount=r.amount
                    )
                except Exception as exc:  # the same id again next pass, if the escrow is unchanged
                    self._log.warning(
                        "table.escrow_return_failed", table_id=table_id, player=r.player, error=str(exc)
                    )
                    continue
                self._log.warning(
                    "table.escrow_returned",
                    table_id=table_id,
                    player=r.player,
                    chips=r.amount,
                    request_id=r.request_id,
                )
            return decided.returns

    async def _check_drifts(self, table_id: str, escrows: Sequence[Escrow], busy: frozenset[str]) -> None:
        """Compare the seats' stacks with their escrows; log a drift seen unchanged for the grace
        (once), remember it in ``drifts``. Moves no money."""
        seats = await self._side.seats(table_id, read=bool(escrows))
        if seats is None:
            self._drift_seen.pop(table_id, None)
            self.drifts.pop(table_id, None)
            return
        found = seat_drifts(
            table_id, escrows=escrows, seats=seats, busy=busy | self._side.money_in_flight(table_id)
        )
        now = self._clock()
        before = self._drift_seen.get(table_id, {})
        reported = self.drifts.get(table_id, ())
        seen: dict[str, tuple[EscrowDrift, float]] = {}
        lasting: list[EscrowDrift] = []
        for drift in found:
            prior = before.get(drift.player)
            if prior is None or prior[0] != drift:
                seen[drift.player] = (drift, now)
                continue
            seen[drift.player] = prior
            if now - prior[1] >= self._grace:
                lasting.append(drift)
                if drift not in reported:
                    self._log.warning(
                        "escrow.drift",
                        table_id=table_id,
                        player=drift.player,
                        table_stack=drift.stack,  # ``stack`` is structlog's traceback key
                        escrow=drift.escrow,
                    )
        self._drift_seen[table_id] = seen
        if lasting:
            self.drifts[table_id] = tuple(lasting)
        else:
            self.drifts.pop(table_id, None)

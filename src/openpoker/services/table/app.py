"""The table application: load -> fold -> decide -> append -> evolve, one writer per table.

Theory of operation
-------------------
* **Cache.** Each table this instance writes is a ``TableModel`` in memory (snapshot + log on
  first use). A command takes the table's lock, asks the engine (``engine.table.decide``) for the
  events, seals them into one envelope (version + 1, hash chain, our writer epoch, the request id
  as ``command_id``) and appends it with the expected last subject sequence; then it folds the
  same events into the cached model. One append per command, no re-read on the happy path.
* **Retries.** A request id already in the model's log answers with the first outcome and appends
  nothing. A ``ConcurrencyConflict`` (someone appended first) drops the cached model, re-reads
  the log and decides again (up to ``max_attempts``): the re-read also finds our own envelope if
  an earlier attempt landed.
* **Fencing.** The partition lease (``services.table.ownership``) gives the epoch. Before its
  first command on a table, a new owner appends ``OwnerChanged{epoch}``; a writer that finds a
  higher epoch in the log stops (``NotOwner``, naming the owner) and forgets the partition. With
  every append carrying the expected sequence, a stale owner's write fails and it backs off:
  two instances never both append to one table.
* **Money.** Join and top-up move chips cash -> escrow in the wallet first (request id
  ``<rid>:buy-in``), then append. If the append definitely failed, the same flow refunds
  (``<rid>:refund``) before answering; if its outcome is unknown, the re-read log decides. If
  the wallet says the buy-in id was seen before while the table never recorded the request,
  the request is refused (REQUEST_ID_SPENT) and the earlier attempt's chips go back by the
  escrow reconciliation (refunded here only when it is off): escrow is never stranded and
  never backs chips twice. A refund that cannot
  reach the wallet is retried in the background. Leaving appends first, then cashes out each
  ``PlayerLeft`` with the id ``<table>:<version>:left:<seat>`` (deterministic, so the retried
  request, and the background retry for players who leave when a hand ends, never pay twice).
  Background cash-outs and refunds retry with capped back-off while we own the table
  (``services.table.retrying``); escrow no log accounts for (a crash between a buy-in and its
  append) goes back to cash by ``services.table.reconcile``.
* **Snapshots** at hand boundaries (every ``snapshot_every`` hands), written in the background,
  tagged with the last sequence and engine version; never evidence.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import datetime as dt
import uuid
from collections import Counter
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from openpoker.engine import hand, table
from openpoker.engine.cards import Card
from openpoker.engine.errors import EngineError
from openpoker.engine.hand_events import (
    Act,
    ActionKind,
    HandEnded,
    HandEvent,
    HandStarted,
    Muck,
    SeatAmount,
    Show,
)
from openpoker.engine.rules import Rules
from openpoker.engine.table_events import (
    Disconnect,
    HandScheduled,
    Leave,
    OpenTable,
    PlayerLeft,
    Reconnect,
    SitDown,
    SitIn,
    SitOut,
    StartHand,
    TableOpened,
    TimeOut,
    TopUp,
)
from openpoker.eventstore.envelope import Snapshot, StoredEnvelope
from openpoker.eventstore.errors import ConcurrencyConflict
from openpoker.eventstore.subjects import partition_of
from openpoker.services.table import retrying
from openpoker.services.table.errors import (
    HandNotFinished,
    HandNotFound,
    HandNotLive,
    NotOwner,
    RequestSpent,
    SeatNotOwned,
    StaleVersion,
    TableExists,
    TableNotFound,
    TooManyConflicts,
)
from openpoker.services.table.ownership import Ownership, PartitionHeld
from openpoker.services.table.reconcile import Reconciler, holders
from openpoker.services.table.wallet import Wallet
from openpoker.services.table.watchers import LocalWatch, LocalWatchers, Render, entries_since, hand_mark
from openpoker.shell.errors import ServiceError
from openpoker.shell.logs import get_logger
from openpoker.tablelog import model as table_model
from openpoker.tablelog.events import HandVoided, OwnerChanged
from openpoker.tablelog.model import HandRecord, Left, LogEvent, Outcome, TableModel
from openpoker.tablelog.store import RULES_VERSION_SUFFIX, TableStore, decode_events, fold_envelope


def _settled(task: asyncio.Task[Any]) -> None:
    """Done callback of a money flow whose caller may have gone: its error was answered (or
    nobody is left to answer); read it so it is not reported as never retrieved."""
    if not task.cancelled():
        task.exception()


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class Committed:
    model: TableModel
    outcome: Outcome
    duplicate: bool
    events: tuple[LogEvent, ...]  # the events appended (empty for a duplicate)


@dataclass(frozen=True, slots=True, kw_only=True)
class HandAt:
    """A hand's log and where it is in the table log (for GetHand / GetHandHistory)."""

    record: HandRecord
    log: tuple[LogEvent, ...]
    commitment: str


Decider = Callable[[TableModel], Sequence[LogEvent]]
T = TypeVar("T")  # what a watcher renders for each version
# Checks a command needs the log or the hand index for (I/O), run before its decider.
Precheck = Callable[[TableModel], Awaitable[None]]


SEAT_FIELDS = ("seat", "to_act")


def wire_seats(exc: EngineError) -> None:
    """Engine seats are 0-based, the API's 1-based: shift the seat numbers in the error's
    metadata (the human-readable message keeps the engine's numbering)."""
    for key in SEAT_FIELDS:
        value = exc.fields.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            exc.fields[key] = value + 1


def rules_version(rules: Rules) -> str:
    return f"{rules.profile.value}{RULES_VERSION_SUFFIX}"


def seat_of(model: TableModel, player: str) -> int | None:
    assert model.state is not None
    for seat, occ in model.state.seats.items():
        if occ.player == player:
            return seat
    return None


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
    ) -> None:
        self.store = store
        self.ownership = ownership
        self.wallet = wallet
        self._clock = clock
        self._snapshot_every = max(1, snapshot_every)
        self._max_attempts = max_attempts
        self._tables: dict[str, TableModel] = {}
        self._epochs: dict[str, int] = {}  # table id -> the epoch its cached model was fenced with
        self._locks: dict[str, asyncio.Lock] = {}
        self._background: set[asyncio.Task[Any]] = set()
        self._money: Counter[tuple[str, str]] = Counter()  # (table, player) -> money flows in flight
        self.watchers = LocalWatchers()  # WatchTable streams on tables this instance writes
        # The hand index (``store.HANDS_BUCKET``): per table, how many hands from the first are
        # known to have their entry (``TableEvents.load_indexed_through``), the writer of the
        # entries of the hands this instance finishes, and the one log read that writes every
        # older entry when that count is behind (``_reindex``).
        self._indexed: dict[str, int] = {}
        self._indexed_saved: dict[str, int] = {}  # what the bucket holds (as far as we know)
        # Partitions we hold (with the epoch we got), those taken since the last sweep of their
        # tables, and who holds chips at tables we have not loaded, by the log's last sequence.
        self._partitions: dict[int, int] = {}
        self._to_sweep: set[int] = set()
        self._sweeper: asyncio.Task[None] | None = None
        self._log_holders: dict[str, tuple[int, frozenset[str]]] = {}
        self._claim = reconcile_claim
        self._index_locks: dict[str, asyncio.Lock] = {}
        self._reindexing: dict[str, asyncio.Task[int]] = {}
        self.reconciler = (
            Reconciler(wallet=wallet, side=self, every=reconcile_every, grace=reconcile_grace)
            if reconcile_every > 0
            else None
        )
        self._log = get_logger()

    def now(self) -> dt.datetime:
        return self._clock()

    # -- cache and ownership ---------------------------------------------------------------

    def _lock(self, table_id: str) -> asyncio.Lock:
        lock = self._locks.get(table_id)
        if lock is None:
            lock = self._locks[table_id] = asyncio.Lock()
        return lock

    def forget(self, table_id: str) -> None:
        self._tables.pop(table_id, None)
        self._epochs.pop(table_id, None)
        self.watchers.forget(table_id)  # they go on from the log

    def drop_partition(self, partition: int) -> None:
        """Our lease of ``partition`` is gone: forget its tables (re-read on next use)."""
        self._partitions.pop(partition, None)
        for table_id in [t for t in self._tables if self._partition(t) == partition]:
            self.forget(table_id)

    def _partition(self, table_id: str) -> int:
        return partition_of(table_id, self.store.partitions)

    async def _epoch(self, table_id: str) -> int:
        partition = self._partition(table_id)
        try:
            epoch = await self.ownership.epoch(partition)
        except PartitionHeld as held:
            self.drop_partition(partition)
            raise NotOwner(table_id=table_id, partition=partition, owner=held.holder) from None
        if self._partitions.get(partition) != epoch:
            self._took_partition(partition, epoch)
        return epoch

    def _took_partition(self, partition: int, epoch: int) -> None:
        """We hold ``partition`` (again, or with a new epoch): reconcile every table in it soon,
        not only those something loads (``services.table.reconcile``)."""
        self._partitions[partition] = epoch
        if self.reconciler is None or not self.reconciler.started:
            return  # sweeps are background work of a started reconciler (as the server runs it)
        self._to_sweep.add(partition)
        if self._sweeper is None or self._sweeper.done():
            # A fresh context: the sweep is not part of the RPC that happened to take the lease.
            self._sweeper = asyncio.get_running_loop().create_task(
                self._sweep_partitions(), context=contextvars.Context()
            )
            self._background.add(self._sweeper)
            self._sweeper.add_done_callback(self._background.discard)

    async def _sweep_partitions(self) -> None:
        """Hand the tables of the partitions taken since the last sweep to the reconciler: one
        listing of the tables for all the partitions taken meanwhile (a restart takes many)."""
        while self._to_sweep and self.reconciler is not None:
            await asyncio.sleep(0)  # let the partitions taken at the same moment join this sweep
            partitions, self._to_sweep = self._to_sweep, set()
            try:
                tables = await self.store.events.tables()
            except Exception as exc:  # the periodic pass lists them again
                self._log.warning("table.reconcile_sweep_failed", error=str(exc))
                return
            self.reconciler.sweep([t for t in tables if self._partition(t) in partitions])

    async def _owned(self, table_id: str) -> tuple[TableModel, int]:
        """The cached model (loaded and fenced if needed) and our epoch; call under the lock."""
        epoch = await self._epoch(table_id)
        model = self._tables.get(table_id)
        if model is not None and self._epochs.get(table_id) == epoch:
            return model, epoch
        self.forget(table_id)
        for _ in range(self._max_attempts):
            model = await self.store.load(table_id)
            if model is None:
                raise TableNotFound(table_id)
            if await self._fence(model, epoch):
                self._tables[table_id] = model
                self._epochs[table_id] = epoch
                for version, left in model.left_log:  # idempotent: see TableModel.left_log
                    if left.chips > 0:
                        self._spawn(self._cash_out_retrying(table_id, version, left))
                # Entries a previous owner may not have written (it stopped before): see _index_hands.
                self._spawn(self._index_hands(table_id))
                return model, epoch
        raise TooManyConflicts(table_id=table_id, attempts=self._max_attempts)

    async def _fence(self, model: TableModel, epoch: int) -> bool:
        """Make the log ours: refuse a higher epoch, append OwnerChanged over a lower one.
        False when the append lost a race (reload and try again)."""
        if model.epoch > epoch:
            partition = self._partition(model.table_id)
            self.ownership.lost(partition)
            raise NotOwner(table_id=model.table_id, partition=partition, owner=model.owner)
        if model.epoch == epoch:
            return True
        assert model.state is not None
        events = [OwnerChanged(epoch=epoch, owner=self.ownership.name)]
        try:
            await self._append(model, events, command_id=f"owner:{self.ownership.name}:{epoch}", epoch=epoch)
        except ConcurrencyConflict:
            return False
        self._log.info("table.owner_changed", table_id=model.table_id, epoch=epoch)
        if self.reconciler is not None:
            self.reconciler.gained(model.table_id)
        return True

    async def _append(
        self, model: TableModel, events: Sequence[LogEvent], *, command_id: str, epoch: int
    ) -> Outcome:
        assert model.state is not None or any(isinstance(e, TableOpened) for e in events)
        rules = model.state.rules if model.state is not None else _opened_rules(events)
        envelope = self.store.seal(
            model,
            events,
            command_id=command_id,
            epoch=epoch,
            rules_version=rules_version(rules),
            recorded_at=self._clock(),
        )
        result = await self.store.append(model, envelope)
        if result.duplicate:
            # Our message id (table:version:epoch) was already stored: an earlier attempt with
            # this very version and epoch landed. Its content may differ: re-read to be sure.
            raise ConcurrencyConflict(
                subject=self.store.subject(model.table_id),
                expected_sequence=model.sequence,
                actual_sequence=result.sequence,
                error_code=None,
                msg_id=envelope.msg_id,
            )
        watching = bool(self.watchers.of(model.table_id))
        mark = hand_mark(model) if watching else None
        outcome = model.apply(
            events,
            version=envelope.version,
            sequence=result.sequence,
            envelope_hash=envelope.hash,
            command_id=command_id,
            recorded_at=envelope.recorded_at,
        )
        if mark is not None:  # rendered now, before anything can change the model again
            self.watchers.published(model, entries_since(model, mark))
        return outcome

    async def execute(
        self,
        table_id: str,
        *,
        request_id: str,
        decide: Decider,
        expected_version: int | None = None,
        precheck: Precheck | None = None,
    ) -> Committed:
        """Decide and append one command (see the module docstring). ``precheck`` runs first,
        under the table's lock, for what the decider cannot tell from memory (it may read the
        hand index or the log) and raises to refuse; not for a retried request."""
        async with self._lock(table_id):
            for _ in range(self._max_attempts):
                model, epoch = await self._owned(table_id)
                prior = model.requests.get(request_id)
                if prior is not None:
                    return Committed(model=model, outcome=prior, duplicate=True, events=())
                if expected_version is not None and expected_version != model.version:
                    raise StaleVersion(expected_version=expected_version, current_version=model.version)
                try:
                    if precheck is not None:
                        await precheck(model)
                    events = tuple(decide(model))
                except EngineError as exc:
                    wire_seats(exc)
                    raise
                try:
                    outcome = await self._append(model, events, command_id=request_id, epoch=epoch)
                except ConcurrencyConflict:
                    self.forget(table_id)
                    continue
                except BaseException:
                    self.forget(table_id)  # the cache may be half-updated: re-read next time
                    raise
                self._after_append(model, events, outcome)
                return Committed(model=model, outcome=outcome, duplicate=False, events=events)
        raise TooManyConflicts(table_id=table_id, attempts=self._max_attempts)

    def _after_append(self, model: TableModel, events: Sequence[LogEvent], outcome: Outcome) -> None:
        state = model.state
        assert state is not None
        ended = any(isinstance(e, HandEnded) for e in events)
        voided = any(isinstance(e, HandVoided) for e in events)
        if state.hand is None and (voided or (ended and state.hands_played % self._snapshot_every == 0)):
            self._spawn(self._snapshot_after_reply(model, model.version))
        if ended or voided:  # where the hand is in the log, for when it leaves the model's index
            self._spawn(self._index_hands(model.table_id))
        # Players who left as a follow-on of someone else's command (a leave requested during
        # the hand), and what players who left a hand had committed to it when it is voided, are
        # cashed out here; LeaveTable's own leaves are tried at once by ``leave`` as well.
        for gone in outcome.left:
            if gone.chips > 0:
                self._spawn(self._cash_out_retrying(model.table_id, outcome.version, gone))

    async def _snapshot_after_reply(self, model: TableModel, version: int) -> None:
        """Encode the snapshot once the command that ended the hand has answered (its reply is
        already with gRPC when this task runs): encoding a table with a long history takes
        milliseconds, which that player's reply no longer waits for. Under the table's lock, and
        only if nothing was appended since (else the next hand boundary takes one). Encoded in a
        worker thread: every change to a model is made under its table's lock, which this holds,
        so the thread reads a still model, and the event loop (other tables) gets the interpreter
        back every switch interval (5 ms) instead of waiting for the whole encoding."""
        async with self._lock(model.table_id):
            state = model.state
            if model.version != version or state is None or state.hand is not None:
                return
            snap = await asyncio.to_thread(self.store.snapshot_of, model)
        await self._save_snapshot(snap)

    # -- the hand index ---------------------------------------------------------------------
    #
    # Every finished hand gets an entry in the hand index (``TableEvents.save_hand``), and
    # ``indexed_through`` counts the hands, from the first, that all have theirs; it only moves
    # after their entries are written. So while it covers every hand older than a model's index,
    # an id without an entry is no hand of the table: StartHand refuses a reused old id
    # (DUPLICATE_HAND_ID), and GetHand and VoidHand answer an unknown one, with one KV read and no
    # log read (the engine remembers only the latest ``engine.table.HAND_IDS_KEPT`` ids). When it
    # does not (a table indexed before 2026-11-22, a lost bucket, an owner that stopped before
    # writing), the log is read once to write every older entry (``_reindex``).

    async def _index_hands(self, table_id: str) -> None:
        """Write the entries of the finished hands the owned model indexes that are not counted
        yet, then count them (after each finished hand, and when taking a table over)."""
        try:
            lock = self._index_locks.setdefault(table_id, asyncio.Lock())
            async with lock:
                model = self._tables.get(table_id)
                if model is None or not model.hand_order:
                    return
                through = await self._indexed_through(table_id)
                # Copies, taken at once: the model goes on changing under the table's lock. Only
                # of the hands not counted yet, newest first until a counted one (one or two
                # after a hand, where copying the whole index cost ~3.7 ms once it held 1,000).
                records: list[HandRecord] = []
                for h in reversed(model.hand_order):
                    record = model.hands[h]
                    if record.number <= through:
                        break
                    records.append(dataclasses.replace(record))
                if not records:
                    return
                records.reverse()
                if through < records[0].number - 1:  # older hands only the log has: count them first
                    through = await self._reindex(table_id, records[0].first_sequence)
                await self.store.save_hands(
                    table_id, [r for r in records if r.number > through and r.finished]
                )
                for r in records:
                    if r.number == through + 1 and r.finished:
                        through = r.number
                await self._count_indexed(table_id, through)
        except Exception as exc:  # a cache: the next finished hand (or owner) writes them again
            self._log.warning("table.hand_index_failed", table_id=table_id, error=str(exc))

    async def _indexed_through(self, table_id: str) -> int:
        known = self._indexed.get(table_id)
        if known is None:
            try:
                known = await self.store.events.load_indexed_through(table_id)
            except Exception as exc:  # a cache: as if nothing were counted (the log is read)
                self._log.warning("table.hand_index_failed", table_id=table_id, error=str(exc))
                return 0
            self._indexed_saved[table_id] = known
            known = self._indexed[table_id] = max(known, self._indexed.get(table_id, 0))
        return known

    async def _count_indexed(self, table_id: str, through: int) -> None:
        if through > self._indexed.get(table_id, 0):
            self._indexed[table_id] = through
            # The stored count may lag this one: a reader needs it only to cover the hands older
            # than its model's index (``HANDS_KEPT``), so it is written once per tenth of that
            # index, not after every hand (one KV put per hand less; a lag can only make a
            # reader read the log).
            if through - self._indexed_saved.get(table_id, 0) >= max(1, table_model.HANDS_KEPT // 10):
                await self.store.events.save_indexed_through(table_id, through)
                self._indexed_saved[table_id] = through

    async def _reindex(self, table_id: str, before_sequence: int) -> int:
        """Write the entry of every hand before ``before_sequence`` from the log, once however
        many callers wait for it (it runs on if they go away); returns the count of hands
        indexed from the first."""
        task = self._reindexing.get(table_id)
        if task is None:
            task = asyncio.get_running_loop().create_task(
                self._reindex_now(table_id, before_sequence), context=contextvars.Context()
            )
            self._reindexing[table_id] = task
            self._background.add(task)
            task.add_done_callback(self._background.discard)
            task.add_done_callback(_settled)
            task.add_done_callback(
                lambda t: (
                    self._reindexing.pop(table_id, None) if self._reindexing.get(table_id) is t else None
                )
            )
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the log is still there: callers read it (find_hand's scan)
            self._log.warning("table.hand_reindex_failed", table_id=table_id, error=str(exc))
            return self._indexed.get(table_id, 0)

    async def _reindex_now(self, table_id: str, before_sequence: int) -> int:
        through = await self.store.reindex(table_id, before_sequence=before_sequence)
        self._log.info("table.hands_reindexed", table_id=table_id, hands=through)
        await self._count_indexed(table_id, through)
        return max(through, self._indexed.get(table_id, 0))

    async def _find_older(
        self, model: TableModel, hand_id: str
    ) -> tuple[HandRecord, list[StoredEnvelope]] | None:
        """The hand ``hand_id`` if it is older than the model's index (``model.HANDS_KEPT``):
        from the hand index, counted complete, or else the log. None if the table has no such
        hand (checked without reading the log once the index is counted complete)."""
        oldest = model.oldest_indexed
        older = model.hands_total - len(model.hand_order)  # hands only the log and the index hold
        if oldest is None or older <= 0:
            return None
        through = await self._indexed_through(model.table_id)
        if through < older:
            through = await self._reindex(model.table_id, oldest.first_sequence)
        return await self.store.find_hand(
            model.table_id, hand_id, before_sequence=oldest.first_sequence, complete=through >= older
        )

    async def _refuse_used_hand_id(self, model: TableModel, hand_id: str) -> None:
        """StartHand's check of an id the engine no longer remembers (it keeps the latest
        ``engine.table.HAND_IDS_KEPT``): the model's index, then older hands; refused as the
        engine refuses its own (DUPLICATE_HAND_ID)."""
        state = model.state
        if state is None or state.hand is not None or hand_id in state.hand_ids:
            return  # the engine refuses these itself (HAND_IN_PROGRESS, DUPLICATE_HAND_ID)
        if hand_id in model.hands or await self._find_older(model, hand_id) is not None:
            raise table.DuplicateHandId(hand_id=hand_id)

    async def _save_snapshot(self, snap: Snapshot) -> None:
        try:
            await self.store.events.save_snapshot(snap)
        except Exception as exc:  # a cache: losing one costs a longer load, nothing else
            self._log.warning("table.snapshot_failed", table_id=snap.stream_id, error=str(exc))

    def _spawn(self, coro: object) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro)  # type: ignore[arg-type]
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def close(self) -> None:
        self.watchers.close()
        if self.reconciler is not None:
            await self.reconciler.close()
        for task in list(self._background):
            task.cancel()
        for task in list(self._background):
            with contextlib.suppress(BaseException):
                await task
        await self.ownership.close()

    async def drain(self) -> None:
        """Wait for background work (snapshots, cash-outs) to finish (tests, shutdown)."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    # -- money ------------------------------------------------------------------------------

    @staticmethod
    def cash_out_id(table_id: str, version: int, seat: int) -> str:
        return f"{table_id}:{version}:left:{seat}"

    async def _cash_out(self, table_id: str, version: int, left: Left) -> None:
        await self.wallet.cash_out(
            request_id=self.cash_out_id(table_id, version, left.seat),
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
        model = self._tables.get(table_id)
        n = left.after_hand
        record = model.hand_number(n) if n and model is not None else None
        return 0 if record is not None and record.voided else n

    async def _cash_out_retrying(self, table_id: str, version: int, left: Left) -> None:
        # The wallet refuses until the hand the chips come out of is settled or voided there
        # (HAND_NOT_CLOSED, PLAYER_IN_HAND); the id is deterministic, so retrying is safe.
        with self._moving(table_id, left.player):
            await retrying.retry_money(
                lambda: self._cash_out(table_id, version, left),
                owned=lambda: self._still_owned(table_id),
                what="cash_out",
                table_id=table_id,
                seat=left.seat,
                chips=left.chips,
            )

    async def _refund(self, request_id: str, table_id: str, player: str, amount: int) -> None:
        rid = f"{request_id}:refund"

        async def send() -> None:
            await self.wallet.cash_out(request_id=rid, table_id=table_id, player=player, amount=amount)

        try:
            await send()
        except Exception:

            async def retry() -> None:
                with self._moving(table_id, player):
                    await retrying.retry_money(
                        send,
                        owned=lambda: self._still_owned(table_id),
                        what="refund",
                        table_id=table_id,
                        player=player,
                        chips=amount,
                        request_id=rid,
                    )

            self._spawn(retry())

    async def _still_owned(self, table_id: str) -> bool:
        """Do we still own the table? (True when that cannot be told: NATS away.)"""
        try:
            await self._epoch(table_id)
        except NotOwner:
            return False
        except Exception:
            return True
        return True

    @contextlib.contextmanager
    def _moving(self, table_id: str, player: str) -> Iterator[None]:
        """Mark a money flow of ``player`` at the table in flight (reconciliation skips them)."""
        self._money[(table_id, player)] += 1
        try:
            yield
        finally:
            self._moving_done(table_id, player)

    def _moving_done(self, table_id: str, player: str) -> None:
        self._money[(table_id, player)] -= 1
        if self._money[(table_id, player)] <= 0:
            del self._money[(table_id, player)]

    # -- escrow reconciliation (services.table.reconcile.TableSide) ----------------------------

    async def claim(self) -> None:
        """Take each free partition that holds a table whose escrow its log does not account for
        (``reconcile_claim``): a table nobody uses after a restart then gets an owner, which
        returns the orphan. A free partition with nothing to return stays free (partitions go
        to the instances their traffic reaches first, so several instances share the tables),
        and one another instance holds stays theirs; a partition we take is swept
        (``_took_partition``)."""
        if not self._claim or self.reconciler is None:
            return
        free: dict[int, list[str]] = {}
        for table_id in await self.store.events.tables():
            partition = self._partition(table_id)
            if partition not in self._partitions:
                free.setdefault(partition, []).append(table_id)
        looked: list[str] = []
        for partition, tables in sorted(free.items()):
            if await self.ownership.holder_of(partition) in (None, self.ownership.name):
                looked.extend(tables)  # else another instance's: it reconciles them
        orphaned = await self.reconciler.orphaned(looked)
        for partition in sorted({self._partition(t) for t in orphaned}):
            try:
                epoch = await self.ownership.epoch(partition)
            except PartitionHeld:
                continue
            if self._partitions.get(partition) != epoch:
                self._took_partition(partition, epoch)

    async def reconcilable_tables(self) -> list[str]:
        """Every table of the partitions we hold, loaded or not, and the loaded ones."""
        held = set(self._partitions)
        listed = [t for t in await self.store.events.tables() if self._partition(t) in held]
        seen = set(listed)
        return listed + [t for t in self._tables if t not in seen]

    async def log_holders(self, table_id: str) -> frozenset[str] | None:
        """Who the log says holds chips at a table we have not loaded, without loading it for
        writing (no fence, nothing cached but this answer, kept while the log's last entry is the
        same: an idle table costs one read per pass). None for a loaded table."""
        if table_id in self._tables:
            return None
        last = await self.store.events.last(self.store.subject(table_id))
        if last is None:
            return frozenset()
        known = self._log_holders.get(table_id)
        if known is not None and known[0] == last.sequence:
            return known[1]
        model = await self.store.load(table_id)
        found = frozenset() if model is None else holders(model)
        if model is not None:
            self._log_holders[table_id] = (model.sequence, found)
        return found

    def money_in_flight(self, table_id: str) -> frozenset[str]:
        return frozenset(p for (t, p) in self._money if t == table_id)

    async def escrow_holders(self, table_id: str) -> frozenset[str]:
        """Players the log says have chips here, from a model checked against the log's last
        entry under the table's lock (a lagging model would not know who just sat down)."""
        async with self._lock(table_id):
            for _ in range(self._max_attempts):
                model, _ = await self._owned(table_id)
                last = await self.store.events.last(self.store.subject(table_id))
                if last is not None and last.sequence == model.sequence:
                    return holders(model)
                self.forget(table_id)
        raise TooManyConflicts(table_id=table_id, attempts=self._max_attempts)

    async def _with_escrow(
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
        async with self._lock(table_id):
            model, _ = await self._owned(table_id)
            prior = model.requests.get(request_id)
            if prior is not None:
                return Committed(model=model, outcome=prior, duplicate=True, events=())
            decide(model)  # dry run: an illegal request touches no money
            self._money[(table_id, player)] += 1  # marked under the lock: see reconcile.py
        # Once money moves, the flow runs to its end (seated, or refunded) even if the caller
        # goes away: a client cancelled between the wallet's buy-in and the append used to leave
        # the chips in escrow with no seat behind them.
        flow = asyncio.get_running_loop().create_task(
            self._buy_in_then_append(
                table_id, request_id=request_id, player=player, amount=amount, kind=kind, decide=decide
            )
        )
        self._background.add(flow)
        flow.add_done_callback(self._background.discard)
        flow.add_done_callback(_settled)
        flow.add_done_callback(lambda _: self._moving_done(table_id, player))
        return await asyncio.shield(flow)

    async def _buy_in_then_append(
        self, table_id: str, *, request_id: str, player: str, amount: int, kind: str, decide: Decider
    ) -> Committed:
        seen = await self.wallet.buy_in(
            request_id=f"{request_id}:{kind}", table_id=table_id, player=player, amount=amount
        )
        if seen:
            async with self._lock(table_id):
                model, _ = await self._owned(table_id)
                prior = model.requests.get(request_id)
            if prior is not None:
                return Committed(model=model, outcome=prior, duplicate=True, events=())
            if self.reconciler is None:
                await self._refund(request_id, table_id, player, amount)
            # else the escrow reconciliation returns the earlier attempt's chips, under one id per
            # orphan: a refund here, under another id, could come after that return (a late
            # retry) and take chips that back a seat taken since, or race the first attempt.
            raise RequestSpent(request_id=request_id)
        try:
            return await self.execute(table_id, request_id=request_id, decide=decide)
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
        self.forget(table_id)
        try:
            async with self._lock(table_id):
                model, _ = await self._owned(table_id)
                return request_id in model.requests
        except Exception:
            return True

    # -- commands ---------------------------------------------------------------------------

    async def create_table(self, *, request_id: str, table_id: str, rules: Rules) -> Committed:
        table_id = table_id or f"t-{uuid.uuid4().hex[:12]}"
        async with self._lock(table_id):
            epoch = await self._epoch(table_id)
            for _ in range(self._max_attempts):
                existing = await self.store.load(table_id)
                if existing is not None:
                    prior = existing.requests.get(request_id)
                    if prior is not None:
                        return Committed(model=existing, outcome=prior, duplicate=True, events=())
                    raise TableExists(table_id)
                model = TableModel(table_id=table_id)
                events: list[LogEvent] = [OwnerChanged(epoch=epoch, owner=self.ownership.name)]
                events.extend(table.decide(None, OpenTable(table_id=table_id, rules=rules)))
                try:
                    outcome = await self._append(model, events, command_id=request_id, epoch=epoch)
                except ConcurrencyConflict:
                    continue
                self._tables[table_id] = model
                self._epochs[table_id] = epoch
                return Committed(model=model, outcome=outcome, duplicate=False, events=tuple(events))
        raise TooManyConflicts(table_id=table_id, attempts=self._max_attempts)

    async def join(
        self, *, request_id: str, table_id: str, player: str, seat: int | None, buy_in: int, wait: bool
    ) -> Committed:
        def decide(model: TableModel) -> Sequence[LogEvent]:
            state = model.state
            assert state is not None
            chosen = seat
            if chosen is None:
                busy = set(state.seats) | (set(state.hand.index_of) if state.hand is not None else set())
                chosen = next((s for s in range(state.rules.seats) if s not in busy), 0)
            return table.decide(
                state, SitDown(seat=chosen, player=player, buy_in=buy_in, wait_for_big_blind=wait)
            )

        return await self._with_escrow(
            table_id, request_id=request_id, player=player, amount=buy_in, kind="buy-in", decide=decide
        )

    async def top_up(self, *, request_id: str, table_id: str, player: str, amount: int) -> Committed:
        def decide(model: TableModel) -> Sequence[LogEvent]:
            assert model.state is not None
            return table.decide(model.state, TopUp(seat=self._seat(model, player), amount=amount))

        return await self._with_escrow(
            table_id, request_id=request_id, player=player, amount=amount, kind="top-up", decide=decide
        )

    def _seat(self, model: TableModel, player: str) -> int:
        seat = seat_of(model, player)
        if seat is None:
            raise SeatNotOwned(player=player, table_id=model.table_id)
        return seat

    async def seat_command(
        self, *, request_id: str, table_id: str, player: str, make: Callable[[int], table.Command]
    ) -> Committed:
        """A player's command about their own seat (sit out, sit in, post or wait)."""

        def decide(model: TableModel) -> Sequence[LogEvent]:
            assert model.state is not None
            return table.decide(model.state, make(self._seat(model, player)))

        return await self.execute(table_id, request_id=request_id, decide=decide)

    async def sit_out(self, *, request_id: str, table_id: str, player: str) -> Committed:
        return await self.seat_command(
            request_id=request_id, table_id=table_id, player=player, make=lambda s: SitOut(seat=s)
        )

    async def sit_in(self, *, request_id: str, table_id: str, player: str, wait: bool) -> Committed:
        return await self.seat_command(
            request_id=request_id,
            table_id=table_id,
            player=player,
            make=lambda s: SitIn(seat=s, wait_for_big_blind=wait),
        )

    async def leave(self, *, request_id: str, table_id: str, player: str) -> tuple[Committed, int, bool]:
        """Leave: (committed, chips cashed out, pending). Cash-outs follow the append."""

        def decide(model: TableModel) -> Sequence[LogEvent]:
            assert model.state is not None
            return table.decide(model.state, Leave(seat=self._seat(model, player)))

        done = await self.execute(table_id, request_id=request_id, decide=decide)
        mine = [x for x in done.outcome.left if x.player == player]
        pending = done.outcome.pending_leave and not mine
        chips = 0
        for left in mine:
            if left.chips == 0:
                continue
            try:
                await self._cash_out(table_id, done.outcome.version, left)
                chips += left.chips
            except Exception:
                # Chips still reserved for an unsettled hand, or the wallet is away: retried in
                # the background with the same id (already scheduled by _after_append for a
                # fresh append; scheduled here for a retried request).
                pending = True
                if done.duplicate:
                    self._spawn(self._cash_out_retrying(table_id, done.outcome.version, left))
        return done, chips, pending

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
        def decide(model: TableModel) -> Sequence[LogEvent]:
            state = model.state
            assert state is not None
            seat = self._seat(model, player)
            self._check_live(model, hand_id)
            command: table.Command
            if kind == "show":
                command = Show(seat=seat)
            elif kind == "muck":
                command = Muck(seat=seat)
            else:
                command = Act(seat=seat, action=ActionKind(kind), amount=amount)
            return table.decide(state, command)

        return await self.execute(
            table_id, request_id=request_id, decide=decide, expected_version=expected_version
        )

    @staticmethod
    def _check_live(model: TableModel, hand_id: str) -> None:
        live = model.current_hand
        if hand_id and (live is None or live.hand_id != hand_id):
            raise HandNotLive(hand_id=hand_id, live_hand_id=live.hand_id if live else "")

    # -- dealer commands --------------------------------------------------------------------

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
        def decide(model: TableModel) -> Sequence[LogEvent]:
            assert model.state is not None
            return table.decide(model.state, StartHand(hand_id=hand_id, deck=deck, commitment=commitment))

        async def precheck(model: TableModel) -> None:
            await self._refuse_used_hand_id(model, hand_id)

        return await self.execute(
            table_id,
            request_id=request_id,
            decide=decide,
            expected_version=expected_version,
            precheck=precheck,
        )

    async def time_out(
        self, *, request_id: str, table_id: str, hand_id: str, seat: int, expected_version: int, at_ms: int
    ) -> Committed:
        def decide(model: TableModel) -> Sequence[LogEvent]:
            assert model.state is not None
            self._check_live(model, hand_id)
            return table.decide(model.state, TimeOut(seat=seat, at_ms=at_ms))

        return await self.execute(
            table_id, request_id=request_id, decide=decide, expected_version=expected_version
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
        def decide(model: TableModel) -> Sequence[LogEvent]:
            assert model.state is not None
            seat = self._seat(model, player)
            command = Reconnect(seat=seat, at_ms=at_ms) if connected else Disconnect(seat=seat, at_ms=at_ms)
            return table.decide(model.state, command)

        return await self.execute(
            table_id, request_id=request_id, decide=decide, expected_version=expected_version
        )

    async def void_hand(self, *, request_id: str, table_id: str, hand_id: str, reason: str) -> Committed:
        async def precheck(model: TableModel) -> None:
            # A hand of the table that is not live is refused as such (HAND_NOT_LIVE, by the
            # decider), an id it never used as unknown.
            state = model.state
            assert state is not None
            if hand_id in model.hands or hand_id in state.hand_ids:
                return
            if await self._find_older(model, hand_id) is None:
                raise HandNotFound(table_id, hand_id)

        def decide(model: TableModel) -> Sequence[LogEvent]:
            state = model.state
            assert state is not None
            self._check_live(model, hand_id)
            hs = state.hand
            assert hs is not None
            returned = tuple(
                SeatAmount(seat=seat, amount=hs.start_stacks[i])
                for i, seat in enumerate(hs.seats)
                if seat in state.seats
            )
            events: list[LogEvent] = [HandVoided(hand_id=hand_id, reason=reason, returned=returned)]
            stacks = {x.seat: x.amount for x in returned}
            # Players who asked to leave during the hand go now, with their returned stack.
            for seat, occ in sorted(state.seats.items()):
                if occ.leaving:
                    events.append(PlayerLeft(seat=seat, player=occ.player, chips=stacks.get(seat, occ.stack)))
            return events

        return await self.execute(table_id, request_id=request_id, decide=decide, precheck=precheck)

    # -- queries ----------------------------------------------------------------------------

    async def model(self, table_id: str) -> TableModel:
        """The folded table: from the cache when we own it, else a fresh fold of the log."""
        try:
            async with self._lock(table_id):
                model, _ = await self._owned(table_id)
                return model
        except NotOwner:
            pass
        model_or_none = await self.store.load(table_id)
        if model_or_none is None:
            raise TableNotFound(table_id)
        return model_or_none

    async def tables(self) -> list[str]:
        return await self.store.events.tables()

    async def hand(self, table_id: str, hand_id: str) -> tuple[TableModel, HandAt]:
        model = await self.model(table_id)
        record = model.hands.get(hand_id)
        if record is None:
            return model, await self._older_hand(model, hand_id)
        log: tuple[LogEvent, ...]
        if not record.finished or hand_id == model.hand_order[-1]:
            log = tuple(model.hand_log)
        elif hand_id in model.recent:
            log = model.recent[hand_id]
        else:
            log = tuple(await self._read_hand_log(table_id, record))
        return model, HandAt(record=record, log=log, commitment=_commitment(log))

    async def _older_hand(self, model: TableModel, hand_id: str) -> HandAt:
        """A hand older than the model's index (``model.HANDS_KEPT``), found through the hand
        index or in the log; an id the table never scheduled is answered from the index."""
        found = await self._find_older(model, hand_id)
        if found is None:
            raise HandNotFound(model.table_id, hand_id)
        record, stored = found
        log = tuple(_hand_log_of(stored_events=[decode_events(s.envelope) for s in stored]))
        return HandAt(record=record, log=log, commitment=_commitment(log))

    async def _read_hand_log(self, table_id: str, record: HandRecord) -> list[LogEvent]:
        stored = await self.store.read_range(
            table_id, after_sequence=record.first_sequence - 1, last_version=record.last_version
        )
        return _hand_log_of(stored_events=[decode_events(s.envelope) for s in stored])

    async def history(self, table_id: str, hand_id: str) -> tuple[TableModel, HandAt, list[object]]:
        """A finished hand: its log and the raw stored envelopes (first to last version)."""
        model, at = await self.hand(table_id, hand_id)
        if not at.record.finished:
            raise HandNotFinished(hand_id)
        stored = await self.store.read_range(
            table_id, after_sequence=at.record.first_sequence - 1, last_version=at.record.last_version
        )
        return model, at, [s.envelope for s in stored]

    async def watch(
        self, table_id: str, from_version: int, render: Render[T], *, key: object = None
    ) -> AsyncGenerator[T, None]:
        """``render(table, actions added)`` for the table after ``from_version`` (or now, if 0)
        and after every later envelope. On the table's owner, a watch from now is fed from the
        cached model (``services.table.watchers``; watches with the same ``key``, the viewer,
        share one rendered message per version); otherwise, or once that breaks off, from
        the table's subject, so any instance serves it."""
        if not from_version:
            local = await self._watch_locally(table_id, render, key)
            if local is not None:
                first, watch = local
                try:
                    yield first
                    while (message := await watch.next()) is not None:
                        yield message
                finally:
                    self.watchers.remove(watch)
                from_version = watch.delivered
        async with contextlib.aclosing(self._watch_log(table_id, from_version, render)) as messages:
            async for message in messages:
                yield message

    async def _watch_locally(
        self, table_id: str, render: Render[T], key: object
    ) -> tuple[T, LocalWatch[T]] | None:
        try:
            async with self._lock(table_id):
                model, _ = await self._owned(table_id)
                first = render(model, [])
                return first, self.watchers.add(table_id, render, version=model.version, key=key)
        except NotOwner:
            return None
        except TableNotFound:
            raise
        except Exception as exc:  # leases or the log unreachable now: the log path says the rest
            self._log.info("table.watch_from_log", table_id=table_id, error=str(exc))
            return None

    async def _watch_log(
        self, table_id: str, from_version: int, render: Render[T]
    ) -> AsyncGenerator[T, None]:
        """The watch from the table's subject: every envelope folded into a private model. From
        now: the newest snapshot and the log after it; after a version: the log up to it."""
        subject = self.store.subject(table_id)
        if not from_version:
            loaded = await self.store.load(table_id)
            if loaded is None:
                raise TableNotFound(table_id)
            model, after = loaded, loaded.sequence
            yield render(model, [])
        else:
            model = TableModel(table_id=table_id)
            stored = await self.store.events.read(subject)
            if not stored:
                raise TableNotFound(table_id)
            after = 0
            for item in stored:
                if item.envelope.version > from_version:
                    break
                fold_envelope(model, item)
                after = item.sequence
        # aclosing: a watcher that goes away unsubscribes at once (not when collected).
        async with contextlib.aclosing(self.store.events.follow(subject, after_sequence=after)) as stream:
            async for item in stream:
                if item.envelope.version <= model.version:
                    continue
                mark = hand_mark(model)
                fold_envelope(model, item)
                yield render(model, entries_since(model, mark))


def _commitment(log: Sequence[LogEvent]) -> str:
    for e in log:
        if isinstance(e, HandStarted):
            return e.commitment
    return ""


def _hand_log_of(*, stored_events: Sequence[Sequence[LogEvent]]) -> list[LogEvent]:
    """The hand's log from its envelopes: from HandScheduled to HandEnded/HandVoided."""
    out: list[LogEvent] = []
    started = False
    for events in stored_events:
        for e in events:
            if isinstance(e, HandScheduled):
                started = True
            if started:
                out.append(e)
            if started and isinstance(e, HandEnded | HandVoided):
                return out
    return out


def hand_events_of(log: Sequence[LogEvent]) -> list[HandEvent]:
    return [e for e in log if isinstance(e, table.HAND_EVENT_TYPES)]


def hand_state(log: Sequence[LogEvent]) -> hand.HandState | None:
    events = hand_events_of(log)
    return hand.fold(events) if events else None


def _opened_rules(events: Sequence[LogEvent]) -> Rules:
    for e in events:
        if isinstance(e, TableOpened):
            return e.rules
    raise AssertionError("no TableOpened")

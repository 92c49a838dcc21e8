"""The command path: load -> fold -> decide -> append -> evolve, one writer per table, fenced.

Theory of operation
-------------------
* **Cache.** Each table this instance writes is a ``TableModel`` in memory (snapshot + log on
  first use). A command takes the table's lock, asks the engine (``engine.table.decide``) for the
  events, seals them into one envelope (version + 1, hash chain, our writer epoch, the request id
  as ``command_id``) and appends it with the expected last subject sequence; then it folds the
  same events into the cached model. One append per command, no re-read on the happy path.
* **Retries.** A request id already in the model's log answers with the first outcome and appends
  nothing. A command the engine decides to no event (an all-in allowance with nothing to reset)
  appends nothing either, so its request id is not remembered: a retry decides again. A
  ``ConcurrencyConflict`` (someone appended first) drops the cached model, re-reads the log and
  decides again (up to ``max_attempts``): the re-read also finds our own envelope if an earlier
  attempt landed.
* **Fencing.** The partition lease (``services.table.ownership``) gives the epoch. Before its
  first command on a table, a new owner appends ``OwnerChanged{epoch}``; a writer that finds a
  higher epoch in the log stops (``NotOwner``, naming the owner) and forgets the partition. With
  every append carrying the expected sequence, a stale owner's write fails and it backs off:
  two instances never both append to one table.
* **Snapshots** at hand boundaries (every ``snapshot_every`` hands), written in the background,
  tagged with the last sequence and engine version; never evidence.

What follows a load or an append elsewhere (cash-outs, hand index entries, escrow
reconciliation) the writer starts through its ``Followups``, which ``TableApp`` wires.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from openpoker.engine import table
from openpoker.engine.errors import EngineError
from openpoker.engine.hand_events import HandEnded
from openpoker.engine.rules import Rules
from openpoker.engine.table_events import OpenTable, TableOpened
from openpoker.eventstore.envelope import Envelope, Snapshot
from openpoker.eventstore.errors import ConcurrencyConflict, CorruptMessage
from openpoker.eventstore.loading import Finding, LogQuarantined, not_ours
from openpoker.eventstore.subjects import partition_of
from openpoker.services.table.background import Background
from openpoker.services.table.config import SERVICE
from openpoker.services.table.errors import (
    NotOwner,
    StaleVersion,
    TableExists,
    TableNotFound,
    TooManyConflicts,
)
from openpoker.services.table.ownership import Ownership, PartitionHeld
from openpoker.services.table.watchers import LocalWatchers, entries_since, hand_mark
from openpoker.shell import metrics
from openpoker.shell.logs import get_logger
from openpoker.tablelog.events import BuyInIntended, HandVoided, OwnerChanged
from openpoker.tablelog.model import Left, LogEvent, Outcome, TableModel
from openpoker.tablelog.store import TableStore


@dataclass(frozen=True, slots=True, kw_only=True)
class Committed:
    model: TableModel
    outcome: Outcome
    duplicate: bool
    events: tuple[LogEvent, ...]  # the events appended (empty for a duplicate)


Decider = Callable[[TableModel], Sequence[LogEvent]]
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
    """The envelope's ``rules_version``: the profile and the house rules version, "seeds/2"."""
    return f"{rules.profile.value}/{rules.version}"


def _opened_rules(events: Sequence[LogEvent]) -> Rules:
    for e in events:
        if isinstance(e, TableOpened):
            return e.rules
    raise AssertionError("no TableOpened")


def _ignore(*_: object) -> None:
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Followups:
    """Background work the writer starts for the other parts of the application (each starts
    its own task and returns at once)."""

    cash_out: Callable[[str, int, Left], None] = _ignore  # (table, version, who left)
    index: Callable[[str], None] = _ignore  # write the hand index entries of a table
    fenced: Callable[[str], None] = _ignore  # we took a table over (OwnerChanged appended)
    took_partition: Callable[[int], None] = _ignore  # we hold a partition (again, or anew)
    intent: Callable[[str, BuyInIntended], None] = _ignore  # settle a buy-in intent left open


class Writer:
    def __init__(
        self,
        *,
        store: TableStore,
        ownership: Ownership,
        watchers: LocalWatchers,
        background: Background,
        clock: Callable[[], dt.datetime],
        snapshot_every: int,
        max_attempts: int,
    ) -> None:
        self.store = store
        self.ownership = ownership
        self.watchers = watchers
        self.background = background
        self.clock = clock
        self.max_attempts = max_attempts
        self._snapshot_every = max(1, snapshot_every)
        self.tables: dict[str, TableModel] = {}  # the cached models of the tables we write
        # Tables whose log holds a foreign or corrupt message: no write until an operator
        # removes it and restarts the service (eventstore.loading); reads fold the good prefix.
        self.quarantined: dict[str, Finding] = {}
        self._epochs: dict[str, int] = {}  # table id -> the epoch its cached model was fenced with
        self._locks: dict[str, asyncio.Lock] = {}
        self.partitions: dict[int, int] = {}  # the partitions we hold, with the epoch we got
        self.followups = Followups()
        self._log = get_logger()

    # -- cache and ownership ---------------------------------------------------------------

    def lock(self, table_id: str) -> asyncio.Lock:
        lock = self._locks.get(table_id)
        if lock is None:
            lock = self._locks[table_id] = asyncio.Lock()
        return lock

    def forget(self, table_id: str) -> None:
        self.tables.pop(table_id, None)
        self._epochs.pop(table_id, None)
        self.watchers.forget(table_id)  # they go on from the log

    def drop_partition(self, partition: int) -> None:
        """Our lease of ``partition`` is gone: forget its tables (re-read on next use)."""
        self.partitions.pop(partition, None)
        for table_id in [t for t in self.tables if self.partition(t) == partition]:
            self.forget(table_id)

    def partition(self, table_id: str) -> int:
        return partition_of(table_id, self.store.partitions)

    async def epoch(self, table_id: str) -> int:
        partition = self.partition(table_id)
        try:
            epoch = await self.ownership.epoch(partition)
        except PartitionHeld as held:
            self.drop_partition(partition)
            raise NotOwner(table_id=table_id, partition=partition, owner=held.holder) from None
        if self.partitions.get(partition) != epoch:
            self.took_partition(partition, epoch)
        return epoch

    def took_partition(self, partition: int, epoch: int) -> None:
        """We hold ``partition`` (again, or with a new epoch)."""
        self.partitions[partition] = epoch
        self.followups.took_partition(partition)

    async def still_owned(self, table_id: str) -> bool:
        """Do we still own the table? (True when that cannot be told: NATS away.)"""
        try:
            await self.epoch(table_id)
        except NotOwner:
            return False
        except Exception:
            return True
        return True

    async def owned(self, table_id: str) -> tuple[TableModel, int]:
        """The cached model (loaded and fenced if needed) and our epoch; call under the lock."""
        epoch = await self.epoch(table_id)
        model = self.tables.get(table_id)
        if model is not None and self._epochs.get(table_id) == epoch:
            return model, epoch
        self.forget(table_id)
        for _ in range(self.max_attempts):
            model = await self._load(table_id)
            if model is None:
                raise TableNotFound(table_id)
            if await self._fence(model, epoch):
                self.tables[table_id] = model
                self._epochs[table_id] = epoch
                for version, left in model.left_log:  # idempotent: see TableModel.left_log
                    if left.chips > 0:
                        self.followups.cash_out(table_id, version, left)
                # Entries a previous owner may not have written (it stopped before).
                self.followups.index(table_id)
                # Buy-ins a crash (or a previous owner) left open or owed: settled from the log.
                for intent in (*model.intents.values(), *model.owed.values()):
                    self.followups.intent(table_id, intent)
                return model, epoch
        raise TooManyConflicts(table_id=table_id, attempts=self.max_attempts)

    async def _load(self, table_id: str) -> TableModel | None:
        """The table's model for writing; ``LogQuarantined`` if its log holds a foreign or
        corrupt message (logged once as ``log.corrupt``)."""
        finding = self.quarantined.get(table_id)
        if finding is None:
            refused = self.store.snapshots_refused
            loaded = await self.store.load_checked(table_id)
            if self.store.snapshots_refused != refused:  # not its writer's: the log was folded instead
                self._log.warning("snapshot.refused", table_id=table_id)
                metrics.snapshot_refused(SERVICE)
            if loaded.finding is None:
                return loaded.model
            finding = self._quarantine(table_id, loaded.finding)
        raise LogQuarantined(finding)

    def _quarantine(self, table_id: str, finding: Finding) -> Finding:
        """No write to ``table_id`` until an operator repairs its log and restarts us."""
        known = self.quarantined.get(table_id)
        if known is not None:
            return known
        self.quarantined[table_id] = finding
        self.forget(table_id)
        self._log.error("log.corrupt", table_id=table_id, detail=finding.detail, **finding.fields())
        metrics.quarantined(SERVICE, table_id, finding.problem.value)
        return finding

    async def _check_own(self, table_id: str, envelope: Envelope, sequence: int) -> None:
        """``LogQuarantined`` unless the message stored at ``sequence`` is ``envelope`` itself."""
        subject = self.store.subject(table_id)
        try:
            stored = await self.store.events.next_after(subject, sequence - 1)
        except CorruptMessage:
            stored = None
        if stored is not None and stored.sequence == sequence and stored.envelope.hash == envelope.hash:
            return
        found = stored if stored is not None and stored.sequence == sequence else None
        finding = not_ours(found, stream=table_id, subject=subject, ours=envelope, sequence=sequence)
        raise LogQuarantined(self._quarantine(table_id, finding))

    async def _fence(self, model: TableModel, epoch: int) -> bool:
        """Make the log ours: refuse a higher epoch, append OwnerChanged over a lower one.
        False when the append lost a race (reload and try again)."""
        if model.epoch > epoch:
            partition = self.partition(model.table_id)
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
        self.followups.fenced(model.table_id)
        return True

    # -- appending --------------------------------------------------------------------------

    async def _append(
        self, model: TableModel, events: Sequence[LogEvent], *, command_id: str, epoch: int
    ) -> Outcome:
        assert model.state is not None or any(isinstance(e, TableOpened) for e in events)
        rules = model.state.rules if model.state is not None else _opened_rules(events)
        envelope = await self.store.seal(
            model,
            events,
            command_id=command_id,
            epoch=epoch,
            rules_version=rules_version(rules),
            recorded_at=self.clock(),
        )
        result = await self.store.append(model, envelope)
        if result.duplicate:
            # A message with our id (table:version:epoch) is stored: an earlier attempt of this
            # very envelope, or anyone's publish under that id first. Only the former counts;
            # then re-read, which folds it and answers the request as a retry.
            await self._check_own(model.table_id, envelope, result.sequence)
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
        async with self.lock(table_id):
            for _ in range(self.max_attempts):
                model, epoch = await self.owned(table_id)
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
                if not events:  # nothing happened (an allowance already whole): nothing to append
                    return Committed(
                        model=model, outcome=Outcome(version=model.version), duplicate=False, events=()
                    )
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
        raise TooManyConflicts(table_id=table_id, attempts=self.max_attempts)

    async def create(self, table_id: str, *, request_id: str, rules: Rules) -> Committed:
        """Open a new table: its first envelope, with our OwnerChanged ahead of TableOpened."""
        async with self.lock(table_id):
            epoch = await self.epoch(table_id)
            for _ in range(self.max_attempts):
                existing = await self._load(table_id)
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
                self.tables[table_id] = model
                self._epochs[table_id] = epoch
                return Committed(model=model, outcome=outcome, duplicate=False, events=tuple(events))
        raise TooManyConflicts(table_id=table_id, attempts=self.max_attempts)

    def _after_append(self, model: TableModel, events: Sequence[LogEvent], outcome: Outcome) -> None:
        state = model.state
        assert state is not None
        ended = any(isinstance(e, HandEnded) for e in events)
        voided = any(isinstance(e, HandVoided) for e in events)
        if state.hand is None and (voided or (ended and state.hands_played % self._snapshot_every == 0)):
            self.background.spawn(self._snapshot_after_reply(model, model.version))
        if ended or voided:  # where the hand is in the log, for when it leaves the model's index
            self.followups.index(model.table_id)
        # Players who left as a follow-on of someone else's command (a leave requested during
        # the hand), and what players who left a hand had committed to it when it is voided, are
        # cashed out here; LeaveTable's own leaves are tried at once by ``leave`` as well.
        for gone in outcome.left:
            if gone.chips > 0:
                self.followups.cash_out(model.table_id, outcome.version, gone)

    # -- snapshots --------------------------------------------------------------------------

    async def _snapshot_after_reply(self, model: TableModel, version: int) -> None:
        """Encode the snapshot once the command that ended the hand has answered (its reply is
        already with gRPC when this task runs): encoding a table with a long history takes
        milliseconds, which that player's reply no longer waits for. Under the table's lock, and
        only if nothing was appended since (else the next hand boundary takes one). Encoded in a
        worker thread: every change to a model is made under its table's lock, which this holds,
        so the thread reads a still model, and the event loop (other tables) gets the interpreter
        back every switch interval (5 ms) instead of waiting for the whole encoding."""
        async with self.lock(model.table_id):
            state = model.state
            if model.version != version or state is None or state.hand is not None:
                return
            snap = await asyncio.to_thread(self.store.snapshot_of, model)
        await self._save_snapshot(snap)

    async def _save_snapshot(self, snap: Snapshot) -> None:
        snap = self.store.signed(snap)
        try:
            await self.store.events.save_snapshot(snap)
        except Exception as exc:  # a cache: losing one costs a longer load, nothing else
            self._log.warning("table.snapshot_failed", table_id=snap.stream_id, error=str(exc))

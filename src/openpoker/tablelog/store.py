"""The table log: engine events in envelopes on ``poker.table.<partition>.<table_id>``.

``TableEvents`` is the port: the event store (``eventstore.port.EventStore``) plus the two reads
the table service needs beyond it: ``follow`` (envelopes as they are appended, for WatchTable)
and ``tables`` (every table's id in creation order, for ListTables). ``MemoryTableEvents`` (unit
tests) and ``JetStreamTableEvents`` extend the two event stores of ``openpoker.eventstore``.

``TableStore`` turns engine values into envelopes and back: each event is
``Event{type=<class name>, payload=engine.codec JSON}``; ``load`` rebuilds a ``TableModel`` from
the newest snapshot (if its engine version matches) and the log after it; ``find_hand`` finds a
hand older than the model's index (``model.HANDS_KEPT``) through the hand index or in the log
itself, and ``reindex`` writes the hand index entries of older hands from the log.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime as dt
import json
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import Protocol

from nats.aio.client import Client as Nats
from nats.js import JetStreamContext, api
from nats.js.errors import KeyNotFoundError, NotFoundError
from nats.js.kv import KeyValue

from openpoker.engine import codec
from openpoker.engine.table_events import HandScheduled, UncontestedHandShown
from openpoker.engine.version import ENGINE_VERSION
from openpoker.eventstore import codec as envelope_codec
from openpoker.eventstore.batchsign import BatchSigner
from openpoker.eventstore.chain import GENESIS, seal
from openpoker.eventstore.envelope import (
    AppendResult,
    Draft,
    Envelope,
    RecordedEvent,
    Snapshot,
    StoredEnvelope,
)
from openpoker.eventstore.jetstream import JetStreamEventStore
from openpoker.eventstore.loading import (
    Finding,
    SnapshotVerifier,
    Tip,
    Verifier,
    fold_finding,
    read_checked,
)
from openpoker.eventstore.memory import InMemoryEventStore
from openpoker.eventstore.signing import Signer
from openpoker.eventstore.streams import BucketSettings, ensure_bucket
from openpoker.eventstore.subjects import table_subject
from openpoker.tablelog import payload, snapshot
from openpoker.tablelog.allowances import MemoryAllowanceRecords
from openpoker.tablelog.model import HandRecord, LogEvent, TableModel

AUDIT_STREAM = "RNG_AUDIT"  # written by the dealer (services.dealer.audit)
AUDIT_PREFIX = "poker.audit.rng"


class TableEvents(Protocol):
    async def append(self, subject: str, envelope: Envelope, *, expected_sequence: int) -> AppendResult: ...

    async def last(self, subject: str) -> StoredEnvelope | None: ...

    async def read(
        self, subject: str, *, after_sequence: int = 0, from_version: int = 1
    ) -> list[StoredEnvelope]: ...

    async def save_snapshot(self, snapshot: Snapshot) -> None: ...

    async def load_snapshot(self, stream_id: str) -> Snapshot | None: ...

    def follow(self, subject: str, *, after_sequence: int) -> AsyncGenerator[StoredEnvelope, None]:
        """Envelopes on ``subject`` after ``after_sequence``, then each new one, until cancelled."""
        ...

    async def tables(self) -> list[str]:
        """Every table id with a log, in creation order."""
        ...

    async def next_after(self, subject: str, sequence: int) -> StoredEnvelope | None:
        """The first envelope on ``subject`` after stream sequence ``sequence``, or None (one
        request: for a few envelopes, no consumer that would push the rest of the log)."""
        ...

    async def save_hand(self, table_id: str, record: HandRecord) -> None:
        """Remember where a finished hand is in the log (the hand index, a cache like snapshots:
        ``TableStore.find_hand`` checks an entry against the log and falls back to reading it)."""
        ...

    async def load_hand(self, table_id: str, hand_id: str) -> HandRecord | None:
        """The remembered record of a finished hand, or None."""
        ...

    async def save_indexed_through(self, table_id: str, number: int) -> None:
        """Record that hands 1..``number`` of the table all have their entry in the hand index
        (written only after those entries: see ``TableStore.find_hand``)."""
        ...

    async def load_indexed_through(self, table_id: str) -> int:
        """The highest ``number`` saved by ``save_indexed_through``, 0 if none."""
        ...

    async def revealed_seed(self, table_id: str, hand_id: str) -> str:
        """The hand's seed (hex) from the audit record of reveals, or "" if not revealed yet.

        The dealer records each reveal in stream ``RNG_AUDIT``, subject
        ``poker.audit.rng.<table_id>`` (``services.dealer.audit``), JSON with ``hand_id`` and
        ``seed``; the first record per hand counts."""
        ...


class MemoryTableEvents(InMemoryEventStore):
    """For unit tests: the in-memory store plus follow (polling) and the table catalogue."""

    poll_interval = 0.005

    def __init__(self) -> None:
        super().__init__()
        self.reveals: dict[tuple[str, str], str] = {}  # (table, hand) -> seed hex, set by tests
        self.hand_index: dict[tuple[str, str], bytes] = {}  # (table, hand) -> hand_value()
        self.indexed_through: dict[str, int] = {}  # table -> save_indexed_through
        self.hand_index_puts = 0  # entries written (tests count repairs)
        # The site-wide allowance record (KV ``poker-allowances``), shared by every table app
        # a test runs over this store.
        self.allowances = MemoryAllowanceRecords()

    async def save_hand(self, table_id: str, record: HandRecord) -> None:
        self.hand_index[table_id, record.hand_id] = hand_value(record)
        self.hand_index_puts += 1

    async def save_indexed_through(self, table_id: str, number: int) -> None:
        self.indexed_through[table_id] = number

    async def load_indexed_through(self, table_id: str) -> int:
        return self.indexed_through.get(table_id, 0)

    async def next_after(self, subject: str, sequence: int) -> StoredEnvelope | None:
        for message in self._by_subject.get(subject, []):
            if message.sequence > sequence:
                return StoredEnvelope(envelope=envelope_codec.decode(message.data), sequence=message.sequence)
        return None

    async def load_hand(self, table_id: str, hand_id: str) -> HandRecord | None:
        data = self.hand_index.get((table_id, hand_id))
        return None if data is None else hand_of_value(hand_id, data)

    async def revealed_seed(self, table_id: str, hand_id: str) -> str:
        return self.reveals.get((table_id, hand_id), "")

    async def follow(self, subject: str, *, after_sequence: int) -> AsyncGenerator[StoredEnvelope, None]:
        while True:
            batch = await self.read(subject, after_sequence=after_sequence)
            for stored in batch:
                after_sequence = stored.sequence
                yield stored
            if not batch:
                await asyncio.sleep(self.poll_interval)

    async def tables(self) -> list[str]:
        firsts = sorted((msgs[0].sequence, subject) for subject, msgs in self._by_subject.items() if msgs)
        return [subject.rsplit(".", 1)[1] for _, subject in firsts if subject.startswith("poker.table.")]


class JetStreamTableEvents(JetStreamEventStore):
    """JetStream: follow with an ordered push consumer; the catalogue from the stream's subjects."""

    def __init__(self, js: JetStreamContext, *, stream: str, nc: Nats | None = None) -> None:
        super().__init__(js, stream=stream, nc=nc)
        self._created: dict[str, int] = {}  # table id -> first stream sequence (never changes)
        self._reveals: dict[str, tuple[int, dict[str, str]]] = {}  # table -> (last seq read, seeds)
        self._hands: KeyValue | None = None

    async def _hand_bucket(self) -> KeyValue:
        """The hand index bucket, created on first use with the events stream's replicas."""
        if self._hands is None:
            info = await self._js.stream_info(self._stream)
            replicas = info.config.num_replicas or 1
            self._hands = await ensure_bucket(
                self._js, BucketSettings(bucket=HANDS_BUCKET, replicas=replicas)
            )
        return self._hands

    async def next_after(self, subject: str, sequence: int) -> StoredEnvelope | None:
        try:
            raw = await self._js.get_msg(self._stream, seq=sequence + 1, subject=subject, next=True)
        except NotFoundError:
            return None
        found = int(raw.seq or 0)
        return StoredEnvelope(envelope=self._decode(subject, found, raw.data), sequence=found)

    async def save_hand(self, table_id: str, record: HandRecord) -> None:
        kv = await self._hand_bucket()
        await kv.put(hand_key(table_id, record.hand_id), hand_value(record))

    async def load_hand(self, table_id: str, hand_id: str) -> HandRecord | None:
        kv = await self._hand_bucket()
        try:
            entry = await kv.get(hand_key(table_id, hand_id))
        except KeyNotFoundError:
            return None
        return None if not entry.value else hand_of_value(hand_id, entry.value)

    async def save_indexed_through(self, table_id: str, number: int) -> None:
        kv = await self._hand_bucket()
        await kv.put(indexed_key(table_id), str(number).encode())

    async def load_indexed_through(self, table_id: str) -> int:
        kv = await self._hand_bucket()
        try:
            entry = await kv.get(indexed_key(table_id))
        except KeyNotFoundError:
            return 0
        try:
            return max(0, int(entry.value or b"0"))
        except ValueError:  # not ours: as if none (the log is read instead)
            return 0

    async def revealed_seed(self, table_id: str, hand_id: str) -> str:
        subject = f"{AUDIT_PREFIX}.{table_id}"
        last, seeds = self._reveals.get(table_id, (0, {}))
        while hand_id not in seeds:
            try:
                raw = await self._js.get_msg(AUDIT_STREAM, seq=last + 1, subject=subject, next=True)
            except NotFoundError:  # no (more) records, or no audit stream yet
                break
            last = int(raw.seq or last + 1)
            try:
                doc = json.loads(raw.data or b"")
                seeds.setdefault(str(doc["hand_id"]), str(doc["seed"]))
            except (ValueError, KeyError, TypeError):
                continue  # not a reveal record: the replay reports it, here it is skipped
        self._reveals[table_id] = (last, seeds)
        return seeds.get(hand_id, "")

    async def follow(self, subject: str, *, after_sequence: int) -> AsyncGenerator[StoredEnvelope, None]:
        config = api.ConsumerConfig(
            deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=after_sequence + 1
        )
        sub = await self._js.subscribe(subject, stream=self._stream, ordered_consumer=True, config=config)
        try:
            async for msg in sub.messages:
                sequence = msg.metadata.sequence.stream
                yield StoredEnvelope(envelope=self._decode(subject, sequence, msg.data), sequence=sequence)
        finally:
            await sub.unsubscribe()

    async def tables(self) -> list[str]:
        info = await self._js.stream_info(self._stream, subjects_filter="poker.table.>")
        for subject in (info.state.subjects or {}) if info.state else {}:
            table_id = subject.rsplit(".", 1)[1]
            if table_id not in self._created:
                try:
                    raw = await self._js.get_msg(self._stream, seq=1, subject=subject, next=True)
                except NotFoundError:
                    continue
                self._created[table_id] = int(raw.seq or 0)
        return [t for t, _ in sorted(self._created.items(), key=lambda kv: kv[1])]


# The hand index (``TableEvents.save_hand``): KV bucket, key ``<table id>.<hand id>`` (each
# base64url, as ids may hold characters keys may not), value JSON [number, first_version,
# first_sequence, last_version, last_sequence, voided].
HANDS_BUCKET = "poker-table-hands"
REINDEX_BATCH = 64  # hand index entries written at once by ``TableStore.reindex``
# Envelopes read after a finished hand looking for its winner's show (between hands: seats,
# leaves and top-ups; a show comes before the next hand, usually within a few).
AFTER_HAND_READS = 64


def _token(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode()


def hand_key(table_id: str, hand_id: str) -> str:
    return f"{_token(table_id)}.{_token(hand_id)}"


def indexed_key(table_id: str) -> str:
    """The key of the table's ``indexed_through`` count. "indexed" is 7 characters, and a hand
    id's token is a multiple of 4 (base64 with padding): it is never a hand's key."""
    return f"{_token(table_id)}.indexed"


def hand_value(record: HandRecord) -> bytes:
    r = record
    return json.dumps(
        [r.number, r.first_version, r.first_sequence, r.last_version, r.last_sequence, r.voided]
    ).encode()


def hand_of_value(hand_id: str, data: bytes) -> HandRecord | None:
    """The record, or None if ``data`` is not one (a cache: the caller reads the log instead)."""
    try:
        number, fv, fs, lv, ls, voided = json.loads(data)
        return HandRecord(
            hand_id=hand_id,
            number=int(number),
            first_version=int(fv),
            first_sequence=int(fs),
            last_version=int(lv),
            last_sequence=int(ls),
            voided=bool(voided),
        )
    except (ValueError, TypeError):
        return None


# Payload bytes -> the event they decode to. Decoding is a pure function of the payload (the
# codec reads its "type" from it), events are immutable values, and ``engine.codec`` round-trips
# every value exactly (decode(encode(e)) == e, tested for every registered type), so equal bytes
# may share one event. Decoding costs tens of microseconds per event and every WatchTable stream
# folds every envelope; the writer remembers what it sealed, so watchers on the owning instance
# decode nothing, and others decode each payload once. Bounded: the oldest entries go first.
DECODED_KEPT = 8192
_decoded: dict[bytes, LogEvent] = {}


def _remember(data: bytes, event: LogEvent) -> None:
    if len(_decoded) >= DECODED_KEPT:
        del _decoded[next(iter(_decoded))]
    _decoded[data] = event


def to_recorded(event: LogEvent) -> RecordedEvent:
    data = payload.encode(event)
    _remember(data, event)
    return RecordedEvent(type=type(event).__name__, payload=data)


def from_recorded(event: RecordedEvent) -> LogEvent:
    known = _decoded.get(event.payload)
    if known is not None:
        return known
    value: LogEvent = codec.decode(json.loads(event.payload))
    _remember(event.payload, value)
    return value


def decode_events(envelope: Envelope) -> list[LogEvent]:
    return [from_recorded(e) for e in envelope.events]


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedTable:
    """A table as loaded: its model (None: no good envelope) and the first finding (None: all
    good)."""

    model: TableModel | None
    finding: Finding | None


class TableStore:
    def __init__(
        self,
        events: TableEvents,
        *,
        partitions: int,
        signer: Signer | None = None,
        verifier: Verifier | None = None,
        snapshot_verifier: SnapshotVerifier | None = None,
    ) -> None:
        self.events = events
        self.partitions = partitions
        # The table's envelope-signing key (None: unsigned, a test rig), signing the envelopes
        # the tables seal in one pass of the event loop with one signature.
        self.signer = None if signer is None else BatchSigner(signer)
        # The further check of every loaded or watched envelope: its signature (None: a test rig).
        self.verifier = verifier
        # A snapshot is used only if it passes (signed by the table's writer); else the log is
        # folded from its start. ``snapshots_refused`` counts the refusals (tests, logs).
        self.snapshot_verifier = snapshot_verifier
        self.snapshots_refused = 0

    def subject(self, table_id: str) -> str:
        return table_subject(table_id, self.partitions)

    async def seal(
        self,
        model: TableModel,
        events: Sequence[LogEvent],
        *,
        command_id: str,
        epoch: int,
        rules_version: str,
        recorded_at: dt.datetime,
        correlation_id: str = "",
    ) -> Envelope:
        draft = Draft(
            stream_id=model.table_id,
            version=model.version + 1,
            command_id=command_id,
            owner_epoch=epoch,
            rules_version=rules_version,
            engine_version=ENGINE_VERSION,
            events=tuple(to_recorded(e) for e in events),
            recorded_at=recorded_at,
            correlation_id=correlation_id,
        )
        envelope = seal(draft, prev_hash=model.last_hash or GENESIS)
        return envelope if self.signer is None else await self.signer.sign(envelope)

    async def append(self, model: TableModel, envelope: Envelope) -> AppendResult:
        return await self.events.append(
            self.subject(model.table_id), envelope, expected_sequence=model.sequence
        )

    async def load(self, table_id: str) -> TableModel | None:
        """Snapshot (if usable) + the log after it, up to the first foreign or corrupt message
        (``load_checked``); None when the table has no (good) log."""
        return (await self.load_checked(table_id)).model

    async def load_checked(self, table_id: str, *, verifier: Verifier | None = None) -> LoadedTable:
        """The table up to the last envelope that passes every check (``eventstore.loading``)
        and the first finding, if any: a foreign or corrupt message is reported, never folded.
        ``verifier``: instead of the store's own."""
        model = await self._base(table_id)
        subject = self.subject(table_id)
        read = await read_checked(
            self.events,
            subject,
            stream=table_id,
            tip=Tip(version=model.version, hash=model.last_hash or GENESIS),
            after_sequence=model.sequence,
            verifier=verifier or self.verifier,
        )
        finding = read.finding
        for index, item in enumerate(read.good):
            try:
                fold_envelope(model, item)
            except Exception as exc:  # any failure of foreign events to decode or fold is a finding
                finding = fold_finding(item, stream=table_id, subject=subject, exc=exc)
                # The failed fold may have changed the model part-way: fold the good ones again.
                model = await self._base(table_id)
                for good in read.good[:index]:
                    fold_envelope(model, good)
                break
        return LoadedTable(model=model if model.state is not None else None, finding=finding)

    async def _base(self, table_id: str) -> TableModel:
        """The snapshot's model if usable, else an empty one."""
        model: TableModel | None = None
        snap = await self.events.load_snapshot(table_id)
        check = self.snapshot_verifier
        if snap is not None and check is not None and check(snap) is not None:
            self.snapshots_refused += 1
            snap = None
        if snap is not None and snap.engine_version == ENGINE_VERSION:
            try:
                model = snapshot.decode(snap.state)
            except (snapshot.SnapshotUnusable, ValueError, KeyError, TypeError):
                model = None
        return model if model is not None else TableModel(table_id=table_id)

    async def read_range(
        self, table_id: str, *, after_sequence: int, last_version: int
    ) -> list[StoredEnvelope]:
        """Envelopes after ``after_sequence`` up to version ``last_version`` (a hand: a few
        envelopes), one request each, not the whole rest of the log."""
        subject = self.subject(table_id)
        out: list[StoredEnvelope] = []
        sequence = after_sequence
        while (stored := await self.events.next_after(subject, sequence)) is not None:
            if stored.envelope.version > last_version:
                break
            out.append(stored)
            if stored.envelope.version == last_version:
                break
            sequence = stored.sequence
        return out

    async def after_hand(self, table_id: str, hand: Sequence[StoredEnvelope]) -> list[StoredEnvelope]:
        """The envelopes after a finished hand's (``hand``, first to last) up to the winner's show
        of that hand won uncontested, if one was written (``UncontestedHandShown``, allowed until
        the next hand starts, so after the hand's last envelope); [] if none. Reads at most
        ``AFTER_HAND_READS`` envelopes and stops at the next hand."""
        if not hand:
            return []
        scheduled = [from_recorded(e) for e in hand[0].envelope.events if e.type == "HandScheduled"]
        hand_id = next((e.hand_id for e in scheduled if isinstance(e, HandScheduled)), "")
        subject = self.subject(table_id)
        out: list[StoredEnvelope] = []
        sequence = hand[-1].sequence
        for _ in range(AFTER_HAND_READS):
            stored = await self.events.next_after(subject, sequence)
            if stored is None or any(e.type == "HandScheduled" for e in stored.envelope.events):
                return []
            out.append(stored)
            for recorded in stored.envelope.events:
                if recorded.type == "UncontestedHandShown":
                    shown = from_recorded(recorded)
                    if isinstance(shown, UncontestedHandShown) and shown.hand_id == hand_id:
                        return out
            sequence = stored.sequence
        return []

    async def find_hand(
        self, table_id: str, hand_id: str, *, before_sequence: int, complete: bool = False
    ) -> tuple[HandRecord, list[StoredEnvelope]] | None:
        """A hand that started before stream sequence ``before_sequence`` (the first envelope of
        the oldest hand the model still indexes, which exists): its record and its envelopes.
        None if no such hand. Hands never overlap, so the hand is over before ``before_sequence``.

        First from the hand index (``TableEvents.load_hand``, written after each hand): its
        entry is used only if the log range it names holds that hand from its ``HandScheduled``
        to its end. ``complete``: the caller knows that every hand before ``before_sequence``
        has its entry (``TableEvents.load_indexed_through``), so an id without one is no hand of
        the table, answered without reading the log. Else (no entry: written by a writer that
        stopped before saving it, or the index lost; or a wrong entry) by reading the log from
        the start, numbering hands by their ``HandScheduled`` in log order as the fold does (only
        those payloads are decoded), and the entry is saved again."""
        try:
            known = await self.events.load_hand(table_id, hand_id)
        except Exception:  # the index is a cache: without it, read the log
            known = None
            complete = False
        if known is not None and known.first_sequence < before_sequence:
            stored = await self.read_range(
                table_id, after_sequence=known.first_sequence - 1, last_version=known.last_version
            )
            if _is_hand(known, stored):
                return known, stored
        if known is None and complete:
            return None
        found = await self._scan_for_hand(table_id, hand_id, before_sequence=before_sequence)
        if found is not None:
            with contextlib.suppress(Exception):  # repair the index; the answer stands without
                await self.events.save_hand(table_id, found[0])
        return found

    async def reindex(self, table_id: str, *, before_sequence: int) -> int:
        """Write the hand index entry of every hand that started before stream sequence
        ``before_sequence``, from the log (read once, only ``HandScheduled``, ``HandEnded`` and
        ``HandVoided`` payloads decoded); returns how many hands, from the first, now have their
        entry (every one of them: hands before an indexed hand are over). For a table whose
        index cannot be trusted to be complete (written before the count existed, or a lost bucket)."""
        records: list[HandRecord] = []
        current: HandRecord | None = None
        subject = self.subject(table_id)
        async with contextlib.aclosing(self._scan(subject, 0, before_sequence - 1)) as stream:
            async for stored in stream:
                env = stored.envelope
                for recorded in env.events:
                    if recorded.type == "HandScheduled":
                        event = from_recorded(recorded)
                        assert isinstance(event, HandScheduled)
                        current = HandRecord(
                            hand_id=event.hand_id,
                            number=len(records) + 1,
                            first_version=env.version,
                            first_sequence=stored.sequence,
                        )
                        records.append(current)
                    elif current is not None and recorded.type in ("HandEnded", "HandVoided"):
                        current.last_version, current.last_sequence = env.version, stored.sequence
                        current.voided = recorded.type == "HandVoided"
                        current = None
        await self.save_hands(table_id, [r for r in records if r.finished])
        return next((r.number - 1 for r in records if not r.finished), len(records))

    async def save_hands(self, table_id: str, records: Sequence[HandRecord]) -> None:
        """Write these finished hands' index entries, ``REINDEX_BATCH`` at a time."""
        for start in range(0, len(records), REINDEX_BATCH):
            batch = records[start : start + REINDEX_BATCH]
            await asyncio.gather(*(self.events.save_hand(table_id, r) for r in batch))

    async def _scan_for_hand(
        self, table_id: str, hand_id: str, *, before_sequence: int
    ) -> tuple[HandRecord, list[StoredEnvelope]] | None:
        number = 0
        record: HandRecord | None = None
        out: list[StoredEnvelope] = []
        subject = self.subject(table_id)
        async with contextlib.aclosing(self._scan(subject, 0, before_sequence - 1)) as stream:
            async for stored in stream:
                env = stored.envelope
                for recorded in env.events:
                    if recorded.type == "HandScheduled" and record is None:
                        number += 1
                        event = from_recorded(recorded)
                        if isinstance(event, HandScheduled) and event.hand_id == hand_id:
                            record = HandRecord(
                                hand_id=hand_id,
                                number=number,
                                first_version=env.version,
                                first_sequence=stored.sequence,
                            )
                    elif record is not None and recorded.type in ("HandEnded", "HandVoided"):
                        record.last_version, record.last_sequence = env.version, stored.sequence
                        record.voided = recorded.type == "HandVoided"
                if record is not None:
                    out.append(stored)
                    if record.finished:
                        return record, out
        return None

    async def _scan(
        self, subject: str, after_sequence: int, through: int
    ) -> AsyncGenerator[StoredEnvelope, None]:
        """Envelopes on ``subject`` after ``after_sequence`` through sequence ``through``, as a
        stream (bounded memory). A message at or after ``through`` must exist on ``subject``."""
        if through <= after_sequence:
            return
        async with contextlib.aclosing(self.events.follow(subject, after_sequence=after_sequence)) as stream:
            async for stored in stream:
                if stored.sequence > through:
                    return
                yield stored
                if stored.sequence >= through:
                    return

    def signed(self, snap: Snapshot) -> Snapshot:
        """``snap`` signed by the table's key (unsigned in a rig without one)."""
        return snap if self.signer is None else self.signer.signer.sign_snapshot(snap)

    @staticmethod
    def snapshot_of(model: TableModel) -> Snapshot:
        """Encode now (the model keeps changing); publish later with ``events.save_snapshot``."""
        return Snapshot(
            stream_id=model.table_id,
            version=model.version,
            last_sequence=model.sequence,
            engine_version=ENGINE_VERSION,
            state=snapshot.encode(model),
        )


def _is_hand(record: HandRecord, stored: Sequence[StoredEnvelope]) -> bool:
    """Whether ``stored`` is exactly ``record``'s hand: its first envelope schedules it, its last
    one ends (or voids) it, at the versions and sequences the record names, no other hand between."""
    if not stored or not record.finished:
        return False
    first, last = stored[0], stored[-1]
    if (first.sequence, first.envelope.version) != (record.first_sequence, record.first_version):
        return False
    if (last.sequence, last.envelope.version) != (record.last_sequence, record.last_version):
        return False
    types = [e.type for s in stored for e in s.envelope.events]
    if types.count("HandScheduled") != 1 or types.count("HandEnded") + types.count("HandVoided") != 1:
        return False
    scheduled = [from_recorded(e) for e in first.envelope.events if e.type == "HandScheduled"]
    if not any(isinstance(e, HandScheduled) and e.hand_id == record.hand_id for e in scheduled):
        return False
    end = "HandVoided" if record.voided else "HandEnded"
    return any(e.type == end for e in last.envelope.events)


def fold_envelope(model: TableModel, stored: StoredEnvelope) -> None:
    env = stored.envelope
    model.apply(
        decode_events(env),
        version=env.version,
        sequence=stored.sequence,
        envelope_hash=env.hash,
        command_id=env.command_id,
        recorded_at=env.recorded_at,
    )
    # A writer's epoch is also on every envelope (OwnerChanged only marks the switch).
    model.epoch = max(model.epoch, env.owner_epoch)


def proto_envelopes(stored: Sequence[StoredEnvelope]) -> list[object]:
    return [envelope_codec.to_proto(s.envelope) for s in stored]

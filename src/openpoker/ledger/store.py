"""The wallet's log: one subject of the ``WALLET_EVENTS`` stream, written by the wallet alone.

Each command's events are one envelope (``eventstore``): a gapless version, the SHA-256 hash
chain, ``Nats-Expected-Last-Subject-Sequence`` (a second writer is fenced: its append conflicts)
and ``Nats-Msg-Id = wallet:<version>:<epoch>`` (a re-publish after a lost ack is stored once).
The epoch grows with every process start (at least the last epoch + 1, and the clock in
microseconds), so two writers never share a message id for different content.

Versions: every envelope records the engine's version (``engine.version``) like every other
log, and the ledger's own format in ``rules_version`` (what the events mean: ``FORMAT``; every
envelope the wallet ever wrote carries it there). Reading does not depend on either.

Snapshots are a cache in their own stream (``WALLET_SNAPSHOTS``): the whole ledger state as
canonical JSON (zlib) holding its format, tagged with the version and stream sequence it covers
and the engine version. A snapshot of another engine version or format, or one that does not
decode, is ignored and the log replayed in full; a snapshot too big for one message fails
(logged) and restarts replay the log.
"""

from __future__ import annotations

import datetime as dt
import json
import zlib
from dataclasses import dataclass

from openpoker.engine.version import ENGINE_VERSION
from openpoker.eventstore import (
    GENESIS,
    Draft,
    Envelope,
    EventStore,
    RecordedEvent,
    Snapshot,
    StoredEnvelope,
    seal,
)
from openpoker.eventstore.errors import CorruptMessage
from openpoker.eventstore.loading import (
    Finding,
    LogQuarantined,
    SnapshotVerifier,
    Tip,
    Verifier,
    fold_finding,
    not_ours,
    read_checked,
)
from openpoker.eventstore.signing import Signer
from openpoker.eventstore.streams import StreamSettings
from openpoker.ledger.codec import decode_event, decode_state, encode_event, encode_state
from openpoker.ledger.decider import LedgerState, fold
from openpoker.ledger.events import Event

STREAM_ID = "wallet"
SUBJECT = "poker.wallet.ledger"
# Version of the ledger's event format: the envelope's rules_version.
FORMAT = "wallet-ledger/1"
# Snapshots: the state as canonical JSON, zlib-compressed (about 10x smaller: one message must
# stay under the server's max_payload, 1 MiB by default); the body's "format".
SNAPSHOT_FORMAT = "wallet-ledger/1+zlib"
WALLET_SNAPSHOTS = StreamSettings(
    name="WALLET_SNAPSHOTS",
    subjects=("poker.walletsnap.>",),
    deny_delete=False,
    deny_purge=False,
    max_msgs_per_subject=3,
    max_msg_size=64 * 1024 * 1024,
    allow_rollup=True,
)
SNAPSHOT_PREFIX = "poker.walletsnap"


@dataclass(frozen=True, slots=True, kw_only=True)
class Position:
    """Where the log ends: stream sequence (for the next append's expectation), version, hash."""

    sequence: int = 0
    version: int = 0
    hash: bytes = GENESIS
    epoch: int = 0


# ``json.dumps(data, sort_keys=True)`` exactly, without a new encoder per call (the bytes are
# hashed into the chain: never change them).
_EVENT_JSON = json.JSONEncoder(sort_keys=True)


def to_recorded(event: Event) -> RecordedEvent:
    data = encode_event(event)
    return RecordedEvent(type=str(data["type"]), payload=_EVENT_JSON.encode(data).encode())


def from_recorded(recorded: RecordedEvent) -> Event:
    return decode_event(json.loads(recorded.payload))


@dataclass(frozen=True, slots=True, kw_only=True)
class Loaded:
    """The ledger as loaded: its state and position, and the first finding (None: all good)."""

    state: LedgerState
    position: Position
    finding: Finding | None


def _after(stored: StoredEnvelope) -> Position:
    env = stored.envelope
    return Position(sequence=stored.sequence, version=env.version, hash=env.hash, epoch=env.owner_epoch)


class WalletStore:
    """Load the ledger (snapshot + tail) and append one command's events at a time."""

    def __init__(
        self,
        events: EventStore,
        *,
        subject: str = SUBJECT,
        signer: Signer | None = None,
        snapshot_verifier: SnapshotVerifier | None = None,
    ) -> None:
        self._events = events
        self._subject = subject
        self._signer = signer  # the wallet's envelope- and snapshot-signing key (None: a test rig)
        # A snapshot is used only if it passes (signed by the wallet's key); else the log is read.
        self._snapshot_verifier = snapshot_verifier
        self.snapshots_refused = 0

    async def load(self, *, use_snapshot: bool = True) -> tuple[LedgerState, Position]:
        """The whole ledger; ``LogQuarantined`` if a stored message is not the wallet's."""
        loaded = await self.load_checked(use_snapshot=use_snapshot)
        if loaded.finding is not None:
            raise LogQuarantined(loaded.finding)
        return loaded.state, loaded.position

    async def load_checked(self, *, use_snapshot: bool = True, verifier: Verifier | None = None) -> Loaded:
        """The ledger up to the last envelope that passes every check (``eventstore.loading``) and
        the first finding, if any: a foreign or corrupt message is reported, never folded."""
        state, position = await self._base(use_snapshot)
        read = await read_checked(
            self._events,
            self._subject,
            stream=STREAM_ID,
            tip=Tip(version=position.version, hash=position.hash),
            after_sequence=position.sequence,
            verifier=verifier,
        )
        finding = read.finding
        for index, stored in enumerate(read.good):
            env = stored.envelope
            try:
                fold((from_recorded(r) for r in env.events), state)
            except Exception as exc:  # any failure of foreign events to decode or fold is a finding
                finding = fold_finding(stored, stream=STREAM_ID, subject=self._subject, exc=exc)
                # The failed fold may have changed the state part-way: fold the good ones again.
                state, position = await self._base(use_snapshot)
                for good in read.good[:index]:
                    fold((from_recorded(r) for r in good.envelope.events), state)
                    position = _after(good)
                break
            position = _after(stored)
        return Loaded(state=state, position=position, finding=finding)

    async def _base(self, use_snapshot: bool) -> tuple[LedgerState, Position]:
        """The snapshot's state and position if usable, else the empty ledger."""
        state = LedgerState()
        position = Position()
        snapshot = await self._events.load_snapshot(STREAM_ID) if use_snapshot else None
        check = self._snapshot_verifier
        if snapshot is not None and check is not None and check(snapshot) is not None:
            self.snapshots_refused += 1
            snapshot = None
        if snapshot is not None and snapshot.engine_version == ENGINE_VERSION:
            try:
                body = json.loads(zlib.decompress(snapshot.state))
                if body["format"] == SNAPSHOT_FORMAT:
                    state = decode_state(body["state"])
                    position = Position(
                        sequence=snapshot.last_sequence,
                        version=snapshot.version,
                        hash=bytes.fromhex(body["hash"]),
                        epoch=int(body["epoch"]),
                    )
            except (zlib.error, ValueError, KeyError, TypeError):
                state, position = LedgerState(), Position()  # a cache: replay the log instead
        return state, position

    async def read_all(self) -> list[tuple[int, list[Event]]]:
        """Every message of the log as (stream sequence, events), for audits."""
        return [
            (stored.sequence, [from_recorded(r) for r in stored.envelope.events])
            for stored in await self._events.read(self._subject)
        ]

    async def append(
        self, events: tuple[Event, ...], *, request_id: str, position: Position, epoch: int, now: dt.datetime
    ) -> tuple[Position, bool]:
        """Append one command's events after ``position``; returns the new position and whether
        the store reported the message as a duplicate of one already stored."""
        draft = Draft(
            stream_id=STREAM_ID,
            version=position.version + 1,
            command_id=request_id,
            owner_epoch=epoch,
            rules_version=FORMAT,
            engine_version=ENGINE_VERSION,
            events=tuple(to_recorded(e) for e in events),
            recorded_at=now,
        )
        envelope = seal(draft, position.hash, signer=self._signer)
        result = await self._events.append(self._subject, envelope, expected_sequence=position.sequence)
        if result.duplicate:
            await self._check_own(envelope, result.sequence)
        new = Position(sequence=result.sequence, version=envelope.version, hash=envelope.hash, epoch=epoch)
        return new, result.duplicate

    async def _check_own(self, envelope: Envelope, sequence: int) -> None:
        """A duplicate ack means a message with this id is stored at ``sequence``: anyone may
        publish one first, so it counts as written only if it is this very envelope."""
        try:
            stored = await self._events.read(self._subject, after_sequence=sequence - 1)
        except CorruptMessage as exc:
            stored = list(exc.read_before)
        found = stored[0] if stored and stored[0].sequence == sequence else None
        if found is None or found.envelope.hash != envelope.hash:
            raise LogQuarantined(
                not_ours(found, stream=STREAM_ID, subject=self._subject, ours=envelope, sequence=sequence)
            )

    async def save_snapshot(self, state: LedgerState, position: Position) -> None:
        body = {
            "format": SNAPSHOT_FORMAT,
            "state": encode_state(state),
            "hash": position.hash.hex(),
            "epoch": position.epoch,
        }
        snapshot = Snapshot(
            stream_id=STREAM_ID,
            version=position.version,
            last_sequence=position.sequence,
            engine_version=ENGINE_VERSION,
            state=zlib.compress(json.dumps(body, separators=(",", ":")).encode()),
        )
        await self._events.save_snapshot(
            snapshot if self._signer is None else self._signer.sign_snapshot(snapshot)
        )

"""The envelope: one command's outcome, the unit of append (``poker.common.v1.Envelope``).

``Envelope`` is the library's value type; ``codec`` turns it into the protobuf bytes stored in
JetStream and back. ``Draft`` is an envelope before it is chained (no hashes yet): writers build
a draft and ``chain.seal`` it onto the previous envelope's hash.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedEvent:
    """One domain event: a stable type name and its JSON payload (``engine.codec``)."""

    type: str
    payload: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class Draft:
    """An envelope's content before hashing."""

    stream_id: str
    version: int
    command_id: str
    owner_epoch: int
    rules_version: str
    engine_version: str
    events: tuple[RecordedEvent, ...]
    recorded_at: dt.datetime
    causation_id: str = ""
    correlation_id: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Envelope:
    stream_id: str
    version: int
    command_id: str
    prev_hash: bytes
    hash: bytes
    owner_epoch: int
    rules_version: str
    engine_version: str
    events: tuple[RecordedEvent, ...]
    recorded_at: dt.datetime
    causation_id: str = ""
    correlation_id: str = ""
    # The writer's signature over the hash (``eventstore.signing``); not part of the hash.
    key_id: str = ""
    signature: bytes = b""
    # Signed in a batch (``batch_size`` > 1): the signature is over the Merkle root of the
    # batch's hashes, and this envelope's place and inclusion proof lead from its hash to it.
    batch_index: int = 0
    batch_size: int = 0
    batch_proof: tuple[bytes, ...] = ()

    @property
    def msg_id(self) -> str:
        """The ``Nats-Msg-Id``: stream, version AND owner epoch (ARCHITECTURE.md, measured)."""
        return msg_id(self.stream_id, self.version, self.owner_epoch)


def msg_id(stream_id: str, version: int, owner_epoch: int) -> str:
    return f"{stream_id}:{version}:{owner_epoch}"


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredEnvelope:
    """An envelope as read back: with its stream sequence (the store's position)."""

    envelope: Envelope
    sequence: int


@dataclass(frozen=True, slots=True, kw_only=True)
class AppendResult:
    """Where an append landed; ``duplicate`` when it had landed before (a retry or lost ack)."""

    sequence: int
    duplicate: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot:
    """A cached state of a stream at ``version`` (stream sequence ``last_sequence``).

    Disposable and never dispute evidence: used only when ``engine_version`` matches the
    reader's, else the reader replays the full log.
    """

    stream_id: str
    version: int
    last_sequence: int
    engine_version: str
    state: bytes
    # The writer's signature over every field above (``eventstore.signing.snapshot_message``):
    # a reader with a keyring uses only a snapshot its stream's writer signed.
    key_id: str = ""
    signature: bytes = b""

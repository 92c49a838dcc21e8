"""Shuffle records at rest: the port, an in-memory store for unit tests, JetStream KV.

A stored shuffle holds everything about a hand's shuffle except the plaintext seed: the seed is
sealed (``services.rng.sealing``) before it reaches a store. ``create`` is create-if-absent and
returns whichever record won, so concurrent or retried Shuffle calls for one hand agree on one
seed ("seed stored once").
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from typing import Protocol

from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from openpoker.eventstore.streams import BucketSettings, ensure_bucket


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredShuffle:
    version: str
    table_id: str
    hand_id: str
    deck_size: int
    commitment: str
    sealed_seed: bytes = field(repr=False)
    key_id: str
    # The table log's end when the hand was shuffled: where the reveal starts looking for its
    # HandEnded. A hint only (not sealed): a wrong one can delay a reveal, never allow one.
    log_position: int = 0


class ShuffleStore(Protocol):
    async def create(self, record: StoredShuffle) -> StoredShuffle:
        """Store ``record`` unless the hand already has one; return the stored record."""
        ...

    async def get(self, hand_id: str) -> StoredShuffle | None: ...


class InMemoryShuffleStore:
    """For unit tests: a dict keyed by hand id."""

    def __init__(self) -> None:
        self._records: dict[str, StoredShuffle] = {}

    async def create(self, record: StoredShuffle) -> StoredShuffle:
        return self._records.setdefault(record.hand_id, record)

    async def get(self, hand_id: str) -> StoredShuffle | None:
        return self._records.get(hand_id)


def encode(record: StoredShuffle) -> bytes:
    return json.dumps(
        {
            "version": record.version,
            "table_id": record.table_id,
            "hand_id": record.hand_id,
            "deck_size": record.deck_size,
            "commitment": record.commitment,
            "sealed_seed": base64.b64encode(record.sealed_seed).decode(),
            "key_id": record.key_id,
            "log_position": record.log_position,
        },
        sort_keys=True,
    ).encode()


def decode(data: bytes) -> StoredShuffle:
    raw = json.loads(data)
    return StoredShuffle(
        version=raw["version"],
        table_id=raw["table_id"],
        hand_id=raw["hand_id"],
        deck_size=int(raw["deck_size"]),
        commitment=raw["commitment"],
        sealed_seed=base64.b64decode(raw["sealed_seed"]),
        key_id=raw["key_id"],
        log_position=int(raw.get("log_position", 0)),  # records written before the hint: 0
    )


def kv_key(hand_id: str) -> str:
    # KV keys allow only [-/_=.a-zA-Z0-9]; hand ids are free text, so key by their digest.
    return "hand." + hashlib.sha256(hand_id.encode()).hexdigest()


class JetStreamShuffleStore:
    """A JetStream key-value bucket, one key per hand, history 1, file storage."""

    def __init__(self, kv: KeyValue) -> None:
        self._kv = kv

    @classmethod
    async def open(cls, js: JetStreamContext, bucket: str, *, replicas: int = 1) -> JetStreamShuffleStore:
        # File storage, history 1, no TTL: a seed must outlive every dispute window.
        return cls(await ensure_bucket(js, BucketSettings(bucket=bucket, replicas=replicas)))

    async def create(self, record: StoredShuffle) -> StoredShuffle:
        try:
            await self._kv.create(kv_key(record.hand_id), encode(record))
        except KeyWrongLastSequenceError:
            existing = await self.get(record.hand_id)
            if existing is None:  # pragma: no cover - a key is never deleted
                raise
            return existing
        return record

    async def get(self, hand_id: str) -> StoredShuffle | None:
        try:
            entry = await self._kv.get(kv_key(hand_id))
        except KeyNotFoundError:
            return None
        if entry.value is None:  # pragma: no cover - a key is never deleted
            return None
        return decode(entry.value)

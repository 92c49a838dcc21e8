"""The rng use cases: shuffle, reveal a seed, verify a record.

Shuffle, in this order (the order is the guarantee):

1. validate the ids and deck size (nothing drawn yet);
2. draw the seed from the OS CSPRNG (``EntropyUnavailable`` stops here: no deck, ever, unless
   the hand already has a stored shuffle, which then answers);
3. compute the commitment and seal the seed;
4. store the record (commitment + sealed seed) create-if-absent: if the hand already has one
   (an idempotent retry, another replica), that record wins and ours is dropped unseen;
5. only then derive the deck from the stored record's seed and return it, commitment first.

So no card exists anywhere before its commitment is stored; if storing fails, no deck is
returned. The plaintext seed lives only in local variables of one call and is never logged.

Step 4 doubles as the existence check: the first Shuffle of a hand (every hand, in practice)
costs one write to the store instead of a read and a write; a retry pays a seed drawn for
nothing and the read. A reveal always reads the record from the store: the seed leaves the
service only from a record that opens under its own table, hand and commitment right then.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from openpoker.engine.cards import Card
from openpoker.eventstore.subjects import table_subject
from openpoker.services.rng.errors import (
    HandIdReused,
    HandNotEnded,
    InvalidTableId,
    ShuffleNotFound,
)
from openpoker.services.rng.handlog import HandLog
from openpoker.services.rng.sealing import SeedSealer, associated_data
from openpoker.services.rng.store import ShuffleStore, StoredShuffle
from openpoker.shell.logs import debug_enabled, get_logger
from openpoker.shuffle import (
    CURRENT_VERSION,
    ShuffleRecord,
    Verification,
    canonical_deck,
    commitment,
    derive_deck,
    verify_record,
)
from openpoker.shuffle.derivation import hand_id_bytes
from openpoker.shuffle.entropy import SeedSource
from openpoker.shuffle.errors import EntropyUnavailable


@dataclass(frozen=True, slots=True, kw_only=True)
class Shuffled:
    commitment: str
    version: str
    table_id: str
    hand_id: str
    deck_size: int
    deck: tuple[Card, ...] = field(repr=False)  # for the dealer only: keep it out of logs


@dataclass(frozen=True, slots=True, kw_only=True)
class Revealed:
    table_id: str
    record: ShuffleRecord  # with its seed (excluded from the record's repr)


class RngApp:
    def __init__(
        self, *, store: ShuffleStore, hand_log: HandLog, sealer: SeedSealer, seed_source: SeedSource
    ):
        self._store = store
        self._hand_log = hand_log
        self._sealer = sealer
        self._seed_source = seed_source
        self._log = get_logger()

    def _aad(self, record: StoredShuffle) -> bytes:
        return associated_data(
            version=record.version,
            table_id=record.table_id,
            hand_id=record.hand_id,
            commitment=record.commitment,
        )

    def _open(self, record: StoredShuffle) -> bytes:
        return self._sealer.open(record.sealed_seed, self._aad(record), hand_id=record.hand_id)

    async def shuffle(self, *, table_id: str, hand_id: str, deck_size: int) -> Shuffled:
        try:
            table_subject(table_id)  # the reveal reads the table's subject: it must name one
        except ValueError:
            raise InvalidTableId from None
        hand_id_bytes(hand_id)
        canonical_deck(deck_size)
        stored = await self._commit(table_id=table_id, hand_id=hand_id, deck_size=deck_size)
        if stored.table_id != table_id or stored.deck_size != deck_size:
            raise HandIdReused(hand_id=hand_id)
        # Derive from the STORED seed: whoever won a race, every caller gets the same deck.
        deck = derive_deck(self._open(stored), hand_id, stored.deck_size, stored.version)
        return Shuffled(
            commitment=stored.commitment,
            version=stored.version,
            table_id=stored.table_id,
            hand_id=stored.hand_id,
            deck_size=stored.deck_size,
            deck=deck,
        )

    async def _commit(self, *, table_id: str, hand_id: str, deck_size: int) -> StoredShuffle:
        """Store a fresh shuffle for the hand unless it has one; return the stored record."""
        try:
            seed = self._seed_source()
        except EntropyUnavailable:
            # No seed, so no new shuffle; a hand already shuffled still answers its retry.
            existing = await self._store.get(hand_id)
            if existing is None:
                raise
            return existing
        version = CURRENT_VERSION
        fresh = StoredShuffle(
            version=version,
            table_id=table_id,
            hand_id=hand_id,
            deck_size=deck_size,
            commitment=commitment(seed, hand_id, version),
            sealed_seed=b"",
            key_id=self._sealer.key_id,
            log_position=await self._hand_log.position(table_id),
        )
        sealed = self._sealer.seal(seed, self._aad(fresh))
        del seed  # the plaintext seed goes no further than this call
        mine = dataclasses.replace(fresh, sealed_seed=sealed)
        stored = await self._store.create(mine)
        if stored is mine and debug_enabled():
            # Per hand, so at debug: the commitment is evidence in the store and the table log.
            self._log.debug("shuffle.committed", commitment=stored.commitment, version=stored.version)
        return stored

    async def reveal(self, *, hand_id: str) -> Revealed:
        hand_id_bytes(hand_id)
        stored = await self._store.get(hand_id)
        if stored is None:
            raise ShuffleNotFound(hand_id=hand_id)
        if not await self._hand_log.hand_ended(stored.table_id, hand_id, after=stored.log_position):
            raise HandNotEnded(table_id=stored.table_id, hand_id=hand_id)
        seed = self._open(stored)
        if debug_enabled():  # per hand, so at debug (the dealer keeps the audit record)
            self._log.debug("seed.revealed", commitment=stored.commitment)
        return Revealed(
            table_id=stored.table_id,
            record=ShuffleRecord(
                version=stored.version,
                hand_id=stored.hand_id,
                deck_size=stored.deck_size,
                commitment=stored.commitment,
                seed=seed,
            ),
        )

    @staticmethod
    def verify(record: ShuffleRecord) -> Verification:
        return verify_record(record)

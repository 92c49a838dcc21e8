"""The per-hand shuffle derivation, by algorithm version (docs/rng-certification.md).

``openpoker-shuffle-v1``:

1. ``seed``: 32 bytes from the OS CSPRNG (drawn by the rng service, never here);
   ``hand_id``: a non-empty UTF-8 string, unique forever.
2. ``commitment = SHA-256(b"commit/v1" || seed || hand_id)``; the seed has a fixed length,
   so the concatenation is unambiguous.
3. ``HMAC_DRBG(SHA-256).instantiate(entropy_input=seed, nonce=hand_id,
   personalization=b"openpoker-shuffle-v1")``.
4. Repeated ``generate(64)`` read as big-endian 32-bit words; ``uniform_below(m)`` by rejection.
5. Fisher-Yates from the top down over the canonical deck order of ``engine.cards``
   (2c 2d 2h 2s 3c ... As; the 36-card deck starts at 6c); the deck is dealt from index 0.

Any change to one of these steps is a new version: old records keep verifying under theirs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from openpoker.engine.cards import SHORT_DECK, STANDARD_DECK, Card
from openpoker.shuffle.drbg import HmacDrbg
from openpoker.shuffle.errors import BadDeckSize, BadHandId, BadSeed, UnknownVersion
from openpoker.shuffle.sampling import CHUNK_BYTES, WordStream, fisher_yates

SEED_BYTES: Final = 32
MAX_HAND_ID_BYTES: Final = 256
COMMIT_TAG: Final = b"commit/v1"
V1: Final = "openpoker-shuffle-v1"
CURRENT_VERSION: Final = V1
DECKS: Final[dict[int, tuple[Card, ...]]] = {52: STANDARD_DECK, 36: SHORT_DECK}


@dataclass(frozen=True, slots=True, kw_only=True)
class Algorithm:
    """What a version pins: the DRBG personalization string and the commitment tag."""

    version: str
    personalization: bytes
    commit_tag: bytes


ALGORITHMS: Final[dict[str, Algorithm]] = {
    V1: Algorithm(version=V1, personalization=V1.encode(), commit_tag=COMMIT_TAG),
}


def algorithm(version: str) -> Algorithm:
    try:
        return ALGORITHMS[version]
    except KeyError:
        raise UnknownVersion(version=version) from None


def hand_id_bytes(hand_id: str) -> bytes:
    if not hand_id:
        raise BadHandId(problem="empty")
    raw = hand_id.encode()
    if len(raw) > MAX_HAND_ID_BYTES:
        raise BadHandId(problem=f"longer than {MAX_HAND_ID_BYTES} bytes")
    return raw


def check_seed(seed: bytes) -> bytes:
    if len(seed) != SEED_BYTES:
        raise BadSeed(length=len(seed), required=SEED_BYTES)
    return seed


def canonical_deck(deck_size: int) -> tuple[Card, ...]:
    try:
        return DECKS[deck_size]
    except KeyError:
        raise BadDeckSize(size=deck_size) from None


def commitment(seed: bytes, hand_id: str, version: str = CURRENT_VERSION) -> str:
    """Hex ``SHA-256(tag || seed || hand_id)``: published before the first card is dealt."""
    alg = algorithm(version)
    digest = hashlib.sha256(alg.commit_tag + check_seed(seed) + hand_id_bytes(hand_id))
    return digest.hexdigest()


def open_drbg(seed: bytes, hand_id: str, version: str = CURRENT_VERSION) -> HmacDrbg:
    """The hand's DRBG, instantiated exactly as the deck derivation does."""
    alg = algorithm(version)
    return HmacDrbg.instantiate(check_seed(seed), hand_id_bytes(hand_id), alg.personalization)


def derive_order(seed: bytes, hand_id: str, deck_size: int, version: str = CURRENT_VERSION) -> list[int]:
    """The shuffled deck as canonical indices (``0..deck_size-1``), top first."""
    canonical_deck(deck_size)
    stream = WordStream(open_drbg(seed, hand_id, version))
    return fisher_yates(deck_size, stream.below)


def derive_deck(
    seed: bytes, hand_id: str, deck_size: int, version: str = CURRENT_VERSION
) -> tuple[Card, ...]:
    """The shuffled deck of the hand, top first: a pure function of its inputs."""
    cards = canonical_deck(deck_size)
    return tuple(cards[i] for i in derive_order(seed, hand_id, deck_size, version))


def raw_chunks(seed: bytes, hand_id: str, chunks: int, version: str = CURRENT_VERSION) -> Iterator[bytes]:
    """The first ``chunks`` 64-byte DRBG outputs of a hand: the bytes a deck is cut from.

    This is the lab's "raw output" (before scaling and shuffling); a 52-card deck consumes
    four chunks unless a word is rejected.
    """
    drbg = open_drbg(seed, hand_id, version)
    for _ in range(chunks):
        yield drbg.generate(CHUNK_BYTES)

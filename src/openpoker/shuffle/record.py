"""Shuffle records and their verification (what the dispute replay and the auditor run).

A record is what the hand log keeps about one shuffle: the algorithm version, the hand id, the
deck size, the commitment published before the deal and the cards actually dealt with their
deck positions. Once the hand is over the seed is revealed to authorised callers and the
record can be checked: the seed must open the commitment, and the deck it derives must hold
every dealt card at its position. ``verify_record`` names the first check that fails.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field
from enum import StrEnum

from openpoker.engine.cards import Card
from openpoker.shuffle.derivation import (
    ALGORITHMS,
    DECKS,
    MAX_HAND_ID_BYTES,
    SEED_BYTES,
    commitment,
    derive_deck,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class DealtCard:
    """A card the hand log says was dealt from ``position`` (0 = top of the deck)."""

    position: int
    card: Card


@dataclass(frozen=True, slots=True, kw_only=True)
class ShuffleRecord:
    """One hand's shuffle as logged; ``seed`` is ``None`` until it is revealed.

    The seed is excluded from ``repr`` so a logged record never leaks it.
    """

    version: str
    hand_id: str
    deck_size: int
    commitment: str  # lowercase hex SHA-256
    seed: bytes | None = field(default=None, repr=False)
    dealt: tuple[DealtCard, ...] = ()


def dealt_from_top(cards: tuple[Card, ...] | list[Card]) -> tuple[DealtCard, ...]:
    """``cards`` as dealt from positions 0, 1, 2, ... (a full deck or a prefix of it)."""
    return tuple(DealtCard(position=i, card=c) for i, c in enumerate(cards))


class Check(StrEnum):
    """Which verification check failed. Persisted and sent over the API: never rename."""

    UNKNOWN_VERSION = "UNKNOWN_VERSION"
    BAD_DECK_SIZE = "BAD_DECK_SIZE"
    BAD_HAND_ID = "BAD_HAND_ID"
    SEED_MISSING = "SEED_MISSING"
    SEED_LENGTH = "SEED_LENGTH"
    COMMITMENT_MALFORMED = "COMMITMENT_MALFORMED"
    COMMITMENT_MISMATCH = "COMMITMENT_MISMATCH"
    POSITION_OUT_OF_RANGE = "POSITION_OUT_OF_RANGE"
    DUPLICATE_POSITION = "DUPLICATE_POSITION"
    DECK_MISMATCH = "DECK_MISMATCH"


@dataclass(frozen=True, slots=True, kw_only=True)
class Verification:
    """Outcome of ``verify_record``: ``ok``, or the failed ``check`` with where and why.

    ``detail`` never contains seed material.
    """

    ok: bool
    check: Check | None = None
    position: int | None = None
    expected: Card | None = None
    found: Card | None = None
    detail: str = ""


def _fail(check: Check, detail: str, **where: object) -> Verification:
    return Verification(ok=False, check=check, detail=detail, **where)  # type: ignore[arg-type]


def verify_record(record: ShuffleRecord) -> Verification:
    """Check a revealed record, in order: version, shape, commitment, then each dealt card."""
    if record.version not in ALGORITHMS:
        return _fail(Check.UNKNOWN_VERSION, f"unknown shuffle algorithm version {record.version!r}")
    if record.deck_size not in DECKS:
        return _fail(Check.BAD_DECK_SIZE, f"no canonical deck of {record.deck_size} cards")
    if not record.hand_id or len(record.hand_id.encode()) > MAX_HAND_ID_BYTES:
        return _fail(Check.BAD_HAND_ID, "hand id empty or too long")
    if record.seed is None:
        return _fail(Check.SEED_MISSING, "the seed has not been revealed")
    if len(record.seed) != SEED_BYTES:
        return _fail(Check.SEED_LENGTH, f"seed must be {SEED_BYTES} bytes, got {len(record.seed)}")
    claimed = record.commitment.lower()
    if len(claimed) != 64 or any(ch not in "0123456789abcdef" for ch in claimed):
        return _fail(Check.COMMITMENT_MALFORMED, "commitment is not 64 hex digits")
    recomputed = commitment(record.seed, record.hand_id, record.version)
    if not hmac.compare_digest(recomputed, claimed):
        return _fail(Check.COMMITMENT_MISMATCH, "seed and hand id do not open the commitment")
    deck = derive_deck(record.seed, record.hand_id, record.deck_size, record.version)
    seen: set[int] = set()
    for dealt in record.dealt:
        if not 0 <= dealt.position < record.deck_size:
            return _fail(
                Check.POSITION_OUT_OF_RANGE,
                f"position {dealt.position} outside a {record.deck_size}-card deck",
                position=dealt.position,
            )
        if dealt.position in seen:
            return _fail(
                Check.DUPLICATE_POSITION, f"position {dealt.position} dealt twice", position=dealt.position
            )
        seen.add(dealt.position)
        if deck[dealt.position] != dealt.card:
            return _fail(
                Check.DECK_MISMATCH,
                f"deck mismatch at position {dealt.position}: derived {deck[dealt.position]}, "
                f"logged {dealt.card}",
                position=dealt.position,
                expected=deck[dealt.position],
                found=dealt.card,
            )
    return Verification(ok=True)

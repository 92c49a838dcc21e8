"""Verification of shuffle records: honest records pass, each kind of tampering is named."""

from __future__ import annotations

import dataclasses

import pytest

from openpoker.engine.cards import parse_card
from openpoker.shuffle import (
    V1,
    Check,
    DealtCard,
    ShuffleRecord,
    commitment,
    dealt_from_top,
    derive_deck,
    verify_record,
)

SEED = bytes(range(1, 33))
HAND = "table-7/hand-19"


def honest(dealt: int = 9, size: int = 52) -> ShuffleRecord:
    deck = derive_deck(SEED, HAND, size)
    return ShuffleRecord(
        version=V1,
        hand_id=HAND,
        deck_size=size,
        commitment=commitment(SEED, HAND),
        seed=SEED,
        dealt=dealt_from_top(deck[:dealt]),
    )


@pytest.mark.parametrize("size", [52, 36])
def test_honest_records_verify(size: int) -> None:
    assert verify_record(honest(size=size)).ok
    assert verify_record(honest(dealt=size, size=size)).ok
    assert verify_record(honest(dealt=0, size=size)).ok


def test_non_contiguous_positions_verify() -> None:
    deck = derive_deck(SEED, HAND, 52)
    record = dataclasses.replace(honest(), dealt=(DealtCard(position=20, card=deck[20]),))
    assert verify_record(record).ok


def test_tampered_card_names_the_position() -> None:
    record = honest()
    swapped = list(record.dealt)
    real = swapped[4].card
    fake = next(c for c in derive_deck(SEED, HAND, 52)[9:] if c != real)
    swapped[4] = DealtCard(position=4, card=fake)
    result = verify_record(dataclasses.replace(record, dealt=tuple(swapped)))
    assert not result.ok
    assert result.check is Check.DECK_MISMATCH
    assert result.position == 4
    assert result.expected == real
    assert result.found == fake
    assert "position 4" in result.detail


def test_swapped_cards_are_caught() -> None:
    record = honest()
    d = list(record.dealt)
    d[0], d[1] = DealtCard(position=0, card=d[1].card), DealtCard(position=1, card=d[0].card)
    result = verify_record(dataclasses.replace(record, dealt=tuple(d)))
    assert (result.check, result.position) == (Check.DECK_MISMATCH, 0)


def test_tampered_seed_fails_the_commitment() -> None:
    for flipped in (bytes([SEED[0] ^ 1]) + SEED[1:], SEED[:31] + bytes([SEED[31] ^ 0x80])):
        result = verify_record(dataclasses.replace(honest(), seed=flipped))
        assert result.check is Check.COMMITMENT_MISMATCH
        assert SEED.hex() not in result.detail
        assert flipped.hex() not in result.detail


def test_tampered_seed_with_matching_commitment_fails_the_deck() -> None:
    # A forger who replaces seed AND commitment still cannot make the logged cards derive.
    other = bytes(32)
    forged = dataclasses.replace(honest(), seed=other, commitment=commitment(other, HAND))
    assert verify_record(forged).check is Check.DECK_MISMATCH


def test_tampered_hand_id_fails_the_commitment() -> None:
    result = verify_record(dataclasses.replace(honest(), hand_id="table-7/hand-20"))
    assert result.check is Check.COMMITMENT_MISMATCH


def test_tampered_commitment() -> None:
    c = honest().commitment
    flipped = ("0" if c[0] != "0" else "1") + c[1:]
    assert verify_record(dataclasses.replace(honest(), commitment=flipped)).check is Check.COMMITMENT_MISMATCH
    assert verify_record(dataclasses.replace(honest(), commitment="zz")).check is Check.COMMITMENT_MALFORMED
    # Upper-case hex is the same commitment.
    assert verify_record(dataclasses.replace(honest(), commitment=c.upper())).ok


@pytest.mark.parametrize("version", ["openpoker-shuffle-v2", "openpoker-shuffle-v0", "", "v1"])
def test_tampered_version(version: str) -> None:
    result = verify_record(dataclasses.replace(honest(), version=version))
    assert result.check is Check.UNKNOWN_VERSION


def test_shape_checks() -> None:
    assert verify_record(dataclasses.replace(honest(), seed=None)).check is Check.SEED_MISSING
    assert verify_record(dataclasses.replace(honest(), seed=SEED[:31])).check is Check.SEED_LENGTH
    assert verify_record(dataclasses.replace(honest(), deck_size=51)).check is Check.BAD_DECK_SIZE
    assert verify_record(dataclasses.replace(honest(), hand_id="")).check is Check.BAD_HAND_ID
    out = dataclasses.replace(honest(), dealt=(DealtCard(position=52, card=parse_card("As")),))
    assert verify_record(out).check is Check.POSITION_OUT_OF_RANGE
    first = honest().dealt[0]
    assert (
        verify_record(dataclasses.replace(honest(), dealt=(first, first))).check is Check.DUPLICATE_POSITION
    )


def test_record_repr_hides_the_seed() -> None:
    text = repr(honest())
    assert SEED.hex() not in text
    assert repr(SEED) not in text

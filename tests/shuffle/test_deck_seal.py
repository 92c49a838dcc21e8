"""Sealed decks (``shuffle.deck_seal``): only the right key, table, hand and commitment open them."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openpoker.shuffle.deck_seal import (
    DeckKeys,
    SealedDeckInvalid,
    ensure_deck_keys,
    load_deck_keys,
    open_deck,
    seal_deck,
)

KEYS = DeckKeys(keys={"k1": bytes(range(32)), "k0": bytes(32)}, current="k1")
DECK = (
    "AsKsQsJsTs9s8s7s6s5s4s3s2sAhKhQhJhTh9h8h7h6h5h4h3h2hAdKdQdJdTd9d8d7d6d5d4d3d2dAcKcQcJcTc9c8c7c6c5c4c3c2c"
)
BOUND = {"table_id": "t1", "hand_id": "h1", "commitment": "c" * 64}


def test_a_sealed_deck_opens_for_its_hand_and_carries_no_card_in_clear() -> None:
    sealed = seal_deck(KEYS, DECK, **BOUND)
    assert open_deck(KEYS, sealed, **BOUND) == DECK
    assert DECK.encode() not in sealed
    assert seal_deck(KEYS, DECK, **BOUND) != sealed  # a fresh nonce each time


@pytest.mark.parametrize(
    "other",
    [
        {"table_id": "t2"},
        {"hand_id": "h2"},
        {"commitment": "d" * 64},
    ],
)
def test_a_deck_rebound_to_another_table_hand_or_commitment_does_not_open(other: dict[str, str]) -> None:
    sealed = seal_deck(KEYS, DECK, **BOUND)
    with pytest.raises(SealedDeckInvalid):
        open_deck(KEYS, sealed, **{**BOUND, **other})


def test_a_deck_sealed_under_a_key_the_table_does_not_hold_does_not_open() -> None:
    theirs = DeckKeys(keys={"k1": os.urandom(32)}, current="k1")
    with pytest.raises(SealedDeckInvalid):
        open_deck(KEYS, seal_deck(theirs, DECK, **BOUND), **BOUND)
    with pytest.raises(SealedDeckInvalid):
        open_deck(KEYS, seal_deck(DeckKeys(keys={"zz": bytes(32)}, current="zz"), DECK, **BOUND), **BOUND)


def test_an_old_key_still_opens_after_rotation() -> None:
    old = DeckKeys(keys={"k0": bytes(32)}, current="k0")
    assert open_deck(KEYS, seal_deck(old, DECK, **BOUND), **BOUND) == DECK


def test_clear_text_decks_are_refused() -> None:
    with pytest.raises(SealedDeckInvalid):
        open_deck(KEYS, DECK.encode(), **BOUND)


@given(position=st.integers(min_value=0), flip=st.integers(min_value=1, max_value=255))
def test_any_flipped_byte_is_refused(position: int, flip: int) -> None:
    sealed = bytearray(seal_deck(KEYS, DECK, **BOUND))
    sealed[position % len(sealed)] ^= flip
    with pytest.raises(SealedDeckInvalid):
        open_deck(KEYS, bytes(sealed), **BOUND)


@given(cut=st.integers(min_value=0))
def test_a_truncated_deck_is_refused(cut: int) -> None:
    sealed = seal_deck(KEYS, DECK, **BOUND)
    with pytest.raises(SealedDeckInvalid):
        open_deck(KEYS, sealed[: cut % len(sealed)], **BOUND)


def test_keys_are_checked() -> None:
    with pytest.raises(ValueError, match="current"):
        DeckKeys(keys={"a": bytes(32)}, current="b")
    with pytest.raises(ValueError, match="32 bytes"):
        DeckKeys(keys={"a": bytes(16)}, current="a")


def test_a_key_file_is_made_once_private_and_refused_when_readable_by_others(tmp_path: Path) -> None:
    path = tmp_path / "secrets" / "deck-keys.json"
    made = ensure_deck_keys(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert ensure_deck_keys(path) == made
    assert open_deck(made, seal_deck(made, DECK, **BOUND), **BOUND) == DECK
    os.chmod(path, 0o644)
    with pytest.raises(ValueError, match="0600"):
        load_deck_keys(path)

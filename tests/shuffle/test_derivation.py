"""Golden decks, the commitment formula and the derivation's input checks."""

from __future__ import annotations

import hashlib

import pytest

from openpoker.engine.cards import SHORT_DECK, STANDARD_DECK, Card, parse_card
from openpoker.shuffle import (
    V1,
    BadDeckSize,
    BadHandId,
    BadSeed,
    HmacDrbg,
    UnknownVersion,
    WordStream,
    commitment,
    derive_deck,
    derive_order,
    fisher_yates,
    raw_chunks,
)

SEED = bytes(range(32))


def cards(text: str) -> tuple[Card, ...]:
    return tuple(parse_card(c) for c in text.split())


def test_independent_golden_vector_from_the_research_prototype() -> None:
    # /work/shared/research/rng.md section 3.2 item 10: a separately written prototype of the
    # same pipeline (HMAC_DRBG, 64-byte generates, big-endian words, rejection, top-down
    # Fisher-Yates over 2c 2d 2h 2s ... As) with personalization "openpoker-shuffle-v1|table-1|"
    # and a 16-zero-byte nonce dealt Ts 2h Kc 9h 3s 5h 8h 8s 2d from seed 00 01 .. 1f.
    drbg = HmacDrbg.instantiate(SEED, bytes(16), b"openpoker-shuffle-v1|table-1|")
    order = fisher_yates(52, WordStream(drbg).below)
    assert tuple(STANDARD_DECK[i] for i in order[:9]) == cards("Ts 2h Kc 9h 3s 5h 8h 8s 2d")


# Regression pins for v1 (guard refactors and ports; a change here is a new algorithm version).
GOLDEN = [
    (
        SEED,
        "hand-1",
        52,
        "6h 5s 3c Kd 3d 4d 7d 7h 9d 9c 8d Qc 8s 6s 2c 9h Td 5c Ac Kc 6c Kh Jh 8h 2h Ad Jd Qs Js 2s 2d 5h "
        "7s 8c 6d 3s Ah Th 4s Qh 9s Ts Tc 5d As 7c 4c Jc Qd 3h 4h Ks",
    ),
    (
        SEED,
        "hand-1",
        36,
        "7c Kh Jd Td 7h Kd 7s Qc Js 6c Ac Th As Ks 6s Ad 8h Tc Qd Ts 9d 9c 8d 8c 6d Qs Ah 7d Kc 6h Qh Jc "
        "8s 9h Jh 9s",
    ),
    (
        b"\xff" * 32,
        "t1/h42",
        52,
        "6s As Tc Kd 5c Js Kh 7s Jd Qs 3c Ac 3h 9c 6h 8s 6c 4d 5h 9s Qh 5d 2h Jc 7h 9d 4c 4h 7d 4s 7c 2c "
        "Ad Ts Qd Ks Qc Jh 6d 2d 3d 8d 9h 8h 8c Kc 3s Ah 2s Td Th 5s",
    ),
]


@pytest.mark.parametrize(("seed", "hand_id", "size", "deck"), GOLDEN)
def test_golden_decks(seed: bytes, hand_id: str, size: int, deck: str) -> None:
    assert derive_deck(seed, hand_id, size, V1) == cards(deck)


def test_v1_is_the_documented_composition() -> None:
    # derive_deck == DRBG(seed, nonce=hand id, pers="openpoker-shuffle-v1") -> words -> FY.
    drbg = HmacDrbg.instantiate(SEED, b"hand-1", b"openpoker-shuffle-v1")
    order = fisher_yates(36, WordStream(drbg).below)
    assert derive_deck(SEED, "hand-1", 36) == tuple(SHORT_DECK[i] for i in order)


@pytest.mark.parametrize("size", [52, 36])
def test_deck_is_a_permutation_of_the_canonical_deck(size: int) -> None:
    for k in range(50):
        deck = derive_deck(bytes([k]) * 32, f"h{k}", size)
        assert sorted(deck) == sorted(STANDARD_DECK if size == 52 else SHORT_DECK)


def test_every_input_changes_the_deck() -> None:
    base = derive_order(SEED, "hand-1", 52)
    assert derive_order(SEED, "hand-1", 52) == base
    assert derive_order(SEED, "hand-2", 52) != base
    assert derive_order(bytes(31) + b"\x01", "hand-1", 52) != base


def test_commitment_formula() -> None:
    expected = hashlib.sha256(b"commit/v1" + SEED + b"hand-1").hexdigest()
    assert commitment(SEED, "hand-1") == expected
    assert commitment(SEED, "hand-2") != expected


def test_raw_chunks_are_the_drbg_output_the_deck_uses() -> None:
    chunks = list(raw_chunks(SEED, "hand-1", 4))
    assert [len(c) for c in chunks] == [64] * 4
    drbg = HmacDrbg.instantiate(SEED, b"hand-1", b"openpoker-shuffle-v1")
    assert chunks == [drbg.generate(64) for _ in range(4)]
    # Rebuild the deck from these bytes by hand: words, rejection, Fisher-Yates.
    words = iter(int.from_bytes(b"".join(chunks)[i : i + 4], "big") for i in range(0, 256, 4))

    def below(m: int) -> int:
        while True:
            u = next(words)
            if u < (2**32 // m) * m:
                return u % m

    assert fisher_yates(52, below) == derive_order(SEED, "hand-1", 52)


def test_input_errors() -> None:
    with pytest.raises(BadSeed) as e:
        derive_deck(SEED[:16], "h", 52)
    assert e.value.fields == {"length": 16, "required": 32}
    with pytest.raises(BadHandId):
        derive_deck(SEED, "", 52)
    with pytest.raises(BadHandId):
        commitment(SEED, "x" * 300)
    with pytest.raises(BadDeckSize):
        derive_deck(SEED, "h", 32)
    with pytest.raises(UnknownVersion) as u:
        derive_deck(SEED, "h", 52, "openpoker-shuffle-v0")
    assert u.value.reason == "UNKNOWN_SHUFFLE_VERSION"

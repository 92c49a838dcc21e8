"""Statistical acceptance tests of the production shuffle, plus negative controls.

Each test is judged at alpha = 0.01 (the 99 % confidence regulators ask for). Seeds and hand
ids are derived from fixed labels, so the samples, and therefore the outcomes, are the same on
every run: these tests cannot flake. The negative controls run deliberately broken shuffles
through the same battery and must be caught by it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator

import pytest

from openpoker.shuffle import derive_order, fisher_yates, open_drbg
from openpoker.shuffle.battery import Battery
from openpoker.shuffle.sampling import WordStream
from openpoker.shuffle.stats import ChiSquare

ALPHA = 0.01
CI_DECKS_52 = 200_000
CI_DECKS_36 = 50_000
CONTROL_DECKS = 20_000

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

Shuffler = Callable[[bytes, str, int], list[int]]


def fixed_inputs(label: str, count: int) -> Iterator[tuple[bytes, str]]:
    """Deterministic (seed, hand id) pairs standing in for OS seeds."""
    for i in range(count):
        yield hashlib.sha256(f"openpoker-ci/{label}/{i}".encode()).digest(), f"{label}-{i}"


def run(shuffler: Shuffler, label: str, count: int, size: int, seats: int) -> Battery:
    battery = Battery(size, seats=seats)
    for seed, hand_id in fixed_inputs(label, count):
        battery.add(shuffler(seed, hand_id, size))
    return battery


@pytest.fixture(scope="module")
def standard() -> dict[str, ChiSquare]:
    return run(derive_order, "stat52", CI_DECKS_52, 52, 9).results()


@pytest.fixture(scope="module")
def short() -> dict[str, ChiSquare]:
    return run(derive_order, "stat36", CI_DECKS_36, 36, 6).results()


@pytest.mark.parametrize(
    "name",
    [
        "card_position",
        "first_card",
        "pair_top",
        "pair_bottom",
        "hole_seats",
        "consecutive_first",
        "five_card_category",
    ],
)
def test_standard_deck(standard: dict[str, ChiSquare], name: str) -> None:
    test = standard[name]
    assert test.p >= ALPHA, f"{name}: X2={test.statistic:.1f} df={test.df} p={test.p:.5f}"


def test_standard_deck_degrees_of_freedom(standard: dict[str, ChiSquare]) -> None:
    dfs = {name: t.df for name, t in standard.items()}
    assert dfs["card_position"] == 51 * 51
    assert dfs["first_card"] == 51
    assert dfs["pair_top"] == 52 * 51 - 1
    assert dfs["hole_seat_0"] == 1326 - 1
    assert dfs["consecutive_first"] == 51 * 51
    assert dfs["five_card_category"] == 7  # straight flush pooled with four of a kind


@pytest.mark.parametrize(
    "name", ["card_position", "first_card", "pair_top", "pair_bottom", "hole_seats", "consecutive_first"]
)
def test_short_deck(short: dict[str, ChiSquare], name: str) -> None:
    test = short[name]
    assert test.p >= ALPHA, f"{name}: X2={test.statistic:.1f} df={test.df} p={test.p:.5f}"


# Negative controls: the classic mistakes, fed by the same DRBG words.


def swap_with_any(seed: bytes, hand_id: str, size: int) -> list[int]:
    """ASF Software (1999): swap every position with ANY position; n^n paths onto n! decks."""
    words = WordStream(open_drbg(seed, hand_id))
    order = list(range(size))
    for i in range(size):
        j = words.below(size)
        order[i], order[j] = order[j], order[i]
    return order


def modulo_bias(seed: bytes, hand_id: str, size: int) -> list[int]:
    """Correct Fisher-Yates, but each index is a bare ``byte % m`` (no rejection)."""
    stream = iter(open_drbg(seed, hand_id).generate(size))
    return fisher_yates(size, lambda m: next(stream) % m)


def off_by_one(seed: bytes, hand_id: str, size: int) -> list[int]:
    """Fisher-Yates drawing j in 0..i-1 instead of 0..i (Sattolo: only cyclic permutations)."""
    words = WordStream(open_drbg(seed, hand_id))
    return fisher_yates(size, lambda m: words.below(m - 1) if m > 1 else 0)


@pytest.mark.parametrize("shuffler", [swap_with_any, modulo_bias, off_by_one])
def test_negative_controls_are_caught(shuffler: Shuffler) -> None:
    battery = run(shuffler, f"control-{shuffler.__name__}", CONTROL_DECKS, 52, 9)
    verdict = battery.verdict(ALPHA)
    failed = sorted(name for name, ok in verdict.items() if not ok)
    assert "card_position" in failed, failed


def test_honest_shuffle_passes_at_control_size() -> None:
    # The same battery at the controls' sample size passes the production shuffle, so the
    # controls fail because of their bias, not because of the sample.
    verdict = run(derive_order, "control-honest", CONTROL_DECKS, 52, 9).verdict(ALPHA)
    assert all(verdict.values()), verdict

"""The pure-Python chi-square machinery against closed forms and textbook values."""

from __future__ import annotations

import math

import pytest

from openpoker.engine.cards import parse_card
from openpoker.shuffle.battery import FIVE_CARD_COUNTS, Battery, five_card_category
from openpoker.shuffle.stats import chi2_sf, gamma_q, goodness_of_fit, independence, pooled_fit, uniform_fit


@pytest.mark.parametrize("x", [0.0, 0.01, 0.5, 1.0, 3.84, 6.63, 20.0, 80.0])
def test_df1_and_df2_closed_forms(x: float) -> None:
    assert chi2_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(x / 2)), rel=1e-10, abs=1e-300)
    assert chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("k", [2, 4, 26, 1300])
def test_even_df_closed_form(k: int) -> None:
    # For df = 2k, Q(k, y) = exp(-y) * sum_{i<k} y^i / i! (a Poisson tail).
    for x in (0.5 * 2 * k, 2 * k, 1.2 * 2 * k):
        y = x / 2
        terms = sum(math.exp(i * math.log(y) - y - math.lgamma(i + 1)) for i in range(k))
        assert chi2_sf(x, 2 * k) == pytest.approx(terms, rel=1e-9)


def test_textbook_critical_values() -> None:
    # 0.99 quantiles from standard chi-square tables.
    assert chi2_sf(6.635, 1) == pytest.approx(0.01, abs=2e-5)
    assert chi2_sf(21.666, 9) == pytest.approx(0.01, abs=2e-5)
    assert chi2_sf(37.566, 20) == pytest.approx(0.01, abs=2e-5)
    assert chi2_sf(135.807, 100) == pytest.approx(0.01, abs=2e-5)


def test_gamma_q_domain() -> None:
    assert gamma_q(3.0, 0.0) == 1.0
    with pytest.raises(ValueError, match="a > 0"):
        gamma_q(0.0, 1.0)


def test_fits() -> None:
    assert uniform_fit([10, 10, 10, 10]).statistic == 0
    assert uniform_fit([10, 10, 10, 10]).p == pytest.approx(1.0)
    g = goodness_of_fit([30, 10], [20.0, 20.0])
    assert g.statistic == pytest.approx(10.0)
    assert g.df == 1
    t = independence([[10, 20], [20, 40]])
    assert t.statistic == pytest.approx(0.0)
    assert t.df == 1
    # Empty rows/columns are dropped, not divided by.
    assert independence([[10, 0, 20], [0, 0, 0], [20, 0, 40]]).df == 1
    assert independence([[0, 7], [0, 0]]).p == 1.0  # degenerate: one cell left
    # Pooling merges small cells until each expects at least 5.
    pooled = pooled_fit([3, 3, 994], [0.003, 0.003, 0.994])
    assert pooled.df == 1
    assert pooled.statistic == pytest.approx(0.0)


def test_five_card_categories() -> None:
    def cat(text: str) -> str:
        return five_card_category([parse_card(c).index for c in text.split()])

    assert cat("Ah Kh Qh Jh Th") == "straight_flush"
    assert cat("5d 4d 3d 2d Ad") == "straight_flush"
    assert cat("9c 9d 9h 9s 2c") == "four_of_a_kind"
    assert cat("9c 9d 9h 2s 2c") == "full_house"
    assert cat("2h 7h 9h Jh Kh") == "flush"
    assert cat("Ac 2d 3h 4s 5c") == "straight"
    assert cat("Tc Jd Qh Ks Ac") == "straight"
    assert cat("Kc Ad 2h 3s 4c") == "high_card"  # no wrap-around straight
    assert cat("9c 9d 9h 2s 3c") == "three_of_a_kind"
    assert cat("9c 9d 2h 2s 3c") == "two_pair"
    assert cat("9c 9d 2h 4s 3c") == "one_pair"
    assert sum(c for _, c in FIVE_CARD_COUNTS) == math.comb(52, 5)


def test_battery_counts_one_deck() -> None:
    b = Battery(52, seats=2)
    b.add(list(range(52)))
    assert b.card_position[0] == 1  # card 0 at position 0
    assert b.card_position[1 * 52 + 1] == 1
    assert sum(b.card_position) == 52
    assert sum(b.hole[0]) == sum(b.hole[1]) == 1
    assert b.categories[8] == 0  # 2c 2d 2h 2s 3c is four of a kind
    assert b.categories[1] == 1

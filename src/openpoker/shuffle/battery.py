"""The statistical battery run on shuffled decks (final outcomes), as a lab would.

One pass over decks (each a permutation of canonical indices, top first) accumulates every
count; ``results()`` turns them into chi-square tests. The same battery runs in CI on a fixed
seeded sample, on the negative controls (deliberately biased shuffles) and, through
``pokerctl rng check``, on large samples from fresh OS seeds.

Tests (each a :class:`~shuffle.stats.ChiSquare`, judged at alpha = 0.01):

- ``card_position``: card x position counts against N/n per cell, df = (n-1)^2 (both margins
  are fixed: every deck has each card once and each position once).
- ``first_card``: the top card, df = n-1.
- ``pair_top`` / ``pair_bottom``: the ordered pair at positions (0, 1) and (n-2, n-1),
  n(n-1) cells.
- ``hole_seat_<s>``: the unordered two hole cards of seat s when ``seats`` players are dealt
  round-robin from the top (seat s gets positions s and s + seats), C(n, 2) cells; the
  family is judged as ``hole_seats`` with a Bonferroni correction (p = seats x smallest p).
- ``consecutive_first``: independence of the top card of hand t and hand t+1 (contingency).
- ``five_card_category`` (52 cards): the category of the first five cards against the exact
  combinatorial counts, cells with expected count below 5 pooled.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from math import comb
from typing import Final

from openpoker.shuffle.stats import ChiSquare, chi2_sf, independence, pooled_fit, uniform_fit

# Exact counts of the 2,598,960 five-card hands of a 52-card deck, by category, strongest first.
FIVE_CARD_COUNTS: Final[tuple[tuple[str, int], ...]] = (
    ("straight_flush", 40),
    ("four_of_a_kind", 624),
    ("full_house", 3_744),
    ("flush", 5_108),
    ("straight", 10_200),
    ("three_of_a_kind", 54_912),
    ("two_pair", 123_552),
    ("one_pair", 1_098_240),
    ("high_card", 1_302_540),
)
_CATEGORY_INDEX: Final = {name: i for i, (name, _) in enumerate(FIVE_CARD_COUNTS)}
_WHEEL: Final = frozenset({12, 0, 1, 2, 3})  # A 2 3 4 5 as rank indices (2 = 0 ... A = 12)


def five_card_category(cards: Sequence[int]) -> str:
    """Category of five canonical 52-card indices (rank = index // 4, suit = index % 4)."""
    ranks = [c // 4 for c in cards]
    flush = len({c % 4 for c in cards}) == 1
    distinct = set(ranks)
    straight = len(distinct) == 5 and (max(ranks) - min(ranks) == 4 or distinct == _WHEEL)
    shape = sorted((ranks.count(r) for r in distinct), reverse=True)
    if straight and flush:
        return "straight_flush"
    if shape[0] == 4:
        return "four_of_a_kind"
    if shape == [3, 2]:
        return "full_house"
    if flush:
        return "flush"
    if straight:
        return "straight"
    if shape[0] == 3:
        return "three_of_a_kind"
    if shape == [2, 2, 1]:
        return "two_pair"
    if shape[0] == 2:
        return "one_pair"
    return "high_card"


def _pair_index(a: int, b: int, n: int) -> int:
    """Index of the unordered pair {a, b} among C(n, 2)."""
    lo, hi = (a, b) if a < b else (b, a)
    return lo * n - lo * (lo + 1) // 2 + (hi - lo - 1)


@dataclass(slots=True)
class Battery:
    deck_size: int
    seats: int = 9
    decks: int = 0
    card_position: list[int] = field(init=False)
    pair_top: list[int] = field(init=False)
    pair_bottom: list[int] = field(init=False)
    hole: list[list[int]] = field(init=False)
    _pairs: list[int] = field(init=False)
    consecutive: list[list[int]] = field(init=False)
    categories: list[int] = field(init=False)
    _previous_first: int | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        n = self.deck_size
        if 2 * self.seats > n:
            raise ValueError("not enough cards to deal two to every seat")
        self.card_position = [0] * (n * n)
        self.pair_top = [0] * (n * n)
        self.pair_bottom = [0] * (n * n)
        self.hole = [[0] * comb(n, 2) for _ in range(self.seats)]
        self._pairs = [_pair_index(a, b, n) if a != b else -1 for a in range(n) for b in range(n)]
        self.consecutive = [[0] * n for _ in range(n)]
        self.categories = [0] * len(FIVE_CARD_COUNTS)

    def add(self, order: Sequence[int]) -> None:
        n = self.deck_size
        if len(order) != n:
            raise ValueError(f"deck of {len(order)} cards, expected {n}")
        cp = self.card_position
        for pos, card in enumerate(order):
            cp[pos * n + card] += 1
        self.pair_top[order[0] * n + order[1]] += 1
        self.pair_bottom[order[n - 2] * n + order[n - 1]] += 1
        pairs, seats = self._pairs, self.seats
        for s, counts in enumerate(self.hole):
            counts[pairs[order[s] * n + order[s + seats]]] += 1
        if self._previous_first is not None:
            self.consecutive[self._previous_first][order[0]] += 1
        self._previous_first = order[0]
        if n == 52:
            self.categories[_CATEGORY_INDEX[five_card_category(order[:5])]] += 1
        self.decks += 1

    def add_all(self, orders: Iterable[Sequence[int]]) -> Battery:
        for order in orders:
            self.add(order)
        return self

    def results(self) -> dict[str, ChiSquare]:
        """Every test by name; ``hole_seats`` is the Bonferroni-combined seat family."""
        n = self.deck_size
        expected = self.decks / n
        stat = sum((o - expected) ** 2 / expected for o in self.card_position)
        cp = ChiSquare(statistic=stat, df=(n - 1) ** 2, p=chi2_sf(stat, (n - 1) ** 2))
        first = uniform_fit(self.card_position[:n])
        off_diagonal = [i * n + j for i in range(n) for j in range(n) if i != j]
        out = {
            "card_position": cp,
            "first_card": first,
            "pair_top": uniform_fit([self.pair_top[k] for k in off_diagonal]),
            "pair_bottom": uniform_fit([self.pair_bottom[k] for k in off_diagonal]),
        }
        seat_tests = [uniform_fit(counts) for counts in self.hole]
        for s, test in enumerate(seat_tests):
            out[f"hole_seat_{s}"] = test
        worst = min(seat_tests, key=lambda t: t.p)
        out["hole_seats"] = ChiSquare(
            statistic=worst.statistic, df=worst.df, p=min(1.0, worst.p * len(seat_tests))
        )
        out["consecutive_first"] = independence(self.consecutive)
        if n == 52:
            total = sum(c for _, c in FIVE_CARD_COUNTS)
            out["five_card_category"] = pooled_fit(self.categories, [c / total for _, c in FIVE_CARD_COUNTS])
        return out

    def verdict(self, alpha: float = 0.01) -> dict[str, bool]:
        """Pass/fail per test at ``alpha``; single seats are folded into ``hole_seats``."""
        return {
            name: test.p >= alpha
            for name, test in self.results().items()
            if not name.startswith("hole_seat_")
        }

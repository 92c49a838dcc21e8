"""Hand evaluations per second: ``engine.ranking.evaluate`` beside pokerkit, same hands, same run.

Each ranking gets one list of random hands (seven cards: two hole + five board; Omaha nine:
four hole + five board) from a fixed seed, cut into five equal chunks; each side's rate is its
fastest chunk. Ours is timed through the public ``evaluate(rules, hole, board)`` (validation
included), pokerkit through ``<Hand>.from_game(hole, board)`` with its cards parsed beforehand,
as its docs advise. Lookup tables are built before timing (both sides build theirs once per
process).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from pokerkit import Card as PkCard
from pokerkit import OmahaHoldemHand, ShortDeckHoldemHand, StandardHighHand
from pokerkit.lookups import Label, ShortDeckHoldemLookup

from openpoker.engine.cards import SHORT_DECK, STANDARD_DECK, Card
from openpoker.engine.ranking import evaluate
from openpoker.engine.rules import Game, Rules, Stakes, Structure, phh_rules

STAKES = Stakes.blinds(1, 2)
CHUNKS = 5


class _SixPlusLookup(ShortDeckHoldemLookup):
    """pokerkit's short-deck lookup with three of a kind above the straight (Six Plus)."""

    def _add_entries(self) -> None:
        self._add_multisets(Counter({1: 5}), (False,), Label.HIGH_CARD)
        self._add_multisets(Counter({2: 1, 1: 3}), (False,), Label.ONE_PAIR)
        self._add_multisets(Counter({2: 2, 1: 1}), (False,), Label.TWO_PAIR)
        self._add_straights(5, (False,), Label.STRAIGHT)
        self._add_multisets(Counter({3: 1, 1: 2}), (False,), Label.THREE_OF_A_KIND)
        self._add_multisets(Counter({3: 1, 2: 1}), (False,), Label.FULL_HOUSE)
        self._add_multisets(Counter({1: 5}), (True,), Label.FLUSH)
        self._add_multisets(Counter({4: 1, 1: 1}), (False,), Label.FOUR_OF_A_KIND)
        self._add_straights(5, (True,), Label.STRAIGHT_FLUSH)


class _SixPlusHand(ShortDeckHoldemHand):
    lookup = _SixPlusLookup()


CASES: tuple[tuple[str, Rules, Sequence[Card], int, Callable[..., Any]], ...] = (
    ("holdem", Rules(game=Game.HOLDEM, structure=Structure.NO_LIMIT, stakes=STAKES), STANDARD_DECK, 2,
     StandardHighHand.from_game),
    ("omaha", Rules(game=Game.OMAHA, structure=Structure.POT_LIMIT, stakes=STAKES), STANDARD_DECK, 4,
     OmahaHoldemHand.from_game),
    ("six_plus", Rules(game=Game.SIX_PLUS, structure=Structure.NO_LIMIT, stakes=STAKES), SHORT_DECK, 2,
     _SixPlusHand.from_game),
    ("short_deck_ns", phh_rules(Game.SIX_PLUS, Structure.NO_LIMIT, STAKES), SHORT_DECK, 2,
     ShortDeckHoldemHand.from_game),
)  # fmt: skip


def _rate(chunks: Sequence[Sequence[Any]], fn: Callable[[Sequence[Any]], object]) -> float:
    """Evaluations per second on the fastest chunk (as timeit takes the minimum: on a shared
    machine the other chunks measure the neighbours, not the code)."""
    best = 0.0
    for chunk in chunks:
        started = time.perf_counter()
        fn(chunk)
        best = max(best, len(chunk) / (time.perf_counter() - started))
    return best


def run(quick: bool) -> dict[str, Any]:
    count = 300 if quick else 20_000
    rng = random.Random(2026_11_22)
    pk = {c: next(iter(PkCard.parse(str(c)))) for c in STANDARD_DECK}
    results: dict[str, Any] = {"hands_per_ranking": count, "timing": f"best of {CHUNKS} equal chunks"}
    for name, rules, deck, hole, oracle in CASES:
        hands = [rng.sample(deck, hole + 5) for _ in range(count)]
        pk_hands = [([pk[c] for c in h[:hole]], [pk[c] for c in h[hole:]]) for h in hands]
        evaluate(rules, hands[0][:hole], hands[0][hole:])  # build lookup tables before timing
        oracle(*pk_hands[0])
        size = count // CHUNKS
        ours = _rate(
            [hands[i : i + size] for i in range(0, count, size)],
            lambda chunk: [evaluate(rules, h[:hole], h[hole:]) for h in chunk],  # noqa: B023
        )
        theirs = _rate(
            [pk_hands[i : i + size] for i in range(0, count, size)],
            lambda chunk: [oracle(h, b) for h, b in chunk],  # noqa: B023
        )
        results[name] = {
            "ours_per_s": round(ours),
            "pokerkit_per_s": round(theirs),
            "speedup": round(ours / theirs, 1),
        }
    return results

"""Rake: the house's share of a pot (HOUSE_RULES.md, Rake; research/wallet.md §2).

One function decides the rake of a hand, and both the hand engine (to pay out the pots net of
rake) and the wallet (to refuse a settlement that does not add up) call it, so they cannot
disagree:

- a percentage in basis points of the *total* pot after uncalled bets are returned, taken once
  per hand (seed 002: "of each total pot"; PokerStars shows one rake per hand), not per pot;
- rounded down to the chip unit (HOUSE_RULES.md), integer arithmetic only, never floats
  (pokerkit's ``amount * percentage`` float product mis-rounds 46 pots under 200 dollars);
- capped per hand by the number of players dealt in (not seated) via ``RakeRules.cap_for``;
- nothing when the hand ends before the flop and ``no_flop_no_drop`` is set (seed 002).

``split_rake`` then allocates that one rake across the pots main pot first, spilling into the
next pot when a pot is smaller than what is left to take (the reconstruction of a real
PokerStars hand in research/wallet.md §2.4 shows all the rake off the main pot).
"""

from __future__ import annotations

from collections.abc import Sequence

from openpoker.engine.errors import EngineError
from openpoker.engine.rules import RakeRules, RakeSplit

_MAIN_POT_FIRST = RakeSplit.MAIN_POT_FIRST

BASIS_POINTS = 10_000


class InvalidRakeInput(EngineError):
    """A pot, player count or rake amount that cannot describe a real hand."""

    reason = "INVALID_RAKE_INPUT"

    def __init__(self, *, field: str, value: int, problem: str) -> None:
        super().__init__(f"invalid rake input: {field}={value}: {problem}", field=field, value=value)
        self.field = field
        self.value = value
        self.problem = problem


def compute_rake(rake: RakeRules, *, pot: int, players_dealt_in: int, saw_flop: bool) -> int:
    """The rake of one hand in minor units.

    ``pot`` is the total of every pot after uncalled bets have been returned; ``saw_flop`` is
    whether the flop was dealt (a hand that ends on the first betting round pays nothing under
    no flop, no drop).
    """
    if pot < 0:
        raise InvalidRakeInput(field="pot", value=pot, problem="must not be negative")
    if players_dealt_in < 1:
        raise InvalidRakeInput(field="players_dealt_in", value=players_dealt_in, problem="must be positive")
    if rake.no_flop_no_drop and not saw_flop:
        return 0
    # Rounded down: the player keeps every fraction of a chip.
    amount = pot * rake.basis_points // BASIS_POINTS
    cap = rake.cap_for(players_dealt_in)
    if cap is not None:
        amount = min(amount, cap)
    return amount - amount % rake.unit


def split_rake(rake: int, pots: Sequence[int], rules: RakeRules) -> tuple[int, ...]:
    """How much of ``rake`` each pot pays (index 0 = main pot), as ``rules.split`` says.

    Returns one amount per pot, summing to ``rake``; raises if the pots cannot cover it.
    """
    if rake < 0:
        raise InvalidRakeInput(field="rake", value=rake, problem="must not be negative")
    for amount in pots:
        if amount < 0:
            raise InvalidRakeInput(field="pot", value=amount, problem="must not be negative")
    total = sum(pots)
    if rake > total:
        raise InvalidRakeInput(field="rake", value=rake, problem=f"exceeds the total pot {total}")
    if rules.split is _MAIN_POT_FIRST:
        return _main_pot_first(rake, pots)
    return _proportional(rake, pots, total, rules.unit)


def _main_pot_first(rake: int, pots: Sequence[int]) -> tuple[int, ...]:
    remaining = rake
    shares: list[int] = []
    for amount in pots:
        take = min(amount, remaining)
        shares.append(take)
        remaining -= take
    return tuple(shares)


def _proportional(rake: int, pots: Sequence[int], total: int, unit: int) -> tuple[int, ...]:
    if not rake:
        return (0,) * len(pots)
    shares: list[int] = []
    for amount in pots:
        exact = rake * amount // total  # <= amount, since rake <= total
        shares.append(exact - exact % unit)
    left = rake - sum(shares)
    # Rounding each share down leaves less than one unit per pot: one more unit to each pot in
    # order from the main pot. Only a pot too small to take a whole unit makes a second pass
    # needed, in what it can still hold (the pots hold at least the rake, so it ends).
    while left:
        for i, amount in enumerate(pots):
            give = min(unit, left, amount - shares[i])
            shares[i] += give
            left -= give
            if not left:
                break
    return tuple(shares)


def pots_after_rake(rake: int, pots: Sequence[int], rules: RakeRules) -> tuple[int, ...]:
    """Each pot net of its share of the rake (what is split among that pot's winners)."""
    shares = split_rake(rake, pots, rules)
    return tuple(amount - share for amount, share in zip(pots, shares, strict=True))

"""Main and side pots from what each player has put in (seeds 000, 001, 002, 004).

Live chips (blinds, bets, calls; antes in the phh profile when antes are trimmed) are layered:
each distinct contribution level forms a pot that every player who reached the level paid into,
and only players still in the hand who reached it may win it. Dead money (antes, dead small
blinds) is added to the lowest layer, the main pot, which every live hand may win. Consecutive
layers with the same eligible players are one pot. This is pokerkit's construction
(``State.pots``), so phh replays split exactly as it does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True, kw_only=True)
class Pot:
    amount: int
    eligible: tuple[int, ...]  # player indices (clockwise from the first seat left of the button)


# Compiled by mypyc, ``Pot`` is a native class whose generated ``__init__`` stays interpreted:
# ``pot`` writes its fields directly (the ignores: mypy sees frozen fields). Pure Python
# refuses such writes on a frozen dataclass, and there ``pot`` calls the constructor. A
# compiled class has no ``__slots__`` at run time.
_NATIVE: Final = not hasattr(Pot, "__slots__")


def new_pot(amount: int, eligible: tuple[int, ...]) -> Pot:
    """``Pot(amount=amount, eligible=eligible)``, cheaper when compiled."""
    if not _NATIVE:
        return Pot(amount=amount, eligible=eligible)
    p = Pot.__new__(Pot)
    p.amount = amount  # type: ignore[misc]
    p.eligible = eligible  # type: ignore[misc]
    return p


def build_pots(live: Sequence[int], dead: int, in_hand: Sequence[bool]) -> list[Pot]:
    """Pots in order of formation (main first). ``live[i]`` is player ``i``'s live total."""
    pots: list[Pot] = []
    previous = 0
    amount = dead
    n = len(live)
    for level in sorted(set(live)):
        for c in live:
            if c > previous:
                amount += (c if c < level else level) - previous
        eligible = tuple(i for i in range(n) if in_hand[i] and live[i] >= level)
        if pots and pots[-1].eligible == eligible:
            amount += pots.pop().amount
        if amount:
            pots.append(new_pot(amount, eligible))
        amount = 0
        previous = level
    return pots

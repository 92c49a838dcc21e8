"""What the wallet is told about a hand, computed from the table's own events (pure).

* Reservation (``OpenHand``): every player dealt in reserves their whole stack at the start of
  the hand (table stakes: nothing else can be lost in it), from ``HandStarted.seats``.
* Settlement (``SettleHand``): each player's contribution is what they put in and did not get
  back as an uncalled bet, ``start - final + won``; winnings are ``HandEnded.payouts`` (after
  rake); the rake is ``HandEnded.rake``. Contributions = winnings + rake, chip for chip, and the
  wallet re-checks the rake with ``engine.rake.compute_rake`` under the rules given at
  ``OpenHand``.
"""

from __future__ import annotations

from dataclasses import dataclass

from openpoker.engine.hand_events import HandEnded, HandStarted


@dataclass(frozen=True, slots=True, kw_only=True)
class Settlement:
    contributions: tuple[tuple[str, int], ...]  # (player, chips), players with 0 left out
    payouts: tuple[tuple[str, int], ...]
    rake: int
    saw_flop: bool

    @property
    def pot(self) -> int:
        return sum(a for _, a in self.contributions)


class SettlementDoesNotAddUp(Exception):
    """The hand's events give contributions that are not winnings + rake (a table bug)."""

    def __init__(self, *, hand_id: str, pot: int, paid: int) -> None:
        super().__init__(f"hand {hand_id}: pot {pot} != payouts + rake {paid}")
        self.hand_id = hand_id
        self.pot = pot
        self.paid = paid


def reservation(started: HandStarted) -> tuple[tuple[str, int], ...]:
    """(player, stack) of every player dealt in with chips, in seat order."""
    return tuple((s.player, s.stack) for s in started.seats if s.stack > 0)


def settlement(started: HandStarted, ended: HandEnded, *, saw_flop: bool) -> Settlement:
    player_of = {s.seat: s.player for s in started.seats}
    start = {s.seat: s.stack for s in started.seats}
    final = {e.seat: e.amount for e in ended.stacks}
    won: dict[int, int] = {}
    for p in ended.payouts:
        won[p.seat] = won.get(p.seat, 0) + p.amount
    contributions = []
    for seat in sorted(start):
        put_in = start[seat] - final.get(seat, start[seat]) + won.get(seat, 0)
        if put_in:
            contributions.append((player_of[seat], put_in))
    payouts = tuple((player_of[seat], amount) for seat, amount in sorted(won.items()) if amount)
    result = Settlement(
        contributions=tuple(contributions), payouts=payouts, rake=ended.rake, saw_flop=saw_flop
    )
    paid = sum(a for _, a in payouts) + ended.rake
    if result.pot != paid:
        raise SettlementDoesNotAddUp(hand_id=ended.hand_id, pot=result.pot, paid=paid)
    return result

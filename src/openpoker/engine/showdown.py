"""The end of a hand: who shows, who wins each pot, rake, odd chips, ``HandEnded``.

- A hand won by folds: the last player takes every pot unseen (seed 000: need not show; the
  table lets them show afterwards, ``engine.table_decide``).
- Showdown order (seeds 001, 004; TR 72): the last player to bet or raise on the final round
  shows first; if nobody bet, the first player still in left of the button; then clockwise.
- seeds: each player in order shows if their hand can still win a pot they are in, if they are
  all-in (always shown), or when the rules turn auto-muck off; otherwise the hand is mucked.
  phh: each player sends ``Show`` or ``Muck`` in that order (PHH ``sm``), as pokerkit replays.
- Each pot goes to the best shown hand among the players eligible for it; ties split evenly and
  every odd chip goes to the first winner clockwise from the button (seeds 000, 001, 003, 004).
- Rake (``engine.rake.compute_rake``) is taken once from the total of the pots after uncalled
  bets came back, and shared by the pots as the rake rules say (``engine.rake.split_rake``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openpoker.engine.hand_events import (
    HandEnded,
    HandEvent,
    cards_mucked,
    cards_shown,
    hand_ended,
    pot_awarded,
    seat_amount,
    showdown_started,
)
from openpoker.engine.pots import Pot, build_pots, new_pot
from openpoker.engine.rake import compute_rake, split_rake
from openpoker.engine.ranking import HandValue, evaluate
from openpoker.engine.rules import Profile

# Enum members bound once: a member look-up on an Enum class costs a ~10x attribute look-up,
# and these are read on every action.
_PHH = Profile.PHH

if TYPE_CHECKING:
    from openpoker.engine.hand_state import HandState


def describe(s: HandState, i: int) -> str:
    if len(s.board) < 3:
        return ""
    return evaluate(s.rules, s.hole[i], s.board).describe()


def showdown_order(s: HandState) -> list[int]:
    n = s.n
    # ``opener``: the last player to bet or raise on the current round, else its first actor.
    first = s.opener
    return [j for j in ((first + k) % n for k in range(n)) if not s.folded[j]]


def finish(s: HandState) -> list[HandEvent]:
    """Events once betting is over: a fold win, the seeds showdown, or the phh showdown start."""
    in_hand = [i for i in range(s.n) if not s.folded[i] and not s.mucked[i]]
    if len(in_hand) == 1:
        return _pay(s, {})
    if s.rules.profile is _PHH:
        return award(s)  # the showdown (Show / Muck commands) is over
    order = showdown_order(s)
    events: list[HandEvent] = [showdown_started(tuple(s.seats[i] for i in order))]
    pots = build_pots(s.live, s.dead, [not f for f in s.folded])
    values: dict[int, HandValue] = {}
    for i in order:
        value = evaluate(s.rules, s.hole[i], s.board)
        must_show = s.stack[i] == 0 or s.protected[i] or not s.auto_muck[i] or not values
        if must_show or _can_win(i, value, values, pots):
            values[i] = value
            events.append(cards_shown(s.seats[i], s.hole[i], value.describe()))
        else:
            events.append(cards_mucked(s.seats[i]))
    return events + _pay(s, values)


def _can_win(i: int, value: HandValue, shown: dict[int, HandValue], pots: list[Pot]) -> bool:
    for pot in pots:
        eligible = pot.eligible
        if i not in eligible:
            continue
        best = max((shown[j] for j in eligible if j in shown), default=None)
        if best is None or value >= best:
            return True
    return False


def can_win(s: HandState, i: int) -> bool:
    """Whether player ``i``'s hand still wins or ties a pot they are in, against the hands
    shown so far (the board must be complete)."""
    values = {j: evaluate(s.rules, s.hole[j], s.board) for j in range(s.n) if s.shown[j] and not s.folded[j]}
    pots = build_pots(s.live, s.dead, [not s.folded[j] and not s.mucked[j] for j in range(s.n)])
    return _can_win(i, evaluate(s.rules, s.hole[i], s.board), values, pots)


def award(s: HandState) -> list[HandEvent]:
    """phh: pay the pots once every player has shown or mucked."""
    values = {i: evaluate(s.rules, s.hole[i], s.board) for i in range(s.n) if s.shown[i] and not s.folded[i]}
    return _pay(s, values)


def _pay(s: HandState, values: dict[int, HandValue]) -> list[HandEvent]:
    """PotAwarded for every pot, then HandEnded. ``values``: the shown hands (empty on a fold
    win)."""
    n = s.n
    folded, mucked = s.folded, s.mucked
    in_hand = [not folded[i] and not mucked[i] for i in range(n)]
    if not values and not s.rules.rake.basis_points:
        alone = [i for i in range(n) if in_hand[i]]
        if len(alone) == 1:
            # The usual end, everyone else folded, unraked: the general path below reduces to
            # one pot, all of it to the last hand (a shortcut: most hands end this way).
            (w,) = alone
            amount = s.dead + sum(s.live)
            payouts = [0] * n
            payouts[w] = amount
            seat = s.seats[w]
            won = pot_awarded(0, amount, 0, (seat,), (seat_amount(seat, amount),))
            return [won, _ended(s, payouts, 0)]
    if values:
        pots = build_pots(s.live, s.dead, in_hand)
    else:  # won without a showdown: one pot, whatever the all-ins, goes to the last hand
        pots = [new_pot(s.dead + sum(s.live), tuple([i for i in range(n) if in_hand[i]]))]
    if values and s.rules.profile is _PHH:
        # pokerkit kills every shown hand that wins no pot before paying, then forms the pots
        # again: layers left with the same players merge, which moves odd chips.
        winning: set[int] = set()
        for pot in pots:
            shown = [i for i in pot.eligible if i in values]
            if shown:
                best = max(values[i] for i in shown)
                winning.update(i for i in shown if values[i] == best)
        in_hand = [in_hand[i] and (i in winning or i not in values) for i in range(n)]
        pots = build_pots(s.live, s.dead, in_hand)
    rules_rake = s.rules.rake
    if rules_rake.basis_points:
        total = sum(p.amount for p in pots)
        rake = compute_rake(rules_rake, pot=total, players_dealt_in=n, saw_flop=len(s.board) >= 3)
        shares = split_rake(rake, [p.amount for p in pots], rules_rake)
    else:
        rake, shares = 0, (0,) * len(pots)
    payouts = [0] * n
    events: list[HandEvent] = []
    for index, (pot, pot_rake) in enumerate(zip(pots, shares, strict=True)):
        net = pot.amount - pot_rake
        contenders = [i for i in pot.eligible if i in values] if values else list(pot.eligible)
        if not contenders:
            # Everyone eligible mucked: the pot goes to the hands still live (pokerkit never
            # reaches this on a valid history; it keeps chips conserved).
            contenders = [i for i in range(n) if in_hand[i]] or [i for i in range(n) if not s.folded[i]]
        ranked = [values[i] for i in contenders if i in values]
        if ranked:
            best = max(ranked)
            winners = [i for i in contenders if values.get(i) == best]
        else:
            winners = contenders
        winners.sort()  # internal order is clockwise from the first seat left of the button
        # Split in whole chips of ``chip_unit``; a pot that is not a whole number of them (a
        # replayed file's decimal amounts, which pokerkit divides exactly) in minor units.
        unit = s.rules.chip_unit
        if net % unit:
            unit = 1
        share = net // (len(winners) * unit) * unit
        odd = net - share * len(winners)
        amounts = [share + (odd if k == 0 else 0) for k in range(len(winners))]
        for i, amount in zip(winners, amounts, strict=True):
            payouts[i] += amount
        seats = s.seats
        events.append(
            pot_awarded(
                index,
                pot.amount,
                pot_rake,
                tuple([seats[i] for i in pot.eligible]),
                tuple([seat_amount(seats[i], a) for i, a in zip(winners, amounts, strict=True)]),
            )
        )
    events.append(_ended(s, payouts, rake))
    return events


def _ended(s: HandState, payouts: list[int], rake: int) -> HandEnded:
    seats, stack = s.seats, s.stack
    order = s.by_seat
    return hand_ended(
        s.hand_id,
        tuple([seat_amount(seats[i], stack[i] + payouts[i]) for i in order]),
        tuple([seat_amount(seats[i], payouts[i]) for i in order]),
        rake,
    )

"""What the player to act may do: amount to call, whether a raise is open, raise-to bounds.

Pure functions of the hand state (``engine.hand.HandState``), used by ``decide`` to validate
and by clients through ``engine.hand.legal_actions``.

Rules (HOUSE_RULES.md, Betting), by profile:

- Minimum raise: the largest full bet or raise of the round (seeds: at least the big blind, the
  straddle pre-flop; phh: at least ``min_bet``, as pokerkit). An all-in for less is allowed.
- Re-opening (TR 96/96a). seeds: a player who has acted may raise again only if the bet has
  grown by a full raise since they last acted (several short all-ins may add up to one); in
  fixed limit an all-in of half a bet or more counts as full (LAR 129). phh: pokerkit 0.7.7's
  rule: a call smaller than the largest raise of the round cannot be raised, and an acted player
  faces a run of short all-ins that must add up to a full raise.
- Fixed limit: raise-to = base + bet size, where base is the current bet (phh) or the last full
  bet (seeds: completing a short all-in of less than half a bet), capped per round.
- Pot limit: ``2 x highest - own bet + every chip in the pot`` (pre-flop blinds at true value);
  with side pots the pot is every pot of the hand plus the bets on the table, as pokerkit.
- A raise nobody can call (every other player folded or all-in) is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from openpoker.engine.rules import FixedLimitShortAllIn, Profile, Structure

# Enum members bound once: a member look-up on an Enum class costs a ~10x attribute look-up,
# and these are read on every action.
_FIXED_LIMIT = Structure.FIXED_LIMIT
_FULL_RAISE_RULE = FixedLimitShortAllIn.FULL_RAISE_RULE
_HALF_BET_RULE = FixedLimitShortAllIn.HALF_BET_RULE
_NO_LIMIT = Structure.NO_LIMIT
_PHH = Profile.PHH

if TYPE_CHECKING:
    from openpoker.engine.hand_state import HandState


@dataclass(frozen=True, slots=True, kw_only=True)
class LegalActions:
    """The choices of ``seat`` now. Raise amounts are totals for the street ("raise to");
    ``min_raise_to`` may equal ``max_raise_to`` (fixed limit, or an all-in for less)."""

    seat: int
    can_fold: bool
    can_check: bool
    to_call: int  # chips a call adds (0 when checking); less than owed when calling all-in
    can_raise: bool
    min_raise_to: int
    max_raise_to: int


def to_call(s: HandState, i: int) -> int:
    owed = s.highest - s.bet[i]
    return owed if owed < s.stack[i] else s.stack[i]


def fixed_bet_size(s: HandState) -> int:
    stakes = s.rules.stakes
    return stakes.small_bet if s.street < 2 else stakes.big_bet


def raise_block(s: HandState, i: int) -> str | None:
    """Why player ``i`` may not bet or raise now, or None if they may."""
    rules = s.rules
    stack = s.stack[i]
    owed = s.highest - s.bet[i]
    if stack <= owed:
        return "covered"
    if rules.structure is _FIXED_LIMIT and s.raises >= s.raise_cap:
        return "capped"
    highest = s.highest
    for j in s.order_range:
        if j != i and not s.folded[j] and not s.protected[j] and s.stack[j] + s.bet[j] > highest:
            break
    else:
        return "nobody_can_call"
    if rules.profile is _PHH:
        if owed < s.inc:
            return "not_reopened"
        if s.acted[i] and s.shorts and sum(s.shorts) < s.inc:
            return "not_reopened"
    elif s.faced[i] >= 0 and highest - s.faced[i] < reopen_threshold(s):
        return "not_reopened"
    return None


def reopen_threshold(s: HandState) -> int:
    """seeds: how much the bet must grow to re-open betting for a player who acted."""
    if s.rules.structure is _FIXED_LIMIT:
        size = fixed_bet_size(s)
        if s.rules.fixed_limit_short_all_in is _HALF_BET_RULE:
            return (size + 1) // 2  # LAR 129: half a bet or more is a full bet
        return size
    return s.inc


def raise_bounds(s: HandState, i: int) -> tuple[int, int]:
    """(minimum, maximum) raise-to for player ``i``, both capped at their all-in total."""
    rules = s.rules
    all_in = s.stack[i] + s.bet[i]
    structure = rules.structure
    if structure is _FIXED_LIMIT:
        size = fixed_bet_size(s)
        full_raise_rule = rules.fixed_limit_short_all_in is _FULL_RAISE_RULE
        base = s.highest if full_raise_rule or rules.profile is _PHH else s.fl_base
        target = base + size
        if target <= s.highest:  # completing can never be a call
            target = s.highest + size
        amount = target if target < all_in else all_in
        return amount, amount
    if rules.profile is _PHH:
        inc = s.inc if s.inc > rules.stakes.small_bet else rules.stakes.small_bet
    else:
        inc = s.inc
    minimum = s.highest + inc
    minimum = min(minimum, all_in)
    if structure is _NO_LIMIT:
        return minimum, all_in
    pot = s.dead + sum(s.live)
    maximum = 2 * s.highest - s.bet[i] + pot
    maximum = max(maximum, minimum)
    maximum = min(maximum, all_in)
    return minimum, maximum

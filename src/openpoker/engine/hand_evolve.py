"""How each fact of a hand changes its state: ``evolve``, ``fold`` and one handler per event type.

``evolve`` applies a fact and never validates (``engine.hand_decide`` does). Opening a betting
round (pre-flop once the hole cards are dealt, then after each board) and queueing who acts in
it are part of applying the fact that opens it, so they live here too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, assert_never

from openpoker.engine.errors import InvalidHandSetup
from openpoker.engine.hand_events import (
    STREETS,
    AllInProtected,
    BetPlaced,
    BoardDealt,
    Called,
    CardsMucked,
    CardsShown,
    Checked,
    Folded,
    ForcedBetPosted,
    HandEnded,
    HandEvent,
    HandStarted,
    HoleCardsDealt,
    PotAwarded,
    ShowdownStarted,
    UncalledBetReturned,
)
from openpoker.engine.hand_setup import PostKind
from openpoker.engine.hand_state import BETTING, OVER, SHOWDOWN, HandState, initial_state
from openpoker.engine.rules import FixedLimitShortAllIn, Profile, Rules, ShortBigBlindCall, Structure

# Enum members bound once: a member look-up on an Enum class costs a ~10x attribute look-up,
# and these are read on every action.
_ANTE = PostKind.ANTE
_BIG_BLIND = PostKind.BIG_BLIND
_DEAD_SMALL_BLIND = PostKind.DEAD_SMALL_BLIND
_FIXED_LIMIT = Structure.FIXED_LIMIT
_FULL_BIG_BLIND = ShortBigBlindCall.FULL_BIG_BLIND
_HALF_BET_RULE = FixedLimitShortAllIn.HALF_BET_RULE
_LIVE_BIG_BLIND = PostKind.LIVE_BIG_BLIND
_PHH = Profile.PHH
_SMALL_BLIND = PostKind.SMALL_BLIND
_STRADDLE = PostKind.STRADDLE


def fold(events: Iterable[HandEvent]) -> HandState:
    """The state after ``events`` (the first must be ``HandStarted``)."""
    it = iter(events)
    first = next(it)
    if not isinstance(first, HandStarted):
        raise InvalidHandSetup(problem=f"a hand starts with HandStarted, not {type(first).__name__}")
    state = initial_state(first)
    for event in it:
        evolve_in_place(state, event)
    return state


def evolve(state: HandState, event: HandEvent) -> HandState:
    """Apply one fact. ``HandStarted`` makes a new state; every other event updates ``state``."""
    if isinstance(event, HandStarted):
        return initial_state(event)
    evolve_in_place(state, event)
    return state


def evolve_in_place(s: HandState, event: HandEvent) -> None:
    """Apply one fact other than ``HandStarted`` to ``s``."""
    # One handler per event type, found by type: a ``match`` over fifteen class patterns
    # costs several isinstance checks per event, and evolve runs for every event of every
    # replayed hand. A test checks that every member of the HandEvent union has a handler.
    # The actions and the board, the most frequent, are called directly (compiled, a direct
    # call skips the generic call through the table; an isinstance test is a type check).
    if isinstance(event, Folded):
        _on_folded(s, event)
    elif isinstance(event, Called):
        _on_called(s, event)
    elif isinstance(event, Checked):
        _on_checked(s, event)
    elif isinstance(event, BetPlaced):
        _on_bet_placed(s, event)
    elif isinstance(event, BoardDealt):
        _on_board_dealt(s, event)
    else:
        _APPLY[type(event)](s, event)


def set_auto_muck(s: HandState, seats: tuple[int, ...]) -> None:
    """The players whose hand that cannot win is mucked at a seeds showdown: those at
    ``seats`` (the table's per-player choice, applied by the table's ``evolve``, never decided
    by the hand). A new list: copies of the state share the old one."""
    on = set(seats)
    s.auto_muck = [seat in on for seat in s.seats]


def _on_bet_placed(s: HandState, event: BetPlaced) -> None:
    seat = event.seat
    to = event.to
    amount = event.amount
    i = s.index_of[seat]
    s.stack[i] -= amount
    s.bet[i] = to
    s.live[i] += amount
    increment = to - s.highest
    rules = s.rules
    if rules.profile is _PHH:
        if increment >= s.inc:
            s.acted = [False] * s.n
        s.inc = max(s.inc, increment)
        if s.stack[i]:
            s.shorts.clear()
        else:
            s.shorts.append(increment)
            if sum(s.shorts) >= s.inc:
                s.shorts.clear()
    elif rules.structure is _FIXED_LIMIT:
        size = rules.stakes.small_bet if s.street < 2 else rules.stakes.big_bet
        half_bet_rule = rules.fixed_limit_short_all_in is _HALF_BET_RULE
        if to - s.fl_base >= size or (half_bet_rule and 2 * increment >= size):
            s.fl_base = to  # a full bet, or (LAR 129) half a bet or more all-in
    elif increment >= s.inc:
        s.inc = increment
    s.raises += 1
    s.highest = to
    s.acted[i] = True
    s.faced[i] = to
    s.last_aggressor = i
    s.opener = i
    # Everyone else still able to act must answer the new bet, in order after i.
    folded, stack, protected = s.folded, s.stack, s.protected
    s.queue = [
        j
        for j in (*range(i + 1, s.n), *range(i))  # the others, in turn after i
        if not folded[j] and stack[j] and not protected[j]
    ]


def _on_called(s: HandState, event: Called) -> None:
    seat = event.seat
    amount = event.amount
    i = s.index_of[seat]
    s.stack[i] -= amount
    s.bet[i] += amount
    s.live[i] += amount
    s.acted[i] = True
    s.faced[i] = s.highest
    s.queue.remove(i)


def _on_checked(s: HandState, event: Checked) -> None:
    seat = event.seat
    i = s.index_of[seat]
    s.acted[i] = True
    s.faced[i] = s.highest
    s.queue.remove(i)


def _on_folded(s: HandState, event: Folded) -> None:
    seat = event.seat
    i = s.index_of[seat]
    s.folded[i] = True
    s.acted[i] = True
    if i in s.queue:
        s.queue.remove(i)
    if i in s.showdown_queue:
        s.showdown_queue.remove(i)


def _on_all_in_protected(s: HandState, event: AllInProtected) -> None:
    seat = event.seat
    i = s.index_of[seat]
    s.protected[i] = True
    if i in s.queue:
        s.queue.remove(i)


def _on_uncalled_bet_returned(s: HandState, event: UncalledBetReturned) -> None:
    seat = event.seat
    amount = event.amount
    i = s.index_of[seat]
    s.stack[i] += amount
    s.bet[i] -= amount
    s.live[i] -= amount
    if s.highest > s.bet[i]:
        s.highest = max(s.bet)


def _on_board_dealt(s: HandState, event: BoardDealt) -> None:
    street = event.street
    cards = event.cards
    s.board.extend(cards)
    _begin_street(s, STREETS.index(street))


def on_forced_bet_posted(s: HandState, event: ForcedBetPosted) -> None:
    seat = event.seat
    kind = event.kind
    amount = event.amount
    i = s.index_of[seat]
    s.stack[i] -= amount
    rules = s.rules
    if kind is _DEAD_SMALL_BLIND or (kind is _ANTE and not rules.ante_trimming):
        s.dead += amount
    else:
        s.live[i] += amount
        if kind is not _ANTE:
            s.bet[i] += amount
            held = s.blind_kind[i]
            if held is None or _BLIND_PRECEDENCE[kind] > _BLIND_PRECEDENCE[held]:
                s.blind_kind = s.blind_kind[:]  # shared with copies until written
                s.blind_kind[i] = kind


def _on_hole_cards_dealt(s: HandState, event: HoleCardsDealt) -> None:
    seat = event.seat
    cards = event.cards
    i = s.index_of[seat]
    s.hole[i] = cards
    if i == (s.n - 1 if s.n > 2 else 0):  # the last player dealt: betting opens
        begin_preflop(s)


def _on_showdown_started(s: HandState, event: ShowdownStarted) -> None:
    order = event.order
    s.phase = SHOWDOWN
    s.queue = []
    s.showdown_queue = [s.index_of[seat] for seat in order]


def _on_cards_shown(s: HandState, event: CardsShown) -> None:
    seat = event.seat
    i = s.index_of[seat]
    s.shown[i] = True
    _showdown_step(s, i)


def _on_cards_mucked(s: HandState, event: CardsMucked) -> None:
    seat = event.seat
    i = s.index_of[seat]
    s.mucked[i] = True
    _showdown_step(s, i)


def _on_pot_awarded(s: HandState, event: PotAwarded) -> None:
    winners = event.winners
    for w in winners:
        s.stack[s.index_of[w.seat]] += w.amount


def _on_hand_ended(s: HandState, event: HandEnded) -> None:
    s.phase = OVER
    s.queue = []
    s.showdown_queue = []
    s.result = event


def _on_hand_started(s: HandState, event: HandStarted) -> None:
    raise InvalidHandSetup(problem="HandStarted in the middle of a hand")


_APPLY: dict[type, Callable[[HandState, Any], None]] = {
    BetPlaced: _on_bet_placed,
    Called: _on_called,
    Checked: _on_checked,
    Folded: _on_folded,
    AllInProtected: _on_all_in_protected,
    UncalledBetReturned: _on_uncalled_bet_returned,
    BoardDealt: _on_board_dealt,
    ForcedBetPosted: on_forced_bet_posted,
    HoleCardsDealt: _on_hole_cards_dealt,
    ShowdownStarted: _on_showdown_started,
    CardsShown: _on_cards_shown,
    CardsMucked: _on_cards_mucked,
    PotAwarded: _on_pot_awarded,
    HandEnded: _on_hand_ended,
    HandStarted: _on_hand_started,
}


_BLIND_PRECEDENCE = {
    _LIVE_BIG_BLIND: 1,
    _SMALL_BLIND: 2,
    _BIG_BLIND: 3,
    _STRADDLE: 4,
}


def _nominal(rules: Rules, kind: PostKind) -> int:
    stakes = rules.stakes
    match kind:
        case PostKind.SMALL_BLIND:
            return stakes.small_blind
        case PostKind.BIG_BLIND | PostKind.LIVE_BIG_BLIND:
            return stakes.big_blind
        case PostKind.STRADDLE:
            return stakes.straddle
        case PostKind.ANTE | PostKind.DEAD_SMALL_BLIND:
            return 0
        case _:
            assert_never(kind)


def _showdown_step(s: HandState, i: int) -> None:
    q = s.showdown_queue
    if q and q[0] == i:
        q.pop(0)
        if not q:  # everyone has shown or mucked: deal what is left of the board, then pay
            s.showdown_done = True
            s.phase = BETTING


def begin_preflop(s: HandState) -> None:
    """Pre-flop betting opens once every player holds their cards."""
    rules = s.rules
    n = s.n
    kinds = s.blind_kind
    if rules.profile is _PHH:
        # pokerkit: the action opens left of the largest positive blind or straddle (ties to the
        # later player); a new player's live post does not move it.
        # The last player with the largest positive blind, else the button (the original
        # lexicographic (bet * sign, i) maximum from (0, n - 1), without a tuple per player).
        best, top = n - 1, 0
        bet = s.bet
        for i in range(n):
            k = kinds[i]
            if k is None or k is _LIVE_BIG_BLIND:
                continue  # sign 0 or -1: never above the button's (0, n - 1)
            v = bet[i]
            if v > 0 and v >= top:
                best, top = i, v
        s.highest = max(s.bet)
        s.inc = 0
    else:
        # The action opens left of the straddle, else of the big blind. seeds 000 / LAR 150:
        # pre-flop everyone must at least equal the full big blind (and straddle) even when its
        # poster is all-in for less, and the minimum raise is that amount again.
        best = n - 1
        for wanted in (_STRADDLE, _BIG_BLIND, _SMALL_BLIND):
            found = [i for i in range(n) if kinds[i] is wanted]
            if found:
                best = found[-1]
                break
        nominal = max((_nominal(rules, k) for k in kinds if k is not None), default=0)
        if rules.short_big_blind_call is _FULL_BIG_BLIND:
            s.highest = max(*s.bet, nominal)
        else:
            s.highest = max(s.bet)
        s.inc = max(nominal, rules.stakes.big_blind)
    s.fl_base = s.highest
    s.raises = 0
    s.opener = (best + 1) % n
    _queue_round(s)


def _begin_street(s: HandState, street: int) -> None:
    """A new betting round after board cards: bets gathered, action from left of the button."""
    rules = s.rules
    n = s.n
    s.street = street
    s.bet = [0] * n
    s.highest = 0
    s.inc = 0 if rules.profile is _PHH else rules.stakes.big_blind
    s.fl_base = 0
    s.raises = 0
    if rules.structure is _FIXED_LIMIT:
        s.raise_cap = 1 + rules.fixed_limit_raises_postflop
    s.acted = [False] * n
    s.faced = [-1] * n
    s.shorts = []
    s.last_aggressor = None
    s.opener = 0
    _queue_round(s)


def _queue_round(s: HandState) -> None:
    """Who acts this round, in order from the opener: players with chips who can still be
    called (pokerkit's effective stack), none when a lone player has nothing to answer."""
    n = s.n
    stack, bet, folded, protected = s.stack, s.bet, s.folded, s.protected
    totals = sorted([(0 if protected[j] else stack[j]) + bet[j] for j in range(n) if not folded[j]])
    second = totals[-2] if len(totals) > 1 else 0
    q = []
    opener = s.opener
    for j in (*range(opener, n), *range(opener)):  # n players in turn from the opener
        if folded[j] or protected[j] or not stack[j] or second - bet[j] <= 0:
            continue
        q.append(j)
    if len(q) == 1 and bet[q[0]] >= s.highest:
        q = []
    s.queue = q

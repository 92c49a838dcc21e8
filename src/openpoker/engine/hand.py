"""One hand of Hold'em, Omaha or Six Plus as a pure decider: start, decide, evolve, fold.

Theory of operation
-------------------
A hand is the fold of its events. ``start(setup)`` returns the opening events: ``HandStarted``
(rules, seats, button and deck: the rules of the hand are recorded in its first event), the
forced bets (``ForcedBetPosted``) and the hole cards (``HoleCardsDealt``, one card at a time
clockwise from the first seat left of the button; heads-up the dealer first; no burns).
``decide(state, command)`` validates one command against the state and returns the events it
causes, raising a typed ``RuleViolation`` (and changing nothing) when it is illegal.
``evolve(state, event)`` applies one fact and never validates; ``fold(events)`` is a reduce.

A command's events include everything that follows automatically: the player's action, and if
it closes the betting round the uncalled bet returned, the next board cards (several streets at
once when everyone is all-in), the showdown, the pots awarded and ``HandEnded``, always the last
event. To find those follow-on events ``decide`` evolves a private copy of the state, so the
state it was given is never touched (a property test checks it); an action that closes nothing
skips the copy. ``apply(state, command)`` is decide and evolve in one pass for callers that
apply every decision at once (replays): same events, same resulting state, no copy.
``begin(setup)`` is ``start`` together with the state its events fold to.

The state (``HandState``) is a private mutable object that only ``evolve`` writes; callers read
it through the queries: ``to_act``, ``legal_actions``, ``pots``, ``is_over``, ``final_stacks``
and ``view`` (redacted for one viewer). Players are kept in an internal order, clockwise from
the first seat left of the button (so the button, when dealt in, is last); events and queries
speak in table seat numbers.

Profiles (``Rules.profile``, HOUSE_RULES.md): ``seeds`` plays the seed documents' rules and
shows down automatically (last aggressor of the final round first, else first left of the
button; hands that cannot win are mucked when ``auto_muck``; all-in hands are always shown).
``phh`` plays as pokerkit replays hand histories, including its re-opening rule and an explicit
showdown: each player in showdown order sends ``Show`` or ``Muck``, as PHH ``sm`` actions do.
Betting rules live in ``engine.betting``, pots in ``engine.pots``, payouts in
``engine.showdown``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import Any, Final, assert_never

from openpoker.engine import showdown
from openpoker.engine.betting import LegalActions, raise_block, raise_bounds, to_call
from openpoker.engine.cards import SUIT_CHARS, Card
from openpoker.engine.errors import (
    CannotCheck,
    CannotMuck,
    FoldNotAllowed,
    HandOver,
    InvalidHandSetup,
    NotEnoughChips,
    NothingToCall,
    NotShowdown,
    NotYourTurn,
    ProtectionNotAllowed,
    RaiseAboveMaximum,
    RaiseBelowMinimum,
    RaiseNotAllowed,
    SeatNotInHand,
)
from openpoker.engine.hand_events import (
    STREETS,
    Act,
    ActionKind,
    AllInProtected,
    BetPlaced,
    BoardDealt,
    Called,
    CardsMucked,
    CardsShown,
    Checked,
    Folded,
    ForcedBetPosted,
    HandCommand,
    HandEnded,
    HandEvent,
    HandStarted,
    HoleCardsDealt,
    Muck,
    PotAwarded,
    ProtectAllIn,
    Show,
    ShowdownStarted,
    UncalledBetReturned,
    bet_placed,
    board_dealt,
    called,
    cards_mucked,
    cards_shown,
    checked,
    folded,
    forced_bet_posted,
    hand_started,
    hole_cards_dealt,
    showdown_started,
    uncalled_bet_returned,
)
from openpoker.engine.hand_setup import HandSetup, PostKind

# Re-exported: callers name the views as ``engine.hand.HandView``.
from openpoker.engine.hand_view import HandView, PlayerView, PotView
from openpoker.engine.pots import build_pots
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

# Field readers in C: cheaper than a lambda or a comprehension for the per-hand set-up.
_SEAT = attrgetter("seat")
_SUIT_INDEX: Final = {suit: k for k, suit in enumerate(SUIT_CHARS)}

__all__ = [
    "Act",
    "ActionKind",
    "HandCommand",
    "HandEvent",
    "HandState",
    "HandView",
    "LegalActions",
    "Muck",
    "PlayerView",
    "ProtectAllIn",
    "Show",
    "apply",
    "begin",
    "decide",
    "evolve",
    "final_stacks",
    "fold",
    "is_over",
    "legal_actions",
    "pots",
    "start",
    "to_act",
    "view",
]

# Phases of a hand.
BETTING = 0
SHOWDOWN = 1  # phh: waiting for Show / Muck commands
OVER = 2

_BOARD_SIZES = (3, 1, 1)  # flop, turn, river


# Module level, not only ``__slots__``: a class compiled by mypyc has no ``__slots__`` at run
# time, and ``snapshot`` reads the names.
_SLOTS: Final = (
    "acted",
    "bet",
    "blind_kind",
    "board",
    "button",
    "by_seat",
    "dead",
    "deck",
    "faced",
    "fl_base",
    "folded",
    "hand_id",
    "highest",
    "hole",
    "inc",
    "index_of",
    "last_aggressor",
    "live",
    "mucked",
    "n",
    "opener",
    "order_range",
    "phase",
    "players",
    "protected",
    "queue",
    "raise_cap",
    "raises",
    "result",
    "rules",
    "seats",
    "shorts",
    "showdown_done",
    "showdown_queue",
    "shown",
    "stack",
    "start_stacks",
    "street",
)


class HandState:
    """Private mutable state of one hand; only ``evolve`` (and ``_begin_street``) write it.

    Per-player lists are indexed in internal order (clockwise from the first seat left of the
    button); ``seats[i]`` is player ``i``'s table seat.
    """

    __slots__ = _SLOTS

    rules: Rules
    hand_id: str
    button: int
    seats: tuple[int, ...]
    by_seat: tuple[int, ...]  # internal indices in seat-number order
    players: tuple[str, ...]
    index_of: dict[int, int]
    n: int
    order_range: range
    deck: tuple[Card, ...]
    start_stacks: tuple[int, ...]
    stack: list[int]
    bet: list[int]
    live: list[int]
    dead: int
    folded: list[bool]
    protected: list[bool]
    hole: list[tuple[Card, ...]]
    board: list[Card]
    street: int
    phase: int
    queue: list[int]
    highest: int
    inc: int
    raises: int
    raise_cap: int
    fl_base: int
    blind_kind: list[PostKind | None]
    acted: list[bool]
    faced: list[int]
    shorts: list[int]
    last_aggressor: int | None
    opener: int
    showdown_queue: list[int]
    showdown_done: bool
    shown: list[bool]
    mucked: list[bool]
    result: HandEnded | None

    def copy(self) -> HandState:
        c = HandState()
        c.rules = self.rules
        c.hand_id = self.hand_id
        c.button = self.button
        c.seats = self.seats
        c.by_seat = self.by_seat
        c.players = self.players
        c.index_of = self.index_of
        c.n = self.n
        c.order_range = self.order_range
        c.deck = self.deck
        c.start_stacks = self.start_stacks
        c.stack = self.stack[:]
        c.bet = self.bet[:]
        c.live = self.live[:]
        c.dead = self.dead
        c.folded = self.folded[:]
        c.protected = self.protected[:]
        c.hole = self.hole[:]
        c.board = self.board[:]
        c.street = self.street
        c.phase = self.phase
        c.queue = self.queue[:]
        c.highest = self.highest
        c.inc = self.inc
        c.raises = self.raises
        c.raise_cap = self.raise_cap
        c.fl_base = self.fl_base
        c.blind_kind = self.blind_kind
        c.acted = self.acted[:]
        c.faced = self.faced[:]
        c.shorts = self.shorts[:]
        c.last_aggressor = self.last_aggressor
        c.opener = self.opener
        c.showdown_queue = self.showdown_queue[:]
        c.showdown_done = self.showdown_done
        c.shown = self.shown[:]
        c.mucked = self.mucked[:]
        c.result = self.result
        return c

    def snapshot(self) -> tuple[object, ...]:
        """Every field as plain values, for equality checks in tests."""
        return tuple((list(v) if isinstance(v, list) else v) for v in (getattr(self, k) for k in _SLOTS))


# -- start -------------------------------------------------------------------------------------


def start(setup: HandSetup) -> list[HandEvent]:
    """The opening events of a hand: started, forced bets, hole cards."""
    return begin(setup)[1]


def begin(setup: HandSetup) -> tuple[HandState, list[HandEvent]]:
    """``start`` and the state those events fold to, without folding them twice."""
    rules = setup.rules
    seats = tuple(sorted(setup.seats, key=_SEAT))
    n = len(seats)
    if n < 2:
        raise InvalidHandSetup(problem=f"{n} player(s) dealt in; a hand needs 2")
    previous = -1
    for s in seats:
        if s.seat == previous:
            raise InvalidHandSetup(problem="a seat is dealt in twice")
        previous = s.seat
        if s.stack <= 0:
            raise InvalidHandSetup(problem=f"seat {s.seat} has no chips")
    needed = n * rules.hole_cards + 5
    deck = setup.deck
    if len(deck) < needed:
        raise InvalidHandSetup(problem=f"deck of {len(deck)} cards; {needed} are needed")
    # A bit per card value (rank and suit): cheaper than a set of (rank, suit) tuples.
    seen = 0
    for c in deck[:needed]:
        bit = 1 << (c.rank * 4 + _SUIT_INDEX[c.suit])
        if seen & bit:
            raise InvalidHandSetup(problem="the deck holds a card twice")
        seen |= bit
    started = hand_started(setup.hand_id, rules, setup.button, seats, setup.deck, setup.commitment)
    events: list[HandEvent] = [started]
    state = _initial(started)
    index_of = state.index_of
    ante_cap = _ante_cap(setup, state) if rules.ante_trimming else None
    for post in setup.posts:
        i_or_none = index_of.get(post.seat)
        if i_or_none is None:
            raise InvalidHandSetup(problem=f"seat {post.seat} posts but is not dealt in")
        if post.amount < 0:
            raise InvalidHandSetup(problem=f"seat {post.seat} posts a negative amount")
        i = i_or_none
        amount = min(post.amount, state.stack[i])
        if ante_cap is not None and post.kind is _ANTE:
            amount = min(amount, ante_cap)  # the part of an ante nobody matches comes back
        if amount == 0:
            continue
        event = forced_bet_posted(post.seat, post.kind, amount, amount == state.stack[i])
        _on_forced_bet_posted(state, event)
        events.append(event)
    # Hole cards: one at a time clockwise from the first seat left of the button (index 0);
    # heads-up the dealer (index 1, the button) gets the first card.
    order = list(range(n)) if n > 2 else [1, 0]
    k = rules.hole_cards
    # (What ``_on_hole_cards_dealt`` does for each event, inline: betting opens after the last.)
    hole, state_seats = state.hole, state.seats
    for position, i in enumerate(order):
        cards = deck[position : k * n : n]  # every n-th card from this player's first
        events.append(hole_cards_dealt(state_seats[i], cards))
        hole[i] = cards
    _begin_preflop(state)
    _advance(state, events)  # everyone may be all-in from the blinds already
    return state, events


def _ante_cap(setup: HandSetup, state: HandState) -> int:
    """phh ante trimming: nobody antes more than the second largest ante can match."""
    antes = [0] * state.n
    for p in setup.posts:
        if p.kind is _ANTE and p.seat in state.index_of:
            i = state.index_of[p.seat]
            antes[i] = min(p.amount, state.stack[i])
    return sorted(antes)[-2]


def _initial(e: HandStarted) -> HandState:
    s = HandState()
    rules = e.rules
    s.rules = rules
    s.hand_id = e.hand_id
    s.button = e.button
    # Internal order: clockwise from the first seat after the button. ``HandStarted.seats`` is
    # sorted by seat (``begin`` records it so), so the order is a rotation of it, found in one
    # pass; seats in any other order are sorted.
    button = e.button
    given = e.seats
    n = len(given)
    first = -1
    previous = -1
    for k in range(n):
        seat = given[k].seat
        if seat <= previous:
            first = -2  # not sorted
            break
        if first == -1 and seat > button:
            first = k
        previous = seat
    if first == -2:
        ordered = tuple(sorted(given, key=lambda x: (x.seat - button - 1) % 1000))
        s.seats = tuple([o.seat for o in ordered])
        s.by_seat = tuple(sorted(range(n), key=s.seats.__getitem__))
    else:
        first = max(first, 0)  # no seat after the button: the lowest seat is first
        ordered = given[first:] + given[:first]
        s.seats = tuple([o.seat for o in ordered])
        s.by_seat = tuple([(k - first) % n for k in range(n)])
    s.players = tuple([o.player for o in ordered])
    s.index_of = dict(zip(s.seats, range(n), strict=True))
    s.n = n
    s.order_range = range(n)
    s.deck = e.deck
    s.start_stacks = tuple([o.stack for o in ordered])
    s.stack = list(s.start_stacks)
    s.bet = [0] * n
    s.live = [0] * n
    s.dead = 0
    s.folded = [False] * n
    s.protected = [False] * n
    s.hole = [()] * n
    s.board = []
    s.street = 0
    s.phase = BETTING
    s.queue = []
    s.highest = 0
    s.inc = 0
    s.raises = 0
    s.raise_cap = rules.fixed_limit_raises_preflop if rules.structure is _FIXED_LIMIT else 1 << 30
    s.fl_base = 0
    s.blind_kind = [None] * n
    s.acted = [False] * n
    s.faced = [-1] * n
    s.shorts = []
    s.last_aggressor = None
    s.opener = 0
    s.showdown_queue = []
    s.showdown_done = False
    s.shown = [False] * n
    s.mucked = [False] * n
    s.result = None
    return s


# -- evolve ------------------------------------------------------------------------------------


def fold(events: Iterable[HandEvent]) -> HandState:
    """The state after ``events`` (the first must be ``HandStarted``)."""
    it = iter(events)
    first = next(it)
    if not isinstance(first, HandStarted):
        raise InvalidHandSetup(problem=f"a hand starts with HandStarted, not {type(first).__name__}")
    state = _initial(first)
    for event in it:
        _evolve(state, event)
    return state


def evolve(state: HandState, event: HandEvent) -> HandState:
    """Apply one fact. ``HandStarted`` makes a new state; every other event updates ``state``."""
    if isinstance(event, HandStarted):
        return _initial(event)
    _evolve(state, event)
    return state


def _evolve(s: HandState, event: HandEvent) -> None:
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


def _on_forced_bet_posted(s: HandState, event: ForcedBetPosted) -> None:
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
        _begin_preflop(s)


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
    ForcedBetPosted: _on_forced_bet_posted,
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


def _begin_preflop(s: HandState) -> None:
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


# -- decide ------------------------------------------------------------------------------------


def decide(state: HandState, command: HandCommand) -> list[HandEvent]:
    """The events ``command`` causes, or a ``RuleViolation``; ``state`` is left unchanged."""
    s = state
    event = _first_event(s, command)
    # Fast path: an action that leaves two or more players to act and two or more in the hand
    # closes nothing, so no follow-on event can come (a bet always leaves someone to answer it).
    if isinstance(event, BetPlaced):
        return [event]
    if isinstance(event, Checked | Called | Folded | AllInProtected) and len(s.queue) > 2:
        in_hand = s.n - s.folded.count(True) - (1 if isinstance(event, Folded) else 0)
        if in_hand > 1:
            return [event]
    out: list[HandEvent] = [event]
    scratch = s.copy()
    _evolve(scratch, event)
    _advance(scratch, out)
    return out


def apply(state: HandState, command: HandCommand) -> list[HandEvent]:
    """``decide`` and ``evolve`` in one pass: the events ``command`` causes, already applied to
    ``state`` (which is changed). Same events and same resulting state as ``decide`` followed
    by ``evolve`` of each event (a property test checks it), without the scratch copy; for
    callers that apply every decision at once, such as replays. A refused command raises
    before anything changes."""
    event = _first_event(state, command)
    out: list[HandEvent] = [event]
    _evolve(state, event)
    _advance(state, out)
    return out


def apply_act(state: HandState, seat: int, action: ActionKind, amount: int = 0) -> list[HandEvent]:
    """``apply(state, Act(seat=seat, action=action, amount=amount))`` without building the
    command: same validation, typed errors, events and resulting state (for replays)."""
    event = _act_event(state, seat, action, amount)
    out: list[HandEvent] = [event]
    _evolve(state, event)
    # ``_advance``'s own first test, inline: most actions leave the round open.
    if (
        state.queue
        and state.phase == BETTING
        and state.n - state.folded.count(True) - state.mucked.count(True) > 1
    ):
        return out
    _advance(state, out)
    return out


def _first_event(s: HandState, command: HandCommand) -> HandEvent:
    """Validate ``command``: the event it makes, or a ``RuleViolation``."""
    # Dispatch on the exact type (commands are final classes): a ``match`` over class patterns
    # with captures costs several isinstance and attribute look-ups for every action.
    kind: type = type(command)
    if kind not in _COMMAND_TYPES:  # a subclass is dispatched as its command, as ``match`` did
        kind = next((t for t in _COMMAND_TYPES if isinstance(command, t)), kind)
    if kind is Act:
        assert isinstance(command, Act)
        return _act_event(s, command.seat, command.action, command.amount)
    if s.phase == OVER:
        raise HandOver(hand_id=s.hand_id)
    if kind is ProtectAllIn:
        seat = command.seat
        i = _index(s, seat)
        if s.phase != BETTING or not s.queue or s.queue[0] != i:
            raise NotYourTurn(seat=seat, to_act=to_act(s))
        if s.stack[i] == s.start_stacks[i]:
            raise ProtectionNotAllowed(seat=seat)
        return AllInProtected(seat=seat)
    if kind is Show or kind is Muck:
        return _showdown_event(s, command.seat, kind is Show)
    assert_never(command)  # type: ignore[arg-type]


def _showdown_event(s: HandState, seat: int, show: bool) -> HandEvent:
    """Validate a phh ``Show`` (``show``) or ``Muck``: the event it makes, or a violation."""
    i = _index(s, seat)
    if s.phase != SHOWDOWN:
        raise NotShowdown(seat=seat)
    if s.showdown_queue[0] != i:
        raise NotYourTurn(seat=seat, to_act=to_act(s))
    if show:
        return cards_shown(seat, s.hole[i], showdown.describe(s, i))
    live = [j for j in range(s.n) if not s.folded[j] and not s.mucked[j]]
    if live == [i]:
        raise CannotMuck(seat=seat)
    return cards_mucked(seat)


def apply_showdown(state: HandState, seat: int, show: bool) -> list[HandEvent]:
    """``apply(state, Show(seat=seat))`` (``show``) or ``Muck`` without building the command:
    same validation, events and resulting state (for replays)."""
    if state.phase == OVER:
        raise HandOver(hand_id=state.hand_id)
    event = _showdown_event(state, seat, show)
    out: list[HandEvent] = [event]
    _evolve(state, event)
    _advance(state, out)
    return out


_COMMAND_TYPES: tuple[type, ...] = (Act, ProtectAllIn, Show, Muck)
_FOLD = ActionKind.FOLD
_CHECK = ActionKind.CHECK
_CALL = ActionKind.CALL
_BET_OR_RAISE = ActionKind.BET_OR_RAISE


def _act_event(s: HandState, seat: int, action: ActionKind, amount: int) -> HandEvent:
    """Validate a betting decision (``Act``): the event it makes, or a ``RuleViolation``."""
    if s.phase == OVER:
        raise HandOver(hand_id=s.hand_id)
    i = s.index_of.get(seat)
    if i is None:
        raise SeatNotInHand(seat=seat)
    queue = s.queue
    if s.phase != BETTING or not queue or queue[0] != i:
        raise NotYourTurn(seat=seat, to_act=to_act(s))
    owed = s.highest - s.bet[i]
    # Compared by equality, in this order, as the ``match`` over the enum's values was.
    if action == _FOLD:
        if owed <= 0 and not s.rules.fold_when_check_free:
            raise FoldNotAllowed(seat=seat)
        return folded(seat)
    if action == _CHECK:
        if owed > 0:
            raise CannotCheck(seat=seat, to_call=to_call(s, i))
        return checked(seat)
    if action == _CALL:
        if owed <= 0:
            raise NothingToCall(seat=seat)
        stack = s.stack[i]
        call = owed if owed < stack else stack
        return called(seat, call, call == stack)
    if action == _BET_OR_RAISE:
        why = raise_block(s, i)
        if why is not None:
            raise RaiseNotAllowed(seat=seat, why=why)
        total = s.stack[i] + s.bet[i]
        if amount > total:
            raise NotEnoughChips(seat=seat, amount=amount, available=total)
        low, high = raise_bounds(s, i)
        if amount < low:
            raise RaiseBelowMinimum(amount=amount, minimum=low)
        if amount > high:
            raise RaiseAboveMaximum(amount=amount, maximum=high)
        return bet_placed(seat, amount, amount - s.bet[i], amount == total)
    assert_never(action)  # type: ignore[arg-type]  # a str that is no ActionKind value


def _index(s: HandState, seat: int) -> int:
    i = s.index_of.get(seat)
    if i is None:
        raise SeatNotInHand(seat=seat)
    return i


def _emit(s: HandState, out: list[HandEvent], event: HandEvent) -> None:
    out.append(event)
    _evolve(s, event)


def _advance(s: HandState, out: list[HandEvent]) -> None:
    """Every automatic event after a command: close rounds, deal, show down, pay."""
    if s.phase == SHOWDOWN:
        return
    while s.phase == BETTING:
        in_hand = s.n - s.folded.count(True) - s.mucked.count(True)
        if in_hand > 1 and s.queue:
            return
        returned = _uncalled(s)
        if returned is not None:
            _emit(s, out, returned)
        if (
            in_hand > 1
            and s.rules.profile is _PHH
            and not s.showdown_done
            and (s.street == 3 or _betting_over(s))
        ):
            # phh (pokerkit): cards are shown as soon as betting is over for good, before an
            # all-in runout; players send Show or Muck in turn.
            _emit(s, out, showdown_started(tuple(s.seats[i] for i in showdown.showdown_order(s))))
            return
        if in_hand == 1 or s.street == 3:
            for e in showdown.finish(s):
                _emit(s, out, e)
            return
        street = s.street + 1
        first = s.n * s.rules.hole_cards + len(s.board)
        cards = s.deck[first : first + _BOARD_SIZES[street - 1]]
        _emit(s, out, board_dealt(STREETS[street], cards))


def _betting_over(s: HandState) -> bool:
    """At most one player still in the hand has chips to bet: no more betting this hand."""
    able = 0
    for i in s.order_range:
        if not s.folded[i] and s.stack[i] and not s.protected[i]:
            able += 1
    return able <= 1


def _uncalled(s: HandState) -> UncalledBetReturned | None:
    """The part of the largest bet of the round nobody matched (returned, never raked)."""
    bets = s.bet
    top = max(bets)
    if top == 0:
        return None
    i = bets.index(top)
    second = sorted(bets)[-2]  # the largest bet of the others (the top one may be there again)
    if top > second:
        return uncalled_bet_returned(s.seats[i], top - second)
    return None


# -- queries -----------------------------------------------------------------------------------


def to_act(state: HandState) -> int | None:
    """The seat whose decision the hand waits for (a bet, or a phh show/muck), else None."""
    if state.phase == BETTING and state.queue:
        return state.seats[state.queue[0]]
    if state.phase == SHOWDOWN and state.showdown_queue:
        return state.seats[state.showdown_queue[0]]
    return None


def is_over(state: HandState) -> bool:
    return state.phase == OVER


def legal_actions(state: HandState, seat: int) -> LegalActions | None:
    """What ``seat`` may do now, or None when it is not their betting turn."""
    s = state
    i = s.index_of.get(seat)
    if i is None or s.phase != BETTING or not s.queue or s.queue[0] != i:
        return None
    owed = s.highest - s.bet[i]
    block = raise_block(s, i)
    low, high = raise_bounds(s, i) if block is None else (0, 0)
    return LegalActions(
        seat=seat,
        can_fold=owed > 0 or s.rules.fold_when_check_free,
        can_check=owed <= 0,
        to_call=to_call(s, i) if owed > 0 else 0,
        can_raise=block is None,
        min_raise_to=low,
        max_raise_to=high,
    )


def pots(state: HandState) -> tuple[PotView, ...]:
    """Main pot first, then side pots, counting the bets of the current round."""
    in_hand = [not f for f in state.folded]
    return tuple(
        PotView(amount=p.amount, eligible=tuple(state.seats[i] for i in p.eligible))
        for p in build_pots(state.live, state.dead, in_hand)
    )


def final_stacks(state: HandState) -> dict[int, int]:
    """Each seat's chips behind (the final stacks once the hand is over)."""
    return {seat: state.stack[i] for i, seat in enumerate(state.seats)}


def view(state: HandState, viewer: int | None) -> HandView:
    """The hand as ``viewer`` (a seat, or None for a spectator) may see it: hole cards only
    their own and those shown at showdown."""
    s = state
    players = tuple(
        PlayerView(
            seat=seat,
            player=s.players[i],
            stack=s.stack[i],
            bet=s.bet[i],
            folded=s.folded[i],
            all_in=not s.folded[i] and (s.stack[i] == 0 or s.protected[i]),
            hole=s.hole[i] if (seat == viewer or s.shown[i]) else None,
        )
        for i, seat in enumerate(s.seats)
    )
    return HandView(
        hand_id=s.hand_id,
        button=s.button,
        street=STREETS[s.street],
        board=tuple(s.board),
        players=players,
        pots=pots(s),
        to_act=to_act(s),
        legal=legal_actions(s, viewer) if viewer is not None else None,
        over=s.phase == OVER,
    )


def replay(setup: HandSetup, commands: Iterable[HandCommand]) -> tuple[HandState, list[HandEvent]]:
    """Start a hand and apply ``commands`` in turn: the state and every event."""
    events = start(setup)
    state = fold(events)
    for command in commands:
        new = decide(state, command)
        for e in new:
            _evolve(state, e)
        events.extend(new)
    return state, events

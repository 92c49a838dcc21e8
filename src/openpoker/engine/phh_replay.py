"""Replaying PHH hand histories through the hand engine (profile ``phh``), and writing
engine-played hands back as PHH.

``replay_history(hh)`` maps a ``engine.phh.HandHistory`` to a ``HandSetup`` under
``phh_rules`` and applies its actions as commands; it returns the finishing stacks in the file's
player order and minor units, or raises the engine's ``EngineError``.

Mapping (PHH spec, pokerkit 0.7.7):

- Player order is SB, BB, ..., button: PHH player ``j`` sits at seat ``j`` with the button on
  the last seat. Heads-up the order is BB, button and the antes and blinds are read reversed
  (player 0 posts ``blinds_or_straddles[1]``); player 0 sits at seat 1, the button at seat 0.
- ``blinds_or_straddles``: positive entries are live blinds or straddles; a negative entry is a
  new player's live post that does not move the first action (pokerkit's reading, which the
  conformance outcomes follow; Ongame itself charged those as dead money).
- ``antes`` are each player's dead money (pokerkit puts them in the main pot, never in a bet);
  an engine hand's dead small blind (missed blinds) is written there. ``ante_trimming_status``
  is ``Rules.ante_trimming``.
- Cards: the engine deals from a deck, so the deck is built from the file: hole cards in the
  engine's dealing order, then the board. Unknown cards (``??``) are taken from a card shown
  later (``sm``) or else filled with unused cards; a player whose cards were never shown mucks
  at the showdown, so filler cards never decide a pot.
- Actions: ``f``, ``cc`` (check or call), ``cbr`` (raise to) become ``Act`` commands; dealing
  lines are checked against the engine's own deal; at the showdown each player in the
  engine's order shows if the file ever showed their cards, and mucks otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from typing import cast

from openpoker.engine import hand as engine_hand
from openpoker.engine import phh
from openpoker.engine.cards import SHORT_DECK, STANDARD_DECK, Card
from openpoker.engine.errors import EngineError
from openpoker.engine.hand import HandState, apply_act, apply_showdown, begin, fold
from openpoker.engine.hand_events import (
    ActionKind,
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
)
from openpoker.engine.hand_setup import HandSetup, Post, PostKind, hand_setup, post, seat_setup
from openpoker.engine.phh import (
    Action as PhhAction,
)
from openpoker.engine.phh import (
    CheckCall,
    CompleteBetRaise,
    DealBoard,
    DealHole,
    Fold,
    HandHistory,
    NoOperation,
    ShowMuck,
)
from openpoker.engine.rules import Game, RakeRules, Rules, Stakes, Structure, phh_rules

# Enum members bound once: a member look-up on an Enum class costs a ~10x attribute look-up,
# and these are read on every action.
_ANTE = PostKind.ANTE
_SMALL_BLIND = PostKind.SMALL_BLIND
_BIG_BLIND = PostKind.BIG_BLIND
_LIVE_BIG_BLIND = PostKind.LIVE_BIG_BLIND
_DEAD_SMALL_BLIND = PostKind.DEAD_SMALL_BLIND
_FOLD = ActionKind.FOLD
_CHECK = ActionKind.CHECK
_CALL = ActionKind.CALL
_BET_OR_RAISE = ActionKind.BET_OR_RAISE
_FIXED_LIMIT = Structure.FIXED_LIMIT
_HOLDEM = Game.HOLDEM
_NO_LIMIT = Structure.NO_LIMIT
_OMAHA = Game.OMAHA
_POT_LIMIT = Structure.POT_LIMIT
_SIX_PLUS = Game.SIX_PLUS

_VARIANTS: dict[str, tuple[Game, Structure]] = {
    "NT": (_HOLDEM, _NO_LIMIT),
    "FT": (_HOLDEM, _FIXED_LIMIT),
    "PO": (_OMAHA, _POT_LIMIT),
    "NS": (_SIX_PLUS, _NO_LIMIT),
}


class UnsupportedPhh(EngineError):
    """A hand history the engine cannot replay (a variant or action outside its games)."""

    reason = "UNSUPPORTED_PHH"

    def __init__(self, *, problem: str) -> None:
        super().__init__(f"cannot replay this hand history: {problem}", problem=problem)
        self.problem = problem


class HistoryMismatch(EngineError):
    """The file disagrees with the engine: a dealt card, a player out of turn, an early end."""

    reason = "PHH_MISMATCH"

    def __init__(self, *, index: int, problem: str) -> None:
        super().__init__(f"action {index}: {problem}", index=index, problem=problem)
        self.index = index
        self.problem = problem


# Decks keyed by (rank, suit) in canonical order: tuple hashing is far cheaper than the
# dataclass's own hash, and a copy with the used cards popped leaves the spare cards in order.
_STANDARD_CODES: dict[tuple[int, str], Card] = {(c.rank, c.suit): c for c in STANDARD_DECK}
_SHORT_CODES: dict[tuple[int, str], Card] = {(c.rank, c.suit): c for c in SHORT_DECK}


def rules_for(hh: HandHistory) -> Rules:
    # Positional arguments: the cache's key is cheaper to build than with keywords.
    return _rules(
        hh.variant,
        hh.blinds_or_straddles,
        hh.small_bet,
        hh.big_bet,
        hh.min_bet,
        len(hh.starting_stacks),
        bool(hh.ante_trimming_status),
        hh.scale,
    )


@lru_cache(maxsize=256)
def _rules(  # noqa: PLR0917 (positional: a cheaper cache key)
    variant: str,
    blinds_or_straddles: tuple[int, ...] | None,
    small_bet: int | None,
    big_bet: int | None,
    min_bet: int | None,
    n: int,
    ante_trimming: bool,
    scale: int,
) -> Rules:
    try:
        game, structure = _VARIANTS[variant]
    except KeyError:
        raise UnsupportedPhh(problem=f"variant {variant!r} (NT, FT, PO, NS are played)") from None
    blinds = [abs(b) for b in blinds_or_straddles or ()]
    positive = sorted(b for b in blinds_or_straddles or () if b > 0)
    big = positive[-1] if positive else max(blinds, default=0)
    small = positive[-2] if len(positive) > 1 else 0
    if structure is _FIXED_LIMIT:
        if not small_bet or not big_bet:
            raise UnsupportedPhh(problem="fixed limit needs small_bet and big_bet")
        stakes = Stakes(small_blind=small, big_blind=big, small_bet=small_bet, big_bet=big_bet)
    else:
        stakes = Stakes(small_blind=small, big_blind=big, small_bet=min_bet or big)
    rules = phh_rules(game, structure, stakes, seats=min(max(n, 2), 10))
    return replace(rules, ante_trimming=ante_trimming, chip_unit=scale)


class _Plan:
    """A history's hand setup and seating (a plain class: compiled, a dataclass's generated
    ``__init__`` stays interpreted, and one is built per replayed hand)."""

    __slots__ = ("seat_of", "setup", "shows")

    def __init__(self, setup: HandSetup, seat_of: tuple[int, ...], shows: frozenset[int]) -> None:
        self.setup = setup
        self.seat_of = seat_of  # PHH player index -> seat
        self.shows = shows  # players whose cards the file shows


def plan(hh: HandHistory, hand_id: str = "phh", *, rake: RakeRules | None = None) -> _Plan:
    """The hand setup of a history, and which players show their cards.

    ``rake``: charge this rake (PHH has no rake rule; pokerkit takes it as a replay option),
    e.g. to check that a raked table hand exported as PHH replays to its recorded stacks."""
    rules = rules_for(hh)
    if rake is not None:
        rules = replace(rules, rake=rake)
    n = len(hh.starting_stacks)
    if n < 2:
        raise UnsupportedPhh(problem=f"{n} player(s)")
    heads_up = n == 2
    seat_of = (1, 0) if heads_up else tuple(range(n))
    button = 0 if heads_up else n - 1
    names = hh.players or tuple(f"p{j + 1}" for j in range(n))
    stacks = hh.starting_stacks
    seats = tuple([seat_setup(seat_of[j], names[j], stacks[j]) for j in range(n)])
    antes = hh.antes or (0,) * n
    blinds = hh.blinds_or_straddles or (0,) * n
    if heads_up:
        antes = antes[1::-1]
        blinds = blinds[1::-1]
    posts: list[Post] = []
    for j in range(n):
        ante = antes[j]
        if ante:
            posts.append(post(seat_of[j], _ANTE, ante))
    top = max(blinds, default=0)
    for j in range(n):
        b = blinds[j]
        if b > 0:
            posts.append(post(seat_of[j], _BIG_BLIND if b == top else _SMALL_BLIND, b))
        elif b < 0:
            posts.append(post(seat_of[j], _LIVE_BIG_BLIND, -b))
    # Cards: known hole cards (dealt or shown later), then the board.
    k = rules.hole_cards
    hole: list[list[Card | None]] = [[None] * k for _ in range(n)]
    board: list[Card] = []
    shows: set[int] = set()
    for action in hh.actions:
        action_type = type(action)  # type tests: a match over class patterns is slow in this loop
        if action_type is DealHole:
            assert isinstance(action, DealHole)
            if _known(action.cards):
                _merge(hole, action.player, action.cards, k)
        elif action_type is DealBoard:
            assert isinstance(action, DealBoard)
            for c in action.cards:
                if c is None:
                    raise UnsupportedPhh(problem="an unknown board card")
                board.append(c)
        elif action_type is ShowMuck:
            assert isinstance(action, ShowMuck)
            cards = action.cards
            if cards and _known(cards):
                _merge(hole, action.player, cards, k)
                shows.add(action.player)
    unused = (_SHORT_CODES if rules.game is _SIX_PLUS else _STANDARD_CODES).copy()
    pop = unused.pop
    for h in hole:
        for c in h:
            if c is not None:
                pop((c.rank, c.suit), None)
    for c in board:
        pop((c.rank, c.suit), None)
    spare = iter(unused.values())
    for h in hole:
        for r in range(k):
            if h[r] is None:
                h[r] = next(spare)
    order = range(n) if n > 2 else (1, 0)  # internal index == PHH player index
    # Every hole card is known now (filled above).
    deck = cast("list[Card]", [hole[j][r] for r in range(k) for j in order])
    deck += board
    deck += spare
    setup = hand_setup(hand_id, rules, seats, button, tuple(posts), tuple(deck), "", None)
    return _Plan(setup, seat_of, frozenset(shows))


def _known(cards: Sequence[Card | None]) -> bool:
    """Whether any card is known (a loop: ``any`` over a generator costs more per hand)."""
    for c in cards:  # noqa: SIM110
        if c is not None:
            return True
    return False


def _merge(hole: list[list[Card | None]], p: int, cards: Sequence[Card | None], k: int) -> None:
    if p >= len(hole) or len(cards) > k:
        raise UnsupportedPhh(problem=f"player p{p + 1} holds {len(cards)} cards")
    for r, c in enumerate(cards):
        if c is not None:
            hole[p][r] = c


def replay_history(hh: HandHistory, *, repair: bool = True) -> tuple[int, ...]:
    """Finishing stacks, in the file's player order and minor units (see ``replay_events``)."""
    state, _ = replay_events(hh, repair=repair)
    if not engine_hand.is_over(state):
        raise HistoryMismatch(index=len(hh.actions), problem="the actions end before the hand does")
    # PHH player j is the engine's internal player j (clockwise from left of the button).
    return tuple(state.stack)


def replay_events(
    hh: HandHistory, hand_id: str = "phh", *, repair: bool = True, rake: RakeRules | None = None
) -> tuple[HandState, list[HandEvent]]:
    """The engine's state and events after every action of ``hh``.

    ``repair``: as pokerkit's replay does, a player the file skips (it names a later player
    while an earlier one is to act) checks if that is free and folds otherwise. Without it the
    skip is an error (``NotYourTurn``).
    """
    p = plan(hh, hand_id, rake=rake)
    state, events = begin(p.setup)
    seat_of = p.seat_of
    # Plain type tests rather than ``match``: this loop runs for every action of every hand.
    showdown = engine_hand.SHOWDOWN
    betting = engine_hand.BETTING
    for index, action in enumerate(hh.actions):
        kind = type(action)
        if kind is DealHole or kind is DealBoard or kind is ShowMuck or kind is NoOperation:
            continue  # cards come from the deck built from the file; shows are settled below
        if state.phase == showdown:
            _showdown(state, events, p.shows, seat_of)
        if kind is Fold or kind is CheckCall or kind is CompleteBetRaise:
            assert isinstance(action, Fold | CheckCall | CompleteBetRaise)
            seat = seat_of[action.player]
        else:
            raise UnsupportedPhh(problem=f"action {index} ({kind.__name__})")
        queue = state.queue
        if repair and queue and state.seats[queue[0]] != seat and state.phase == betting:
            _repair(state, events, seat)
        # ``apply_act`` is ``apply`` of the ``Act`` command without building it.
        if kind is Fold:
            events += apply_act(state, seat, _FOLD)
        elif kind is CheckCall:
            check = state.highest <= state.bet[state.index_of[seat]]
            events += apply_act(state, seat, _CHECK if check else _CALL)
        else:
            assert isinstance(action, CompleteBetRaise)
            events += apply_act(state, seat, _BET_OR_RAISE, action.amount)
    if state.phase == showdown:
        _showdown(state, events, p.shows, seat_of)
    return state, events


def _repair(state: HandState, events: list[HandEvent], seat: int) -> None:
    while state.phase == engine_hand.BETTING and state.queue and state.seats[state.queue[0]] != seat:
        skipped = state.seats[state.queue[0]]
        i = state.queue[0]
        if seat not in [state.seats[j] for j in state.queue]:
            return  # not a skip: let the engine report the action out of turn
        free = state.highest <= state.bet[i]
        events += apply_act(state, skipped, _CHECK if free else _FOLD)


def _showdown(
    state: HandState, events: list[HandEvent], shows: frozenset[int], seat_of: Sequence[int]
) -> None:
    player_of = {seat: j for j, seat in enumerate(seat_of)}
    while state.phase == engine_hand.SHOWDOWN:
        seat = engine_hand.to_act(state)
        assert seat is not None
        i = state.index_of[seat]
        live = [j for j in range(state.n) if not state.folded[j] and not state.mucked[j]]
        if player_of[seat] in shows or live == [i]:
            events += apply_showdown(state, seat, True)
        else:
            events += apply_showdown(state, seat, False)


# -- writing engine hands as PHH ----------------------------------------------------------------


def history_from_events(events: Sequence[HandEvent]) -> HandHistory:
    """A PHH hand history of an engine hand played under the phh profile (NT, FT, PO, NS).

    Players are written in PHH order (SB ... button; heads-up BB, button), every hole card is
    known, and the showdown is written as ``sm`` lines in the engine's showdown order. Forced
    bets: live blinds and straddles are positive ``blinds_or_straddles``, a live big blind posted
    out of turn (a new or returning player) a negative one (pokerkit's post bet: it does not move
    the first action), and dead money (antes, a dead small blind owed for missed blinds) is the
    player's entry in ``antes``, which PHH and pokerkit put in the pot and not in the bet.
    """
    first = events[0]
    if not isinstance(first, HandStarted):
        raise UnsupportedPhh(problem="events must start with HandStarted")
    state = fold([first])
    rules = first.rules
    variant = next((code for code, gs in _VARIANTS.items() if gs == (rules.game, rules.structure)), None)
    if variant is None:
        raise UnsupportedPhh(problem=f"no PHH variant for {rules.game} {rules.structure}")
    n = state.n
    heads_up = n == 2
    if rules.ante_trimming and any(
        isinstance(e, ForcedBetPosted) and e.kind is _DEAD_SMALL_BLIND for e in events
    ):
        raise UnsupportedPhh(problem="a dead small blind under ante trimming (PHH would trim it)")
    # PHH player j is internal index j (clockwise from the first seat left of the button).
    seat_to_player = {seat: j for j, seat in enumerate(state.seats)}
    antes = [0] * n
    blinds = [0] * n
    actions: list[PhhAction] = []
    hole: dict[int, tuple[Card, ...]] = {}
    finishing: dict[int, int] = {}
    for e in events[1:]:
        match e:
            case ForcedBetPosted(seat=seat, kind=kind, amount=amount):
                j = seat_to_player[seat]
                if kind is _ANTE or kind is _DEAD_SMALL_BLIND:
                    antes[j] += amount  # dead money: PHH's antes are each player's dead post
                elif kind is _LIVE_BIG_BLIND:
                    blinds[j] -= amount
                else:
                    blinds[j] += amount
            case HoleCardsDealt(seat=seat, cards=cards):
                hole[seat_to_player[seat]] = cards
            case Folded(seat=seat):
                actions.append(phh.Fold(player=seat_to_player[seat]))
            case Checked(seat=seat) | Called(seat=seat):
                actions.append(phh.CheckCall(player=seat_to_player[seat]))
            case BetPlaced(seat=seat, to=to):
                actions.append(phh.CompleteBetRaise(player=seat_to_player[seat], amount=to))
            case BoardDealt(cards=cards):
                actions.append(phh.DealBoard(cards=cards))
            case CardsShown(seat=seat, cards=cards):
                actions.append(phh.ShowMuck(player=seat_to_player[seat], cards=cards))
            case CardsMucked(seat=seat):
                actions.append(phh.ShowMuck(player=seat_to_player[seat], cards=None))
            case HandEnded(stacks=stacks):
                finishing = {seat_to_player[s.seat]: s.amount for s in stacks}
            case _:
                pass
    if heads_up:  # PHH reverses antes and blinds heads-up
        antes.reverse()
        blinds.reverse()
    deals = [phh.DealHole(player=j, cards=hole[j]) for j in range(n)]
    stakes = rules.stakes
    fixed = rules.structure is _FIXED_LIMIT
    return HandHistory(
        variant=variant,
        antes=tuple(antes),
        blinds_or_straddles=tuple(blinds),
        small_bet=stakes.small_bet if fixed else None,
        big_bet=stakes.big_bet if fixed else None,
        min_bet=None if fixed else stakes.small_bet,
        starting_stacks=state.start_stacks,
        actions=tuple(deals + actions),
        players=state.players,
        finishing_stacks=tuple(finishing[j] for j in range(n)) if finishing else None,
        ante_trimming_status=rules.ante_trimming,
        hand=first.hand_id,
    )

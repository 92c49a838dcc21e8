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
button; a hand that cannot win is mucked when its player's auto-muck is on (``set_auto_muck``,
the table's per-player choice; ``Rules.auto_muck`` by default); all-in hands are always shown).
``phh`` plays as pokerkit replays hand histories, including its re-opening rule and an explicit
showdown: each player in showdown order sends ``Show`` or ``Muck``, as PHH ``sm`` actions do.

This module starts hands and is where callers find the whole hand engine; the parts live in
``engine.hand_state`` (the state), ``engine.hand_evolve`` (evolve and fold),
``engine.hand_decide`` (decide and the automatic follow-on), ``engine.hand_queries`` (queries)
and ``engine.hand_view`` (the views). Betting rules live in ``engine.betting``, pots in
``engine.pots``, payouts in ``engine.showdown``.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter

from openpoker.engine.betting import LegalActions
from openpoker.engine.cards import check_deck
from openpoker.engine.errors import InvalidHandSetup
from openpoker.engine.hand_decide import advance, apply, apply_act, apply_showdown, decide
from openpoker.engine.hand_events import (
    Act,
    ActionKind,
    HandCommand,
    HandEvent,
    Muck,
    ProtectAllIn,
    Show,
    forced_bet_posted,
    hand_started,
    hole_cards_dealt,
)
from openpoker.engine.hand_evolve import (
    begin_preflop,
    evolve,
    evolve_in_place,
    fold,
    on_forced_bet_posted,
    set_auto_muck,
)
from openpoker.engine.hand_queries import final_stacks, is_over, legal_actions, pots, to_act, view
from openpoker.engine.hand_setup import HandSetup, PostKind
from openpoker.engine.hand_state import BETTING, OVER, SHOWDOWN, HandState, initial_state
from openpoker.engine.hand_view import HandView, PlayerView, PotView

# Bound once: a member look-up on an Enum class costs a ~10x attribute look-up.
_ANTE = PostKind.ANTE

# Field readers in C: cheaper than a lambda or a comprehension for the per-hand set-up.
_SEAT = attrgetter("seat")

__all__ = [
    "BETTING",
    "OVER",
    "SHOWDOWN",
    "Act",
    "ActionKind",
    "HandCommand",
    "HandEvent",
    "HandState",
    "HandView",
    "LegalActions",
    "Muck",
    "PlayerView",
    "PotView",
    "ProtectAllIn",
    "Show",
    "apply",
    "apply_act",
    "apply_showdown",
    "begin",
    "decide",
    "evolve",
    "final_stacks",
    "fold",
    "is_over",
    "legal_actions",
    "pots",
    "replay",
    "set_auto_muck",
    "start",
    "to_act",
    "view",
]


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
    deck = setup.deck
    check_deck(rules, deck)  # the game's whole deck, so it holds every card any hand deals
    started = hand_started(setup.hand_id, rules, setup.button, seats, setup.deck, setup.commitment)
    events: list[HandEvent] = [started]
    state = initial_state(started)
    if setup.auto_muck is not None:
        set_auto_muck(state, setup.auto_muck)
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
        on_forced_bet_posted(state, event)
        events.append(event)
    # Hole cards: one at a time clockwise from the first seat left of the button (index 0);
    # heads-up the dealer (index 1, the button) gets the first card.
    order = list(range(n)) if n > 2 else [1, 0]
    k = rules.hole_cards
    # (What ``hand_evolve`` does for each of these events, inline: betting opens after the last.)
    hole, state_seats = state.hole, state.seats
    for position, i in enumerate(order):
        cards = deck[position : k * n : n]  # every n-th card from this player's first
        events.append(hole_cards_dealt(state_seats[i], cards))
        hole[i] = cards
    begin_preflop(state)
    advance(state, events)  # everyone may be all-in from the blinds already
    return state, events


def _ante_cap(setup: HandSetup, state: HandState) -> int:
    """phh ante trimming: nobody antes more than the second largest ante can match."""
    antes = [0] * state.n
    for p in setup.posts:
        if p.kind is _ANTE and p.seat in state.index_of:
            i = state.index_of[p.seat]
            antes[i] = min(p.amount, state.stack[i])
    return sorted(antes)[-2]


def replay(setup: HandSetup, commands: Iterable[HandCommand]) -> tuple[HandState, list[HandEvent]]:
    """Start a hand and apply ``commands`` in turn: the state and every event."""
    events = start(setup)
    state = fold(events)
    for command in commands:
        new = decide(state, command)
        for e in new:
            evolve_in_place(state, e)
        events.extend(new)
    return state, events

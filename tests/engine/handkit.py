"""Given / when / then helpers for hand tests: build a setup from readable cards, play commands.

``given(setup, *commands)`` is the state after the hand's opening events and ``commands``;
``when(state, command)`` is the events ``decide`` returns (the state is left as it was).
"""

from __future__ import annotations

from openpoker.engine import hand as H
from openpoker.engine.cards import SHORT_DECK, STANDARD_DECK, Card, parse_cards
from openpoker.engine.hand_events import Act, ActionKind, HandCommand, HandEvent
from openpoker.engine.hand_setup import HandSetup, Post, PostKind, SeatSetup
from openpoker.engine.rules import Game, Rules


def deck_for(
    rules: Rules, seats: list[int], button: int, hole: dict[int, str], board: str = ""
) -> tuple[Card, ...]:
    """A deck that deals ``hole`` (seat -> cards) and then ``board`` in the engine's order:
    one card at a time clockwise from the first seat left of the button (heads-up the dealer
    first). Seats not in ``hole`` and the rest of the deck get unused cards."""
    full = SHORT_DECK if rules.game is Game.SIX_PLUS else STANDARD_DECK
    wanted = {s: list(parse_cards(c)) for s, c in hole.items()}
    board_cards = list(parse_cards(board))
    used = {c for cs in wanted.values() for c in cs} | set(board_cards)
    spare = [c for c in reversed(full) if c not in used]
    order = sorted(seats, key=lambda s: (s - button - 1) % 100)
    if len(order) == 2:
        order = [order[1], order[0]]
    k = rules.hole_cards
    for s in order:
        cards = wanted.setdefault(s, [])
        while len(cards) < k:
            cards.append(spare.pop(0))
    deck = [wanted[s][r] for r in range(k) for s in order]
    deck += board_cards
    deck += spare
    return tuple(deck)


def setup(
    rules: Rules,
    stacks: dict[int, int],
    *,
    button: int,
    posts: list[tuple[int, PostKind, int]],
    hole: dict[int, str] | None = None,
    board: str = "",
) -> HandSetup:
    seats = sorted(stacks)
    return HandSetup(
        hand_id="t1",
        rules=rules,
        seats=tuple(SeatSetup(seat=s, player=f"player{s}", stack=stacks[s]) for s in seats),
        button=button,
        posts=tuple(Post(seat=s, kind=k, amount=a) for s, k, a in posts),
        deck=deck_for(rules, seats, button, hole or {}, board),
    )


def blinds(sb: int, bb: int, small: int, big: int) -> list[tuple[int, PostKind, int]]:
    return [(sb, PostKind.SMALL_BLIND, small), (bb, PostKind.BIG_BLIND, big)]


def given(hand_setup: HandSetup, *commands: HandCommand) -> H.HandState:
    state = H.fold(H.start(hand_setup))
    for command in commands:
        for event in H.decide(state, command):
            H.evolve(state, event)
    return state


def when(state: H.HandState, command: HandCommand) -> list[HandEvent]:
    return H.decide(state, command)


def play(state: H.HandState, *commands: HandCommand) -> list[HandEvent]:
    """Apply commands to ``state`` (mutating it) and return every event."""
    out: list[HandEvent] = []
    for command in commands:
        for event in H.decide(state, command):
            H.evolve(state, event)
            out.append(event)
    return out


def bet(seat: int, to: int) -> Act:
    return Act(seat=seat, action=ActionKind.BET_OR_RAISE, amount=to)


def call(seat: int) -> Act:
    return Act(seat=seat, action=ActionKind.CALL)


def check(seat: int) -> Act:
    return Act(seat=seat, action=ActionKind.CHECK)


def fold(seat: int) -> Act:
    return Act(seat=seat, action=ActionKind.FOLD)

"""A hand is dealt only from its game's deck: the 36 cards from six up for Six Plus (seed 002),
the 52 otherwise, each once. Anything else is ``InvalidDeck`` before any event, at the hand
engine and at the table."""

from __future__ import annotations

from dataclasses import replace

import pytest

from openpoker.engine import hand
from openpoker.engine import table as tbl
from openpoker.engine.cards import SHORT_DECK, STANDARD_DECK, Card, check_deck, parse_card
from openpoker.engine.errors import InvalidDeck, InvalidHandSetup
from openpoker.engine.hand_events import HoleCardsDealt
from openpoker.engine.hand_setup import HandSetup
from openpoker.engine.rules import Game, Rules, Stakes, Structure
from openpoker.engine.table_events import OpenTable, SitDown, StartHand
from tests.engine.handkit import blinds, setup

SIX_PLUS = Rules(game=Game.SIX_PLUS, structure=Structure.NO_LIMIT, stakes=Stakes.blinds(1, 2), seats=6)
HOLDEM = replace(SIX_PLUS, game=Game.HOLDEM)
OMAHA = replace(SIX_PLUS, game=Game.OMAHA, structure=Structure.POT_LIMIT)


def with_card(deck: tuple[Card, ...], position: int, card: str) -> tuple[Card, ...]:
    out = list(deck)
    out[position] = parse_card(card)
    return tuple(out)


def three_handed(rules: Rules, deck: tuple[Card, ...]) -> HandSetup:
    return replace(setup(rules, {0: 100, 1: 100, 2: 100}, button=2, posts=blinds(0, 1, 1, 2)), deck=deck)


def refused(rules: Rules, deck: tuple[Card, ...]) -> InvalidDeck:
    with pytest.raises(InvalidDeck) as caught:
        hand.start(three_handed(rules, deck))
    return caught.value


@pytest.mark.parametrize("position", [0, 5, 35])  # first hole card, the flop, never dealt
def test_a_six_plus_deck_holding_a_two_is_refused_wherever_the_two_is(position: int) -> None:
    err = refused(SIX_PLUS, with_card(SHORT_DECK, position, "2h"))
    assert (err.reason, err.game, err.problem, err.card) == ("INVALID_DECK", "six_plus", "not_in_game", "2h")
    assert isinstance(err, InvalidHandSetup)  # callers catching bad setups catch it too


def test_a_six_plus_hand_refuses_the_52_card_deck() -> None:
    err = refused(SIX_PLUS, STANDARD_DECK)
    assert (err.problem, err.size, err.card) == ("size", 52, "")


@pytest.mark.parametrize("rules", [HOLDEM, OMAHA], ids=["holdem", "omaha"])
def test_a_52_card_deck_with_a_duplicate_or_a_missing_card_is_refused(rules: Rules) -> None:
    duplicate = with_card(STANDARD_DECK, 51, "Kd")  # Kd twice, As missing, still 52 cards
    err = refused(rules, duplicate)
    assert (err.problem, err.card) == ("duplicate", "Kd")
    err = refused(rules, STANDARD_DECK[1:])
    assert (err.problem, err.size) == ("size", 51)
    err = refused(rules, SHORT_DECK)
    assert (err.problem, err.size) == ("size", 36)


@pytest.mark.parametrize(
    ("rules", "deck"),
    [(SIX_PLUS, SHORT_DECK[::-1]), (HOLDEM, STANDARD_DECK[::-1]), (OMAHA, STANDARD_DECK)],
    ids=["six_plus", "holdem", "omaha"],
)
def test_the_games_own_deck_is_dealt(rules: Rules, deck: tuple[Card, ...]) -> None:
    check_deck(rules, deck)
    events = hand.start(three_handed(rules, deck))
    dealt = [c for e in events if isinstance(e, HoleCardsDealt) for c in e.cards]
    assert len(dealt) == 3 * rules.hole_cards
    assert dealt[0] == deck[0]


def test_the_table_refuses_a_52_card_deck_at_a_six_plus_table_before_any_event() -> None:
    state = tbl.fold(tbl.decide(None, OpenTable(table_id="t1", rules=SIX_PLUS)))
    for seat in (0, 1):
        for e in tbl.decide(state, SitDown(seat=seat, player=f"p{seat}", buy_in=100)):
            tbl.evolve(state, e)
    before = state.snapshot()
    with pytest.raises(InvalidDeck) as caught:
        tbl.decide(state, StartHand(hand_id="h1", deck=STANDARD_DECK))
    assert caught.value.problem == "size"
    assert state.snapshot() == before
    assert state.hand is None
    events = tbl.decide(state, StartHand(hand_id="h1", deck=SHORT_DECK))
    assert any(isinstance(e, HoleCardsDealt) for e in events)

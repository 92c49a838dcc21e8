"""The engine's fast event builders make exactly the objects the dataclass constructors make."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

import pytest

from openpoker.engine import hand_events as E
from openpoker.engine import hand_setup as S
from openpoker.engine.cards import STANDARD_DECK, parse_cards
from openpoker.engine.hand_setup import PostKind
from openpoker.engine.rules import Game, Stakes, Structure, phh_rules

_CARDS = parse_cards("AsKd")
_PAYOUT = (E.SeatAmount(seat=1, amount=30), E.SeatAmount(seat=4, amount=0))

# builder, class, field values (in field order); values differ from field to field so that
# a builder writing one field's value into another slot is caught.
CASES: list[tuple[Callable[..., Any], type, tuple[Any, ...]]] = [
    (E.seat_amount, E.SeatAmount, (3, 250)),
    (
        E.hand_started,
        E.HandStarted,
        (
            "h-9",
            phh_rules(Game.OMAHA, Structure.POT_LIMIT, Stakes.blinds(1, 2)),
            4,
            (S.SeatSetup(seat=4, player="a", stack=100), S.SeatSetup(seat=6, player="b", stack=90)),
            STANDARD_DECK,
            "beef",
        ),
    ),
    (E.forced_bet_posted, E.ForcedBetPosted, (2, PostKind.BIG_BLIND, 40, True)),
    (E.hole_cards_dealt, E.HoleCardsDealt, (5, _CARDS)),
    (E.folded, E.Folded, (7,)),
    (E.checked, E.Checked, (1,)),
    (E.called, E.Called, (4, 35, False)),
    (E.bet_placed, E.BetPlaced, (6, 120, 100, True)),
    (E.uncalled_bet_returned, E.UncalledBetReturned, (8, 55)),
    (E.board_dealt, E.BoardDealt, (E.Street.FLOP, _CARDS + parse_cards("2c"))),
    (E.showdown_started, E.ShowdownStarted, ((4, 1, 2),)),
    (E.cards_shown, E.CardsShown, (2, _CARDS, "high card, ace")),
    (E.cards_mucked, E.CardsMucked, (9,)),
    (E.pot_awarded, E.PotAwarded, (1, 300, 15, (1, 4), _PAYOUT[:1])),
    (E.hand_ended, E.HandEnded, ("h-7", _PAYOUT, _PAYOUT[::-1], 15)),
    (S.seat_setup, S.SeatSetup, (3, "ann", 500)),
    (S.post, S.Post, (1, PostKind.SMALL_BLIND, 5)),
    (
        S.hand_setup,
        S.HandSetup,
        (
            "h-8",
            phh_rules(Game.HOLDEM, Structure.NO_LIMIT, Stakes.blinds(5, 10)),
            (S.SeatSetup(seat=1, player="a", stack=100), S.SeatSetup(seat=2, player="b", stack=90)),
            2,
            (S.Post(seat=1, kind=PostKind.SMALL_BLIND, amount=5),),
            STANDARD_DECK,
            "c0ffee",
            (2,),
        ),
    ),
]


@pytest.mark.parametrize(("build", "cls", "values"), CASES, ids=[c[1].__name__ for c in CASES])
def test_builder_equals_constructor(build: Callable[..., Any], cls: type, values: tuple[Any, ...]) -> None:
    names = [f.name for f in dataclasses.fields(cls)]
    assert list(inspect.signature(build).parameters) == names
    fast = build(*values)
    slow = cls(**dict(zip(names, values, strict=True)))
    assert type(fast) is cls
    assert fast == slow
    assert hash(fast) == hash(slow)
    assert repr(fast) == repr(slow)
    assert tuple(getattr(fast, name) for name in names) == values
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(fast, names[0], values[0])


def test_every_builder_is_checked() -> None:
    builders = {
        obj
        for module in (E, S)
        for name, obj in vars(module).items()
        # Compiled by mypyc, a function is a builtin: count both kinds.
        if (inspect.isfunction(obj) or inspect.isbuiltin(obj))
        and obj.__module__ == module.__name__
        and not name.startswith("_")
    }
    assert builders == {c[0] for c in CASES}

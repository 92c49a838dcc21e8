"""The seed documents' worked examples, played through the hand engine (profile ``seeds``).

Seats in these tests: the button on seat 0, then clockwise seat 1 (small blind), seat 2 (big
blind), seat 3 (first to act pre-flop), ...
"""

from __future__ import annotations

from dataclasses import replace

import pokerkit
import pytest

from openpoker.engine import hand as H
from openpoker.engine import phh
from openpoker.engine.errors import RaiseAboveMaximum, RaiseBelowMinimum, RaiseNotAllowed
from openpoker.engine.hand_events import (
    BoardDealt,
    CardsMucked,
    CardsShown,
    HandEnded,
    HoleCardsDealt,
    PotAwarded,
    SeatAmount,
    ShowdownStarted,
    Street,
)
from openpoker.engine.hand_setup import PostKind
from openpoker.engine.phh_replay import history_from_events
from openpoker.engine.rules import Game, Rules, Stakes, Structure
from tests.engine.handkit import bet, blinds, call, check, fold, given, play, setup, when

FL_2_4 = Rules(game=Game.HOLDEM, structure=Structure.FIXED_LIMIT, stakes=Stakes.fixed_limit(2, 4))


def sample_hand(rules: Rules) -> H.HandState:
    """Seed 003 "Sample hand": Alice deals, Bob posts $1, Carol $2, Ted folds, ..."""
    alice, bob, carol, ted = 0, 1, 2, 3
    hand = setup(
        rules,
        {alice: 100, bob: 100, carol: 100, ted: 100},
        button=alice,
        posts=blinds(bob, carol, 1, 2),
        hole={alice: "Ac7c", bob: "Qs9h", carol: "KsJh"},
        board="9cKc3h5s9d",
    )
    return given(
        hand,
        fold(ted),
        call(alice),
        call(bob),
        check(carol),
        check(bob),  # flop 9c Kc 3h
        bet(carol, 2),
        bet(alice, 4),
        call(bob),
        call(carol),
        check(bob),  # turn 5s
        check(carol),
        check(alice),
        bet(bob, 4),  # river 9d
        call(carol),
    )


def test_seed_003_sample_hand_bob_wins_the_26_pot_and_carol_mucks() -> None:
    state = sample_hand(FL_2_4)
    events = when(state, fold(0))  # Alice folds her missed flush draw
    assert events[1:] == [
        ShowdownStarted(order=(1, 2)),  # Bob bet the river: he shows first
        CardsShown(seat=1, cards=state.hole[0], description="three of a kind, nines"),
        CardsMucked(seat=2),  # Carol's two pair cannot win: auto-muck (seed 000)
        PotAwarded(index=0, amount=26, rake=0, eligible=(1, 2), winners=(SeatAmount(seat=1, amount=26),)),
        HandEnded(
            hand_id="t1",
            stacks=(
                SeatAmount(seat=0, amount=94),
                SeatAmount(seat=1, amount=116),
                SeatAmount(seat=2, amount=90),
                SeatAmount(seat=3, amount=100),
            ),
            payouts=(
                SeatAmount(seat=0, amount=0),
                SeatAmount(seat=1, amount=26),
                SeatAmount(seat=2, amount=0),
                SeatAmount(seat=3, amount=0),
            ),
            rake=0,
        ),
    ]


def test_seed_003_sample_hand_without_auto_muck_carol_shows_two_pair() -> None:
    state = sample_hand(replace(FL_2_4, auto_muck=False))
    events = when(state, fold(0))
    shown = [e for e in events if isinstance(e, CardsShown)]
    assert [(e.seat, e.description) for e in shown] == [
        (1, "three of a kind, nines"),
        (2, "two pair, kings and nines"),
    ]


def test_seed_000_hole_cards_one_at_a_time_from_the_small_blind_button_last() -> None:
    hand = setup(FL_2_4, {0: 50, 1: 50, 2: 50}, button=0, posts=blinds(1, 2, 1, 2))
    events = H.start(hand)
    dealt = [e for e in events if isinstance(e, HoleCardsDealt)]
    assert [e.seat for e in dealt] == [1, 2, 0]
    deck = hand.deck
    assert dealt[0].cards == (deck[0], deck[3])
    assert dealt[2].cards == (deck[2], deck[5])


def test_seed_000_heads_up_dealer_posts_small_blind_gets_first_card_acts_first_then_last() -> None:
    hand = setup(FL_2_4, {0: 50, 1: 50}, button=0, posts=blinds(0, 1, 1, 2))
    events = H.start(hand)
    assert [e.seat for e in events if isinstance(e, HoleCardsDealt)] == [0, 1]
    state = H.fold(events)
    assert H.to_act(state) == 0
    play(state, call(0), check(1))
    assert H.to_act(state) == 1  # after the flop the dealer acts last


def test_seed_001_fixed_limit_four_bets_then_capped_preflop_and_postflop() -> None:
    stacks = {0: 200, 1: 200, 2: 200, 3: 200}
    state = given(setup(FL_2_4, stacks, button=0, posts=blinds(1, 2, 1, 2)), bet(3, 4), bet(0, 6), bet(1, 8))
    legal = H.legal_actions(state, 2)
    assert legal is not None
    assert not legal.can_raise  # big blind + three raises = four bets
    with pytest.raises(RaiseNotAllowed) as error:
        H.decide(state, bet(2, 10))
    assert error.value.why == "capped"
    play(state, call(2), call(3), call(0))
    play(state, bet(1, 2), bet(2, 4), bet(3, 6), bet(0, 8))  # flop: bet + three raises
    legal = H.legal_actions(state, 1)
    assert legal is not None
    assert not legal.can_raise
    assert legal.to_call == 6


def test_seed_001_fixed_limit_big_bet_on_turn_and_river() -> None:
    state = given(
        setup(FL_2_4, {0: 200, 1: 200, 2: 200}, button=0, posts=blinds(1, 2, 1, 2)),
        call(0),
        call(1),
        check(2),
        check(1),
        check(2),
        check(0),
    )
    assert state.street == 2
    legal = H.legal_actions(state, 1)
    assert legal is not None
    assert (legal.min_raise_to, legal.max_raise_to) == (4, 4)


def test_seed_003_no_limit_reraise_at_least_the_previous_raise() -> None:
    nl = Rules(game=Game.HOLDEM, structure=Structure.NO_LIMIT, stakes=Stakes.blinds(1, 2))
    state = given(setup(nl, dict.fromkeys(range(5), 500), button=0, posts=blinds(1, 2, 1, 2)), bet(3, 8))
    legal = H.legal_actions(state, 4)
    assert legal is not None
    assert legal.min_raise_to == 14  # raise of 6 to 8, re-raise 6 more
    with pytest.raises(RaiseBelowMinimum) as error:
        H.decide(state, bet(4, 13))
    assert (error.value.amount, error.value.minimum) == (13, 14)


def test_seed_001_no_limit_bet_100_minimum_raise_to_200() -> None:
    nl = Rules(game=Game.HOLDEM, structure=Structure.NO_LIMIT, stakes=Stakes.blinds(50, 100))
    state = given(
        setup(nl, {0: 5000, 1: 5000, 2: 5000}, button=0, posts=blinds(1, 2, 50, 100)),
        call(0),
        call(1),
        check(2),
        bet(1, 100),
    )
    legal = H.legal_actions(state, 2)
    assert legal is not None
    assert (legal.min_raise_to, legal.max_raise_to) == (200, 4900)


PL = Structure.POT_LIMIT


def test_seed_001_pot_limit_pot_200_bet_150_call_150_maximum_800() -> None:
    rules = Rules(game=Game.HOLDEM, structure=PL, stakes=Stakes.blinds(25, 50))
    state = given(
        setup(rules, dict.fromkeys(range(4), 2000), button=0, posts=blinds(1, 2, 25, 50)),
        call(3),
        call(0),
        call(1),
        check(2),
        bet(1, 150),
        call(2),
    )
    assert sum(p.amount for p in H.pots(state)) == 500  # pot 200 + 150 + 150
    legal = H.legal_actions(state, 3)
    assert legal is not None
    assert legal.max_raise_to == 800


def test_seed_002_pot_limit_pot_50_bet_10_call_10_maximum_90() -> None:
    rules = Rules(game=Game.OMAHA, structure=PL, stakes=Stakes.blinds(5, 10))
    state = given(
        setup(rules, dict.fromkeys(range(5), 1000), button=0, posts=blinds(1, 2, 5, 10)),
        call(3),
        call(4),
        call(0),
        call(1),
        check(2),
        bet(1, 10),
        call(2),
    )
    legal = H.legal_actions(state, 3)
    assert legal is not None
    assert (legal.min_raise_to, legal.max_raise_to) == (20, 90)


def test_pot_limit_preflop_blinds_at_true_value_5_10_gives_35() -> None:
    rules = Rules(game=Game.OMAHA, structure=PL, stakes=Stakes.blinds(5, 10))
    state = given(setup(rules, dict.fromkeys(range(4), 1000), button=0, posts=blinds(1, 2, 5, 10)))
    legal = H.legal_actions(state, 3)
    assert legal is not None
    assert legal.max_raise_to == 35


def test_pot_limit_maximum_with_a_side_pot_counts_every_pot_and_the_bets_as_pokerkit() -> None:
    """House rule (2026-11-27): with side pots "the pot" is every pot of the hand plus the bets on
    the table (seed 002's "total pot", seed 003's "current size of the pot", pokerkit), not the
    side pot the raiser plays for alone (seeds 001/004's "active pot")."""
    rules = Rules(game=Game.OMAHA, structure=PL, stakes=Stakes.blinds(1, 2))
    opening = H.start(setup(rules, {0: 100, 1: 100, 2: 7}, button=2, posts=blinds(0, 1, 1, 2)))
    state = H.fold(opening)
    # The button is all-in for 7 (the pot-sized raise); the blinds play on to 20 each.
    events = [*opening, *play(state, bet(2, 7), bet(0, 20), call(1))]
    assert [(p.amount, p.eligible) for p in H.pots(state)] == [(21, (0, 1, 2)), (26, (0, 1))]
    events += play(state, bet(0, 10))
    legal = H.legal_actions(state, 1)
    assert legal is not None
    # 2 x 10 - 0 + (main 21 + side 26 + bet 10); the side pot alone would give 2 x 10 + 26 + 10 = 56.
    assert legal.max_raise_to == 77
    # pokerkit, fed the same hand as PHH, allows the same maximum.
    text = phh.dump_phh(history_from_events(events))
    pk_state = None
    for pk_state in pokerkit.HandHistory.loads(text):  # noqa: B007 (the last state is wanted)
        pass
    assert pk_state is not None
    assert pk_state.actor_index == 1  # PHH player 1 is seat 1 (players clockwise from seat 0)
    assert pk_state.max_completion_betting_or_raising_to_amount == 77
    with pytest.raises(RaiseAboveMaximum):
        H.decide(state, bet(1, 78))
    assert H.decide(state, bet(1, 77))


def test_seed_000_dead_small_blind_goes_to_the_pot_and_live_post_keeps_the_option() -> None:
    """LAR 156 / engine.md B3: a returning CO posts 2 live + 1 dead; flop pot 13."""
    rules = Rules(game=Game.HOLDEM, structure=Structure.NO_LIMIT, stakes=Stakes.blinds(1, 2))
    posts = [*blinds(1, 2, 1, 2), (5, PostKind.LIVE_BIG_BLIND, 2), (5, PostKind.DEAD_SMALL_BLIND, 1)]
    state = given(setup(rules, dict.fromkeys(range(6), 100), button=0, posts=posts), call(3), call(4))
    legal = H.legal_actions(state, 5)
    assert legal is not None
    assert legal.can_check
    assert legal.can_raise
    events = play(state, check(5), call(0), call(1), check(2))
    assert isinstance(events[-1], BoardDealt)
    assert events[-1].street is Street.FLOP
    # eligible seats listed clockwise from the first seat left of the button
    assert [(p.amount, p.eligible) for p in H.pots(state)] == [(13, (1, 2, 3, 4, 5, 0))]


def test_seed_000_odd_chip_to_the_first_winner_left_of_the_button() -> None:
    """engine.md C3: BTN calls, SB folds (1 dead), BB checks; the board plays; pot 5."""
    rules = Rules(game=Game.HOLDEM, structure=Structure.NO_LIMIT, stakes=Stakes.blinds(1, 2))
    state = given(
        setup(rules, {0: 100, 1: 100, 2: 100}, button=0, posts=blinds(1, 2, 1, 2), board="AsKsQsJsTs"),
        call(0),
        fold(1),
        check(2),
        check(2),
        check(0),
        check(2),
        check(0),
        check(2),
        check(0),
    )
    assert H.is_over(state)
    assert H.final_stacks(state) == {0: 100, 1: 99, 2: 101}

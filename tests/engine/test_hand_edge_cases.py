"""research/engine.md section 2, edge cases A (betting), C (pots, showdown) and D (rake), as
named tests under both profiles where HOUSE_RULES.md makes them differ.

Seats: button on seat 0, then seat 1 (small blind), seat 2 (big blind), seat 3, ...
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from openpoker.engine import hand as H
from openpoker.engine.errors import (
    FoldNotAllowed,
    HandOver,
    NotYourTurn,
    ProtectionNotAllowed,
    RaiseBelowMinimum,
    RaiseNotAllowed,
    SeatNotInHand,
)
from openpoker.engine.hand_events import (
    AllInProtected,
    CardsShown,
    HandEnded,
    PotAwarded,
    ProtectAllIn,
    SeatAmount,
    UncalledBetReturned,
)
from openpoker.engine.hand_setup import PostKind
from openpoker.engine.rules import (
    FixedLimitShortAllIn,
    Game,
    Profile,
    RakeRules,
    Rules,
    ShortBigBlindCall,
    Stakes,
    Structure,
    phh_rules,
)
from tests.engine.handkit import bet, blinds, call, check, fold, given, play, setup, when

NL = Structure.NO_LIMIT


def nl(small: int, big: int, *, profile: Profile = Profile.SEEDS, **kw: object) -> Rules:
    stakes = Stakes.blinds(small, big)
    if profile is Profile.PHH:
        return phh_rules(Game.HOLDEM, NL, stakes)
    return Rules(game=Game.HOLDEM, structure=NL, stakes=stakes, **kw)  # type: ignore[arg-type]


PROFILES = [Profile.SEEDS, Profile.PHH]


def legal(state: H.HandState, seat: int) -> H.LegalActions:
    out = H.legal_actions(state, seat)
    assert out is not None, f"seat {seat} is not to act"
    return out


# -- A. betting ----------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_a1_short_all_in_does_not_reopen_for_the_player_who_acted(profile: Profile) -> None:
    """TR 96: BTN raises to 600, SB all-in 650; BB may raise (>= 1050); BTN may only call."""
    hand = setup(
        nl(100, 200, profile=profile), {0: 20000, 1: 650, 2: 20000}, button=0, posts=blinds(1, 2, 100, 200)
    )
    state = given(hand, bet(0, 600), bet(1, 650))
    bb = legal(state, 2)
    assert (bb.can_raise, bb.min_raise_to, bb.to_call) == (True, 1050, 450)
    play(state, call(2))
    btn = legal(state, 0)
    assert (btn.can_raise, btn.to_call) == (False, 50)
    with pytest.raises(RaiseNotAllowed) as error:
        H.decide(state, bet(0, 1300))
    assert error.value.why == "not_reopened"


def _five_way_flop(profile: Profile, stacks: dict[int, int]) -> H.HandState:
    hand = setup(nl(50, 100, profile=profile), stacks, button=0, posts=blinds(1, 2, 50, 100))
    return given(hand, call(3), call(4), call(0), call(1), check(2))


@pytest.mark.parametrize("profile", PROFILES)
def test_a2_short_all_ins_adding_up_to_a_full_raise_reopen(profile: Profile) -> None:
    """TR 96a: A bets 500, B raises to 1000, C calls, D all-in 1300, E all-in 1700, A calls:
    B and C may raise, to at least 2200."""
    a, b, c, d, e = 1, 2, 3, 4, 0
    state = _five_way_flop(profile, {a: 10000, b: 10000, c: 10000, d: 1400, e: 1800})
    play(state, bet(a, 500), bet(b, 1000), call(c), bet(d, 1300), bet(e, 1700), call(a))
    assert (legal(state, b).can_raise, legal(state, b).min_raise_to) == (True, 2200)
    play(state, call(b))
    assert legal(state, c).can_raise


@pytest.mark.parametrize("profile", PROFILES)
def test_a3_player_who_acted_between_two_short_all_ins_is_not_reopened(profile: Profile) -> None:
    """SB bets 100, BB all-in 150, UTG calls, BTN all-in 200: SB may raise (to 300), UTG not."""
    hand = setup(
        nl(5, 10, profile=profile), {0: 210, 1: 1000, 2: 160, 3: 1000}, button=0, posts=blinds(1, 2, 5, 10)
    )
    state = given(hand, call(3), call(0), call(1), check(2))
    play(state, bet(1, 100), bet(2, 150), call(3), bet(0, 200))
    assert (legal(state, 1).can_raise, legal(state, 1).min_raise_to) == (True, 300)
    play(state, call(1))
    assert not legal(state, 3).can_raise


@pytest.mark.parametrize("profile", PROFILES)
def test_a4_minimum_raise_after_a_short_all_in_is_bet_plus_last_full_raise(profile: Profile) -> None:
    """LAR 172: a bet of 100 and an all-in for 140: a raise must make it at least 240."""
    hand = setup(nl(5, 10, profile=profile), {0: 1000, 1: 1000, 2: 150}, button=0, posts=blinds(1, 2, 5, 10))
    state = given(hand, call(0), call(1), check(2), bet(1, 100), bet(2, 140))
    assert legal(state, 0).min_raise_to == 240
    with pytest.raises(RaiseBelowMinimum) as error:
        H.decide(state, bet(0, 239))
    assert (error.value.amount, error.value.minimum) == (239, 240)


@pytest.mark.parametrize("profile", PROFILES)
def test_a5_big_blind_option_survives_a_short_all_in(profile: Profile) -> None:
    """LAR 152: UTG all-in 300 (short of a raise), BTN folds, SB calls: BB may raise to 500."""
    hand = setup(
        nl(100, 200, profile=profile),
        {0: 5000, 1: 5000, 2: 5000, 3: 300},
        button=0,
        posts=blinds(1, 2, 100, 200),
    )
    state = given(hand, bet(3, 300), fold(0), call(1))
    bb = legal(state, 2)
    assert (bb.to_call, bb.can_raise, bb.min_raise_to) == (100, True, 500)


@pytest.mark.parametrize("profile", PROFILES)
def test_a6_big_blind_option_in_a_limped_pot(profile: Profile) -> None:
    hand = setup(nl(1, 2, profile=profile), dict.fromkeys(range(4), 200), button=0, posts=blinds(1, 2, 1, 2))
    state = given(hand, call(3), call(0), call(1))
    bb = legal(state, 2)
    assert (bb.can_check, bb.to_call, bb.can_raise, bb.min_raise_to) == (True, 0, True, 4)


def _fl(profile: Profile) -> Rules:
    stakes = Stakes.fixed_limit(20, 40)
    if profile is Profile.PHH:
        return phh_rules(Game.HOLDEM, Structure.FIXED_LIMIT, stakes)
    return Rules(game=Game.HOLDEM, structure=Structure.FIXED_LIMIT, stakes=stakes)


@pytest.mark.parametrize(("profile", "reopened"), [(Profile.SEEDS, True), (Profile.PHH, False)])
def test_a7a_limit_all_in_of_half_a_bet_reopens_only_under_the_half_bet_rule(
    profile: Profile, reopened: bool
) -> None:
    """LAR 129 (seeds): an all-in of half a bet or more is a full bet; phh (pokerkit): not."""
    hand = setup(_fl(profile), {0: 50, 1: 500, 2: 500, 3: 500}, button=0, posts=blinds(1, 2, 10, 20))
    state = given(hand, call(3), call(0), call(1), check(2))
    play(state, bet(1, 20), call(2), call(3), bet(0, 30))  # BTN all-in for 30: +10 of a 20 bet
    sb = legal(state, 1)
    assert sb.can_raise is reopened
    if reopened:
        assert sb.min_raise_to == 50


@pytest.mark.parametrize(("profile", "raise_to"), [(Profile.SEEDS, 20), (Profile.PHH, 25)])
def test_a7c_limit_opening_all_in_below_half_a_bet_is_completed(profile: Profile, raise_to: int) -> None:
    """LAR 129: after an opening all-in of 5 on a 20 round the next player may complete to 20;
    pokerkit requires a full raise over it, 25."""
    hand = setup(_fl(profile), {0: 500, 1: 25, 2: 500}, button=0, posts=blinds(1, 2, 10, 20))
    state = given(hand, call(0), call(1), check(2), bet(1, 5))
    bb = legal(state, 2)
    assert (bb.min_raise_to, bb.max_raise_to) == (raise_to, raise_to)


@pytest.mark.parametrize("profile", PROFILES)
def test_a7b_limit_opening_all_in_of_15_is_raised_to_35(profile: Profile) -> None:
    hand = setup(_fl(profile), {0: 500, 1: 35, 2: 500}, button=0, posts=blinds(1, 2, 10, 20))
    state = given(hand, call(0), call(1), check(2), bet(1, 15))
    assert legal(state, 2).min_raise_to == 35


@pytest.mark.parametrize(("profile", "minimum"), [(Profile.SEEDS, 8), (Profile.PHH, 6)])
def test_a11_straddler_acts_last_preflop_and_sets_the_raise(profile: Profile, minimum: int) -> None:
    """seeds (LAR 170): the straddle is the new bring-in, raises at least 4 more; phh (pokerkit):
    the raise increment stays the big blind."""
    stakes = Stakes.blinds(1, 2, straddle=4)
    rules = (
        phh_rules(Game.HOLDEM, NL, stakes)
        if profile is Profile.PHH
        else Rules(game=Game.HOLDEM, structure=NL, stakes=stakes)
    )
    posts = [*blinds(1, 2, 1, 2), (3, PostKind.STRADDLE, 4)]
    state = given(setup(rules, dict.fromkeys(range(5), 200), button=0, posts=posts))
    assert H.to_act(state) == 4
    assert legal(state, 4).min_raise_to == minimum
    play(state, call(4), call(0), call(1), call(2))
    straddler = legal(state, 3)
    assert (straddler.can_check, straddler.can_raise) == (True, True)


@pytest.mark.parametrize(("profile", "to_call", "minimum"), [(Profile.SEEDS, 20, 40), (Profile.PHH, 10, 30)])
def test_a12_big_blind_all_in_for_less(profile: Profile, to_call: int, minimum: int) -> None:
    """LAR 150 (seeds): later players call the full big blind, raise to 2 BB; phh (pokerkit):
    the call is the largest amount posted."""
    hand = setup(
        nl(10, 20, profile=profile), {0: 500, 1: 500, 2: 5, 3: 500}, button=0, posts=blinds(1, 2, 10, 20)
    )
    state = given(hand)
    utg = legal(state, 3)
    assert (utg.to_call, utg.min_raise_to) == (to_call, minimum)


def test_a13_folding_when_a_check_is_free_is_allowed_unless_the_rules_refuse_it() -> None:
    hand = setup(nl(1, 2), dict.fromkeys(range(3), 100), button=0, posts=blinds(1, 2, 1, 2))
    state = given(hand, call(0), call(1))
    assert legal(state, 2).can_fold
    assert when(state, fold(2))[0].seat == 2  # type: ignore[union-attr]
    strict = replace(hand, rules=replace(hand.rules, fold_when_check_free=False))
    state = given(strict, call(0), call(1))
    assert not legal(state, 2).can_fold
    with pytest.raises(FoldNotAllowed):
        H.decide(state, fold(2))


@pytest.mark.parametrize("profile", PROFILES)
def test_a_raise_nobody_can_call_is_refused(profile: Profile) -> None:
    hand = setup(
        nl(1, 2, profile=profile), {0: 1000, 1: 50, 2: 100, 3: 200}, button=0, posts=blinds(1, 2, 1, 2)
    )
    state = given(hand, bet(3, 200))
    btn = legal(state, 0)
    assert (btn.can_raise, btn.to_call) == (False, 200)
    with pytest.raises(RaiseNotAllowed) as error:
        H.decide(state, bet(0, 400))
    assert error.value.why == "nobody_can_call"


# -- typed errors --------------------------------------------------------------------------------


def test_illegal_commands_raise_typed_errors_naming_the_numbers_and_change_nothing() -> None:
    hand = setup(nl(10, 20), dict.fromkeys(range(6), 1000), button=0, posts=blinds(1, 2, 10, 20))
    state = given(hand)
    before = state.snapshot()
    with pytest.raises(RaiseBelowMinimum) as low:
        H.decide(state, bet(3, 30))
    assert (low.value.reason, low.value.fields) == ("RAISE_BELOW_MINIMUM", {"amount": 30, "minimum": 40})
    assert str(low.value) == "raise to 30 is below the minimum 40"
    play(state, call(3), call(4))
    before = state.snapshot()
    with pytest.raises(NotYourTurn) as turn:
        H.decide(state, call(3))
    assert (turn.value.seat, turn.value.to_act, turn.value.reason) == (3, 5, "NOT_YOUR_TURN")
    assert str(turn.value) == "seat 3 acted but seat 5 is to act"
    with pytest.raises(SeatNotInHand):
        H.decide(state, call(7))
    assert state.snapshot() == before


def test_a_finished_hand_accepts_no_command() -> None:
    state = given(setup(nl(1, 2), {0: 100, 1: 100}, button=0, posts=blinds(0, 1, 1, 2)), fold(0))
    assert H.is_over(state)
    with pytest.raises(HandOver):
        H.decide(state, check(1))


# -- C. pots and showdown -------------------------------------------------------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_c1_three_all_ins_make_a_main_pot_and_two_side_pots(profile: Profile) -> None:
    """SB 50, BB 100, UTG 200 all-in, BTN 1000: main 200, side 150, side 200; AA, KK, QQ win."""
    hand = setup(
        nl(1, 2, profile=profile),
        {0: 1000, 1: 50, 2: 100, 3: 200},
        button=0,
        posts=blinds(1, 2, 1, 2),
        hole={1: "AhAd", 2: "KhKd", 3: "QhQd", 0: "JhJd"},
        board="2c7d9hTc4s",
    )
    state = given(hand, bet(3, 200), call(0), call(1), call(2))
    assert [(p.amount, p.eligible) for p in H.pots(state)] == [
        (200, (1, 2, 3, 0)),
        (150, (2, 3, 0)),
        (200, (3, 0)),
    ]
    if profile is Profile.PHH:  # the phh showdown waits for each player to show or muck
        play(state, *(H.Show(seat=s) for s in (3, 0, 1, 2)))
    assert H.is_over(state)
    assert H.final_stacks(state) == {0: 800, 1: 200, 2: 150, 3: 200}


def test_c2_uncalled_part_of_a_bet_is_returned_and_never_raked() -> None:
    """HU: P0 bets 98 all-in, P1 calls its last 38: 60 comes back; 5% rake of the 80 pot."""
    rules = nl(1, 2, rake=RakeRules(basis_points=500))
    hand = setup(
        rules,
        {0: 100, 1: 40},
        button=0,
        posts=blinds(0, 1, 1, 2),
        hole={0: "AhAd", 1: "KhKd"},
        board="2c7d9hTc4s",
    )
    state = given(hand, call(0), check(1), check(1))
    events = play(state, bet(0, 98), call(1))
    assert events[2] == UncalledBetReturned(seat=0, amount=60)
    ended = events[-1]
    assert isinstance(ended, HandEnded)
    assert ended.rake == 4
    assert ended.stacks == (SeatAmount(seat=0, amount=136), SeatAmount(seat=1, amount=0))


def test_c4_kicker_decides_and_ties_split_with_the_odd_chip_first_left_of_the_button() -> None:
    hand = setup(
        nl(1, 2),
        {0: 100, 1: 100, 2: 100},
        button=0,
        posts=[*blinds(1, 2, 1, 2), (0, PostKind.ANTE, 1)],
        hole={0: "Qs3c", 1: "Jc9c", 2: "Qh4d"},
        board="AsAdKc7h2d",
    )
    state = given(hand, call(0), call(1), check(2), *(check(s) for _ in range(3) for s in (1, 2, 0)))
    assert state.result is not None
    awarded = list(state.result.payouts)
    # AAKQ7 twice (seats 0 and 2) beats AAKJ9; the 7 chips split 4/3, the odd chip to seat 2,
    # the first winner clockwise from the button.
    assert awarded == [
        SeatAmount(seat=0, amount=3),
        SeatAmount(seat=1, amount=0),
        SeatAmount(seat=2, amount=4),
    ]


def test_c6_six_plus_three_of_a_kind_beats_a_straight_but_not_in_phh_short_deck() -> None:
    stakes = Stakes.blinds(1, 2)
    hole = {1: "9c9d", 2: "6hTd"}  # trips nines vs a 6-7-8-9-T straight
    board = "9h7s8dKcAd"
    for rules, winner in (
        (Rules(game=Game.SIX_PLUS, structure=NL, stakes=stakes), 1),
        (phh_rules(Game.SIX_PLUS, NL, stakes), 2),
    ):
        hand = setup(rules, {1: 100, 2: 100}, button=1, posts=blinds(1, 2, 1, 2), hole=hole, board=board)
        state = given(hand, bet(1, 100), call(2))
        if rules.profile is Profile.PHH:
            play(state, H.Show(seat=1), H.Show(seat=2))
        assert H.final_stacks(state)[winner] == 200


def test_c7_all_in_hands_are_always_shown_and_the_fold_winner_shows_nothing() -> None:
    hand = setup(
        nl(1, 2), {0: 100, 1: 100, 2: 100}, button=0, posts=blinds(1, 2, 1, 2), hole={0: "2c3d", 2: "AhAd"}
    )
    state = given(hand, bet(0, 100), fold(1))
    events = when(state, call(2))
    shown = [e.seat for e in events if isinstance(e, CardsShown)]
    assert sorted(shown) == [0, 2]  # seat 0 loses but was all-in: shown anyway
    state = given(hand, bet(0, 10), fold(1))
    events = when(state, fold(2))
    assert not [e for e in events if isinstance(e, CardsShown)]
    assert isinstance(events[-2], PotAwarded)


def test_omaha_uses_exactly_two_hole_cards() -> None:
    """engine.md C5: AsAc2d2s on AhKhQhJh2c is trips (not a full house); Th9h4d5c has a
    king-high straight flush."""
    rules = Rules(game=Game.OMAHA, structure=Structure.POT_LIMIT, stakes=Stakes.blinds(1, 2))
    hand = setup(
        rules,
        {1: 100, 2: 100},
        button=1,
        posts=blinds(1, 2, 1, 2),
        hole={1: "AsAc2d2s", 2: "Th9h4d5c"},
        board="AhKhQhJh2c",
    )
    state = given(hand, call(1), check(2), *(check(s) for _ in range(3) for s in (2, 1)))
    assert H.final_stacks(state) == {1: 98, 2: 102}


# -- seeds all-in protection ----------------------------------------------------------------------


def test_protected_player_is_all_in_for_what_they_put_in_and_wins_only_that_pot() -> None:
    hand = setup(
        nl(1, 2),
        {0: 100, 1: 100, 2: 100},
        button=0,
        posts=blinds(1, 2, 1, 2),
        hole={1: "AhAd", 2: "KhKd", 0: "QhQd"},
        board="2c7d9hTc4s",
    )
    state = given(hand)
    with pytest.raises(ProtectionNotAllowed):
        H.decide(state, ProtectAllIn(seat=0))  # nothing put in yet: the hand is folded instead
    events = play(state, bet(0, 10), ProtectAllIn(seat=1))
    assert events[-1] == AllInProtected(seat=1)
    view = H.view(state, None)
    assert [p.all_in for p in view.players] == [True, False, False]  # seats 1, 2, 0
    play(state, call(2), *(c for _ in range(3) for c in (check(2), check(0))))
    # Seat 1 put in 1: the main pot is 1 from each of three players; KK takes the rest.
    assert H.final_stacks(state) == {0: 90, 1: 102, 2: 108}


# -- D. rake -------------------------------------------------------------------------------------


def test_d1_no_flop_no_drop_and_d2_cap_per_hand() -> None:
    raked = nl(5, 10, rake=RakeRules(basis_points=500, caps=((2, 3),)))
    hand = setup(raked, {0: 500, 1: 500, 2: 500}, button=0, posts=blinds(1, 2, 5, 10))
    preflop = given(hand, bet(0, 100), fold(1))
    ended = when(preflop, fold(2))[-1]
    assert isinstance(ended, HandEnded)
    assert ended.rake == 0
    flop = given(hand, bet(0, 100), call(1), call(2), bet(1, 100))
    ended = play(flop, fold(2), fold(0))[-1]
    assert isinstance(ended, HandEnded)
    assert ended.rake == 3  # 5% of 300 is 15, capped at 3
    assert ended.stacks == (
        SeatAmount(seat=0, amount=400),
        SeatAmount(seat=1, amount=697),
        SeatAmount(seat=2, amount=400),
    )


# -- queries ---------------------------------------------------------------------------------------


def test_view_hides_other_players_hole_cards_until_shown() -> None:
    hand = setup(
        nl(1, 2),
        {0: 100, 1: 100, 2: 100},
        button=0,
        posts=blinds(1, 2, 1, 2),
        hole={0: "AhAd", 1: "KhKd", 2: "2c7d"},
    )
    state = given(hand)
    mine = H.view(state, 0)
    assert [p.hole is not None for p in mine.players] == [False, False, True]
    assert mine.legal is not None
    assert mine.legal.to_call == 2
    spectator = H.view(state, None)
    assert all(p.hole is None for p in spectator.players)
    play(state, bet(0, 100), call(1), fold(2))
    shown = H.view(state, None)
    assert [p.hole is not None for p in shown.players] == [True, False, True]


def test_house_rule_switches_are_values_of_the_rules() -> None:
    """The seeds profile with the phh choices for the two limit / blind switches behaves as phh."""
    fl = replace(_fl(Profile.SEEDS), fixed_limit_short_all_in=FixedLimitShortAllIn.FULL_RAISE_RULE)
    hand = setup(fl, {0: 50, 1: 500, 2: 500, 3: 500}, button=0, posts=blinds(1, 2, 10, 20))
    state = given(hand, call(3), call(0), call(1), check(2), bet(1, 20), call(2), call(3), bet(0, 30))
    assert not legal(state, 1).can_raise
    largest = nl(10, 20, short_big_blind_call=ShortBigBlindCall.LARGEST_POSTED)
    hand = setup(largest, {0: 500, 1: 500, 2: 5, 3: 500}, button=0, posts=blinds(1, 2, 10, 20))
    utg = legal(given(hand), 3)
    assert (utg.to_call, utg.min_raise_to) == (10, 30)


def test_a9_limit_cap_also_holds_heads_up() -> None:
    hand = setup(_fl(Profile.SEEDS), {0: 500, 1: 500}, button=0, posts=blinds(0, 1, 10, 20))
    state = given(hand, bet(0, 40), bet(1, 60), bet(0, 80))  # big blind + three raises
    assert not legal(state, 1).can_raise


def test_c3_two_odd_chips_both_go_to_the_first_winner_left_of_the_button() -> None:
    """Pot 11 split three ways: 5 / 3 / 3 (OddChips.FIRST_LEFT_OF_BUTTON)."""
    hand = setup(
        nl(2, 3), dict.fromkeys(range(4), 100), button=0, posts=blinds(1, 2, 2, 3), board="AsKsQsJsTs"
    )
    state = given(hand, call(3), call(0), fold(1), check(2), *(check(s) for _ in range(3) for s in (2, 3, 0)))
    assert H.final_stacks(state) == {0: 100, 1: 98, 2: 102, 3: 100}

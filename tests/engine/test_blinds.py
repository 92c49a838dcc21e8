"""The planning layer alone: button, blinds, who is dealt in and who posts what.

Given the seats between two hands and the last hand's positions, when the next hand is planned,
then the button, blinds, posts and debts follow HOUSE_RULES.md and the seeds (cited per test).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openpoker.engine.blinds import NotEnoughPlayers, Positions, plan_hand
from openpoker.engine.errors import InvalidRules
from openpoker.engine.hand_setup import PostKind
from openpoker.engine.rules import ButtonRule, Game, RakeRules, Rules, Stakes, Structure, seed_small_blind
from openpoker.engine.seating import Debt, Occupant, SeatStatus

NL = Rules(game=Game.HOLDEM, structure=Structure.NO_LIMIT, stakes=Stakes.blinds(1, 2), seats=6)
DEAD = Rules(
    game=Game.HOLDEM,
    structure=Structure.NO_LIMIT,
    stakes=Stakes.blinds(1, 2),
    seats=6,
    button=ButtonRule.DEAD,
)


def occ(
    seat: int,
    *,
    stack: int = 200,
    status: SeatStatus = SeatStatus.SITTING_IN,
    debt: Debt = Debt.NONE,
    arrival: int | None = None,
) -> Occupant:
    return Occupant(
        seat=seat,
        player=f"s{seat}",
        stack=stack,
        status=status,
        debt=debt,
        arrival=seat if arrival is None else arrival,
    )


def last(button: int, sb: int, bb: int, *, heads_up: bool = False) -> Positions:
    return Positions(
        button=button, small_blind=sb, big_blind=bb, big_blind_player=f"s{bb}", heads_up=heads_up
    )


def posts(plan: object) -> list[tuple[int, PostKind, int]]:
    return [(p.seat, p.kind, p.amount) for p in plan.posts]  # type: ignore[attr-defined]


def test_first_seated_player_is_the_first_dealer() -> None:
    """Seeds 001/004: the first person sitting at a table becomes the dealer."""
    seats = [occ(1, arrival=2), occ(3, arrival=0), occ(5, arrival=1)]
    plan = plan_hand(NL, seats, None)
    assert plan.positions.button == 3
    assert posts(plan) == [(5, PostKind.SMALL_BLIND, 1), (1, PostKind.BIG_BLIND, 2)]
    assert plan.dealt == (5, 1, 3)  # clockwise from left of the button, button last


def test_small_blind_is_half_the_lower_stake_rounded_down() -> None:
    """Seeds 000/001: at 5/10 the small blind is 2 (2.5 rounded down to the unit)."""
    rules = Rules(
        game=Game.HOLDEM, structure=Structure.FIXED_LIMIT, stakes=Stakes.fixed_limit(5, 10), seats=6
    )
    plan = plan_hand(rules, [occ(0), occ(1), occ(2)], None)
    assert posts(plan) == [(1, PostKind.SMALL_BLIND, 2), (2, PostKind.BIG_BLIND, 5)]


@pytest.mark.parametrize(
    ("lower", "upper", "small_blind"),
    [
        (500, 1000, 200),  # seed 001: $5/$10 posts $2 ($2.50 rounded down to the dollar)
        (100, 200, 50),  # seed 001: $1/$2 posts $0.50 (not above one dollar: not rounded)
        (1000, 2000, 500),  # $10/$20 posts $5
        (300, 600, 100),  # $3/$6 posts $1 ($1.50 rounded down)
        (50, 100, 25),  # $0.50/$1 posts $0.25
        (25, 50, 12),  # half a minor unit rounds down
    ],
)
def test_seed_small_blind_in_cents(lower: int, upper: int, small_blind: int) -> None:
    """Seeds 000/001: half the lower stake; above one currency unit, rounded down to a whole unit."""
    stakes = Stakes.fixed_limit(lower, upper)
    assert (stakes.small_blind, stakes.big_blind, stakes.small_bet, stakes.big_bet) == (
        small_blind,
        lower,
        lower,
        upper,
    )
    rules = Rules(game=Game.HOLDEM, structure=Structure.FIXED_LIMIT, stakes=stakes, seats=6)
    plan = plan_hand(rules, [occ(0), occ(1), occ(2)], None)
    assert posts(plan) == [(1, PostKind.SMALL_BLIND, small_blind), (2, PostKind.BIG_BLIND, lower)]


def test_seed_small_blind_follows_the_currency_unit() -> None:
    # In whole dollars (1 minor unit per dollar), $5/$10 posts $2 and $1/$2 rounds to nothing.
    assert Stakes.fixed_limit(5, 10, currency_unit=1).small_blind == 2
    assert seed_small_blind(1000, 1000) == 500  # a currency of 1,000 minor units: not above one
    assert seed_small_blind(3000, 1000) == 1000


def test_an_explicit_small_blind_overrides_the_seed_rule() -> None:
    assert Stakes.fixed_limit(500, 1000, small_blind=250).small_blind == 250
    assert Stakes.fixed_limit(1, 2, currency_unit=1, small_blind=1).small_blind == 1


@pytest.mark.parametrize(("lower", "currency_unit"), [(1, 1), (1, 100), (150, 100)])
def test_a_seed_small_blind_of_nothing_is_refused(lower: int, currency_unit: int) -> None:
    """A lower stake of 1 (or $1.50: 75 cents rounded down to the dollar) would post nothing."""
    with pytest.raises(InvalidRules) as info:
        Stakes.fixed_limit(lower, 2 * lower, currency_unit=currency_unit)
    assert info.value.field == "stakes.small_blind"
    assert info.value.reason == "INVALID_RULES"


def test_currency_unit_version_and_rake_unit_are_checked() -> None:
    base = Rules(game=Game.HOLDEM, structure=Structure.NO_LIMIT, stakes=Stakes.blinds(100, 200))
    assert (base.currency_unit, base.version) == (100, 2)
    for changes, field in [
        ({"currency_unit": 0}, "currency_unit"),
        ({"version": 0}, "version"),
        ({"version": 3}, "version"),
        ({"rake": RakeRules(basis_points=500, unit=0)}, "rake.unit"),
        # the rake rounds down to the table's chip unit: the two must agree
        ({"chip_unit": 100, "rake": RakeRules(basis_points=500)}, "rake.unit"),
    ]:
        with pytest.raises(InvalidRules) as info:
            replace(base, **changes)  # type: ignore[arg-type]
        assert info.value.field == field
    assert replace(base, chip_unit=100, rake=RakeRules(basis_points=500, unit=100)).rake.unit == 100


def test_moving_button_goes_to_the_next_player_sitting_in() -> None:
    """Seeds 000/001/004: after each hand the button moves to the next player sitting in."""
    seats = [occ(0), occ(1, status=SeatStatus.SITTING_OUT), occ(2), occ(3), occ(4)]
    plan = plan_hand(NL, seats, last(0, 2, 3))
    assert plan.positions.button == 2
    assert (plan.positions.small_blind, plan.positions.big_blind) == (3, 4)
    assert 1 not in plan.dealt


def test_antes_are_posted_by_everyone_dealt_in_first() -> None:
    """Seed 003: optional antes, posted before the blinds."""
    rules = Rules(game=Game.HOLDEM, structure=Structure.NO_LIMIT, stakes=Stakes.blinds(1, 2, ante=1), seats=6)
    plan = plan_hand(rules, [occ(0), occ(1), occ(2)], None)
    kinds = [p.kind for p in plan.posts]
    assert kinds == [PostKind.ANTE] * 3 + [PostKind.SMALL_BLIND, PostKind.BIG_BLIND]


def test_heads_up_dealer_posts_the_small_blind() -> None:
    """Seed 000 (1-on-1), seed 003, TR 87: the dealer posts the small blind."""
    plan = plan_hand(NL, [occ(1), occ(4)], None)
    assert plan.positions.heads_up
    assert plan.positions.button == 1 == plan.positions.small_blind
    assert posts(plan) == [(1, PostKind.SMALL_BLIND, 1), (4, PostKind.BIG_BLIND, 2)]
    nxt = plan_hand(NL, [occ(1), occ(4)], plan.positions)
    assert nxt.positions.button == 4
    assert nxt.positions.big_blind == 1


def test_b2_moving_to_heads_up_nobody_posts_the_big_blind_twice() -> None:
    """engine.md B2 / TR 87: S1 BTN, S2 SB, S3 BB; S1 leaves: S3 is button and SB, S2 the BB."""
    plan = plan_hand(NL, [occ(2), occ(3)], last(1, 2, 3))
    assert plan.positions.heads_up
    assert plan.positions.button == 3
    assert plan.positions.big_blind == 2


def test_b2_dead_button_moving_to_heads_up() -> None:
    plan = plan_hand(DEAD, [occ(2), occ(3)], last(1, 2, 3))
    assert (plan.positions.button, plan.positions.big_blind) == (3, 2)


def test_heads_up_to_three_handed_newcomer_gets_the_big_blind_in_turn() -> None:
    """A waiting newcomer is dealt in when the big blind reaches them, and owes nothing more."""
    hu = last(0, 0, 3, heads_up=True)
    newcomer = occ(1, status=SeatStatus.WAITING_FOR_BIG_BLIND, debt=Debt.NEW_PLAYER)
    plan = plan_hand(NL, [occ(0), newcomer, occ(3)], hu)
    assert not plan.positions.heads_up
    assert (plan.positions.button, plan.positions.small_blind, plan.positions.big_blind) == (3, 0, 1)
    assert [c.seat for c in plan.forgiven] == [1]
    assert plan.collected == ()


def test_new_player_posts_one_live_big_blind_to_play_at_once() -> None:
    """Seeds 000/001: a member entering posts the lower stake, live."""
    seats = [occ(0), occ(1), occ(2), occ(4, debt=Debt.NEW_PLAYER)]
    plan = plan_hand(NL, seats, last(5, 0, 1))
    assert 4 in plan.dealt
    assert (4, PostKind.LIVE_BIG_BLIND, 2) in posts(plan)
    assert [(c.seat, c.debt) for c in plan.collected] == [(4, Debt.NEW_PLAYER)]


def test_new_player_may_wait_for_the_big_blind_instead() -> None:
    seats = [occ(0), occ(1), occ(2), occ(4, status=SeatStatus.WAITING_FOR_BIG_BLIND, debt=Debt.NEW_PLAYER)]
    plan = plan_hand(NL, seats, last(5, 0, 1))
    assert 4 not in plan.dealt
    assert all(p.seat != 4 for p in plan.posts)


def test_several_big_blinds_can_be_posted_in_one_hand() -> None:
    """Seeds 001/004: more than one player may post a big blind in a hand."""
    seats = [occ(0), occ(1), occ(2), occ(3, debt=Debt.NEW_PLAYER), occ(4, debt=Debt.NEW_PLAYER)]
    plan = plan_hand(NL, seats, last(5, 0, 1))
    big = [p for p in plan.posts if p.kind in (PostKind.BIG_BLIND, PostKind.LIVE_BIG_BLIND)]
    assert len(big) == 3


def test_missed_small_blind_only_posts_a_live_big_blind() -> None:
    """Seed 000: missed only the small blind -> a live bet equal to the big blind."""
    seats = [occ(0), occ(1), occ(2), occ(3), occ(4, debt=Debt.SMALL_BLIND)]
    plan = plan_hand(NL, seats, last(5, 0, 1))
    assert [p for p in posts(plan) if p[0] == 4] == [(4, PostKind.LIVE_BIG_BLIND, 2)]


def test_missed_big_blind_posts_live_big_blind_plus_dead_small_blind() -> None:
    """Seed 000: missed the big blind (or both) -> live big blind plus a dead small blind."""
    seats = [occ(0), occ(1), occ(2), occ(3), occ(4, debt=Debt.BIG_BLIND)]
    plan = plan_hand(NL, seats, last(5, 0, 1))
    assert [p for p in posts(plan) if p[0] == 4] == [
        (4, PostKind.LIVE_BIG_BLIND, 2),
        (4, PostKind.DEAD_SMALL_BLIND, 1),
    ]


def test_sitting_out_player_passed_by_the_big_blind_owes_it() -> None:
    """Seed 000: blinds missed while sitting out are tracked."""
    seats = [occ(0), occ(1), occ(2), occ(3, status=SeatStatus.SITTING_OUT), occ(4), occ(5)]
    plan = plan_hand(NL, seats, last(0, 1, 2))
    assert plan.positions.big_blind == 4  # skips seat 3
    assert [(m.seat, m.debt) for m in plan.missed] == [(3, Debt.BIG_BLIND)]


def test_sitting_out_player_passed_by_the_small_blind_only_owes_a_small_blind() -> None:
    seats = [occ(0), occ(1), occ(2, status=SeatStatus.SITTING_OUT), occ(3), occ(4)]
    plan = plan_hand(NL, seats, last(0, 1, 3))
    assert plan.positions.small_blind == 3  # the small blind moved past seat 2
    assert [(m.seat, m.debt) for m in plan.missed] == [(2, Debt.SMALL_BLIND)]


def test_player_waiting_for_the_big_blind_takes_it_in_turn_without_dead_money() -> None:
    seats = [occ(0), occ(1), occ(2, status=SeatStatus.WAITING_FOR_BIG_BLIND, debt=Debt.BIG_BLIND), occ(3)]
    plan = plan_hand(NL, seats, last(0, 1, 3))
    # button 1, small blind 3, big blind: the next player in the game after 3 is 0... not 2.
    assert plan.positions.big_blind != 2
    plan2 = plan_hand(NL, seats, last(3, 0, 1))
    assert plan2.positions.big_blind == 2
    assert [(f.seat, f.debt) for f in plan2.forgiven] == [(2, Debt.BIG_BLIND)]
    assert all(p.kind is not PostKind.DEAD_SMALL_BLIND for p in plan2.posts)


def test_no_posting_to_enter_heads_up() -> None:
    """Seed 000 ('There is no Posting in 1-on-1'): joining a lone player posts nothing extra."""
    seats = [occ(0), occ(3, debt=Debt.NEW_PLAYER)]
    plan = plan_hand(NL, seats, last(0, 1, 0))
    assert plan.positions.heads_up
    assert {p.kind for p in plan.posts} == {PostKind.SMALL_BLIND, PostKind.BIG_BLIND}
    assert [(f.seat, f.debt) for f in plan.forgiven] == [(3, Debt.NEW_PLAYER)]


def test_a_hand_needs_two_players_who_can_play() -> None:
    with pytest.raises(NotEnoughPlayers) as err:
        plan_hand(NL, [occ(0), occ(1, status=SeatStatus.SITTING_OUT), occ(2, stack=0)], None)
    assert err.value.reason == "NOT_ENOUGH_PLAYERS"
    assert err.value.playable == 1


def test_players_with_no_chips_are_not_dealt_in() -> None:
    plan = plan_hand(NL, [occ(0), occ(1, stack=0), occ(2), occ(3)], None)
    assert 1 not in plan.dealt


def test_b1_dead_button_when_the_big_blind_busts_there_is_no_small_blind() -> None:
    """engine.md B1 / LAR 151: S1 BTN, S2 SB, S3 BB; S3 busts -> BB S4, no SB, button S2."""
    plan = plan_hand(DEAD, [occ(1), occ(2), occ(4)], last(1, 2, 3))
    assert plan.positions.big_blind == 4
    assert plan.small_blind_player is None
    assert plan.positions.button == 2
    assert [p.kind for p in plan.posts] == [PostKind.BIG_BLIND]


def test_b1_dead_button_when_the_small_blind_busts_the_button_is_dead() -> None:
    """engine.md B1 / LAR 151: S2 (SB) busts -> BB S4, SB S3, button on the empty seat S2."""
    plan = plan_hand(DEAD, [occ(1), occ(3), occ(4)], last(1, 2, 3))
    assert (plan.positions.button, plan.positions.small_blind, plan.positions.big_blind) == (2, 3, 4)
    assert plan.small_blind_player == "s3"
    assert plan.dealt == (3, 4, 1)  # S1 acts last again


def test_b1_moving_button_in_the_same_situation_skips_the_empty_seats() -> None:
    plan = plan_hand(NL, [occ(1), occ(3), occ(4)], last(1, 2, 3))
    assert (plan.positions.button, plan.positions.small_blind, plan.positions.big_blind) == (3, 4, 1)


def test_player_entering_between_button_and_small_blind_waits_for_the_button_to_pass() -> None:
    """Online rule: posting there would put the button on the newcomer next hand."""
    seats2 = [occ(0), occ(1, debt=Debt.NEW_PLAYER), occ(2), occ(3), occ(4)]
    plan2 = plan_hand(NL, seats2, last(5, 0, 2))
    assert plan2.positions.button == 0
    assert plan2.positions.small_blind == 2
    assert 1 not in plan2.dealt  # between the button (0) and the small blind (2)


def test_button_is_adjusted_so_last_big_blind_does_not_post_it_again_after_a_pause() -> None:
    """A table restarting from one player: TR 87's adjustment keeps the BB from repeating."""
    seats = [occ(0, debt=Debt.NEW_PLAYER), occ(1, debt=Debt.NEW_PLAYER), occ(3)]
    plan = plan_hand(NL, seats, last(4, 4, 3, heads_up=True))
    assert plan.positions.big_blind_player != "s3"


def test_table_straddle_is_posted_by_the_first_player_left_of_the_big_blind() -> None:
    """Seed 003 / LAR 161: an optional live UTG straddle (a table setting, off by default)."""
    rules = Rules(
        game=Game.HOLDEM, structure=Structure.NO_LIMIT, stakes=Stakes.blinds(1, 2, straddle=4), seats=6
    )
    plan = plan_hand(rules, [occ(0), occ(1), occ(2), occ(3, debt=Debt.NEW_PLAYER), occ(4)], last(5, 0, 1))
    # button 0, SB 1, BB 2; seat 3 posts its entry big blind, so seat 4 straddles.
    assert posts(plan)[-1] == (4, PostKind.STRADDLE, 4)
    heads_up = plan_hand(rules, [occ(0), occ(1)], None)
    assert all(p.kind is not PostKind.STRADDLE for p in heads_up.posts)


@st.composite
def tables(draw: st.DrawFn) -> tuple[Rules, list[Occupant], Positions | None]:
    n = draw(st.integers(2, 10))
    rules = replace(NL, seats=n, button=draw(st.sampled_from(list(ButtonRule))))
    taken = draw(st.lists(st.integers(0, n - 1), unique=True, min_size=2, max_size=n))
    occupants = [
        Occupant(
            seat=s,
            player=f"s{s}",
            stack=draw(st.sampled_from([0, 1, 200])),
            status=draw(st.sampled_from(list(SeatStatus))),
            debt=draw(st.sampled_from(list(Debt))),
            arrival=k,
        )
        for k, s in enumerate(taken)
    ]
    if draw(st.booleans()):
        return rules, occupants, None
    button, sb, bb = (draw(st.integers(0, n - 1)) for _ in range(3))
    player = f"s{bb}" if bb in taken else "gone"
    return (
        rules,
        occupants,
        Positions(
            button=button, small_blind=sb, big_blind=bb, big_blind_player=player, heads_up=draw(st.booleans())
        ),
    )


@settings(max_examples=200)
@given(table=tables())
def test_any_plan_is_consistent(table: tuple[Rules, list[Occupant], Positions | None]) -> None:
    rules, occupants, previous = table
    by_seat = {o.seat: o for o in occupants}
    try:
        plan = plan_hand(rules, occupants, previous)
    except NotEnoughPlayers:
        able = [o for o in occupants if o.stack > 0 and o.status is not SeatStatus.SITTING_OUT]
        assert len(able) < 2
        return
    dealt = set(plan.dealt)
    pos = plan.positions
    assert len(dealt) >= 2
    assert pos.heads_up == (len(dealt) == 2)
    assert all(by_seat[s].stack > 0 and by_seat[s].status is not SeatStatus.SITTING_OUT for s in dealt)
    assert pos.big_blind in dealt
    assert by_seat[pos.big_blind].player == pos.big_blind_player
    if rules.button is ButtonRule.MOVING or pos.heads_up:
        assert pos.button in dealt
    if plan.small_blind_player is not None:
        assert by_seat[pos.small_blind].player == plan.small_blind_player
    kinds = [p.kind for p in plan.posts]
    assert kinds.count(PostKind.BIG_BLIND) == 1
    assert kinds.count(PostKind.SMALL_BLIND) == (plan.small_blind_player is not None)
    assert {p.seat for p in plan.posts} <= dealt
    settled = {c.seat for c in (*plan.collected, *plan.forgiven)}
    assert {s for s in dealt if by_seat[s].debt is not Debt.NONE} <= settled
    assert settled <= dealt
    if previous is not None and previous.big_blind_player != "gone":
        assert pos.big_blind_player != previous.big_blind_player or previous.big_blind not in dealt
    assert plan.dealt == tuple(
        s for s in ((pos.button + i) % rules.seats for i in range(1, rules.seats + 1)) if s in dealt
    )

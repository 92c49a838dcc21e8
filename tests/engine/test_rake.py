"""Golden rake cases (HOUSE_RULES.md, Rake; research/wallet.md §2.2-2.4).

Expected values are worked by hand from the published tables, in minor units (cents).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from openpoker.engine.rake import InvalidRakeInput, compute_rake, pots_after_rake, split_rake
from openpoker.engine.rules import RakeRules, RakeSplit

# PokerStars $0.50/$1 NL: 5%, caps $1.25 (2 players) / $1.25 (3-4) / $2.75 (5+).
STARS_50_100 = RakeRules(basis_points=500, caps=((2, 125), (3, 125), (5, 275)))
# PokerStars $0.05/$0.10: 4.5%, caps $0.50 / $1.00 / $1.50.
STARS_5_10 = RakeRules(basis_points=450, caps=((2, 50), (3, 100), (5, 150)))
# PokerStars $0.02/$0.05: 4.15%, caps $0.50 / $0.50 / $1.00.
STARS_2_5 = RakeRules(basis_points=415, caps=((2, 50), (5, 100)))
# Rules version 1: the main pot pays the rake first.
MAIN_FIRST = RakeRules(split=RakeSplit.MAIN_POT_FIRST)
PROPORTIONAL = RakeRules()


def test_real_hand_is_capped_at_the_six_handed_cap() -> None:
    # Total pot $312.99 at 5% is $15.6495; six dealt in: cap $2.75 (the published rake).
    assert compute_rake(STARS_50_100, pot=31299, players_dealt_in=6, saw_flop=True) == 275


@pytest.mark.parametrize(
    ("players", "expected"),
    [(2, 50), (3, 100), (4, 100), (5, 150), (6, 150), (9, 150), (10, 150)],
)
def test_cap_depends_on_players_dealt_in(players: int, expected: int) -> None:
    # $50.00 at 4.5% is $2.25, above every cap.
    assert compute_rake(STARS_5_10, pot=5000, players_dealt_in=players, saw_flop=True) == expected


def test_below_the_cap_the_percentage_applies() -> None:
    # $20.00 at 4.5% = 90 cents: under the 3-4 player cap (100), over the heads-up cap (50).
    assert compute_rake(STARS_5_10, pot=2000, players_dealt_in=3, saw_flop=True) == 90
    assert compute_rake(STARS_5_10, pot=2000, players_dealt_in=2, saw_flop=True) == 50


@pytest.mark.parametrize(
    ("rules", "pot", "expected"),
    [
        (RakeRules(basis_points=350), 300, 10),  # 10.5 -> 10 (pokerkit's float product gives 11)
        (RakeRules(basis_points=500), 30, 1),  # 1.5 -> 1
        (RakeRules(basis_points=500), 50, 2),  # 2.5 -> 2
        (RakeRules(basis_points=500), 70, 3),  # 3.5 -> 3
        (RakeRules(basis_points=500), 19, 0),  # 0.95 -> 0
        (RakeRules(basis_points=500), 20, 1),  # exactly 1
        (STARS_2_5, 1000, 41),  # 41.5 -> 41
        (STARS_2_5, 4000, 100),  # 166 -> cap 100 (5+ players)
        (RakeRules(basis_points=750), 1_000_000, 75_000),  # no cap configured
    ],
)
def test_rounds_down_to_the_chip(rules: RakeRules, pot: int, expected: int) -> None:
    assert compute_rake(rules, pot=pot, players_dealt_in=6, saw_flop=True) == expected


def test_rounds_down_to_the_tables_chip_unit() -> None:
    """HOUSE_RULES, Rake: rounded down to the table's chip unit, after the cap."""
    pot = 2740  # 5% is 137
    assert compute_rake(RakeRules(basis_points=500), pot=pot, players_dealt_in=3, saw_flop=True) == 137
    in_dollars = RakeRules(basis_points=500, unit=100)
    assert compute_rake(in_dollars, pot=pot, players_dealt_in=3, saw_flop=True) == 100
    assert compute_rake(in_dollars, pot=1999, players_dealt_in=3, saw_flop=True) == 0  # 99 -> 0
    capped = RakeRules(basis_points=500, caps=((2, 250),), unit=100)
    assert compute_rake(capped, pot=100_000, players_dealt_in=3, saw_flop=True) == 200  # cap 250


def test_no_flop_no_drop() -> None:
    assert compute_rake(STARS_50_100, pot=31299, players_dealt_in=6, saw_flop=False) == 0
    dropping = RakeRules(basis_points=500, caps=((2, 125),), no_flop_no_drop=False)
    assert compute_rake(dropping, pot=1000, players_dealt_in=2, saw_flop=False) == 50


def test_zero_pot_and_zero_rate() -> None:
    assert compute_rake(STARS_50_100, pot=0, players_dealt_in=2, saw_flop=True) == 0
    assert compute_rake(RakeRules(), pot=10_000, players_dealt_in=2, saw_flop=True) == 0


def test_seed_pots_of_300_and_1800_at_5_percent_pay_15_and_90() -> None:
    """HOUSE_RULES, Rake (decided 2026-11-27): the rake of 105 is shared in proportion."""
    pots = (300, 1800)
    rake = compute_rake(RakeRules(basis_points=500), pot=sum(pots), players_dealt_in=3, saw_flop=True)
    assert rake == 105
    assert split_rake(rake, pots, PROPORTIONAL) == (15, 90)
    assert pots_after_rake(rake, pots, PROPORTIONAL) == (285, 1710)
    assert split_rake(rake, pots, MAIN_FIRST) == (105, 0)  # rules version 1


def test_side_pots_rake_once_from_the_total() -> None:
    # research/wallet.md §2.4: main 28429, side 2870, one rake of 275: the published hand took
    # it all off the main pot ("Main pot $281.54"), as rules version 1 does.
    pots = (28429, 2870)
    rake = compute_rake(STARS_50_100, pot=sum(pots), players_dealt_in=6, saw_flop=True)
    assert split_rake(rake, pots, MAIN_FIRST) == (275, 0)
    assert pots_after_rake(rake, pots, MAIN_FIRST) == (28154, 2870)
    # In proportion: 249.79 and 25.22 round down to 249 and 25; the leftover 1 to the main pot.
    assert split_rake(rake, pots, PROPORTIONAL) == (250, 25)


def test_leftover_units_go_in_pot_order_and_the_cap_holds() -> None:
    # Three pots of 100 at 5% is 15, capped at 2: each share rounds down to 0, and the 2 left
    # go one each to the main pot and the first side pot; the total stays the capped rake.
    capped = RakeRules(basis_points=500, caps=((2, 2),))
    pots = (100, 100, 100)
    rake = compute_rake(capped, pot=sum(pots), players_dealt_in=4, saw_flop=True)
    assert rake == 2
    assert split_rake(rake, pots, capped) == (1, 1, 0)
    assert split_rake(5, (60, 60, 60, 60), PROPORTIONAL) == (2, 1, 1, 1)
    # In chip units of 100: shares of 14 and 85 round down to 0; the leftover unit goes first.
    dollars = RakeRules(unit=100)
    assert split_rake(100, (300, 1800), dollars) == (100, 0)
    assert split_rake(200, (1000, 3000), dollars) == (100, 100)  # 50 and 150 -> 0, 100, +100


def test_a_pot_never_pays_more_than_it_holds() -> None:
    dollars = RakeRules(unit=100)
    # 0.4 and 199.6 round down to 0 and 100; the leftover 100: the main pot holds only 2 of it.
    assert split_rake(200, (2, 998), dollars) == (2, 198)
    assert split_rake(10, (0, 10, 0), PROPORTIONAL) == (0, 10, 0)
    assert split_rake(0, (), PROPORTIONAL) == ()


def test_rake_spills_into_side_pots_when_the_main_pot_is_small_under_version_1() -> None:
    assert split_rake(150, (100, 80, 40), MAIN_FIRST) == (100, 50, 0)
    assert split_rake(220, (100, 80, 40), MAIN_FIRST) == (100, 80, 40)
    assert pots_after_rake(150, (100, 80, 40), MAIN_FIRST) == (0, 30, 40)
    assert split_rake(0, (), MAIN_FIRST) == ()


def test_one_cap_per_hand_not_per_pot() -> None:
    # Per-pot raking (pokerkit's default) would take 125 from each of three pots.
    pots = (3000, 3000, 3000)
    rake = compute_rake(STARS_50_100, pot=sum(pots), players_dealt_in=4, saw_flop=True)
    assert rake == 125
    assert split_rake(rake, pots, MAIN_FIRST) == (125, 0, 0)
    assert split_rake(rake, pots, PROPORTIONAL) == (42, 42, 41)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"pot": -1, "players_dealt_in": 2}, "pot"),
        ({"pot": 100, "players_dealt_in": 0}, "players_dealt_in"),
    ],
)
def test_bad_inputs_are_refused(kwargs: dict[str, int], field: str) -> None:
    with pytest.raises(InvalidRakeInput) as info:
        compute_rake(STARS_50_100, saw_flop=True, **kwargs)
    assert info.value.field == field
    assert info.value.reason == "INVALID_RAKE_INPUT"


@pytest.mark.parametrize("rules", [MAIN_FIRST, PROPORTIONAL])
def test_split_refuses_more_rake_than_pot(rules: RakeRules) -> None:
    with pytest.raises(InvalidRakeInput, match="exceeds the total pot 10"):
        split_rake(11, (5, 5), rules)
    with pytest.raises(InvalidRakeInput):
        split_rake(-1, (5,), rules)
    with pytest.raises(InvalidRakeInput):
        split_rake(1, (5, -1), rules)


caps = st.lists(st.tuples(st.integers(2, 10), st.integers(0, 10_000)), max_size=3).map(
    lambda cs: tuple(sorted(cs))
)


# A shared machine can stall the first draws; the inputs themselves are tiny (no deadline either:
# the profile in tests/conftest.py has none).
@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    bp=st.integers(0, 750),
    cap_table=caps,
    pot=st.integers(0, 10**12),
    players=st.integers(2, 10),
)
def test_rake_is_bounded_exact_and_monotone(
    bp: int, cap_table: tuple[tuple[int, int], ...], pot: int, players: int
) -> None:
    rules = RakeRules(basis_points=bp, caps=cap_table)
    rake = compute_rake(rules, pot=pot, players_dealt_in=players, saw_flop=True)
    assert 0 <= rake <= pot
    # Never more than the exact percentage, and less only by a fraction of a chip or the cap.
    assert rake * 10_000 <= pot * bp
    cap = rules.cap_for(players)
    if cap is None or rake < cap:
        assert (rake + 1) * 10_000 > pot * bp
    else:
        assert rake == cap
    assert compute_rake(rules, pot=pot + 1, players_dealt_in=players, saw_flop=True) >= rake


@given(rake=st.integers(0, 10_000), pots=st.lists(st.integers(0, 10_000), min_size=1, max_size=6))
def test_split_sums_to_the_rake_and_fills_main_pot_first(rake: int, pots: list[int]) -> None:
    assume(rake <= sum(pots))
    shares = split_rake(rake, pots, MAIN_FIRST)
    assert sum(shares) == rake
    for i, (share, amount) in enumerate(zip(shares, pots, strict=True)):
        assert 0 <= share <= amount
        if i + 1 < len(pots) and shares[i + 1] > 0:
            assert share == amount  # a later pot pays only once this one is empty


@given(rake=st.integers(0, 10_000), pots=st.lists(st.integers(0, 10_000), min_size=1, max_size=6))
def test_proportional_split_rounds_each_share_down_and_gives_leftovers_in_pot_order(
    rake: int, pots: list[int]
) -> None:
    assume(rake <= sum(pots))
    shares = split_rake(rake, pots, PROPORTIONAL)
    assert sum(shares) == rake
    total = sum(pots)
    floors = [rake * amount // total if total else 0 for amount in pots]
    extra = [share - floor for share, floor in zip(shares, floors, strict=True)]
    assert all(0 <= share <= amount for share, amount in zip(shares, pots, strict=True))
    # One leftover unit each, to the first pots that hold chips, from the main pot.
    holding = [i for i, amount in enumerate(pots) if amount]
    left = rake - sum(floors)
    assert [extra[i] for i in holding] == [1] * left + [0] * (len(holding) - left)


@given(
    unit=st.sampled_from([1, 5, 25, 100]),
    units=st.integers(0, 100),
    pots=st.lists(st.integers(0, 100).map(lambda k: 100 * k), min_size=1, max_size=6),
)
def test_proportional_split_in_chip_units_pays_whole_units(unit: int, units: int, pots: list[int]) -> None:
    rake = units * unit
    assume(rake <= sum(pots))
    shares = split_rake(rake, pots, RakeRules(unit=unit))
    assert sum(shares) == rake
    assert all(share % unit == 0 and 0 <= share <= amount for share, amount in zip(shares, pots, strict=True))

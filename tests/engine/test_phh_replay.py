"""engine.phh_replay: mapping PHH to hand setups, repairs, and writing engine hands as PHH."""

from __future__ import annotations

import random
import typing

import pytest

from openpoker.engine import hand_events, hand_evolve, phh
from openpoker.engine.errors import NotYourTurn
from openpoker.engine.phh_replay import history_from_events, plan, replay_history
from tests.engine.players import VARIANTS, play_random, random_setup

SKIPPED_FOLD = """
variant = "NT"
antes = [0, 0, 0]
blinds_or_straddles = [1, 2, 0]
min_bet = 2
starting_stacks = [100, 100, 100]
actions = ["d dh p1 ????", "d dh p2 ????", "d dh p3 ????", "p3 cbr 6", "p2 cc", "d db 2c3d4h",
  "p2 cc", "p3 cc", "d db 5s", "p2 cc", "p3 cc", "d db 9s", "p2 cc", "p3 cc",
  "p2 sm AhAd", "p3 sm KhKd"]
"""


def test_every_event_type_has_an_evolve_handler() -> None:
    members = set(typing.get_args(hand_events.HandEvent))
    assert members == set(hand_evolve._APPLY)


def test_a_player_the_file_skips_checks_or_folds_as_pokerkit_repairs() -> None:
    hh = phh.load_phh(SKIPPED_FOLD)  # p1 (small blind) never acts: folded when p2 acts
    assert replay_history(hh) == (99, 107, 94)
    with pytest.raises(NotYourTurn):
        replay_history(hh, repair=False)


def test_heads_up_players_are_big_blind_then_button_and_blinds_read_reversed() -> None:
    hh = phh.load_phh(
        'variant = "NT"\nantes = [0, 0]\nblinds_or_straddles = [1, 2]\nmin_bet = 2\n'
        'starting_stacks = [50, 80]\nactions = ["d dh p1 ????", "d dh p2 ????", "p2 f"]\n'
    )
    p = plan(hh)
    assert p.seat_of == (1, 0)
    assert p.setup.button == 0
    assert [(x.seat, x.amount) for x in p.setup.posts] == [(1, 2), (0, 1)]
    assert replay_history(hh) == (51, 79)  # the button folded its small blind to the big blind


@pytest.mark.parametrize("variant", VARIANTS)
def test_engine_hands_written_as_phh_replay_to_the_same_stacks(variant: str) -> None:
    rng = random.Random(f"round trip {variant}")
    for k in range(40):
        setup = random_setup(rng, variant=variant, n=2 + k % 8)
        _, events, _ = play_random(setup, rng)
        history = history_from_events(events)
        again = phh.load_phh(phh.dump_phh(history))
        assert replay_history(again, repair=False) == history.finishing_stacks

"""Whole hands through the engine under the rake rules of each rules version (HOUSE_RULES.md,
Rake; docs/rules.md, Rules versions).

The seed example: a short all-in wins a main pot of 300 and another player a side pot of 1,800
at 5% (rake 105). Version 2 shares the rake by pot size (15 and 90), version 1 took it from the
main pot first (105 and 0). A table recorded under version 1, stored before the version and the
split existed, decodes to version 1 and replays to the same payouts.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from openpoker.engine import codec
from openpoker.engine import hand as H
from openpoker.engine.hand_events import (
    HandCommand,
    HandEnded,
    HandEvent,
    HandStarted,
    PotAwarded,
    SeatAmount,
)
from openpoker.engine.hand_setup import HandSetup
from openpoker.engine.rules import RULES_VERSION, Game, RakeRules, RakeSplit, Rules, Stakes, Structure
from tests.engine.handkit import bet, blinds, call, setup

RULES = Rules(
    game=Game.HOLDEM,
    structure=Structure.NO_LIMIT,
    stakes=Stakes.blinds(5, 10),
    rake=RakeRules(basis_points=500),  # 5%, no cap
)
VERSION_1 = replace(RULES, version=1, rake=replace(RULES.rake, split=RakeSplit.MAIN_POT_FIRST))

# Button 0, small blind 1 (100 chips, all-in for the main pot), big blind 2. Seat 1's aces win
# the main pot of 3 x 100; seat 2's kings beat seat 0's queens for the side pot of 2 x 900.
COMMANDS: tuple[HandCommand, ...] = (bet(0, 1000), call(1), call(2))


def _setup(rules: Rules) -> HandSetup:
    return setup(
        rules,
        {0: 1000, 1: 100, 2: 1000},
        button=0,
        posts=blinds(1, 2, 5, 10),
        hole={0: "QhQd", 1: "AhAd", 2: "KhKd"},
        board="2c7d9hTc4s",
    )


def _play(hand_setup: HandSetup) -> list[HandEvent]:
    events = list(H.start(hand_setup))
    state = H.fold(events)
    for command in COMMANDS:
        for event in H.decide(state, command):
            H.evolve(state, event)
            events.append(event)
    assert H.is_over(state)
    return events


def _pots(events: list[HandEvent]) -> list[tuple[int, int]]:
    return [(e.amount, e.rake) for e in events if isinstance(e, PotAwarded)]


def _ended(events: list[HandEvent]) -> HandEnded:
    ended = events[-1]
    assert isinstance(ended, HandEnded)
    return ended


def test_seed_pots_pay_15_and_90_and_the_side_pot_winner_is_paid_net_of_its_share() -> None:
    events = _play(_setup(RULES))
    assert _pots(events) == [(300, 15), (1800, 90)]
    ended = _ended(events)
    assert ended.rake == 105
    assert ended.payouts == (
        SeatAmount(seat=0, amount=0),
        SeatAmount(seat=1, amount=285),
        SeatAmount(seat=2, amount=1710),
    )


def test_version_1_takes_the_rake_from_the_main_pot_first() -> None:
    events = _play(_setup(VERSION_1))
    assert _pots(events) == [(300, 105), (1800, 0)]
    assert [p.amount for p in _ended(events).payouts] == [0, 195, 1800]


def _old_format(doc: dict[str, Any]) -> dict[str, Any]:
    """A stored event as written before rules version 2: its rules lack the fields added then."""
    rules = doc["rules"]
    for key in ("version", "currency_unit"):
        del rules[key]
    for key in ("unit", "split"):
        del rules["rake"][key]
    return doc


def test_a_version_1_hand_stored_in_the_old_format_replays_as_it_was_played() -> None:
    recorded = _play(_setup(VERSION_1))
    stored = [codec.encode(e) for e in recorded]
    assert stored[0]["type"] == "HandStarted"
    stored[0] = _old_format(stored[0])
    decoded = [codec.decode(doc) for doc in stored]
    started = decoded[0]
    assert isinstance(started, HandStarted)
    assert started.rules == VERSION_1
    assert decoded == recorded
    # Replayed from the decoded rules (as the replay tools re-decide a log): the same events.
    assert _play(replace(_setup(RULES), rules=started.rules)) == recorded


def test_a_new_table_records_the_current_version_and_split() -> None:
    doc = codec.encode(_play(_setup(RULES))[0])
    assert doc["rules"]["version"] == RULES_VERSION == 2
    assert doc["rules"]["rake"]["split"] == "proportional"

"""Long random table sessions: the invariants of ``engine.table_audit`` hold after every hand.

Bots (seeded ``random.Random`` in ``pokerctl.cmd_sim``) join, post or wait, sit out and in,
top up, leave during hands, disconnect, reconnect and time out, across every game, betting
structure, seat count and both button rules. The audit re-folds each log and checks chips,
turn order, button and blinds, owed blinds and the codec round trip at every hand boundary.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openpoker.engine.hand_events import AllInProtected, Folded
from openpoker.engine.hand_setup import PostKind
from openpoker.engine.rules import ButtonRule, Game, Rules, Stakes, Structure
from openpoker.engine.table_events import DecisionTimedOut, HandScheduled, PlayerLeft, TimeOutOutcome
from openpoker.pokerctl.__main__ import main
from openpoker.pokerctl.cmd_sim import play_session

RING = Rules(game=Game.HOLDEM, structure=Structure.NO_LIMIT, stakes=Stakes.blinds(1, 2), seats=9)


@settings(max_examples=12)
@given(seed=st.integers(0, 2**32))
def test_random_sessions_keep_every_invariant(seed: int) -> None:
    result = play_session(seed, 25, check_decide_is_pure=True)
    assert result.problems == []
    assert result.hands > 0


@pytest.mark.parametrize("button", list(ButtonRule))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_long_sessions_per_button_rule(button: ButtonRule, seed: int) -> None:
    result = play_session(seed, 150, rules=replace(RING, button=button))
    assert result.problems == []
    assert result.hands == 150
    scheduled = [e for e in result.events if isinstance(e, HandScheduled)]
    kinds = {p.kind for e in scheduled for p in e.plan.posts}
    # The sessions really exercise what they claim to check.
    assert {PostKind.LIVE_BIG_BLIND, PostKind.DEAD_SMALL_BLIND} <= kinds
    assert any(isinstance(e, PlayerLeft) for e in result.events)
    outcomes = {(e.outcome, e.uses_protection) for e in result.events if isinstance(e, DecisionTimedOut)}
    assert (TimeOutOutcome.PROTECTED, True) in outcomes
    assert any(o is TimeOutOutcome.FOLDED for o, _ in outcomes)
    assert any(isinstance(e, AllInProtected) for e in result.events)
    assert any(isinstance(e, Folded) for e in result.events)


def test_dead_button_sessions_leave_the_small_blind_dead_sometimes() -> None:
    result = play_session(7, 200, rules=replace(RING, seats=6, button=ButtonRule.DEAD))
    assert result.problems == []
    plans = [e.plan for e in result.events if isinstance(e, HandScheduled)]
    assert any(p.small_blind_player is None for p in plans)


def test_pokerctl_sim_prints_a_json_summary_and_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["sim", "--tables", "2", "--hands", "15", "--seed", "5", "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0
    assert summary["hands_played"] == 30
    assert summary["invariants"]["ok"] is True
    assert summary["hands_per_second"] > 0

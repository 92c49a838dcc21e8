"""``engine.table.to_snapshot`` / ``from_snapshot``: a restored table is the folded table.

Random bot sessions (``pokerctl.cmd_sim``, random rules: every game, structure, seat count,
button rule, antes and rake) are folded up to every hand boundary; the snapshot goes through
JSON and back, and the restored state must equal the fold (``TableState.snapshot()`` compares
every field) and go on exactly like it for the rest of the log.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openpoker.engine import table as tbl
from openpoker.engine.cards import deck_for_size
from openpoker.engine.hand_events import HandEnded
from openpoker.engine.rules import Game, Rules, Stakes, Structure
from openpoker.engine.seating import HandInProgress
from openpoker.engine.table_events import (
    OpenTable,
    PlayerDisconnected,
    PlayerLeft,
    SitDown,
    StartHand,
)
from openpoker.pokerctl.cmd_sim import play_session


def _round_trip(state: tbl.TableState) -> tbl.TableState:
    doc = json.loads(json.dumps(tbl.to_snapshot(state)))
    return tbl.from_snapshot(state.table_id, doc)


def _boundaries(log: list[tbl.TableLogEvent]) -> list[int]:
    """Log lengths at which no hand is live: after each ``HandEnded``."""
    return [i + 1 for i, e in enumerate(log) if isinstance(e, HandEnded)]


def _check_session(seed: int, hands: int) -> list[tbl.TableLogEvent]:
    log = play_session(seed, hands).events
    cuts = _boundaries(log)
    assert cuts, "the session played no hand"
    for cut in cuts:
        folded = tbl.fold(log[:cut])
        restored = _round_trip(folded)
        assert restored.snapshot() == folded.snapshot()
    # A restored table goes on like the folded one: fold the rest of the log onto both.
    middle = cuts[len(cuts) // 2]
    restored = _round_trip(tbl.fold(log[:middle]))
    for event in log[middle:]:
        tbl.evolve(restored, event)
    assert restored.snapshot() == tbl.fold(log).snapshot()
    return log


@pytest.mark.parametrize("seed", [3, 11, 29])
def test_sessions_restore_at_every_hand_boundary(seed: int) -> None:
    log = _check_session(seed, 60)
    # The sessions exercise the fields a snapshot must carry beyond the seats.
    assert any(isinstance(e, PlayerLeft) for e in log)
    assert any(isinstance(e, PlayerDisconnected) for e in log)


def test_protections_and_left_debts_survive() -> None:
    # Seeds whose sessions use disconnection protections and leave owing blinds.
    found_protection = found_debt = False
    for seed in range(40):
        log = play_session(seed, 40).events
        for cut in _boundaries(log):
            folded = tbl.fold(log[:cut])
            found_protection |= any(folded.protections.values())
            found_debt |= bool(folded.left_debts)
            if folded.protections or folded.left_debts:
                assert _round_trip(folded).snapshot() == folded.snapshot()
        if found_protection and found_debt:
            break
    assert found_protection
    assert found_debt


@settings(max_examples=10)
@given(seed=st.integers(0, 2**32))
def test_random_sessions_restore(seed: int) -> None:
    _check_session(seed, 15)


def test_a_live_hand_is_not_snapshotted() -> None:
    rules = Rules(game=Game.HOLDEM, structure=Structure.NO_LIMIT, stakes=Stakes.blinds(1, 2), seats=6)
    log: list[tbl.TableLogEvent] = []
    state: tbl.TableState | None = None
    commands: list[tbl.Command] = [
        OpenTable(table_id="t", rules=rules),
        SitDown(seat=0, player="a", buy_in=200),
        SitDown(seat=1, player="b", buy_in=200),
    ]
    for command in commands:
        new = tbl.decide(state, command)
        log += new
        state = tbl.fold(log)
    assert state is not None
    before = _round_trip(state)
    assert before.snapshot() == state.snapshot()
    log += tbl.decide(state, StartHand(hand_id="h1", deck=deck_for_size(52)))
    live = tbl.fold(log)
    with pytest.raises(HandInProgress):
        tbl.to_snapshot(live)


def test_restored_state_is_independent_of_the_document() -> None:
    log = play_session(5, 10).events
    folded = tbl.fold(log[: _boundaries(log)[-1]])
    doc = json.loads(json.dumps(tbl.to_snapshot(folded)))
    restored = tbl.from_snapshot(folded.table_id, doc)
    doc["protections"].clear()
    doc["seats"].clear()
    assert restored.snapshot() == folded.snapshot()

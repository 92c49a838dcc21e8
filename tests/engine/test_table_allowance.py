"""An operator's reset of a player's all-in allowance (seed 000: at most 2 all-ins due to
disconnection per 24 hours; "Members wishing to have their All-in Limits reset may contact our
Support Department"): ``ResetAllInAllowance`` decided by the table, ``AllInAllowanceReset``
folded, stored, snapshotted and audited like every table event; and the protections the player
used at other tables (``TimeOut.used_elsewhere``, from the shell's site-wide record), which count
toward the same limit and are recorded in ``DecisionTimedOut``."""

from __future__ import annotations

import json

from openpoker.engine import codec, hand
from openpoker.engine import table as tbl
from openpoker.engine.hand_events import ActionKind
from openpoker.engine.table_audit import audit
from openpoker.engine.table_events import (
    AllInAllowanceReset,
    DecisionTimedOut,
    Disconnect,
    ResetAllInAllowance,
    TimeOut,
    TimeOutOutcome,
)
from tests.engine.test_table import HOUR, Table

PROTECTED, FOLDED = TimeOutOutcome.PROTECTED, TimeOutOutcome.FOLDED


def _three_players() -> Table:
    t = Table()
    for seat in (0, 1, 2):
        t.sit(seat, buy_in=200)
    return t


def _to_small_blind_of_p1(t: Table) -> None:
    """Play folded hands until seat 1 is the next hand's small blind."""
    while (tbl.next_hand(t.s) or t.plan().plan).positions.small_blind != 1:
        t.start()
        t.fold_to_big_blind()


def _disconnected_time_out(t: Table, at_ms: int, elsewhere: int = 0) -> DecisionTimedOut:
    """A hand in which p1, the small blind (chips in), is disconnected and times out (having
    used ``elsewhere`` protections at other tables); the rest check or call it down."""
    _to_small_blind_of_p1(t)
    t.start()
    while t.to_act() != 1:
        t.act(ActionKind.CALL)
    if not t.s.seats[1].disconnected:
        t.run(Disconnect(seat=1, at_ms=at_ms - 1))
    fact = t.run(TimeOut(seat=1, at_ms=at_ms, used_elsewhere=elsewhere))[0]
    assert isinstance(fact, DecisionTimedOut)
    while t.s.hand is not None:
        legal = hand.legal_actions(t.s.hand, t.to_act() or 0)
        assert legal is not None
        t.act(ActionKind.CHECK if legal.can_check else ActionKind.CALL)
    return fact


def _outcome(fact: DecisionTimedOut) -> tuple[TimeOutOutcome, bool]:
    return fact.outcome, fact.uses_protection


def test_a_reset_clears_the_count_and_the_next_disconnection_is_protected_again() -> None:
    t = _three_players()
    assert _outcome(_disconnected_time_out(t, 1 * HOUR)) == (PROTECTED, True)
    assert _outcome(_disconnected_time_out(t, 2 * HOUR)) == (PROTECTED, True)
    assert tbl.protections_used(t.s, "p1", 3 * HOUR) == 2
    assert _outcome(_disconnected_time_out(t, 3 * HOUR)) == (FOLDED, False)  # the third: folded

    events = t.run(ResetAllInAllowance(player="p1", at_ms=4 * HOUR))
    assert events == [AllInAllowanceReset(player="p1", at_ms=4 * HOUR, cleared=2)]
    assert tbl.protections_used(t.s, "p1", 4 * HOUR) == 0
    assert "p1" not in t.s.protections

    # Within the same 24 hours, two more all-ins due to disconnection, then folded again.
    assert _outcome(_disconnected_time_out(t, 5 * HOUR)) == (PROTECTED, True)
    assert _outcome(_disconnected_time_out(t, 6 * HOUR)) == (PROTECTED, True)
    assert _outcome(_disconnected_time_out(t, 7 * HOUR)) == (FOLDED, False)
    t.check_log()


def test_nothing_to_reset_decides_no_event() -> None:
    t = _three_players()
    assert t.run(ResetAllInAllowance(player="p1", at_ms=HOUR)) == []  # never protected
    assert t.run(ResetAllInAllowance(player="nobody", at_ms=HOUR)) == []  # never at this table
    _disconnected_time_out(t, 1 * HOUR)
    # A protection older than the window no longer counts: the allowance is already whole.
    assert t.run(ResetAllInAllowance(player="p1", at_ms=1 * HOUR + 24 * HOUR)) == []
    assert t.run(ResetAllInAllowance(player="p1", at_ms=1 * HOUR + 24 * HOUR - 1)) == [
        AllInAllowanceReset(player="p1", at_ms=25 * HOUR - 1, cleared=1)
    ]
    t.check_log()


def test_a_reset_is_the_players_alone_and_may_come_during_a_hand() -> None:
    t = _three_players()
    _disconnected_time_out(t, 1 * HOUR)
    t.s.protections["p2"] = [1 * HOUR]  # as if p2 had used one too (the state is the test's)
    t.start()
    assert t.s.hand is not None
    before = t.s.snapshot()
    events = tbl.decide(t.s, ResetAllInAllowance(player="p1", at_ms=2 * HOUR))
    assert t.s.snapshot() == before, "decide changed the state"
    for e in events:
        tbl.evolve(t.s, e)
    assert t.s.hand is not None  # the hand goes on
    assert tbl.protections_used(t.s, "p1", 2 * HOUR) == 0
    assert tbl.protections_used(t.s, "p2", 2 * HOUR) == 1


def test_the_event_round_trips_through_the_codec_the_fold_and_a_snapshot() -> None:
    t = _three_players()
    _disconnected_time_out(t, 1 * HOUR)
    _disconnected_time_out(t, 2 * HOUR)
    [reset] = t.run(ResetAllInAllowance(player="p1", at_ms=3 * HOUR))
    doc = codec.encode(reset)
    assert doc == {"type": "AllInAllowanceReset", "player": "p1", "at_ms": 3 * HOUR, "cleared": 2}
    assert codec.decode(json.loads(json.dumps(doc))) == reset

    decoded = [codec.decode(json.loads(json.dumps(codec.encode(e)))) for e in t.log]
    assert decoded == t.log
    assert tbl.fold(decoded).snapshot() == t.s.snapshot()
    restored = tbl.from_snapshot("t1", json.loads(json.dumps(tbl.to_snapshot(t.s))))
    assert restored.snapshot() == t.s.snapshot()
    assert tbl.protections_used(restored, "p1", 3 * HOUR) == 0
    # The audit re-folds the log with the reset in it (event by event, whole, through the codec).
    assert audit(t.log) == []


def test_a_snapshot_taken_before_the_reset_goes_on_like_the_fold() -> None:
    t = _three_players()
    _disconnected_time_out(t, 1 * HOUR)
    restored = tbl.from_snapshot("t1", json.loads(json.dumps(tbl.to_snapshot(t.s))))
    events = t.run(ResetAllInAllowance(player="p1", at_ms=2 * HOUR))
    assert tbl.decide(restored, ResetAllInAllowance(player="p1", at_ms=2 * HOUR)) == events
    for e in events:
        tbl.evolve(restored, e)
    assert restored.snapshot() == t.s.snapshot()


# -- protections used at other tables (seed 000: "a total of no more than 2 All-ins due to
# disconnection within any 24-hour period", the member's, not the table's) ---------------------


def test_protections_used_elsewhere_count_toward_the_limit() -> None:
    t = _three_players()
    # One used at another table: one more here, then folded.
    first = _disconnected_time_out(t, 1 * HOUR, elsewhere=1)
    assert (first.outcome, first.uses_protection, first.used_elsewhere) == (PROTECTED, True, 1)
    second = _disconnected_time_out(t, 2 * HOUR, elsewhere=1)
    assert (second.outcome, second.uses_protection, second.used_elsewhere) == (FOLDED, False, 1)
    # Both used elsewhere: folded at once, although this table never protected the player.
    t2 = _three_players()
    assert _outcome(_disconnected_time_out(t2, 1 * HOUR, elsewhere=2)) == (FOLDED, False)
    assert tbl.protections_used(t2.s, "p1", 1 * HOUR) == 0
    # The others' protections expired there (the shell counts 0): protected again.
    assert _outcome(_disconnected_time_out(t2, 2 * HOUR, elsewhere=0)) == (PROTECTED, True)
    t.check_log()
    t2.check_log()


def test_a_connected_player_or_one_with_nothing_in_is_not_concerned_by_uses_elsewhere() -> None:
    t = _three_players()
    _to_small_blind_of_p1(t)
    t.start()
    while t.to_act() != 1:
        t.act(ActionKind.CALL)
    fact = t.run(TimeOut(seat=1, at_ms=HOUR, used_elsewhere=2))[0]
    assert isinstance(fact, DecisionTimedOut)
    assert (fact.outcome, fact.uses_protection, fact.disconnected) == (PROTECTED, False, False)


def test_an_old_log_without_the_field_decodes_and_replays_as_played() -> None:
    t = _three_players()
    for hour in (1, 2, 3):
        _disconnected_time_out(t, hour * HOUR)
    docs = [json.loads(json.dumps(codec.encode(e))) for e in t.log]
    for doc in docs:  # as written before the field existed
        if doc["type"] == "DecisionTimedOut":
            assert doc.pop("used_elsewhere") == 0
    old = [codec.decode(doc) for doc in docs]
    assert old == t.log
    assert [_outcome(e) for e in old if isinstance(e, DecisionTimedOut)] == [
        (PROTECTED, True),
        (PROTECTED, True),
        (FOLDED, False),
    ]
    assert tbl.fold(old).snapshot() == t.s.snapshot()
    assert codec.decode({"type": "TimeOut", "seat": 1, "at_ms": 5}) == TimeOut(seat=1, at_ms=5)
    assert audit(old) == []


def _redecided(log: list[tbl.TableLogEvent]) -> list[tbl.TableLogEvent]:
    """Every time-out of ``log`` decided again from the log alone (the state folded from the
    events before it, the fact of uses elsewhere from the event): the events that follow."""
    out: list[tbl.TableLogEvent] = []
    for i, e in enumerate(log):
        if isinstance(e, DecisionTimedOut):
            state = tbl.fold(log[:i])
            command = TimeOut(seat=e.seat, at_ms=e.at_ms, used_elsewhere=e.used_elsewhere)
            again = tbl.decide(state, command)
            assert again == log[i : i + len(again)]
            out.extend(again[:1])
    return out


def test_a_replay_from_the_log_decides_every_time_out_the_same() -> None:
    t = _three_players()
    _disconnected_time_out(t, 1 * HOUR, elsewhere=1)  # protected
    _disconnected_time_out(t, 2 * HOUR, elsewhere=1)  # folded: one here, one elsewhere
    _disconnected_time_out(t, 3 * HOUR, elsewhere=0)  # protected: one here, none elsewhere
    decoded = [codec.decode(json.loads(json.dumps(codec.encode(e)))) for e in t.log]
    facts = _redecided(decoded)
    assert [(_outcome(f), f.used_elsewhere) for f in facts if isinstance(f, DecisionTimedOut)] == [
        ((PROTECTED, True), 1),
        ((FOLDED, False), 1),
        ((PROTECTED, True), 0),
    ]
    # Without the recorded fact the second time-out would have been decided otherwise.
    i = next(i for i, e in enumerate(t.log) if isinstance(e, DecisionTimedOut) and e.at_ms == 2 * HOUR)
    alone = tbl.decide(tbl.fold(t.log[:i]), TimeOut(seat=1, at_ms=2 * HOUR))
    assert isinstance(alone[0], DecisionTimedOut)
    assert alone[0].outcome is PROTECTED


def test_protection_at_stake_names_the_player_the_shell_must_count_for() -> None:
    """The query the shell asks before a time-out: whose site-wide record to read."""
    t = _three_players()
    assert tbl.protection_at_stake(t.s, 1) is None  # no hand
    _to_small_blind_of_p1(t)
    t.start()
    while t.to_act() != 1:
        assert tbl.protection_at_stake(t.s, 1) is None  # not their turn
        t.act(ActionKind.CALL)
    assert tbl.protection_at_stake(t.s, 1) is None  # connected: protected without counting
    t.run(Disconnect(seat=1, at_ms=HOUR))
    assert tbl.protection_at_stake(t.s, 1) == "p1"
    assert tbl.protection_at_stake(t.s, 2) is None

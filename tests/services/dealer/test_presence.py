"""The dealer turns presence facts into ReportConnection: only for seated players whose log
differs, once per fact (retried under the same request id), nothing after a restart until the
stream changes again; a reconnection during one's turn extends the clock; a disconnected player
is protected twice per 24 h and folded the third time."""

from __future__ import annotations

import datetime as dt
import itertools

from engine.rules import TimeRules
from engine.table_events import (
    DecisionTimedOut,
    PlayerDisconnected,
    PlayerReconnected,
    TimeOutOutcome,
)
from services.dealer.presence import PresenceBook
from services.table.presence import PresenceFact
from tests.services.dealer.fakes import FakeTable, failed, log_events, seat_to_act
from tests.services.dealer.rig import SLOW, Rig, rules, until

T = "t1"
_SEQ = itertools.count(1)


def fact(
    player: str, connected: bool, *, table: str = T, at_ms: int | None = None, instance: str = "a"
) -> PresenceFact:
    seq = next(_SEQ)
    now = int(dt.datetime.now(dt.UTC).timestamp() * 1000)
    return PresenceFact(
        table_id=table,
        player=player,
        connected=connected,
        at_ms=now + seq if at_ms is None else at_ms,
        instance=instance,
        seq=seq,
    )


def facts_of(rig: Rig, kind: type) -> list:  # type: ignore[type-arg]
    return [e for e in log_events(rig.table, T) if isinstance(e, kind)]


def reports(rig: Rig) -> list[str]:
    return [rid for method, rid in rig.table.calls if method == "ReportConnection"]


def test_book_keeps_the_latest_fact_and_owes_only_what_the_log_lacks() -> None:
    table = FakeTable(lambda *_: None)
    table.open(T, rules())
    table.sit(T, 0, "ann", 100)
    table.sit(T, 1, "bob", 100)
    state = table.state(T)
    book = PresenceBook()
    assert book.due(state) == []
    newer = fact("ann", False, at_ms=2000)
    assert book.observe(newer)
    assert not book.observe(newer)  # a repeat
    assert not book.observe(fact("ann", True, at_ms=1000))  # late: an earlier observation
    assert book.observe(fact("bob", True, at_ms=3000))  # bob is connected in the log already
    assert book.observe(fact("zed", False, at_ms=3000))  # not seated
    due = book.due(state)
    assert [(r.player, r.connected, r.at_ms) for r, _ in due] == [("ann", False, 2000)]
    state.seats[0].disconnected = True  # the log shows it now
    assert book.due(state) == []
    book.forget("ann", newer)
    assert len(book) == 2


async def test_a_fact_is_reported_once_and_only_for_seated_players() -> None:
    rig = Rig()
    rig.app.go_live()
    rig.table.open(T, rules(time=SLOW))
    rig.seat(T, {0: "ann", 1: "bob"})
    rig.table.fail_next["ReportConnection"] = failed("table", "ReportConnection", "x", code="UNAVAILABLE")
    gone = fact("ann", False)
    rig.app.observe_presence(gone)
    rig.app.observe_presence(fact("zed", False))  # watching, not seated
    rig.app.observe_presence(fact("ann", False, table="nowhere"))  # a table the dealer never saw
    await until(lambda: len(facts_of(rig, PlayerDisconnected)) == 1, what="ann disconnected")
    (event,) = facts_of(rig, PlayerDisconnected)
    assert (event.player, event.at_ms) == ("ann", gone.at_ms)
    sent = reports(rig)
    assert len(sent) == 2
    assert sent[0] == sent[1]  # the unavailable call retried, same request id
    rig.app.observe_presence(gone)  # a duplicate
    rig.app.observe_presence(fact("ann", False))  # a second stream ending: the log agrees
    await until(lambda: rig.app.connection_reports == 1, what="the report counted")
    assert reports(rig) == sent
    assert "nowhere" not in rig.app.drivers
    back = fact("ann", True)
    rig.app.observe_presence(back)
    await until(lambda: len(facts_of(rig, PlayerReconnected)) == 1, what="ann reconnected")
    assert not rig.table.state(T).seats[0].disconnected
    await rig.app.stop()


async def test_after_a_restart_the_log_stands_until_the_stream_changes() -> None:
    rig = Rig()
    rig.app.go_live()
    rig.table.open(T, rules(time=SLOW))
    rig.seat(T, {0: "ann", 1: "bob"})
    rig.app.observe_presence(fact("ann", False))
    await until(lambda: len(facts_of(rig, PlayerDisconnected)) == 1, what="ann disconnected")
    reported = len(reports(rig))
    await rig.restart()
    before = len(rig.table.calls)
    # The new dealer has stepped past its presence check: the hand's clock runs.
    await until(lambda: rig.app.drivers[T].clock is not None, what="the restarted dealer's clock")
    assert len(reports(rig)) == reported  # nothing new reported
    assert rig.table.state(T).seats[0].disconnected
    rig.app.observe_presence(fact("ann", True))
    await until(lambda: len(facts_of(rig, PlayerReconnected)) == 1, what="ann reconnected")
    assert len([c for c in rig.table.calls[before:] if c[0] == "ReportConnection"]) == 1
    await rig.app.stop()


async def test_reconnecting_during_ones_turn_extends_the_clock() -> None:
    extra = 20_000
    rig = Rig()
    rig.app.go_live()
    rig.table.open(
        T, rules(time=TimeRules(decision_ms=30_000, countdown_ms=30_000, reconnect_extra_ms=extra))
    )
    rig.seat(T, {0: "ann", 1: "bob"})
    players = {0: "ann", 1: "bob"}
    driver = rig.app.drivers[T]
    await until(lambda: driver.clock is not None, what="a decision clock")
    seat = seat_to_act(rig.table, T)
    assert seat is not None
    rig.app.observe_presence(fact(players[seat], False))
    await until(lambda: len(facts_of(rig, PlayerDisconnected)) == 1, what="disconnected")
    (info,) = rig.app.active_hands()
    before = info.action_deadline
    assert before is not None
    rig.app.observe_presence(fact(players[seat], True))
    await until(lambda: len(facts_of(rig, PlayerReconnected)) == 1, what="reconnected")
    (event,) = facts_of(rig, PlayerReconnected)
    assert event.extra_ms == extra

    def extended() -> bool:
        (now,) = rig.app.active_hands()
        return now.action_deadline is not None and now.action_deadline > before

    await until(extended, what="the clock extended")
    (after,) = rig.app.active_hands()
    assert after.seat_to_act == seat
    assert after.action_deadline is not None
    gained = (after.action_deadline - before).total_seconds()
    assert abs(gained - extra / 1000) < 0.01
    await rig.app.stop()


async def test_a_disconnected_player_is_protected_twice_then_folded() -> None:
    rig = Rig()
    rig.app.go_live()
    rig.table.open(T, rules())  # 20 ms clocks
    rig.seat(T, {0: "ann", 1: "bob"})
    rig.app.observe_presence(fact("ann", False))

    def ann_timeouts() -> list[DecisionTimedOut]:
        return [e for e in facts_of(rig, DecisionTimedOut) if e.player == "ann"]

    await until(lambda: len(ann_timeouts()) >= 3, what="three time-outs of ann", within=30)
    await rig.app.set_paused(T, True)
    first = ann_timeouts()[:3]
    assert all(e.disconnected for e in first)
    # Heads-up, ann has posted a blind whenever she is to act, so only the allowance decides.
    assert [(e.outcome, e.uses_protection) for e in first] == [
        (TimeOutOutcome.PROTECTED, True),
        (TimeOutOutcome.PROTECTED, True),
        (TimeOutOutcome.FOLDED, False),
    ]
    # Connected, bob's time-outs never count against an allowance.
    bob = [e for e in facts_of(rig, DecisionTimedOut) if e.player == "bob"]
    assert bob
    assert all(not e.disconnected and not e.uses_protection for e in bob)
    await rig.app.stop()

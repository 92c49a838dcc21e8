"""The dealer turns presence reports into ReportConnection: a player is connected while any live
table-service instance reports them; an instance silent for the TTL loses its players. Only
seated players whose log differs are reported, once per verdict (retried under the same request
id), nothing after a restart until a report says otherwise; a reconnection during one's turn
extends the clock; a disconnected player is protected twice per 24 h and folded the third time.

``PresenceBook`` is pure: the tests pass the time (monotonic seconds) themselves."""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools

from openpoker.engine.rules import TimeRules
from openpoker.engine.table_events import (
    DecisionTimedOut,
    PlayerDisconnected,
    PlayerReconnected,
    TimeOutOutcome,
)
from openpoker.presence import PresenceReport
from openpoker.services.dealer.app import DealerSettings
from openpoker.services.dealer.presence import Hearing, PresenceBook
from tests.helpers.waiting import until
from tests.services.dealer.fakes import FakeTable, failed, log_events, seat_to_act
from tests.services.dealer.rig import SLOW, Rig, rules

T = "t1"
_AT = itertools.count(1)


class Instance:
    """One table-service process as the dealer hears it: its reports carry a growing seq."""

    def __init__(self, name: str = "a", run: str = "r1") -> None:
        self.name = name
        self.run = run
        self.seq = 0

    def report(self, *players: str, table: str = T, at_ms: int | None = None) -> PresenceReport:
        self.seq += 1
        now = int(dt.datetime.now(dt.UTC).timestamp() * 1000) + next(_AT)
        return PresenceReport(
            table_id=table,
            instance=self.name,
            run=self.run,
            seq=self.seq,
            at_ms=now if at_ms is None else at_ms,
            players=frozenset(players),
        )


def connected(book: PresenceBook, player: str) -> bool | None:
    v = book.verdict(player)
    return None if v is None else v.connected


def facts_of(rig: Rig, kind: type) -> list:  # type: ignore[type-arg]
    return [e for e in log_events(rig.table, T) if isinstance(e, kind)]


def reports(rig: Rig) -> list[str]:
    return [rid for method, rid in rig.table.calls if method == "ReportConnection"]


def test_a_player_is_connected_while_any_live_instance_reports_them() -> None:
    book = PresenceBook(ttl=5.0)
    a, b = Instance("a"), Instance("b")
    assert book.observe(a.report("ann", at_ms=100), now=0.0)
    assert connected(book, "ann") is True
    assert not book.observe(b.report("ann", at_ms=110), now=0.1)  # a second source: no news
    assert book.sources() == [("a", "r1"), ("b", "r1")]
    # ann's stream on b ends: a still reports her.
    assert not book.observe(b.report(at_ms=120), now=0.2)
    assert connected(book, "ann") is True
    assert book.sources() == [("a", "r1")]  # b names nobody now
    # ... and when it ends on a too, she is gone, since the time a observed it.
    assert book.observe(a.report(at_ms=130), now=0.3)
    v = book.verdict("ann")
    assert v is not None
    assert (v.connected, v.at_ms, v.cause) == (False, 130, "a/r1/2")
    assert book.sources() == []


def test_a_duplicate_or_late_report_of_a_source_changes_nothing() -> None:
    book = PresenceBook(ttl=5.0)
    a = Instance("a")
    first = a.report("ann", at_ms=100)
    second = a.report(at_ms=200)
    assert book.observe(first, now=0.0)
    assert book.observe(second, now=0.1)
    assert not book.observe(first, now=0.2)  # late: the source said more since
    assert not book.observe(second, now=0.3)  # a duplicate
    assert connected(book, "ann") is False


def test_a_silent_instance_expires_after_the_ttl_and_its_players_with_it() -> None:
    book = PresenceBook(ttl=5.0)
    a, b = Instance("a"), Instance("b")
    book.observe(a.report("ann", "bob", at_ms=100), now=10.0)
    book.observe(b.report("bob", at_ms=100), now=12.0)
    assert book.next_deadline() == 15.0
    # Heartbeats keep a source alive: each report moves its deadline.
    assert not book.observe(a.report("ann", "bob", at_ms=200), now=14.0)
    assert not book.expire(now=16.9, at_ms=999)
    assert book.sources() == [("a", "r1"), ("b", "r1")]
    # a is killed: nothing more from it (its deadline is 19). bob is still on b (until 17 + 5).
    assert not book.observe(b.report("bob", at_ms=300), now=17.0)
    assert book.expire(now=19.0, at_ms=1900)
    assert book.sources() == [("b", "r1")]
    ann = book.verdict("ann")
    assert ann is not None
    assert (ann.connected, ann.at_ms, ann.cause) == (False, 1900, "expired/a/r1/2")
    assert connected(book, "bob") is True
    assert not book.expire(now=21.9, at_ms=2190)
    assert book.expire(now=22.0, at_ms=2200)
    assert connected(book, "bob") is False
    assert book.next_deadline() is None


def test_a_source_past_its_deadline_counts_for_nobody_even_before_the_sweep() -> None:
    book = PresenceBook(ttl=1.0)
    a, b = Instance("a"), Instance("b")
    book.observe(a.report("ann"), now=0.0)
    book.observe(b.report("ann"), now=0.5)
    # b's stream ends at 1.2: a is past its deadline (1.0), not yet swept, and counts for nothing.
    assert book.observe(b.report(at_ms=1200), now=1.2)
    assert connected(book, "ann") is False
    assert book.expire(now=1.2, at_ms=1300) is False  # a's expiry: ann is disconnected already


def test_a_restarted_instance_is_a_new_source_and_the_dead_run_expires() -> None:
    book = PresenceBook(ttl=5.0)
    old, new = Instance("table-1", run="r1"), Instance("table-1", run="r2")
    for _ in range(3):
        book.observe(old.report("ann"), now=0.0)
    # The new process starts counting at seq 1 again, watched by bob only: not a late report.
    assert book.observe(new.report("bob"), now=1.0)
    assert book.expire(now=5.0, at_ms=5000)
    assert connected(book, "ann") is False
    assert connected(book, "bob") is True


def test_players_never_seen_connected_have_no_verdict() -> None:
    book = PresenceBook(ttl=5.0)
    a = Instance("a")
    assert not book.observe(a.report(), now=0.0)
    assert book.verdict("ann") is None
    assert len(book) == 0


def test_silence_is_judged_only_after_a_ttl_of_continuous_hearing() -> None:
    hearing = Hearing(ttl=5.0, now=100.0)
    assert not hearing.may_judge(104.9)  # just started: a live instance may not have spoken yet
    assert hearing.may_judge(105.0)
    hearing.deaf()  # the dealer's own NATS connection failed: silence says nothing
    assert not hearing.may_judge(200.0)  # hearing again from 200
    assert not hearing.may_judge(204.0)
    assert hearing.may_judge(205.0)


def test_the_book_owes_only_what_the_log_lacks_once_per_verdict() -> None:
    table = FakeTable(lambda *_: None)
    table.open(T, rules())
    table.sit(T, 0, "ann", 100)
    table.sit(T, 1, "bob", 100)
    state = table.state(T)
    book = PresenceBook(ttl=5.0)
    a = Instance("a")
    assert book.due(state) == []
    book.observe(a.report("ann", "bob", "zed", at_ms=1000), now=0.0)
    assert book.due(state) == []  # connected, as the log says; zed is not seated
    book.observe(a.report("bob", at_ms=2000), now=0.1)
    due = book.due(state)
    assert [(r.player, r.connected, r.at_ms) for r, _ in due] == [("ann", False, 2000)]
    # Heartbeats repeat the state: the same verdict, the same request.
    book.observe(a.report("bob", at_ms=4000), now=2.0)
    assert [r.step for r, _ in book.due(state)] == [due[0][0].step]
    state.seats[0].disconnected = True  # the log shows it now
    assert book.due(state) == []
    state.seats[0].disconnected = False  # (say the table refused it for good)
    book.refused("ann", due[0][1])
    assert book.due(state) == []
    book.observe(a.report("bob", at_ms=6000), now=4.0)
    assert book.due(state) == []  # a heartbeat does not revive a refused verdict
    book.observe(a.report("ann", "bob", at_ms=7000), now=5.0)
    book.observe(a.report("bob", at_ms=8000), now=6.0)  # a new verdict is owed again
    assert [(r.player, r.connected, r.at_ms) for r, _ in book.due(state)] == [("ann", False, 8000)]


async def test_a_verdict_is_reported_once_and_only_for_seated_players() -> None:
    rig = Rig()
    rig.app.go_live()
    rig.table.open(T, rules(time=SLOW))
    rig.seat(T, {0: "ann", 1: "bob"})
    rig.table.fail_next["ReportConnection"] = failed("table", "ReportConnection", "x", code="UNAVAILABLE")
    a, b = Instance("a"), Instance("b")
    rig.app.observe_presence(a.report("ann", "zed"))  # zed watches, not seated
    rig.app.observe_presence(b.report("ann", table="nowhere"))  # a table the dealer never saw
    gone = a.report()
    rig.app.observe_presence(gone)
    await until(lambda: len(facts_of(rig, PlayerDisconnected)) == 1, what="ann disconnected")
    (event,) = facts_of(rig, PlayerDisconnected)
    assert (event.player, event.at_ms) == ("ann", gone.at_ms)
    sent = reports(rig)
    assert len(sent) == 2
    assert sent[0] == sent[1]  # the unavailable call retried, same request id
    rig.app.observe_presence(gone)  # a duplicate
    rig.app.observe_presence(a.report())  # a heartbeat of nobody: the log agrees
    await until(lambda: rig.app.connection_reports == 1, what="the report counted")
    assert reports(rig) == sent
    assert "nowhere" not in rig.app.drivers
    back = b.report("ann")
    rig.app.observe_presence(back)
    await until(lambda: len(facts_of(rig, PlayerReconnected)) == 1, what="ann reconnected")
    assert not rig.table.state(T).seats[0].disconnected
    assert len(reports(rig)) == 3
    await rig.app.stop()


async def test_a_player_watching_on_two_instances_stays_connected_when_one_stream_ends() -> None:
    rig = Rig()
    rig.app.go_live()
    rig.table.open(T, rules(time=SLOW))
    rig.seat(T, {0: "ann", 1: "bob"})
    a, b = Instance("a"), Instance("b")
    rig.app.observe_presence(a.report("ann"))
    rig.app.observe_presence(b.report("ann", "bob"))
    rig.app.observe_presence(b.report())  # both streams on b end: bob is gone, ann is on a
    await until(lambda: len(facts_of(rig, PlayerDisconnected)) == 1, what="bob disconnected")
    assert [e.player for e in facts_of(rig, PlayerDisconnected)] == ["bob"]
    assert not rig.table.state(T).seats[0].disconnected
    await rig.app.stop()


async def test_the_players_of_a_silent_instance_are_disconnected_after_the_ttl() -> None:
    rig = Rig()
    rig.app.settings = DealerSettings(retry_delay=0.01, max_retry_delay=0.05, presence_ttl=0.05)
    rig.app.go_live()
    rig.table.open(T, rules(time=SLOW))
    rig.seat(T, {0: "ann", 1: "bob"})
    rig.app.observe_presence(Instance("a").report("ann"))
    rig.app.expire_presence()  # within the TTL: nothing
    assert rig.app.drivers[T].presence.sources() == [("a", "r1")]
    await asyncio.sleep(0.06)
    rig.app.expire_presence()
    await until(lambda: len(facts_of(rig, PlayerDisconnected)) == 1, what="ann disconnected")
    assert [e.player for e in facts_of(rig, PlayerDisconnected)] == ["ann"]
    await rig.app.stop()


async def test_after_a_restart_the_log_stands_until_a_report_says_otherwise() -> None:
    rig = Rig()
    rig.app.go_live()
    rig.table.open(T, rules(time=SLOW))
    rig.seat(T, {0: "ann", 1: "bob"})
    a = Instance("a")
    rig.app.observe_presence(a.report("ann"))
    rig.app.observe_presence(a.report())
    await until(lambda: len(facts_of(rig, PlayerDisconnected)) == 1, what="ann disconnected")
    reported = len(reports(rig))
    await rig.restart()
    before = len(rig.table.calls)
    # The new dealer has stepped past its presence check: the hand's clock runs.
    await until(lambda: rig.app.drivers[T].clock is not None, what="the restarted dealer's clock")
    assert len(reports(rig)) == reported  # nothing new reported
    assert rig.table.state(T).seats[0].disconnected
    # A heartbeat of another instance shows ann watching again.
    rig.app.observe_presence(Instance("b").report("ann", "bob"))
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
    a = Instance("a")
    rig.app.observe_presence(a.report(*players.values()))
    rig.app.observe_presence(a.report(players[1 - seat]))
    await until(lambda: len(facts_of(rig, PlayerDisconnected)) == 1, what="disconnected")
    (info,) = rig.app.active_hands()
    before = info.action_deadline
    assert before is not None
    rig.app.observe_presence(a.report(*players.values()))
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
    a = Instance("a")
    rig.app.observe_presence(a.report("ann"))
    rig.app.observe_presence(a.report())

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

"""ReportConnection carries the table version the dealer judged the fact against: a table that
has moved on refuses it (STALE_VERSION) and the dealer judges the fact again on the newer log,
so a fact never acts on a state it was not judged against."""

from __future__ import annotations

import datetime as dt

from openpoker.engine.table_events import PlayerDisconnected, PlayerSatOut, SitOut
from openpoker.presence import PresenceReport
from tests.helpers.waiting import until
from tests.services.dealer.fakes import log_events
from tests.services.dealer.rig import SLOW, Rig, rules

T = "t1"


class Instance:
    """One table-service instance as the dealer hears it (its reports carry a growing seq)."""

    def __init__(self) -> None:
        self.seq = 0

    def report(self, *players: str) -> PresenceReport:
        self.seq += 1
        now = int(dt.datetime.now(dt.UTC).timestamp() * 1000) + self.seq
        return PresenceReport(
            table_id=T, instance="a", run="r1", seq=self.seq, at_ms=now, players=frozenset(players)
        )


async def test_a_fact_judged_on_an_older_log_is_judged_again_and_reported_once() -> None:
    rig = Rig()
    rig.app.go_live()
    rig.table.open(T, rules(time=SLOW))
    rig.seat(T, {0: "ann", 1: "bob", 2: "cy"})
    await rig.app.set_paused(T, True)  # no hands: only the connection facts move the log
    a = Instance()
    rig.app.observe_presence(a.report("ann", "bob", "cy"))
    # Between the dealer's decision and the table's, bob sits out: the table is one version on.

    def bob_sits_out() -> None:
        rig.table.decide(T, SitOut(seat=1))

    rig.table.before_report = bob_sits_out
    rig.app.observe_presence(a.report("bob", "cy"))  # ann's stream ended
    await until(lambda: rig.app.connection_reports == 1, what="ann's disconnection reported")
    sent = [rid for method, rid in rig.table.calls if method == "ReportConnection"]
    assert len(sent) == 2  # refused as stale, then sent again
    assert sent[0] == sent[1]  # under the same request id
    events = log_events(rig.table, T)
    kinds = [type(e) for e in events if isinstance(e, PlayerSatOut | PlayerDisconnected)]
    assert kinds == [PlayerSatOut, PlayerDisconnected]  # applied after, on the newer log
    assert [e.player for e in events if isinstance(e, PlayerDisconnected)] == ["ann"]
    await rig.app.stop()

"""Presence: a player's open WatchTable streams are their connection; the table service publishes
its view of the table (who is connected here) when a player's first stream opens and when their
last ends (client cancel, deadline), and again every heartbeat while anyone is connected; nothing
for spectators."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.api.table.v1 import table_service_pb2_grpc as pb_grpc
from openpoker.presence import BadPresenceReport, PresenceReport, PresenceTracker, subject
from openpoker.services.table.app import TableApp
from openpoker.services.table.handlers import TableServicer
from openpoker.services.table.ownership import StaticOwnership
from openpoker.services.table.server import spec
from openpoker.shell.client import channel
from openpoker.shell.config import ShellConfig
from openpoker.shell.server import start_server
from openpoker.tablelog.store import MemoryTableEvents, TableStore
from tests.services.table.helpers import FakeWallet, create, join


class Published:
    def __init__(self) -> None:
        self.facts: list[PresenceReport] = []
        self.changed = asyncio.Event()

    async def __call__(self, subject_: str, data: bytes) -> None:
        self.facts.append(PresenceReport.decode(subject_, data))
        self.changed.set()

    async def wait_for(self, count: int) -> list[PresenceReport]:
        while len(self.facts) < count:
            self.changed.clear()
            await asyncio.wait_for(self.changed.wait(), 10)
        return self.facts

    def seen(self) -> list[tuple[str, list[str]]]:
        return [(f.table_id, sorted(f.players)) for f in self.facts]


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_first_open_and_last_close_publish_in_order() -> None:
    out = Published()
    clock = iter(range(1000, 2000))
    tracker = PresenceTracker(publish=out, instance="table-a", clock_ms=lambda: next(clock), run="r")
    tracker.opened("t1", "ann")
    tracker.opened("t1", "ann")  # a second stream: no news
    tracker.opened("t2", "ann")  # another table: its own connection
    tracker.opened("t1", "bob")
    tracker.closed("t1", "ann")  # one of two closes: still connected
    assert tracker.streams("t1", "ann") == 1
    tracker.closed("t1", "ann")
    tracker.closed("t1", "ann")  # a stray close publishes nothing
    tracker.closed("t9", "ann")  # nor one at a table never watched
    tracker.closed("t1", "bob")
    await tracker.close()
    assert out.seen() == [
        ("t1", ["ann"]),
        ("t2", ["ann"]),
        ("t1", ["ann", "bob"]),
        ("t1", ["bob"]),
        ("t1", []),
    ]
    assert [f.seq for f in out.facts] == [1, 2, 3, 4, 5]
    assert [f.at_ms for f in out.facts] == [1000, 1001, 1002, 1003, 1004]
    assert {f.source for f in out.facts} == {("table-a", "r")}
    assert tracker.streams("t1", "ann") == 0
    assert tracker.connected("t1") == frozenset()
    assert tracker.connected("t2") == {"ann"}


async def test_heartbeats_repeat_each_table_with_someone_connected() -> None:
    out = Published()
    tracker = PresenceTracker(publish=out, instance="i", clock_ms=lambda: 5, heartbeat=0.01)
    tracker.opened("t1", "ann")
    tracker.opened("t2", "bob")
    tracker.closed("t2", "bob")
    facts = await out.wait_for(9)
    # After the three edges, only t1 (ann) is repeated, with a growing seq.
    assert out.seen()[:3] == [("t1", ["ann"]), ("t2", ["bob"]), ("t2", [])]
    assert all(seen == ("t1", ["ann"]) for seen in out.seen()[3:])
    seqs = [f.seq for f in facts]
    assert seqs == list(range(1, len(seqs) + 1))
    await tracker.close()
    count = len(out.facts)
    await asyncio.sleep(0.05)
    assert len(out.facts) == count  # stopped: no more heartbeats
    assert tracker.run != PresenceTracker(publish=None, instance="i", clock_ms=lambda: 0).run


async def test_a_failing_publish_loses_that_report_only() -> None:
    out = Published()
    calls = 0

    async def flaky(subject_: str, data: bytes) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise ConnectionError("nats is gone")
        await out(subject_, data)

    tracker = PresenceTracker(publish=flaky, instance="i", clock_ms=lambda: 5)
    tracker.opened("t1", "ann")
    tracker.closed("t1", "ann")
    await tracker.close()
    assert out.seen() == [("t1", [])]


def test_report_wire_format_round_trips_and_rejects_junk() -> None:
    report = PresenceReport(
        table_id="t-9", instance="x", run="r", seq=3, at_ms=17, players=frozenset({"bob", "ann"})
    )
    data = report.encode()
    assert json.loads(data) == {"instance": "x", "run": "r", "seq": 3, "at_ms": 17, "players": ["ann", "bob"]}
    assert PresenceReport.decode(subject("t-9"), data) == report
    good = {"instance": "x", "run": "r", "seq": 1, "at_ms": 1, "players": []}
    assert PresenceReport.decode(subject("t1"), json.dumps(good).encode()).players == frozenset()
    for subj, body in [
        ("poker.table.t1", data),
        ("poker.presence.", data),
        (subject("t1"), b"[1]"),
        (subject("t1"), b"not json"),
        *(
            (subject("t1"), json.dumps({**good, key: value}).encode())
            for key, value in [
                ("instance", ""),
                ("run", 7),
                ("seq", 1.5),
                ("seq", True),
                ("at_ms", "1"),
                ("players", "ann"),
                ("players", [""]),
                ("players", [3]),
            ]
        ),
    ]:
        with pytest.raises(BadPresenceReport):
            PresenceReport.decode(subj, body)


class Served:
    def __init__(self, stub: Any, published: Published) -> None:
        self.stub = stub
        self.published = published


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    out = Published()
    app = TableApp(
        store=TableStore(MemoryTableEvents(), partitions=256),
        ownership=StaticOwnership(),
        wallet=FakeWallet(cash={"ann": 1000, "bob": 1000}),
    )
    # No heartbeat: the test reads the edges alone.
    tracker = PresenceTracker(publish=out, instance="table-test", clock_ms=lambda: 42, heartbeat=0)
    config = ShellConfig.from_env("table", {"POKER_INSECURE": "true", "POKER_TABLE_PORT": "0"})
    server = await start_server(config, [spec(TableServicer(app, presence=tracker))])
    chan = channel(server.address)
    try:
        yield Served(pb_grpc.TableServiceStub(chan), out)
    finally:
        await chan.close()
        await server.stop(0)
        await tracker.close()
        await app.close()


async def first_view(call: Any) -> pb.WatchTableResponse:
    async for message in call:
        return message  # type: ignore[no-any-return]
    raise AssertionError("the stream ended without a view")


async def test_watch_streams_are_the_players_connection(served: Served) -> None:
    stub, out = served.stub, served.published
    await create(stub)
    await join(stub, "ann", 1)
    spectator = stub.WatchTable(pb.WatchTableRequest(name="tables/t1"))
    await first_view(spectator)
    one = stub.WatchTable(pb.WatchTableRequest(name="tables/t1", viewer_player_id="ann"))
    await first_view(one)
    assert out.seen() == [("t1", ["ann"])]
    two = stub.WatchTable(pb.WatchTableRequest(name="tables/t1", viewer_player_id="ann"))
    await first_view(two)
    one.cancel()
    spectator.cancel()
    await settle()
    # A deadline ends the last stream just as a cancel or a dropped channel would.
    three = stub.WatchTable(pb.WatchTableRequest(name="tables/t1", viewer_player_id="ann"), timeout=0.3)
    await first_view(three)
    two.cancel()
    with pytest.raises(grpc.RpcError) as ended:
        async for _ in three:
            pass
    assert ended.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    facts = await out.wait_for(2)
    assert out.seen() == [("t1", ["ann"]), ("t1", [])]
    assert facts[1].at_ms == 42
    assert facts[1].instance == "table-test"
    assert facts[0].run == facts[1].run

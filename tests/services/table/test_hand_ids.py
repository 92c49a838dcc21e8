"""The engine remembers only the latest ``engine.table.HAND_IDS_KEPT`` hand ids; the table
service still refuses every reused one (DUPLICATE_HAND_ID, as before), older ones through its
index of recent hands and the hand index (counted complete, so a new id reads no log), after
restarts and with the hand index lost; snapshots stay the same size however many hands are
played, and a snapshot of the previous format (every id) still restores."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator

import grpc
import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.engine import table as tbl
from openpoker.eventstore.envelope import StoredEnvelope
from openpoker.services.table.ownership import StaticOwnership
from openpoker.shell.client import RichError, rich_error
from openpoker.tablelog import model as table_model
from openpoker.tablelog import snapshot
from openpoker.tablelog.model import HandRecord
from openpoker.tablelog.store import MemoryTableEvents
from tests.services.table.helpers import DEALER, FakeWallet, Running, create, join, rid, serve, start_hand
from tests.services.table.test_hand_window import Folded, play_hand

KEPT = 3  # hands the service indexes in memory
IDS_KEPT = 2  # hand ids the engine remembers


@pytest.fixture(autouse=True)
def small_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(table_model, "HANDS_KEPT", KEPT)
    monkeypatch.setattr(tbl, "HAND_IDS_KEPT", IDS_KEPT)


class CountingEvents(MemoryTableEvents):
    """Counts the reads of a table's whole log (``follow`` from a sequence: the scans)."""

    def __init__(self) -> None:
        super().__init__()
        self.scans = 0

    async def follow(self, subject: str, *, after_sequence: int) -> AsyncGenerator[StoredEnvelope, None]:
        self.scans += 1
        async for stored in super().follow(subject, after_sequence=after_sequence):
            yield stored


async def refused_start(svc: Running, hand_id: str) -> RichError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await start_hand(svc.stub, hand_id)
    return rich_error(caught.value)


async def version(svc: Running) -> int:
    return int((await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table.version)


async def void(svc: Running, hand_id: str) -> RichError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await svc.stub.VoidHand(
            pb.VoidHandRequest(request_id=rid(), name=f"tables/t1/hands/{hand_id}", reason="test"),
            metadata=DEALER,
        )
    return rich_error(caught.value)


async def check_every_used_id_is_refused(svc: Running, played: list[str]) -> None:
    before = await version(svc)
    for hand_id in played:
        err = await refused_start(svc, hand_id)
        assert (err.code, err.reason, err.metadata.get("handId")) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "DUPLICATE_HAND_ID",
            hand_id,
        ), hand_id
    assert await version(svc) == before  # nothing appended


async def test_a_reused_hand_id_is_refused_however_old_it_is() -> None:
    events = CountingEvents()
    wallet = FakeWallet(cash={"ann": 1000, "bob": 1000})
    played = [f"h{n}" for n in range(1, 9)]
    first = await serve(events, wallet, StaticOwnership("table-1", 1))
    try:
        await create(first.stub)
        await join(first.stub, "ann", 1)
        await join(first.stub, "bob", 2)
        for n, hand_id in enumerate(played):
            await play_hand(first, hand_id, fold=n % 2 == 0)
        await first.app.drain()
        model = await first.app.model("t1")
        assert model.state is not None
        # Neither the engine nor the service's index knows h1-h5 any more.
        assert list(model.state.hand_order) == played[-IDS_KEPT:]
        assert list(model.hand_order) == played[-KEPT:]
        assert events.indexed_through["t1"] == len(played)  # every entry written, and counted
        scans = events.scans
        await check_every_used_id_is_refused(first, played)
        # A new id: one look in the hand index, no read of the log.
        await play_hand(first, "h9", fold=True)
        assert events.scans == scans
        played.append("h9")
        # VoidHand: a hand of the table that is over is not live; an unknown id is not found.
        assert (await void(first, "h1")).reason == "HAND_NOT_LIVE"
        assert (await void(first, "never")).code is grpc.StatusCode.NOT_FOUND
        assert events.scans == scans
        await first.app.drain()
    finally:
        await first.stop()
    # A new owner, from the snapshot the last hand left.
    snap = await events.load_snapshot("t1")
    assert snap is not None
    assert json.loads(snap.state)["format"] == snapshot.FORMAT
    second = await serve(events, wallet, StaticOwnership("table-2", 2))
    try:
        await check_every_used_id_is_refused(second, played)
        assert events.scans == scans
    finally:
        await second.stop()
    # The hand index lost (a new bucket): the first old id read reads the log once and writes
    # every entry again; the next ones are answered from them.
    events.hand_index.clear()
    events.indexed_through.clear()
    third = await serve(events, wallet, StaticOwnership("table-3", 3))
    try:
        await check_every_used_id_is_refused(third, played)
        await third.app.drain()
        assert events.scans == scans + 1
        assert {h for (_, h) in events.hand_index} == set(played)
        assert events.indexed_through["t1"] == len(played)
        await play_hand(third, "h10", fold=False)
        assert events.scans == scans + 1
    finally:
        await third.stop()


async def test_a_new_id_on_a_table_without_older_hands_needs_no_index() -> None:
    events = CountingEvents()
    wallet = FakeWallet(cash={"ann": 1000, "bob": 1000})
    svc = await serve(events, wallet)
    try:
        await create(svc.stub)
        await join(svc.stub, "ann", 1)
        await join(svc.stub, "bob", 2)
        for hand_id in ("a", "b", "c"):  # KEPT hands: all in the service's index
            await play_hand(svc, hand_id, fold=True)
        await check_every_used_id_is_refused(svc, ["a", "b", "c"])
        assert events.scans == 0
    finally:
        await svc.stop()


def format_3(model: table_model.TableModel, every_id: list[str]) -> bytes:
    """``model``'s snapshot as the previous format wrote it: every hand id, sorted."""
    doc = json.loads(snapshot.encode(model))
    doc["format"] = 3
    del doc["state"]["recent_hand_ids"]
    doc["state"]["hand_ids"] = sorted(every_id)
    return json.dumps(doc).encode()


def test_a_snapshot_of_the_previous_format_restores() -> None:
    table = Folded()
    table.play(10)
    every_id = [f"h{n}" for n in range(1, 11)]
    restored = snapshot.decode(format_3(table.model, every_id))
    assert restored.state is not None
    assert table.model.state is not None
    assert restored.state.snapshot() == table.model.state.snapshot()
    assert list(restored.state.hand_order) == every_id[-IDS_KEPT:]
    # It goes on as the fold does (the engine's window included).
    twin = Folded(restored, table.version)
    table.play(3)
    twin.play(3)
    assert twin.model.state is not None
    assert twin.model.state.snapshot() == table.model.state.snapshot()


def test_a_previous_format_snapshot_that_cannot_order_the_latest_ids_is_not_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = Folded()
    table.play(10)
    # An engine window wider than the index the snapshot holds: which ids are the latest 5?
    monkeypatch.setattr(tbl, "HAND_IDS_KEPT", KEPT + 2)
    with pytest.raises(snapshot.SnapshotUnusable):
        snapshot.decode(format_3(table.model, [f"h{n}" for n in range(1, 11)]))


def test_the_snapshot_does_not_grow_with_hands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot, "SNAPSHOT_REQUESTS", 40)
    table = Folded()
    sizes: dict[int, int] = {}
    for played in (40, 120, 400):
        table.play(played - table.model.hands_total)
        doc = json.loads(snapshot.encode(table.model))
        assert doc["state"]["recent_hand_ids"] == [f"h{n}" for n in range(played - IDS_KEPT + 1, played + 1)]
        assert len(doc["hands"]) == KEPT
        assert len(doc["requests"]) == 40
        sizes[played] = len(snapshot.encode(table.model))
    # Only digits grow (hand ids, versions, sequences: one more each from 40 to 400 hands);
    # the previous format added every id, 360 more here.
    grown = sizes[400] - sizes[40]
    assert grown < 400, sizes
    every_id_from_41 = len(json.dumps([f"h{n}" for n in range(41, 401)]))
    assert grown < every_id_from_41 / 5, sizes


class NoIndex(CountingEvents):
    """The hand index bucket is unreachable: every read and write of it fails."""

    async def save_hand(self, table_id: str, record: HandRecord) -> None:
        raise ConnectionError("KV away")

    async def load_hand(self, table_id: str, hand_id: str) -> HandRecord | None:
        raise ConnectionError("KV away")

    async def save_indexed_through(self, table_id: str, number: int) -> None:
        raise ConnectionError("KV away")

    async def load_indexed_through(self, table_id: str) -> int:
        raise ConnectionError("KV away")


async def test_without_the_hand_index_the_log_still_answers() -> None:
    events = NoIndex()
    wallet = FakeWallet(cash={"ann": 1000, "bob": 1000})
    played = [f"h{n}" for n in range(1, 7)]
    svc = await serve(events, wallet)
    try:
        await create(svc.stub)
        await join(svc.stub, "ann", 1)
        await join(svc.stub, "bob", 2)
        for hand_id in played:
            await play_hand(svc, hand_id, fold=True)
        await svc.app.drain()
        await check_every_used_id_is_refused(svc, played)
        scans = events.scans
        assert scans > 0  # slower, read from the log, but the same answers
        await play_hand(svc, "h7", fold=True)
        assert events.scans > scans
    finally:
        await svc.stop()


async def test_the_stored_count_lags_by_less_than_a_tenth_of_the_index_and_still_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kept = 30  # the count is written once every 3 hands (a tenth of the index)
    monkeypatch.setattr(table_model, "HANDS_KEPT", kept)
    events = CountingEvents()
    wallet = FakeWallet(cash={"ann": 10_000, "bob": 10_000})
    played = [f"h{n}" for n in range(1, 41)]
    first = await serve(events, wallet, StaticOwnership("table-1", 1))
    try:
        await create(first.stub)
        await join(first.stub, "ann", 1)
        await join(first.stub, "bob", 2)
        written: list[int] = []
        for hand_id in played:
            await play_hand(first, hand_id, fold=True)
            await first.app.drain()
            written.append(events.indexed_through.get("t1", 0))
    finally:
        await first.stop()
    # Written at 3, 6, ..., 39: never after every hand, never more than 2 behind.
    assert sorted(set(written) - {0}) == list(range(3, 40, 3))
    assert all(n - w < kept // 10 for n, w in enumerate(written, start=1))
    scans = events.scans
    # A new owner: hands 1-10 are older than its index of the latest 30; the lagging count (39)
    # still covers them, so every used id is refused from the hand index, without a log read.
    second = await serve(events, wallet, StaticOwnership("table-2", 2))
    try:
        await check_every_used_id_is_refused(second, played)
        assert events.scans == scans
    finally:
        await second.stop()

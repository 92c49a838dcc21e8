"""A table indexes only its latest hands (``model.HANDS_KEPT``): memory and snapshots stay the
same size however many hands it plays, and older hands are still found (in the log), the same
as when they were indexed, also after a restart from a snapshot and on a non-owning instance."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace

import grpc
import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.engine import hand
from openpoker.engine import table as tbl
from openpoker.engine.cards import STANDARD_DECK
from openpoker.engine.errors import NothingToCall
from openpoker.engine.hand_events import Act, ActionKind
from openpoker.engine.rules import Game, Rules, Stakes, Structure
from openpoker.engine.table_events import OpenTable, SitDown, StartHand
from openpoker.services.table.ownership import PartitionHeld, StaticOwnership
from openpoker.tablelog import model as table_model
from openpoker.tablelog import snapshot
from openpoker.tablelog.model import TableModel
from openpoker.tablelog.store import MemoryTableEvents, hand_value
from tests.services.table.helpers import (
    DEALER,
    FakeWallet,
    Running,
    act,
    create,
    join,
    rid,
    serve,
    start_hand,
    to_act,
)
from tests.services.table.test_restart_fencing import fold_log

KEPT = 3
NL = Rules(game=Game.HOLDEM, structure=Structure.NO_LIMIT, stakes=Stakes.blinds(1, 2), seats=6)
AT = dt.datetime(2026, 11, 22, tzinfo=dt.UTC)


@pytest.fixture(autouse=True)
def few_hands_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(table_model, "HANDS_KEPT", KEPT)


class NotOwning(StaticOwnership):
    """Another instance holds every partition: this one serves reads from the log."""

    async def epoch(self, partition: int) -> int:
        raise PartitionHeld(partition=partition, holder="table-2")


class Folded:
    """A ``TableModel`` fed engine-decided commands directly (no service): hands in bulk."""

    def __init__(self, model: TableModel | None = None, version: int = 0) -> None:
        self.model = model or TableModel(table_id="t1")
        self.version = version
        if model is None:
            self.run(OpenTable(table_id="t1", rules=NL))
            for seat in (0, 2, 4):
                self.run(SitDown(seat=seat, player=f"p{seat}", buy_in=200))

    def run(self, command: tbl.Command) -> None:
        events = tbl.decide(self.model.state, command)
        self.version += 1
        self.model.apply(
            events,
            version=self.version,
            sequence=2 * self.version,  # other tables' messages in between
            envelope_hash=self.version.to_bytes(32, "big"),
            command_id=f"r{self.version}",
            recorded_at=AT,
        )

    def play(self, hands: int) -> None:
        for _ in range(hands):
            n = self.model.hands_total + 1
            self.run(StartHand(hand_id=f"h{n}", deck=STANDARD_DECK))
            while (hs := self.model.state.hand if self.model.state else None) is not None:
                seat = hand.to_act(hs)
                assert seat is not None
                try:
                    self.run(Act(seat=seat, action=ActionKind.FOLD if n % 2 else ActionKind.CALL, amount=0))
                except NothingToCall:
                    self.run(Act(seat=seat, action=ActionKind.CHECK, amount=0))


def test_index_and_snapshot_hold_the_latest_hands_only() -> None:
    table = Folded()
    for played in (2, 10, 40):
        table.play(played - table.model.hands_total)
        m = table.model
        assert m.hands_total == played
        kept = min(played, KEPT)
        assert list(m.hand_order) == [f"h{n}" for n in range(played - kept + 1, played + 1)]
        assert set(m.hands) == set(m.hand_order)
        assert [m.hands[h].number for h in m.hand_order] == list(range(played - kept + 1, played + 1))
        doc = json.loads(snapshot.encode(m))
        assert doc["format"] == snapshot.FORMAT
        assert doc["hands_total"] == played
        assert [h[0] for h in doc["hands"]] == list(m.hand_order)
        assert len(doc["requests"]) <= snapshot.SNAPSHOT_REQUESTS
        restored = snapshot.decode(snapshot.encode(m))
        assert (restored.hands, list(restored.hand_order), restored.hands_total) == (
            m.hands,
            list(m.hand_order),
            m.hands_total,
        )
        assert restored.state is not None
        assert m.state is not None
        assert restored.state.snapshot() == m.state.snapshot()
    # A restored model goes on exactly as the fold does (numbers, window).
    twin = Folded(snapshot.decode(snapshot.encode(table.model)), table.version)
    table.play(4)
    twin.play(4)
    assert (twin.model.hands, list(twin.model.hand_order), twin.model.hands_total) == (
        table.model.hands,
        list(table.model.hand_order),
        44,
    )
    assert table.model.hand_number(table.model.hands_total - KEPT) is None
    assert table.model.hand_number(table.model.hands_total) is table.model.hands[table.model.hand_order[-1]]


def test_a_snapshot_of_an_older_format_is_refused() -> None:
    table = Folded()
    table.play(1)
    doc = json.loads(snapshot.encode(table.model))
    doc["format"] = 2
    with pytest.raises(snapshot.SnapshotUnusable):
        snapshot.decode(json.dumps(doc).encode())


async def play_hand(svc: Running, hand_id: str, *, fold: bool) -> None:
    await start_hand(svc.stub, hand_id)
    view: pb.Table = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
    while view.status == pb.TABLE_STATUS_IN_HAND:
        legal = view.current_hand.to_act.actions
        action = (
            pb.ACTION_TYPE_FOLD
            if fold
            else pb.ACTION_TYPE_CHECK
            if pb.ACTION_TYPE_CHECK in legal
            else pb.ACTION_TYPE_CALL
        )
        view = (await act(svc.stub, to_act(view), action)).table


async def answers(svc: Running, hand_id: str) -> tuple[pb.GetHandResponse, pb.GetHandHistoryResponse]:
    name = f"tables/t1/hands/{hand_id}"
    got = await svc.stub.GetHand(pb.GetHandRequest(name=name, viewer_player_id="ann"))
    history = await svc.stub.GetHandHistory(
        pb.GetHandHistoryRequest(name=name, format=pb.HISTORY_FORMAT_PHH), metadata=(("x-caller", "auditor"),)
    )
    return got, history


async def test_older_hands_answer_as_when_they_were_indexed_also_after_a_restart() -> None:
    events = MemoryTableEvents()
    wallet = FakeWallet(cash={"ann": 1000, "bob": 1000, "cat": 1000})
    first = await serve(events, wallet, StaticOwnership("table-1", 1))
    seen: dict[str, tuple[pb.GetHandResponse, pb.GetHandHistoryResponse]] = {}
    ids = [f"h{n}" for n in range(1, 10)]
    try:
        await create(first.stub)
        for player, seat in (("ann", 1), ("bob", 3), ("cat", 5)):
            await join(first.stub, player, seat)
        for n, hand_id in enumerate(ids):
            if n == 2:  # one voided hand among the old ones
                await start_hand(first.stub, hand_id)
                await first.stub.VoidHand(
                    pb.VoidHandRequest(request_id=rid(), name=f"tables/t1/hands/{hand_id}", reason="test"),
                    metadata=DEALER,
                )
            else:
                await play_hand(first, hand_id, fold=n % 2 == 0)
            seen[hand_id] = await answers(first, hand_id)  # indexed now
        await first.app.drain()
        model = await first.app.model("t1")
        assert list(model.hand_order) == ids[-KEPT:]
        assert seen["h3"][0].hand.outcome == pb.HAND_OUTCOME_VOIDED
        for hand_id in ids:
            assert await answers(first, hand_id) == seen[hand_id], hand_id
        snap = await events.load_snapshot("t1")
        assert snap is not None
        assert len(json.loads(snap.state)["hands"]) == KEPT
        # The hand index holds every finished hand, as the fold numbered it.
        folded = await fold_log(events)
        assert set(events.hand_index) == {("t1", h) for h in ids}
        assert await events.load_hand("t1", ids[-1]) == folded.hands[ids[-1]]
    finally:
        await first.stop()
    # Without an entry (a writer that stopped before saving it, so it never counted it either),
    # or with one that does not match the log, an old hand is found in the log, and the entries
    # are written again.
    assert events.indexed_through["t1"] == len(ids)
    events.indexed_through["t1"] = 0
    saved = {h: await events.load_hand("t1", h) for h in ("h1", "h2", "h4")}
    h2, h4 = saved["h2"], saved["h4"]
    assert h2 is not None
    assert h4 is not None
    assert (h2.number, h4.number) == (2, 4)
    del events.hand_index["t1", "h1"]
    events.hand_index["t1", "h2"] = hand_value(replace(h2, last_version=h4.last_version))  # h2-h4
    events.hand_index["t1", "h4"] = b"not json"
    # A new owner starts from the snapshot (taken after the last hand) and finds them again.
    second = await serve(events, wallet, StaticOwnership("table-2", 2))
    try:
        for hand_id in ids:
            assert await answers(second, hand_id) == seen[hand_id], hand_id
        restored = await second.app.model("t1")
        folded = await fold_log(events)
        assert (restored.hands, list(restored.hand_order), restored.hands_total) == (
            folded.hands,
            list(folded.hand_order),
            folded.hands_total,
        )
        for hand_id, record in saved.items():
            assert await events.load_hand("t1", hand_id) == record, hand_id  # repaired from the log
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await second.stub.GetHand(pb.GetHandRequest(name="tables/t1/hands/never"))
        assert err.value.code() is grpc.StatusCode.NOT_FOUND
        # The void of an old hand is refused as not live (the id is known), not as unknown.
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await second.stub.VoidHand(
                pb.VoidHandRequest(request_id=rid(), name="tables/t1/hands/h1", reason="late"),
                metadata=DEALER,
            )
        assert err.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    finally:
        await second.stop()
    # An instance that does not own the table folds snapshot + log and answers the same.
    reader = await serve(events, wallet, NotOwning("reader", 3))
    try:
        for hand_id in ids[:2]:
            assert await answers(reader, hand_id) == seen[hand_id], hand_id
    finally:
        await reader.stop()

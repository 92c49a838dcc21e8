"""State rebuilt from snapshot + log, and one writer per table (fencing by OwnerChanged)."""

from __future__ import annotations

import grpc
import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.eventstore.subjects import table_subject
from openpoker.services.table.ownership import StaticOwnership
from openpoker.shell.client import rich_error
from openpoker.tablelog import snapshot
from openpoker.tablelog.events import OwnerChanged
from openpoker.tablelog.model import TableModel
from openpoker.tablelog.store import MemoryTableEvents, decode_events, fold_envelope
from tests.services.table.helpers import FakeWallet, Running, act, create, join, serve, start_hand, to_act


async def fold_log(events: MemoryTableEvents, table_id: str = "t1") -> TableModel:
    model = TableModel(table_id=table_id)
    for stored in await events.read(table_subject(table_id)):
        fold_envelope(model, stored)
    return model


async def play_hand(svc: Running, hand_id: str) -> pb.Table:
    await start_hand(svc.stub, hand_id)
    view: pb.Table = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
    while view.status == pb.TABLE_STATUS_IN_HAND:
        legal = view.current_hand.to_act
        action = pb.ACTION_TYPE_CHECK if pb.ACTION_TYPE_CHECK in legal.actions else pb.ACTION_TYPE_CALL
        view = (await act(svc.stub, to_act(view), action)).table
    return view


async def test_snapshot_restores_the_fold_exactly() -> None:
    events = MemoryTableEvents()
    svc = await serve(events, FakeWallet(cash={"ann": 1000, "bob": 1000, "cat": 1000}))
    try:
        await create(svc.stub)
        await join(svc.stub, "ann", 1)
        await join(svc.stub, "bob", 3)
        await join(svc.stub, "cat", 5)
        for n in range(3):
            await play_hand(svc, f"h{n}")
            await svc.app.drain()
            folded = await fold_log(events)
            restored = snapshot.decode(snapshot.encode(folded))
            assert restored.state is not None
            assert folded.state is not None
            assert restored.state.snapshot() == folded.state.snapshot()
            assert (restored.version, restored.sequence, restored.last_hash) == (
                folded.version,
                folded.sequence,
                folded.last_hash,
            )
            assert restored.requests == folded.requests
            assert restored.hands == folded.hands
        snap = await events.load_snapshot("t1")
        assert snap is not None
        assert snap.version == folded.version  # taken at the last hand boundary
    finally:
        await svc.stop()


async def test_restart_mid_hand_resumes_from_snapshot_and_log() -> None:
    events = MemoryTableEvents()
    wallet = FakeWallet(cash={"ann": 1000, "bob": 1000})
    first = await serve(events, wallet, StaticOwnership("table-1", 1))
    await create(first.stub)
    await join(first.stub, "ann", 1)
    await join(first.stub, "bob", 2)
    await play_hand(first, "h1")
    await first.app.drain()
    await start_hand(first.stub, "h2")
    view = (await first.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
    view = (await act(first.stub, to_act(view), pb.ACTION_TYPE_CALL)).table
    await first.stop()
    second = await serve(events, wallet, StaticOwnership("table-2", 2))
    try:
        again = (
            await second.stub.GetTable(pb.GetTableRequest(name="tables/t1", viewer_player_id="ann"))
        ).table
        assert again.current_hand.hand_id == "h2"
        assert [(s.player_id, s.stack, s.bet) for s in again.seats] == [
            (s.player_id, s.stack, s.bet) for s in view.seats
        ]
        while again.status == pb.TABLE_STATUS_IN_HAND:
            legal = again.current_hand.to_act
            action = pb.ACTION_TYPE_CHECK if pb.ACTION_TYPE_CHECK in legal.actions else pb.ACTION_TYPE_CALL
            again = (await act(second.stub, to_act(again), action)).table
        assert again.hands_played == 2
        assert sum(s.stack for s in again.seats) == 400
        owners = [
            e
            for stored in await events.read(table_subject("t1"))
            for e in decode_events(stored.envelope)
            if isinstance(e, OwnerChanged)
        ]
        assert [(o.epoch, o.owner) for o in owners] == [(1, "table-1"), (2, "table-2")]
    finally:
        await second.stop()


async def test_two_writers_never_both_append() -> None:
    events = MemoryTableEvents()
    wallet = FakeWallet(cash={"ann": 1000, "bob": 1000})
    old = await serve(events, wallet, StaticOwnership("table-old", 1))
    new = await serve(events, wallet, StaticOwnership("table-new", 2))
    try:
        await create(old.stub)
        await join(old.stub, "ann", 1)
        await join(old.stub, "bob", 2)
        await start_hand(old.stub, "h1")
        view = (await old.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
        # The new owner takes over (its first command appends OwnerChanged{2} first).
        taken = (await act(new.stub, to_act(view), pb.ACTION_TYPE_CALL)).table
        before = await events.read(table_subject("t1"))
        # The old owner still has the table cached at the old position: its append fails on the
        # expected sequence, it re-reads, finds the higher epoch and backs off.
        with pytest.raises(grpc.RpcError) as caught:
            await act(old.stub, to_act(view), pb.ACTION_TYPE_FOLD)  # legal in its stale state
        err = rich_error(caught.value)
        assert (err.code, err.reason, err.metadata["owner"]) == (
            grpc.StatusCode.UNAVAILABLE,
            "NOT_OWNER",
            "table-new",
        )
        after = await events.read(table_subject("t1"))
        assert len(after) == len(before)
        epochs = [s.envelope.owner_epoch for s in after]
        assert epochs == sorted(epochs)
        assert "t1" not in old.app.writer.tables  # dropped from memory
        # Reads still work anywhere; the new owner goes on writing.
        await act(new.stub, to_act(taken), pb.ACTION_TYPE_CHECK)
    finally:
        await old.stop()
        await new.stop()


async def test_a_cash_out_lost_in_a_crash_is_paid_by_the_next_owner() -> None:
    events = MemoryTableEvents()
    wallet = FakeWallet(cash={"ann": 1000}, fail_cash_out=1_000)  # the wallet is away
    first = await serve(events, wallet, StaticOwnership("table-1", 1))
    await create(first.stub)
    await join(first.stub, "ann", 1)
    left = await first.stub.LeaveTable(
        pb.LeaveTableRequest(request_id="leave-1", table="tables/t1", player_id="ann")
    )
    assert (left.cashed_out, left.pending) == (0, True)
    await first.stop()  # crash: the background retries die with the process
    assert wallet.cash["ann"] == 800
    wallet.fail_cash_out = 0
    second = await serve(events, wallet, StaticOwnership("table-2", 2))
    try:
        await second.stub.GetTable(pb.GetTableRequest(name="tables/t1"))  # takes the table over
        await second.app.drain()
        assert wallet.cash["ann"] == 1000
        assert wallet.escrow[("t1", "ann")] == 0
        # Taken over again later: the same id, paid once.
        third = await serve(events, wallet, StaticOwnership("table-3", 3))
        await third.stub.GetTable(pb.GetTableRequest(name="tables/t1"))
        await third.app.drain()
        await third.stop()
        assert wallet.cash["ann"] == 1000
    finally:
        await second.stop()

"""Hands older than the table's in-memory index, found in the JetStream log (real nats-server)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.api.table.v1 import table_service_pb2_grpc as pb_grpc
from openpoker.services.wallet.server import WalletServer
from openpoker.shell.client import channel
from openpoker.tablelog import model as table_model
from tests.integration.table_system import table_service
from tests.services.table.helpers import act, create, join, start_hand, to_act

pytestmark = pytest.mark.integration

KEPT = 2


async def answers(stub: Any, hand_id: str) -> tuple[object, object]:
    name = f"tables/t1/hands/{hand_id}"
    got = await stub.GetHand(pb.GetHandRequest(name=name, viewer_player_id="ann"))
    history = await stub.GetHandHistory(
        pb.GetHandHistoryRequest(name=name, format=pb.HISTORY_FORMAT_PHH), metadata=(("x-caller", "auditor"),)
    )
    return got, history


async def test_old_hands_come_from_the_log_before_and_after_a_restart(
    nats_url: str, wallet: WalletServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(table_model, "HANDS_KEPT", KEPT)
    ids = [f"h{n}" for n in range(1, 6)]
    seen: dict[str, tuple[object, object]] = {}
    first = await table_service(nats_url, wallet, "table-a")
    try:
        async with channel(first.server.address) as chan:
            stub = pb_grpc.TableServiceStub(chan)
            await create(stub)
            await join(stub, "ann", 1)
            await join(stub, "bob", 2)
            for n, hand_id in enumerate(ids):
                await start_hand(stub, hand_id)
                view = (await stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
                while view.status == pb.TABLE_STATUS_IN_HAND:
                    legal = view.current_hand.to_act.actions
                    action = (
                        pb.ACTION_TYPE_FOLD
                        if n % 2
                        else pb.ACTION_TYPE_CHECK
                        if pb.ACTION_TYPE_CHECK in legal
                        else pb.ACTION_TYPE_CALL
                    )
                    view = (await act(stub, to_act(view), action)).table
                seen[hand_id] = await answers(stub, hand_id)
            model = await first.app.model("t1")
            assert list(model.hand_order) == ids[-KEPT:]
            for hand_id in ids:
                assert await answers(stub, hand_id) == seen[hand_id], hand_id
        await first.app.drain()
        store = first.app.store
        for number, hand_id in enumerate(ids, 1):  # the hand index in its KV bucket
            record = await store.events.load_hand("t1", hand_id)
            assert record is not None
            assert (record.number, record.finished) == (number, True)
        # Snapshots come every POKER_TABLE_SNAPSHOT_EVERY (10) hands: take this one now.
        await store.events.save_snapshot(store.snapshot_of(model))
        snap = await store.events.load_snapshot("t1")
        assert snap is not None
        assert snap.last_sequence == model.sequence
        assert len(json.loads(snap.state)["hands"]) == KEPT
    finally:
        await first.stop()
    second = await table_service(nats_url, wallet, "table-b")
    try:
        async with channel(second.server.address) as chan:
            stub = pb_grpc.TableServiceStub(chan)
            for hand_id in ids:
                assert await answers(stub, hand_id) == seen[hand_id], hand_id
    finally:
        await second.stop()

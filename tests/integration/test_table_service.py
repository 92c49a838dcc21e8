"""The table service on a real nats-server with the real wallet service."""

from __future__ import annotations

import asyncio

import grpc
import nats
import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.api.table.v1 import table_service_pb2_grpc as pb_grpc
from openpoker.eventstore.jetstream import JetStreamEventStore
from openpoker.eventstore.streams import LEASES
from openpoker.eventstore.subjects import PARTITIONS, partition_lease_key, partition_of, table_subject
from openpoker.services.dealer.audit import JetStreamAudit
from openpoker.services.dealer.ports import Reveal
from openpoker.services.wallet.server import WalletServer
from openpoker.shell.client import channel, rich_error
from openpoker.tablelog.events import OwnerChanged
from openpoker.tablelog.model import LogEvent
from openpoker.tablelog.store import decode_events
from tests.integration.table_system import balance, table_service
from tests.services.table.helpers import act, create, join, rid, start_hand, to_act

pytestmark = pytest.mark.integration


async def log(nats_url: str, table_id: str = "t1") -> list[tuple[int, list[LogEvent]]]:
    nc = await nats.connect(nats_url)
    try:
        store = JetStreamEventStore(nc.jetstream(), stream="TABLE_EVENTS")
        stored = await store.read(table_subject(table_id))
        return [(s.envelope.owner_epoch, decode_events(s.envelope)) for s in stored]
    finally:
        await nc.close()


async def check_down(stub: object, view: pb.Table) -> pb.Table:
    while view.status == pb.TABLE_STATUS_IN_HAND:
        legal = view.current_hand.to_act
        action = pb.ACTION_TYPE_CHECK if pb.ACTION_TYPE_CHECK in legal.actions else pb.ACTION_TYPE_CALL
        view = (await act(stub, to_act(view), action)).table
    return view


async def test_full_hand_and_money_through_the_wallet(nats_url: str, wallet: WalletServer) -> None:
    table = await table_service(nats_url, wallet, "table-a")
    try:
        async with channel(table.server.address) as chan:
            stub = pb_grpc.TableServiceStub(chan)
            await create(stub)
            await join(stub, "ann", 1, buy_in=150)
            await join(stub, "bob", 2)
            assert await balance(wallet, "cash/ann") == 850
            assert await balance(wallet, "escrow/t1/ann") == 150
            await start_hand(stub, "h1")
            view = (await stub.GetTable(pb.GetTableRequest(name="tables/t1", viewer_player_id="bob"))).table
            end = await check_down(stub, view)
            assert end.hands_played == 1
            assert sum(s.stack for s in end.seats) == 350
            hand = (await stub.GetHand(pb.GetHandRequest(name="tables/t1/hands/h1"))).hand
            assert hand.street == pb.STREET_ENDED
            await create(stub, "t2")
            listed = await stub.ListTables(pb.ListTablesRequest(page_size=1))
            rest = await stub.ListTables(pb.ListTablesRequest(page_size=1, page_token=listed.next_page_token))
            assert [t.table_id for t in [*listed.tables, *rest.tables]] == ["t1", "t2"]
            assert rest.next_page_token == ""
            # Refused by the wallet: nothing seated, the wallet's reason comes through.
            with pytest.raises(grpc.RpcError) as caught:
                await join(stub, "cat", 3)
            err = rich_error(caught.value)
            assert err.code != grpc.StatusCode.OK
            seats = (await stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table.seats
            assert "cat" not in {s.player_id for s in seats}
    finally:
        await table.stop()


async def test_leave_cashes_out_through_the_wallet(nats_url: str, wallet: WalletServer) -> None:
    table = await table_service(nats_url, wallet, "table-a")
    try:
        async with channel(table.server.address) as chan:
            stub = pb_grpc.TableServiceStub(chan)
            await create(stub)
            await join(stub, "ann", 1, buy_in=150)
            topped = await stub.TopUp(
                pb.TopUpRequest(request_id=rid(), table="tables/t1", player_id="ann", amount=30)
            )
            assert topped.stack == 180
            request = pb.LeaveTableRequest(request_id=rid(), table="tables/t1", player_id="ann")
            left = await stub.LeaveTable(request)
            again = await stub.LeaveTable(request)
            assert (left.cashed_out, again.cashed_out, left.pending) == (180, 180, False)
            assert await balance(wallet, "cash/ann") == 1000
            assert await balance(wallet, "escrow/t1/ann") == 0
    finally:
        await table.stop()


async def test_restart_mid_hand_rebuilds_from_snapshot_and_log(nats_url: str, wallet: WalletServer) -> None:
    first = await table_service(nats_url, wallet, "table-a")
    async with channel(first.server.address) as chan:
        stub = pb_grpc.TableServiceStub(chan)
        await create(stub)
        await join(stub, "ann", 1)
        await join(stub, "bob", 2)
        await start_hand(stub, "h1")
        view = (await stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
        await check_down(stub, view)
        await start_hand(stub, "h2")
        view = (await stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
        mid = (await act(stub, to_act(view), pb.ACTION_TYPE_CALL)).table
    await first.app.drain()
    await first.stop()
    second = await table_service(nats_url, wallet, "table-b")
    try:
        async with channel(second.server.address) as chan:
            stub = pb_grpc.TableServiceStub(chan)
            again = (await stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
            assert again.current_hand.hand_id == "h2"
            assert again.version >= mid.version
            assert [(s.stack, s.bet) for s in again.seats] == [(s.stack, s.bet) for s in mid.seats]
            end = await check_down(stub, again)
            assert end.hands_played == 2
            assert sum(s.stack for s in end.seats) == 400
        entries = await log(nats_url)
        owners = [(e.epoch, e.owner) for _, events in entries for e in events if isinstance(e, OwnerChanged)]
        assert [o for _, o in owners] == ["table-a", "table-b"]
        assert owners[0][0] < owners[1][0]
        epochs = [epoch for epoch, _ in entries]
        assert epochs == sorted(epochs)
    finally:
        await second.stop()


async def test_two_instances_never_both_append(nats_url: str, wallet: WalletServer) -> None:
    a = await table_service(nats_url, wallet, "table-a", ttl=30)
    b = await table_service(nats_url, wallet, "table-b", ttl=30)
    nc = await nats.connect(nats_url)
    try:
        async with channel(a.server.address) as chan_a, channel(b.server.address) as chan_b:
            stub_a = pb_grpc.TableServiceStub(chan_a)
            stub_b = pb_grpc.TableServiceStub(chan_b)
            await create(stub_a)
            await join(stub_a, "ann", 1)
            await join(stub_a, "bob", 2)
            await start_hand(stub_a, "h1")
            view = (await stub_a.GetTable(pb.GetTableRequest(name="tables/t1"))).table
            # While a holds the partition lease, b refuses writes and names the owner.
            with pytest.raises(grpc.RpcError) as caught:
                await act(stub_b, to_act(view), pb.ACTION_TYPE_CALL)
            err = rich_error(caught.value)
            assert (err.code, err.reason, err.metadata["owner"]) == (
                grpc.StatusCode.UNAVAILABLE,
                "NOT_OWNER",
                "table-a",
            )
            # b serves reads from the log.
            assert (await stub_b.GetTable(pb.GetTableRequest(name="tables/t1"))).table.version == view.version
            # a stalls (its lease vanishes, as after a long pause); b takes the partition over.
            kv = await nc.jetstream().key_value(LEASES.bucket)
            await kv.delete(partition_lease_key(partition_of("t1", PARTITIONS)))
            taken = (await act(stub_b, to_act(view), pb.ACTION_TYPE_CALL)).table
            before = await log(nats_url)
            # a wakes up with its stale cache: its append fails, it re-reads and backs off.
            with pytest.raises(grpc.RpcError) as caught:
                await act(stub_a, to_act(view), pb.ACTION_TYPE_FOLD)
            err = rich_error(caught.value)
            assert (err.code, err.reason, err.metadata["owner"]) == (
                grpc.StatusCode.UNAVAILABLE,
                "NOT_OWNER",
                "table-b",
            )
            after = await log(nats_url)
            assert len(after) == len(before)
            epochs = [epoch for epoch, _ in after]
            assert epochs == sorted(epochs)
            assert "t1" not in a.app.writer.tables
            await act(stub_b, to_act(taken), pb.ACTION_TYPE_CHECK)
    finally:
        await nc.close()
        await a.stop()
        await b.stop()


async def test_watch_follows_the_subject_and_resumes(nats_url: str, wallet: WalletServer) -> None:
    table = await table_service(nats_url, wallet, "table-a")
    try:
        async with channel(table.server.address) as chan:
            stub = pb_grpc.TableServiceStub(chan)
            await create(stub)
            await join(stub, "ann", 1)
            await join(stub, "bob", 2)
            started = await start_hand(stub, "h1")
            view = (await stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
            r1 = await act(stub, to_act(view), pb.ACTION_TYPE_CALL)

            async def watch(from_version: int, count: int) -> list[pb.WatchTableResponse]:
                out: list[pb.WatchTableResponse] = []
                call = stub.WatchTable(
                    pb.WatchTableRequest(name="tables/t1", viewer_player_id="ann", from_version=from_version)
                )
                async for message in call:
                    out.append(message)
                    if len(out) == count:
                        call.cancel()
                        break
                return out

            task = asyncio.create_task(watch(started.version, 2))
            await asyncio.sleep(0.2)
            r2 = await act(stub, to_act(r1.table), pb.ACTION_TYPE_CHECK)
            messages = await asyncio.wait_for(task, 15)
            assert [m.version for m in messages] == [r1.version, r2.version]
            assert [a.action for a in messages[1].new_actions] == [pb.ACTION_TYPE_CHECK]
            assert len(messages[1].table.current_hand.board) == 3  # the check closed pre-flop
            cards = {s.player_id: list(s.hole_cards) for s in messages[0].table.seats if s.player_id}
            assert all(cards["ann"])
            assert cards["bob"] == ["", ""]
    finally:
        await table.stop()


async def test_auditors_get_the_revealed_seed(nats_url: str, wallet: WalletServer) -> None:
    nc = await nats.connect(nats_url)
    try:  # the dealer's audit record of a reveal (services.dealer.audit)
        audit = JetStreamAudit(nc.jetstream())
        await audit.ensure()
        await audit.record_reveal(
            Reveal(
                table_id="t1",
                hand_id="h1",
                hand_number=1,
                version="openpoker-shuffle-v1",
                deck_size=52,
                commitment="c0ffee",
                seed=bytes(range(32)),
            )
        )
    finally:
        await nc.close()
    table = await table_service(nats_url, wallet, "table-a")
    try:
        async with channel(table.server.address) as chan:
            stub = pb_grpc.TableServiceStub(chan)
            await create(stub)
            await join(stub, "ann", 1)
            await join(stub, "bob", 2)
            await start_hand(stub, "h1")
            view = (await stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
            await act(stub, to_act(view), pb.ACTION_TYPE_FOLD)
            name = "tables/t1/hands/h1"
            got = await stub.GetHandHistory(
                pb.GetHandHistoryRequest(name=name), metadata=(("x-caller", "auditor"),)
            )
            assert got.hand.revealed_seed == bytes(range(32)).hex()
            assert got.envelopes
            player = await stub.GetHandHistory(
                pb.GetHandHistoryRequest(name=name), metadata=(("x-player-id", "ann"),)
            )
            assert player.hand.revealed_seed == ""
            assert not player.envelopes
    finally:
        await table.stop()

"""After a restart, a table nobody calls still has its orphaned escrow returned: the new table
instance claims the free partitions of existing tables and reconciles every table in them (real
nats-server, real wallet service; no call reaches the new table instance)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import nats
import pytest

from openpoker.api.table.v1 import table_service_pb2_grpc as pb_grpc
from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.api.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from openpoker.eventstore.jetstream import JetStreamEventStore
from openpoker.eventstore.subjects import partition_of, table_subject
from openpoker.services.wallet.server import WalletServer
from openpoker.shell.client import channel
from openpoker.tablelog.events import OwnerChanged
from openpoker.tablelog.store import decode_events
from tests.integration.table_system import balance, table_service
from tests.services.table.helpers import create, join

pytestmark = pytest.mark.integration

AS_TABLE = (("x-caller", "table"),)
# A long period: only the claim and the sweep at start act; a short grace.
RECONCILE = {"POKER_TABLE_RECONCILE_EVERY": "3600", "POKER_TABLE_RECONCILE_GRACE": "0.3"}


@pytest.fixture
def funded() -> tuple[str, ...]:
    return ("ann", "bob", "cat")


async def owners(nats_url: str, table_id: str) -> list[str]:
    nc = await nats.connect(nats_url)
    try:
        stored = await JetStreamEventStore(nc.jetstream(), stream="TABLE_EVENTS").read(
            table_subject(table_id)
        )
        return [e.owner for s in stored for e in decode_events(s.envelope) if isinstance(e, OwnerChanged)]
    finally:
        await nc.close()


async def test_an_idle_table_is_reconciled_after_a_restart(nats_url: str, wallet: WalletServer) -> None:
    first = await table_service(nats_url, wallet, "table-a", env=RECONCILE)
    try:
        async with channel(first.server.address) as chan:
            stub = pb_grpc.TableServiceStub(chan)
            await create(stub, "t1")
            await create(stub, "t2")
            await join(stub, "ann", 1, table="tables/t1")
            await join(stub, "cat", 1, table="tables/t2")
        # bob's join at t1 as the table service runs it: the wallet's buy-in first, and then the
        # process "dies" before its append.
        async with channel(wallet.server.address) as wchan:
            wstub: Any = wpb_grpc.WalletServiceStub(wchan)
            await wstub.BuyIn(
                wpb.BuyInRequest(
                    request_id=f"{uuid.uuid4()}:buy-in", table_id="t1", player="bob", amount=300
                ),
                metadata=AS_TABLE,
            )
        assert await balance(wallet, "escrow/t1/bob") == 300
    finally:
        await first.stop()  # releases its leases: the partitions are free
    # The new instance gets no call. A long period: only the claim and sweep at start act.
    second = await table_service(nats_url, wallet, "table-b", env=RECONCILE)
    try:
        loop = asyncio.get_running_loop()
        end = loop.time() + 30.0  # a liveness guard, not a timing assertion
        while await balance(wallet, "cash/bob") != 1000:
            assert loop.time() < end, "the orphaned escrow never went back to cash"
            await asyncio.sleep(0.1)
        assert second.app.reconciler is not None
        await second.app.reconciler.drain()
        assert await balance(wallet, "escrow/t1/bob") == 0
        assert await balance(wallet, "escrow/t1/ann") == 200  # seated: untouched
        assert await balance(wallet, "escrow/t2/cat") == 200
        # Nothing to return at t2: read, never taken over; t1 was taken over to return bob's.
        assert await owners(nats_url, "t2") == ["table-a"]
        assert await owners(nats_url, "t1") == ["table-a", "table-b"]
        # Only t1's partition was taken; t2's stays free for whichever instance t2's traffic
        # reaches first (the lease bucket says so, as another instance would read it).
        t1, t2 = (partition_of(t, second.app.store.partitions) for t in ("t1", "t2"))
        assert t1 != t2
        assert await second.app.ownership.holder_of(t1) == "table-b"
        assert await second.app.ownership.holder_of(t2) is None
    finally:
        await second.stop()

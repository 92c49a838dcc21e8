"""A table service that dies between the wallet's buy-in and its append leaves chips in escrow
with no seat behind them: the instance that takes the table over returns them to the player's
cash, once, and the chips add up (cash + escrow + rake = deposits). Real processes: nats-server,
wallet, table, dealer, rng (``pokerctl.local.LocalSystem``), secure as ``pokerctl up`` runs them."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.api.wallet.v1 import wallet_service_pb2_grpc as wgrpc
from openpoker.pokerctl.bots import buy_in_for, table_config
from openpoker.pokerctl.chips import balance, check_chips, house_balance
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell.client import channel
from openpoker.shell.tls import TlsFiles
from tests.e2e.helpers import Clients
from tests.helpers.system import local_system

# The whole system as processes for this module: over 5 s a test on 2 shared cores, so `make
# test-fast` leaves the module out (docs/testing.md).
pytestmark = pytest.mark.slow

# Short leases (a restarted table service owns its tables again soon) and a short reconciliation
# cycle, so the test takes seconds; the defaults are 10 s, 60 s and 30 s.
ENV = {
    "POKER_TABLE_LEASE_TTL": "2",
    "POKER_TABLE_RECONCILE_EVERY": "0.5",
    "POKER_TABLE_RECONCILE_GRACE": "1",
}


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    with local_system(tmp_path_factory.mktemp("e2e-orphan"), ENV, secure=True) as local:
        yield local


async def returns_of(c: Clients, player: str) -> list[str]:
    got = await c.staff_wallet.ListTransfers(
        wpb.ListTransfersRequest(account=f"cash/{player}", page_size=500), timeout=5
    )
    return [t.id for t in got.transfers if t.code == wpb.TRANSFER_CODE_CASH_OUT]


async def test_a_buy_in_orphaned_by_a_crash_goes_back_to_cash(system: LocalSystem) -> None:
    table_id = "orphan-1"
    config = table_config("holdem", "nl", clock_ms=60_000)
    buy_in = buy_in_for(config)
    wallet_target, table_target = system.targets["wallet"], system.targets["table"]
    async with Clients(system) as c:
        conn = c.conn
        house = await house_balance(wallet_target, conn=conn)
        await c.create(table_id, config)
        await c.seat(table_id, "ann", buy_in)  # deposits 10_000; one player: no hand is dealt
        await c.deposit("bob", 10_000)
        # bob's JoinTable as the table service runs it: the wallet's buy-in first (BuyIn is the
        # table service's alone: the test calls with its certificate) ...
        assert system.pki is not None
        async with channel(wallet_target, TlsFiles.from_pki(system.pki, "table")) as chan:
            as_table: Any = wgrpc.WalletServiceStub(chan)
            await as_table.BuyIn(
                wpb.BuyInRequest(
                    request_id=f"{uuid.uuid4()}:buy-in", table_id=table_id, player="bob", amount=buy_in
                ),
                timeout=5,
            )
        assert await balance(c.staff_wallet, f"escrow/{table_id}/bob", meta=()) == buy_in
    # ... and the process dies before its append: no seat, no log record.
    await system.restart("table", kill=True)
    async with Clients(system) as c:
        table = await c.wait(table_id, lambda t: True, what="the restarted table service")
        assert {s.player_id for s in table.seats if s.player_id} == {"ann"}
        loop = asyncio.get_running_loop()
        end = loop.time() + 60.0  # a liveness guard, not a timing assertion
        while await balance(c.staff_wallet, "cash/bob", meta=()) != 10_000:
            assert loop.time() < end, "the orphaned escrow never went back to cash"
            await asyncio.sleep(0.2)
            # Once the dead instance's lease expires, this instance claims the table's partition
            # (POKER_TABLE_RECONCILE_CLAIM) or takes it on this view, and reconciles its escrow.
            await c.view(table_id)
        assert await balance(c.staff_wallet, f"escrow/{table_id}/bob", meta=()) == 0
        assert await balance(c.staff_wallet, f"escrow/{table_id}/ann", meta=()) == buy_in  # seated: untouched
        await asyncio.sleep(2.0)  # a few more reconciliation passes: nothing moves again
        (returned,) = await returns_of(c, "bob")
        assert returned.startswith("cash_out/reconcile:")
        assert await returns_of(c, "ann") == []
        assert await balance(c.staff_wallet, "cash/bob", meta=()) == 10_000
    report = await check_chips(
        table_target=table_target,
        wallet_target=wallet_target,
        table_ids=[table_id],
        players={table_id: {"ann", "bob"}},
        deposits=20_000,
        house_before=house,
        attempts=1,
        conn=conn,
    )
    assert report.conserved, report.problems

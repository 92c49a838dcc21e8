"""A seated player's escrow changed behind the table's back (a ``CashOut`` sent straight to the
wallet as the table, on a plaintext rig) is a drift: ``pokerctl ledger audit`` names the table,
the player and both amounts and exits 1, and the table's escrow reconciliation logs it and moves
nothing; a clean system reports none (real nats-server, real wallet and table services)."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import pytest

from openpoker.api.table.v1 import table_service_pb2_grpc as pb_grpc
from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.api.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from openpoker.dispute.escrow import EscrowDrift
from openpoker.pokerctl.__main__ import main
from openpoker.services.wallet.server import WalletServer
from openpoker.shell.client import channel
from tests.integration.table_system import balance, table_service
from tests.services.table.helpers import create, join

pytestmark = pytest.mark.integration

AS_TABLE = (("x-caller", "table"),)
RECONCILE = {"POKER_TABLE_RECONCILE_EVERY": "0.1", "POKER_TABLE_RECONCILE_GRACE": "0.2"}


async def audit(nats_url: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any], str]:
    """``pokerctl ledger audit`` as JSON and as text: (exit code, report, text)."""
    capsys.readouterr()
    code = await asyncio.to_thread(main, ["ledger", "audit", "--json", "--nats", nats_url])
    # The services run in this process and log to the same stdout: the report is the JSON line.
    out = capsys.readouterr().out.splitlines()
    report = json.loads(next(line for line in reversed(out) if line.startswith("{")))
    text_code = await asyncio.to_thread(main, ["ledger", "audit", "--nats", nats_url])
    assert text_code == code
    return code, report, capsys.readouterr().out


async def test_an_escrow_emptied_behind_the_table_is_a_drift(
    nats_url: str, wallet: WalletServer, capsys: pytest.CaptureFixture[str]
) -> None:
    table = await table_service(nats_url, wallet, "table-a", env=RECONCILE)
    try:
        async with channel(table.server.address) as chan:
            stub = pb_grpc.TableServiceStub(chan)
            await create(stub, "t1")
            await join(stub, "ann", 1)
            await join(stub, "bob", 2, buy_in=150)
        # Clean: every seat's stack is its escrow.
        code, report, text = await audit(nats_url, capsys)
        assert code == 0
        assert report["ok"] is True
        assert report["escrow"] == {"ok": True, "tables": 1, "seats": 2, "settling": [], "drifts": []}
        assert "escrows: 2 seats at 1 tables against their stacks" in text
        assert "OK: every invariant holds" in text

        # Between hands, bob's escrow is emptied by a cash-out the table never asked for.
        async with channel(wallet.server.address) as wchan:
            wstub: Any = wpb_grpc.WalletServiceStub(wchan)
            await wstub.CashOut(
                wpb.CashOutRequest(request_id=str(uuid.uuid4()), table_id="t1", player="bob", amount=150),
                metadata=AS_TABLE,
            )
        assert await balance(wallet, "escrow/t1/bob") == 0

        code, report, text = await audit(nats_url, capsys)
        assert code == 1
        assert report["ok"] is False
        assert report["escrow"]["drifts"] == [{"table": "t1", "player": "bob", "stack": 150, "escrow": 0}]
        drift = "escrow drift at table t1: bob has 150 at the table, 0 in escrow/t1/bob"
        assert report["breaches"] == [drift]
        # The ledger's own invariants still hold: only the cross-check sees it.
        assert report["currency"]
        assert f"BREACH: {drift}" in text

        # The table's reconciliation reports it too, and moves nothing for it.
        reconciler = table.app.reconciler
        assert reconciler is not None
        loop = asyncio.get_running_loop()
        end = loop.time() + 20.0  # a liveness guard, not a timing assertion
        while "t1" not in reconciler.drifts:
            assert loop.time() < end, "the reconciliation never reported the drift"
            await asyncio.sleep(0.05)
        assert reconciler.drifts["t1"] == (EscrowDrift(table_id="t1", player="bob", stack=150, escrow=0),)
        assert await balance(wallet, "escrow/t1/ann") == 200
        assert await balance(wallet, "cash/ann") == 800
        assert await balance(wallet, "cash/bob") == 1000
    finally:
        await table.stop()

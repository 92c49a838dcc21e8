"""The wallet over a real nats-server: persistence, restart, fencing, and the ledger audit."""

from __future__ import annotations

import asyncio
import datetime as dt
import json

import nats
import pytest

from openpoker.engine.rules import RakeRules
from openpoker.eventstore import ConcurrencyConflict
from openpoker.ledger import accounts
from openpoker.ledger.codec import encode_state
from openpoker.ledger.commands import BuyIn, Deposit, OpenHand, PlayerAmount, SettleHand, VoidHand
from openpoker.ledger.events import TransfersCommitted
from openpoker.ledger.store import Position
from openpoker.ledger.transfers import Phase, TransferCode, TransferRecord
from openpoker.pokerctl.__main__ import main as pokerctl
from openpoker.pokerctl.cmd_ledger import audit_live
from openpoker.services.wallet.app import WalletApp
from openpoker.services.wallet.server import open_store
from openpoker.shell.natsproc import NatsServer

pytestmark = pytest.mark.integration

RAKE = RakeRules(basis_points=500, caps=((2, 100),))


async def _play(app: WalletApp) -> None:
    for p in ("a", "b"):
        await app.execute(Deposit(request_id=f"d-{p}", player=p, amount=5000))
        await app.execute(BuyIn(request_id=f"b-{p}", table_id="t1", player=p, amount=2000))
    stacks = (PlayerAmount(player="a", amount=2000), PlayerAmount(player="b", amount=2000))
    await app.execute(OpenHand(request_id="o1", table_id="t1", hand_no=1, stacks=stacks, rake=RAKE))
    await app.execute(
        SettleHand(
            request_id="s1",
            table_id="t1",
            hand_no=1,
            contributions=(PlayerAmount(player="a", amount=500), PlayerAmount(player="b", amount=500)),
            payouts=(PlayerAmount(player="a", amount=950),),
            rake=50,
            saw_flop=True,
        )
    )
    after = (PlayerAmount(player="a", amount=2450), PlayerAmount(player="b", amount=1500))
    await app.execute(OpenHand(request_id="o2", table_id="t1", hand_no=2, stacks=after, rake=RAKE))


async def test_ledger_survives_a_restart_and_audits_clean(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        app = WalletApp(await open_store(nc), currency="CHIPS", snapshot_every=4)
        await app.start()
        await _play(app)
        again = WalletApp(await open_store(nc), currency="CHIPS")
        await again.start()
        assert encode_state(again.state) == encode_state(app.state)
        assert (await again.execute(Deposit(request_id="d-a", player="a", amount=5000))).duplicate
        await again.execute(VoidHand(request_id="v2", table_id="t1", hand_no=2))
        assert again.state.balance(accounts.escrow("t1", "a")).available == 2450
    finally:
        await nc.close()
    result = await audit_live(nats_url)
    assert result.ok, result.report.breaches
    assert result.report.house_rake == 50
    assert (result.report.hands_settled, result.report.hands_voided) == (1, 1)


async def test_a_second_writer_is_fenced(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        first = WalletApp(await open_store(nc), currency="CHIPS")
        await first.start()
        second = WalletApp(await open_store(nc), currency="CHIPS")
        await second.start()
        await first.execute(Deposit(request_id="d1", player="a", amount=100))
        # The second writer's view is stale: its append conflicts, it reloads and decides again.
        await second.execute(Deposit(request_id="d2", player="a", amount=50))
        assert second.state.balance(accounts.cash("a")).balance == 150
        store = second.store
        _, position = await store.load()
        stale = Position(sequence=position.sequence - 1, version=position.version, hash=position.hash)
        with pytest.raises(ConcurrencyConflict):
            await store.append((), request_id="x", position=stale, epoch=position.epoch + 1, now=_now())
    finally:
        await nc.close()
    assert (await audit_live(nats_url)).ok


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


async def _forge(url: str) -> None:
    nc = await nats.connect(url)
    try:
        app = WalletApp(await open_store(nc), currency="CHIPS")
        await app.start()
        await _play(app)
        # Money out of nothing, behind the wallet's back: a transfer from "cash/ghost".
        forged = TransferRecord(
            id="forged",
            phase=Phase.SINGLE,
            code=TransferCode.DEPOSIT,
            debit="cash/ghost",
            credit="cash/a",
            amount=1,
        )
        _, position = await app.store.load()
        await app.store.append(
            (TransfersCommitted(request_id="forged", transfers=(forged,)),),
            request_id="forged",
            position=position,
            epoch=position.epoch + 1,
            now=_now(),
        )
    finally:
        await nc.close()


def test_audit_names_a_breach_and_works_offline(
    nats_server: NatsServer, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(_forge(nats_server.url))
    capsys.readouterr()
    nats_server.stop()
    copy_source = nats_server.data_dir
    code = pokerctl(["ledger", "audit", "--json", "--data-dir", str(copy_source)])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert report["ok"] is False
    assert any("negative balance on cash/ghost" in b for b in report["breaches"])
    assert any("closed system" in b for b in report["breaches"])

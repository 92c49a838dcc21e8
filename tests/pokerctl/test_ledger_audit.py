"""``pokerctl ledger audit``: exit codes and reports (a breach is tested with a real server in
tests/integration/test_wallet_jetstream.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import nats
import pytest

from openpoker.ledger.commands import Deposit
from openpoker.pokerctl.__main__ import main
from openpoker.services.wallet.app import WalletApp
from openpoker.services.wallet.server import open_store
from openpoker.shell.natsproc import free_port


def test_unreachable_nats_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    nowhere = f"nats://127.0.0.1:{free_port()}"  # a port nothing listens on
    assert main(["ledger", "audit", "--nats", nowhere]) == 2
    assert "cannot connect" in capsys.readouterr().err


def test_a_folder_without_a_store_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ledger", "audit", "--data-dir", str(tmp_path)]) == 2
    assert "no jetstream/ store" in capsys.readouterr().err


@pytest.mark.integration
def test_no_ledger_on_the_server_exits_2(nats_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ledger", "audit", "--nats", nats_url]) == 2
    assert "no stream WALLET_EVENTS" in capsys.readouterr().err


async def _deposit(url: str) -> None:
    nc = await nats.connect(url)
    try:
        app = WalletApp(await open_store(nc), currency="EUR")
        await app.start()
        await app.execute(Deposit(request_id="d1", player="ann", amount=1234))
    finally:
        await nc.close()


@pytest.mark.integration
def test_a_sound_ledger_exits_0(nats_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    asyncio.run(_deposit(nats_url))
    capsys.readouterr()  # the wallet's own log lines
    assert main(["ledger", "audit", "--json", "--nats", nats_url]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["ok"], report["currency"], report["deposits"], report["messages"]) == (
        True,
        "EUR",
        1234,
        2,
    )
    assert main(["ledger", "audit", "--nats", nats_url]) == 0
    assert "OK: every invariant holds" in capsys.readouterr().out

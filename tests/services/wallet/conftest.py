"""A real ``grpc.aio`` wallet server on a free port over the in-memory event store."""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import pytest
from grpc import aio

from openpoker.api.wallet.v1 import wallet_service_pb2_grpc as pb_grpc
from openpoker.eventstore.memory import InMemoryEventStore
from openpoker.ledger.limits import WithdrawalLimits
from openpoker.ledger.store import WalletStore
from openpoker.services.wallet.app import WalletApp
from openpoker.services.wallet.config import DEFAULT_WITHDRAWAL_LIMITS
from openpoker.services.wallet.server import spec
from openpoker.shell.client import channel
from openpoker.shell.config import ShellConfig
from openpoker.shell.server import RunningServer, start_server


def caller(name: str) -> tuple[tuple[str, str], ...]:
    return (("x-caller", name),)


CASHIER = caller("cashier")
TABLE = caller("table")
DEALER = caller("dealer")


@dataclass
class Rig:
    stub: pb_grpc.WalletServiceAsyncStub
    app: WalletApp
    events: InMemoryEventStore
    running: RunningServer
    chan: aio.Channel

    async def close(self) -> None:
        await self.chan.close()
        await self.running.stop(0)


async def start_rig(
    events: InMemoryEventStore,
    *,
    snapshot_every: int = 1000,
    currency: str = "CHIPS",
    clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    withdrawal_limits: WithdrawalLimits = DEFAULT_WITHDRAWAL_LIMITS,
) -> Rig:
    app = WalletApp(
        WalletStore(events),
        currency=currency,
        snapshot_every=snapshot_every,
        clock=clock,
        withdrawal_limits=withdrawal_limits,
    )
    await app.start()
    config = ShellConfig.from_env("wallet", environ={"POKER_INSECURE": "true", "POKER_WALLET_PORT": "0"})
    running = await start_server(config, [spec(app)])
    chan: aio.Channel = channel(running.address)
    return Rig(stub=pb_grpc.WalletServiceStub(chan), app=app, events=events, running=running, chan=chan)


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    r = await start_rig(InMemoryEventStore(), snapshot_every=3)
    try:
        yield r
    finally:
        await r.close()

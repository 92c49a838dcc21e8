"""A real wallet service and table-service instances on a real nats-server (integration tests)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Iterable, Mapping
from typing import Any

from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.api.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from openpoker.services.table.config import TableConfig
from openpoker.services.table.server import TableServer
from openpoker.services.table.server import start as start_table
from openpoker.services.wallet.config import WalletConfig
from openpoker.services.wallet.server import WalletServer
from openpoker.services.wallet.server import start as start_wallet
from openpoker.shell.client import channel

CASHIER = (("x-caller", "cashier"),)


async def wallet_service(nats_url: str) -> WalletServer:
    return await start_wallet(
        WalletConfig.from_env(
            {
                "POKER_INSECURE": "true",
                "POKER_WALLET_PORT": "0",
                "POKER_NATS_URL": nats_url,
                "POKER_GRACE_SECONDS": "0.5",
            }
        )
    )


@contextlib.asynccontextmanager
async def funded_wallet(
    nats_url: str, players: Iterable[str], amount: int = 1000
) -> AsyncIterator[WalletServer]:
    """A wallet service where each of ``players`` has ``amount`` in cash; stopped after."""
    running = await wallet_service(nats_url)
    try:
        for player in players:
            await deposit(running, player, amount)
        yield running
    finally:
        await running.stop()


async def table_service(
    nats_url: str,
    wallet: WalletServer,
    instance: str,
    *,
    ttl: float = 10.0,
    env: Mapping[str, str] | None = None,
) -> TableServer:
    """A table-service instance; ``env`` adds or overrides settings."""
    return await start_table(
        TableConfig.from_env(
            {
                "POKER_INSECURE": "true",
                "POKER_TABLE_PORT": "0",
                "POKER_NATS_URL": nats_url,
                "POKER_TABLE_WALLET": wallet.server.address,
                "POKER_TABLE_INSTANCE": instance,
                "POKER_TABLE_LEASE_TTL": str(ttl),
                "POKER_GRACE_SECONDS": "0.5",
                **(env or {}),
            }
        )
    )


async def deposit(wallet: WalletServer, player: str, amount: int) -> None:
    async with channel(wallet.server.address) as chan:
        stub: Any = wpb_grpc.WalletServiceStub(chan)
        await stub.Deposit(
            wpb.DepositRequest(request_id=str(uuid.uuid4()), player=player, amount=amount), metadata=CASHIER
        )


async def balance(wallet: WalletServer, account: str) -> int:
    async with channel(wallet.server.address) as chan:
        stub: Any = wpb_grpc.WalletServiceStub(chan)
        reply = await stub.GetBalance(wpb.GetBalanceRequest(account=account), metadata=CASHIER)
        return int(reply.balance.balance)

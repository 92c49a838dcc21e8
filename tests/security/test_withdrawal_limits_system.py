"""Withdrawal limits on a running system with TLS on (``LocalSystem(secure=True)``: real
nats-server, every service a process, a cashier with a token on the wallet's client port): the
per-request and per-day refusals with their numbers, a retry answered as a duplicate, and the
day's total still counted after the wallet is killed and started again (rebuilt from its log).

The wallet runs with small withdrawal limits here (set in the environment the services inherit).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell.client import rich_error
from openpoker.shell.tokens import Role
from tests.helpers.secure import Calls, Meta, token
from tests.helpers.system import local_system

pytestmark = [pytest.mark.slow, pytest.mark.integration]

MAX_WITHDRAWAL = 30_000
DAILY_WITHDRAWAL = 50_000
LIMITS = {
    "POKER_WALLET_MAX_WITHDRAWAL": str(MAX_WITHDRAWAL),
    "POKER_WALLET_DAILY_WITHDRAWAL": str(DAILY_WITHDRAWAL),
}


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    with local_system(tmp_path_factory.mktemp("withdrawals"), LIMITS, secure=True) as local:
        yield local


def withdraw(calls: Calls, meta: Meta, amount: int, request_id: str = "") -> Any:
    request = wpb.WithdrawRequest(request_id=request_id or str(uuid.uuid4()), player="wes", amount=amount)
    return calls.wallet.Withdraw(request, timeout=5, metadata=meta)


async def refused(call: Any) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    with pytest.raises(grpc.RpcError) as err:
        await call
    rich = rich_error(err.value)
    return rich.code, rich.reason, dict(rich.metadata)


async def past_midnight_if_near() -> None:
    """The wallet dates withdrawals by its own clock: keep the test inside one UTC day by
    waiting out a midnight less than two minutes away."""
    now = dt.datetime.now(dt.UTC)
    midnight = dt.datetime.combine(now.date() + dt.timedelta(days=1), dt.time(), dt.UTC)
    if midnight - now < dt.timedelta(minutes=2):
        await asyncio.sleep((midnight - now).total_seconds() + 1)


async def test_withdrawal_limits_per_request_and_per_day_survive_a_wallet_restart(
    system: LocalSystem,
) -> None:
    await past_midnight_if_near()
    cashier = token(system, "cashier-w", Role.CASHIER)
    calls = Calls(system)
    try:
        deposit = wpb.DepositRequest(request_id=str(uuid.uuid4()), player="wes", amount=100_000)
        await calls.wallet.Deposit(deposit, timeout=5, metadata=cashier)
        assert await refused(withdraw(calls, cashier, MAX_WITHDRAWAL + 1)) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "WITHDRAWAL_OVER_LIMIT",
            {"account": "cash/wes", "amount": str(MAX_WITHDRAWAL + 1), "limit": str(MAX_WITHDRAWAL)},
        )
        first = await withdraw(calls, cashier, MAX_WITHDRAWAL, request_id="wes-1")
        await withdraw(calls, cashier, DAILY_WITHDRAWAL - MAX_WITHDRAWAL)
        over_the_day = (
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "DAILY_WITHDRAWAL_LIMIT_REACHED",
            {
                "account": "cash/wes",
                "amount": "1",
                "withdrawn": str(DAILY_WITHDRAWAL),
                "limit": str(DAILY_WITHDRAWAL),
            },
        )
        assert await refused(withdraw(calls, cashier, 1)) == over_the_day
        again = await withdraw(calls, cashier, MAX_WITHDRAWAL, request_id="wes-1")
        assert again.duplicate
        assert list(again.transfers) == list(first.transfers)
    finally:
        await calls.close()

    await system.restart("wallet")  # SIGKILL, then the same address: the state comes from the log
    calls = Calls(system)
    try:
        assert await refused(withdraw(calls, cashier, 1)) == over_the_day
        got = await calls.staff_wallet.GetBalance(wpb.GetBalanceRequest(account="cash/wes"), timeout=5)
        assert got.balance.balance == 100_000 - DAILY_WITHDRAWAL
    finally:
        await calls.close()

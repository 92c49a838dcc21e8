"""Withdrawal limits at the wallet's gRPC edge: the wallet's clock dates each withdrawal, the
refusals carry their reason and numbers, a retry is a duplicate, and a restart (from the log or
from a snapshot) still counts the day's withdrawals."""

from __future__ import annotations

import datetime as dt
import json
import zlib

import grpc
import pytest

from openpoker.api.wallet.v1 import wallet_service_pb2 as pb
from openpoker.eventstore.memory import InMemoryEventStore
from openpoker.ledger.limits import WithdrawalLimits
from openpoker.ledger.store import STREAM_ID
from openpoker.shell.client import rich_error

from .conftest import CASHIER, Rig, start_rig

LIMITS = WithdrawalLimits(max_withdrawal=1_000, daily_withdrawal=2_500)


class Clock:
    def __init__(self) -> None:
        self.now = dt.datetime(2026, 11, 27, 23, 50, tzinfo=dt.UTC)

    def __call__(self) -> dt.datetime:
        return self.now


async def withdraw(rig: Rig, rid: str, amount: int) -> pb.WithdrawResponse:
    request = pb.WithdrawRequest(request_id=rid, player="ann", amount=amount)
    response: pb.WithdrawResponse = await rig.stub.Withdraw(request, metadata=CASHIER)
    return response


async def refused(rig: Rig, rid: str, amount: int) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await withdraw(rig, rid, amount)
    err = rich_error(info.value)
    assert err.domain == "poker.wallet"
    return err.code, err.reason, dict(err.metadata)


@pytest.mark.parametrize("snapshot", [False, True])
async def test_limits_per_request_and_per_day_across_a_restart(snapshot: bool) -> None:
    events = InMemoryEventStore()
    clock = Clock()
    rig = await start_rig(events, clock=clock, withdrawal_limits=LIMITS)
    try:
        await rig.stub.Deposit(
            pb.DepositRequest(request_id="d", player="ann", amount=50_000), metadata=CASHIER
        )
        assert await refused(rig, "w0", 1_001) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "WITHDRAWAL_OVER_LIMIT",
            {"account": "cash/ann", "amount": "1001", "limit": "1000"},
        )
        await withdraw(rig, "w1", 1_000)
        await withdraw(rig, "w2", 1_000)
        if snapshot:
            await rig.app.snapshot()
            saved = await events.load_snapshot(STREAM_ID)
            assert saved is not None
            body = json.loads(zlib.decompress(saved.state))
            assert body["state"]["withdrawal_days"] == {"cash/ann": ["2026-11-27", 2_000]}
    finally:
        await rig.close()

    rig = await start_rig(events, clock=clock, withdrawal_limits=LIMITS)
    try:
        assert await refused(rig, "w3", 501) == (
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "DAILY_WITHDRAWAL_LIMIT_REACHED",
            {"account": "cash/ann", "amount": "501", "withdrawn": "2000", "limit": "2500"},
        )
        again = await withdraw(rig, "w1", 1_000)  # a retry is answered, not refused
        assert again.duplicate
        assert again.cash.balance == 48_000
        clock.now += dt.timedelta(minutes=20)  # the next UTC day
        fresh = await withdraw(rig, "w3", 1_000)
        assert (fresh.duplicate, fresh.cash.balance) == (False, 47_000)
    finally:
        await rig.close()

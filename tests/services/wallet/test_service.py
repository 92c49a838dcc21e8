"""The wallet gRPC API over the in-memory event store: flows, errors, callers, pages, restarts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import grpc
import pytest

from openpoker.api.wallet.v1 import wallet_service_pb2 as pb
from openpoker.ledger.audit import audit
from openpoker.ledger.codec import encode_state
from openpoker.ledger.errors import CurrencyMismatch
from openpoker.shell.client import rich_error

from .conftest import CASHIER, DEALER, TABLE, Rig, caller, start_rig

RAKE = pb.RakeRules(
    basis_points=500,
    caps=[pb.RakeCap(min_players_dealt_in=2, cap=125), pb.RakeCap(min_players_dealt_in=5, cap=275)],
    no_flop_no_drop=True,
)


async def failure(call: Callable[[], Awaitable[object]]) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call()
    err = rich_error(info.value)
    assert err.domain == "poker.wallet"
    return err.code, err.reason, dict(err.metadata)


async def deposit(rig: Rig, player: str, amount: int, rid: str | None = None) -> pb.DepositResponse:
    request = pb.DepositRequest(request_id=rid or f"dep-{player}-{amount}", player=player, amount=amount)
    response: pb.DepositResponse = await rig.stub.Deposit(request, metadata=CASHIER)
    return response


async def seat(rig: Rig, player: str, amount: int, table: str = "t1") -> pb.BuyInResponse:
    request = pb.BuyInRequest(
        request_id=f"buy-{player}-{table}", table_id=table, player=player, amount=amount
    )
    response: pb.BuyInResponse = await rig.stub.BuyIn(request, metadata=TABLE)
    return response


async def test_deposit_balance_and_retry(rig: Rig) -> None:
    first = await deposit(rig, "alice", 1000, rid="d1")
    assert (first.duplicate, first.cash.balance, first.currency) == (False, 1000, "CHIPS")
    assert first.transfers[0].debit_account == "world"
    assert first.transfers[0].code == pb.TRANSFER_CODE_DEPOSIT
    again = await deposit(rig, "alice", 1000, rid="d1")
    assert again.duplicate
    assert again.transfers == first.transfers
    assert again.cash.balance == 1000
    world = await rig.stub.GetBalance(pb.GetBalanceRequest(account="world"), metadata=CASHIER)
    assert world.balance.balance == -1000


async def test_errors_carry_reasons_and_numbers(rig: Rig) -> None:
    await deposit(rig, "alice", 1000, rid="d1")
    withdraw = pb.WithdrawRequest(request_id="w1", player="alice", amount=1001)
    code, reason, meta = await failure(lambda: rig.stub.Withdraw(withdraw, metadata=CASHIER))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "INSUFFICIENT_FUNDS")
    assert meta == {"account": "cash/alice", "available": "1000", "amount": "1001"}
    code, reason, meta = await failure(lambda: deposit(rig, "alice", 5, rid="d1"))
    assert (code, reason, meta["field"]) == (grpc.StatusCode.ALREADY_EXISTS, "TRANSFER_ID_REUSED", "amount")
    for bad in (0, -3):
        code, reason, _ = await failure(lambda bad=bad: deposit(rig, "alice", bad, rid=f"x{bad}"))  # type: ignore[misc]
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_AMOUNT")
    code, reason, _ = await failure(
        lambda: rig.stub.GetBalance(pb.GetBalanceRequest(account="cash/nobody"), metadata=CASHIER)
    )
    assert (code, reason) == (grpc.StatusCode.NOT_FOUND, "UNKNOWN_ACCOUNT")
    wrong = pb.DepositRequest(request_id="d9", player="alice", amount=1, currency="EUR")
    code, reason, _ = await failure(lambda: rig.stub.Deposit(wrong, metadata=CASHIER))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "CURRENCY_MISMATCH")


async def test_callers_are_checked(rig: Rig) -> None:
    request = pb.DepositRequest(request_id="d1", player="alice", amount=10)
    code, reason, _ = await failure(lambda: rig.stub.Deposit(request))
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "CALLER_REQUIRED")
    code, reason, _ = await failure(lambda: rig.stub.Deposit(request, metadata=caller("table")))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED")
    settle = pb.SettleHandRequest(request_id="s", table_id="t1", hand_number=1)
    code, reason, _ = await failure(lambda: rig.stub.SettleHand(settle, metadata=CASHIER))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED")


async def test_a_hand_end_to_end(rig: Rig) -> None:
    for p in ("a", "b", "c"):
        await deposit(rig, p, 10_000)
        await seat(rig, p, 4_000)
    open_req = pb.OpenHandRequest(
        request_id="o1",
        table_id="t1",
        hand_number=1,
        stacks=[pb.PlayerAmount(player=p, amount=4_000) for p in ("a", "b", "c")],
        rake=RAKE,
    )
    opened = await rig.stub.OpenHand(open_req, metadata=DEALER)
    assert [t.phase for t in opened.transfers] == [pb.TRANSFER_PHASE_PENDING] * 3
    cash_out = pb.CashOutRequest(request_id="c1", table_id="t1", player="a")
    code, reason, _ = await failure(lambda: rig.stub.CashOut(cash_out, metadata=TABLE))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "PLAYER_IN_HAND")
    settle = pb.SettleHandRequest(
        request_id="s1",
        table_id="t1",
        hand_number=1,
        contributions=[pb.PlayerAmount(player="a", amount=1000), pb.PlayerAmount(player="b", amount=1000)],
        payouts=[pb.PlayerAmount(player="b", amount=1900)],
        rake=100,
        saw_flop=True,
    )
    bad = pb.SettleHandRequest()
    bad.CopyFrom(settle)
    bad.rake = 99
    bad.payouts[0].amount = 1901
    code, reason, meta = await failure(lambda: rig.stub.SettleHand(bad, metadata=DEALER))
    assert (code, reason, meta["expected"]) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "SETTLEMENT_MISMATCH",
        "100",
    )
    settled = await rig.stub.SettleHand(settle, metadata=DEALER)
    assert (settled.pot, settled.rake, settled.duplicate) == (2000, 100, False)
    assert (await rig.stub.SettleHand(settle, metadata=DEALER)).duplicate
    void = pb.VoidHandRequest(request_id="v1", table_id="t1", hand_number=1)
    code, reason, _ = await failure(lambda: rig.stub.VoidHand(void, metadata=DEALER))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "HAND_ALREADY_SETTLED")
    out = await rig.stub.CashOut(cash_out, metadata=TABLE)
    assert (out.transfers[0].amount, out.cash.balance, out.escrow.balance) == (3000, 9000, 0)
    house = await rig.stub.GetBalance(pb.GetBalanceRequest(account="house/rake"), metadata=CASHIER)
    assert house.balance.balance == 100
    report, _ = audit(e for _, events in await rig.app.store.read_all() for e in events)
    assert report.ok, report.breaches


async def test_list_transfers_pages(rig: Rig) -> None:
    for i in range(7):
        await deposit(rig, "alice", 10 + i, rid=f"d{i}")
    seen: list[int] = []
    token = ""
    pages = 0
    while True:
        page = await rig.stub.ListTransfers(
            pb.ListTransfersRequest(account="cash/alice", page_size=3, page_token=token), metadata=CASHIER
        )
        seen.extend(t.amount for t in page.transfers)
        pages += 1
        token = page.next_page_token
        if not token:
            break
    assert seen == [10 + i for i in range(7)]
    assert pages == 3
    code, reason, _ = await failure(
        lambda: rig.stub.ListTransfers(
            pb.ListTransfersRequest(account="world", page_token="bogus"), metadata=CASHIER
        )
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_PAGE_TOKEN")
    code, reason, _ = await failure(
        lambda: rig.stub.ListTransfers(pb.ListTransfersRequest(page_size=-1), metadata=CASHIER)
    )
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_PAGE_SIZE")


async def test_restart_rebuilds_the_same_state_from_snapshot_and_log(rig: Rig) -> None:
    for i in range(8):  # snapshots every 3 commands in this rig
        await deposit(rig, f"p{i % 3}", 100 + i, rid=f"d{i}")
    await rig.close()
    again = await start_rig(rig.events)
    try:
        assert encode_state(again.app.state) == encode_state(rig.app.state)
        retry = await deposit(again, "p0", 100, rid="d0")
        assert retry.duplicate
        snapshot = await rig.events.load_snapshot("wallet")
        assert snapshot is not None
        assert snapshot.version > 1
        full, _ = await again.app.store.load(use_snapshot=False)
        assert encode_state(full) == encode_state(again.app.state)
    finally:
        await again.close()


async def test_a_ledger_keeps_its_currency(rig: Rig) -> None:
    await rig.close()
    with pytest.raises(CurrencyMismatch):
        await start_rig(rig.events, currency="EUR")
    again = await start_rig(rig.events)
    await again.close()


async def test_on_a_plaintext_rig_a_player_reads_only_their_own_accounts(rig: Rig) -> None:
    await deposit(rig, "alice", 300)
    await deposit(rig, "bob", 400)
    alice = (*caller("player"), ("x-player-id", "alice"))
    own = await rig.stub.GetBalance(pb.GetBalanceRequest(account="cash/alice"), metadata=alice)
    assert own.balance.balance == 300
    before = encode_state(rig.app.state)
    for account in ("cash/bob", "world"):
        code, reason, _ = await failure(
            lambda a=account: rig.stub.GetBalance(pb.GetBalanceRequest(account=a), metadata=alice)  # type: ignore[misc]
        )
        assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT")
    nameless = caller("player")  # a player with no x-player-id is nobody's
    code, reason, _ = await failure(
        lambda: rig.stub.ListTransfers(pb.ListTransfersRequest(account="cash/alice"), metadata=nameless)
    )
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT")
    code, reason, _ = await failure(lambda: rig.stub.GetBalance(pb.GetBalanceRequest(account="cash/bob")))
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "CALLER_REQUIRED")
    assert encode_state(rig.app.state) == before

"""Who may call what, on a running system with TLS on (``LocalSystem(secure=True)``: real
nats-server, every service a process, people with tokens on the client ports, ``pokerctl`` with
its staff certificate). Each refusal is checked for its code and reason, and that nothing changed
(balances, the table's version, the dealer's paused tables).

The wallet runs with small deposit limits here (set in the environment the services inherit).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from openpoker.api.dealer.v1 import dealer_service_pb2 as dpb
from openpoker.api.rng.v1 import rng_service_pb2 as rpb
from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.pokerctl.bots import buy_in_for, table_config
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell.client import rich_error
from openpoker.shell.tokens import Role
from tests.helpers.secure import Calls, Meta, token
from tests.helpers.system import local_system
from tests.helpers.waiting import answer

pytestmark = [pytest.mark.slow, pytest.mark.integration]

MAX_DEPOSIT = 50_000
DAILY_DEPOSIT = 120_000
MAX_BALANCE = 100_000
LIVE = "authz-live"  # two players who never act (60 s clock): a hand stays live


LIMITS = {
    "POKER_WALLET_MAX_DEPOSIT": str(MAX_DEPOSIT),
    "POKER_WALLET_DAILY_DEPOSIT": str(DAILY_DEPOSIT),
    "POKER_WALLET_MAX_BALANCE": str(MAX_BALANCE),
}


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSystem]:
    with local_system(tmp_path_factory.mktemp("authz"), LIMITS, secure=True) as local:
        yield local


def rid() -> str:
    return str(uuid.uuid4())


async def refused(call: Any) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    with pytest.raises(grpc.RpcError) as err:
        await call
    rich = rich_error(err.value)
    return rich.code, rich.reason, dict(rich.metadata)


async def cash(calls: Calls, player: str) -> int:
    try:
        got = await calls.staff_wallet.GetBalance(wpb.GetBalanceRequest(account=f"cash/{player}"), timeout=5)
    except grpc.RpcError as err:
        if rich_error(err).reason == "UNKNOWN_ACCOUNT":
            return 0
        raise
    return int(got.balance.balance)


def deposit(calls: Calls, meta: Meta, player: str, amount: int, request_id: str = "") -> Any:
    request = wpb.DepositRequest(request_id=request_id or rid(), player=player, amount=amount)
    return calls.wallet.Deposit(request, timeout=5, metadata=meta)


# -- wallet: money in and out -----------------------------------------------------------------


async def test_deposits_need_a_cashier_an_operator_or_pokerctl(system: LocalSystem, calls: Calls) -> None:
    for role in (Role.PLAYER, Role.AUDITOR, Role.SPECTATOR):
        got = await refused(deposit(calls, token(system, "mallory", role), "mallory", 100))
        assert got[:2] == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED"), role
        withdraw = wpb.WithdrawRequest(request_id=rid(), player="mallory", amount=1)
        got = await refused(calls.wallet.Withdraw(withdraw, timeout=5, metadata=token(system, "m", role)))
        assert got[:2] == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED"), role
    assert (await refused(deposit(calls, (), "mallory", 100)))[:2] == (
        grpc.StatusCode.UNAUTHENTICATED,
        "CALLER_REQUIRED",
    )
    assert await cash(calls, "mallory") == 0
    await deposit(calls, token(system, "c", Role.CASHIER), "mallory", 100)
    await deposit(calls, token(system, "o", Role.OPERATOR), "mallory", 100)
    await calls.staff_wallet.Deposit(
        wpb.DepositRequest(request_id=rid(), player="mallory", amount=100), timeout=5
    )
    assert await cash(calls, "mallory") == 300


async def test_deposit_limits_per_request_per_day_and_balance(system: LocalSystem, calls: Calls) -> None:
    cashier = token(system, "cashier-1", Role.CASHIER)
    code, reason, meta = await refused(deposit(calls, cashier, "dana", MAX_DEPOSIT + 1))
    assert (code, reason, meta["limit"]) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "DEPOSIT_OVER_LIMIT",
        str(MAX_DEPOSIT),
    )
    assert await cash(calls, "dana") == 0
    await deposit(calls, cashier, "dana", MAX_DEPOSIT)
    await deposit(calls, cashier, "dana", MAX_DEPOSIT)
    code, reason, meta = await refused(deposit(calls, cashier, "dana", 1))
    assert (code, reason, meta["limit"], meta["balance"]) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "BALANCE_CEILING",
        str(MAX_BALANCE),
        str(2 * MAX_DEPOSIT),
    )
    withdraw = wpb.WithdrawRequest(request_id=rid(), player="dana", amount=2 * MAX_DEPOSIT)
    await calls.wallet.Withdraw(withdraw, timeout=5, metadata=cashier)
    over = DAILY_DEPOSIT - 2 * MAX_DEPOSIT + 1
    code, reason, meta = await refused(deposit(calls, cashier, "dana", over))
    assert (code, reason, meta["limit"], meta["deposited"]) == (
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "DAILY_LIMIT_REACHED",
        str(DAILY_DEPOSIT),
        str(2 * MAX_DEPOSIT),
    )
    assert await cash(calls, "dana") == 0

    # The day's total is in the ledger's log: a restarted wallet still knows it.
    await system.restart("wallet")
    await answer(lambda: _serving(calls))
    code, reason, _ = await refused(deposit(calls, cashier, "dana", over))
    assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "DAILY_LIMIT_REACHED")
    assert await cash(calls, "dana") == 0
    await deposit(calls, cashier, "dana", over - 1)  # exactly up to the limit


async def _serving(calls: Calls) -> bool | None:
    try:
        await calls.staff_wallet.GetBalance(wpb.GetBalanceRequest(account="world"), timeout=2)
    except grpc.RpcError:
        return None
    return True


async def test_a_player_reads_only_their_own_accounts(system: LocalSystem, calls: Calls) -> None:
    await calls.staff_wallet.Deposit(
        wpb.DepositRequest(request_id=rid(), player="erin", amount=500), timeout=5
    )
    await calls.staff_wallet.Deposit(
        wpb.DepositRequest(request_id=rid(), player="fred", amount=700), timeout=5
    )
    erin = token(system, "erin")
    own = await calls.wallet.GetBalance(wpb.GetBalanceRequest(account="cash/erin"), timeout=5, metadata=erin)
    assert own.balance.balance == 500
    mine = await calls.wallet.ListTransfers(
        wpb.ListTransfersRequest(account="cash/erin"), timeout=5, metadata=erin
    )
    assert [t.amount for t in mine.transfers] == [500]
    for account in ("cash/fred", "escrow/t1/fred", "world", "house/rake", "cash/erin/x"):
        got = await refused(
            calls.wallet.GetBalance(wpb.GetBalanceRequest(account=account), timeout=5, metadata=erin)
        )
        assert got[:2] == (grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT"), account
        listed = wpb.ListTransfersRequest(account=account)
        got = await refused(calls.wallet.ListTransfers(listed, timeout=5, metadata=erin))
        assert got[:2] == (grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT"), account
    # A header naming fred changes nothing: the token is erin.
    as_fred = (("x-player-id", "fred"), ("x-caller", "cashier"), *erin)
    got = await refused(
        calls.wallet.GetBalance(wpb.GetBalanceRequest(account="cash/fred"), timeout=5, metadata=as_fred)
    )
    assert got[:2] == (grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT")
    anonymous = await refused(calls.wallet.GetBalance(wpb.GetBalanceRequest(account="cash/fred"), timeout=5))
    assert anonymous[:2] == (grpc.StatusCode.UNAUTHENTICATED, "CALLER_REQUIRED")
    spectator = token(system, "sam", Role.SPECTATOR)
    got = await refused(
        calls.wallet.GetBalance(wpb.GetBalanceRequest(account="cash/fred"), timeout=5, metadata=spectator)
    )
    assert got[:2] == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED")
    for role in (Role.CASHIER, Role.AUDITOR, Role.OPERATOR):
        other = await calls.wallet.GetBalance(
            wpb.GetBalanceRequest(account="cash/fred"), timeout=5, metadata=token(system, "staff", role)
        )
        assert other.balance.balance == 700
    assert await cash(calls, "fred") == 700


# -- wallet: seats and hands --------------------------------------------------------------------


async def test_seat_and_hand_money_moves_only_for_the_table_and_the_dealer(
    system: LocalSystem, calls: Calls
) -> None:
    await calls.staff_wallet.Deposit(
        wpb.DepositRequest(request_id=rid(), player="gail", amount=900), timeout=5
    )
    buy_in = wpb.BuyInRequest(request_id=rid(), table_id="t-gail", player="gail", amount=300)
    cash_out = wpb.CashOutRequest(request_id=rid(), table_id="t-gail", player="gail")
    void = wpb.VoidHandRequest(request_id=rid(), table_id="t-gail", hand_number=1)
    for role in (Role.PLAYER, Role.CASHIER, Role.AUDITOR, Role.OPERATOR):
        meta = token(system, "gail", role)
        for call in (
            calls.wallet.BuyIn(buy_in, timeout=5, metadata=meta),
            calls.wallet.CashOut(cash_out, timeout=5, metadata=meta),
            calls.wallet.VoidHand(void, timeout=5, metadata=meta),
        ):
            got = await refused(call)
            assert got[:2] == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED"), role
    # pokerctl's staff certificate neither: it never buys in for anyone.
    got = await refused(calls.staff_wallet.BuyIn(buy_in, timeout=5))
    assert got[:2] == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED")
    escrows = wpb.ListTableEscrowsRequest(table_id="t-gail")
    got = await refused(calls.wallet.ListTableEscrows(escrows, timeout=5, metadata=token(system, "gail")))
    assert got[:2] == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED")
    listed = await calls.wallet.ListTableEscrows(
        escrows, timeout=5, metadata=token(system, "a", Role.AUDITOR)
    )
    assert list(listed.escrows) == []
    assert await cash(calls, "gail") == 900


# -- table, dealer and rng ----------------------------------------------------------------------


async def _live_hand(system: LocalSystem, calls: Calls) -> tuple[int, str]:
    """The live table's version and its hand in flight (dealt by the real dealer)."""
    config = table_config("holdem", "nl", clock_ms=60_000)
    await calls.staff_table.CreateTable(
        tpb.CreateTableRequest(request_id=f"create-{LIVE}", table_id=LIVE, config=config), timeout=5
    )
    for player in ("hana", "ivan"):
        await calls.staff_wallet.Deposit(
            wpb.DepositRequest(request_id=f"dep-{LIVE}-{player}", player=player, amount=10_000), timeout=5
        )
        await calls.table.JoinTable(
            tpb.JoinTableRequest(
                request_id=f"join-{LIVE}-{player}",
                table=f"tables/{LIVE}",
                buy_in=buy_in_for(config),
                post_choice=tpb.POST_CHOICE_POST_NOW,
            ),
            timeout=5,
            metadata=token(system, player),
        )

    async def dealt() -> tpb.Table | None:
        got = await calls.staff_table.GetTable(tpb.GetTableRequest(name=f"tables/{LIVE}"), timeout=5)
        table: tpb.Table = got.table
        return table if table.current_hand.hand_id else None

    table = await answer(dealt)
    return int(table.version), table.current_hand.hand_id


async def test_only_staff_create_tables(system: LocalSystem, calls: Calls) -> None:
    config = table_config("holdem", "nl")
    create = tpb.CreateTableRequest(request_id=rid(), table_id="authz-mine", config=config)
    for role in (Role.PLAYER, Role.CASHIER, Role.AUDITOR):
        got = await refused(calls.table.CreateTable(create, timeout=5, metadata=token(system, "x", role)))
        assert got[:2] == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED"), role
    got = await refused(calls.table.CreateTable(create, timeout=5))
    assert got[:2] == (grpc.StatusCode.UNAUTHENTICATED, "CALLER_REQUIRED")
    missing = await refused(
        calls.staff_table.GetTable(tpb.GetTableRequest(name="tables/authz-mine"), timeout=5)
    )
    assert missing[0] == grpc.StatusCode.NOT_FOUND
    made = await calls.table.CreateTable(create, timeout=5, metadata=token(system, "o", Role.OPERATOR))
    assert made.table.name == "tables/authz-mine"


async def test_the_dealer_takes_orders_from_operators_only(system: LocalSystem, calls: Calls) -> None:
    version, hand_id = await _live_hand(system, calls)
    table = f"tables/{LIVE}"
    pause = dpb.PauseTableRequest(request_id=rid(), table=table)
    void = dpb.VoidHandRequest(request_id=rid(), name=f"{table}/hands/{hand_id}", reason="attack")
    for role in (Role.PLAYER, Role.CASHIER, Role.AUDITOR):
        meta = token(system, "hana", role)
        for call in (
            calls.dealer.PauseTable(pause, timeout=5, metadata=meta),
            calls.dealer.ResumeTable(dpb.ResumeTableRequest(table=table), timeout=5, metadata=meta),
            calls.dealer.VoidHand(void, timeout=5, metadata=meta),
        ):
            got = await refused(call)
            assert got[:2] == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED"), role
    for call in (calls.dealer.PauseTable(pause, timeout=5), calls.dealer.VoidHand(void, timeout=5)):
        assert (await refused(call))[:2] == (grpc.StatusCode.UNAUTHENTICATED, "CALLER_REQUIRED")
    for role in (Role.PLAYER, Role.CASHIER):
        meta = token(system, "hana", role)
        for call in (
            calls.dealer.GetDealerStatus(dpb.GetDealerStatusRequest(), timeout=5, metadata=meta),
            calls.dealer.ListActiveHands(dpb.ListActiveHandsRequest(), timeout=5, metadata=meta),
        ):
            got = await refused(call)
            assert got[:2] == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED"), role
    assert (await refused(calls.dealer.GetDealerStatus(dpb.GetDealerStatusRequest(), timeout=5)))[:2] == (
        grpc.StatusCode.UNAUTHENTICATED,
        "CALLER_REQUIRED",
    )
    # Nothing changed: the hand is still live, the table unpaused, its version the same.
    auditor = token(system, "audrey", Role.AUDITOR)
    status = await calls.dealer.GetDealerStatus(dpb.GetDealerStatusRequest(), timeout=5, metadata=auditor)
    assert status.paused_tables == 0
    hands = await calls.dealer.ListActiveHands(
        dpb.ListActiveHandsRequest(table=table), timeout=5, metadata=auditor
    )
    assert [h.hand_id for h in hands.hands] == [hand_id]
    got = await calls.staff_table.GetTable(tpb.GetTableRequest(name=table), timeout=5)
    assert got.table.version == version
    # An operator token and pokerctl's certificate may.
    operator = token(system, "olga", Role.OPERATOR)
    assert (await calls.dealer.PauseTable(pause, timeout=5, metadata=operator)).paused
    resume = dpb.ResumeTableRequest(request_id=rid(), table=table)
    assert not (await calls.staff_dealer.ResumeTable(resume, timeout=5)).paused


async def test_seeds_go_to_the_auditor_only_after_the_hand(system: LocalSystem, calls: Calls) -> None:
    _, hand_id = await _live_hand(system, calls)
    reveal = rpb.RevealSeedRequest(hand_id=hand_id)
    got = await refused(
        calls.rng.RevealSeed(reveal, timeout=5, metadata=token(system, "audrey", Role.AUDITOR))
    )
    assert got[:2] == (grpc.StatusCode.FAILED_PRECONDITION, "HAND_NOT_ENDED")
    for role in (Role.PLAYER, Role.OPERATOR, Role.CASHIER):
        got = await refused(calls.rng.RevealSeed(reveal, timeout=5, metadata=token(system, "hana", role)))
        assert got[:2] == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED"), role
        shuffle = rpb.ShuffleRequest(request_id=rid(), table_id=LIVE, hand_id=f"h-{rid()}", deck_size=52)
        got = await refused(calls.rng.Shuffle(shuffle, timeout=5, metadata=token(system, "hana", role)))
        assert got[:2] == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED"), role
    assert (await refused(calls.rng.RevealSeed(reveal, timeout=5)))[:2] == (
        grpc.StatusCode.UNAUTHENTICATED,
        "CALLER_REQUIRED",
    )

"""ListTableEscrows: the escrows of one table holding chips, for the table's reconciliation."""

from __future__ import annotations

import grpc
import pytest

from openpoker.api.wallet.v1 import wallet_service_pb2 as pb
from openpoker.eventstore.memory import InMemoryEventStore
from openpoker.shell.client import rich_error

from .conftest import CASHIER, DEALER, TABLE, Rig, caller, start_rig


async def fund_and_seat(rig: Rig, player: str, table: str, amount: int) -> None:
    await rig.stub.Deposit(
        pb.DepositRequest(request_id=f"d-{player}-{table}", player=player, amount=10_000), metadata=CASHIER
    )
    await rig.stub.BuyIn(
        pb.BuyInRequest(request_id=f"b-{player}-{table}", table_id=table, player=player, amount=amount),
        metadata=TABLE,
    )


def listing(reply: pb.ListTableEscrowsResponse) -> list[tuple[str, str, int, int]]:
    return [(e.player, e.balance.account, e.balance.balance, e.balance.debits_pending) for e in reply.escrows]


async def test_lists_the_escrows_of_one_table_holding_chips(rig: Rig) -> None:
    await fund_and_seat(rig, "bob", "t1", 300)
    await fund_and_seat(rig, "ann", "t1", 200)
    await fund_and_seat(rig, "cat", "t1", 100)
    await fund_and_seat(rig, "ann", "t2", 50)  # another table: not listed
    await rig.stub.CashOut(  # cat is paid out: an empty escrow is not listed
        pb.CashOutRequest(request_id="c-cat", table_id="t1", player="cat"), metadata=TABLE
    )
    await rig.stub.OpenHand(
        pb.OpenHandRequest(
            request_id="o1",
            table_id="t1",
            hand_number=1,
            stacks=[pb.PlayerAmount(player="bob", amount=300)],
            rake=pb.RakeRules(),
        ),
        metadata=DEALER,
    )
    reply = await rig.stub.ListTableEscrows(pb.ListTableEscrowsRequest(table_id="t1"), metadata=TABLE)
    assert reply.currency == "CHIPS"
    assert listing(reply) == [("ann", "escrow/t1/ann", 200, 0), ("bob", "escrow/t1/bob", 300, 300)]
    never = await rig.stub.ListTableEscrows(pb.ListTableEscrowsRequest(table_id="t9"), metadata=TABLE)
    assert list(never.escrows) == []


async def test_the_listing_survives_a_restart(rig: Rig) -> None:
    await fund_and_seat(rig, "ann", "t1", 200)
    again = await start_rig(rig.events, snapshot_every=3)
    try:
        reply = await again.stub.ListTableEscrows(pb.ListTableEscrowsRequest(table_id="t1"), metadata=TABLE)
        assert listing(reply) == [("ann", "escrow/t1/ann", 200, 0)]
    finally:
        await again.close()


@pytest.mark.parametrize("table_id", ["", "a/b", "x" * 129])
async def test_a_bad_table_id_is_a_typed_error(rig: Rig, table_id: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await rig.stub.ListTableEscrows(pb.ListTableEscrowsRequest(table_id=table_id), metadata=TABLE)
    err = rich_error(info.value)
    assert (err.code, err.domain, err.reason) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "poker.wallet",
        "INVALID_IDENTIFIER",
    )
    assert dict(err.metadata)["field"] == "table_id"


async def test_only_the_table_service_and_staff_may_list() -> None:
    rig = await start_rig(InMemoryEventStore())
    try:
        request = pb.ListTableEscrowsRequest(table_id="t1")
        for who in ("table", "pokerctl", "operator", "auditor"):
            await rig.stub.ListTableEscrows(request, metadata=caller(who))
        for metadata, code in (
            ((), grpc.StatusCode.UNAUTHENTICATED),
            (caller("player"), grpc.StatusCode.PERMISSION_DENIED),
            (caller("cashier"), grpc.StatusCode.PERMISSION_DENIED),
            (DEALER, grpc.StatusCode.PERMISSION_DENIED),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await rig.stub.ListTableEscrows(request, metadata=metadata)
            assert info.value.code() == code
    finally:
        await rig.close()

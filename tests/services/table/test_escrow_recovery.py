"""Chips that would wait in escrow: background cash-outs retry for as long as this instance owns
the table (and stop on a final refusal or a new owner), and escrow no log accounts for (a crash
between a buy-in and its append) goes back to the player's cash."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.services.table import retrying
from openpoker.services.table.ownership import PartitionHeld, StaticOwnership
from openpoker.services.table.reconcile import RETURN_PREFIX
from openpoker.services.table.wallet import WalletRefused
from openpoker.tablelog.store import MemoryTableEvents
from tests.helpers.waiting import until
from tests.services.table.helpers import FakeWallet, Running, SlowWallet, create, join, rid, serve


async def leave(svc: Running, player: str) -> pb.LeaveTableResponse:
    reply: pb.LeaveTableResponse = await svc.stub.LeaveTable(
        pb.LeaveTableRequest(request_id=rid(), table="tables/t1", player_id=player)
    )
    return reply


def cash_out_calls(wallet: FakeWallet, player: str) -> list[str]:
    return [c[1] for c in wallet.calls if c[0] == "cash_out" and c[2] == player]


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Back-off in milliseconds: the schedule's shape, not its wall-clock length, is tested."""
    monkeypatch.setattr(retrying, "RETRY_FIRST", 0.001)
    monkeypatch.setattr(retrying, "RETRY_CAP", 0.004)


@pytest.fixture
async def svc(wallet: FakeWallet) -> AsyncIterator[Running]:
    """The service with escrow reconciliation on (its loop not started) and no grace."""
    running = await serve(MemoryTableEvents(), wallet, reconcile_every=3600.0, grace=0.0)
    try:
        yield running
    finally:
        await running.stop()


# -- background cash-outs ------------------------------------------------------------------------


@pytest.mark.usefixtures("fast_retries")
async def test_a_cash_out_keeps_trying_while_the_wallet_is_away(wallet: FakeWallet) -> None:
    svc = await serve(MemoryTableEvents(), wallet)
    try:
        await create(svc.stub)
        await join(svc.stub, "ann", 1)
        wallet.fail_cash_out = 40  # far more refusals than the old schedule's nine tries
        gone = await leave(svc, "ann")
        assert gone.pending
        await svc.app.drain()
        assert wallet.cash["ann"] == 1000
        assert wallet.escrow[("t1", "ann")] == 0
        assert len(cash_out_calls(wallet, "ann")) == 41
    finally:
        await svc.stop()


class RefusingWallet(FakeWallet):
    """Refuses every cash-out for good (a request the wallet can never accept)."""

    async def cash_out(
        self, *, request_id: str, table_id: str, player: str, amount: int, after_hand: int = 0
    ) -> None:
        self.calls.append(("cash_out", request_id, player, amount))
        raise WalletRefused(
            code=grpc.StatusCode.INVALID_ARGUMENT, reason="INVALID_AMOUNT", message="no", metadata={}
        )


@pytest.mark.usefixtures("fast_retries")
async def test_a_final_refusal_ends_the_retries() -> None:
    wallet = RefusingWallet(cash={"ann": 1000})
    svc = await serve(MemoryTableEvents(), wallet)
    try:
        await create(svc.stub)
        await join(svc.stub, "ann", 1)
        await leave(svc, "ann")
        await svc.app.drain()  # returns: the background task stopped at the first refusal
        # The leave's own try, then one background try: retrying cannot change the answer.
        assert len(cash_out_calls(wallet, "ann")) == 2
    finally:
        await svc.stop()


class MovableOwnership(StaticOwnership):
    """Owns every partition until ``holder`` is set (another instance took the tables over)."""

    def __init__(self, name: str = "table-1", epoch: int = 1) -> None:
        super().__init__(name, epoch)
        self.holder = ""

    async def epoch(self, partition: int) -> int:
        if self.holder:
            raise PartitionHeld(partition=partition, holder=self.holder)
        return await super().epoch(partition)


@pytest.mark.usefixtures("fast_retries")
async def test_retries_stop_when_the_table_has_a_new_owner_who_sends_them_again(wallet: FakeWallet) -> None:
    events = MemoryTableEvents()
    ownership = MovableOwnership()
    old = await serve(events, wallet, ownership=ownership)
    try:
        await create(old.stub)
        await join(old.stub, "ann", 1)
        wallet.fail_cash_out = 10**9  # the wallet is away for good, as far as this owner sees
        await leave(old, "ann")
        before = len(cash_out_calls(wallet, "ann"))
        ownership.holder = "table-2"
        await old.app.drain()  # returns: the retry stopped once the table had another owner
        tried = cash_out_calls(wallet, "ann")
        assert len(tried) <= before + 1  # at most the try under way when the owner changed
        assert len(set(tried)) == 1
        assert wallet.escrow[("t1", "ann")] == 200
    finally:
        await old.stop()
    wallet.fail_cash_out = 0
    new = await serve(events, wallet, ownership=StaticOwnership("table-2", epoch=2))
    try:
        await new.stub.GetTable(pb.GetTableRequest(name="tables/t1"))  # takes the table over
        await new.app.drain()
        assert set(cash_out_calls(wallet, "ann")) == set(tried)  # the same id: paid once
        assert (wallet.cash["ann"], wallet.escrow[("t1", "ann")]) == (1000, 0)
    finally:
        await new.stop()


# -- escrow reconciliation -------------------------------------------------------------------------


async def orphan(wallet: FakeWallet, player: str = "bob", amount: int = 300) -> None:
    """What a table process leaves behind when it dies between the wallet's buy-in and its
    append: chips in escrow, nothing in the log."""
    await wallet.buy_in(request_id=f"{rid()}:buy-in", table_id="t1", player=player, amount=amount)


async def test_an_orphaned_buy_in_goes_back_to_cash_once(svc: Running, wallet: FakeWallet) -> None:
    await create(svc.stub)
    await join(svc.stub, "ann", 1)
    await orphan(wallet)
    reconciler = svc.app.reconciler
    assert reconciler is not None
    assert await reconciler.run_once("t1") == ()  # first seen: the grace starts
    (returned,) = await reconciler.run_once("t1")
    assert (returned.player, returned.amount) == ("bob", 300)
    assert returned.request_id.startswith(RETURN_PREFIX)
    assert await reconciler.run_once("t1") == ()
    assert (wallet.cash["bob"], wallet.escrow[("t1", "bob")]) == (1000, 0)
    assert (wallet.cash["ann"], wallet.escrow[("t1", "ann")]) == (800, 200)  # seated: untouched
    assert cash_out_calls(wallet, "bob") == [returned.request_id]
    assert cash_out_calls(wallet, "ann") == []


async def test_an_orphaned_top_up_of_a_seated_player_waits_until_they_leave(
    svc: Running, wallet: FakeWallet
) -> None:
    await create(svc.stub)
    await join(svc.stub, "ann", 1)
    await orphan(wallet, "ann", 100)  # escrow 300 behind a stack of 200
    reconciler = svc.app.reconciler
    assert reconciler is not None
    for _ in range(2):
        assert await reconciler.run_once("t1") == ()
    gone = await leave(svc, "ann")
    assert gone.cashed_out == 200
    await svc.app.drain()
    assert await reconciler.run_once("t1") == ()
    (returned,) = await reconciler.run_once("t1")
    assert returned.amount == 100
    assert (wallet.cash["ann"], wallet.escrow[("t1", "ann")]) == (1000, 0)


async def test_a_join_in_flight_is_not_taken_for_an_orphan() -> None:
    wallet = SlowWallet(cash={"ann": 1000, "bob": 1000})
    svc = await serve(MemoryTableEvents(), wallet, reconcile_every=3600.0, grace=0.0)
    try:
        await create(svc.stub)
        joining = asyncio.ensure_future(join(svc.stub, "bob", 2))
        await until(lambda: wallet.escrow.get(("t1", "bob")) == 200)  # moved, not yet seated
        reconciler = svc.app.reconciler
        assert reconciler is not None
        for _ in range(3):
            assert await reconciler.run_once("t1") == ()
        wallet.release.set()
        await joining
        for _ in range(2):
            assert await reconciler.run_once("t1") == ()
        assert (wallet.cash["bob"], wallet.escrow[("t1", "bob")]) == (800, 200)
    finally:
        await svc.stop()


async def test_escrow_a_hand_holds_is_left_until_the_hand_is_closed(svc: Running, wallet: FakeWallet) -> None:
    await create(svc.stub)
    await orphan(wallet)
    wallet.reserved[("t1", "bob")] = 300
    reconciler = svc.app.reconciler
    assert reconciler is not None
    for _ in range(3):
        assert await reconciler.run_once("t1") == ()
    del wallet.reserved[("t1", "bob")]
    assert await reconciler.run_once("t1") == ()
    assert len(await reconciler.run_once("t1")) == 1
    assert wallet.cash["bob"] == 1000


async def test_a_new_owner_returns_orphans_when_it_takes_the_table_over(wallet: FakeWallet) -> None:
    events = MemoryTableEvents()
    old = await serve(events, wallet)
    try:
        await create(old.stub)
        await join(old.stub, "ann", 1)
        await orphan(wallet)  # the old owner died between this buy-in and its append
    finally:
        await old.stop()
    new = await serve(
        events, wallet, ownership=StaticOwnership("table-2", epoch=2), reconcile_every=3600.0, grace=0.05
    )
    try:
        await new.stub.GetTable(pb.GetTableRequest(name="tables/t1"))  # takes the table over
        await until(lambda: wallet.cash["bob"] == 1000)
        assert wallet.escrow[("t1", "bob")] == 0
        assert (wallet.cash["ann"], wallet.escrow[("t1", "ann")]) == (800, 200)
        assert len(cash_out_calls(wallet, "bob")) == 1
    finally:
        await new.stop()


async def test_reconciliation_runs_periodically_and_stops_on_shutdown(wallet: FakeWallet) -> None:
    svc = await serve(MemoryTableEvents(), wallet, reconcile_every=0.02, grace=0.0)
    reconciler = svc.app.reconciler
    assert reconciler is not None
    try:
        reconciler.start()
        await create(svc.stub)
        await orphan(wallet)
        await until(lambda: wallet.cash["bob"] == 1000)
        passes = sum(1 for c in wallet.calls if c[0] == "escrows")
        await until(lambda: sum(1 for c in wallet.calls if c[0] == "escrows") > passes + 1)
    finally:
        await svc.stop()
    after = sum(1 for c in wallet.calls if c[0] == "escrows")
    await asyncio.sleep(0.1)
    assert sum(1 for c in wallet.calls if c[0] == "escrows") == after  # nothing runs after close


async def test_a_late_retry_of_an_orphaned_top_up_takes_nothing_from_a_later_seat(
    svc: Running, wallet: FakeWallet
) -> None:
    await create(svc.stub)
    await join(svc.stub, "bob", 1, buy_in=100)
    lost = rid()  # a top-up whose table process died between the buy-in and the append
    await wallet.buy_in(request_id=f"{lost}:top-up", table_id="t1", player="bob", amount=100)
    await leave(svc, "bob")  # cashes out the 100 stack; the orphaned 100 stays in escrow
    await svc.app.drain()
    reconciler = svc.app.reconciler
    assert reconciler is not None
    assert await reconciler.run_once("t1") == ()
    assert len(await reconciler.run_once("t1")) == 1  # the orphan's 100 goes back
    await join(svc.stub, "bob", 2, buy_in=100)
    assert (wallet.cash["bob"], wallet.escrow[("t1", "bob")]) == (900, 100)
    # The client retries the lost top-up much later: refused, and the new seat keeps its chips.
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await svc.stub.TopUp(pb.TopUpRequest(request_id=lost, table="tables/t1", player_id="bob", amount=100))
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    await svc.app.drain()
    assert (wallet.cash["bob"], wallet.escrow[("t1", "bob")]) == (900, 100)
    table = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
    assert {s.player_id: s.stack for s in table.seats if s.player_id} == {"bob": 100}

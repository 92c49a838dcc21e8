"""Money of players who leave: the hand their chips come out of goes with the cash-out
(``after_hand``), and a voided hand gives back what a player who already left had committed."""

from __future__ import annotations

import asyncio

import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.tablelog import snapshot
from openpoker.tablelog.store import MemoryTableEvents
from tests.helpers.waiting import until
from tests.services.table.helpers import (
    DEALER,
    FakeWallet,
    Running,
    SlowWallet,
    act,
    create,
    join,
    rid,
    serve,
    start_hand,
    to_act,
)


@pytest.fixture
def cash() -> dict[str, int]:
    return {"ann": 1000, "bob": 1000, "cat": 1000, "dan": 1000}


async def leave(svc: Running, player: str) -> pb.LeaveTableResponse:
    reply: pb.LeaveTableResponse = await svc.stub.LeaveTable(
        pb.LeaveTableRequest(request_id=rid(), table="tables/t1", player_id=player)
    )
    return reply


async def view_of(svc: Running) -> pb.Table:
    table: pb.Table = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
    return table


def cash_outs(wallet: FakeWallet, player: str) -> list[tuple[str, int, int]]:
    """(request id, amount, after_hand) of each cash-out asked for ``player`` (an id tried twice
    counts once: the leave and the background retry share it)."""
    seen = {
        c[1]: (c[1], c[3], wallet.after_hands[c[1]])
        for c in wallet.calls
        if c[0] == "cash_out" and c[2] == player
    }
    return list(seen.values())


async def test_a_player_dealt_in_cashes_out_after_that_hand_and_one_not_dealt_in_at_once(
    svc: Running, wallet: FakeWallet
) -> None:
    await create(svc.stub)
    await join(svc.stub, "ann", 1)
    await join(svc.stub, "bob", 2)
    await start_hand(svc.stub, "h1")
    await join(svc.stub, "dan", 4)  # seated during hand 1, not dealt in
    first = to_act(await view_of(svc))
    ended = await act(svc.stub, first, pb.ACTION_TYPE_FOLD)
    assert ended.table.hands_played == 1
    gone = await leave(svc, first)  # between hands, before the dealer settled hand 1
    gone_dan = await leave(svc, "dan")
    await svc.app.drain()
    assert [(a, n) for _, a, n in cash_outs(wallet, first)] == [(199, 1)]  # the small blind lost 1
    assert [(a, n) for _, a, n in cash_outs(wallet, "dan")] == [(200, 0)]
    assert (gone.cashed_out, gone_dan.cashed_out) == (199, 200)


async def test_a_void_gives_a_player_who_already_left_what_they_had_committed(
    svc: Running, wallet: FakeWallet
) -> None:
    await create(svc.stub)
    for seat, player in enumerate(("ann", "bob", "cat"), start=1):
        await join(svc.stub, player, seat)
    await start_hand(svc.stub, "h1")
    view = await view_of(svc)
    # Pre-flop: everyone calls the big blind (2 each), the big blind checks; on the flop the
    # first two check, the third bets and the next folds and leaves with 198 of their 200.
    for action in (pb.ACTION_TYPE_CALL, pb.ACTION_TYPE_CALL, pb.ACTION_TYPE_CHECK):
        view = (await act(svc.stub, to_act(view), action)).table
    assert len(view.current_hand.board) == 3
    view = (await act(svc.stub, to_act(view), pb.ACTION_TYPE_BET, 4)).table
    folder = to_act(view)
    view = (await act(svc.stub, folder, pb.ACTION_TYPE_FOLD)).table
    gone = await leave(svc, folder)
    assert gone.cashed_out == 198
    assert view.current_hand.outcome == pb.HAND_OUTCOME_IN_PROGRESS
    voided = await svc.stub.VoidHand(
        pb.VoidHandRequest(request_id=rid(), name="tables/t1/hands/h1", reason="test"), metadata=DEALER
    )
    await svc.app.drain()
    outs = cash_outs(wallet, folder)
    # The stack left with at once (after hand 1), then the 2 committed, returned by the void:
    # hand 1 is voided here, so that cash-out waits only for the wallet's own reservation rule.
    assert [(a, n) for _, a, n in outs] == [(198, 1), (2, 0)]
    assert outs[1][0].startswith(f"t1:{voided.version}:left:")
    assert wallet.cash[folder] == 1000
    assert wallet.escrow[("t1", folder)] == 0
    # Between hands the model snapshots with these cash-outs (and the hand they wait for).
    model = await svc.app.model("t1")
    assert [x.after_hand for _, x in model.left_log if x.player == folder] == [1, 1]
    assert list(snapshot.decode(snapshot.encode(model)).left_log) == list(model.left_log)
    # A new owner (the model folded again from the log) re-sends the recent cash-outs under the
    # same ids: nothing is paid twice.
    svc.app.forget("t1")
    await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))
    await svc.app.drain()
    assert len(cash_outs(wallet, folder)) == 2
    assert sum(c[3] for c in wallet.calls if c[0] == "cash_out" and c[2] == folder) > 200  # re-sent
    assert wallet.cash[folder] == 1000


async def test_a_join_whose_caller_goes_away_mid_buy_in_still_ends_seated_or_refunded() -> None:
    wallet = SlowWallet(cash={"ann": 1000, "bob": 1000})
    svc = await serve(MemoryTableEvents(), wallet)
    try:
        await create(svc.stub)
        request = pb.JoinTableRequest(
            request_id=rid(),
            table="tables/t1",
            player_id="ann",
            seat=1,
            buy_in=200,
            post_choice=pb.POST_CHOICE_POST_NOW,
        )
        call = svc.stub.JoinTable(request)
        await until(lambda: wallet.escrow.get(("t1", "ann")) == 200)  # the chips moved
        call.cancel()  # the client gives up while the wallet's answer is on its way
        with pytest.raises(asyncio.CancelledError):
            await call
        wallet.release.set()
        await svc.app.drain()
        table = await view_of(svc)
        seated = {s.player_id: s.stack for s in table.seats if s.player_id}
        assert seated == {"ann": 200}  # the escrow is backed by a seat
        assert wallet.escrow[("t1", "ann")] == 200
        assert wallet.cash["ann"] == 800
    finally:
        await svc.stop()

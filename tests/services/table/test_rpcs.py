"""Every TableService RPC over gRPC (in-memory store, fake wallet): errors, retries, money."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import grpc
import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.shell.client import RichError, rich_error
from tests.services.table.helpers import (
    DEALER,
    OPERATOR,
    FakeWallet,
    Running,
    act,
    create,
    join,
    nl_config,
    rid,
    start_hand,
    to_act,
)


@pytest.fixture
def cash() -> dict[str, int]:
    return {"ann": 1000, "bob": 1000, "cat": 1000}


async def refused(call: Awaitable[object]) -> RichError:
    with pytest.raises(grpc.RpcError) as caught:
        await call
    return rich_error(caught.value)


async def version(svc: Running) -> int:
    return int((await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table.version)


async def heads_up(svc: Running) -> pb.Table:
    await create(svc.stub)
    await join(svc.stub, "ann", 1)
    await join(svc.stub, "bob", 2)
    await start_hand(svc.stub, "h1")
    reply = await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1", viewer_player_id="ann"))
    table: pb.Table = reply.table
    return table


async def test_bad_input_is_invalid_argument(svc: Running) -> None:
    err = await refused(
        svc.stub.CreateTable(
            pb.CreateTableRequest(request_id=rid(), config=pb.TableConfig()), metadata=OPERATOR
        )
    )
    assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_GAME")
    bad_rake = nl_config()
    bad_rake.rake.basis_points = 900
    err = await refused(
        svc.stub.CreateTable(pb.CreateTableRequest(request_id=rid(), config=bad_rake), metadata=OPERATOR)
    )
    assert (err.code, err.reason, err.metadata["field"]) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_RULES",
        "rake.basis_points",
    )
    await create(svc.stub)
    err = await refused(svc.stub.GetTable(pb.GetTableRequest(name="tables/Bad_Name")))
    assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_TABLE_NAME")
    err = await refused(join(svc.stub, "ann", 1, buy_in=-5))
    assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_AMOUNT")
    err = await refused(join(svc.stub, "ann", 7))
    assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "NO_SUCH_SEAT")
    err = await refused(act(svc.stub, "ann", pb.ACTION_TYPE_UNSPECIFIED))
    assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ACTION")
    err = await refused(svc.stub.SitOut(pb.SitOutRequest(request_id=rid(), table="tables/t1")))
    assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "PLAYER_REQUIRED")
    err = await refused(svc.stub.SitOut(pb.SitOutRequest(table="tables/t1", player_id="ann")))
    assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "REQUEST_ID_REQUIRED")
    err = await refused(svc.stub.GetTable(pb.GetTableRequest(name="tables/nope")))
    assert (err.code, err.reason) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")
    err = await refused(svc.stub.GetHand(pb.GetHandRequest(name="tables/t1/hands/h9")))
    assert (err.code, err.reason) == (grpc.StatusCode.NOT_FOUND, "HAND_NOT_FOUND")
    err = await refused(create(svc.stub))
    assert (err.code, err.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "TABLE_ALREADY_EXISTS")


async def test_illegal_actions_change_nothing(svc: Running) -> None:
    view = await heads_up(svc)
    player = to_act(view)
    before = await version(svc)
    err = await refused(act(svc.stub, player, pb.ACTION_TYPE_RAISE, amount=3))
    assert (err.code, err.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "RAISE_BELOW_MINIMUM")
    assert err.metadata == {"amount": "3", "minimum": "4"}
    err = await refused(act(svc.stub, player, pb.ACTION_TYPE_RAISE, amount=5000))
    assert (err.reason, err.metadata["seat"]) == ("NOT_ENOUGH_CHIPS", str(view.current_hand.to_act.seat))
    err = await refused(act(svc.stub, player, pb.ACTION_TYPE_CALL, hand_id="h0"))
    assert (err.code, err.reason, err.metadata["liveHandId"]) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "HAND_NOT_LIVE",
        "h1",
    )
    err = await refused(
        svc.stub.TopUp(pb.TopUpRequest(request_id=rid(), table="tables/t1", player_id="ann", amount=10))
    )
    assert err.reason == "HAND_IN_PROGRESS"
    assert await version(svc) == before


async def test_expected_version_and_idempotent_act(svc: Running) -> None:
    view = await heads_up(svc)
    player = to_act(view)
    err = await refused(act(svc.stub, player, pb.ACTION_TYPE_CALL, expected_version=view.version - 1))
    assert (err.code, err.reason) == (grpc.StatusCode.ABORTED, "STALE_VERSION")
    assert err.metadata["currentVersion"] == str(view.version)
    request_id = rid()
    first = await act(
        svc.stub, player, pb.ACTION_TYPE_CALL, request_id=request_id, expected_version=view.version
    )
    assert first.version == view.version + 1
    again = await act(
        svc.stub, player, pb.ACTION_TYPE_CALL, request_id=request_id, expected_version=view.version
    )
    assert again.version == first.version
    assert await version(svc) == first.version  # the retry appended nothing


async def test_dealer_rpcs_need_the_dealer(svc: Running) -> None:
    await create(svc.stub)
    err = await refused(
        svc.stub.StartHand(pb.StartHandRequest(request_id=rid(), table="tables/t1", hand_id="h1"))
    )
    assert (err.code, err.reason) == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_DEALER")
    err = await refused(
        svc.stub.VoidHand(
            pb.VoidHandRequest(request_id=rid(), name="tables/t1/hands/h1"), metadata=(("x-caller", "bots"),)
        )
    )
    assert (err.code, err.reason, err.metadata["caller"]) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "CALLER_NOT_DEALER",
        "bots",
    )
    err = await refused(
        svc.stub.StartHand(
            pb.StartHandRequest(request_id=rid(), table="tables/t1", hand_id="h1", sealed_deck=b"AsAs"),
            metadata=DEALER,
        )
    )
    assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_DECK")
    err = await refused(start_hand(svc.stub, "h1"))
    assert (err.code, err.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_ENOUGH_PLAYERS")


async def test_join_moves_money_once_and_refuses_cleanly(svc: Running, wallet: FakeWallet) -> None:
    await create(svc.stub)
    request = pb.JoinTableRequest(
        request_id=rid(),
        table="tables/t1",
        player_id="ann",
        seat=3,
        buy_in=150,
        post_choice=pb.POST_CHOICE_POST_NOW,
    )
    first = await svc.stub.JoinTable(request)
    again = await svc.stub.JoinTable(request)
    assert first.seat == again.seat == 3
    assert wallet.cash["ann"] == 850
    assert wallet.escrow[("t1", "ann")] == 150
    # Seat taken: refused before any money moves.
    err = await refused(join(svc.stub, "bob", 3))
    assert (err.code, err.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "SEAT_TAKEN")
    assert err.metadata["seat"] == "3"  # the API's 1-based seat, as every refusal carries it
    assert wallet.cash["bob"] == 1000
    assert not [c for c in wallet.calls if c[2] == "bob"]
    # Not enough cash: the wallet's reason comes through, nothing seated.
    await join(svc.stub, "bob", 4)
    wallet.cash["cat"] = 50
    err = await refused(join(svc.stub, "cat", 5, buy_in=100))
    assert (err.code, err.reason, err.metadata["available"]) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "INSUFFICIENT_FUNDS",
        "50",
    )
    seats = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table.seats
    assert {s.player_id for s in seats if s.player_id} == {"ann", "bob"}


def _the_request(kwargs: dict[str, Any]) -> bool:
    """Is this ``Writer.execute`` call the request's own append (not its intent's records)?"""
    return not str(kwargs["request_id"]).endswith((":intent", ":cancel", ":refunded"))


async def test_append_failure_after_buy_in_refunds(svc: Running, wallet: FakeWallet) -> None:
    await create(svc.stub)
    works = svc.app.writer.execute

    async def broken(*args: Any, **kwargs: Any) -> Any:
        if _the_request(kwargs):
            raise RuntimeError("store down")
        return await works(*args, **kwargs)

    svc.app.writer.execute = broken  # type: ignore[method-assign]
    err = await refused(join(svc.stub, "ann", 1))
    assert err.code == grpc.StatusCode.INTERNAL
    assert wallet.cash["ann"] == 1000
    assert wallet.escrow[("t1", "ann")] == 0


async def test_ambiguous_failure_after_the_append_keeps_the_escrow(svc: Running, wallet: FakeWallet) -> None:
    await create(svc.stub)
    landed = svc.app.writer.execute

    async def lost_reply(*args: Any, **kwargs: Any) -> Any:
        done = await landed(*args, **kwargs)
        if _the_request(kwargs):
            raise RuntimeError("ack lost after the append")
        return done

    svc.app.writer.execute = lost_reply  # type: ignore[method-assign]
    err = await refused(join(svc.stub, "ann", 1))
    assert err.code == grpc.StatusCode.INTERNAL
    # The log has the seat, so the escrow backing it stays (no refund).
    assert wallet.escrow[("t1", "ann")] == 200
    seats = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table.seats
    assert seats[0].player_id == "ann"


async def test_retry_of_a_refunded_request_is_refused(svc: Running, wallet: FakeWallet) -> None:
    await create(svc.stub)
    request = pb.JoinTableRequest(request_id=rid(), table="tables/t1", player_id="ann", seat=1, buy_in=100)
    # A previous attempt bought in, then crashed before the table recorded it.
    await wallet.buy_in(request_id=f"{request.request_id}:buy-in", table_id="t1", player="ann", amount=100)
    err = await refused(svc.stub.JoinTable(request))
    assert (err.code, err.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "REQUEST_ID_SPENT")
    assert wallet.cash["ann"] == 1000
    assert wallet.escrow[("t1", "ann")] == 0


async def test_seat_commands_top_up_and_leave(svc: Running, wallet: FakeWallet) -> None:
    await create(svc.stub)
    await join(svc.stub, "ann", 1, buy_in=150)
    t = (await svc.stub.SitOut(pb.SitOutRequest(request_id=rid(), table="tables/t1", player_id="ann"))).table
    assert t.seats[0].status == pb.SEAT_STATUS_SITTING_OUT
    err = await refused(
        svc.stub.SitOut(pb.SitOutRequest(request_id=rid(), table="tables/t1", player_id="ann"))
    )
    assert (err.code, err.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "SEAT_STATE_UNCHANGED")
    t = (await svc.stub.SitIn(pb.SitInRequest(request_id=rid(), table="tables/t1", player_id="ann"))).table
    assert t.seats[0].status == pb.SEAT_STATUS_READY
    t = (
        await svc.stub.PostOrWait(
            pb.PostOrWaitRequest(
                request_id=rid(), table="tables/t1", player_id="ann", choice=pb.POST_CHOICE_WAIT_FOR_BIG_BLIND
            )
        )
    ).table
    assert t.seats[0].status == pb.SEAT_STATUS_WAITING
    assert t.seats[0].owes_big_blind
    topped = await svc.stub.TopUp(
        pb.TopUpRequest(request_id=rid(), table="tables/t1", player_id="ann", amount=50)
    )
    assert topped.stack == 200
    assert wallet.escrow[("t1", "ann")] == 200
    err = await refused(
        svc.stub.TopUp(pb.TopUpRequest(request_id=rid(), table="tables/t1", player_id="ann", amount=1000))
    )
    assert (err.reason, err.metadata["maximum"]) == ("TOP_UP_OUT_OF_RANGE", "200")
    assert wallet.cash["ann"] == 800
    leave = pb.LeaveTableRequest(request_id=rid(), table="tables/t1", player_id="ann")
    left = await svc.stub.LeaveTable(leave)
    assert (left.cashed_out, left.pending) == (200, False)
    again = await svc.stub.LeaveTable(leave)
    assert again.cashed_out == 200
    assert wallet.cash["ann"] == 1000
    assert wallet.escrow[("t1", "ann")] == 0
    assert all(s.status == pb.SEAT_STATUS_EMPTY for s in again.table.seats)


async def test_leave_during_a_hand_is_pending_then_cashed_out(svc: Running, wallet: FakeWallet) -> None:
    view = await heads_up(svc)
    waiting = "bob" if to_act(view) == "ann" else "ann"
    left = await svc.stub.LeaveTable(
        pb.LeaveTableRequest(request_id=rid(), table="tables/t1", player_id=waiting)
    )
    assert left.pending
    assert left.cashed_out == 0
    # The other player acts; the leaver is folded when their turn comes and leaves.
    reply = await act(svc.stub, to_act(view), pb.ACTION_TYPE_CALL)
    assert reply.table.hands_played == 1
    await svc.app.drain()
    # The big blind (2) went into the pot (the dealer settles it); the rest is cashed out once,
    # under the deterministic id table:version:left:seat.
    outs = [c for c in wallet.calls if c[0] == "cash_out" and c[2] == waiting]
    engine_seat = 1 if waiting == "bob" else 0  # ids use the engine's 0-based seat
    assert [(c[1], c[3]) for c in outs] == [(f"t1:{reply.version}:left:{engine_seat}", 198)]
    assert wallet.cash[waiting] == 800 + 198


async def test_time_out_connection_and_void(svc: Running) -> None:
    view = await heads_up(svc)
    player = to_act(view)
    seat = view.current_hand.to_act.seat
    err = await refused(
        svc.stub.TimeOutSeat(
            pb.TimeOutSeatRequest(
                request_id=rid(),
                table="tables/t1",
                hand_id="h1",
                seat=seat,
                expected_version=view.version - 1,
            ),
            metadata=DEALER,
        )
    )
    assert (err.code, err.reason) == (grpc.StatusCode.ABORTED, "STALE_VERSION")
    report = await svc.stub.ReportConnection(
        pb.ReportConnectionRequest(request_id=rid(), table="tables/t1", player_id=player, connected=False),
        metadata=DEALER,
    )
    assert next(s for s in report.table.seats if s.player_id == player).disconnected
    timed = await svc.stub.TimeOutSeat(
        pb.TimeOutSeatRequest(
            request_id=rid(),
            table="tables/t1",
            hand_id="h1",
            seat=seat,
            expected_version=report.table.version,
        ),
        metadata=DEALER,
    )
    assert timed.applied.seat == seat
    assert timed.applied.automatic
    # The small blind had put chips in: all-in protection (recorded automatic), not a fold.
    assert timed.applied.all_in
    assert timed.version == report.table.version + 1
    # Void the hand: every chip back where it started.
    voided = await svc.stub.VoidHand(
        pb.VoidHandRequest(request_id=rid(), name="tables/t1/hands/h1", reason="test"), metadata=DEALER
    )
    assert voided.hand.outcome == pb.HAND_OUTCOME_VOIDED
    t = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
    assert t.status == pb.TABLE_STATUS_BETWEEN_HANDS
    assert sorted(s.stack for s in t.seats if s.player_id) == [200, 200]
    err = await refused(
        svc.stub.VoidHand(pb.VoidHandRequest(request_id=rid(), name="tables/t1/hands/h1"), metadata=DEALER)
    )
    assert err.reason == "HAND_NOT_LIVE"


async def test_list_tables_paginates(svc: Running) -> None:
    for i in range(5):
        config = nl_config()
        if i % 2:
            config.game = pb.GAME_OMAHA
        await create(svc.stub, f"t{i}", config)
    first = await svc.stub.ListTables(pb.ListTablesRequest(page_size=2))
    assert [t.table_id for t in first.tables] == ["t0", "t1"]
    second = await svc.stub.ListTables(pb.ListTablesRequest(page_size=2, page_token=first.next_page_token))
    third = await svc.stub.ListTables(pb.ListTablesRequest(page_size=2, page_token=second.next_page_token))
    assert [t.table_id for t in [*second.tables, *third.tables]] == ["t2", "t3", "t4"]
    assert third.next_page_token == ""
    omaha = await svc.stub.ListTables(pb.ListTablesRequest(game=pb.GAME_OMAHA))
    assert [t.table_id for t in omaha.tables] == ["t1", "t3"]
    err = await refused(svc.stub.ListTables(pb.ListTablesRequest(page_size=-1)))
    assert err.reason == "INVALID_PAGE_SIZE"
    err = await refused(
        svc.stub.ListTables(pb.ListTablesRequest(page_token=first.next_page_token, game=pb.GAME_OMAHA))
    )
    assert err.reason == "INVALID_PAGE_TOKEN"


async def test_create_table_retry_returns_the_first_result(svc: Running) -> None:
    request = pb.CreateTableRequest(request_id=rid(), config=nl_config())
    first = await svc.stub.CreateTable(request, metadata=OPERATOR)
    again = await svc.stub.CreateTable(
        request.__class__(request_id=request.request_id, table_id=first.table.table_id, config=nl_config()),
        metadata=OPERATOR,
    )
    assert first.table.table_id.startswith("t-")
    assert again.table.version == first.table.version == 1

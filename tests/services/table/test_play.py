"""A table over gRPC with the in-memory store: create, join, deal, act, views."""

from __future__ import annotations

import grpc
import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.shell.client import rich_error
from tests.services.table.helpers import (
    Running,
    act,
    create,
    join,
    start_hand,
    to_act,
)


@pytest.fixture
def cash() -> dict[str, int]:
    return {"ann": 1000, "bob": 1000, "cat": 1000}


async def test_full_hand_heads_up(svc: Running) -> None:
    table = await create(svc.stub)
    assert table.table_id == "t1"
    assert table.status == pb.TABLE_STATUS_WAITING
    await join(svc.stub, "ann", 1)
    joined = await join(svc.stub, "bob", 2)
    assert joined.seat == 2
    assert joined.table.status == pb.TABLE_STATUS_BETWEEN_HANDS
    started = await start_hand(svc.stub, "h1")
    assert [s.player_id for s in started.dealt_in] == ["ann", "bob"] or len(started.dealt_in) == 2
    view = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1", viewer_player_id="ann"))).table
    assert view.status == pb.TABLE_STATUS_IN_HAND
    # Play: call, check down every street.
    while view.status == pb.TABLE_STATUS_IN_HAND:
        player = to_act(view)
        legal = view.current_hand.to_act
        action = pb.ACTION_TYPE_CHECK if pb.ACTION_TYPE_CHECK in legal.actions else pb.ACTION_TYPE_CALL
        reply = await act(svc.stub, player, action)
        view = reply.table
    assert view.hands_played == 1
    assert sum(s.stack for s in view.seats) == 400
    hand = (await svc.stub.GetHand(pb.GetHandRequest(name="tables/t1/hands/h1", viewer_player_id="ann"))).hand
    assert hand.street == pb.STREET_ENDED
    assert hand.outcome == pb.HAND_OUTCOME_SHOWDOWN
    assert len(hand.board) == 5
    assert sum(p.amount for p in hand.payouts) == 4
    assert hand.deck_commitment == "c0ffee"
    assert hand.first_version > 0
    assert hand.last_version > hand.first_version


async def test_redaction_and_seat_ownership(svc: Running) -> None:
    await create(svc.stub)
    await join(svc.stub, "ann", 1)
    await join(svc.stub, "bob", 2)
    await start_hand(svc.stub, "h1")
    ann = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1", viewer_player_id="ann"))).table
    mine = {s.player_id: list(s.hole_cards) for s in ann.seats if s.player_id}
    assert len(mine["ann"]) == 2
    assert all(c for c in mine["ann"])
    assert mine["bob"] == ["", ""]
    spectator = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
    assert all(c == "" for s in spectator.seats for c in s.hole_cards)
    # A player not seated here cannot act; a seated player out of turn is refused by the engine.
    with pytest.raises(grpc.RpcError) as caught:
        await act(svc.stub, "cat", pb.ACTION_TYPE_FOLD)
    err = rich_error(caught.value)
    assert (err.code, err.reason, err.domain) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "SEAT_NOT_OWNED",
        "poker.table",
    )
    waiting = "bob" if to_act(ann) == "ann" else "ann"
    with pytest.raises(grpc.RpcError) as caught:
        await act(svc.stub, waiting, pb.ACTION_TYPE_CHECK)
    err = rich_error(caught.value)
    assert err.code == grpc.StatusCode.FAILED_PRECONDITION
    assert err.reason == "NOT_YOUR_TURN"
    assert err.metadata["toAct"] == str(ann.current_hand.to_act.seat)
    after = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
    assert after.version == ann.version  # nothing appended on error

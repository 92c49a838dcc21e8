"""``ResetAllInAllowance`` through the table service (in-process, plaintext rig: the ``x-caller``
header stands in for the caller): a disconnected player's third time-out in 24 hours is folded,
an operator's reset makes the next one protected again; idempotent by request id (from the
cached model, a fresh fold of the log and a snapshot); operators and ``pokerctl`` only; a table
another instance writes answers NOT_OWNER."""

from __future__ import annotations

import json

import grpc
import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.services.table.ownership import StaticOwnership
from openpoker.shell.client import rich_error
from openpoker.tablelog import snapshot
from openpoker.tablelog.store import MemoryTableEvents
from tests.services.table.helpers import (
    DEALER,
    OPERATOR,
    FakeWallet,
    Running,
    act,
    create,
    join,
    rid,
    serve,
    start_hand,
    to_act,
)

TABLE = "tables/t1"


async def _table(svc: Running) -> pb.Table:
    table: pb.Table = (await svc.stub.GetTable(pb.GetTableRequest(name=TABLE))).table
    return table


def reset(player: str = "ann", request_id: str = "") -> pb.ResetAllInAllowanceRequest:
    return pb.ResetAllInAllowanceRequest(request_id=request_id or rid(), table=TABLE, player_id=player)


async def _ann_times_out(svc: Running, hand_id: str) -> pb.ActionRecord:
    """A hand in which disconnected ann, with a blind in, times out; bob checks or calls it down.
    Returns what her time-out applied."""
    await start_hand(svc.stub, hand_id)
    view = await _table(svc)
    if to_act(view) == "bob":
        view = (await act(svc.stub, "bob", pb.ACTION_TYPE_CALL)).table
    assert to_act(view) == "ann"
    ann = next(s.seat for s in view.seats if s.player_id == "ann")
    out = await svc.stub.TimeOutSeat(
        pb.TimeOutSeatRequest(
            request_id=rid(), table=TABLE, hand_id=hand_id, seat=ann, expected_version=view.version
        ),
        metadata=DEALER,
    )
    view = await _table(svc)
    while view.status == pb.TABLE_STATUS_IN_HAND and view.current_hand.to_act.seat:
        assert to_act(view) == "bob"
        check = pb.ACTION_TYPE_CHECK in view.current_hand.to_act.actions
        view = (await act(svc.stub, "bob", pb.ACTION_TYPE_CHECK if check else pb.ACTION_TYPE_CALL)).table
    assert view.status != pb.TABLE_STATUS_IN_HAND
    applied: pb.ActionRecord = out.applied
    return applied


async def _seat_disconnected_ann(svc: Running) -> None:
    await create(svc.stub)
    await join(svc.stub, "ann", 1)
    await join(svc.stub, "bob", 2)
    gone = pb.ReportConnectionRequest(request_id=rid(), table=TABLE, player_id="ann", connected=False)
    await svc.stub.ReportConnection(gone, metadata=DEALER)


async def test_a_reset_makes_the_next_disconnection_protected_again(svc: Running) -> None:
    await _seat_disconnected_ann(svc)
    nothing = await svc.stub.ResetAllInAllowance(reset(), metadata=OPERATOR)
    version = (await _table(svc)).version
    assert (nothing.cleared, nothing.version) == (0, version)  # nothing to reset: nothing appended

    assert (await _ann_times_out(svc, "h1")).all_in  # all-in protected
    assert (await _ann_times_out(svc, "h2")).all_in
    third = await _ann_times_out(svc, "h3")
    assert (third.action, third.all_in) == (pb.ACTION_TYPE_FOLD, False)  # allowance used up

    before = (await _table(svc)).version
    same = rid()
    done = await svc.stub.ResetAllInAllowance(reset(request_id=same), metadata=(("x-caller", "operator"),))
    assert (done.cleared, done.version) == (2, before + 1)
    again = await svc.stub.ResetAllInAllowance(reset(request_id=same), metadata=OPERATOR)
    assert (again.cleared, again.version) == (2, before + 1)  # a retry: the first answer
    assert (await _table(svc)).version == before + 1
    bob = await svc.stub.ResetAllInAllowance(reset("bob"), metadata=OPERATOR)
    assert (bob.cleared, bob.version) == (0, before + 1)

    assert (await _ann_times_out(svc, "h4")).all_in  # protected again


async def test_only_operators_and_pokerctl_may_reset(svc: Running) -> None:
    await create(svc.stub)
    version = (await _table(svc)).version
    for caller in ("player", "dealer", "auditor", "cashier", "table"):
        with pytest.raises(grpc.RpcError) as caught:
            await svc.stub.ResetAllInAllowance(
                reset(), metadata=(("x-caller", caller), ("x-player-id", "ann"))
            )
        err = rich_error(caught.value)
        assert (err.code, err.reason) == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_ALLOWED"), caller
    with pytest.raises(grpc.RpcError) as caught:
        await svc.stub.ResetAllInAllowance(reset(), metadata=(("x-player-id", "ann"),))
    err = rich_error(caught.value)
    assert (err.code, err.reason) == (grpc.StatusCode.UNAUTHENTICATED, "CALLER_REQUIRED")
    assert (await _table(svc)).version == version


@pytest.mark.parametrize(
    ("request_", "reason"),
    [
        (pb.ResetAllInAllowanceRequest(table=TABLE, player_id="ann"), "REQUEST_ID_REQUIRED"),
        (
            pb.ResetAllInAllowanceRequest(request_id="r", table="Tables/T!", player_id="ann"),
            "INVALID_TABLE_NAME",
        ),
        (pb.ResetAllInAllowanceRequest(request_id="r", table=TABLE), "PLAYER_REQUIRED"),
        (pb.ResetAllInAllowanceRequest(request_id="r", table=TABLE, player_id="a b"), "INVALID_PLAYER_ID"),
    ],
)
async def test_malformed_requests_are_invalid(
    svc: Running, request_: pb.ResetAllInAllowanceRequest, reason: str
) -> None:
    await create(svc.stub)
    with pytest.raises(grpc.RpcError) as caught:
        await svc.stub.ResetAllInAllowance(request_, metadata=OPERATOR)
    err = rich_error(caught.value)
    assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, reason)


async def test_an_unknown_table_is_not_found(svc: Running) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        await svc.stub.ResetAllInAllowance(reset(), metadata=OPERATOR)
    err = rich_error(caught.value)
    assert (err.code, err.reason) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")


async def test_a_table_another_instance_writes_answers_not_owner() -> None:
    events = MemoryTableEvents()
    wallet = FakeWallet(cash={"ann": 1000, "bob": 1000})
    old = await serve(events, wallet, StaticOwnership("table-old", 1))
    new = await serve(events, wallet, StaticOwnership("table-new", 2))
    try:
        await _seat_disconnected_ann(old)
        assert (await _ann_times_out(old, "h1")).all_in
        await new.stub.SitOut(pb.SitOutRequest(request_id=rid(), table=TABLE, player_id="bob"))  # takes over
        with pytest.raises(grpc.RpcError) as caught:
            await old.stub.ResetAllInAllowance(reset(), metadata=OPERATOR)
        err = rich_error(caught.value)
        assert (err.code, err.reason, err.metadata["owner"]) == (
            grpc.StatusCode.UNAVAILABLE,
            "NOT_OWNER",
            "table-new",
        )
        done = await new.stub.ResetAllInAllowance(reset(), metadata=OPERATOR)
        assert done.cleared == 1
    finally:
        await old.stop()
        await new.stop()


async def test_a_retry_is_answered_from_the_log_and_from_a_snapshot() -> None:
    events = MemoryTableEvents()
    wallet = FakeWallet(cash={"ann": 1000, "bob": 1000})
    first = await serve(events, wallet)
    same = rid()
    try:
        await _seat_disconnected_ann(first)
        assert (await _ann_times_out(first, "h1")).all_in
        done = await first.stub.ResetAllInAllowance(reset(request_id=same), metadata=OPERATOR)
        assert done.cleared == 1
        model = first.app.writer.tables["t1"]
        doc = json.loads(snapshot.encode(model))
        assert snapshot.decode(json.dumps(doc).encode()).requests[same].cleared == 1
        for request in doc["requests"]:
            del request[6:]  # a document without the count reads as 0
        assert snapshot.decode(json.dumps(doc).encode()).requests[same].cleared == 0
    finally:
        await first.stop()
    second = await serve(events, wallet)  # a fresh fold of the log
    try:
        again = await second.stub.ResetAllInAllowance(reset(request_id=same), metadata=OPERATOR)
        assert (again.cleared, again.version) == (1, done.version)
    finally:
        await second.stop()

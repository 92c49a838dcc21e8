"""``TableService.ActStream`` over gRPC (in-memory store, fake wallet): the same decisions, views
and errors as ``Act``, answered in-band, in order, on a stream that outlives refusals."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
import structlog
import structlog.testing
from google.rpc import status_pb2

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.shell.client import rich_error
from openpoker.shell.streamcalls import StreamedCalls, stream_error
from tests.services.table.helpers import (
    Running,
    create,
    join,
    rid,
    start_hand,
    to_act,
)


async def heads_up(svc: Running) -> pb.Table:
    await create(svc.stub)
    await join(svc.stub, "ann", 1)
    await join(svc.stub, "bob", 2)
    await start_hand(svc.stub, "h1")
    table: pb.Table = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
    return table


def act_request(
    player: str, action: pb.ActionType.ValueType, amount: int = 0, **kw: Any
) -> pb.ActStreamRequest:
    return pb.ActStreamRequest(
        request=pb.ActRequest(
            request_id=kw.pop("request_id", rid()),
            table="tables/t1",
            player_id=player,
            action=action,
            amount=amount,
            **kw,
        )
    )


async def version(svc: Running) -> int:
    return int((await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table.version)


async def test_a_hand_over_one_stream_matches_the_log_and_the_views(svc: Running) -> None:
    view = await heads_up(svc)
    call = svc.stub.ActStream(timeout=10)
    while view.current_hand.to_act.seat:
        player = to_act(view)
        message = act_request(
            player, pb.ACTION_TYPE_CALL if view.current_hand.to_act.call_amount else pb.ACTION_TYPE_CHECK
        )
        await call.write(message)
        answer = await call.read()
        assert answer.request_id == message.request.request_id
        assert answer.WhichOneof("result") == "response"
        assert answer.response.version == view.version + 1
        # The reply is the acting player's view, exactly what GetTable shows them.
        mine = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1", viewer_player_id=player))).table
        assert answer.response.table == mine
        view = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
    await call.done_writing()
    assert await call.read() is grpc.aio.EOF
    assert await call.code() == grpc.StatusCode.OK
    assert view.hands_played == 1


async def test_refusals_are_answered_in_band_change_nothing_and_keep_the_stream(svc: Running) -> None:
    view = await heads_up(svc)
    player = to_act(view)
    other = "bob" if player == "ann" else "ann"
    before = await version(svc)
    call = svc.stub.ActStream(timeout=10)
    refusals = [
        (
            act_request(player, pb.ACTION_TYPE_RAISE, amount=3),
            grpc.StatusCode.FAILED_PRECONDITION,
            "RAISE_BELOW_MINIMUM",
        ),
        (act_request(other, pb.ACTION_TYPE_CALL), grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN"),
        (act_request(player, pb.ACTION_TYPE_UNSPECIFIED), grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ACTION"),
        (
            act_request(player, pb.ACTION_TYPE_CALL, expected_version=before - 1),
            grpc.StatusCode.ABORTED,
            "STALE_VERSION",
        ),
        (
            act_request(player, pb.ACTION_TYPE_CALL, hand_id="h0"),
            grpc.StatusCode.FAILED_PRECONDITION,
            "HAND_NOT_LIVE",
        ),
    ]
    for message, code, reason in refusals:
        await call.write(message)
        answer = await call.read()
        assert answer.WhichOneof("result") == "error"
        assert answer.request_id == message.request.request_id
        err = rich_error(stream_error(answer.error))
        assert (err.code, err.reason, err.domain) == (code, reason, "poker.table")
        # Wire-identical to google.rpc.Status, as a unary call's trailer carries it.
        assert status_pb2.Status.FromString(answer.error.SerializeToString()).code == code.value[0]
    assert await version(svc) == before
    # The same refusal over unary Act: same code, reason and metadata.
    with pytest.raises(grpc.RpcError) as caught:
        await svc.stub.Act(refusals[0][0].request)
    await call.write(refusals[0][0])
    in_band = rich_error(stream_error((await call.read()).error))
    assert in_band == rich_error(caught.value)
    # The stream is still open: a legal action goes through.
    await call.write(act_request(player, pb.ACTION_TYPE_CALL))
    assert (await call.read()).response.version == before + 1
    call.cancel()


async def test_the_player_may_come_from_the_stream_metadata(svc: Running) -> None:
    view = await heads_up(svc)
    player = to_act(view)
    other = "bob" if player == "ann" else "ann"
    call = svc.stub.ActStream(timeout=10, metadata=(("x-player-id", other),))
    await call.write(act_request("", pb.ACTION_TYPE_CALL))  # the stream's player acts: not theirs
    err = rich_error(stream_error((await call.read()).error))
    assert err.reason == "NOT_YOUR_TURN"
    call.cancel()
    call = svc.stub.ActStream(timeout=10, metadata=(("x-player-id", player),))
    await call.write(act_request("", pb.ACTION_TYPE_CALL))
    assert (await call.read()).response.version == view.version + 1
    call.cancel()


async def test_pipelined_requests_apply_in_order_and_a_retried_id_appends_nothing(svc: Running) -> None:
    view = await heads_up(svc)
    first = to_act(view)
    second = "bob" if first == "ann" else "ann"
    call = svc.stub.ActStream(timeout=10)
    sent = [
        act_request(first, pb.ACTION_TYPE_CALL, request_id="req-1"),
        act_request(second, pb.ACTION_TYPE_CHECK, request_id="req-2"),
        act_request(first, pb.ACTION_TYPE_CALL, request_id="req-1"),  # a retry of the first
    ]
    for message in sent:  # all written before any answer is read
        await call.write(message)
    answers = [await call.read() for _ in sent]
    assert [a.request_id for a in answers] == ["req-1", "req-2", "req-1"]
    assert [a.response.version for a in answers] == [view.version + 1, view.version + 2, view.version + 1]
    assert await version(svc) == view.version + 2
    call.cancel()


async def test_streamed_calls_client_against_the_service(svc: Running) -> None:
    view = await heads_up(svc)
    calls = StreamedCalls(svc.stub.ActStream, wrap=lambda r: pb.ActStreamRequest(request=r))
    player = to_act(view)
    with pytest.raises(grpc.RpcError) as caught:
        await calls.call(act_request(player, pb.ACTION_TYPE_RAISE, amount=3).request, deadline=5)
    assert rich_error(caught.value).metadata == {"amount": "3", "minimum": "4"}
    reply = await calls.call(act_request(player, pb.ACTION_TYPE_CALL).request, deadline=5)
    assert reply.version == view.version + 1
    await calls.close()


async def test_each_refusal_is_logged_with_its_own_request_ids(svc: Running) -> None:
    view = await heads_up(svc)
    player = to_act(view)
    call = svc.stub.ActStream(timeout=10)
    with structlog.testing.capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
        for request_id in ("first-refused", "second-refused"):
            await call.write(act_request(player, pb.ACTION_TYPE_RAISE, amount=3, request_id=request_id))
            assert (await call.read()).WhichOneof("result") == "error"
    call.cancel()
    rejected = [e for e in logs if e["event"] == "rpc.rejected"]
    assert [(e["request_id"], e["table_id"], e["reason"]) for e in rejected] == [
        ("first-refused", "t1", "RAISE_BELOW_MINIMUM"),
        ("second-refused", "t1", "RAISE_BELOW_MINIMUM"),
    ]
    assert {e["rpc"] for e in rejected} == {"/poker.table.v1.TableService/ActStream"}
    assert {e["player"] for e in rejected} == {player}


async def test_omit_table_answers_the_version_without_a_view(svc: Running) -> None:
    view = await heads_up(svc)
    call = svc.stub.ActStream(timeout=10)
    message = act_request(to_act(view), pb.ACTION_TYPE_CALL)
    message.omit_table = True
    await call.write(message)
    answer = await call.read()
    assert answer.response.version == view.version + 1
    assert not answer.response.HasField("table")
    # The action was applied as with a view: the table shows it.
    after = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
    assert after.version == view.version + 1
    assert [a.action for a in after.current_hand.actions][-1] == pb.ACTION_TYPE_CALL
    call.cancel()

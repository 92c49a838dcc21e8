"""``TableService.ActBatchStream`` and its client ``shell.streamcalls.BatchedCalls`` over gRPC
(in-memory store, fake wallet): each action of a batch decided as ``ActStream`` decides it,
answered in the batch's order; a table's actions in the order given; refusals in-band; a batch
over the limit refused whole."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.services.table.handlers import MAX_BATCH
from openpoker.shell.client import rich_error
from openpoker.shell.streamcalls import BatchedCalls, stream_error
from tests.services.table.helpers import Running, create, join, rid, start_hand, to_act

TABLES = ("t1", "t2")
PLAYERS = {"t1": ("ann", "bob"), "t2": ("cat", "dan")}


@pytest.fixture
def cash() -> dict[str, int]:
    return {p: 1000 for pair in PLAYERS.values() for p in pair}


async def two_tables(svc: Running) -> dict[str, pb.Table]:
    """Heads-up hands live at t1 and t2."""
    views = {}
    for table_id in TABLES:
        name = f"tables/{table_id}"
        await create(svc.stub, table_id)
        for seat, player in enumerate(PLAYERS[table_id], start=1):
            await join(svc.stub, player, seat, table=name)
        await start_hand(svc.stub, f"{table_id}-h1", table=name)
        views[table_id] = await table(svc, table_id)
    return views


async def table(svc: Running, table_id: str, viewer: str = "") -> pb.Table:
    got = await svc.stub.GetTable(pb.GetTableRequest(name=f"tables/{table_id}", viewer_player_id=viewer))
    return got.table  # type: ignore[no-any-return]


def other(table_id: str, player: str) -> str:
    a, b = PLAYERS[table_id]
    return b if player == a else a


def message(
    table_id: str, player: str, action: pb.ActionType.ValueType, amount: int = 0, **kw: Any
) -> pb.ActStreamRequest:
    omit = kw.pop("omit_table", False)
    return pb.ActStreamRequest(
        request=pb.ActRequest(
            request_id=kw.pop("request_id", rid()),
            table=f"tables/{table_id}",
            player_id=player,
            action=action,
            amount=amount,
            **kw,
        ),
        omit_table=omit,
    )


def call_or_check(view: pb.Table) -> pb.ActionType.ValueType:
    return pb.ACTION_TYPE_CALL if view.current_hand.to_act.call_amount else pb.ACTION_TYPE_CHECK


async def exchange(call: Any, *messages: pb.ActStreamRequest) -> list[pb.ActStreamResponse]:
    await call.write(pb.ActBatchStreamRequest(actions=messages))
    answer = await call.read()
    assert len(answer.answers) == len(messages)
    return list(answer.answers)


async def test_a_batch_at_two_tables_answers_each_action_as_act_stream_would(svc: Running) -> None:
    views = await two_tables(svc)
    call = svc.stub.ActBatchStream(timeout=10)
    while any(v.current_hand.to_act.seat for v in views.values()):
        live = [t for t in TABLES if views[t].current_hand.to_act.seat]
        sent = [message(t, to_act(views[t]), call_or_check(views[t])) for t in live]
        answers = await exchange(call, *sent)
        for table_id, request, answer in zip(live, sent, answers, strict=True):
            assert answer.request_id == request.request.request_id
            assert answer.WhichOneof("result") == "response"
            assert answer.response.version == views[table_id].version + 1
            # The answer's table is the acting player's view, exactly what GetTable shows them.
            assert answer.response.table == await table(svc, table_id, request.request.player_id)
            views[table_id] = await table(svc, table_id)
    await call.done_writing()
    assert await call.read() is grpc.aio.EOF
    assert await call.code() == grpc.StatusCode.OK
    assert all(v.hands_played == 1 for v in views.values())


async def test_actions_at_one_table_apply_in_the_order_given(svc: Running) -> None:
    views = await two_tables(svc)
    first = to_act(views["t1"])
    call = svc.stub.ActBatchStream(timeout=10)
    # Preflop heads-up: the button calls, then the big blind checks; the second is legal only
    # after the first, and both sit in one message between two actions at t2.
    answers = await exchange(
        call,
        message("t1", first, pb.ACTION_TYPE_CALL, request_id="t1-call"),
        message("t2", to_act(views["t2"]), pb.ACTION_TYPE_CALL, request_id="t2-call"),
        message("t1", other("t1", first), pb.ACTION_TYPE_CHECK, request_id="t1-check"),
        message("t1", first, pb.ACTION_TYPE_CALL, request_id="t1-call"),  # a retry of the first
    )
    assert [a.request_id for a in answers] == ["t1-call", "t2-call", "t1-check", "t1-call"]
    assert [a.WhichOneof("result") for a in answers] == ["response"] * 4
    v1, v2 = views["t1"].version, views["t2"].version
    assert [a.response.version for a in answers] == [v1 + 1, v2 + 1, v1 + 2, v1 + 1]
    assert (await table(svc, "t1")).version == v1 + 2
    assert (await table(svc, "t2")).version == v2 + 1
    call.cancel()


async def test_a_refusal_is_answered_in_band_and_changes_nothing_else(svc: Running) -> None:
    views = await two_tables(svc)
    player = to_act(views["t1"])
    call = svc.stub.ActBatchStream(timeout=10)
    answers = await exchange(
        call,
        message("t1", player, pb.ACTION_TYPE_RAISE, amount=3),  # below the minimum raise
        message("t2", to_act(views["t2"]), pb.ACTION_TYPE_CALL),
        message("t1", other("t1", player), pb.ACTION_TYPE_CHECK),  # not their turn
        message("t1", player, pb.ACTION_TYPE_CALL, expected_version=views["t1"].version - 1),
    )
    assert [a.WhichOneof("result") for a in answers] == ["error", "response", "error", "error"]
    errors = [rich_error(stream_error(answers[i].error)) for i in (0, 2, 3)]
    assert [(e.code, e.reason, e.domain) for e in errors] == [
        (grpc.StatusCode.FAILED_PRECONDITION, "RAISE_BELOW_MINIMUM", "poker.table"),
        (grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN", "poker.table"),
        (grpc.StatusCode.ABORTED, "STALE_VERSION", "poker.table"),
    ]
    assert (await table(svc, "t1")).version == views["t1"].version
    assert (await table(svc, "t2")).version == views["t2"].version + 1
    # The stream is still open: the next batch goes through.
    (answer,) = await exchange(call, message("t1", player, pb.ACTION_TYPE_CALL, omit_table=True))
    assert answer.response.version == views["t1"].version + 1
    assert not answer.response.HasField("table")  # omit_table: the version only
    call.cancel()


async def test_the_player_may_come_from_the_stream_metadata_and_acts_only_for_their_seat(
    svc: Running,
) -> None:
    views = await two_tables(svc)
    player = to_act(views["t1"])
    call = svc.stub.ActBatchStream(timeout=10, metadata=(("x-player-id", player),))
    answers = await exchange(
        call,
        message("t2", "", pb.ACTION_TYPE_CALL),  # the stream's player has no seat at t2
        message("t1", "", pb.ACTION_TYPE_CALL),
    )
    assert rich_error(stream_error(answers[0].error)).reason == "SEAT_NOT_OWNED"
    assert answers[1].response.version == views["t1"].version + 1
    assert (await table(svc, "t2")).version == views["t2"].version
    call.cancel()


async def test_an_empty_batch_is_answered_empty(svc: Running) -> None:
    await two_tables(svc)
    call = svc.stub.ActBatchStream(timeout=10)
    assert await exchange(call) == []
    call.cancel()


async def test_a_batch_over_the_limit_is_refused_whole(svc: Running) -> None:
    views = await two_tables(svc)
    player = to_act(views["t1"])
    call = svc.stub.ActBatchStream(timeout=10)
    await call.write(
        pb.ActBatchStreamRequest(
            actions=[message("t1", player, pb.ACTION_TYPE_CALL) for _ in range(MAX_BATCH + 1)]
        )
    )
    with pytest.raises(grpc.RpcError) as caught:
        await call.read()
    err = rich_error(caught.value)
    assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BATCH_TOO_LARGE")
    assert err.metadata == {"size": str(MAX_BATCH + 1), "limit": str(MAX_BATCH)}
    assert (await table(svc, "t1")).version == views["t1"].version


# -- the client ---------------------------------------------------------------------------------


def batched(svc: Running, **kw: Any) -> BatchedCalls:
    return BatchedCalls(
        svc.stub.ActBatchStream,
        wrap=lambda r: pb.ActStreamRequest(request=r),
        batch=lambda items: pb.ActBatchStreamRequest(actions=items),
        **kw,
    )


async def play_out(calls: BatchedCalls, view: pb.Table) -> int:
    """Check/call the live hand at ``view``'s table to its end through ``calls``, each action
    from the previous answer's view; actions sent."""
    table_id = view.table_id
    sent = 0
    while view.current_hand.to_act.seat:
        request = message(table_id, to_act(view), call_or_check(view)).request
        reply = await calls.call(request, deadline=5)
        assert reply.version == view.version + 1
        view = reply.table
        sent += 1
    return sent


async def test_concurrent_calls_share_messages_and_each_gets_its_own_answer(svc: Running) -> None:
    views = await two_tables(svc)
    calls = batched(svc)
    sent = await asyncio.gather(*(play_out(calls, views[t]) for t in TABLES))
    assert calls.requests == sum(sent)
    # Both tables' calls are made at once, and each next call as soon as its answer is in:
    # they travel together.
    assert calls.messages == max(sent)
    assert [(await table(svc, t)).hands_played for t in TABLES] == [1, 1]
    await calls.close()


async def test_a_refused_call_raises_what_a_unary_call_raises(svc: Running) -> None:
    views = await two_tables(svc)
    player = to_act(views["t1"])
    calls = batched(svc)
    request = message("t1", player, pb.ACTION_TYPE_RAISE, amount=3).request
    with pytest.raises(grpc.RpcError) as in_batch:
        await calls.call(request, deadline=5)
    with pytest.raises(grpc.RpcError) as unary:
        await svc.stub.Act(request)
    assert rich_error(in_batch.value) == rich_error(unary.value)
    assert rich_error(in_batch.value).metadata == {"amount": "3", "minimum": "4"}
    # The stream stays up for the next call.
    reply = await calls.call(message("t1", player, pb.ACTION_TYPE_CALL).request, deadline=5)
    assert reply.version == views["t1"].version + 1
    assert calls.messages == 2
    await calls.close()


async def test_a_caller_that_gives_up_leaves_the_stream_to_the_others(svc: Running) -> None:
    views = await two_tables(svc)
    calls = batched(svc)
    request = message("t1", to_act(views["t1"]), pb.ACTION_TYPE_CALL).request
    with pytest.raises(grpc.RpcError) as caught:
        await calls.call(request, deadline=0)  # gives up before any answer can arrive
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    # A request whose caller gave up before its message left is not sent (once sent, it may be
    # decided all the same); either way a retry with the same id answers as the first time.
    reply = await calls.call(request, deadline=5)
    assert reply.version == views["t1"].version + 1
    assert calls.messages == 1
    assert (await table(svc, "t1")).version == views["t1"].version + 1
    await play_out(calls, views["t2"])
    await calls.close()


async def test_a_caller_cancelled_after_its_message_left_is_skipped_and_its_action_stands(
    svc: Running,
) -> None:
    views = await two_tables(svc)
    calls = batched(svc)
    gone = asyncio.ensure_future(calls.call(message("t1", to_act(views["t1"]), pb.ACTION_TYPE_CALL).request))
    for _ in range(10):  # a few turns of the loop: the message leaves
        if calls.messages:
            break
        await asyncio.sleep(0)
    assert calls.messages == 1
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    # Its answer arrives for no one and is dropped; the stream goes on, and the service, which
    # decides a stream's messages in order, had decided it before the next one.
    reply = await calls.call(message("t2", to_act(views["t2"]), pb.ACTION_TYPE_CALL).request, deadline=5)
    assert reply.version == views["t2"].version + 1
    assert (await table(svc, "t1")).version == views["t1"].version + 1
    assert calls.messages == 2
    await calls.close()


async def test_a_broken_stream_fails_the_calls_in_flight_and_the_next_call_opens_another(
    svc: Running,
) -> None:
    views = await two_tables(svc)
    player = to_act(views["t1"])
    # The client lets more through than the service takes: calls made at once leave in one
    # message, one action too many for the service, which ends the stream.
    calls = batched(svc, max_batch=MAX_BATCH + 10)
    stuck = [calls.call(message("t2", to_act(views["t2"]), pb.ACTION_TYPE_CALL).request)]
    stuck += [calls.call(message("t1", player, pb.ACTION_TYPE_CALL).request) for _ in range(MAX_BATCH)]
    results = await asyncio.gather(*stuck, return_exceptions=True)
    assert calls.messages == 1
    assert all(isinstance(r, grpc.RpcError) for r in results)
    assert {rich_error(r).reason for r in results if isinstance(r, grpc.RpcError)} == {"BATCH_TOO_LARGE"}
    assert [(await table(svc, t)).version for t in TABLES] == [views[t].version for t in TABLES]
    # A new stream for the next call.
    reply = await calls.call(message("t1", player, pb.ACTION_TYPE_CALL).request, deadline=5)
    assert reply.version == views["t1"].version + 1
    await calls.close()

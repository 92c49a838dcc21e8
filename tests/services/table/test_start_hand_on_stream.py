"""``StartHand`` sent on ``ActStream`` and ``ActBatchStream`` (``ActStreamRequest.start_hand``)
over gRPC (in-memory store, fake wallet): answered as the unary call answers, dealer only,
refusals in-band, and in its place among its table's commands."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.shell.client import rich_error
from openpoker.shell.streamcalls import BatchedCalls, StreamedCalls, stream_error
from tests.services.table.helpers import (
    DEALER,
    Running,
    create,
    join,
    rid,
    sealed,
    start_hand,
)

PLAYERS = {"t1": ("ann", "bob"), "t2": ("cat", "dan")}


@pytest.fixture
def cash() -> dict[str, int]:
    return {p: 1000 for pair in PLAYERS.values() for p in pair}


async def seated(svc: Running, *table_ids: str) -> None:
    """Heads-up tables, both players seated, no hand yet."""
    for table_id in table_ids:
        await create(svc.stub, table_id)
        for seat, player in enumerate(PLAYERS[table_id], start=1):
            await join(svc.stub, player, seat, table=f"tables/{table_id}")


async def table(svc: Running, table_id: str) -> pb.Table:
    got = await svc.stub.GetTable(pb.GetTableRequest(name=f"tables/{table_id}"))
    return got.table  # type: ignore[no-any-return]


def starting(table_id: str, hand_id: str, request_id: str = "") -> pb.StartHandRequest:
    return pb.StartHandRequest(
        request_id=request_id or rid(),
        table=f"tables/{table_id}",
        hand_id=hand_id,
        deck_commitment="c0ffee",
        sealed_deck=sealed(),
    )


def acting(table_id: str, player: str, action: pb.ActionType.ValueType) -> pb.ActRequest:
    return pb.ActRequest(request_id=rid(), table=f"tables/{table_id}", player_id=player, action=action)


def wrap(request: Any) -> pb.ActStreamRequest:
    if isinstance(request, pb.StartHandRequest):
        return pb.ActStreamRequest(start_hand=request)
    return pb.ActStreamRequest(request=request)


async def exchange(call: Any, *requests: Any) -> list[pb.ActStreamResponse]:
    await call.write(pb.ActBatchStreamRequest(actions=[wrap(r) for r in requests]))
    answer = await call.read()
    assert len(answer.answers) == len(requests)
    return list(answer.answers)


async def test_hands_started_in_a_batch_are_answered_as_start_hand_answers(svc: Running) -> None:
    await seated(svc, "t1", "t2")
    before = {t: (await table(svc, t)).version for t in PLAYERS}
    sent = [starting("t1", "t1-h1"), starting("t2", "t2-h1")]
    call = svc.stub.ActBatchStream(timeout=10, metadata=DEALER)
    answers = await exchange(call, *sent)
    assert [a.request_id for a in answers] == [r.request_id for r in sent]
    assert [a.WhichOneof("result") for a in answers] == ["start_hand", "start_hand"]
    for (table_id, version), request, answer in zip(before.items(), sent, answers, strict=True):
        got = answer.start_hand
        assert got.version == version + 1
        assert got.hand.hand_id == request.hand_id
        assert sorted(s.player_id for s in got.dealt_in) == sorted(PLAYERS[table_id])
        assert (await table(svc, table_id)).status == pb.TABLE_STATUS_IN_HAND
        # The unary call retried with the same request_id answers the command already decided:
        # the same message the stream answered.
        assert await svc.stub.StartHand(request, metadata=DEALER) == got
    call.cancel()


async def test_a_start_and_actions_at_its_table_apply_in_the_order_given(svc: Running) -> None:
    await seated(svc, "t1", "t2")
    # t2 is seated as t1 is: its first hand's first player to act sits where t1's will.
    first = (await start_hand(svc.stub, "t2-h1", table="tables/t2")).hand.to_act.seat
    player = PLAYERS["t1"][first - 1]
    version = (await table(svc, "t1")).version
    call = svc.stub.ActBatchStream(timeout=10, metadata=DEALER)
    # Before the start the action is refused (no hand is live); after it, it applies.
    answers = await exchange(
        call,
        acting("t1", player, pb.ACTION_TYPE_CALL),
        starting("t1", "t1-h1"),
        acting("t1", player, pb.ACTION_TYPE_CALL),
    )
    assert [a.WhichOneof("result") for a in answers] == ["error", "start_hand", "response"]
    assert rich_error(stream_error(answers[0].error)).reason == "NO_HAND_IN_PROGRESS"
    assert answers[1].start_hand.version == version + 1
    assert answers[2].response.version == version + 2
    assert answers[2].response.table.current_hand.hand_id == "t1-h1"
    assert (await table(svc, "t1")).version == version + 2
    call.cancel()


async def test_only_the_dealer_may_start_a_hand_on_a_stream(svc: Running) -> None:
    await seated(svc, "t1")
    version = (await table(svc, "t1")).version
    call = svc.stub.ActBatchStream(timeout=10, metadata=(("x-player-id", "ann"),))
    (answer,) = await exchange(call, starting("t1", "t1-h1"))
    error = rich_error(stream_error(answer.error))
    assert (error.code, error.reason) == (grpc.StatusCode.PERMISSION_DENIED, "CALLER_NOT_DEALER")
    after = await table(svc, "t1")
    assert (after.version, after.status) == (version, pb.TABLE_STATUS_BETWEEN_HANDS)
    # The refusal is in-band: the stream goes on (the next message is answered).
    (answer,) = await exchange(call, acting("t1", "ann", pb.ACTION_TYPE_CHECK))
    assert rich_error(stream_error(answer.error)).reason == "NO_HAND_IN_PROGRESS"
    call.cancel()


async def test_act_stream_takes_a_start_too(svc: Running) -> None:
    await seated(svc, "t1")
    calls = StreamedCalls(svc.stub.ActStream, wrap=wrap, metadata=DEALER)
    started = await calls.call(starting("t1", "t1-h1"), deadline=5)
    assert isinstance(started, pb.StartHandResponse)
    player = PLAYERS["t1"][started.hand.to_act.seat - 1]
    acted = await calls.call(acting("t1", player, pb.ACTION_TYPE_CALL), deadline=5)
    assert isinstance(acted, pb.ActResponse)
    assert acted.version == started.version + 1
    await calls.close()


async def test_a_refused_start_in_a_batch_raises_what_the_unary_call_raises(svc: Running) -> None:
    await seated(svc, "t1")
    calls = BatchedCalls(
        svc.stub.ActBatchStream,
        wrap=wrap,
        batch=lambda items: pb.ActBatchStreamRequest(actions=items),
        metadata=DEALER,
    )
    started = await calls.call(starting("t1", "t1-h1"), deadline=5)
    assert started.hand.hand_id == "t1-h1"
    second = starting("t1", "t1-h2")  # a hand is live
    with pytest.raises(grpc.RpcError) as in_batch:
        await calls.call(second, deadline=5)
    with pytest.raises(grpc.RpcError) as unary:
        await svc.stub.StartHand(second, metadata=DEALER)
    assert rich_error(in_batch.value) == rich_error(unary.value)
    assert rich_error(in_batch.value).code == grpc.StatusCode.FAILED_PRECONDITION
    assert (await table(svc, "t1")).version == started.version
    await calls.close()

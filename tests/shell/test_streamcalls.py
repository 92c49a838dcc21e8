"""``shell.streamcalls.StreamedCalls`` against a real grpc.aio server whose bidi handler answers
each request in-band (the ``ActStream`` message types, a handler written here): answers, in-band
refusals raised as the unary call's error, and a stream dropped and reopened after a call is
interrupted."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.rpc import status_pb2
from google.rpc.error_details_pb2 import ErrorInfo
from grpc import aio

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.shell.client import channel, rich_error
from openpoker.shell.config import ShellConfig
from openpoker.shell.server import RunningServer, ServiceSpec, start_server
from openpoker.shell.streamcalls import StreamedCalls, result_of, stream_error

SERVICE = "test.v1.Answers"
STREAMS_OPENED: list[int] = []


async def answer(
    requests: AsyncIterator[pb.ActStreamRequest], context: aio.ServicerContext[Any, Any]
) -> AsyncIterator[pb.ActStreamResponse]:
    STREAMS_OPENED.append(1)
    served = 0
    async for message in requests:
        request = message.request
        out = pb.ActStreamResponse(request_id=request.request_id)
        if request.action == pb.ACTION_TYPE_FOLD:
            status = status_pb2.Status(
                code=grpc.StatusCode.FAILED_PRECONDITION.value[0], message="no folding"
            )
            status.details.add().Pack(
                ErrorInfo(reason="NO_FOLDING", domain="poker.test", metadata={"seat": "3"})
            )
            out.error.ParseFromString(status.SerializeToString())
        elif request.action == pb.ACTION_TYPE_CHECK and request.amount:  # a slow answer
            await asyncio.sleep(request.amount / 1000)
            out.response.version = request.amount
        else:
            served += 1
            out.response.version = served  # per stream: shows when a new stream was opened
        yield out


def register(servicer: object, server: aio.Server) -> None:
    handlers = {
        "Answer": grpc.stream_stream_rpc_method_handler(
            answer, pb.ActStreamRequest.FromString, pb.ActStreamResponse.SerializeToString
        )
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))


@pytest.fixture
async def calls() -> AsyncIterator[StreamedCalls]:
    config = ShellConfig.from_env("test", environ={"POKER_INSECURE": "true", "POKER_TEST_PORT": "0"})
    server: RunningServer = await start_server(
        config, [ServiceSpec(name=SERVICE, register=register, servicer=object())]
    )
    chan = channel(server.address)
    method = chan.stream_stream(
        f"/{SERVICE}/Answer",
        request_serializer=pb.ActStreamRequest.SerializeToString,
        response_deserializer=pb.ActStreamResponse.FromString,
    )
    STREAMS_OPENED.clear()
    streamed = StreamedCalls(method, wrap=lambda r: pb.ActStreamRequest(request=r))
    try:
        yield streamed
    finally:
        await streamed.close()
        await chan.close()
        await server.stop(0)


def request(
    rid: str, action: pb.ActionType.ValueType = pb.ACTION_TYPE_CALL, amount: int = 0
) -> pb.ActRequest:
    return pb.ActRequest(request_id=rid, action=action, amount=amount)


async def test_calls_share_one_stream_and_get_their_answers(calls: StreamedCalls) -> None:
    versions = [(await calls.call(request(f"r{i}"), deadline=5)).version for i in range(5)]
    assert versions == [1, 2, 3, 4, 5]
    assert len(STREAMS_OPENED) == 1


async def test_concurrent_calls_are_answered_in_turn(calls: StreamedCalls) -> None:
    replies = await asyncio.gather(*(calls.call(request(f"r{i}"), deadline=5) for i in range(8)))
    assert sorted(r.version for r in replies) == list(range(1, 9))
    assert len(STREAMS_OPENED) == 1


async def test_in_band_refusal_is_the_unary_error_and_the_stream_goes_on(calls: StreamedCalls) -> None:
    await calls.call(request("r1"), deadline=5)
    with pytest.raises(grpc.RpcError) as caught:
        await calls.call(request("r2", pb.ACTION_TYPE_FOLD), deadline=5)
    err = rich_error(caught.value)
    assert (err.code, err.message, err.reason, err.domain) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "no folding",
        "NO_FOLDING",
        "poker.test",
    )
    assert err.metadata == {"seat": "3"}
    assert (await calls.call(request("r3"), deadline=5)).version == 2  # same stream
    assert len(STREAMS_OPENED) == 1


async def test_a_timed_out_call_drops_the_stream_so_its_late_answer_is_never_taken(
    calls: StreamedCalls,
) -> None:
    await calls.call(request("r1"), deadline=5)
    with pytest.raises(grpc.RpcError) as caught:
        await calls.call(request("slow", pb.ACTION_TYPE_CHECK, amount=500), deadline=0.05)
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    # The next call gets its own answer, on a new stream (served counts from 1 again).
    assert (await calls.call(request("r2"), deadline=5)).version == 1
    assert len(STREAMS_OPENED) == 2


async def test_a_cancelled_call_drops_the_stream(calls: StreamedCalls) -> None:
    task = asyncio.create_task(calls.call(request("slow", pb.ACTION_TYPE_CHECK, amount=500), deadline=5))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await calls.call(request("r1"), deadline=5)).version == 1
    assert len(STREAMS_OPENED) == 2


def test_stream_error_round_trips_a_google_rpc_status() -> None:
    status = status_pb2.Status(code=grpc.StatusCode.ABORTED.value[0], message="stale")
    status.details.add().Pack(
        ErrorInfo(reason="STALE_VERSION", domain="poker.table", metadata={"currentVersion": "7"})
    )
    carried = pb.ActStreamResponse()
    carried.error.ParseFromString(status.SerializeToString())  # poker.common.v1.Status: same wire
    assert status_pb2.Status.FromString(carried.error.SerializeToString()) == status
    err = rich_error(stream_error(carried.error))
    assert (err.code, err.reason, err.metadata) == (
        grpc.StatusCode.ABORTED,
        "STALE_VERSION",
        {"currentVersion": "7"},
    )


def test_result_of_returns_the_result_that_is_set_and_raises_an_error() -> None:
    started = pb.ActStreamResponse(request_id="r1", start_hand=pb.StartHandResponse(version=7))
    assert result_of(started) == pb.StartHandResponse(version=7)
    acted = pb.ActStreamResponse(request_id="r2", response=pb.ActResponse(version=8))
    assert result_of(acted) == pb.ActResponse(version=8)
    # No result set (a server that predates a result): an empty response, as before.
    assert result_of(pb.ActStreamResponse(request_id="r3")) == pb.ActResponse()
    refused = pb.ActStreamResponse(request_id="r4")
    refused.error.code = grpc.StatusCode.PERMISSION_DENIED.value[0]
    refused.error.message = "StartHand is for the dealer only"
    with pytest.raises(grpc.RpcError) as raised:
        result_of(refused)
    assert rich_error(raised.value).code == grpc.StatusCode.PERMISSION_DENIED
    assert rich_error(raised.value).message == "StartHand is for the dealer only"

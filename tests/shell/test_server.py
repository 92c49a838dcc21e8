"""A real grpc.aio server on port 0 built by the shell: health, reflection, rich errors, deadlines.

The test service is a generic handler over raw bytes, so the shell is tested without depending
on any service's protobuf API.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
import structlog
import structlog.testing
from grpc import aio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.engine.errors import RuleViolation
from openpoker.shell.client import channel, rich_error
from openpoker.shell.config import ShellConfig
from openpoker.shell.deadlines import remaining
from openpoker.shell.interceptor import request_ids
from openpoker.shell.server import RunningServer, ServiceSpec, start_server

SERVICE = "test.v1.ProbeService"


class NotYourTurn(RuleViolation):
    reason = "NOT_YOUR_TURN"


def _ident(b: bytes) -> bytes:
    return b


async def fail(request: bytes, context: aio.ServicerContext[Any, Any]) -> bytes:
    raise NotYourTurn("not your turn", seat=3, seat_to_act=1)


async def crash(request: bytes, context: aio.ServicerContext[Any, Any]) -> bytes:
    raise RuntimeError("boom with private detail")


async def budget(request: bytes, context: aio.ServicerContext[Any, Any]) -> bytes:
    return struct.pack("!d", remaining(context, margin=0.1, default=99.0))


async def stream_then_fail(request: bytes, context: aio.ServicerContext[Any, Any]) -> AsyncIterator[bytes]:
    yield b"one"
    raise NotYourTurn("late", seat=1)


async def echo_until_fail(
    requests: AsyncIterator[bytes], context: aio.ServicerContext[Any, Any]
) -> AsyncIterator[bytes]:
    async for request in requests:
        if request == b"fail":
            raise NotYourTurn("stream refused", seat=2)
        yield request


# Set by the test that uses it (an Event belongs to the running test's event loop).
SLOW_STARTED: dict[str, asyncio.Event] = {}


async def slow(request: bytes, context: aio.ServicerContext[Any, Any]) -> bytes:
    SLOW_STARTED["event"].set()
    await asyncio.sleep(0.5)
    return b"done"


def register(servicer: object, server: aio.Server) -> None:
    handlers = {
        "Slow": grpc.unary_unary_rpc_method_handler(slow, _ident, _ident),
        "Fail": grpc.unary_unary_rpc_method_handler(fail, _ident, _ident),
        "Crash": grpc.unary_unary_rpc_method_handler(crash, _ident, _ident),
        "Budget": grpc.unary_unary_rpc_method_handler(budget, _ident, _ident),
        "Stream": grpc.unary_stream_rpc_method_handler(stream_then_fail, _ident, _ident),
        "Echo": grpc.stream_stream_rpc_method_handler(echo_until_fail, _ident, _ident),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))


@pytest.fixture
async def running() -> AsyncIterator[RunningServer]:
    config = ShellConfig.from_env("probe", environ={"POKER_INSECURE": "true", "POKER_PROBE_PORT": "0"})
    server = await start_server(config, [ServiceSpec(name=SERVICE, register=register, servicer=object())])
    try:
        yield server
    finally:
        await server.stop(0)


def method(chan: aio.Channel, name: str) -> Any:
    return chan.unary_unary(f"/{SERVICE}/{name}", request_serializer=_ident, response_deserializer=_ident)


async def test_binds_a_free_port_and_reports_serving(running: RunningServer) -> None:
    assert running.port > 0
    async with channel(running.address) as chan:
        stub: Any = health_pb2_grpc.HealthStub(chan)
        for name in ("", SERVICE):
            reply = await stub.Check(health_pb2.HealthCheckRequest(service=name), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        with pytest.raises(grpc.RpcError) as caught:
            await stub.Check(health_pb2.HealthCheckRequest(service="nope"), timeout=5)
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND


async def test_reflection_lists_the_services(running: RunningServer) -> None:
    async with channel(running.address) as chan:
        stub: Any = reflection_pb2_grpc.ServerReflectionStub(chan)  # type: ignore[arg-type]
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        names = set()
        async for reply in stub.ServerReflectionInfo(iter([request]), timeout=5):
            names |= {s.name for s in reply.list_services_response.service}
    assert {SERVICE, "grpc.health.v1.Health"} <= names


async def test_engine_error_reaches_the_client_as_rich_status(running: RunningServer) -> None:
    async with channel(running.address) as chan:
        with pytest.raises(grpc.RpcError) as caught:
            await method(chan, "Fail")(b"", timeout=5)
    err = rich_error(caught.value)
    assert err.code == grpc.StatusCode.FAILED_PRECONDITION
    assert (err.reason, err.domain) == ("NOT_YOUR_TURN", "poker.probe")
    assert dict(err.metadata) == {"seat": "3", "seatToAct": "1"}


async def test_log_line_carries_the_rpc_ids(running: RunningServer) -> None:
    with structlog.testing.capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
        async with channel(running.address) as chan:
            with pytest.raises(grpc.RpcError):
                await method(chan, "Fail")(b"", timeout=5, metadata=(("x-request-id", "req-42"),))
    entry = next(e for e in logs if e["event"] == "rpc.rejected")
    assert entry["request_id"] == "req-42"
    assert entry["rpc"] == f"/{SERVICE}/Fail"
    assert (entry["code"], entry["reason"]) == ("FAILED_PRECONDITION", "NOT_YOUR_TURN")


async def test_unexpected_exception_is_internal_without_details(running: RunningServer) -> None:
    async with channel(running.address) as chan:
        with pytest.raises(grpc.RpcError) as caught:
            await method(chan, "Crash")(b"", timeout=5)
    err = rich_error(caught.value)
    assert (err.code, err.reason) == (grpc.StatusCode.INTERNAL, "INTERNAL")
    assert "private" not in err.message


async def test_error_after_stream_items(running: RunningServer) -> None:
    async with channel(running.address) as chan:
        call = chan.unary_stream(
            f"/{SERVICE}/Stream", request_serializer=_ident, response_deserializer=_ident
        )
        got: list[bytes] = []

        async def drain() -> None:
            async for item in call(b"", timeout=5):
                got.append(item)  # noqa: PERF401 - keep the items that arrive before the error

        with pytest.raises(grpc.RpcError) as caught:
            await drain()
    assert got == [b"one"]
    assert rich_error(caught.value).reason == "NOT_YOUR_TURN"


async def test_bidi_stream_error_ends_the_stream_with_rich_status(running: RunningServer) -> None:
    async with channel(running.address) as chan:
        call = chan.stream_stream(
            f"/{SERVICE}/Echo", request_serializer=_ident, response_deserializer=_ident
        )(timeout=5)
        await call.write(b"one")
        assert await call.read() == b"one"
        await call.write(b"fail")
        with pytest.raises(grpc.RpcError) as caught:
            await call.read()
    err = rich_error(caught.value)
    assert (err.code, err.reason, err.domain) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_YOUR_TURN",
        "poker.probe",
    )
    assert err.metadata == {"seat": "2"}


async def test_deadline_budget_is_forwarded(running: RunningServer) -> None:
    async with channel(running.address) as chan:
        # The call without a deadline goes first so that connecting (slow on a loaded machine)
        # is not charged to the budget the deadline leaves.
        without = struct.unpack("!d", await method(chan, "Budget")(b""))[0]
        with_deadline = struct.unpack("!d", await method(chan, "Budget")(b"", timeout=3.0))[0]
    # The caller's 3 s minus the 0.1 s margin, minus transit; gRPC rounds the timeout it sends
    # up (a few ms), so a warm channel can see a hair above 2.9 s but never the whole 3 s.
    assert 0.5 < with_deadline <= 2.95
    assert without == 99.0


async def test_unimplemented_method_is_unimplemented(running: RunningServer) -> None:
    async with channel(running.address) as chan:
        with pytest.raises(grpc.RpcError) as caught:
            await method(chan, "Nope")(b"", timeout=5)
    assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED


class _Req:
    def __init__(self, **fields: str) -> None:
        self.__dict__.update(fields)


def test_request_ids_from_fields_resource_names_and_metadata() -> None:
    assert request_ids(_Req(request_id="r1", table_id="t1"), None) == {"request_id": "r1", "table_id": "t1"}
    assert request_ids(_Req(name="tables/t2/hands/h7"), [("x-request-id", "abc")]) == {
        "request_id": "abc",
        "table_id": "t2",
        "hand_id": "h7",
    }
    assert request_ids(_Req(parent="", table="tables/t3"), ()) == {"table_id": "t3"}
    assert request_ids(_Req(name="wallets/w1"), ()) == {}


def test_request_ids_from_protobuf_requests_read_only_the_fields_they_have() -> None:
    # Protobuf requests take the per-type path (which id fields the message type has).
    act = tpb.ActRequest(request_id="r9", table="tables/t4", player_id="ann")
    assert request_ids(act, [("x-request-id", "ignored")]) == {"request_id": "r9", "table_id": "t4"}
    assert request_ids(tpb.ActRequest(table="tables/t4"), [("x-request-id", "m1")]) == {
        "request_id": "m1",
        "table_id": "t4",
    }
    hand = tpb.GetHandRequest(name="tables/t5/hands/h2")
    assert request_ids(hand, ()) == {"table_id": "t5", "hand_id": "h2"}
    assert request_ids(health_pb2.HealthCheckRequest(service="x"), ()) == {}


async def test_graceful_stop_finishes_in_flight_calls_and_refuses_new_ones() -> None:
    config = ShellConfig.from_env("probe", environ={"POKER_INSECURE": "true", "POKER_PROBE_PORT": "0"})
    server = await start_server(config, [ServiceSpec(name=SERVICE, register=register, servicer=object())])
    started = SLOW_STARTED["event"] = asyncio.Event()
    async with channel(server.address) as chan:
        in_flight = asyncio.ensure_future(method(chan, "Slow")(b"", timeout=10))
        await asyncio.wait_for(started.wait(), timeout=10)
        await server.stop(grace=5)  # returns once the in-flight call has finished on the server
        # The reply is already sent; the client task may need a moment to read it.
        assert await asyncio.wait_for(in_flight, timeout=5) == b"done"
    async with channel(server.address) as chan:
        with pytest.raises(grpc.RpcError) as caught:
            await method(chan, "Budget")(b"", timeout=2)
    assert caught.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def test_generated_registrations_reach_the_server_as_generic_handlers_only() -> None:
    """Generated ``add_*_to_server`` functions add each method as a generic handler and as a
    registered method; the shell passes on the generic one only (see ``shell.server``)."""
    from openpoker.shell.server import _GenericOnly

    calls: list[tuple[str, object]] = []

    class Recorder:
        def add_generic_rpc_handlers(self, handlers: object) -> None:
            calls.append(("generic", handlers))

        def add_registered_method_handlers(self, service: str, handlers: object) -> None:
            calls.append(("registered", handlers))

        def add_insecure_port(self, address: str) -> int:
            return 4242

    proxy: Any = _GenericOnly(Recorder())  # type: ignore[arg-type]
    health_pb2_grpc.add_HealthServicer_to_server(health_pb2_grpc.HealthServicer(), proxy)
    assert [kind for kind, _ in calls] == ["generic"]
    assert proxy.add_insecure_port("127.0.0.1:0") == 4242  # everything else is the server's

"""DealerService over a real ``grpc.aio`` server (port 0), the app driving in-memory fakes:
status, hands in flight with pagination, void, pause and resume, and the errors with reasons
(UNAVAILABLE, never INTERNAL, while the dealer catches up or NATS is away)."""

from __future__ import annotations

import functools
import uuid
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from openpoker.api.dealer.v1 import dealer_service_pb2 as pb
from openpoker.api.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from openpoker.engine.version import ENGINE_VERSION
from openpoker.services.dealer.errors import LogUnreachable
from openpoker.services.dealer.handlers import DealerServicer
from openpoker.services.dealer.server import spec
from openpoker.shell.client import channel, rich_error
from openpoker.shell.config import ShellConfig
from openpoker.shell.server import start_server
from openpoker.tablelog import ids
from tests.helpers.waiting import until
from tests.services.dealer.rig import SLOW, Rig, rules


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    r = Rig()
    r.app.go_live()
    yield r
    await r.app.stop()


class Staff:
    """The dealer's stub calling as ``pokerctl`` (the dealer's API is the operator's)."""

    def __init__(self, stub: Any) -> None:
        self._stub = stub

    def __getattr__(self, name: str) -> Any:
        return functools.partial(getattr(self._stub, name), metadata=(("x-caller", "pokerctl"),))


@pytest.fixture
def lag() -> list[int | Exception]:
    """What the feed answers for the consumer lag (a number, or the error it raises)."""
    return [7]


@pytest.fixture
async def stub(rig: Rig, lag: list[int | Exception]) -> AsyncIterator[Any]:
    config = ShellConfig.from_env(
        "dealer", {"POKER_INSECURE": "true", "POKER_DEALER_PORT": "0", "POKER_GRACE_SECONDS": "0.1"}
    )

    async def pending() -> int:
        if isinstance(lag[0], Exception):
            raise lag[0]
        return lag[0]

    servicer = DealerServicer(rig.app, pending=pending, behind=lambda: 3)
    server = await start_server(config, [spec(servicer)])
    async with channel(server.address) as chan:
        yield Staff(pb_grpc.DealerServiceStub(chan))
    await server.stop()


async def refused(call: Any) -> tuple[grpc.StatusCode, str]:
    try:
        await call
    except grpc.RpcError as err:
        info = rich_error(err)
        return info.code, info.reason
    raise AssertionError("accepted")


async def test_status_and_hands_in_flight(rig: Rig, stub: Any) -> None:
    for t in ("a", "b", "c"):
        rig.table.open(t, rules(time=SLOW))
        rig.seat(t, {0: f"{t}1", 1: f"{t}2"})
    await until(lambda: len(rig.app.active_hands()) == 3, what="three hands in flight")
    await until(lambda: all(h.seat_to_act is not None for h in rig.app.active_hands()), what="clocks")
    status = await stub.GetDealerStatus(pb.GetDealerStatusRequest())
    assert (status.tables_followed, status.active_hands, status.paused_tables) == (3, 3, 0)
    assert status.pending_events == 7
    assert status.engine_version == ENGINE_VERSION
    first = await stub.ListActiveHands(pb.ListActiveHandsRequest(page_size=2))
    assert len(first.hands) == 2
    assert first.next_page_token
    rest = await stub.ListActiveHands(
        pb.ListActiveHandsRequest(page_size=2, page_token=first.next_page_token)
    )
    assert len(rest.hands) == 1
    assert rest.next_page_token == ""
    names = {h.name for h in [*first.hands, *rest.hands]}
    assert names == {ids.hand_name(t, ids.hand_id(t, 1)) for t in ("a", "b", "c")}
    one = await stub.ListActiveHands(pb.ListActiveHandsRequest(table="tables/b"))
    [hand] = one.hands
    assert hand.stage == pb.HAND_STAGE_PLAYING
    assert hand.seat_to_act in (1, 2)  # the API numbers seats from 1
    assert hand.action_deadline.seconds > 0
    assert hand.table_version == rig.table.tables["b"].version


async def test_void_pause_resume_and_errors(rig: Rig, stub: Any) -> None:
    rig.table.open("t", rules(time=SLOW))
    rig.seat("t", {0: "ann", 1: "bob"})
    await until(lambda: ("t", 1) in rig.wallet.hands, what="hand reserved")
    paused = await stub.PauseTable(pb.PauseTableRequest(request_id=str(uuid.uuid4()), table="tables/t"))
    assert paused.paused
    name = ids.hand_name("t", ids.hand_id("t", 1))
    voided = await stub.VoidHand(pb.VoidHandRequest(request_id=str(uuid.uuid4()), name=name, reason="x"))
    assert voided.released == 200
    assert voided.hand.stage == pb.HAND_STAGE_VOIDING
    await until(lambda: not rig.app.active_hands(), what="void done")
    status = await stub.GetDealerStatus(pb.GetDealerStatusRequest())
    assert (status.paused_tables, status.hands_completed) == (1, 1)
    resumed = await stub.ResumeTable(pb.ResumeTableRequest(request_id=str(uuid.uuid4()), table="tables/t"))
    assert not resumed.paused
    await until(lambda: ("t", 2) in rig.wallet.hands, what="hand 2 after resume")

    assert await refused(stub.PauseTable(pb.PauseTableRequest(table="tables/nope"))) == (
        grpc.StatusCode.NOT_FOUND,
        "TABLE_NOT_FOUND",
    )
    assert await refused(stub.PauseTable(pb.PauseTableRequest(table="nope"))) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_NAME",
    )
    assert await refused(stub.VoidHand(pb.VoidHandRequest(name="tables/t/hands/zzz-1"))) == (
        grpc.StatusCode.NOT_FOUND,
        "HAND_NOT_FOUND",
    )
    assert await refused(stub.VoidHand(pb.VoidHandRequest(name=name))) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "HAND_ALREADY_FINISHED",
    )
    assert await refused(stub.ListActiveHands(pb.ListActiveHandsRequest(page_size=-1))) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_PAGE_SIZE",
    )
    assert await refused(stub.ListActiveHands(pb.ListActiveHandsRequest(page_token="bogus"))) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_PAGE_TOKEN",
    )


async def test_unavailable_while_catching_up_and_while_nats_is_away(
    rig: Rig, stub: Any, lag: list[int | Exception]
) -> None:
    rig.app.live = False  # the feed has not folded the log yet
    for call in (
        stub.GetDealerStatus(pb.GetDealerStatusRequest()),
        stub.ListActiveHands(pb.ListActiveHandsRequest()),
        stub.PauseTable(pb.PauseTableRequest(table="tables/t")),
        stub.VoidHand(pb.VoidHandRequest(name="tables/t/hands/t-1")),
    ):
        assert await refused(call) == (grpc.StatusCode.UNAVAILABLE, "DEALER_CATCHING_UP")
    rig.app.live = True
    lag[0] = LogUnreachable()
    assert await refused(stub.GetDealerStatus(pb.GetDealerStatusRequest())) == (
        grpc.StatusCode.UNAVAILABLE,
        "TABLE_LOG_UNAVAILABLE",
    )

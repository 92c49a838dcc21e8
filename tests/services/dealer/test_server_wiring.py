"""The dealer service's wiring, in-process on port 0 with a real nats-server: NOT_SERVING and
UNAVAILABLE DEALER_CATCHING_UP until the feed has folded the table log, then SERVING."""

from __future__ import annotations

import grpc
import nats

from openpoker.api.dealer.v1 import dealer_service_pb2 as pb
from openpoker.api.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from openpoker.eventstore.streams import TABLE_EVENTS, ensure_stream
from openpoker.services.dealer.config import DealerConfig
from openpoker.services.dealer.server import SERVICE_NAME, start
from openpoker.shell.client import channel, health_status, reflected_services, rich_error
from tests.helpers.waiting import answer

STAFF = (("x-caller", "pokerctl"),)


async def test_not_serving_until_caught_up_then_serving(nats_url: str) -> None:
    running = await start(
        DealerConfig.from_env(
            {"POKER_INSECURE": "true", "POKER_DEALER_PORT": "0", "POKER_NATS_URL": nats_url}
        )
    )
    nc = await nats.connect(nats_url)
    try:
        target = running.server.address
        assert SERVICE_NAME == "poker.dealer.v1.DealerService"
        assert SERVICE_NAME in await reflected_services(target)
        # No table log yet: the dealer waits for it, so it has not caught up.
        assert await health_status(target, SERVICE_NAME) == "NOT_SERVING"
        assert await health_status(target) == "NOT_SERVING"
        async with channel(target) as chan:
            stub = pb_grpc.DealerServiceStub(chan)
            try:
                await stub.GetDealerStatus(pb.GetDealerStatusRequest(), metadata=STAFF)
            except grpc.RpcError as err:
                info = rich_error(err)
                assert (info.code, info.reason) == (grpc.StatusCode.UNAVAILABLE, "DEALER_CATCHING_UP")
            else:
                raise AssertionError("answered while catching up")
            await ensure_stream(nc.jetstream(), TABLE_EVENTS)

            async def serving() -> bool | None:
                return True if await health_status(target, SERVICE_NAME) == "SERVING" else None

            await answer(serving, what="SERVING once caught up")
            assert await health_status(target) == "SERVING"
            status = await stub.GetDealerStatus(pb.GetDealerStatusRequest(), metadata=STAFF)
            assert status.tables_followed == 0
    finally:
        await nc.close()
        await running.stop()

"""The table service's wiring, in-process on port 0 with a real nats-server."""

from __future__ import annotations

import grpc
import nats
import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.api.table.v1 import table_service_pb2_grpc as pb_grpc
from openpoker.eventstore.streams import TABLE_EVENTS
from openpoker.services.table.config import TableConfig
from openpoker.services.table.server import SERVICE_NAME, start
from openpoker.shell.client import channel, health_status, reflected_services, rich_error


def config(nats_url: str) -> TableConfig:
    return TableConfig.from_env(
        {"POKER_INSECURE": "true", "POKER_TABLE_PORT": "0", "POKER_NATS_URL": nats_url}
    )


async def test_serving_reflected_and_streams_created(nats_url: str) -> None:
    running = await start(config(nats_url))
    try:
        target = running.server.address
        assert SERVICE_NAME == "poker.table.v1.TableService"
        assert await health_status(target) == "SERVING"
        assert await health_status(target, SERVICE_NAME) == "SERVING"
        assert {SERVICE_NAME, "grpc.health.v1.Health"} <= await reflected_services(target)
        nc = await nats.connect(nats_url)
        try:
            info = await nc.jetstream().stream_info(TABLE_EVENTS.name)
            assert (info.config.deny_delete, info.config.deny_purge) == (True, True)
        finally:
            await nc.close()
    finally:
        await running.stop()


async def test_unknown_table_is_not_found(nats_url: str) -> None:
    running = await start(config(nats_url))
    try:
        async with channel(running.server.address) as chan:
            stub = pb_grpc.TableServiceStub(chan)
            with pytest.raises(grpc.RpcError) as caught:
                await stub.GetTable(pb.GetTableRequest(name="tables/t1"), timeout=5)
        err = rich_error(caught.value)
        assert (err.code, err.reason, err.metadata["tableId"]) == (
            grpc.StatusCode.NOT_FOUND,
            "TABLE_NOT_FOUND",
            "t1",
        )
    finally:
        await running.stop()

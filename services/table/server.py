"""Wiring: NATS connection, streams and lease bucket, the gRPC server, and a clean stop."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass

import nats
from nats.aio.client import Client as Nats

from eventstore.streams import LEASES, TABLE_EVENTS, TABLE_SNAPSHOTS, ensure_bucket, ensure_stream
from poker.table.v1 import table_service_pb2 as pb
from poker.table.v1 import table_service_pb2_grpc as pb_grpc
from services.table.config import TableConfig
from shell.logs import configure_logging
from shell.server import RunningServer, ServiceSpec, start_server

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["TableService"].full_name


def spec(servicer: pb_grpc.TableServiceServicer) -> ServiceSpec:
    return ServiceSpec(
        name=SERVICE_NAME, register=pb_grpc.add_TableServiceServicer_to_server, servicer=servicer
    )


@dataclass(slots=True)
class TableServer:
    server: RunningServer
    nc: Nats

    async def stop(self) -> None:
        await self.server.stop()
        await self.nc.drain()


async def start(config: TableConfig) -> TableServer:
    nc = await nats.connect(config.shell.nats_url, name="table")
    js = nc.jetstream()
    replicas = config.replicas
    await ensure_stream(js, dataclasses.replace(TABLE_EVENTS, name=config.stream, replicas=replicas))
    await ensure_stream(js, dataclasses.replace(TABLE_SNAPSHOTS, replicas=replicas))
    await ensure_bucket(js, dataclasses.replace(LEASES, ttl=config.lease_ttl, replicas=replicas))
    # Handlers come with issue 7: the generated base servicer answers UNIMPLEMENTED.
    servicer = pb_grpc.TableServiceServicer()  # type: ignore[abstract]  # concrete at runtime
    return TableServer(server=await start_server(config.shell, [spec(servicer)]), nc=nc)


async def main(stop: asyncio.Event) -> int:
    config = TableConfig.from_env()
    configure_logging(config.shell)
    running = await start(config)
    await stop.wait()
    await running.stop()
    return 0

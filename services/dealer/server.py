"""Wiring: NATS connection, the gRPC server, and a clean stop."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import nats
from nats.aio.client import Client as Nats

from poker.dealer.v1 import dealer_service_pb2 as pb
from poker.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from services.dealer.config import DealerConfig
from shell.logs import configure_logging
from shell.server import RunningServer, ServiceSpec, start_server

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["DealerService"].full_name


def spec(servicer: pb_grpc.DealerServiceServicer) -> ServiceSpec:
    return ServiceSpec(
        name=SERVICE_NAME, register=pb_grpc.add_DealerServiceServicer_to_server, servicer=servicer
    )


@dataclass(slots=True)
class DealerServer:
    server: RunningServer
    nc: Nats

    async def stop(self) -> None:
        await self.server.stop()
        await self.nc.drain()


async def start(config: DealerConfig) -> DealerServer:
    nc = await nats.connect(config.shell.nats_url, name="dealer")
    # The process manager comes with issue 7: the generated base servicer answers UNIMPLEMENTED.
    servicer = pb_grpc.DealerServiceServicer()  # type: ignore[abstract]  # concrete at runtime
    return DealerServer(server=await start_server(config.shell, [spec(servicer)]), nc=nc)


async def main(stop: asyncio.Event) -> int:
    config = DealerConfig.from_env()
    configure_logging(config.shell)
    running = await start(config)
    await stop.wait()
    await running.stop()
    return 0

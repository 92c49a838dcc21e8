"""Wiring: NATS connection, JetStream stores, the app, the gRPC server, and a clean stop."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from nats.aio.client import Client as Nats

from openpoker.api.rng.v1 import rng_service_pb2 as pb
from openpoker.api.rng.v1 import rng_service_pb2_grpc as pb_grpc
from openpoker.eventstore.jetstream import JetStreamEventStore
from openpoker.services.rng.app import RngApp
from openpoker.services.rng.config import RngConfig
from openpoker.services.rng.handlers import RngServicer
from openpoker.services.rng.handlog import EventLogHandLog
from openpoker.services.rng.sealing import SeedSealer
from openpoker.services.rng.store import JetStreamShuffleStore
from openpoker.shell import natsconn
from openpoker.shell.logs import configure_logging, get_logger
from openpoker.shell.server import RunningServer, ServiceSpec, start_server
from openpoker.shuffle.deck_seal import DeckKeys
from openpoker.shuffle.entropy import os_seed

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["RngService"].full_name


def spec(app: RngApp, deck_keys: DeckKeys | None = None) -> ServiceSpec:
    return ServiceSpec(
        name=SERVICE_NAME,
        register=pb_grpc.add_RngServiceServicer_to_server,
        servicer=RngServicer(app, deck_keys=deck_keys),
    )


@dataclass(slots=True)
class RngServer:
    server: RunningServer
    nc: Nats

    async def stop(self) -> None:
        await self.server.stop()
        await self.nc.drain()


async def start(config: RngConfig) -> RngServer:
    log = get_logger()
    if config.ephemeral_key:
        log.warning("seed_key.ephemeral", detail="POKER_RNG_SEED_KEY unset: seeds die with this process")
    nc = await natsconn.connect(config.shell.nats_url, config.shell.nats_credentials, name="rng")
    js = nc.jetstream()
    app = RngApp(
        store=await JetStreamShuffleStore.open(js, config.bucket),
        hand_log=EventLogHandLog(JetStreamEventStore(js, stream=config.table_stream)),
        sealer=SeedSealer(config.seed_key, config.seed_key_id),
        seed_source=os_seed,
    )
    return RngServer(server=await start_server(config.shell, [spec(app, config.deck_keys)]), nc=nc)


async def main(stop: asyncio.Event) -> int:
    config = RngConfig.from_env()
    configure_logging(config.shell)
    running = await start(config)
    await stop.wait()
    await running.stop()
    return 0

"""Wiring: NATS connection, clients of rng/table/wallet, the audit stream, the feed, the gRPC
server, the checkpoint writer, and a clean stop (feed first, then the last checkpoints, the
drivers, the server and connections).

The server's health is NOT_SERVING from its start until the feed has folded the table logs
(``DealerApp.go_live``); the RPCs answer UNAVAILABLE ``DEALER_CATCHING_UP`` meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

from grpc import aio
from nats.aio.client import Client as Nats

from openpoker.api.dealer.v1 import dealer_service_pb2 as pb
from openpoker.api.dealer.v1 import dealer_service_pb2_grpc as pb_grpc
from openpoker.eventstore.signing import TABLE_WRITER
from openpoker.eventstore.streams import ensure_bucket
from openpoker.services.dealer.app import DealerApp, DealerSettings
from openpoker.services.dealer.audit import JetStreamAudit
from openpoker.services.dealer.checkpoints import Checkpoints
from openpoker.services.dealer.clients import GrpcRng, GrpcTable, GrpcWallet
from openpoker.services.dealer.config import DealerConfig
from openpoker.services.dealer.feed import TableFeed
from openpoker.services.dealer.handlers import DealerServicer
from openpoker.services.dealer.pauses import DEALER_BUCKET, KvPauseStore
from openpoker.services.dealer.presence import PresenceFeed
from openpoker.shell import natsconn
from openpoker.shell.client import channel
from openpoker.shell.logs import configure_logging
from openpoker.shell.server import RunningServer, ServiceSpec, start_server

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["DealerService"].full_name


def spec(servicer: pb_grpc.DealerServiceServicer) -> ServiceSpec:
    return ServiceSpec(
        name=SERVICE_NAME, register=pb_grpc.add_DealerServiceServicer_to_server, servicer=servicer
    )


@dataclass(slots=True)
class DealerServer:
    server: RunningServer
    nc: Nats
    app: DealerApp
    feed: TableFeed
    presence: PresenceFeed
    channels: list[aio.Channel]
    saver: asyncio.Task[None]

    async def stop(self) -> None:
        await self.presence.stop()
        await self.feed.stop()
        self.saver.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.saver
        self.app.checkpoints.final(d.track for d in self.app.drivers.values())
        await self.app.checkpoints.flush()  # the latest ones, for the next start
        await self.app.stop()
        await self.server.stop()
        for chan in self.channels:
            await chan.close()
        await self.nc.drain()


async def start(config: DealerConfig) -> DealerServer:
    nc = await natsconn.connect(config.shell.nats_url, config.shell.nats_credentials, name="dealer")
    js = nc.jetstream()
    audit = JetStreamAudit(js)
    await audit.ensure()
    tls = config.shell.security.tls  # the dealer's own certificate: it calls service listeners
    chans = [
        channel(target, tls) for target in (config.rng_target, config.table_target, config.wallet_target)
    ]
    timeout, attempts = config.call_timeout, config.call_attempts
    bucket = await ensure_bucket(js, DEALER_BUCKET)
    app = DealerApp(
        rng=GrpcRng(chans[0], timeout=timeout, attempts=attempts),
        table=GrpcTable(chans[1], timeout=timeout, attempts=attempts),
        wallet=GrpcWallet(chans[2], timeout=timeout, attempts=attempts),
        audit=audit,
        settings=DealerSettings(
            hand_delay=config.hand_delay_ms / 1000,
            presence_ttl=config.presence_ttl,
            open_retry=config.open_retry,
        ),
        pauses=KvPauseStore(bucket),
        verifier=None if config.keyring is None else config.keyring.verifier(TABLE_WRITER),
        checkpoints=Checkpoints(bucket, every=config.checkpoint_every),
    )
    await app.load_pauses()
    feed = TableFeed(js, app, stream=config.table_stream)
    servicer = DealerServicer(app, pending=feed.pending, behind=feed.behind)
    server = await start_server(config.shell, [spec(servicer)], ready=False)
    live: set[asyncio.Task[None]] = set()

    def serving() -> None:
        task = asyncio.get_running_loop().create_task(server.set_serving(True))
        live.add(task)  # kept until done: a task only the loop references may be collected
        task.add_done_callback(live.discard)

    app.on_live = serving
    saver = asyncio.get_running_loop().create_task(
        app.checkpoints.run(lambda: [d.track for d in app.drivers.values()]), name="dealer-checkpoints"
    )
    feed.start()
    # After the feed: a report for a table the feed has not folded yet is dropped, and the
    # instance's next heartbeat repeats it.
    presence = PresenceFeed(nc, app.observe_presence, app.expire_presence, ttl=config.presence_ttl)
    await presence.start()
    return DealerServer(
        server=server, nc=nc, app=app, feed=feed, presence=presence, channels=chans, saver=saver
    )


async def main(stop: asyncio.Event) -> int:
    config = DealerConfig.from_env()
    configure_logging(config.shell)
    running = await start(config)
    await stop.wait()
    await running.stop()
    return 0

"""Wiring: NATS, streams, the lease and allowance buckets, the wallet channel, the app, the gRPC
server, a clean stop."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
from dataclasses import dataclass

from grpc import aio
from nats.aio.client import Client as Nats

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.api.table.v1 import table_service_pb2_grpc as pb_grpc
from openpoker.eventstore.signing import TABLE_WRITER
from openpoker.eventstore.streams import (
    ALLOWANCES,
    LEASES,
    TABLE_EVENTS,
    TABLE_SNAPSHOTS,
    ensure_bucket,
    ensure_stream,
)
from openpoker.presence import PresenceTracker
from openpoker.services.table.app import TableApp
from openpoker.services.table.config import TableConfig
from openpoker.services.table.handlers import TableQuotas, TableServicer
from openpoker.services.table.ownership import KvOwnership
from openpoker.services.table.wallet import GrpcWallet, Wallet
from openpoker.shell import natsconn
from openpoker.shell.client import channel
from openpoker.shell.logs import configure_logging
from openpoker.shell.server import RunningServer, ServiceSpec, start_server
from openpoker.tablelog.allowances import KvAllowanceRecords
from openpoker.tablelog.store import JetStreamTableEvents, TableStore

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["TableService"].full_name


def spec(servicer: pb_grpc.TableServiceServicer) -> ServiceSpec:
    return ServiceSpec(
        name=SERVICE_NAME, register=pb_grpc.add_TableServiceServicer_to_server, servicer=servicer
    )


@dataclass(slots=True)
class TableServer:
    server: RunningServer
    nc: Nats
    app: TableApp
    wallet_channel: aio.Channel | None
    presence: PresenceTracker

    async def stop(self) -> None:
        await self.server.stop()  # ends every watch stream: their presence facts are queued
        await self.presence.close()
        await self.app.close()
        if self.wallet_channel is not None:
            await self.wallet_channel.close()
        await self.nc.drain()


async def start(config: TableConfig, *, wallet: Wallet | None = None) -> TableServer:
    """Start the service; ``wallet`` replaces the gRPC wallet (tests)."""
    nc = await natsconn.connect(config.shell.nats_url, config.shell.nats_credentials, name=config.instance)
    try:
        js = nc.jetstream()
        replicas = config.replicas
        await ensure_stream(js, dataclasses.replace(TABLE_EVENTS, name=config.stream, replicas=replicas))
        await ensure_stream(js, dataclasses.replace(TABLE_SNAPSHOTS, replicas=replicas))
        kv = await ensure_bucket(js, dataclasses.replace(LEASES, ttl=config.lease_ttl, replicas=replicas))
        allowances = await ensure_bucket(js, dataclasses.replace(ALLOWANCES, replicas=replicas))
        wallet_channel = None
        if wallet is None:
            wallet_channel = channel(config.wallet, config.shell.security.tls)
            wallet = GrpcWallet(wallet_channel)
        events = JetStreamTableEvents(js, stream=config.stream, nc=nc)  # lean appends (eventstore.acks)
        keyring = config.keyring
        store = TableStore(
            events,
            partitions=config.partitions,
            signer=config.signer,
            verifier=None if keyring is None else keyring.verifier(TABLE_WRITER),
            snapshot_verifier=None if keyring is None else keyring.snapshot_verifier(TABLE_WRITER),
        )
        ownership = KvOwnership(kv, name=config.instance, ttl=config.lease_ttl)
        app = TableApp(
            store=store,
            ownership=ownership,
            wallet=wallet,
            snapshot_every=config.snapshot_every,
            reconcile_every=config.reconcile_every,
            reconcile_grace=config.reconcile_grace,
            reconcile_claim=config.reconcile_claim,
            allowances=KvAllowanceRecords(allowances),
        )
        ownership.on_lost = app.drop_partition
        if app.reconciler is not None:
            app.reconciler.start()
        presence = PresenceTracker(
            publish=nc.publish,
            instance=config.instance,
            clock_ms=lambda: int(app.now().timestamp() * 1000),
            heartbeat=config.presence_heartbeat,
        )
        table_quotas = TableQuotas.of(
            creates_per_minute=config.creates_per_minute,
            watches_per_identity=config.watches_per_identity,
            watches_per_table=config.watches_per_table,
        )
        server = await start_server(
            config.shell,
            [spec(TableServicer(app, presence=presence, deck_keys=config.deck_keys, quotas=table_quotas))],
        )
    except BaseException:
        await nc.close()
        raise
    return TableServer(server=server, nc=nc, app=app, wallet_channel=wallet_channel, presence=presence)


# Young-generation collections every 10,000 allocations instead of 700: an action allocates a
# few hundred containers, so the default collects about once per action and re-walks whatever
# is still alive each time; at 10,000 a collection stays well under a millisecond (p99).
GC_THRESHOLDS = (10_000, 20, 20)


def tune_gc() -> None:
    """After start-up: move everything loaded so far (modules, protobuf descriptors, the
    engine) out of the collector's sight for good, and collect the young generation less often."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


async def main(stop: asyncio.Event) -> int:
    config = TableConfig.from_env()
    configure_logging(config.shell)
    running = await start(config)
    tune_gc()
    await stop.wait()
    await running.stop()
    return 0

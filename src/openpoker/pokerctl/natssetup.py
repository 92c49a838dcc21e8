"""NATS set-up as the admin identity: every stream and bucket the services use, before they start.

On a NATS with permissions (``shell.natsauth``) no service may create, update, delete or purge a
stream; ``set_up`` creates them with the settings of ``eventstore.streams`` (and the wallet's
snapshot stream), or checks that existing ones have them. ``pokerctl up`` runs it with
``DATA/nats/auth/admin.nk`` after NATS is ready and before the first service.
"""

from __future__ import annotations

import dataclasses

from openpoker.eventstore.streams import SETUP_BUCKETS, SETUP_STREAMS, ensure_bucket, ensure_stream
from openpoker.ledger.store import WALLET_SNAPSHOTS
from openpoker.shell import natsconn
from openpoker.shell.natsconn import NatsCredentials


async def set_up(url: str, credentials: NatsCredentials | None, *, replicas: int = 1) -> None:
    nc = await natsconn.connect(url, credentials, name="pokerctl-setup", allow_reconnect=False)
    try:
        js = nc.jetstream()
        for stream in (*SETUP_STREAMS, WALLET_SNAPSHOTS):
            await ensure_stream(js, dataclasses.replace(stream, replicas=replicas))
        for bucket in SETUP_BUCKETS:
            await ensure_bucket(js, dataclasses.replace(bucket, replicas=replicas))
    finally:
        await nc.close()

"""Streams and buckets, created with explicit settings (never the server's defaults).

The authoritative logs (``TABLE_EVENTS``, ``WALLET_EVENTS``) are file-backed, deny delete and
purge (those flags can never be unset: the log that is replayed is the log that was written), keep
a 2-minute duplicate window for ``Nats-Msg-Id`` and allow direct gets. Snapshots are a cache in
their own stream, a few per subject. ``ensure_stream`` creates a stream or checks that an existing
one has the asked-for settings (``StreamSettingsMismatch`` if not: a silently different stream
would break the guarantees above). Creating one on a cluster is tried again when the cluster
cannot answer yet (below). On a NATS with permissions (``shell.natsauth``) only the admin identity
may create streams: ``SETUP_STREAMS`` and ``SETUP_BUCKETS`` are what it creates at set-up, and a
service that finds one missing fails with ``StreamUnavailable``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

import nats.errors
from nats.js import JetStreamContext, api
from nats.js.errors import BadRequestError, NotFoundError, ServiceUnavailableError
from nats.js.kv import KeyValue

from openpoker.eventstore.errors import StreamSettingsMismatch, StreamUnavailable

Storage = Literal["file", "memory"]
MiB = 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamSettings:
    name: str
    subjects: tuple[str, ...]
    replicas: int = 1
    storage: Storage = "file"
    duplicate_window: float = 120.0
    deny_delete: bool = True
    deny_purge: bool = True
    max_msg_size: int = MiB
    max_msgs_per_subject: int = -1
    max_age: float = 0.0  # 0 = keep forever (retention is decided up front, per deployment)
    allow_direct: bool = True
    allow_rollup: bool = False

    def config(self) -> api.StreamConfig:
        return api.StreamConfig(
            name=self.name,
            subjects=list(self.subjects),
            retention=api.RetentionPolicy.LIMITS,
            storage=api.StorageType.FILE if self.storage == "file" else api.StorageType.MEMORY,
            num_replicas=self.replicas,
            duplicate_window=self.duplicate_window,
            deny_delete=self.deny_delete,
            deny_purge=self.deny_purge,
            max_msg_size=self.max_msg_size,
            max_msgs_per_subject=self.max_msgs_per_subject,
            max_age=self.max_age,
            allow_direct=self.allow_direct,
            allow_rollup_hdrs=self.allow_rollup,
            discard=api.DiscardPolicy.OLD,
        )


TABLE_EVENTS = StreamSettings(name="TABLE_EVENTS", subjects=("poker.table.>",))
WALLET_EVENTS = StreamSettings(name="WALLET_EVENTS", subjects=("poker.wallet.>",))
# A cache, not evidence: a few per table, and purgeable.
TABLE_SNAPSHOTS = StreamSettings(
    name="TABLE_SNAPSHOTS",
    subjects=("poker.snap.>",),
    deny_delete=False,
    deny_purge=False,
    max_msgs_per_subject=3,
    max_msg_size=8 * MiB,
    allow_rollup=True,
)
# Reveals of seeds, recorded by the dealer (services.dealer.audit): evidence, like the logs.
RNG_AUDIT = StreamSettings(name="RNG_AUDIT", subjects=("poker.audit.rng.>",))


def _differences(want: api.StreamConfig, have: api.StreamConfig) -> list[str]:
    fields = (
        "subjects",
        "storage",
        "num_replicas",
        "duplicate_window",
        "deny_delete",
        "deny_purge",
        "max_msg_size",
        "max_msgs_per_subject",
        "max_age",
        "allow_direct",
        "allow_rollup_hdrs",
    )
    out = []
    for field in fields:
        a, b = getattr(want, field), getattr(have, field)
        if field == "subjects":
            a, b = sorted(a or []), sorted(b or [])
        if a != b:
            out.append(f"{field}: want {a!r}, have {b!r}")
    return out


# Creating a replicated stream (or bucket) is a cluster operation: on a busy or just-formed
# cluster its API request can time out (the stream may be created all the same), find no peers to
# place it on yet (10005) or find no meta leader (503). Each is tried again, a few times; a retry
# looks the stream up first, so one created by the timed-out request is checked, not created twice.
CREATE_ATTEMPTS = 3
NO_SUITABLE_PEERS = 10005
T = TypeVar("T")


async def _retrying(create: Callable[[], Awaitable[T]], pause: float) -> T:
    for attempt in range(1, CREATE_ATTEMPTS + 1):
        try:
            return await create()
        except (nats.errors.TimeoutError, ServiceUnavailableError, BadRequestError) as exc:
            if isinstance(exc, BadRequestError) and exc.err_code != NO_SUITABLE_PEERS:
                raise
            if attempt == CREATE_ATTEMPTS:
                raise
        await asyncio.sleep(pause * attempt)
    raise AssertionError("unreachable")  # the last attempt returned or raised


async def ensure_stream(
    js: JetStreamContext, settings: StreamSettings, *, pause: float = 0.5
) -> api.StreamInfo:
    """Create the stream, or check an existing one matches ``settings``."""
    try:
        return await _retrying(lambda: _ensure_stream_once(js, settings), pause)
    except nats.errors.TimeoutError as exc:
        raise StreamUnavailable(stream=settings.name) from exc


async def _ensure_stream_once(js: JetStreamContext, settings: StreamSettings) -> api.StreamInfo:
    want = settings.config()
    try:
        info = await js.stream_info(settings.name)
    except NotFoundError:
        return await js.add_stream(want)
    differences = _differences(want, info.config)
    if differences:
        raise StreamSettingsMismatch(stream=settings.name, differences="; ".join(differences))
    return info


@dataclass(frozen=True, slots=True, kw_only=True)
class BucketSettings:
    """A KV bucket. No limit markers: with them nats-py 2.16's ``kv.create`` fails on an expired
    key until the marker itself expires (eventsourcing.md §3.4)."""

    bucket: str
    ttl: float = 0.0  # 0 = keys never expire
    history: int = 1
    replicas: int = 1
    storage: Storage = "file"
    max_value_size: int = 64 * 1024


# Partition leases: TTL 10 s, renewed every TTL/4 (ARCHITECTURE.md).
LEASES = BucketSettings(bucket="poker-leases", ttl=10.0)
# The table service's hand index, the dealer's pauses and rng's sealed seeds (no TTL: a seed
# must outlive every dispute window).
TABLE_HANDS = BucketSettings(bucket="poker-table-hands")
DEALER_PAUSES = BucketSettings(bucket="poker-dealer")
RNG_SHUFFLES = BucketSettings(bucket="RNG_SHUFFLES")

# Each player's all-ins due to disconnection at every table (``tablelog.allowances``): a key
# lives 26 hours after its last write, a little over the 24-hour window it counts.
ALLOWANCES = BucketSettings(bucket="poker-allowances", ttl=26 * 60 * 60.0)

SETUP_STREAMS: tuple[StreamSettings, ...] = (TABLE_EVENTS, TABLE_SNAPSHOTS, WALLET_EVENTS, RNG_AUDIT)
SETUP_BUCKETS: tuple[BucketSettings, ...] = (LEASES, TABLE_HANDS, DEALER_PAUSES, RNG_SHUFFLES, ALLOWANCES)


async def ensure_bucket(js: JetStreamContext, settings: BucketSettings, *, pause: float = 0.5) -> KeyValue:
    """Create the bucket, or open the existing one."""
    try:
        return await _retrying(lambda: _ensure_bucket_once(js, settings), pause)
    except nats.errors.TimeoutError as exc:
        raise StreamUnavailable(stream=f"KV_{settings.bucket}") from exc


async def _ensure_bucket_once(js: JetStreamContext, settings: BucketSettings) -> KeyValue:
    try:
        return await js.key_value(settings.bucket)
    except NotFoundError:
        pass
    return await js.create_key_value(
        api.KeyValueConfig(
            bucket=settings.bucket,
            history=settings.history,
            ttl=settings.ttl or None,
            replicas=settings.replicas,
            storage=api.StorageType.FILE if settings.storage == "file" else api.StorageType.MEMORY,
            max_value_size=settings.max_value_size,
            direct=True,
        )
    )

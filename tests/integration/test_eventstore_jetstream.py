"""JetStream-only behaviour: stream settings as created, and partition leases on a real KV bucket."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import nats
import pytest
from cryptography.hazmat.primitives.asymmetric import ed25519
from nats.aio.client import Client
from nats.js import api
from nats.js.errors import APIError, NoStreamResponseError

from openpoker.eventstore.envelope import Snapshot
from openpoker.eventstore.errors import StreamSettingsMismatch
from openpoker.eventstore.jetstream import JetStreamEventStore
from openpoker.eventstore.lease import LeaseHeld, LeaseKeeper
from openpoker.eventstore.signing import TABLE_WRITER, Signer
from openpoker.eventstore.streams import (
    LEASES,
    TABLE_EVENTS,
    TABLE_SNAPSHOTS,
    BucketSettings,
    ensure_bucket,
    ensure_stream,
)
from openpoker.eventstore.subjects import partition_lease_key
from openpoker.shell.natsproc import NatsServer, free_port


async def test_event_stream_is_created_with_explicit_settings(nc: Client) -> None:
    js = nc.jetstream()
    info = await ensure_stream(js, TABLE_EVENTS)
    config = info.config
    assert config.storage == api.StorageType.FILE
    assert (config.num_replicas, config.duplicate_window) == (1, 120.0)
    assert (config.deny_delete, config.deny_purge, config.allow_direct) == (True, True, True)
    assert config.max_msg_size == TABLE_EVENTS.max_msg_size
    assert config.subjects == ["poker.table.>"]
    again = await ensure_stream(js, TABLE_EVENTS)  # idempotent
    assert again.config.name == "TABLE_EVENTS"
    await ensure_stream(js, TABLE_SNAPSHOTS)


async def test_the_log_cannot_be_deleted_or_purged(nc: Client) -> None:
    js = nc.jetstream()
    await ensure_stream(js, TABLE_EVENTS)
    ack = await js.publish("poker.table.1.t1", b"fact", stream="TABLE_EVENTS")
    with pytest.raises(APIError):
        await js.delete_msg("TABLE_EVENTS", ack.seq)
    with pytest.raises(APIError):
        await js.purge_stream("TABLE_EVENTS")
    assert (await js.get_last_msg("TABLE_EVENTS", "poker.table.1.t1")).data == b"fact"


async def test_existing_stream_with_other_settings_is_refused(nc: Client) -> None:
    js = nc.jetstream()
    await js.add_stream(name="TABLE_EVENTS", subjects=["poker.table.>"], duplicate_window=5)
    with pytest.raises(StreamSettingsMismatch) as caught:
        await ensure_stream(js, TABLE_EVENTS)
    assert "duplicate_window" in caught.value.differences
    assert "deny_delete" in caught.value.differences


async def test_lease_epochs_grow_and_only_one_holder(nc: Client) -> None:
    kv = await ensure_bucket(nc.jetstream(), dataclasses.replace(LEASES, ttl=30.0))
    key = partition_lease_key(7)
    a = LeaseKeeper(kv, key, owner="node-a", ttl=30.0)
    b = LeaseKeeper(kv, key, owner="node-b", ttl=30.0)
    epoch_a = await a.acquire()
    assert a.held
    with pytest.raises(LeaseHeld) as caught:
        await b.acquire()
    assert caught.value.holder == "node-a"
    renewed = await a.renew()
    assert renewed > epoch_a
    assert a.epoch == epoch_a  # the epoch is the acquisition revision
    await a.release()
    assert a.lost.is_set()  # released: no longer held
    epoch_b = await b.acquire()  # handed over at once after a release
    assert epoch_b > renewed
    await b.release()


async def test_lease_expires_after_ttl_and_the_next_owner_has_a_higher_epoch(nc: Client) -> None:
    kv = await ensure_bucket(nc.jetstream(), BucketSettings(bucket="short-leases", ttl=1.0))
    a = LeaseKeeper(kv, "part.1", owner="node-a", ttl=1.0)
    b = LeaseKeeper(kv, "part.1", owner="node-b", ttl=1.0)
    epoch_a = await a.acquire()  # a never renews (a paused process)
    epoch_b = 0
    for _ in range(100):
        try:
            epoch_b = await b.acquire()
            break
        except LeaseHeld:
            await asyncio.sleep(0.1)
    assert epoch_b > epoch_a
    # The stale owner's renewal is a definite conflict.
    a.start()
    await asyncio.wait_for(a.lost.wait(), timeout=10)
    assert a.lost_reason == "conflict"
    await a.release()
    await b.release()


async def test_keeper_renews_in_the_background(nc: Client) -> None:
    # A 2 s TTL bounds each renewal at 0.5 s: with 1 s (0.25 s per renewal) three slow KV
    # writes in a row on a loaded machine can lose the lease.
    kv = await ensure_bucket(nc.jetstream(), BucketSettings(bucket="renewed", ttl=2.0))
    a = LeaseKeeper(kv, "part.2", owner="node-a", ttl=2.0)
    b = LeaseKeeper(kv, "part.2", owner="node-b", ttl=2.0)
    await a.acquire()
    a.start()
    await asyncio.sleep(4.0)  # two TTLs: without renewals the key would have expired
    assert a.held
    with pytest.raises(LeaseHeld):
        await b.acquire()
    await a.release()


async def test_release_after_a_renewal_whose_ack_was_lost(nc: Client) -> None:
    """A renewal that timed out may still land: release must delete the key anyway, not raise."""
    kv = await ensure_bucket(nc.jetstream(), BucketSettings(bucket="stale", ttl=10.0))
    a = LeaseKeeper(kv, "part.4", owner="node-a", ttl=10.0)
    epoch = await a.acquire()
    landed = await kv.update("part.4", b"node-a", last=epoch)  # the keeper never saw this revision
    assert landed != epoch
    await a.release()
    b = LeaseKeeper(kv, "part.4", owner="node-b", ttl=10.0)
    await b.acquire()  # the key is gone: the next owner takes it at once
    await b.release()


async def test_release_leaves_a_lease_someone_else_took(nc: Client) -> None:
    kv = await ensure_bucket(nc.jetstream(), BucketSettings(bucket="taken", ttl=10.0))
    a = LeaseKeeper(kv, "part.5", owner="node-a", ttl=10.0)
    epoch = await a.acquire()
    await kv.update("part.5", b"node-b", last=epoch)  # another owner's value
    await a.release()
    assert (await kv.get("part.5")).value == b"node-b"


async def test_a_short_nats_outage_does_not_cost_the_lease(tmp_path: Path) -> None:
    server = NatsServer(data_dir=tmp_path / "nats", port=free_port())
    server.start()
    nc = await nats.connect(server.url, max_reconnect_attempts=-1, reconnect_time_wait=0.1)
    try:
        kv = await ensure_bucket(nc.jetstream(), BucketSettings(bucket="outage", ttl=10.0))
        a = LeaseKeeper(kv, "part.3", owner="node-a", ttl=10.0)
        epoch = await a.acquire()
        a.start()
        server.stop()
        await asyncio.sleep(1.0)  # renewals fail while the server is down
        server.start()
        renewed = False
        for _ in range(100):  # the first renewal is due 2.5 s after acquiring, after the restart
            renewed = (await kv.get("part.3")).revision != epoch
            if renewed:
                break
            await asyncio.sleep(0.1)
        assert renewed
        assert a.held
        assert a.epoch == epoch
        b = LeaseKeeper(kv, "part.3", owner="node-b", ttl=10.0)
        with pytest.raises(LeaseHeld):
            await b.acquire()
        await a.release()
    finally:
        await nc.close()
        server.stop()


async def test_a_snapshot_nobody_hears_yet_is_sent_again_until_its_stream_listens(nc: Client) -> None:
    # As on a cluster right after the snapshot stream is created (its interest still crossing
    # the routes): NATS answers "no responders" and nothing is stored, so sending again is safe.
    js = nc.jetstream()
    store = JetStreamEventStore(js, stream=TABLE_EVENTS.name, publish_timeout=5.0)
    snap = Snapshot(stream_id="t1", version=4, last_sequence=9, engine_version="e1", state=b"s4")
    saving = asyncio.ensure_future(store.save_snapshot(snap))
    await asyncio.sleep(0.3)
    assert not saving.done()  # unheard so far, still trying
    await ensure_stream(js, TABLE_SNAPSHOTS)
    await asyncio.wait_for(saving, timeout=5)
    assert await store.load_snapshot("t1") == snap


async def test_a_snapshot_unheard_for_the_whole_publish_timeout_fails(nc: Client) -> None:
    store = JetStreamEventStore(nc.jetstream(), stream=TABLE_EVENTS.name, publish_timeout=0.3)
    snap = Snapshot(stream_id="t1", version=1, last_sequence=1, engine_version="e1", state=b"s1")
    with pytest.raises(NoStreamResponseError):
        await store.save_snapshot(snap)


async def test_a_signed_snapshot_keeps_its_key_id_and_signature_through_jetstream(nc: Client) -> None:
    js = nc.jetstream()
    await ensure_stream(js, TABLE_SNAPSHOTS)
    store = JetStreamEventStore(js, stream=TABLE_EVENTS.name)
    signer = Signer.from_key(TABLE_WRITER, ed25519.Ed25519PrivateKey.generate())
    snap = signer.sign_snapshot(
        Snapshot(stream_id="t1", version=4, last_sequence=9, engine_version="e1", state=b"s4")
    )
    await store.save_snapshot(snap)
    loaded = await store.load_snapshot("t1")
    assert loaded == snap
    assert loaded is not None
    assert len(loaded.signature) == 64

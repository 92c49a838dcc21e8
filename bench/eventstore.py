"""Event store on a local nats-server (R1, file storage): append latency and ordered-read speed.

Ours: ``JetStreamEventStore.append`` (seal + protobuf encode + publish with the OCC and Msg-Id
headers + ack) one after another on one subject, and ``read`` of the whole subject (ordered
consumer). Peer, same run, same server: a bare ``js.publish`` of the same bytes with the same two
headers, i.e. the floor the store's own work sits on.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import nats

from openpoker.engine.version import ENGINE_VERSION
from openpoker.eventstore import GENESIS, Draft, RecordedEvent, seal
from openpoker.eventstore.codec import encode
from openpoker.eventstore.jetstream import EXPECTED_HEADER, MSG_ID_HEADER, JetStreamEventStore
from openpoker.eventstore.streams import TABLE_EVENTS, ensure_stream
from openpoker.shell.natsproc import NatsServer

PAYLOAD = b'{"type":"ActionTaken","seat":3,"action":"raise","amount":1200,"hand_id":"h-000123"}'


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _measure(url: str, count: int) -> dict[str, Any]:
    nc = await nats.connect(url)
    js = nc.jetstream()
    await ensure_stream(js, TABLE_EVENTS)
    store = JetStreamEventStore(js, stream=TABLE_EVENTS.name)
    now = dt.datetime.now(dt.UTC)
    ours: list[float] = []
    prev, last = GENESIS, 0
    for version in range(1, count + 1):
        started = time.perf_counter()
        env = seal(
            Draft(
                stream_id="bench-1",
                version=version,
                command_id=f"c{version}",
                owner_epoch=1,
                rules_version="seeds/1",
                engine_version=ENGINE_VERSION,
                events=(RecordedEvent(type="ActionTaken", payload=PAYLOAD),),
                recorded_at=now,
            ),
            prev,
        )
        last = (await store.append("poker.table.0.bench-1", env, expected_sequence=last)).sequence
        ours.append(time.perf_counter() - started)
        prev = env.hash
    data = encode(env)
    peer: list[float] = []
    peer_last = 0
    for version in range(1, count + 1):
        started = time.perf_counter()
        headers = {EXPECTED_HEADER: str(peer_last), MSG_ID_HEADER: f"bench-2:{version}:1"}
        ack = await js.publish("poker.table.0.bench-2", data, stream=TABLE_EVENTS.name, headers=headers)
        peer_last = ack.seq
        peer.append(time.perf_counter() - started)
    started = time.perf_counter()
    read = await store.read("poker.table.0.bench-1")
    read_s = time.perf_counter() - started
    assert len(read) == count
    await nc.close()
    return {
        "appends": count,
        "append_p50_us": round(statistics.median(ours) * 1e6),
        "append_p99_us": round(_pct(ours, 0.99) * 1e6),
        "peer_bare_publish_p50_us": round(statistics.median(peer) * 1e6),
        "peer_bare_publish_p99_us": round(_pct(peer, 0.99) * 1e6),
        "ordered_read_msgs_per_s": round(count / read_s),
    }


def run(quick: bool) -> dict[str, Any]:
    count = 200 if quick else 3000
    with tempfile.TemporaryDirectory() as tmp, NatsServer(data_dir=Path(tmp)) as server:
        return asyncio.run(_measure(server.url, count))

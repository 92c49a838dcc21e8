"""A restarted dealer catches up in seconds whatever the length of the table logs: each table
from its checkpoint (bucket ``poker-dealer``) and its own log after it, never the whole stream;
a table whose checkpoint is missing or corrupt folds its own log instead, and every table deals
again.

The history is long on purpose: four tables play hands, are paused, and then ``FILLER`` more
envelopes each (service bookkeeping the engine skips) are published straight into the stream.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import AsyncIterator

import pytest
from structlog.testing import capture_logs

from openpoker.eventstore import codec
from openpoker.eventstore.envelope import Envelope, RecordedEvent
from openpoker.eventstore.streams import TABLE_EVENTS, ensure_bucket
from openpoker.eventstore.subjects import table_subject
from openpoker.services.dealer.app import DealerApp, DealerSettings
from openpoker.services.dealer.audit import JetStreamAudit
from openpoker.services.dealer.checkpoints import PREFIX, Checkpoints
from openpoker.services.dealer.config import DealerConfig
from openpoker.services.dealer.feed import TableFeed
from openpoker.services.dealer.pauses import DEALER_BUCKET, KvPauseStore
from openpoker.services.dealer.server import SERVICE_NAME, start
from openpoker.shell.client import health_status
from openpoker.tablelog import ids
from tests.helpers.waiting import answer, until
from tests.services.dealer.jetstream_world import JetStreamWorld, worlds
from tests.services.dealer.rig import rules

TABLES = ("rc-1", "rc-2", "rc-3", "rc-4")
FILLER = 2_500  # envelopes per table after its hands: 10,000 in the stream
READY_WITHIN = 2.0  # seconds from start to live, every table from its checkpoint


class World(JetStreamWorld):
    """The fake table, rng and wallet of the dealer tests; envelopes go through JetStream."""

    async def dealer(self, *, checkpoints: bool = True) -> tuple[DealerApp, TableFeed]:
        kv = await ensure_bucket(self.js, DEALER_BUCKET)
        app = DealerApp(
            rng=self.rng,
            table=self.table,
            wallet=self.wallet,
            audit=JetStreamAudit(self.js),
            settings=DealerSettings(retry_delay=0.01, max_retry_delay=0.05),
            pauses=KvPauseStore(kv),
            checkpoints=Checkpoints(kv if checkpoints else None),
        )
        await app.load_pauses()
        feed = TableFeed(self.js, app, stream=TABLE_EVENTS.name)
        feed.start()
        return app, feed

    async def filler(self, table_id: str, count: int) -> None:
        """Publish ``count`` bookkeeping envelopes at ``table_id`` (fast: no ack each)."""
        log = self.table.tables[table_id]
        subject = table_subject(table_id)
        for _ in range(count):
            log.version += 1
            env = Envelope(
                stream_id=table_id,
                version=log.version,
                command_id=f"f{log.version}",
                prev_hash=b"",
                hash=b"",
                owner_epoch=1,
                rules_version="r1",
                engine_version="e1",
                events=(RecordedEvent(type="SeatNoteWritten", payload=b'{"note":"x"}'),),
                recorded_at=dt.datetime.now(dt.UTC),
            )
            await self.nc.publish(subject, codec.encode(env))
        await self.nc.flush()

    async def appended(self) -> bool | None:
        """True once every envelope the fake table wrote is in the stream (None: not yet)."""
        return True if await self.stream_last() >= len(self.table.envelopes) else None

    async def stream_last(self) -> int:
        return int((await self.js.stream_info(TABLE_EVENTS.name)).state.last_seq or 0)


@pytest.fixture
async def world(nats_url: str) -> AsyncIterator[World]:
    async with worlds(nats_url, World) as w:
        yield w


async def stop(app: DealerApp, feed: TableFeed) -> None:
    await feed.stop()
    await app.stop()
    await app.checkpoints.flush()


async def timed_start(world: World, *, checkpoints: bool = True) -> tuple[DealerApp, TableFeed, float]:
    began = time.monotonic()
    app, feed = await world.dealer(checkpoints=checkpoints)
    await until(lambda: app.live, what="caught up", within=120)
    return app, feed, time.monotonic() - began


async def long_history(world: World) -> None:
    """Hands at every table, then FILLER envelopes each, folded and checkpointed by a dealer."""
    app, feed = await world.dealer()
    for n, table_id in enumerate(TABLES):
        world.table.open(table_id, rules())
        for seat, player in ((0, f"a{n}"), (1, f"b{n}")):
            world.wallet.buy_in(table_id, player, 100)
            world.table.sit(table_id, seat, player, 100)
    await until(lambda: len(world.wallet.settlements) >= 2 * len(TABLES), what="hands at every table")
    for table_id in TABLES:
        await app.set_paused(table_id, True)
    await until(lambda: not app.active_hands(), what="between hands")
    await answer(world.appended, what="every envelope of the hands appended")
    for table_id in TABLES:
        await world.filler(table_id, FILLER)
    last = await world.stream_last()
    await until(lambda: feed.applied >= last, what="the old dealer folded the history", within=60)
    await stop(app, feed)
    for table_id in TABLES:  # the pump appends after the filler with the right expectation
        world.last[table_subject(table_id)] = int(
            (await world.js.get_last_msg(TABLE_EVENTS.name, table_subject(table_id))).seq or 0
        )


async def deals_again(world: World, app: DealerApp) -> None:
    """Every table's track is at its log's end, and each deals its next hand once resumed."""
    following = []
    for table_id in TABLES:
        track = app.drivers[table_id].track
        assert track.version == world.table.tables[table_id].version
        assert track.state is not None
        following.append(ids.hand_id(table_id, track.hands + 1))
        await app.set_paused(table_id, False)
    await until(lambda: all(h in world.rng.shuffles for h in following), what="the next hand everywhere")


async def test_a_restarted_dealer_is_live_within_seconds_and_deals_at_every_table(world: World) -> None:
    await long_history(world)
    assert await world.stream_last() > FILLER * len(TABLES)

    # For comparison: the whole stream folded (no checkpoints), as before.
    app, feed, whole = await timed_start(world, checkpoints=False)
    await stop(app, feed)

    app, feed, quick = await timed_start(world)
    try:
        print(f"\ncatch-up: whole stream {whole:.3f} s, from checkpoints {quick:.3f} s")
        assert quick < READY_WITHIN
        began = time.monotonic()
        await deals_again(world, app)
        print(f"every table dealt its next hand {time.monotonic() - began:.3f} s after it was resumed")
    finally:
        await stop(app, feed)


async def test_a_missing_corrupt_or_mismatched_checkpoint_folds_that_tables_log(world: World) -> None:
    await long_history(world)
    kv = await ensure_bucket(world.js, DEALER_BUCKET)
    await kv.delete(PREFIX + TABLES[0])
    await kv.put(PREFIX + TABLES[1], b'{"format":1,"engine":"openpoker-engine/0.0"}')
    # Well-formed, but not what the log holds: another hash, and another table's message.
    doc = json.loads((await kv.get(PREFIX + TABLES[2])).value or b"")
    await kv.put(PREFIX + TABLES[2], json.dumps({**doc, "last_hash": "00"}).encode())
    doc = json.loads((await kv.get(PREFIX + TABLES[3])).value or b"")
    await kv.put(PREFIX + TABLES[3], json.dumps({**doc, "sequence": 1}).encode())
    with capture_logs() as logs:
        app, feed, seconds = await timed_start(world)
    try:
        ignored = {e["table_id"] for e in logs if e["event"] == "dealer.checkpoint_ignored"}
        assert ignored == set(TABLES[1:])  # the missing one is simply not there
        print(f"\ncatch-up with every table from its whole log: {seconds:.3f} s")
        await deals_again(world, app)
    finally:
        await stop(app, feed)


async def test_the_dealer_service_reports_serving_within_seconds_of_a_restart(
    world: World, nats_url: str
) -> None:
    """The real service's wiring (health NOT_SERVING until caught up) over the same long history;
    its peers are unreachable, which only delays its calls, never its catching up."""
    await long_history(world)
    nowhere = "127.0.0.1:1"
    config = DealerConfig.from_env(
        {
            "POKER_INSECURE": "true",
            "POKER_DEALER_PORT": "0",
            "POKER_NATS_URL": nats_url,
            "POKER_RNG_TARGET": nowhere,
            "POKER_TABLE_TARGET": nowhere,
            "POKER_WALLET_TARGET": nowhere,
        }
    )
    began = time.monotonic()
    running = await start(config)
    try:

        async def serving() -> bool | None:
            return True if await health_status(running.server.address, SERVICE_NAME) == "SERVING" else None

        await answer(serving, what="SERVING", within=60)
        seconds = time.monotonic() - began
        print(f"\nthe dealer service: SERVING {seconds:.3f} s after its start")
        assert seconds < READY_WITHIN
        assert len(running.app.drivers) == len(TABLES)
    finally:
        await running.stop()

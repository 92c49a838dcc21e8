"""The dealer on a real nats-server: it follows TABLE_EVENTS through its feed, writes revealed
seeds to the RNG_AUDIT stream, keeps pauses in its KV bucket, and a new dealer process rebuilds
every table by folding the log before it acts.

The table, rng and wallet are the in-memory fakes of the unit tests, except that the fake table's
envelopes are appended to JetStream (``JetStreamEventStore``) and reach the dealer only through the
stream, as in production.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from nats.js.errors import NoKeysError

from openpoker.engine.hand_events import HandStarted
from openpoker.eventstore.streams import TABLE_EVENTS
from openpoker.services.dealer.app import DealerApp, DealerSettings
from openpoker.services.dealer.audit import JetStreamAudit, read_reveals
from openpoker.services.dealer.feed import TableFeed
from openpoker.services.dealer.pauses import DEALER_BUCKET, KEY, KvPauseStore, decode_pauses
from openpoker.services.dealer.pausing import DEALER, OPERATOR, Pause
from openpoker.tablelog import ids
from tests.helpers.waiting import until
from tests.services.dealer.fakes import log_events
from tests.services.dealer.jetstream_world import JetStreamWorld, worlds
from tests.services.dealer.rig import rules

T = "jt-1"


@dataclass
class Dealer:
    app: DealerApp
    feed: TableFeed

    async def stop(self) -> None:
        await self.feed.stop()
        await self.app.stop()


class World(JetStreamWorld):
    async def dealer(self) -> Dealer:
        app = DealerApp(
            rng=self.rng,
            table=self.table,
            wallet=self.wallet,
            audit=JetStreamAudit(self.js),
            settings=DealerSettings(retry_delay=0.01, max_retry_delay=0.05),
            pauses=await KvPauseStore.open(self.js),
        )
        await app.load_pauses()
        feed = TableFeed(self.js, app, stream=TABLE_EVENTS.name)
        feed.start()
        return Dealer(app=app, feed=feed)

    def seat(self, players: dict[int, str]) -> None:
        for seat, player in players.items():
            self.wallet.buy_in(T, player, 100)
            self.table.sit(T, seat, player, 100)


@pytest.fixture
async def world(nats_url: str) -> AsyncIterator[World]:
    async with worlds(nats_url, World) as w:
        yield w


async def test_feed_restart_audit_and_pauses(world: World) -> None:
    dealer = await world.dealer()
    world.table.open(T, rules())
    world.seat({0: "ann", 1: "bob"})
    await until(lambda: len(world.wallet.settlements) >= 2, what="two settled hands")
    assert await dealer.app.set_paused(T, True) is not None
    await until(lambda: not dealer.app.active_hands(), what="between hands")
    await dealer.stop()
    await until(world.queue.empty, what="appends flushed")
    scheduled = world.table.state(T).hands_played

    # A new dealer process: folds the whole log from the stream, remembers the pause.
    again = await world.dealer()
    try:
        await until(lambda: again.app.live, what="caught up")
        track = again.app.drivers[T].track
        assert track.version == world.table.tables[T].version
        assert track.hands == scheduled
        assert again.app.drivers[T].paused
        await asyncio.sleep(0.1)
        assert world.table.state(T).hands_played == scheduled  # paused: nothing new
        await again.app.set_paused(T, False)
        next_hand = ids.hand_id(T, scheduled + 1)
        await until(lambda: next_hand in world.rng.shuffles, what="the next hand after resume")
    finally:
        await again.stop()

    reveals = {r.hand_id: r for r in await read_reveals(world.js, T)}
    started = {e.hand_id: e for e in log_events(world.table, T) if isinstance(e, HandStarted)}
    for n in range(1, scheduled + 1):
        hand_id = ids.hand_id(T, n)
        assert reveals[hand_id].commitment == started[hand_id].commitment
        assert reveals[hand_id].hand_number == n


async def test_pauses_are_stored_with_who_paused_and_why(world: World) -> None:
    store = await KvPauseStore.open(world.js)
    at = dt.datetime(2026, 11, 27, 3, 0, tzinfo=dt.UTC)
    by_dealer = Pause(by=DEALER, reason="INSUFFICIENT_FUNDS", failures=5, detail="refused", at=at)
    await store.set("t1", by_dealer)
    await store.set("t2", Pause(at=at))
    kv = await world.js.key_value(DEALER_BUCKET.bucket)
    await kv.put("paused.t3", b"1")  # as stored before pauses had reasons: an operator's
    loaded = await store.load()
    assert loaded == {"t1": by_dealer, "t2": Pause(at=at), "t3": Pause()}
    assert loaded["t3"].by == OPERATOR
    await store.set("t1", None)
    assert set(await store.load()) == {"t2", "t3"}


async def test_pauses_are_one_value_read_without_listing_keys(world: World) -> None:
    store = await KvPauseStore.open(world.js)
    kv = await world.js.key_value(DEALER_BUCKET.bucket)
    # Many other keys in the bucket (the dealer's checkpoints): the pauses are not listed among them.
    for n in range(50):
        await kv.put(f"checkpoint.c{n}", b"{}")
    await store.set("t1", Pause(by=DEALER, reason="INSUFFICIENT_FUNDS", failures=5))
    await store.set("t2", Pause())
    entry = await kv.get(KEY)
    assert set(decode_pauses(entry.value or b"")) == {"t1", "t2"}

    async def no_listing(*args: object, **kwargs: object) -> list[str]:
        raise NoKeysError  # as a listing that came back short: the pauses must not depend on it

    store._kv.keys = no_listing  # type: ignore[method-assign]
    assert set(await store.load()) == {"t1", "t2"}
    # Two stores writing at once (compare-and-set): neither change is lost.
    other = await KvPauseStore.open(world.js)
    await asyncio.gather(store.set("t3", Pause()), other.set("t4", Pause()), store.set("t1", None))
    assert set(await other.load()) == {"t2", "t3", "t4"}
    # An old-layout key is folded into the value at that table's next change.
    await kv.put("paused.t5", b"1")
    fresh = await KvPauseStore.open(world.js)
    assert set(await fresh.load()) == {"t2", "t3", "t4", "t5"}
    await fresh.set("t5", None)
    assert set(await fresh.load()) == {"t2", "t3", "t4"}

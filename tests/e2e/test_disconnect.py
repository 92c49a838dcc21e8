"""Disconnection protection end to end (real nats-server, the four services as processes): a
seated player's connection is their open WatchTable stream. Closing it appends
PlayerDisconnected (the table service publishes presence, the dealer reports it); their clock
runs out and they are all-in protected, twice in 24 h, then folded; reopening it appends
PlayerReconnected, and during their turn the dealer's clock grants the extra time."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.engine.table_events import (
    DecisionTimedOut,
    PlayerDisconnected,
    PlayerReconnected,
    TimeOutOutcome,
)
from openpoker.eventstore.subjects import table_subject
from openpoker.pokerctl.bots import _ms, buy_in_for, table_config
from openpoker.pokerctl.local import LocalSystem
from openpoker.services.dealer.tracker import decode_event
from openpoker.tablelog.store import JetStreamTableEvents
from tests.e2e.helpers import Clients, in_hand

# The whole system as processes for this module: over 5 s a test on 2 shared cores, so `make
# test-fast` leaves the module out (docs/testing.md).
pytestmark = pytest.mark.slow

GRACE_MS = 30_000


async def table_log(system: LocalSystem, table_id: str) -> list[object]:
    """Every engine event in the table's log, read from JetStream as any auditor would."""
    nc = await system.connect_nats()
    try:
        stored = await JetStreamTableEvents(nc.jetstream(), stream="TABLE_EVENTS").read(
            table_subject(table_id)
        )
    finally:
        await nc.close()
    return [e for s in stored for r in s.envelope.events if (e := decode_event(r)) is not None]


async def log_until(
    system: LocalSystem, table_id: str, done: Any, *, what: str, within: float = 30
) -> list[object]:
    """Poll the log until ``done(events)`` (a liveness guard, not a timing assertion)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while True:
        events = await table_log(system, table_id)
        if done(events):
            return events
        if loop.time() > end:
            raise AssertionError(f"gave up waiting for {what}")
        await asyncio.sleep(0.05)


async def watch(c: Clients, table_id: str, player: str) -> Any:
    """Open ``player``'s watch stream (their connection, with their token) and wait for its first
    view."""
    call = c.table.WatchTable(
        tpb.WatchTableRequest(name=f"tables/{table_id}", viewer_player_id=player), metadata=c.player(player)
    )
    async for _ in call:
        break
    return call


def of(kind: type, player: str, events: list[object]) -> list[Any]:
    return [e for e in events if isinstance(e, kind) and getattr(e, "player", None) == player]


async def test_closed_stream_disconnects_protected_twice_then_folded(
    system: LocalSystem,
) -> None:
    table_id = "dc-fast"
    config = table_config("holdem", "nl", clock_ms=150)
    async with Clients(system) as c:
        await c.create(table_id, config)
        buy_in = buy_in_for(config)
        await c.seat(table_id, "ann", buy_in)
        await c.seat(table_id, "bob", buy_in)
        stream = await watch(c, table_id, "ann")
        stream.cancel()  # ann's client goes away
        events = await log_until(
            system, table_id, lambda ev: of(PlayerDisconnected, "ann", ev), what="ann disconnected"
        )
        assert of(PlayerDisconnected, "ann", events)[0].seat + 1 in {
            s.seat for s in (await c.view(table_id)).seats
        }
        events = await log_until(
            system,
            table_id,
            lambda ev: len(of(DecisionTimedOut, "ann", ev)) >= 3,
            what="three time-outs of ann",
        )
        ann = of(DecisionTimedOut, "ann", events)[:3]
        assert all(e.disconnected for e in ann)
        # Heads-up, ann has posted a blind whenever she is to act: only the allowance decides.
        assert [(e.outcome, e.uses_protection) for e in ann] == [
            (TimeOutOutcome.PROTECTED, True),
            (TimeOutOutcome.PROTECTED, True),
            (TimeOutOutcome.FOLDED, False),
        ]
        assert len(of(PlayerDisconnected, "ann", events)) == 1  # reported once
        assert not of(PlayerDisconnected, "bob", events)  # bob never watched: nothing observed
        view = await c.view(table_id)
        assert next(s for s in view.seats if s.player_id == "ann").disconnected
        # Watching again reconnects her.
        stream = await watch(c, table_id, "ann")
        try:
            await log_until(
                system, table_id, lambda ev: of(PlayerReconnected, "ann", ev), what="ann reconnected"
            )
            await c.wait(
                table_id,
                lambda t: not next(s for s in t.seats if s.player_id == "ann").disconnected,
                what="ann shown connected",
            )
        finally:
            stream.cancel()


async def test_reconnecting_during_ones_turn_grants_the_extra_time(system: LocalSystem) -> None:
    table_id = "dc-turn"
    config = table_config("holdem", "nl", clock_ms=5_000)
    config.time.reconnect_grace.CopyFrom(_ms(GRACE_MS))
    async with Clients(system) as c:
        await c.create(table_id, config)
        buy_in = buy_in_for(config)
        seats = {await c.seat(table_id, p, buy_in): p for p in ("ann", "bob")}
        streams = {p: await watch(c, table_id, p) for p in seats.values()}
        try:
            table = await c.wait(table_id, in_hand, what="a hand to start")
            seat = table.current_hand.to_act.seat
            player = seats[seat]

            async def deadline() -> Any:
                while True:
                    hands = [h for h in await c.active_hands() if h.table_id == table_id]
                    if hands and hands[0].seat_to_act == seat and hands[0].HasField("action_deadline"):
                        return hands[0].action_deadline.ToDatetime()
                    await asyncio.sleep(0.02)

            streams.pop(player).cancel()
            await log_until(
                system,
                table_id,
                lambda ev: of(PlayerDisconnected, player, ev),
                what="disconnected",
                within=10,
            )
            before = await deadline()
            streams[player] = await watch(c, table_id, player)
            events = await log_until(
                system, table_id, lambda ev: of(PlayerReconnected, player, ev), what="reconnected", within=10
            )
            (back,) = of(PlayerReconnected, player, events)
            assert back.extra_ms == GRACE_MS  # still their turn: the engine grants the extra time
            assert not of(DecisionTimedOut, player, events)

            async def extended() -> Any:
                for _ in range(500):
                    if (after := await deadline()) > before:
                        return after
                    await asyncio.sleep(0.02)
                raise AssertionError("the dealer's clock was not extended")

            after = await extended()
            # The dealer's clock for this very decision moved by exactly the extra time.
            assert abs((after - before).total_seconds() - GRACE_MS / 1000) < 0.05
        finally:
            for call in streams.values():
                call.cancel()

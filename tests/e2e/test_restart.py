"""Crashes in the middle of a hand: the table service, then the dealer, are killed (SIGKILL) and
started again; the hand resumes where it was, is settled, its seed revealed to the audit record,
and chips are conserved across the wallet and the tables."""

from __future__ import annotations

import grpc
import pytest

from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.eventstore.codec import from_proto
from openpoker.pokerctl.bots import QUIET, buy_in_for, start_bots, table_config, wait_tables
from openpoker.pokerctl.chips import check_chips, house_balance
from openpoker.pokerctl.cmd_demo import quiesce
from openpoker.pokerctl.local import LocalSystem
from openpoker.services.dealer.audit import read_reveals
from openpoker.services.dealer.tracker import decode_event
from openpoker.shell.client import rich_error
from openpoker.shuffle import ShuffleRecord, dealt_from_top, verify_record
from tests.e2e.helpers import Clients, in_hand

# The whole system as processes for this module: over 5 s a test on 2 shared cores, so `make
# test-fast` leaves the module out (docs/testing.md).
pytestmark = pytest.mark.slow


async def play_one(c: Clients, table_id: str, players: dict[int, str]) -> int:
    """The player to act checks or calls; returns the version after it. A restarted table service
    records its ownership (``OwnerChanged``) on its first command, so a view taken just before
    can be one version stale: look again and act on what is there."""
    for _ in range(5):
        table = await c.wait(table_id, in_hand, what="a decision")
        hand = table.current_hand
        checks = tpb.ACTION_TYPE_CHECK in hand.to_act.actions
        action = tpb.ACTION_TYPE_CHECK if checks else tpb.ACTION_TYPE_CALL
        try:
            done = await c.act(
                table_id, players[hand.to_act.seat], hand.hand_id, action, expected_version=table.version
            )
        except grpc.RpcError as err:
            if rich_error(err).reason != "STALE_VERSION":
                raise
            continue
        return done.version
    raise AssertionError("the table kept moving")


async def test_table_then_dealer_killed_mid_hand(system: LocalSystem) -> None:
    table_id = "crash-1"
    config = table_config("holdem", "nl", clock_ms=60_000)
    buy_in = buy_in_for(config)
    async with Clients(system) as c:
        conn = c.conn
        house = await house_balance(system.targets["wallet"], conn=conn)
        await c.create(table_id, config)
        players = {await c.seat(table_id, p, buy_in): p for p in ("ann", "bob", "cy")}
        first = await c.wait(table_id, in_hand, what="hand 1")
        hand_id = first.current_hand.hand_id
        assert hand_id == f"{table_id}-1"
        await play_one(c, table_id, players)
        before = await c.view(table_id)
    # The table service crashes mid-hand and comes back: it rebuilds the table from the log.
    await system.restart("table", kill=True)
    async with Clients(system) as c:
        after = await c.wait(table_id, lambda t: True, what="the restarted table service")
        # Nothing of the game is lost; the new instance may have recorded its ownership.
        assert after.version >= before.version
        assert [(s.player_id, s.stack, s.committed) for s in after.seats] == [
            (s.player_id, s.stack, s.committed) for s in before.seats
        ]
        assert after.current_hand.hand_id == hand_id
        assert after.current_hand.to_act.seat == before.current_hand.to_act.seat
        await play_one(c, table_id, players)
        mid = await c.view(table_id)
        assert mid.current_hand.hand_id == hand_id
    # Then the dealer crashes mid-hand: the new one folds the log and picks the hand up.
    await system.restart("dealer", kill=True)
    async with Clients(system) as c:
        await c.wait(
            table_id,
            lambda t: t.current_hand.hand_id != hand_id or t.current_hand.to_act.seat > 0,
            what="the hand after the dealer restart",
        )
        active = await c.active_hands()
        assert [h.hand_id for h in active if h.table_id == table_id] == [hand_id]
        while (await c.view(table_id)).hands_played < 1:
            await play_one(c, table_id, players)
        # The dealer deals hand 2 only once hand 1 is settled and its seed revealed.
        second = await c.wait(table_id, in_hand, what="hand 2")
        assert second.current_hand.hand_id == f"{table_id}-2"
        await c.pause(table_id)
        voided = await c.void(table_id, f"{table_id}-2", reason="test over")
        # Every reservation of hand 2 (the stack each player dealt in started it with) is released.
        dealt_in = [s for s in second.seats if s.player_id and s.hole_cards]
        assert len(dealt_in) >= 2
        assert voided.released == sum(s.stack + s.committed for s in dealt_in)
        await quiesce(system.targets["dealer"], [table_id], conn=conn)
        history = await c.history(table_id, hand_id)
    report = await check_chips(
        table_target=system.targets["table"],
        wallet_target=system.targets["wallet"],
        table_ids=[table_id],
        players={table_id: set(players.values())},
        deposits=3 * 10_000,
        house_before=house,
        conn=conn,
    )
    assert report.problems == []
    assert (report.hands, report.voided) == (1, 1)
    # The revealed seed is in the audit record and re-derives exactly the cards dealt.
    started = next(
        e
        for env in history.envelopes
        for r in from_proto(env).events
        if type(e := decode_event(r)).__name__ == "HandStarted"
    )
    nc = await system.connect_nats()
    try:
        reveals = {r.hand_id: r for r in await read_reveals(nc.jetstream(), table_id)}
    finally:
        await nc.close()
    record = reveals[hand_id]
    assert record.commitment == history.hand.deck_commitment == started.commitment  # type: ignore[union-attr]
    verdict = verify_record(
        ShuffleRecord(
            version=record.version,
            hand_id=hand_id,
            deck_size=record.deck_size,
            commitment=record.commitment,
            seed=record.seed,
            dealt=dealt_from_top(started.deck),  # type: ignore[union-attr]
        )
    )
    assert verdict.ok


async def test_bots_keep_playing_through_crashes_and_chips_are_conserved(system: LocalSystem) -> None:
    names = ["churn-1", "churn-2"]
    async with Clients(system) as c:
        conn = c.conn
        await c.create(names[0], table_config("omaha", "pl", clock_ms=1000))
        await c.create(names[1], table_config("sixplus", "nl", clock_ms=1000))
    house = await house_balance(system.targets["wallet"], conn=conn)
    bots = await start_bots(
        table_target=system.targets["table"],
        wallet_target=system.targets["wallet"],
        tables=names,
        players_per_table=3,
        behaviour=QUIET,
        conn=conn,
    )
    try:
        await wait_tables(system.targets["table"], names, lambda t: t.hands_played >= 2, conn=conn)
        await system.restart("table", kill=True)
        await wait_tables(system.targets["table"], names, lambda t: t.hands_played >= 4, conn=conn)
        await system.restart("dealer", kill=True)
        await wait_tables(system.targets["table"], names, lambda t: t.hands_played >= 6, conn=conn)
        await quiesce(system.targets["dealer"], names, conn=conn)
    finally:
        await bots.stop()
    report = await check_chips(
        table_target=system.targets["table"],
        wallet_target=system.targets["wallet"],
        table_ids=names,
        players={n: {b.player for b in bots.bots if b.table_id == n} for n in names},
        deposits=bots.stats.deposited,
        house_before=house,
        conn=conn,
    )
    assert report.problems == []
    assert report.hands >= 12

"""Random play through the service: no response ever shows a player another's hole cards
before the showdown shows them, and chips on the table are conserved."""

from __future__ import annotations

import random

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.engine.cards import STANDARD_DECK
from openpoker.tablelog.store import MemoryTableEvents
from tests.services.table.helpers import FakeWallet, act, create, join, nl_config, serve, start_hand

PLAYERS = ("ann", "bob", "cat")


def check_view(table: pb.Table, viewer: str | None, dealt: dict[str, list[str]], shown: set[str]) -> None:
    for seat in table.seats:
        if not seat.player_id or not seat.hole_cards:
            continue
        cards = list(seat.hole_cards)
        if seat.player_id == viewer:
            assert cards == dealt[seat.player_id]
        elif seat.player_id not in shown:
            assert cards == ["", ""], (viewer, seat.player_id, cards)


async def test_random_hands_never_leak_hole_cards() -> None:
    rng = random.Random(20261122)
    svc = await serve(MemoryTableEvents(), FakeWallet(cash=dict.fromkeys(PLAYERS, 10_000)))
    try:
        await create(svc.stub, config=nl_config(3))
        for i, player in enumerate(PLAYERS):
            await join(svc.stub, player, i + 1)
        played = 0
        for n in range(25):
            deck = list(STANDARD_DECK)
            rng.shuffle(deck)
            state = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
            if state.status != pb.TABLE_STATUS_BETWEEN_HANDS:
                break
            await start_hand(svc.stub, f"h{n}", deck=deck)
            played += 1
            dealt: dict[str, list[str]] = {}
            for player in PLAYERS:
                own = (
                    await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1", viewer_player_id=player))
                ).table
                mine = [s for s in own.seats if s.player_id == player and s.hole_cards]
                if mine:
                    dealt[player] = list(mine[0].hole_cards)
            view = own
            while view.status == pb.TABLE_STATUS_IN_HAND and view.current_hand.to_act.seat:
                legal = view.current_hand.to_act
                player = next(s.player_id for s in view.seats if s.seat == legal.seat)
                choice = rng.choice(list(legal.actions))
                amount = legal.min_raise_to if choice in (pb.ACTION_TYPE_BET, pb.ACTION_TYPE_RAISE) else 0
                reply = await act(svc.stub, player, choice, amount)
                view = reply.table
                check_view(view, player, dealt, set())
                for other in PLAYERS:
                    seen = (
                        await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1", viewer_player_id=other))
                    ).table
                    check_view(seen, other, dealt, set())
                spectator = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
                check_view(spectator, None, dealt, set())
            hand = (
                await svc.stub.GetHand(
                    pb.GetHandRequest(name=f"tables/t1/hands/h{n}", viewer_player_id="ann")
                )
            ).hand
            shown = {
                s.player_id for s in hand.seats if s.hole_cards and all(s.hole_cards) and s.player_id != "ann"
            }
            for s in hand.seats:
                if s.player_id in shown:
                    assert list(s.hole_cards) == dealt[s.player_id]  # shown cards are the dealt ones
                elif s.player_id != "ann":
                    assert not any(s.hole_cards)
            after = (await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))).table
            assert sum(s.stack for s in after.seats) == 600  # no rake configured
        assert played >= 10
    finally:
        await svc.stop()

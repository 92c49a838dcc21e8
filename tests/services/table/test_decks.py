"""StartHand refuses a deck that is not the game's before any card is dealt: INVALID_ARGUMENT
``INVALID_DECK`` naming the problem and the card; the game's own deck starts the hand."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence

import grpc
import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.engine.cards import SHORT_DECK, STANDARD_DECK, Card, parse_card
from openpoker.engine.errors import InvalidDeck
from openpoker.shell.client import RichError, rich_error
from openpoker.shell.errors import to_status
from tests.services.table.helpers import Running, create, join, nl_config, start_hand


async def refused(call: Awaitable[object]) -> RichError:
    with pytest.raises(grpc.RpcError) as caught:
        await call
    return rich_error(caught.value)


async def table(svc: Running) -> pb.Table:
    reply = await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1", viewer_player_id="ann"))
    t: pb.Table = reply.table
    return t


async def seated(svc: Running, game: pb.Game.ValueType) -> int:
    config = nl_config()
    config.game = game
    await create(svc.stub, config=config)
    await join(svc.stub, "ann", 1)
    await join(svc.stub, "bob", 2)
    return int((await table(svc)).version)


def with_card(deck: Sequence[Card], position: int, card: str) -> tuple[Card, ...]:
    out = list(deck)
    out[position] = parse_card(card)
    return tuple(out)


async def assert_refused(svc: Running, deck: Sequence[Card], before: int, **metadata: str) -> None:
    err = await refused(start_hand(svc.stub, "h1", deck=deck))
    assert (err.code, err.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_DECK")
    assert {k: err.metadata[k] for k in metadata} == metadata
    t = await table(svc)
    assert t.version == before  # nothing appended: no hand, no card dealt
    assert not t.HasField("current_hand")


async def test_a_six_plus_hand_refuses_a_two_or_the_52_card_deck_and_plays_its_36(svc: Running) -> None:
    before = await seated(svc, pb.GAME_SIX_PLUS_HOLDEM)
    # The two is the first card dealt: refused before it reaches ann or bob.
    await assert_refused(svc, with_card(SHORT_DECK, 0, "2c"), before, problem="not_in_game", card="2c")
    await assert_refused(svc, STANDARD_DECK, before, problem="size", size="52")
    await start_hand(svc.stub, "h1", deck=SHORT_DECK[::-1])
    ann = next(s for s in (await table(svc)).seats if s.player_id == "ann")
    assert [parse_card(c).rank >= 6 for c in ann.hole_cards] == [True, True]


async def test_a_holdem_hand_refuses_a_duplicate_or_a_missing_card_and_plays_its_52(svc: Running) -> None:
    before = await seated(svc, pb.GAME_TEXAS_HOLDEM)
    duplicate = with_card(STANDARD_DECK, 51, "2c")  # 2c twice, As missing
    await assert_refused(svc, duplicate, before, problem="duplicate", card="2c")
    await assert_refused(svc, STANDARD_DECK[:-1], before, problem="size", size="51")
    await start_hand(svc.stub, "h1", deck=STANDARD_DECK)
    assert (await table(svc)).HasField("current_hand")


def test_the_engines_invalid_deck_maps_to_invalid_argument_with_its_fields() -> None:
    mapped = to_status(InvalidDeck(game="six_plus", problem="not_in_game", card="2c", size=36), domain="x")
    assert (mapped.code, mapped.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_DECK")

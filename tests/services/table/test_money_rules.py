"""CreateTable's money rules over gRPC (HOUSE_RULES.md, Blinds and Rake; issue 18): no flop, no
drop when the client leaves it unset, the seed small blind in whole currency units, and the
currency unit and rules version echoed in the table's config."""

from __future__ import annotations

import grpc
import pytest

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.shell.client import rich_error
from tests.services.table.helpers import (
    OPERATOR,
    Running,
    act,
    create,
    join,
    nl_config,
    rid,
    start_hand,
    to_act,
)


@pytest.fixture
def cash() -> dict[str, int]:
    return {"ann": 10_000, "bob": 10_000}


def raked(**rake: object) -> pb.TableConfig:
    config = nl_config(2, sb=5, bb=10)
    config.rake.CopyFrom(pb.RakeRules(basis_points=500, **rake))  # type: ignore[arg-type]
    return config


async def seat_two(svc: Running, config: pb.TableConfig) -> pb.Table:
    table = await create(svc.stub, config=config)
    await join(svc.stub, "ann", 1, buy_in=1000)
    await join(svc.stub, "bob", 2, buy_in=1000)
    return table


async def view(svc: Running) -> pb.Table:
    reply = await svc.stub.GetTable(pb.GetTableRequest(name="tables/t1"))
    table: pb.Table = reply.table
    return table


async def hand_rake(svc: Running, hand_id: str) -> int:
    reply = await svc.stub.GetHand(pb.GetHandRequest(name=f"tables/t1/hands/{hand_id}"))
    assert reply.hand.street == pb.STREET_ENDED
    return int(reply.hand.rake)


async def raise_reraise_fold(svc: Running, hand_id: str) -> None:
    """Raise to 100, re-raise to 300, fold: the hand ends pre-flop with 200 in the pot."""
    await start_hand(svc.stub, hand_id)
    for action, amount in (
        (pb.ACTION_TYPE_RAISE, 100),
        (pb.ACTION_TYPE_RAISE, 300),
        (pb.ACTION_TYPE_FOLD, 0),
    ):
        await act(svc.stub, to_act(await view(svc)), action, amount)


async def see_the_flop(svc: Running, hand_id: str) -> None:
    """Raise to 100, call; on the flop bet 100 and fold: 200 in the pot after the flop."""
    await start_hand(svc.stub, hand_id)
    await act(svc.stub, to_act(await view(svc)), pb.ACTION_TYPE_RAISE, 100)
    await act(svc.stub, to_act(await view(svc)), pb.ACTION_TYPE_CALL)
    table = await view(svc)
    assert len(table.current_hand.board) == 3
    await act(svc.stub, to_act(table), pb.ACTION_TYPE_BET, 100)
    await act(svc.stub, to_act(await view(svc)), pb.ACTION_TYPE_FOLD)


async def test_unset_no_flop_no_drop_is_on(svc: Running) -> None:
    table = await seat_two(svc, raked())
    assert table.config.rake.HasField("no_flop_no_drop")
    assert table.config.rake.no_flop_no_drop is True
    await raise_reraise_fold(svc, "h1")
    assert await hand_rake(svc, "h1") == 0  # no flop, no drop
    await see_the_flop(svc, "h2")
    assert await hand_rake(svc, "h2") == 10  # 5% of 200
    assert sum(s.stack for s in (await view(svc)).seats) == 2000 - 10
    history = await svc.stub.GetHandHistory(
        pb.GetHandHistoryRequest(name="tables/t1/hands/h2", format=pb.HISTORY_FORMAT_PHH),
        metadata=(("x-caller", "auditor"),),
    )
    assert {e.rules_version for e in history.envelopes} == {"seeds/2"}


async def test_an_explicit_false_turns_no_flop_no_drop_off(svc: Running) -> None:
    table = await seat_two(svc, raked(no_flop_no_drop=False))
    assert table.config.rake.no_flop_no_drop is False
    await raise_reraise_fold(svc, "h1")
    assert await hand_rake(svc, "h1") == 10


async def test_the_config_echoes_the_currency_unit_and_the_rules_version(svc: Running) -> None:
    config = nl_config(sb=50, bb=100)
    config.currency_unit = 1000
    table = await create(svc.stub, config=config)
    assert (table.config.currency_unit, table.config.rules_version) == (1000, 2)
    table = await create(svc.stub, "t2")
    assert (table.config.currency_unit, table.config.rules_version) == (100, 2)  # 0 = 100


@pytest.mark.parametrize(
    ("lower", "small_blind", "currency_unit"),
    [(500, 200, 0), (100, 50, 0), (1000, 500, 0), (300, 100, 0), (5, 2, 1)],
)
async def test_fixed_limit_small_blind_left_unset_follows_the_seeds(
    svc: Running, lower: int, small_blind: int, currency_unit: int
) -> None:
    """Seed 001: $5/$10 posts $2, $1/$2 posts $0.50 (in cents, or in whole dollars)."""
    config = pb.TableConfig(
        game=pb.GAME_TEXAS_HOLDEM,
        structure=pb.STRUCTURE_FIXED_LIMIT,
        stakes=pb.Stakes(small_bet=lower, big_bet=2 * lower),
        currency_unit=currency_unit,
    )
    table = await create(svc.stub, config=config)
    stakes = table.config.stakes
    assert (stakes.small_blind, stakes.big_blind, stakes.big_bet) == (small_blind, lower, 2 * lower)


async def test_an_explicit_small_blind_overrides_and_a_zero_one_is_refused(svc: Running) -> None:
    config = pb.TableConfig(
        game=pb.GAME_TEXAS_HOLDEM,
        structure=pb.STRUCTURE_FIXED_LIMIT,
        stakes=pb.Stakes(small_blind=250, small_bet=500, big_bet=1000),
    )
    assert (await create(svc.stub, config=config)).config.stakes.small_blind == 250
    config.stakes.small_blind = 0
    config.stakes.small_bet, config.stakes.big_bet = 1, 2
    config.currency_unit = 1  # whole dollars: half of $1 rounds down to nothing
    with pytest.raises(grpc.RpcError) as caught:
        await svc.stub.CreateTable(
            pb.CreateTableRequest(request_id=rid(), table_id="t2", config=config), metadata=OPERATOR
        )
    err = rich_error(caught.value)
    assert (err.code, err.reason, err.metadata["field"]) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_RULES",
        "stakes.small_blind",
    )

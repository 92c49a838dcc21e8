"""A bot against fake stubs: faults are tried again with the same request id, a refusal at the
start ends the bot at once, a service away past the bot's patience ends it, a broken
``WatchTable`` is opened again; and ``play_bots`` stops, telling why, once every bot gave up
(its system is not there at all)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from grpc import aio

from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.pokerctl.bots import Behaviour, BotGaveUp, BotStats
from openpoker.pokerctl.bots import Bot as BotClass
from openpoker.pokerctl.cmd_bots import play_bots


def failure(code: grpc.StatusCode) -> aio.AioRpcError:
    return aio.AioRpcError(
        code=code, initial_metadata=aio.Metadata(), trailing_metadata=aio.Metadata(), details="fake"
    )


class Unary:
    """A unary method failing with ``codes`` in turn, then answering ``reply``; keeps requests."""

    def __init__(self, reply: Any, *codes: grpc.StatusCode, forever: grpc.StatusCode | None = None) -> None:
        self.reply = reply
        self.codes = list(codes)
        self.forever = forever
        self.requests: list[Any] = []

    async def __call__(self, request: Any, **_: Any) -> Any:
        self.requests.append(request)
        if self.codes:
            raise failure(self.codes.pop(0))
        if self.forever is not None:
            raise failure(self.forever)
        return self.reply


class Watch:
    """One ``WatchTable`` call: ``views`` views, then the stream breaks with ``code``."""

    def __init__(self, views: int, code: grpc.StatusCode) -> None:
        self.views, self.code = views, code

    async def __aiter__(self) -> AsyncIterator[tpb.WatchTableResponse]:
        table = tpb.Table(name="tables/t1", version=1, status=tpb.TABLE_STATUS_BETWEEN_HANDS)
        table.seats.add(seat=1, player_id="bot", status=tpb.SEAT_STATUS_ACTIVE, stack=200)
        for _ in range(self.views):
            yield tpb.WatchTableResponse(table=table)
        raise failure(self.code)

    def cancel(self) -> None:
        pass


class Tables:
    def __init__(self, watches: list[Watch]) -> None:
        config = tpb.TableConfig(stakes=tpb.Stakes(small_blind=1, big_blind=2))
        self.GetTable = Unary(tpb.GetTableResponse(table=tpb.Table(config=config)))
        self.JoinTable = Unary(tpb.JoinTableResponse())
        self.ActStream = object()  # never called: the fake table never asks the bot to act
        self.watches = watches
        self.opened = 0

    def WatchTable(self, request: Any, **_: Any) -> Watch:
        self.opened += 1
        return self.watches.pop(0)


class Wallet:
    def __init__(self, deposit: Unary) -> None:
        self.Deposit = deposit


def bot(tables: Tables, wallet: Wallet, *, patience: float | None) -> BotClass:
    quiet = Behaviour(sit_out=0.0, leave=0.0, top_up_below=0.0)
    return BotClass(
        player="bot",
        table_id="t1",
        tables=tables,
        wallet=wallet,
        seed=1,
        stats=BotStats(),
        behaviour=quiet,
        patience=patience,
    )


async def test_a_refused_deposit_ends_the_bot_at_once() -> None:
    deposit = Unary(None, grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.PERMISSION_DENIED)
    with pytest.raises(BotGaveUp) as caught:
        await bot(Tables([]), Wallet(deposit), patience=60).run()
    assert caught.value.code == grpc.StatusCode.PERMISSION_DENIED
    assert "bot gave up joining: PERMISSION_DENIED" in str(caught.value)
    assert len({r.request_id for r in deposit.requests}) == 1  # one request, tried twice
    assert len(deposit.requests) == 2


async def test_a_wallet_away_past_the_patience_ends_the_bot() -> None:
    deposit = Unary(None, forever=grpc.StatusCode.UNAVAILABLE)
    with pytest.raises(BotGaveUp) as caught:
        await bot(Tables([]), Wallet(deposit), patience=0.3).run()
    assert caught.value.code == grpc.StatusCode.UNAVAILABLE
    assert "of faults" in str(caught.value)
    assert len(deposit.requests) > 1
    assert len({r.request_id for r in deposit.requests}) == 1


async def test_faults_before_the_seat_are_waited_out_with_the_same_request_ids() -> None:
    tables = Tables([Watch(0, grpc.StatusCode.NOT_FOUND)])
    tables.JoinTable.codes = [grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE]
    deposit = Unary(None, grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED)
    with pytest.raises(BotGaveUp):  # the table's refusal to be watched, once seated
        await bot(tables, Wallet(deposit), patience=60).run()
    assert [len(deposit.requests), len({r.request_id for r in deposit.requests})] == [3, 1]
    joins = tables.JoinTable.requests
    assert [len(joins), len({r.request_id for r in joins})] == [3, 1]


async def test_a_broken_watch_is_opened_again_until_one_is_refused() -> None:
    tables = Tables(
        [
            Watch(2, grpc.StatusCode.UNKNOWN),  # views, then broken: a fault whatever the code
            Watch(0, grpc.StatusCode.UNAVAILABLE),  # the service restarting
            Watch(0, grpc.StatusCode.CANCELLED),  # ended by the server, not by us
            Watch(1, grpc.StatusCode.INTERNAL),
            Watch(0, grpc.StatusCode.PERMISSION_DENIED),  # an answer: the bot gives up
        ]
    )
    with pytest.raises(BotGaveUp) as caught:
        await bot(tables, Wallet(Unary(None)), patience=60).run()
    assert caught.value.code == grpc.StatusCode.PERMISSION_DENIED
    assert "watching its table" in str(caught.value)
    assert tables.opened == 5


async def test_a_watch_away_past_the_patience_ends_the_bot() -> None:
    tables = Tables([Watch(0, grpc.StatusCode.UNAVAILABLE) for _ in range(1000)])
    with pytest.raises(BotGaveUp) as caught:
        await bot(tables, Wallet(Unary(None)), patience=0.3).run()
    assert caught.value.code == grpc.StatusCode.UNAVAILABLE
    assert tables.opened > 1


async def test_play_bots_stops_and_says_so_when_every_bot_gave_up() -> None:
    with socket.socket() as sock:  # a port nothing listens on: every call UNAVAILABLE
        sock.bind(("127.0.0.1", 0))
        nowhere = f"127.0.0.1:{sock.getsockname()[1]}"
    told: list[str] = []
    run = await asyncio.wait_for(
        play_bots(
            table_target=nowhere,
            wallet_target=nowhere,
            names=["t1"],
            players=2,
            behaviour=Behaviour(),
            seed=1,
            stop=asyncio.Event(),  # never set: the bots' give-ups end the run
            patience=0.5,
            warn=told.append,
        ),
        timeout=60,  # a liveness guard: it used to wait for ever
    )
    assert len(run.ended()) == 2
    assert all(isinstance(exc, BotGaveUp) for _, exc in run.ended())
    gave_up = sorted(told[:2])
    assert [line.split(" gave up: ")[0] for line in gave_up] == ["bots: bot-t1-1", "bots: bot-t1-2"]
    assert all("joining after" in line and "UNAVAILABLE" in line for line in gave_up)
    assert told[-1] == "bots: every bot gave up (2); stopping"

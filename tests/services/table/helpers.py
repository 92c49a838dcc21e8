"""Shared pieces of the table service tests: a fake wallet and a running in-process service."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from openpoker.api.table.v1 import table_service_pb2 as pb
from openpoker.api.table.v1 import table_service_pb2_grpc as pb_grpc
from openpoker.engine.cards import STANDARD_DECK, Card
from openpoker.eventstore.signing import Signer
from openpoker.services.table.app import TableApp
from openpoker.services.table.handlers import TableServicer
from openpoker.services.table.ownership import Ownership, StaticOwnership
from openpoker.services.table.server import spec
from openpoker.services.table.wallet import Escrow, WalletRefused
from openpoker.shell.client import channel
from openpoker.shell.config import ShellConfig
from openpoker.shell.server import RunningServer, start_server
from openpoker.tablelog.store import MemoryTableEvents, TableStore

DEALER = (("x-caller", "dealer"),)
OPERATOR = (("x-caller", "pokerctl"),)  # tables are created by staff
PARTITIONS = 256  # the table store's partitions in these tests


@dataclass
class FakeWallet:
    """The wallet port in memory: cash and per-table escrow per player, idempotent request ids."""

    cash: dict[str, int] = field(default_factory=dict)
    escrow: dict[tuple[str, str], int] = field(default_factory=dict)
    seen: dict[str, tuple[str, int]] = field(default_factory=dict)
    calls: list[tuple[str, str, str, int]] = field(default_factory=list)
    fail_cash_out: int = 0  # refuse this many cash-outs (wallet away)
    after_hands: dict[str, int] = field(default_factory=dict)  # cash-out request id -> after_hand
    # Escrow totals ever posted in and out, and what a hand holds reserved, by (table, player).
    credited: dict[tuple[str, str], int] = field(default_factory=dict)
    debited: dict[tuple[str, str], int] = field(default_factory=dict)
    reserved: dict[tuple[str, str], int] = field(default_factory=dict)

    async def buy_in(self, *, request_id: str, table_id: str, player: str, amount: int) -> bool:
        self.calls.append(("buy_in", request_id, player, amount))
        if request_id in self.seen:
            return True
        if self.cash.get(player, 0) < amount:
            raise WalletRefused(
                code=grpc.StatusCode.FAILED_PRECONDITION,
                reason="INSUFFICIENT_FUNDS",
                message="not enough cash",
                metadata={"available": str(self.cash.get(player, 0))},
            )
        self.seen[request_id] = ("buy_in", amount)
        self.cash[player] -= amount
        self.escrow[(table_id, player)] = self.escrow.get((table_id, player), 0) + amount
        self.credited[(table_id, player)] = self.credited.get((table_id, player), 0) + amount
        return False

    async def cash_out(
        self, *, request_id: str, table_id: str, player: str, amount: int, after_hand: int = 0
    ) -> None:
        self.calls.append(("cash_out", request_id, player, amount))
        self.after_hands[request_id] = after_hand
        if self.fail_cash_out > 0:
            self.fail_cash_out -= 1
            raise WalletRefused(
                code=grpc.StatusCode.UNAVAILABLE, reason="UNAVAILABLE", message="away", metadata={}
            )
        if request_id in self.seen:
            return
        available = self.escrow.get((table_id, player), 0) - self.reserved.get((table_id, player), 0)
        if available < amount:  # the real wallet never lets an escrow go below zero
            raise WalletRefused(
                code=grpc.StatusCode.FAILED_PRECONDITION,
                reason="INSUFFICIENT_FUNDS",
                message="not enough chips in escrow",
                metadata={"available": str(available)},
            )
        self.seen[request_id] = ("cash_out", amount)
        self.escrow[(table_id, player)] = self.escrow.get((table_id, player), 0) - amount
        self.debited[(table_id, player)] = self.debited.get((table_id, player), 0) + amount
        self.cash[player] = self.cash.get(player, 0) + amount

    async def escrows(self, table_id: str) -> tuple[Escrow, ...]:
        self.calls.append(("escrows", table_id, "", 0))
        return tuple(
            Escrow(
                player=p,
                balance=chips,
                reserved=self.reserved.get((t, p), 0),
                credited=self.credited.get((t, p), 0),
                debited=self.debited.get((t, p), 0),
            )
            for (t, p), chips in sorted(self.escrow.items())
            if t == table_id and (chips or self.reserved.get((t, p), 0))
        )


class SlowWallet(FakeWallet):
    """Moves a buy-in's chips at once but answers only once ``release`` is set: a join or
    top-up held between the wallet's move and the table's append."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.release = asyncio.Event()

    async def buy_in(self, *, request_id: str, table_id: str, player: str, amount: int) -> bool:
        seen = await super().buy_in(request_id=request_id, table_id=table_id, player=player, amount=amount)
        await self.release.wait()
        return seen


@dataclass
class Running:
    server: RunningServer
    app: TableApp
    chan: grpc.aio.Channel
    stub: Any

    async def stop(self) -> None:
        await self.chan.close()
        await self.server.stop(0)
        await self.app.close()


async def serve(
    events: MemoryTableEvents,
    wallet: FakeWallet,
    ownership: Ownership | None = None,
    *,
    reconcile_every: float = 0.0,
    grace: float = 30.0,
    claim: bool = False,
    signer: Signer | None = None,
) -> Running:
    """A table service on a free port over ``events``; ``reconcile_every`` > 0 turns escrow
    reconciliation on (its loop not started), with ``grace`` and ``claim`` as ``TableApp`` takes
    them (the defaults are ``TableApp``'s); ``signer`` signs every envelope."""
    app = TableApp(
        store=TableStore(events, partitions=PARTITIONS, signer=signer),
        ownership=ownership or StaticOwnership(),
        wallet=wallet,
        reconcile_every=reconcile_every,
        reconcile_grace=grace,
        reconcile_claim=claim,
        allowances=events.allowances,  # one site-wide record for every instance over ``events``
    )
    config = ShellConfig.from_env("table", {"POKER_INSECURE": "true", "POKER_TABLE_PORT": "0"})
    server = await start_server(config, [spec(TableServicer(app))])
    chan = channel(server.address)
    return Running(server=server, app=app, chan=chan, stub=pb_grpc.TableServiceStub(chan))


def rid() -> str:
    return str(uuid.uuid4())


def nl_config(seats: int = 6, *, sb: int = 1, bb: int = 2) -> pb.TableConfig:
    return pb.TableConfig(
        game=pb.GAME_TEXAS_HOLDEM,
        structure=pb.STRUCTURE_NO_LIMIT,
        stakes=pb.Stakes(small_blind=sb, big_blind=bb),
        seat_count=seats,
        profile=pb.RULES_PROFILE_SEEDS,
    )


def sealed(deck: Sequence[Card] = STANDARD_DECK) -> bytes:
    return "".join(str(c) for c in deck).encode()


async def create(stub: Any, table_id: str = "t1", config: pb.TableConfig | None = None) -> pb.Table:
    reply = await stub.CreateTable(
        pb.CreateTableRequest(request_id=rid(), table_id=table_id, config=config or nl_config()),
        metadata=OPERATOR,
    )
    table: pb.Table = reply.table
    return table


async def join(stub: Any, player: str, seat: int, buy_in: int = 200, table: str = "tables/t1") -> Any:
    return await stub.JoinTable(
        pb.JoinTableRequest(
            request_id=rid(),
            table=table,
            player_id=player,
            seat=seat,
            buy_in=buy_in,
            post_choice=pb.POST_CHOICE_POST_NOW,
        )
    )


async def start_hand(
    stub: Any, hand_id: str, table: str = "tables/t1", deck: Sequence[Card] = STANDARD_DECK
) -> Any:
    return await stub.StartHand(
        pb.StartHandRequest(
            request_id=rid(), table=table, hand_id=hand_id, deck_commitment="c0ffee", sealed_deck=sealed(deck)
        ),
        metadata=DEALER,
    )


async def act(
    stub: Any,
    player: str,
    action: pb.ActionType.ValueType,
    amount: int = 0,
    table: str = "tables/t1",
    **kw: Any,
) -> Any:
    return await stub.Act(
        pb.ActRequest(
            request_id=kw.pop("request_id", rid()),
            table=table,
            player_id=player,
            action=action,
            amount=amount,
            **kw,
        )
    )


def to_act(t: pb.Table) -> str:
    """The player id whose turn it is."""
    seat = t.current_hand.to_act.seat
    return next(s.player_id for s in t.seats if s.seat == seat)

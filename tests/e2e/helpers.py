"""Small clients for the end-to-end tests (the public gRPC APIs, as any backend would call them)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

import grpc

from openpoker.api.dealer.v1 import dealer_service_pb2 as dpb
from openpoker.api.dealer.v1 import dealer_service_pb2_grpc as dgrpc
from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.table.v1 import table_service_pb2_grpc as tgrpc
from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.api.wallet.v1 import wallet_service_pb2_grpc as wgrpc
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell.client import RichError, channel, rich_error

CALLER = (("x-caller", "pokerctl"),)


def rid() -> str:
    return str(uuid.uuid4())


class Clients:
    def __init__(self, system: LocalSystem) -> None:
        t = system.targets
        self._chans = [channel(t["table"]), channel(t["wallet"]), channel(t["dealer"])]
        self.table: Any = tgrpc.TableServiceStub(self._chans[0])
        self.wallet: Any = wgrpc.WalletServiceStub(self._chans[1])
        self.dealer: Any = dgrpc.DealerServiceStub(self._chans[2])

    async def close(self) -> None:
        for chan in self._chans:
            await chan.close()

    async def __aenter__(self) -> Clients:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def create(self, table_id: str, config: tpb.TableConfig) -> None:
        await self.table.CreateTable(
            tpb.CreateTableRequest(request_id=rid(), table_id=table_id, config=config),
            timeout=5,
            metadata=CALLER,
        )

    async def seat(self, table_id: str, player: str, buy_in: int, deposit: int = 10_000) -> int:
        await self.wallet.Deposit(
            wpb.DepositRequest(request_id=rid(), player=player, amount=deposit), timeout=5, metadata=CALLER
        )
        got = await self.table.JoinTable(
            tpb.JoinTableRequest(
                request_id=rid(),
                table=f"tables/{table_id}",
                player_id=player,
                buy_in=buy_in,
                post_choice=tpb.POST_CHOICE_POST_NOW,
            ),
            timeout=5,
            metadata=CALLER,
        )
        return int(got.seat)

    async def view(self, table_id: str, viewer: str = "") -> tpb.Table:
        got: tpb.GetTableResponse = await self.table.GetTable(
            tpb.GetTableRequest(name=f"tables/{table_id}", viewer_player_id=viewer), timeout=5
        )
        return got.table

    async def wait(
        self, table_id: str, predicate: Callable[[tpb.Table], bool], *, what: str, within: float = 60.0
    ) -> tpb.Table:
        """Poll the table until ``predicate`` holds (a liveness guard, not a timing assertion)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + within
        while True:
            try:
                table = await self.view(table_id)
            except grpc.RpcError as err:
                if err.code() != grpc.StatusCode.UNAVAILABLE or loop.time() > end:
                    raise
                await asyncio.sleep(0.1)
                continue
            if predicate(table):
                return table
            if loop.time() > end:
                raise AssertionError(f"gave up waiting for {what}; table at version {table.version}")
            await asyncio.sleep(0.05)

    async def act(
        self, table_id: str, player: str, hand_id: str, action: int, amount: int = 0, **extra: Any
    ) -> tpb.ActResponse:
        request = tpb.ActRequest(
            request_id=rid(),
            table=f"tables/{table_id}",
            player_id=player,
            hand_id=hand_id,
            action=action,  # type: ignore[arg-type]
            amount=amount,
            **extra,
        )
        for _ in range(100):
            try:
                reply: tpb.ActResponse = await self.table.Act(request, timeout=5)
            except grpc.RpcError as err:
                # A restarted table service owns the table once the old lease expires; the
                # same request id makes the retry safe.
                if err.code() != grpc.StatusCode.UNAVAILABLE:
                    raise
                await asyncio.sleep(0.1)
                continue
            return reply
        raise AssertionError("the table service stayed unavailable")

    async def active_hands(self) -> list[dpb.ActiveHand]:
        got = await self.dealer.ListActiveHands(
            dpb.ListActiveHandsRequest(page_size=500), timeout=5, metadata=CALLER
        )
        return list(got.hands)


async def refused(call: Any) -> RichError:
    try:
        await call
    except grpc.RpcError as err:
        return rich_error(err)
    raise AssertionError("the call was accepted")


def in_hand(table: tpb.Table) -> bool:
    h = table.current_hand
    return h.hand_id != "" and h.outcome == tpb.HAND_OUTCOME_IN_PROGRESS and h.to_act.seat > 0

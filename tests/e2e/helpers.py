"""Small clients for the end-to-end tests (the public gRPC APIs, as any backend would call them).

The system runs secure, as ``pokerctl up`` runs it: a player calls the table's client port with
their own player token (``Clients.player``), staff work (tables, deposits, the dealer's pause and
void) goes to the service ports with ``pokerctl``'s certificate (``staff_*``), and the library
functions of ``pokerctl`` get the same connection (``Clients.conn``)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from typing import Any

import grpc

from openpoker.api.dealer.v1 import dealer_service_pb2 as dpb
from openpoker.api.table.v1 import table_service_pb2 as tpb
from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.pokerctl.connect import Connection
from openpoker.pokerctl.local import LocalSystem
from openpoker.shell.client import RichError, rich_error
from openpoker.shell.tokens import Role
from tests.helpers.secure import Calls, Meta, token


def rid() -> str:
    return str(uuid.uuid4())


class Clients(Calls):
    """``Calls`` of the system plus the moves the tests repeat. Views with no viewer (``view``,
    ``wait``) are staff's on the service port: a spectator's view, and no quota to run into."""

    def __init__(self, system: LocalSystem) -> None:
        super().__init__(system)
        self.system = system
        self.conn = Connection.of_system(system)
        self._tokens: dict[tuple[str, Role], Meta] = {}

    async def __aenter__(self) -> Clients:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def as_(self, subject: str, role: Role) -> Meta:
        """Metadata with a token for ``subject`` in ``role`` (one per subject and role; they last
        an hour, far longer than a test module)."""
        key = (subject, role)
        if key not in self._tokens:
            self._tokens[key] = token(self.system, subject, role)
        return self._tokens[key]

    def player(self, player: str) -> Meta:
        return self.as_(player, Role.PLAYER)

    async def create(self, table_id: str, config: tpb.TableConfig) -> None:
        await self.staff_table.CreateTable(
            tpb.CreateTableRequest(request_id=rid(), table_id=table_id, config=config), timeout=5
        )

    async def deposit(self, player: str, amount: int = 10_000) -> None:
        await self.staff_wallet.Deposit(
            wpb.DepositRequest(request_id=rid(), player=player, amount=amount), timeout=5
        )

    async def seat(self, table_id: str, player: str, buy_in: int, deposit: int = 10_000) -> int:
        """Staff deposits for ``player``, who then sits down with their own token."""
        await self.deposit(player, deposit)
        got = await self.table.JoinTable(
            tpb.JoinTableRequest(
                request_id=rid(),
                table=f"tables/{table_id}",
                player_id=player,
                buy_in=buy_in,
                post_choice=tpb.POST_CHOICE_POST_NOW,
            ),
            timeout=5,
            metadata=self.player(player),
        )
        return int(got.seat)

    async def view(self, table_id: str, viewer: str = "") -> tpb.Table:
        """The table as ``viewer`` sees it (their token on the client port), else as staff."""
        request = tpb.GetTableRequest(name=f"tables/{table_id}", viewer_player_id=viewer)
        if viewer:
            got: tpb.GetTableResponse = await self.table.GetTable(
                request, timeout=5, metadata=self.player(viewer)
            )
        else:
            got = await self.staff_table.GetTable(request, timeout=5)
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
        """``player`` acts with their own token."""
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
                reply: tpb.ActResponse = await self.table.Act(
                    request, timeout=5, metadata=self.player(player)
                )
            except grpc.RpcError as err:
                # A restarted table service owns the table once the old lease expires; the
                # same request id makes the retry safe.
                if err.code() != grpc.StatusCode.UNAVAILABLE:
                    raise
                await asyncio.sleep(0.1)
                continue
            return reply
        raise AssertionError("the table service stayed unavailable")

    async def leave(self, table_id: str, player: str) -> None:
        await self.table.LeaveTable(
            tpb.LeaveTableRequest(request_id=rid(), table=f"tables/{table_id}", player_id=player),
            timeout=5,
            metadata=self.player(player),
        )

    async def pause(self, table_id: str) -> None:
        await self.staff_dealer.PauseTable(
            dpb.PauseTableRequest(request_id=rid(), table=f"tables/{table_id}"), timeout=5
        )

    async def resume(self, table_id: str) -> None:
        await self.staff_dealer.ResumeTable(
            dpb.ResumeTableRequest(request_id=rid(), table=f"tables/{table_id}"), timeout=5
        )

    async def void(self, table_id: str, hand_id: str, reason: str = "e2e") -> dpb.VoidHandResponse:
        got: dpb.VoidHandResponse = await self.staff_dealer.VoidHand(
            dpb.VoidHandRequest(request_id=rid(), name=f"tables/{table_id}/hands/{hand_id}", reason=reason),
            timeout=10,
        )
        return got

    async def history(self, table_id: str, hand_id: str) -> tpb.GetHandHistoryResponse:
        """The full record of a finished hand (every card, the envelopes), as an auditor."""
        got: tpb.GetHandHistoryResponse = await self.table.GetHandHistory(
            tpb.GetHandHistoryRequest(name=f"tables/{table_id}/hands/{hand_id}"),
            timeout=10,
            metadata=self.as_("e2e-auditor", Role.AUDITOR),
        )
        return got

    async def active_hands(self) -> list[dpb.ActiveHand]:
        got = await self.staff_dealer.ListActiveHands(dpb.ListActiveHandsRequest(page_size=500), timeout=5)
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

"""The wallet as the table service sees it: buy-ins (cash -> escrow) and cash-outs (escrow -> cash).

``Wallet`` is the port; ``GrpcWallet`` calls ``poker.wallet.v1.WalletService`` as caller
``table``. Both calls are idempotent by request id on the wallet's side, which is what makes the
join/top-up/leave flows safe to retry (see ``services.table.money``). Errors from the wallet come
back as ``WalletRefused`` with the wallet's own code, reason and metadata, so the client sees why
(e.g. INSUFFICIENT_FUNDS).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import grpc

from openpoker.api.wallet.v1 import wallet_service_pb2 as wpb
from openpoker.api.wallet.v1 import wallet_service_pb2_grpc as wpb_grpc
from openpoker.shell.client import rich_error
from openpoker.shell.errors import CODE_KINDS, ServiceError

CALLER = (("x-caller", "table"),)


class WalletRefused(ServiceError):
    """The wallet said no (or could not be reached); carries the wallet's own status."""

    def __init__(self, *, code: grpc.StatusCode, reason: str, message: str, metadata: dict[str, str]) -> None:
        super().__init__(f"wallet: {message}", **metadata)
        self.code = code
        # Relayed, not declared: the wallet's reason and code pass through per instance.
        self.reason = reason or "WALLET_ERROR"  # type: ignore[misc]
        self.kind = CODE_KINDS.get(code, "unknown")  # type: ignore[misc]


@dataclass(frozen=True, slots=True, kw_only=True)
class Escrow:
    """One player's escrow account at a table as the wallet reports it (``ListTableEscrows``)."""

    player: str
    balance: int  # posted chips the player holds there
    reserved: int  # of which a hand has reserved (pending debits)
    credited: int  # every chip ever posted in (only grows)
    debited: int  # every chip ever posted out (only grows)


class Wallet(Protocol):
    async def buy_in(self, *, request_id: str, table_id: str, player: str, amount: int) -> bool:
        """Move ``amount`` from the player's cash to their escrow at the table; True when the
        request id had been seen before (nothing moved this time)."""
        ...

    async def cash_out(
        self, *, request_id: str, table_id: str, player: str, amount: int, after_hand: int = 0
    ) -> None:
        """Move ``amount`` back to the player's cash once the wallet has settled or voided hand
        ``after_hand`` of the table (0: no hand to wait for)."""
        ...

    async def escrows(self, table_id: str) -> tuple[Escrow, ...]:
        """The escrows at the table holding chips (posted or reserved), by player."""
        ...


class GrpcWallet:
    def __init__(self, channel: grpc.aio.Channel, *, timeout: float = 5.0) -> None:
        self._stub: Any = wpb_grpc.WalletServiceStub(channel)
        self._timeout = timeout

    async def _reply(self, method: Any, request: Any) -> Any:
        try:
            return await method(request, metadata=CALLER, timeout=self._timeout)
        except grpc.RpcError as err:
            rich = rich_error(err)
            raise WalletRefused(
                code=rich.code, reason=rich.reason, message=rich.message, metadata=dict(rich.metadata)
            ) from None

    async def _call(self, method: Any, request: Any) -> bool:
        return bool((await self._reply(method, request)).duplicate)

    async def buy_in(self, *, request_id: str, table_id: str, player: str, amount: int) -> bool:
        return await self._call(
            self._stub.BuyIn,
            wpb.BuyInRequest(request_id=request_id, table_id=table_id, player=player, amount=amount),
        )

    async def cash_out(
        self, *, request_id: str, table_id: str, player: str, amount: int, after_hand: int = 0
    ) -> None:
        await self._call(
            self._stub.CashOut,
            wpb.CashOutRequest(
                request_id=request_id, table_id=table_id, player=player, amount=amount, after_hand=after_hand
            ),
        )

    async def escrows(self, table_id: str) -> tuple[Escrow, ...]:
        reply = await self._reply(self._stub.ListTableEscrows, wpb.ListTableEscrowsRequest(table_id=table_id))
        return tuple(
            Escrow(
                player=e.player,
                balance=e.balance.balance,
                reserved=e.balance.debits_pending,
                credited=e.balance.credits_posted,
                debited=e.balance.debits_posted,
            )
            for e in reply.escrows
        )

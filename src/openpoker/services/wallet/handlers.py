"""gRPC handlers: caller check, protobuf -> command -> app -> protobuf. Nothing else happens here.

Caller identity is the ``x-caller`` metadata (interim; see the proto's service comment): deny
by default, one allow-list per method.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from grpc import aio

from openpoker.api.wallet.v1 import wallet_service_pb2 as pb
from openpoker.api.wallet.v1 import wallet_service_pb2_grpc as pb_grpc
from openpoker.ledger import accounts
from openpoker.services.wallet import mapping
from openpoker.services.wallet.app import WalletApp
from openpoker.shell import paging
from openpoker.shell.callers import ANYONE, authorize, caller_of
from openpoker.shell.logs import bind

_HANDS = frozenset({"dealer", "table"})
_SEATS = frozenset({"table", "dealer", "lobby", "pokerctl"})
_CASHIER = frozenset({"cashier", "lobby", "pokerctl"})
ALLOWED_CALLERS: Mapping[str, frozenset[str]] = {
    "Deposit": _CASHIER,
    "Withdraw": _CASHIER,
    "GetBalance": frozenset({ANYONE}),
    "ListTransfers": frozenset({ANYONE}),
    "BuyIn": _SEATS,
    "CashOut": _SEATS,
    "OpenHand": _HANDS,
    "SettleHand": _HANDS,
    "VoidHand": _HANDS,
    # Read-only, but it lists who sits with money where: the table service (reconciliation)
    # and the operator's tool.
    "ListTableEscrows": frozenset({"table", "pokerctl"}),
}

Context = aio.ServicerContext[Any, Any]


class WalletServicer(pb_grpc.WalletServiceServicer):
    def __init__(self, app: WalletApp) -> None:
        self._app = app

    def _enter(self, method: str, context: Context, **ids: str | int) -> None:
        caller = caller_of(context)
        bind(caller=caller or "-", **ids)
        authorize(ALLOWED_CALLERS, method, caller)

    async def Deposit(self, request: pb.DepositRequest, context: Context) -> pb.DepositResponse:
        self._enter("Deposit", context, player=request.player)
        self._app.check_currency(request.currency)
        outcome = await self._app.execute(mapping.deposit(request))
        account, cash = self._app.balance(accounts.cash(request.player))
        return pb.DepositResponse(
            transfers=mapping.transfers_to_proto(outcome.transfers),
            duplicate=outcome.duplicate,
            cash=mapping.balance_to_proto(account, cash),
            currency=self._app.currency,
        )

    async def Withdraw(self, request: pb.WithdrawRequest, context: Context) -> pb.WithdrawResponse:
        self._enter("Withdraw", context, player=request.player)
        self._app.check_currency(request.currency)
        outcome = await self._app.execute(mapping.withdraw(request))
        account, cash = self._app.balance(accounts.cash(request.player))
        return pb.WithdrawResponse(
            transfers=mapping.transfers_to_proto(outcome.transfers),
            duplicate=outcome.duplicate,
            cash=mapping.balance_to_proto(account, cash),
            currency=self._app.currency,
        )

    async def GetBalance(self, request: pb.GetBalanceRequest, context: Context) -> pb.GetBalanceResponse:
        self._enter("GetBalance", context)
        account, balance = self._app.balance(request.account)
        return pb.GetBalanceResponse(
            balance=mapping.balance_to_proto(account, balance), currency=self._app.currency
        )

    async def ListTransfers(
        self, request: pb.ListTransfersRequest, context: Context
    ) -> pb.ListTransfersResponse:
        self._enter("ListTransfers", context)
        size = paging.page_size(request.page_size)
        offset = paging.page_offset(request.page_token, a=request.account)
        page, following = self._app.transfers_of(request.account, offset=offset, limit=size)
        return pb.ListTransfersResponse(
            transfers=mapping.transfers_to_proto(page),
            next_page_token="" if following is None else paging.page_token(following, a=request.account),
            currency=self._app.currency,
        )

    def _seat(self, player: str, table_id: str) -> tuple[pb.Balance, pb.Balance]:
        cash = mapping.balance_to_proto(*self._app.balance(accounts.cash(player)))
        seat = mapping.balance_to_proto(*self._app.balance(accounts.escrow(table_id, player)))
        return cash, seat

    async def BuyIn(self, request: pb.BuyInRequest, context: Context) -> pb.BuyInResponse:
        self._enter("BuyIn", context, table_id=request.table_id, player=request.player)
        outcome = await self._app.execute(mapping.buy_in(request))
        cash, seat = self._seat(request.player, request.table_id)
        return pb.BuyInResponse(
            transfers=mapping.transfers_to_proto(outcome.transfers),
            duplicate=outcome.duplicate,
            cash=cash,
            escrow=seat,
        )

    async def CashOut(self, request: pb.CashOutRequest, context: Context) -> pb.CashOutResponse:
        self._enter("CashOut", context, table_id=request.table_id, player=request.player)
        outcome = await self._app.execute(mapping.cash_out(request))
        cash, seat = self._seat(request.player, request.table_id)
        return pb.CashOutResponse(
            transfers=mapping.transfers_to_proto(outcome.transfers),
            duplicate=outcome.duplicate,
            cash=cash,
            escrow=seat,
        )

    async def OpenHand(self, request: pb.OpenHandRequest, context: Context) -> pb.OpenHandResponse:
        self._enter("OpenHand", context, table_id=request.table_id, hand_number=request.hand_number)
        outcome = await self._app.execute(mapping.open_hand(request))
        return pb.OpenHandResponse(
            transfers=mapping.transfers_to_proto(outcome.transfers), duplicate=outcome.duplicate
        )

    async def SettleHand(self, request: pb.SettleHandRequest, context: Context) -> pb.SettleHandResponse:
        self._enter("SettleHand", context, table_id=request.table_id, hand_number=request.hand_number)
        outcome = await self._app.execute(mapping.settle_hand(request))
        hand = self._app.state.hand(request.table_id, request.hand_number)
        return pb.SettleHandResponse(
            transfers=mapping.transfers_to_proto(outcome.transfers),
            duplicate=outcome.duplicate,
            pot=hand.pot,
            rake=hand.rake,
        )

    async def VoidHand(self, request: pb.VoidHandRequest, context: Context) -> pb.VoidHandResponse:
        self._enter("VoidHand", context, table_id=request.table_id, hand_number=request.hand_number)
        outcome = await self._app.execute(mapping.void_hand(request))
        return pb.VoidHandResponse(
            transfers=mapping.transfers_to_proto(outcome.transfers), duplicate=outcome.duplicate
        )

    async def ListTableEscrows(
        self, request: pb.ListTableEscrowsRequest, context: Context
    ) -> pb.ListTableEscrowsResponse:
        self._enter("ListTableEscrows", context, table_id=request.table_id)
        return pb.ListTableEscrowsResponse(
            escrows=mapping.table_escrows_to_proto(request.table_id, self._app.escrows_of(request.table_id)),
            currency=self._app.currency,
        )

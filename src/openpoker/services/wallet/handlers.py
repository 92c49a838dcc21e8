"""gRPC handlers: caller check, protobuf -> command -> app -> protobuf. Nothing else happens here.

The caller is named by ``shell.callers.caller_of`` (a service's certificate, ``pokerctl``'s staff
certificate, or a token's role; the ``x-caller`` header on a plaintext test rig only): deny by
default, one allow-list per method. Money moves on a seat only from the table service (BuyIn,
CashOut) and on a hand only from the dealer or the table; money in and out of the system only
from a cashier, an operator or pokerctl, under the deposit and withdrawal limits
(``openpoker.ledger.limits``). A player token reads only its own accounts (``cash/<player>``,
``escrow/<table>/<player>``).
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
from openpoker.shell.callers import authorize, caller_of, player_of
from openpoker.shell.identity import NotYourSeat
from openpoker.shell.logs import bind

PLAYER = "player"
_HANDS = frozenset({"dealer", "table"})
# pokerctl itself never buys in or cashes out (its bots join tables through the table service).
_SEATS = frozenset({"table"})
_CASHIER = frozenset({"cashier", "operator", "pokerctl"})
# A player reads their own accounts only (``_own_account``); staff and services any account.
_READERS = frozenset({PLAYER, "cashier", "auditor", "operator", "pokerctl", "table", "dealer"})
ALLOWED_CALLERS: Mapping[str, frozenset[str]] = {
    "Deposit": _CASHIER,
    "Withdraw": _CASHIER,
    "GetBalance": _READERS,
    "ListTransfers": _READERS,
    "BuyIn": _SEATS,
    "CashOut": _SEATS,
    "OpenHand": _HANDS,
    "SettleHand": _HANDS,
    "VoidHand": _HANDS,
    # Read-only, but it lists who sits with money where: the table service (reconciliation),
    # the operator's tool and staff.
    "ListTableEscrows": frozenset({"table", "pokerctl", "operator", "auditor"}),
}

Context = aio.ServicerContext[Any, Any]


def _owner(account: str) -> str:
    """The player who owns ``cash/<player>`` or ``escrow/<table>/<player>``; "" for any other."""
    parts = account.split("/")
    if len(parts) == 2 and parts[0] == accounts.AccountKind.CASH:
        return parts[1]
    if len(parts) == 3 and parts[0] == accounts.AccountKind.ESCROW:
        return parts[2]
    return ""


def _own_account(context: Context, account: str) -> None:
    """A player-role caller reads only their own accounts (PERMISSION_DENIED NOT_YOUR_SEAT)."""
    me = player_of(context, "", required=True)  # the token's subject (x-player-id on plaintext)
    if not me or _owner(account) != me:
        raise NotYourSeat(player=_owner(account) or account)


class WalletServicer(pb_grpc.WalletServiceServicer):
    def __init__(self, app: WalletApp) -> None:
        self._app = app

    def _enter(self, method: str, context: Context, **ids: str | int) -> str:
        caller = caller_of(context)
        bind(caller=caller or "-", **ids)
        authorize(ALLOWED_CALLERS, method, caller)
        return caller

    def _read(self, method: str, context: Context, account: str) -> None:
        caller = self._enter(method, context)
        accounts.check_account(account)  # an oversized name is INVALID_ARGUMENT, never echoed
        if caller == PLAYER:
            _own_account(context, account)

    async def Deposit(self, request: pb.DepositRequest, context: Context) -> pb.DepositResponse:
        self._enter("Deposit", context, player=request.player)
        self._app.check_currency(request.currency)
        command = mapping.deposit(request, at=self._app.now(), limits=self._app.deposit_limits)
        outcome = await self._app.execute(command)
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
        command = mapping.withdraw(request, at=self._app.now(), limits=self._app.withdrawal_limits)
        outcome = await self._app.execute(command)
        account, cash = self._app.balance(accounts.cash(request.player))
        return pb.WithdrawResponse(
            transfers=mapping.transfers_to_proto(outcome.transfers),
            duplicate=outcome.duplicate,
            cash=mapping.balance_to_proto(account, cash),
            currency=self._app.currency,
        )

    async def GetBalance(self, request: pb.GetBalanceRequest, context: Context) -> pb.GetBalanceResponse:
        self._read("GetBalance", context, request.account)
        account, balance = self._app.balance(request.account)
        return pb.GetBalanceResponse(
            balance=mapping.balance_to_proto(account, balance), currency=self._app.currency
        )

    async def ListTransfers(
        self, request: pb.ListTransfersRequest, context: Context
    ) -> pb.ListTransfersResponse:
        self._read("ListTransfers", context, request.account)
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

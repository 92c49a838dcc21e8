"""Pure converters between ``poker.wallet.v1`` messages and the ledger's values."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from openpoker.api.wallet.v1 import wallet_service_pb2 as pb
from openpoker.engine.rules import RakeRules
from openpoker.ledger.accounts import Balances, escrow
from openpoker.ledger.commands import (
    BuyIn,
    CashOut,
    Deposit,
    OpenHand,
    PlayerAmount,
    SettleHand,
    VoidHand,
    Withdraw,
)
from openpoker.ledger.limits import DepositLimits, WithdrawalLimits
from openpoker.ledger.transfers import Phase, TransferCode, TransferRecord
from openpoker.services.wallet.errors import InvalidRakeRules

_PHASES: dict[Phase, pb.TransferPhase.ValueType] = {
    Phase.SINGLE: pb.TRANSFER_PHASE_SINGLE,
    Phase.PENDING: pb.TRANSFER_PHASE_PENDING,
    Phase.POST: pb.TRANSFER_PHASE_POST,
    Phase.VOID: pb.TRANSFER_PHASE_VOID,
}
_CODES: dict[TransferCode, pb.TransferCode.ValueType] = {
    TransferCode.DEPOSIT: pb.TRANSFER_CODE_DEPOSIT,
    TransferCode.WITHDRAWAL: pb.TRANSFER_CODE_WITHDRAWAL,
    TransferCode.BUY_IN: pb.TRANSFER_CODE_BUY_IN,
    TransferCode.CASH_OUT: pb.TRANSFER_CODE_CASH_OUT,
    TransferCode.HAND_RESERVE: pb.TRANSFER_CODE_HAND_RESERVE,
    TransferCode.HAND_CONTRIBUTION: pb.TRANSFER_CODE_HAND_CONTRIBUTION,
    TransferCode.HAND_RELEASE: pb.TRANSFER_CODE_HAND_RELEASE,
    TransferCode.HAND_PAYOUT: pb.TRANSFER_CODE_HAND_PAYOUT,
    TransferCode.HAND_RAKE: pb.TRANSFER_CODE_HAND_RAKE,
}


def transfer_to_proto(r: TransferRecord) -> pb.Transfer:
    return pb.Transfer(
        id=r.id,
        phase=_PHASES[r.phase],
        code=_CODES[r.code],
        debit_account=r.debit,
        credit_account=r.credit,
        amount=r.amount,
        pending_id=r.pending_id,
        released=r.released,
    )


def transfers_to_proto(records: tuple[TransferRecord, ...] | list[TransferRecord]) -> list[pb.Transfer]:
    return [transfer_to_proto(r) for r in records]


def balance_to_proto(account: str, b: Balances) -> pb.Balance:
    return pb.Balance(
        account=account,
        balance=b.balance,
        available=b.available,
        debits_pending=b.debits_pending,
        debits_posted=b.debits_posted,
        credits_pending=b.credits_pending,
        credits_posted=b.credits_posted,
    )


def table_escrows_to_proto(table_id: str, escrows: Iterable[tuple[str, Balances]]) -> list[pb.TableEscrow]:
    return [
        pb.TableEscrow(player=player, balance=balance_to_proto(escrow(table_id, player), b))
        for player, b in escrows
    ]


def _amounts(items: Iterable[pb.PlayerAmount]) -> tuple[PlayerAmount, ...]:
    return tuple(PlayerAmount(player=i.player, amount=i.amount) for i in items)


def rake_to_proto(rules: RakeRules) -> pb.RakeRules:
    """The table's rake rules as OpenHand wants them (for the dealer)."""
    return pb.RakeRules(
        basis_points=rules.basis_points,
        caps=[pb.RakeCap(min_players_dealt_in=n, cap=c) for n, c in rules.caps],
        no_flop_no_drop=rules.no_flop_no_drop,
        unit=rules.unit,
    )


def rake_from_proto(m: pb.RakeRules) -> RakeRules:
    if not 0 <= m.basis_points <= 750:
        raise InvalidRakeRules(problem=f"basis_points {m.basis_points} not in 0..750 (seed 002)")
    caps = []
    for c in m.caps:
        if c.min_players_dealt_in < 2 or c.cap < 0:
            raise InvalidRakeRules(problem="each cap needs min_players_dealt_in >= 2 and cap >= 0")
        caps.append((c.min_players_dealt_in, c.cap))
    if len({n for n, _ in caps}) != len(caps):
        raise InvalidRakeRules(problem="two caps for the same number of players")
    if m.unit < 0:
        raise InvalidRakeRules(problem=f"unit {m.unit} is negative")
    return RakeRules(
        basis_points=m.basis_points,
        caps=tuple(sorted(caps)),
        no_flop_no_drop=m.no_flop_no_drop,
        unit=m.unit or 1,
    )


def deposit(m: pb.DepositRequest, *, at: dt.datetime, limits: DepositLimits) -> Deposit:
    return Deposit(request_id=m.request_id, player=m.player, amount=m.amount, at=at, limits=limits)


def withdraw(m: pb.WithdrawRequest, *, at: dt.datetime, limits: WithdrawalLimits) -> Withdraw:
    return Withdraw(request_id=m.request_id, player=m.player, amount=m.amount, at=at, limits=limits)


def buy_in(m: pb.BuyInRequest) -> BuyIn:
    return BuyIn(request_id=m.request_id, table_id=m.table_id, player=m.player, amount=m.amount)


def cash_out(m: pb.CashOutRequest) -> CashOut:
    return CashOut(
        request_id=m.request_id,
        table_id=m.table_id,
        player=m.player,
        amount=m.amount if m.amount else None,
        after_hand=m.after_hand,
    )


def open_hand(m: pb.OpenHandRequest) -> OpenHand:
    return OpenHand(
        request_id=m.request_id,
        table_id=m.table_id,
        hand_no=m.hand_number,
        stacks=_amounts(m.stacks),
        rake=rake_from_proto(m.rake),
    )


def settle_hand(m: pb.SettleHandRequest) -> SettleHand:
    return SettleHand(
        request_id=m.request_id,
        table_id=m.table_id,
        hand_no=m.hand_number,
        contributions=_amounts(m.contributions),
        payouts=_amounts(m.payouts),
        rake=m.rake,
        saw_flop=m.saw_flop,
    )


def void_hand(m: pb.VoidHandRequest) -> VoidHand:
    return VoidHand(request_id=m.request_id, table_id=m.table_id, hand_no=m.hand_number)

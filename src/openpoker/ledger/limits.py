"""Limits on money crossing the ledger's edge with the outside world, decided from its state.

A cashier's deposit is refused when it is larger than ``max_deposit`` (DEPOSIT_OVER_LIMIT), when
with what the same cash account already received on the same UTC day it would pass
``daily_deposit`` (DAILY_LIMIT_REACHED), or when it would lift the cash account's balance above
``max_balance`` (BALANCE_CEILING), a ceiling far below int64 so no total can ever overflow.

A withdrawal is refused when it is larger than ``max_withdrawal`` (WITHDRAWAL_OVER_LIMIT), or
when with what the same cash account already paid out on the same UTC day it would pass
``daily_withdrawal`` (DAILY_WITHDRAWAL_LIMIT_REACHED).

The day is data: the command carries the time it was asked at (the wallet's clock), the decider
turns it into a UTC date and records it in the ``TransfersCommitted`` event, and the fold keeps
each cash account's deposits and withdrawals of its latest day (``LedgerState.deposit_days``,
``LedgerState.withdrawal_days``). So the daily totals are rebuilt from the log after a restart
and no clock is read here. ``None`` = no such limit.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from openpoker.ledger.accounts import Balances
from openpoker.ledger.errors import (
    BalanceCeiling,
    DailyLimitReached,
    DailyWithdrawalLimitReached,
    DepositOverLimit,
    WithdrawalOverLimit,
)

# cash account -> (UTC day, total of that day): the account's latest dated movements of one kind
DayTotals = dict[str, tuple[str, int]]


@dataclass(frozen=True, slots=True, kw_only=True)
class DepositLimits:
    max_deposit: int | None = None
    daily_deposit: int | None = None
    max_balance: int | None = None


NO_LIMITS = DepositLimits()


@dataclass(frozen=True, slots=True, kw_only=True)
class WithdrawalLimits:
    max_withdrawal: int | None = None
    daily_withdrawal: int | None = None


NO_WITHDRAWAL_LIMITS = WithdrawalLimits()


def day_of(at: dt.datetime) -> str:
    """The UTC calendar day of an aware timestamp, ``YYYY-MM-DD`` (persisted in events)."""
    if at.tzinfo is None:
        raise ValueError("deposit and withdrawal times must be timezone-aware")
    return at.astimezone(dt.UTC).date().isoformat()


def total_on(days: DayTotals, account: str, day: str) -> int:
    """What ``account`` moved on ``day``: the recorded day's total if it is that day or a later
    one (a clock that stepped back counts against the later day), else 0."""
    recorded = days.get(account)
    if recorded is None or (day and recorded[0] < day):
        return 0
    return recorded[1]


def record_on(days: DayTotals, account: str, day: str, amount: int) -> None:
    """Fold one dated movement into the per-account daily totals (evolve only)."""
    recorded = days.get(account)
    if recorded is None or recorded[0] < day:
        days[account] = (day, amount)
    else:
        days[account] = (recorded[0], recorded[1] + amount)


def check_deposit(
    limits: DepositLimits,
    *,
    account: str,
    balance: Balances,
    amount: int,
    deposited_today: int,
) -> None:
    """Raise the first limit a deposit of ``amount`` into ``account`` would break."""
    if limits.max_deposit is not None and amount > limits.max_deposit:
        raise DepositOverLimit(account=account, amount=amount, limit=limits.max_deposit)
    if limits.daily_deposit is not None and deposited_today + amount > limits.daily_deposit:
        raise DailyLimitReached(
            account=account, amount=amount, deposited=deposited_today, limit=limits.daily_deposit
        )
    if limits.max_balance is not None and balance.balance + amount > limits.max_balance:
        raise BalanceCeiling(
            account=account, amount=amount, balance=balance.balance, limit=limits.max_balance
        )


def check_withdrawal(limits: WithdrawalLimits, *, account: str, amount: int, withdrawn_today: int) -> None:
    """Raise the first limit a withdrawal of ``amount`` from ``account`` would break."""
    if limits.max_withdrawal is not None and amount > limits.max_withdrawal:
        raise WithdrawalOverLimit(account=account, amount=amount, limit=limits.max_withdrawal)
    if limits.daily_withdrawal is not None and withdrawn_today + amount > limits.daily_withdrawal:
        raise DailyWithdrawalLimitReached(
            account=account, amount=amount, withdrawn=withdrawn_today, limit=limits.daily_withdrawal
        )

"""Limits on money coming in from the outside world (deposits), decided from the ledger's state.

A cashier's deposit is refused when it is larger than ``max_deposit`` (DEPOSIT_OVER_LIMIT), when
with what the same cash account already received on the same UTC day it would pass
``daily_deposit`` (DAILY_LIMIT_REACHED), or when it would lift the cash account's balance above
``max_balance`` (BALANCE_CEILING), a ceiling far below int64 so no total can ever overflow.

The day is data: the command carries the time it was asked at (the wallet's clock), the decider
turns it into a UTC date and records it in the ``TransfersCommitted`` event, and the fold keeps
each cash account's deposits of its latest day (``LedgerState.deposit_days``). So the daily total
is rebuilt from the log after a restart and no clock is read here. ``None`` = no such limit.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from openpoker.ledger.accounts import Balances
from openpoker.ledger.errors import BalanceCeiling, DailyLimitReached, DepositOverLimit


@dataclass(frozen=True, slots=True, kw_only=True)
class DepositLimits:
    max_deposit: int | None = None
    daily_deposit: int | None = None
    max_balance: int | None = None


NO_LIMITS = DepositLimits()


def day_of(at: dt.datetime) -> str:
    """The UTC calendar day of an aware timestamp, ``YYYY-MM-DD`` (persisted in events)."""
    if at.tzinfo is None:
        raise ValueError("deposit time must be timezone-aware")
    return at.astimezone(dt.UTC).date().isoformat()


def deposited_on(deposit_days: dict[str, tuple[str, int]], account: str, day: str) -> int:
    """What ``account`` received by deposit on ``day``: the recorded day's total if it is that
    day or a later one (a clock that stepped back counts against the later day), else 0."""
    recorded = deposit_days.get(account)
    if recorded is None or (day and recorded[0] < day):
        return 0
    return recorded[1]


def record_deposit(deposit_days: dict[str, tuple[str, int]], account: str, day: str, amount: int) -> None:
    """Fold one dated deposit into the per-account daily totals (evolve only)."""
    recorded = deposit_days.get(account)
    if recorded is None or recorded[0] < day:
        deposit_days[account] = (day, amount)
    else:
        deposit_days[account] = (recorded[0], recorded[1] + amount)


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

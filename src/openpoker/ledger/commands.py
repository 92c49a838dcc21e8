"""What callers ask the wallet to do (imperative names; frozen keyword-only records).

Every mutating command carries the caller's ``request_id``. Money off the tables (deposit,
withdraw, buy-in, cash-out) is keyed by it: the transfer id is ``<step>/<request_id>``, so a
retry with the same request id and fields is a no-op answering the first result, and the same
request id with other fields is refused (``TRANSFER_ID_REUSED``). Hand steps are keyed by what
the table persisted (table id, hand number, step, player), so a table replaying its log after a
crash regenerates the very same transfers whatever request id it uses.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from openpoker.engine.rules import RakeRules
from openpoker.ledger.limits import NO_LIMITS, NO_WITHDRAWAL_LIMITS, DepositLimits, WithdrawalLimits


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerAmount:
    player: str
    amount: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Deposit:
    """Money in from the outside world, under ``limits`` (``ledger.limits``); ``at`` is when it
    was asked (aware; its UTC day counts toward the daily limit), required with a daily limit."""

    request_id: str
    player: str
    amount: int
    at: dt.datetime | None = None
    limits: DepositLimits = NO_LIMITS


@dataclass(frozen=True, slots=True, kw_only=True)
class Withdraw:
    """Money out to the outside world, under ``limits`` (``ledger.limits``); ``at`` is when it
    was asked (aware; its UTC day counts toward the daily limit), required with a daily limit."""

    request_id: str
    player: str
    amount: int
    at: dt.datetime | None = None
    limits: WithdrawalLimits = NO_WITHDRAWAL_LIMITS


@dataclass(frozen=True, slots=True, kw_only=True)
class BuyIn:
    """Cash to the player's escrow at a table (between hands only: table stakes)."""

    request_id: str
    table_id: str
    player: str
    amount: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CashOut:
    """Escrow back to cash; ``amount=None`` takes everything at the table. ``after_hand`` (> 0):
    the table's hand the amount comes out of; refused until that hand is settled or voided."""

    request_id: str
    table_id: str
    player: str
    amount: int | None = None
    after_hand: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenHand:
    """Reserve the stacks of the players dealt in (pending escrow -> pot), under the table's rake."""

    request_id: str
    table_id: str
    hand_no: int
    stacks: tuple[PlayerAmount, ...]
    rake: RakeRules


@dataclass(frozen=True, slots=True, kw_only=True)
class SettleHand:
    """Close a hand: what each player put in, what each won (net of rake), and the rake.

    ``contributions`` are after uncalled bets were returned; a player dealt in but absent put
    in nothing. ``payouts`` sum the player's shares of every pot.
    """

    request_id: str
    table_id: str
    hand_no: int
    contributions: tuple[PlayerAmount, ...]
    payouts: tuple[PlayerAmount, ...]
    rake: int
    saw_flop: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class VoidHand:
    """Cancel a hand that cannot resume: every reservation returns, nothing else moves."""

    request_id: str
    table_id: str
    hand_no: int


Command = Deposit | Withdraw | BuyIn | CashOut | OpenHand | SettleHand | VoidHand

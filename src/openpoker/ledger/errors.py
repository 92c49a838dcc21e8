"""The ledger's exception tree, a branch of the project's one base (``openpoker.errors``).

Each error has a stable ``reason`` (the ``google.rpc.ErrorInfo`` reason), a ``kind`` picking the
gRPC status (``invalid``, ``precondition``, ``not_found``, ``conflict``, ``exists``), and the
numbers behind it as fields, so no caller parses a message.

A refused command changes nothing and writes nothing to the log: retrying it later is judged
again against the state of that moment (a refused buy-in may succeed after a deposit).
"""

from __future__ import annotations

from typing import ClassVar

from openpoker.errors import ErrorKind, OpenPokerError, shown


class LedgerError(OpenPokerError):
    reason = "LEDGER_ERROR"
    kind: ClassVar[ErrorKind] = "invalid"


class InvalidAmount(LedgerError):
    """Zero, negative, or beyond what an int64 can hold."""

    reason = "INVALID_AMOUNT"

    def __init__(self, *, field: str, amount: int, problem: str) -> None:
        super().__init__(f"invalid amount {field}={amount}: {problem}", field=field, amount=amount)
        self.field = field
        self.amount = amount
        self.problem = problem


class InvalidIdentifier(LedgerError):
    reason = "INVALID_IDENTIFIER"

    def __init__(self, *, field: str, value: str) -> None:
        super().__init__(
            f"invalid {field} {shown(value)}: "
            "1-128 characters of A-Z a-z 0-9 . _ : @ -, starting alphanumeric",
            field=field,
            value=shown(value),
        )
        self.field = field
        self.value = value


class CurrencyMismatch(LedgerError):
    reason = "CURRENCY_MISMATCH"

    def __init__(self, *, expected: str, got: str) -> None:
        super().__init__(f"this ledger holds {expected}, not {got}", expected=expected, got=got)
        self.expected = expected
        self.got = got


class InsufficientFunds(LedgerError):
    """An overdraft: the debit would take the account below zero (pending debits included)."""

    reason = "INSUFFICIENT_FUNDS"
    kind = "precondition"

    def __init__(self, *, account: str, available: int, amount: int) -> None:
        super().__init__(
            f"{account} has {available} available, {amount} asked",
            account=account,
            available=available,
            amount=amount,
        )
        self.account = account
        self.available = available
        self.amount = amount


class BalanceOverflow(LedgerError):
    reason = "BALANCE_OVERFLOW"
    kind = "precondition"

    def __init__(self, *, account: str, amount: int) -> None:
        super().__init__(f"crediting {amount} would overflow int64 totals of {account}", account=account)
        self.account = account
        self.amount = amount


class UnknownAccount(LedgerError):
    reason = "UNKNOWN_ACCOUNT"
    kind = "not_found"

    def __init__(self, *, account: str) -> None:
        super().__init__(f"no account {shown(account)}", account=shown(account))
        self.account = account


class TransferIdReused(LedgerError):
    """A transfer id already used for a transfer with different fields."""

    reason = "TRANSFER_ID_REUSED"
    kind = "exists"

    def __init__(self, *, transfer_id: str, field: str) -> None:
        super().__init__(
            f"transfer {transfer_id} exists with a different {field}", transfer_id=transfer_id, field=field
        )
        self.transfer_id = transfer_id
        self.field = field


class DuplicateTransferInBatch(LedgerError):
    reason = "DUPLICATE_TRANSFER_IN_BATCH"

    def __init__(self, *, transfer_id: str) -> None:
        super().__init__(f"transfer {transfer_id} appears twice in one batch", transfer_id=transfer_id)
        self.transfer_id = transfer_id


class SameAccount(LedgerError):
    reason = "SAME_ACCOUNT"

    def __init__(self, *, account: str) -> None:
        super().__init__(
            f"a transfer must debit and credit different accounts, not {account}", account=account
        )
        self.account = account


class PendingTransferNotFound(LedgerError):
    reason = "PENDING_TRANSFER_NOT_FOUND"
    kind = "not_found"

    def __init__(self, *, pending_id: str) -> None:
        super().__init__(f"no pending transfer {pending_id}", pending_id=pending_id)
        self.pending_id = pending_id


class PendingTransferResolved(LedgerError):
    """A pending transfer is posted or voided once only."""

    reason = "PENDING_TRANSFER_ALREADY_RESOLVED"
    kind = "precondition"

    def __init__(self, *, pending_id: str, outcome: str) -> None:
        super().__init__(
            f"pending transfer {pending_id} is already {outcome}", pending_id=pending_id, outcome=outcome
        )
        self.pending_id = pending_id
        self.outcome = outcome


class ExceedsPendingAmount(LedgerError):
    reason = "EXCEEDS_PENDING_AMOUNT"
    kind = "precondition"

    def __init__(self, *, pending_id: str, pending: int, amount: int) -> None:
        super().__init__(
            f"cannot post {amount} of pending transfer {pending_id} reserving {pending}",
            pending_id=pending_id,
            pending=pending,
            amount=amount,
        )
        self.pending_id = pending_id
        self.pending = pending
        self.amount = amount


class UnknownHand(LedgerError):
    reason = "UNKNOWN_HAND"
    kind = "not_found"

    def __init__(self, *, table_id: str, hand_no: int) -> None:
        super().__init__(
            f"hand {hand_no} of table {table_id} was never opened", table_id=table_id, hand_no=hand_no
        )
        self.table_id = table_id
        self.hand_no = hand_no


class HandAlreadyOpen(LedgerError):
    """A different OpenHand for a hand number already opened (a reused hand number)."""

    reason = "HAND_ALREADY_OPEN"
    kind = "exists"

    def __init__(self, *, table_id: str, hand_no: int) -> None:
        super().__init__(
            f"hand {hand_no} of table {table_id} is already open with other stacks",
            table_id=table_id,
            hand_no=hand_no,
        )
        self.table_id = table_id
        self.hand_no = hand_no


class HandAlreadySettled(LedgerError):
    reason = "HAND_ALREADY_SETTLED"
    kind = "precondition"

    def __init__(self, *, table_id: str, hand_no: int) -> None:
        super().__init__(
            f"hand {hand_no} of table {table_id} is already settled", table_id=table_id, hand_no=hand_no
        )
        self.table_id = table_id
        self.hand_no = hand_no


class HandAlreadyVoided(LedgerError):
    reason = "HAND_ALREADY_VOIDED"
    kind = "precondition"

    def __init__(self, *, table_id: str, hand_no: int) -> None:
        super().__init__(
            f"hand {hand_no} of table {table_id} is already voided", table_id=table_id, hand_no=hand_no
        )
        self.table_id = table_id
        self.hand_no = hand_no


class PlayerInHand(LedgerError):
    """Table stakes: no chips added to or taken from a seat while its stack is reserved."""

    reason = "PLAYER_IN_HAND"
    kind = "precondition"

    def __init__(self, *, table_id: str, player: str) -> None:
        super().__init__(f"{player} is in a hand at {table_id}", table_id=table_id, player=player)
        self.table_id = table_id
        self.player = player


class HandNotClosed(LedgerError):
    """A cash-out that reflects a hand's outcome waits until the wallet has settled or voided
    that hand: until then the chips may still be owed to the pot (or not reserved yet)."""

    reason = "HAND_NOT_CLOSED"
    kind = "precondition"

    def __init__(self, *, table_id: str, hand_no: int, player: str) -> None:
        super().__init__(
            f"{player} cashes out after hand {hand_no} at {table_id}, which is not settled or voided yet",
            table_id=table_id,
            hand_no=hand_no,
            player=player,
        )
        self.table_id = table_id
        self.hand_no = hand_no
        self.player = player


class SettlementMismatch(LedgerError):
    """A settlement that does not add up: the wallet refuses it and moves nothing."""

    reason = "SETTLEMENT_MISMATCH"
    kind = "invalid"

    def __init__(self, *, table_id: str, hand_no: int, problem: str, **numbers: int | str) -> None:
        super().__init__(
            f"settlement of hand {hand_no} at {table_id} refused: {problem}",
            table_id=table_id,
            hand_no=hand_no,
            problem=problem,
            **numbers,
        )
        self.table_id = table_id
        self.hand_no = hand_no
        self.problem = problem


class DepositOverLimit(LedgerError):
    """One deposit larger than the wallet's per-request limit."""

    reason = "DEPOSIT_OVER_LIMIT"
    kind = "precondition"

    def __init__(self, *, account: str, amount: int, limit: int) -> None:
        super().__init__(
            f"a deposit of {amount} into {account} is over the limit of {limit} per deposit",
            account=account,
            amount=amount,
            limit=limit,
        )
        self.account = account
        self.amount = amount
        self.limit = limit


class DailyLimitReached(LedgerError):
    """The account's deposits of this UTC day would pass the wallet's daily limit."""

    reason = "DAILY_LIMIT_REACHED"
    kind = "exhausted"

    def __init__(self, *, account: str, amount: int, deposited: int, limit: int) -> None:
        super().__init__(
            f"{account} received {deposited} today; {amount} more passes the daily limit of {limit}",
            account=account,
            amount=amount,
            deposited=deposited,
            limit=limit,
        )
        self.account = account
        self.amount = amount
        self.deposited = deposited
        self.limit = limit


class BalanceCeiling(LedgerError):
    """A deposit that would lift a cash account above the wallet's balance ceiling."""

    reason = "BALANCE_CEILING"
    kind = "precondition"

    def __init__(self, *, account: str, amount: int, balance: int, limit: int) -> None:
        super().__init__(
            f"{account} holds {balance}; a deposit of {amount} passes the ceiling of {limit}",
            account=account,
            amount=amount,
            balance=balance,
            limit=limit,
        )
        self.account = account
        self.amount = amount
        self.balance = balance
        self.limit = limit


class WithdrawalOverLimit(LedgerError):
    """One withdrawal larger than the wallet's per-request limit."""

    reason = "WITHDRAWAL_OVER_LIMIT"
    kind = "precondition"

    def __init__(self, *, account: str, amount: int, limit: int) -> None:
        super().__init__(
            f"a withdrawal of {amount} from {account} is over the limit of {limit} per withdrawal",
            account=account,
            amount=amount,
            limit=limit,
        )
        self.account = account
        self.amount = amount
        self.limit = limit


class DailyWithdrawalLimitReached(LedgerError):
    """The account's withdrawals of this UTC day would pass the wallet's daily limit."""

    reason = "DAILY_WITHDRAWAL_LIMIT_REACHED"
    kind = "exhausted"

    def __init__(self, *, account: str, amount: int, withdrawn: int, limit: int) -> None:
        super().__init__(
            f"{account} withdrew {withdrawn} today; {amount} more passes the daily limit of {limit}",
            account=account,
            amount=amount,
            withdrawn=withdrawn,
            limit=limit,
        )
        self.account = account
        self.amount = amount
        self.withdrawn = withdrawn
        self.limit = limit

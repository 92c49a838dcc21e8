"""Transfers: the only way money moves (TigerBeetle's model, research/wallet.md §1).

A transfer debits one account and credits another by a positive integer amount, under an id
the caller chooses. Transfers are immutable: nothing is ever edited or deleted, mistakes are
corrected by new transfers.

Two-phase transfers: a *pending* transfer reserves the amount (pending debit on one side,
pending credit on the other); later exactly one *post* (of any part of it, the rest returning
to the debit account) or *void* (all of it returns) resolves it, under an id of its own.

A batch of transfers is linked: ``plan_batch`` checks each transfer against the balances left
by the earlier ones of the same batch and refuses the whole batch on the first failure, so a
batch applies all or nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from openpoker.ledger.accounts import INT64_MAX, WORLD, Balances
from openpoker.ledger.errors import (
    BalanceOverflow,
    DuplicateTransferInBatch,
    ExceedsPendingAmount,
    InsufficientFunds,
    InvalidAmount,
    PendingTransferNotFound,
    PendingTransferResolved,
    SameAccount,
    TransferIdReused,
    UnknownAccount,
)


class TransferCode(StrEnum):
    """Why money moved. Persisted values: never rename."""

    DEPOSIT = "deposit"
    WITHDRAWAL = "withdrawal"
    BUY_IN = "buy_in"
    CASH_OUT = "cash_out"
    HAND_RESERVE = "hand_reserve"
    HAND_CONTRIBUTION = "hand_contribution"
    HAND_RELEASE = "hand_release"
    HAND_PAYOUT = "hand_payout"
    HAND_RAKE = "hand_rake"


class Phase(StrEnum):
    """Persisted values: never rename."""

    SINGLE = "single"  # posted at once
    PENDING = "pending"  # reserved, to be posted or voided later
    POST = "post"  # resolves a pending transfer, posting part or all of it
    VOID = "void"  # resolves a pending transfer, releasing all of it


@dataclass(frozen=True, slots=True, kw_only=True)
class Transfer:
    """Move ``amount`` from ``debit`` to ``credit`` now, or reserve it if ``pending``."""

    id: str
    debit: str
    credit: str
    amount: int
    code: TransferCode
    pending: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class PostPending:
    """Post ``amount`` (0 up to the whole reservation) of a pending transfer; the rest returns."""

    id: str
    pending_id: str
    amount: int
    code: TransferCode


@dataclass(frozen=True, slots=True, kw_only=True)
class VoidPending:
    """Release the whole reservation of a pending transfer."""

    id: str
    pending_id: str
    code: TransferCode


TransferOp = Transfer | PostPending | VoidPending


@dataclass(frozen=True, slots=True, kw_only=True)
class TransferRecord:
    """A transfer as it happened, with every account and amount resolved (persisted).

    ``amount`` is what moved or was reserved (for a post: what was posted; for a void: 0);
    ``released`` is what a post or void returned from the reservation.
    """

    id: str
    phase: Phase
    code: TransferCode
    debit: str
    credit: str
    amount: int
    pending_id: str = ""
    released: int = 0


def check_amount(field: str, amount: int, *, allow_zero: bool = False) -> int:
    """Refuse amounts no transfer can carry: negative, zero (unless allowed), over int64."""
    if amount < 0 or (amount == 0 and not allow_zero):
        raise InvalidAmount(field=field, amount=amount, problem="must be positive")
    if amount > INT64_MAX:
        raise InvalidAmount(field=field, amount=amount, problem="exceeds int64")
    return amount


def mismatch(record: TransferRecord, op: TransferOp) -> str | None:
    """The first field in which ``op`` differs from the recorded transfer of the same id."""
    match op:
        case Transfer():
            phase = Phase.PENDING if op.pending else Phase.SINGLE
            pairs: tuple[tuple[str, object, object], ...] = (
                ("phase", record.phase, phase),
                ("debit", record.debit, op.debit),
                ("credit", record.credit, op.credit),
                ("amount", record.amount, op.amount),
                ("code", record.code, op.code),
            )
        case PostPending():
            pairs = (
                ("phase", record.phase, Phase.POST),
                ("pending_id", record.pending_id, op.pending_id),
                ("amount", record.amount, op.amount),
                ("code", record.code, op.code),
            )
        case VoidPending():
            pairs = (
                ("phase", record.phase, Phase.VOID),
                ("pending_id", record.pending_id, op.pending_id),
                ("code", record.code, op.code),
            )
    for name, recorded, asked in pairs:
        if recorded != asked:
            return name
    return None


def existing(transfers: Mapping[str, TransferRecord], ops: Sequence[TransferOp]) -> bool:
    """Whether ``ops`` is an exact retry of recorded transfers (True) or all new (False).

    Raises ``TransferIdReused`` if an id exists with other fields, or if a batch mixes ids
    already recorded with new ones (a retry must be the same batch, whole).
    """
    seen = [op for op in ops if op.id in transfers]
    for op in seen:
        field = mismatch(transfers[op.id], op)
        if field is not None:
            raise TransferIdReused(transfer_id=op.id, field=field)
    if seen and len(seen) != len(ops):
        new = next(op for op in ops if op.id not in transfers)
        raise TransferIdReused(transfer_id=new.id, field="batch")
    return bool(seen)


def plan_batch(
    accounts: Mapping[str, Balances],
    transfers: Mapping[str, TransferRecord],
    resolved: Mapping[str, str],
    ops: Sequence[TransferOp],
) -> tuple[TransferRecord, ...]:
    """Check a linked batch of new transfers and resolve it into records, or raise.

    Pure: reads the state, changes nothing. Each transfer sees the effects of the earlier ones
    in the batch (a batch may reserve and post in one go); the first failure refuses all.
    """
    overlay: dict[str, Balances] = {}
    batch: dict[str, TransferRecord] = {}
    batch_resolved: set[str] = set()

    def account(name: str, *, create: bool) -> Balances:
        if name not in overlay:
            if name in accounts:
                overlay[name] = accounts[name].copy()
            elif create or name == WORLD:
                overlay[name] = Balances()
            else:
                raise UnknownAccount(account=name)
        return overlay[name]

    records: list[TransferRecord] = []
    for op in ops:
        if op.id in batch:
            raise DuplicateTransferInBatch(transfer_id=op.id)
        match op:
            case Transfer():
                check_amount("amount", op.amount)
                if op.debit == op.credit:
                    raise SameAccount(account=op.debit)
                debit = account(op.debit, create=False)
                credit = account(op.credit, create=True)
                if op.debit != WORLD and debit.available < op.amount:
                    raise InsufficientFunds(account=op.debit, available=debit.available, amount=op.amount)
                _check_overflow(op.debit, debit.debits_posted + debit.debits_pending, op.amount)
                _check_overflow(op.credit, credit.credits_posted + credit.credits_pending, op.amount)
                record = TransferRecord(
                    id=op.id,
                    phase=Phase.PENDING if op.pending else Phase.SINGLE,
                    code=op.code,
                    debit=op.debit,
                    credit=op.credit,
                    amount=op.amount,
                )
            case PostPending() | VoidPending():
                pending = batch.get(op.pending_id) or transfers.get(op.pending_id)
                if pending is None or pending.phase is not Phase.PENDING:
                    raise PendingTransferNotFound(pending_id=op.pending_id)
                if op.pending_id in batch_resolved or op.pending_id in resolved:
                    prior = resolved.get(op.pending_id)
                    outcome = transfers[prior].phase if prior is not None else "resolved in this batch"
                    raise PendingTransferResolved(pending_id=op.pending_id, outcome=str(outcome))
                if isinstance(op, PostPending):
                    check_amount("amount", op.amount, allow_zero=True)
                    if op.amount > pending.amount:
                        raise ExceedsPendingAmount(
                            pending_id=op.pending_id, pending=pending.amount, amount=op.amount
                        )
                    posted = op.amount
                else:
                    posted = 0
                account(pending.debit, create=False)
                account(pending.credit, create=False)
                record = TransferRecord(
                    id=op.id,
                    phase=Phase.POST if isinstance(op, PostPending) else Phase.VOID,
                    code=op.code,
                    debit=pending.debit,
                    credit=pending.credit,
                    amount=posted,
                    pending_id=op.pending_id,
                    released=pending.amount - posted,
                )
                batch_resolved.add(op.pending_id)
        apply_record(overlay, record)
        batch[op.id] = record
        records.append(record)
    return tuple(records)


def _check_overflow(account: str, total: int, amount: int) -> None:
    if total + amount > INT64_MAX:
        raise BalanceOverflow(account=account, amount=amount)


def apply_record(accounts: dict[str, Balances], record: TransferRecord) -> None:
    """Fold one recorded transfer into the balances (opening an account on first credit)."""
    debit = accounts.setdefault(record.debit, Balances())
    credit = accounts.setdefault(record.credit, Balances())
    match record.phase:
        case Phase.SINGLE:
            debit.debits_posted += record.amount
            credit.credits_posted += record.amount
        case Phase.PENDING:
            debit.debits_pending += record.amount
            credit.credits_pending += record.amount
        case Phase.POST | Phase.VOID:
            reserved = record.amount + record.released
            debit.debits_pending -= reserved
            credit.credits_pending -= reserved
            debit.debits_posted += record.amount
            credit.credits_posted += record.amount


def totals(accounts: Iterable[Balances]) -> tuple[int, int, int, int]:
    """(debits_pending, debits_posted, credits_pending, credits_posted) over all accounts."""
    dp = dpo = cp = cpo = 0
    for b in accounts:
        dp += b.debits_pending
        dpo += b.debits_posted
        cp += b.credits_pending
        cpo += b.credits_posted
    return dp, dpo, cp, cpo
